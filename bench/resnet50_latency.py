#!/usr/bin/env python3
"""ResNet-50 (ONNX, batch 1, seeded random weights) latency, side by side, in one run:

- the official apache-tvm 0.26.0 wheel, target "llvm";
- this project's cpu wheel, target "llvm" and its default target (tvm_wheels.target.host());
- this project's cpu-avx512 wheel, its default target (x86-64-v4);
- onnxruntime (CPU).

Each TVM engine runs in its own clean venv (wheels from tools/wheelhouse.py). Writes
bench/results/resnet50_latency.json (the data) and resnet50_latency.png (its plot), plus the
wheel sizes.

    python bench/resnet50_latency.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tools"), str(ROOT / "python")]
from conftest import MODEL_DEPS, OFFICIAL, make_venv  # noqa: E402
from models import resnet50  # noqa: E402

RESULTS = ROOT / "bench" / "results"

TVM_RUN = """
import json, os, statistics, time, numpy as np, onnx, tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
d = os.environ["BENCH_DIR"]
target = os.environ["BENCH_TARGET"]
if target == "default":
    import tvm_wheels.target
    target = tvm_wheels.target.host()
t0 = time.perf_counter()
mod = from_onnx(onnx.load(os.path.join(d, "resnet50.onnx")), keep_params_in_input=False)
ex = tvm.compile(mod, target=target)
compile_s = time.perf_counter() - t0
vm = relax.VirtualMachine(ex, tvm.cpu())
x = tvm.runtime.tensor(np.load(os.path.join(d, "input.npy")))
out = vm["main"](x).numpy()
times = []
for _ in range(int(os.environ["BENCH_REPEAT"])):
    t = time.perf_counter(); vm["main"](x); times.append(time.perf_counter() - t)
np.save(os.path.join(d, "out.npy"), out)
print(json.dumps({"target": str(target), "compile_s": compile_s, "median_ms": statistics.median(times) * 1e3,
                  "times_ms": [t * 1e3 for t in times], "tvm": tvm.__version__}))
"""


def main() -> int:
    import onnxruntime as ort
    import wheelhouse

    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-resnet50-"))
    model = resnet50.build(seed=0)
    (work / "resnet50.onnx").write_bytes(model.SerializeToString())
    x = resnet50.sample_input(seed=1)
    np.save(work / "input.npy", x)

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(None, {"input": x})[0]
    ort_times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        sess.run(None, {"input": x})
        ort_times.append((time.perf_counter() - t) * 1e3)

    wheels = {v: wheelhouse.build(v) for v in ("cpu", "cpu-avx512", "runtime")}
    venvs = {
        "official": make_venv(work / "v-official", "official", *OFFICIAL, *MODEL_DEPS),
        "cpu": make_venv(work / "v-cpu", "cpu", str(wheels["cpu"]), *MODEL_DEPS),
        "cpu-avx512": make_venv(work / "v-avx512", "cpu-avx512", str(wheels["cpu-avx512"]), *MODEL_DEPS),
    }
    engines = [("official apache-tvm, llvm", "official", "llvm"), ("tvm-wheels cpu, llvm", "cpu", "llvm"),
               ("tvm-wheels cpu, default target", "cpu", "default"),
               ("tvm-wheels cpu-avx512, default target", "cpu-avx512", "default")]
    rows = []
    for name, venv, target in engines:
        r = venvs[venv].json(TVM_RUN, env={"BENCH_DIR": str(work), "BENCH_TARGET": target,
                                           "BENCH_REPEAT": str(args.repeat)})
        r["max_abs_diff_vs_ort"] = float(np.abs(np.load(work / "out.npy") - expected).max())
        rows.append({"engine": name, **r})
        print(f"{name:<40} {r['median_ms']:9.1f} ms  (compile {r['compile_s']:.0f} s, "
              f"max |diff| vs ort {r['max_abs_diff_vs_ort']:.2g})", flush=True)
    rows.append({"engine": "onnxruntime (CPU)", "median_ms": statistics.median(ort_times), "times_ms": ort_times,
                 "ort": ort.__version__})
    print(f"{'onnxruntime':<40} {statistics.median(ort_times):9.1f} ms")

    data = {
        "what": "ResNet-50 ONNX (tests/models/resnet50.py, seed 0), batch 1, median of repeated runs",
        "machine": {"cpu_count": __import__("os").cpu_count(), "machine": platform.machine(),
                    "processor": _cpu_name()},
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "repeat": args.repeat,
        "rows": rows,
        "wheel_bytes": {v: p.stat().st_size for v, p in wheels.items()},
    }
    (RESULTS / "resnet50_latency.json").write_text(json.dumps(data, indent=1) + "\n")
    _plot(data, RESULTS / "resnet50_latency.png")
    return 0


def _cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def _plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = data["rows"]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.barh([r["engine"] for r in rows], [r["median_ms"] for r in rows], color="#4c72b0")
    for i, r in enumerate(rows):
        ax.text(r["median_ms"], i, f" {r['median_ms']:.0f} ms", va="center")
    ax.set_xscale("log")
    ax.set_xlabel("latency, ms (median, log scale)")
    ax.set_title(f"ResNet-50 batch 1 on {data['machine']['processor']} ({data['machine']['cpu_count']} cores)",
                 fontsize=9)
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
