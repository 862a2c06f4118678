#!/usr/bin/env python3
"""Models exported with symbolic axes, compiled once by tvm_wheels.compile and run at several
sizes, against onnxruntime on the same file in the same run.

The models are tools/export_zoo.py's `<name>_dynamic` exports (random weights): BERT-base with
its batch and sequence axes free, run at sequence 16, 128 and 384 (batch 1), and ResNet-50 with
its batch free, run at batch 1, 4 and 16. Writes bench/results/dynamic.json (one row per model
and size: latency, onnxruntime's, their ratio, the largest difference of the outputs; the
compile time and where the schedules came from per model) and dynamic.png.

    /tmp/export/bin/python tools/export_zoo.py ZOO --only bert_base_dynamic,resnet50_dynamic
    python bench/dynamic.py ZOO [--variant cpu] [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "python")]
from venvs import MODEL_DEPS, make_venv  # noqa: E402
from zoo import ort_latency  # noqa: E402  (bench/zoo.py, beside this script)

RESULTS = ROOT / "bench" / "results"
# model: the sizes it runs at, as (batch, sequence) for a token model, (batch,) for an image one
SIZES = {"bert_base_dynamic": [(1, 16), (1, 128), (1, 384)], "resnet50_dynamic": [(1,), (4,), (16,)]}

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
inputs = np.load(os.path.join(d, "inputs.npz"))
rows = {}
for key in inputs.files:
    x = tvm.runtime.tensor(inputs[key])
    np.save(os.path.join(d, f"out-{key}.npy"), vm["main"](x).numpy())
    times = []
    for _ in range(int(os.environ["BENCH_REPEAT"])):
        t = time.perf_counter(); vm["main"](x); times.append(time.perf_counter() - t)
    rows[key] = statistics.median(times) * 1e3
print(json.dumps({"compile_s": compile_s, "median_ms": rows,
                  "schedules": dict(collections.Counter(e.source.split(":")[0] for e in report))}))
"""


def _inputs(name: str, sample: np.ndarray) -> dict:
    """The model's input at each of its SIZES, drawn like the export's sample."""
    rng = np.random.default_rng(1)
    out = {}
    for size in SIZES[name]:
        key = "x".join(map(str, size))
        if sample.dtype.kind == "i":  # token ids
            out[key] = rng.integers(0, int(sample.max()) + 1, size).astype(sample.dtype)
        else:
            out[key] = rng.standard_normal((*size, *sample.shape[1:])).astype(sample.dtype)
    return out


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in data["rows"] if "vs_onnxruntime" in r]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.5))
    ax.barh(range(len(rows)), [r["vs_onnxruntime"] for r in rows])
    ax.axvline(1, color="k", lw=0.8)
    ax.axvline(1.5, color="k", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)), [f"{r['model']} {r['size']}" for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("latency / onnxruntime's (one compile per model; dashed: 1.5x)")
    ax.set_title("Symbolic axes: compiled once, run at each size")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    import wheelhouse

    parser = argparse.ArgumentParser()
    parser.add_argument("zoo", type=Path, help="tools/export_zoo.py's output directory")
    parser.add_argument("--variant", default="cpu")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    missing = [n for n in SIZES if not (args.zoo / f"{n}.onnx").is_file()]
    if missing:
        parser.error(f"no {', '.join(missing)} in {args.zoo}: tools/export_zoo.py {args.zoo} --only {','.join(missing)}")
    out = {"host": {"machine": platform.machine(), "cores": os.cpu_count(), "processor": platform.processor()},
           "date": time.strftime("%Y-%m-%d %H:%M"), "wheel": args.variant, "repeat": args.repeat,
           "models": {}, "rows": []}
    with tempfile.TemporaryDirectory(prefix="dynamic-") as tmp:
        tmp = Path(tmp)
        venv = make_venv(tmp / "venv", args.variant, str(wheelhouse.build(args.variant)), *MODEL_DEPS)
        for name in SIZES:
            path = args.zoo / f"{name}.onnx"
            ((input_name, sample),) = np.load(path.with_suffix(".npz")).items()
            inputs = _inputs(name, sample)
            d = tmp / name
            d.mkdir()
            (d / "model.onnx").symlink_to(path.resolve())
            np.savez(d / "inputs.npz", **inputs)
            proc = venv.run(RUN, check=False, env={"BENCH_DIR": str(d), "BENCH_REPEAT": str(args.repeat),
                                                   "TVM_WHEELS_TUNING_DB": str(tmp / "no-user-db"),
                                                   "TVM_WHEELS_COMPILE_CACHE": "off"})
            if proc.returncode != 0:
                out["models"][name] = {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
                print(f"{name}: FAILED {out['models'][name]['error']}", flush=True)
                continue
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            out["models"][name] = {"compile_s": got["compile_s"], "schedules": got["schedules"]}
            for key, x in inputs.items():
                ort_ms, expected = ort_latency(path, input_name, x, args.repeat)
                diff = float(np.abs(np.load(d / f"out-{key}.npy") - expected).max() / (np.abs(expected).max() or 1))
                row = {"model": name, "size": key, "median_ms": got["median_ms"][key], "onnxruntime_ms": ort_ms,
                       "vs_onnxruntime": got["median_ms"][key] / ort_ms, "rel_diff": diff}
                out["rows"].append(row)
                print(f"{name} {key}: {row['median_ms']:.2f} ms, onnxruntime {ort_ms:.2f} ms "
                      f"({row['vs_onnxruntime']:.2f}x), diff {diff:.1e}", flush=True)
            print(f"{name}: compile {got['compile_s']:.0f} s, {got['schedules']}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dynamic.json").write_text(json.dumps(out, indent=1) + "\n")
    plot(out, RESULTS / "dynamic.png")
    print("bench/results/dynamic.json, dynamic.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
