#!/usr/bin/env python3
"""Build the tuning database shipped in a CPU variant's wheel.

Run with the Python of a venv where that variant's wheel is installed, on a machine with the
variant's CPU features; the target is the variant's default (tvm_wheels.target.host()):

    python tools/tune_db.py --trials 8,16,32
    python tools/tune_db.py --mcpu x86-64-v3 --rpc 127.0.0.1:9190 --key x86-v3   # measured on AVX2 servers

Tunes the documented workload set (WORKLOADS) in rounds: every task to 8 measured trials,
then to 16, then 32. Each round resumes from the search history (--work), so a stopped run
loses nothing, and a round no larger than the shipped database's budget counts its workloads
as done: on a machine without the history, a workload added to WORKLOADS is all that is tuned.
After each round it compiles ResNet-50 with the database and measures its latency: the curve
of latency vs trials is kept with the budget in budget.json beside the database, in
tuning/<target id>/ (the preset's TVM_WHEEL_TUNING_DB names it). With --rpc, the candidates are
measured on a tracker's servers (docs/remote.md), and where the target's code cannot run on this
machine the latency curve is left empty (null).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from models import mobilenet_v2, resnet50, transformer  # noqa: E402

# What the shipped database covers, batch 1, float32: ResNet-50 (conv2d, dense, pooling), one
# BERT-base encoder block (matmul, softmax, layer norm, GELU) and MobileNet v2 (depthwise 3x3
# convolutions and the pointwise ones around them, ReLU6), the operator families that the
# other architectures (EfficientNet, MobileNet v3, ShuffleNet, ViT, GPT-2) are scheduled from.
WORKLOADS = {"resnet50": resnet50, "bert_block": transformer, "mobilenet_v2": mobilenet_v2}


def latency_ms(mod, model, target, db, repeat=10) -> float:
    import tvm
    from tvm import relax

    from tvm_wheels.compiler import pipeline

    vm = relax.VirtualMachine(pipeline.compile(mod, target, databases=[db]), tvm.cpu())
    x = tvm.runtime.tensor(model.sample_input(seed=1))
    vm["main"](x)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        vm["main"](x)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main() -> int:
    import tvm

    from tvm_wheels import buildinfo, host
    from tvm_wheels.compiler import measure, pipeline, records, tuning
    from tvm_wheels.target import for_compile

    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", default="8,16,32", help="rounds: measured trials per task, increasing")
    parser.add_argument("--out", type=Path, default=ROOT / "tuning",
                        help="where the shipped database goes (best record per workload)")
    parser.add_argument("--merge", type=Path, default=None, metavar="DB_ROOT",
                        help="instead of tuning: merge a database that `tvm-wheels tune --out DB_ROOT` wrote "
                             "(its <target id> directory) into the shipped one, keeping the best record per workload")
    parser.add_argument("--mcpu", default=None,
                        help="tune for this LLVM mcpu instead of the default target's (another x86-64 level "
                             "of the cpu wheel, e.g. x86-64-v3, which a v4 CPU also runs), same mattr")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="which of WORKLOADS to tune, comma-separated (a level's first database: "
                             "resnet50,bert_block, as the x86-64-v3 and v2 ones were)")
    parser.add_argument("--rpc", default=None, metavar="HOST:PORT", help="measure on this RPC tracker's servers")
    parser.add_argument("--key", default=None, help="with --rpc: the key the servers registered under")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "tvm-wheels" / "tune-db",
                        help="the full search history, kept to resume")
    args = parser.parse_args()
    rounds = [int(t) for t in args.trials.split(",")]
    target = for_compile(None)
    if args.mcpu:
        target = tvm.target.Target({**dict(target.export()), "mcpu": args.mcpu})
    if bool(args.rpc) != bool(args.key):
        parser.error("--rpc HOST:PORT and --key KEY go together")
    servers = None
    if args.rpc:
        from tvm_wheels import remote

        try:
            servers = remote.connect(args.rpc, args.key, target)
        except remote.RemoteError as e:
            print(e, file=sys.stderr)
            return 2
        print(f"measuring on {servers}", flush=True)
    tid = records.target_id(target)
    budget_path = args.out / tid / "budget.json"
    budget = json.loads(budget_path.read_text()) if budget_path.exists() else {"rounds": []}
    if args.merge:
        sources = [records.Database(args.out / tid), records.Database(args.merge / tid)]
        merged = records.export(sources, Path(tempfile.mkdtemp(prefix="tune-db-merge-")))
        records.export(merged, args.out / tid)
        budget.setdefault("merged", []).append({"date": datetime.date.today().isoformat(),
                                                "records": len(sources[1].ms.get_all_tuning_records())})
        budget_path.write_text(json.dumps(budget, indent=1, sort_keys=True) + "\n")
        print(f"merged {args.merge / tid} into {args.out / tid}")
        return 0
    unknown = set(args.workloads.split(",")) - set(WORKLOADS)
    if unknown or "resnet50" not in args.workloads.split(","):  # every round measures ResNet-50
        parser.error(f"--workloads: from {', '.join(WORKLOADS)}, resnet50 among them (got {args.workloads})")
    workloads = {name: WORKLOADS[name] for name in args.workloads.split(",")}
    mods = {name: pipeline.from_onnx_model(m.build(seed=0)) for name, m in workloads.items()}
    task_counts = {name: len(tuning.tasks(mod, target)) for name, mod in mods.items()}  # once, not per round
    logs = Path(tempfile.mkdtemp(prefix="tune-db-logs-"))
    # the shipped records, read before this run rewrites them: done for rounds within their budget
    shipped = None
    if (args.out / tid / "database_tuning_record.json").is_file():
        shipped = records.export(records.Database(args.out / tid), Path(tempfile.mkdtemp(prefix="tune-db-shipped-")))
    def measured() -> int:
        return len(records.Database(args.work / tid, writable=True).ms.get_all_tuning_records())

    for trials in rounds:
        start, before = time.monotonic(), measured()
        tuned = shipped if shipped is not None and trials <= budget.get("trials_per_task", 0) else None
        for name, mod in mods.items():
            print(f"== {name}: {trials} trials per task", flush=True)
            db = tuning.tune(mod, target, args.work, trials, logs=logs / name, tuned=tuned, servers=servers,
                             progress=lambda line: print(line, flush=True))
        seconds = time.monotonic() - start
        ran = measured() > before
        sources = [db] if tuned is None else [db, tuned]
        budget_db = records.export(sources, Path(tempfile.mkdtemp(prefix="tune-db-round-")), first=trials)
        prev = next((r for r in budget["rounds"] if r["trials_per_task"] == trials), {"seconds": None})
        # resnet50_ms: with each workload's first `trials` measurements only (reproducible from the
        # history); where ResNet-50 came from the shipped records (best of the full budget), the
        # round's own measurement stands
        ms = prev["resnet50_ms"] if tuned is not None and "resnet50_ms" in prev else \
            latency_ms(mods["resnet50"], resnet50, target, budget_db) if measure.runs_here(target) else None
        print(f"== round {trials}: {seconds / 60:.1f} min, ResNet-50 "
              + (f"{ms:.1f} ms" if ms is not None else "not run (the target's code does not run here)"), flush=True)
        # seconds: tuning time of the round, summed over the runs that resumed it
        # (None: tuned by runs that did not record their time)
        total = (prev["seconds"] or 0.0) + seconds if ran or prev["seconds"] is not None else None
        budget["rounds"] = sorted([r for r in budget["rounds"] if r is not prev] + [{
            "trials_per_task": trials, "seconds": None if total is None else round(total, 1),
            "resnet50_ms": None if ms is None else round(ms, 2)}],
            key=lambda r: r["trials_per_task"])
        budget.update({
            "target": json.loads(str(target)), "target_id": tid, "workloads": sorted(workloads),
            "tasks": task_counts,
            "trials_per_task": budget["rounds"][-1]["trials_per_task"], "tvm": tvm.__version__, "variant": buildinfo.load()["variant"],
            "host": {"machine": platform.machine(), "cores": host.physical_cores(), "cpu": host.cpu_name(),
                     "threads": tvm.runtime.num_threads()},  # TVM's pool while measuring
            "date": datetime.date.today().isoformat(), "script": "tools/tune_db.py",
        })
        # what ships: the largest budget measured
        records.export(sources, args.out / tid, first=budget["trials_per_task"])
        budget_path.write_text(json.dumps(budget, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
