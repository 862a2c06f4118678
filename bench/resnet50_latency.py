#!/usr/bin/env python3
"""ResNet-50 (ONNX, batch 1, seeded random weights) latency, side by side, in one run:

- the official apache-tvm 0.26.0 wheel, tvm.compile with target "llvm" (TVM's default pipeline),
  with TVM's default thread pool (half the logical CPUs on x86-64) and with one thread per core;
- this project's cpu-avx512 wheel, tvm.compile with its default target (same pipeline);
- this project's cpu and cpu-avx512 wheels, tvm_wheels.compile (their defaults: the shipped
  tuning database, MetaSchedule's rules for the rest);
- the cpu wheel after `tvm-wheels tune` of this model with increasing budgets (--tune, trials per
  task; each run continues the previous one's database, as a user's would);
- onnxruntime (CPU).

Each TVM engine runs in its own clean venv (wheels from tools/wheelhouse.py). Writes
bench/results/resnet50_latency.json (the data) and resnet50_latency.png (its plot), plus the
wheel sizes and the tuning time of each budget.

    python bench/resnet50_latency.py [--repeat 10] [--tune 2,4,8]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "python")]
from venvs import MODEL_DEPS, OFFICIAL, make_venv  # noqa: E402
from models import resnet50  # noqa: E402
from tvm_wheels import host, threads  # noqa: E402

RESULTS = ROOT / "bench" / "results"

TVM_RUN = """
import json, os, statistics, time, numpy as np, onnx, tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
d = os.environ["BENCH_DIR"]
target, how = os.environ["BENCH_TARGET"], os.environ["BENCH_COMPILE"]
if target == "default":
    import tvm_wheels.target
    target = tvm_wheels.target.host()
t0 = time.perf_counter()
mod = from_onnx(onnx.load(os.path.join(d, "resnet50.onnx")), keep_params_in_input=False)
if how == "tvm_wheels":
    import tvm_wheels
    report = []
    ex = tvm_wheels.compile(mod, target, report=report)
    sources = sorted({e.source.split(":")[0] for e in report})
else:
    ex, sources = tvm.compile(mod, target=target), ["tvm default pipeline"]
compile_s = time.perf_counter() - t0
vm = relax.VirtualMachine(ex, tvm.cpu())
x = tvm.runtime.tensor(np.load(os.path.join(d, "input.npy")))
out = vm["main"](x).numpy()
times = []
for _ in range(int(os.environ["BENCH_REPEAT"])):
    t = time.perf_counter(); vm["main"](x); times.append(time.perf_counter() - t)
np.save(os.path.join(d, "out.npy"), out)
print(json.dumps({"target": str(target), "compile": how, "schedules": sources, "threads": tvm.runtime.num_threads(), "compile_s": compile_s, "median_ms": statistics.median(times) * 1e3,
                  "times_ms": [t * 1e3 for t in times], "tvm": tvm.__version__}))
"""


def main() -> int:
    import onnxruntime as ort
    import wheelhouse

    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--tune", default="2,4,8", help="tvm-wheels tune budgets (trials per task), increasing")
    args = parser.parse_args()
    for v in threads.VARIABLES:  # each engine's own default pool, unless its row sets one
        os.environ.pop(v, None)
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
        "cpu": make_venv(work / "v-cpu", "cpu", f"{wheels['cpu']}[tune]"),
        "cpu-avx512": make_venv(work / "v-avx512", "cpu-avx512", str(wheels["cpu-avx512"]), *MODEL_DEPS),
    }
    user_db = work / "user-tuning-db"  # what `tvm-wheels tune` writes; empty until the tune rows
    cores = host.physical_cores()
    # (name, venv, target, compile path, extra environment, tvm-wheels tune budget)
    engines = [("official apache-tvm, tvm.compile llvm", "official", "llvm", "tvm", {}, None),
               (f"official apache-tvm, tvm.compile llvm, TVM_NUM_THREADS={cores}", "official", "llvm", "tvm",
                {"TVM_NUM_THREADS": str(cores)}, None),
               ("tvm-wheels cpu-avx512, tvm.compile default target", "cpu-avx512", "default", "tvm", {}, None),
               ("tvm-wheels cpu, tvm_wheels.compile", "cpu", "default", "tvm_wheels", {}, None),
               ("tvm-wheels cpu-avx512, tvm_wheels.compile", "cpu-avx512", "default", "tvm_wheels", {}, None)]
    engines += [(f"tvm-wheels cpu, after tvm-wheels tune --trials {n}", "cpu", "default", "tvm_wheels", {}, n)
                for n in (int(t) for t in args.tune.split(",") if t)]
    rows = []
    for name, venv, target, how, extra_env, tune in engines:
        tuning = {}
        if tune:
            t = time.perf_counter()
            subprocess.run([str(venvs[venv].bin("tvm-wheels")), "tune", str(work / "resnet50.onnx"),
                            "--trials", str(tune), "--out", str(user_db)], check=True)
            tuning = {"tune_trials_per_task": tune, "tune_s": time.perf_counter() - t}
        r = venvs[venv].json(TVM_RUN, env={"BENCH_DIR": str(work), "BENCH_TARGET": target, "BENCH_COMPILE": how,
                                           "BENCH_REPEAT": str(args.repeat), "TVM_WHEELS_TUNING_DB": str(user_db),
                                           "TVM_WHEELS_COMPILE_CACHE": "off",  # compile_s: a first compile
                                           **extra_env})
        r["max_abs_diff_vs_ort"] = float(np.abs(np.load(work / "out.npy") - expected).max())
        rows.append({"engine": name, **r, **tuning})
        print(f"{name:<55} {r['median_ms']:9.1f} ms  (compile {r['compile_s']:.0f} s, "
              f"{r['threads']} threads, max |diff| vs ort {r['max_abs_diff_vs_ort']:.2g}, schedules: {', '.join(r['schedules'])})", flush=True)
    rows.append({"engine": "onnxruntime (CPU)", "median_ms": statistics.median(ort_times), "times_ms": ort_times,
                 "ort": ort.__version__, "threads": "onnxruntime's default (one per core)"})
    print(f"{'onnxruntime':<55} {statistics.median(ort_times):9.1f} ms")

    data = {
        "what": "ResNet-50 ONNX (tools/models/resnet50.py, seed 0), batch 1, median of repeated runs",
        "machine": {"cpu_count": os.cpu_count(), "cores": cores, "machine": platform.machine(),
                    "processor": host.cpu_name()},
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "repeat": args.repeat,
        "rows": rows,
        "wheel_bytes": {v: p.stat().st_size for v, p in wheels.items()},
    }
    (RESULTS / "resnet50_latency.json").write_text(json.dumps(data, indent=1) + "\n")
    _plot(data, RESULTS / "resnet50_latency.png")
    return 0


def _plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = data["rows"]
    fig, ax = plt.subplots(figsize=(9, 4.5))
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
