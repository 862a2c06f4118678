#!/usr/bin/env python3
"""`tvm-wheels tune` measured here, and through TVM's RPC on 1 and 2 servers, on loopback.

    python bench/rpc_tune.py [--trials 16]

The cpu wheel's [tune] venv compiles; the servers are `tvm-wheels rpc-server`s of the runtime
wheel in a clean venv, registered at a tracker on 127.0.0.1 (tools/loopback.py); the model is
models/dense.py's one task. On one machine the servers share its cores with the builder, so this
measures what RPC costs and that the work is spread, not the speed-up of N real devices.
Writes bench/results/rpc_tune.json and .png (table: bench/tables.py rpc_tune).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "python")]
import loopback  # noqa: E402
from models import dense  # noqa: E402
from tvm_wheels import host  # noqa: E402
from venvs import make_venv  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def _tune(client, model: Path, out: Path, trials: int, rpc: list[str]) -> tuple[float, str]:
    start = time.monotonic()
    proc = subprocess.run([str(client.bin("tvm-wheels")), "tune", str(model), "--trials", str(trials),
                           "--out", str(out), *rpc], capture_output=True, text=True, timeout=3600)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout[-2000:] + proc.stderr[-3000:])
    best = [line for line in proc.stdout.splitlines() if line.startswith("[1/1]")][-1]
    return seconds, best.split("best ")[1].split(",")[0]


def main() -> int:
    import wheelhouse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=16, help="measured trials of the one task")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-rpc-"))
    client = make_venv(work / "client", "cpu[tune]", f"{wheelhouse.build('cpu')}[tune]")
    runtime = make_venv(work / "runtime", "runtime", str(wheelhouse.build("runtime")))
    model = work / "dense.onnx"
    dense.write(model)
    rows = []
    seconds, best = _tune(client, model, work / "db-local", args.trials, [])
    rows.append({"runner": "here (LocalRunner)", "servers": 0, "seconds": round(seconds, 1), "best": best, "loaded": []})
    with loopback.tracker(client.argv(), work) as address:
        for count in (1, 2):
            key = f"x86-{count}"
            with loopback.servers(runtime.argv(), address, key, work, count) as servers:
                seconds, best = _tune(client, model, work / f"db-{count}", args.trials, ["--rpc", address, "--key", key])
                loaded = [loopback.loaded(s) for s in servers]
            rows.append({"runner": f"{count} server{'s' if count > 1 else ''} (RPCRunner)", "servers": count,
                         "seconds": round(seconds, 1), "best": best, "loaded": loaded})
            print(rows[-1], flush=True)
    data = {"date": datetime.date.today().isoformat(), "trials": args.trials, "model": "models/dense.py (1 task)",
            "host": {"cores": host.physical_cores(), "cpu": host.cpu_name(), "machine": platform.machine()},
            "rows": rows, "script": "bench/rpc_tune.py"}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "rpc_tune.json").write_text(json.dumps(data, indent=1) + "\n")
    _plot(data, RESULTS / "rpc_tune.png")
    return 0


def _plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.5))
    names = [r["runner"] for r in data["rows"]]
    ax.barh(names, [r["seconds"] for r in data["rows"]])
    for i, r in enumerate(data["rows"]):
        ax.annotate(f"{r['seconds']:.0f} s", (r["seconds"], i), textcoords="offset points", xytext=(4, -3), fontsize=8)
    ax.set_xlabel(f"tvm-wheels tune, {data['trials']} trials, {data['host']['cores']} cores, loopback")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
