#!/usr/bin/env python3
"""Export the transformer corpus: one small model of each family, from `transformers` with
random weights (no downloads), each twice: at a static shape and with its axes left symbolic
(dynamic_axes), as models are exported for serving.

The families are those tvm_wheels.compile must never fail on and must run correctly at every
shape (tests/wheel/test_corpus.py): what each brings that BERT and GPT-2 do not is in FAMILIES.
The models are small (hidden 32, 2 layers) so that the files live in the repository
(tests/data/corpus, about 2 MB) and the tests need neither torch nor transformers; bench/ measures
the full-size ones.

    python -m venv /tmp/export && /tmp/export/bin/pip install -r bench/requirements-export.txt
    /tmp/export/bin/python tools/export_corpus.py tests/data/corpus [--only roberta,llama]

writes OUT/<family>.onnx (static) and OUT/<family>_dynamic.onnx, and OUT/<family>.npz: the
inputs, by input name, for the static shape and (suffixed @<batch>x<length>) for the other
shapes the dynamic model is checked at.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shape of the static export, and the other shapes the dynamic one is run at: a sequence
# shorter and longer than the static one, and a batch of two.
BATCH, SEQUENCE = 1, 16
OTHER_SHAPES = ((1, 5), (1, 40), (2, 11))
SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
         "vocab_size": 128, "max_position_embeddings": 64}

# family: what it brings beyond BERT and GPT-2
FAMILIES = {
    "roberta": "position ids from a cumulative sum of the input mask",
    "distilbert": "no token types; attention without a bias on the scores' mask",
    "t5_encoder": "relative position buckets (log, clamp, gather), RMSNorm without mean, no biases",
    "llama": "decoder block: rotary position embedding, RMSNorm, SiLU-gated MLP, grouped-query attention",
    "whisper_encoder": "audio: two 1-D convolutions (stride 2) over mel frames, sinusoid positions",
    "albert": "one layer's weights shared by every layer, factorized embedding",
}
# exported at the static shape only: with Swin's batch symbolic, TVM's own tvm.compile returns NaN
STATIC_ONLY = {
    "swin": "vision (torchvision's Swin): shifted windows (roll, window partition), pads computed from shapes",
}

# Exported with torch's dynamo exporter (the default since torch 2.9), the rest with the
# TorchScript one that most models on the hub were exported with: LLaMA's mask code in
# transformers 5 uses aten::diff, which the TorchScript exporter has no ONNX for.
DYNAMO = {"llama"}
OPSET = {False: 17, True: 18}  # the dynamo exporter writes opset 18


def _config(family: str):
    import transformers

    if family == "roberta":
        return transformers.RobertaModel(transformers.RobertaConfig(**SMALL, max_length=SMALL["max_position_embeddings"]))
    if family == "distilbert":
        return transformers.DistilBertModel(transformers.DistilBertConfig(
            dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=128, max_position_embeddings=64))
    if family == "t5_encoder":
        return transformers.T5EncoderModel(transformers.T5Config(
            d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, vocab_size=128, feed_forward_proj="gated-gelu"))
    if family == "llama":
        return transformers.LlamaModel(transformers.LlamaConfig(**SMALL, num_key_value_heads=2, use_cache=False))
    if family == "whisper_encoder":
        return transformers.WhisperModel(transformers.WhisperConfig(
            d_model=32, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=64, num_mel_bins=16,
            max_source_positions=SEQUENCE, decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=64,
            vocab_size=128, pad_token_id=1, bos_token_id=2, eos_token_id=2, decoder_start_token_id=2)).get_encoder()
    if family == "albert":
        return transformers.AlbertModel(transformers.AlbertConfig(**SMALL, embedding_size=16))
    raise KeyError(family)


def _model(family: str):
    """The family's model as a module of one input and one output: a transformers model's last
    hidden state (no cache), or torchvision's Swin with its classifier. Swin is Swin-T's
    architecture, small: its windows (7) do not divide the 16x16 patches of a 64x64 image, so
    the padding that the legacy exporter computes from shapes is there, and non-zero."""
    import torch

    if family == "swin":
        from torchvision.models.swin_transformer import SwinTransformer

        return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                               window_size=[7, 7], num_classes=10)

    class LastHidden(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(**{_input_name(family): x}).last_hidden_state

    return LastHidden(_config(family))


def _input_name(family: str) -> str:
    return {"whisper_encoder": "input_features", "swin": "pixel_values"}.get(family, "input_ids")


def _inputs(family: str, batch: int, length: int, seed: int):
    """The model's input at one shape. Whisper's encoder takes 2 x its positions in mel frames,
    always (it raises on another length): its dynamic axis is the batch only. Swin takes an image."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    if family == "whisper_encoder":
        return {"input_features": torch.randn(batch, 16, 2 * SEQUENCE, generator=generator)}
    if family == "swin":
        return {"pixel_values": torch.randn(batch, 3, 64, 64, generator=generator)}
    ids = torch.randint(3, SMALL["vocab_size"], (batch, length), generator=generator)
    if family == "roberta" and length > 3:
        ids[:, -2:] = 1  # RoBERTa's padding id: the positions' cumulative sum skips them
    return {"input_ids": ids}


def _dynamic_axes(family: str):
    if family == "whisper_encoder":
        return {_input_name(family): {0: "batch"}, "output": {0: "batch"}}
    return {"input_ids": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}}


def export(family: str, out: Path) -> None:
    import numpy as np
    import torch

    torch.manual_seed(0)
    model = _model(family).eval()
    static = _inputs(family, BATCH, SEQUENCE, seed=1)
    (name, x), = static.items()
    # the dynamic export traces at batch 2: torch's dynamo exporter fixes a dimension it sees at 1
    traced = {"": x, "_dynamic": next(iter(_inputs(family, 2, SEQUENCE, seed=1).values()))}
    exports = (("", None),) if family in STATIC_ONLY else (("", None), ("_dynamic", _dynamic_axes(family)))
    for suffix, axes in exports:
        with torch.no_grad():
            # dynamic_axes as serving exports write them; torch's exporter per DYNAMO
            torch.onnx.export(model, (traced[suffix],), str(out / f"{family}{suffix}.onnx"), input_names=[name],
                              output_names=["output"], dynamic_axes=axes, opset_version=OPSET[family in DYNAMO],
                              dynamo=family in DYNAMO, external_data=False)
    arrays = {name: x.numpy()}
    for k, (batch, length) in enumerate(OTHER_SHAPES if family not in STATIC_ONLY else ()):
        arrays.update({f"{name}@{batch}x{length}": v.numpy()
                       for v in _inputs(family, batch, length, seed=2 + k).values()})
    np.savez(out / f"{family}.npz", **arrays)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from export_zoo import run

    sys.exit(run([*FAMILIES, *STATIC_ONLY], export))
