#!/usr/bin/env python3
"""Export the zoo's torch architectures to ONNX with random weights (no downloads), batch 1.

CNNs from torchvision (ResNet-18/50, MobileNet v2/v3, EfficientNet-B0, DenseNet-121,
ShuffleNet v2, ViT-B/16) and transformers from `transformers` (a BERT-base encoder and a GPT-2
decoder, sequence 128), in eval mode, through torch's default ONNX exporter (which folds each
BatchNorm into its convolution). Of these, ResNet-50 and (for x86-64-v4) MobileNet v2 are
workloads the shipped databases were tuned on (as tools/models/ builds them); the rest show what a
model nobody tuned gets.

torch, torchvision and transformers are for this script only, never a dependency of the wheels or
of the tests:

    python -m venv /tmp/export && /tmp/export/bin/pip install -r bench/requirements-export.txt
    /tmp/export/bin/python tools/export_zoo.py OUT_DIR [--only resnet18,bert_base]

writes OUT_DIR/<model>.onnx and OUT_DIR/<model>.npz (the sample input, by input name), which
`bench/zoo.py --torch-zoo OUT_DIR` measures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SEQUENCE = 128


def _vision(name: str):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    size = 224
    return model, {"input": torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))}


def _transformer(kind: str):
    import torch
    import transformers

    class LastHidden(torch.nn.Module):
        """The encoder's or decoder's last hidden state only: one output, no cache."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids):
            return self.inner(input_ids=input_ids).last_hidden_state

    torch.manual_seed(0)
    if kind == "bert":
        model = transformers.BertModel(transformers.BertConfig())
    else:
        model = transformers.GPT2Model(transformers.GPT2Config(use_cache=False))
    ids = torch.randint(0, model.config.vocab_size, (1, SEQUENCE), generator=torch.Generator().manual_seed(1))
    return LastHidden(model).eval(), {"input_ids": ids}


MODELS = {
    "resnet18": lambda: _vision("resnet18"),
    "resnet50": lambda: _vision("resnet50"),
    "mobilenet_v2": lambda: _vision("mobilenet_v2"),
    "mobilenet_v3_large": lambda: _vision("mobilenet_v3_large"),
    "efficientnet_b0": lambda: _vision("efficientnet_b0"),
    "densenet121": lambda: _vision("densenet121"),
    "shufflenet_v2_x1_0": lambda: _vision("shufflenet_v2_x1_0"),
    "vit_b_16": lambda: _vision("vit_b_16"),
    "bert_base": lambda: _transformer("bert"),
    "gpt2": lambda: _transformer("gpt2"),
}
# Exported with symbolic axes, as models are exported for serving (bench/dynamic.py runs them
# at several sizes): <name>_dynamic is <name> with these axes of its input and output left free.
DYNAMIC = {
    "bert_base": {0: "batch", 1: "seq"},
    "resnet50": {0: "batch"},
}


def export(name: str, out: Path) -> None:
    import numpy as np
    import torch

    base = name.removesuffix("_dynamic")
    axes = DYNAMIC[base] if name != base else None
    model, inputs = MODELS[base]()
    if axes:  # traced at batch 2: torch's dynamo exporter fixes a dimension it sees at 1
        inputs = {k: v.repeat(2, *[1] * (v.dim() - 1)) for k, v in inputs.items()}
    with torch.no_grad():  # zero-initialized tensors (ViT's head) would make every output 0
        generator = torch.Generator().manual_seed(2)
        for p in model.parameters():
            if not p.any():
                p.copy_(torch.randn(p.shape, generator=generator) * 0.02)
    with torch.no_grad():
        torch.onnx.export(model, tuple(inputs.values()), str(out / f"{name}.onnx"), input_names=list(inputs),
                          output_names=["output"], dynamo=True, external_data=False, verbose=False,
                          dynamic_axes={**{k: axes for k in inputs}, "output": axes} if axes else None)
    np.savez(out / f"{name}.npz", **{k: v.numpy() for k, v in inputs.items()})


def run(known: list[str], export_one) -> int:
    """The command line of an export script: OUT [--only a,b], each name exported by export_one."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", default="", help="comma-separated subset of " + ",".join(known))
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        parser.error(f"unknown {unknown}; known: {', '.join(known)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        print(f"exporting {name}", flush=True)
        export_one(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(run([*MODELS, *(f"{n}_dynamic" for n in DYNAMIC)], export))
