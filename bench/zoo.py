#!/usr/bin/env python3
"""Models as ONNX files have them, through tvm_wheels.compile, against onnxruntime (batch 1).

The models: the torch architectures of tools/export_zoo.py (--torch-zoo: ResNet-18/50, MobileNet
v2/v3, EfficientNet-B0, DenseNet-121, ShuffleNet v2, ViT-B/16, BERT-base, GPT-2, random weights),
ResNet-50 as torch exports it (BatchNorm folded; the graph the cpu-avx512 database
was tuned on) and the same network with its BatchNormalization nodes kept, and the nine light
models of onnx's own zoo (onnx.backend.test data: AlexNet, DenseNet-121, Inception v1/v2,
ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512), which nobody tuned. Each wheel runs in its
own clean venv (wheels from tools/wheelhouse.py), with an empty user tuning database. Writes
bench/results/zoo.json (one row per model and wheel: latency, onnxruntime's, `vs_onnxruntime`,
compile time, where the schedules came from, `timed`: how many functions were timed at compile
time (`similar` candidates, samples of the rules for the heavy ones) and how many candidates
that took) and zoo.png.

    python bench/zoo.py [--variants cpu-avx512,cpu] [--repeat 10] [--torch-zoo DIR] [--add]

--add keeps the other wheels' rows of the zoo.json there (each row has the date it was measured,
and its own onnxruntime time from the same run), so that the wheels can be measured one at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "python")]
from venvs import MODEL_DEPS, make_venv  # noqa: E402

import tables  # noqa: E402  (bench/tables.py, beside this script)
from models import resnet50  # noqa: E402

RESULTS = ROOT / "bench" / "results"

RUN = """
import collections, json, os, statistics, time, numpy as np, tvm, tvm_wheels
from tvm import relax
from tvm_wheels.compiler import pipeline
d = os.environ["BENCH_DIR"]
t0 = time.perf_counter()
report = []
ex = tvm_wheels.compile(pipeline.from_onnx(os.path.join(d, "model.onnx")), report=report)
compile_s = time.perf_counter() - t0
vm = relax.VirtualMachine(ex, tvm.cpu())
x = tvm.runtime.tensor(np.load(os.path.join(d, "input.npy")))
out = vm["main"](x)
np.save(os.path.join(d, "out.npy"), (out if isinstance(out, tvm.runtime.Tensor) else out[0]).numpy())
times = []
for _ in range(int(os.environ["BENCH_REPEAT"])):
    t = time.perf_counter(); vm["main"](x); times.append(time.perf_counter() - t)
print(json.dumps({"compile_s": compile_s, "median_ms": statistics.median(times) * 1e3,
                  "schedules": dict(collections.Counter(e.source.split(":")[0] for e in report)),
                  "timed": [sum(e.measured > 0 for e in report), sum(e.measured for e in report)]}))
