#!/usr/bin/env python3
"""ResNet-50 latency vs tuning budget: the curve tools/tune_db.py measured while it built each
shipped database (tuning/<target id>/budget.json: after each round of N measured trials per
task, ResNet-50 compiled with the database and timed). Writes bench/results/tuning_curve.json
(the rounds, with where they came from) and tuning_curve.png.

    python bench/tuning_curve.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    curves = {}
    for budget in sorted((ROOT / "tuning").glob("*/budget.json")):
        data = json.loads(budget.read_text())
        # a round tuned through RPC for a target that does not run on the tuning machine has no latency
        curves[data["target_id"]] = {"source": str(budget.relative_to(ROOT)), "host": data["host"],
                                     "tasks": data["tasks"],
                                     "rounds": [r for r in data["rounds"] if r["resnet50_ms"] is not None]}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "tuning_curve.json").write_text(json.dumps(curves, indent=1, sort_keys=True) + "\n")
    _plot(curves, RESULTS / "tuning_curve.png")
    for tid, c in curves.items():
        for r in c["rounds"]:
            print(f"{tid}: {r['trials_per_task']:4d} trials/task  ResNet-50 {r['resnet50_ms']:8.1f} ms")
    return 0


def _plot(curves: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for tid, c in curves.items():
        rounds = c["rounds"]
        ax.plot([r["trials_per_task"] for r in rounds], [r["resnet50_ms"] for r in rounds], "o-", label=tid)
        for r in rounds:
            ax.annotate(f"{r['resnet50_ms']:.0f} ms", (r["trials_per_task"], r["resnet50_ms"]),
                        textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("measured trials per task (MetaSchedule)")
    ax.set_ylabel("ResNet-50 latency, ms")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title("ResNet-50 batch 1 with the shipped database vs its tuning budget", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