"""


def models(tmp: Path, torch_zoo: Path | None = None):
    """(name, model path, input name, input) of every model of the zoo; with the torch
    architectures that tools/export_zoo.py wrote to torch_zoo."""
    import onnx
    from models.onnx_light import LIGHT, MODELS, with_random_weights

    for path in sorted(torch_zoo.glob("*.onnx")) if torch_zoo else []:
        ((input_name, x),) = np.load(path.with_suffix(".npz")).items()
        yield f"torch {path.stem}", path, input_name, x

    for name, bn in (("resnet50 (torch export)", False), ("resnet50 (BatchNormalization kept)", True)):
        path = tmp / f"{'bn' if bn else 'folded'}.onnx"
        onnx.save(resnet50.build(seed=0, batch_norm=bn), path)
        yield name, path, "input", resnet50.sample_input(seed=1)
    for name in MODELS:
        rng = np.random.default_rng(0)
        model = with_random_weights(onnx.load(os.path.join(LIGHT, f"light_{name}.onnx")), rng)
        path = tmp / f"{name}.onnx"
        onnx.save(model, path)
        weights = {i.name for i in model.graph.initializer}
        (data,) = [i for i in model.graph.input if i.name not in weights]
        shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
        yield f"onnx zoo {name}", path, data.name, rng.standard_normal(shape).astype("float32")


def ort_latency(path: Path, name: str, x: np.ndarray, repeat: int) -> tuple[float, np.ndarray]:
    """(onnxruntime's median latency in ms, its output) for the model at path on input x."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out = session.run(None, {name: x})[0]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        session.run(None, {name: x})
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3, out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = sorted({r["wheel"] for r in rows})
    names = list(dict.fromkeys(r["model"] for r in rows))
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(names) + 1.5))
    height = 0.8 / len(variants)
    for i, v in enumerate(variants):
        ratio = {r["model"]: r["vs_onnxruntime"] for r in rows if r["wheel"] == v}
        ax.barh([j + i * height for j in range(len(names))], [ratio.get(n, 0) for n in names], height, label=v)
    ax.axvline(1, color="k", lw=0.8)
    ax.axvline(2, color="k", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yticks([j + height * (len(variants) - 1) / 2 for j in range(len(names))], names)
    ax.invert_yaxis()
    ax.set_xlabel("latency / onnxruntime's (batch 1; 1 = onnxruntime, dashed: 2x)")
    ax.set_title("tvm_wheels.compile on models as ONNX files have them")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _measure(venv, tmp: Path, path: Path, input_name: str, x: np.ndarray, repeat: int) -> dict:
    d = tmp / "run"
    d.mkdir(exist_ok=True)
    (d / "model.onnx").unlink(missing_ok=True)
    (d / "model.onnx").symlink_to(path.resolve())
    np.save(d / "input.npy", x)
    proc = venv.run(RUN, check=False, env={"BENCH_DIR": str(d), "BENCH_REPEAT": str(repeat),
                                           "TVM_WHEELS_TUNING_DB": str(tmp / "no-user-db"),
                                           # compile_s: a first compile, nothing kept from an earlier one
                                           "TVM_WHEELS_COMPILE_CACHE": "off"})
    if proc.returncode != 0:  # a model that does not compile is a row too
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:300]}
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    ort_ms, expected = ort_latency(path, input_name, x, repeat)
    diff = float(np.abs(np.load(d / "out.npy") - expected).max() / (np.abs(expected).max() or 1))
    return {**got, "onnxruntime_ms": ort_ms, "vs_onnxruntime": got["median_ms"] / ort_ms, "rel_diff": diff}


def _geomean(rows: list[dict]) -> float | None:
    ratios = [r["vs_onnxruntime"] for r in rows if "vs_onnxruntime" in r]
    return float(np.exp(np.mean(np.log(ratios)))) if ratios else None


def main() -> int:
    import wheelhouse

    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", default="cpu-avx512")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--torch-zoo", type=Path, default=None, help="tools/export_zoo.py's output directory")
    parser.add_argument("--add", action="store_true", help="keep the rows of the other wheels in zoo.json")
    args = parser.parse_args()
    rows, date = [], time.strftime("%Y-%m-%d %H:%M")
    if args.add and (RESULTS / "zoo.json").is_file():
        old = json.loads((RESULTS / "zoo.json").read_text())
        rows = [{"date": old["date"], **r} for r in old["rows"] if r["wheel"] not in args.variants.split(",")]
    out = {"host": {"machine": platform.machine(), "cores": os.cpu_count(), "processor": platform.processor()},
           "date": date, "repeat": args.repeat, "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zoo-") as tmp:
        tmp = Path(tmp)
        zoo = list(models(tmp, args.torch_zoo))
        for variant in args.variants.split(","):
            venv = make_venv(tmp / f"venv-{variant}", variant, str(wheelhouse.build(variant)), *MODEL_DEPS)
            for name, path, input_name, x in zoo:
                rows.append({"model": name, "wheel": variant, "date": date,
                             **_measure(venv, tmp, path, input_name, x, args.repeat)})
                r = rows[-1]
                print(f"{variant} {name}: " + (f"FAILED: {r['error']}" if "error" in r else
                      f"{r['median_ms']:.1f} ms, onnxruntime {r['onnxruntime_ms']:.1f} ms ({r['vs_onnxruntime']:.2f}x), "
                      f"compile {r['compile_s']:.0f} s, {r['schedules']}"), flush=True)
                # written after each model: a long run that stops keeps what it measured
                out["geomean_vs_onnxruntime"] = {v: _geomean([r for r in rows if r["wheel"] == v])
                                                 for v in dict.fromkeys(r["wheel"] for r in rows)}
                (RESULTS / "zoo.json").write_text(json.dumps(out, indent=1) + "\n")
    plot([r for r in rows if "error" not in r], RESULTS / "zoo.png")
    print(f"geometric mean vs onnxruntime: {out['geomean_vs_onnxruntime']}; bench/results/zoo.json, zoo.png")
    print(tables.zoo(out))  # the Markdown block of bench/README.md (python bench/tables.py writes it there)
    return 0


if __name__ == "__main__":
    sys.exit(main())
