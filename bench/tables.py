#!/usr/bin/env python3
"""The Markdown tables of results, made from bench/results/*.json, never typed.

A document holds a table between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`;
this script writes each such block from results/NAME.json:

    python bench/tables.py           # rewrite the blocks of every document that has them
    python bench/tables.py --check   # exit 1, naming each block that is out of step

tests/unit/test_docs.py runs the check, so a benchmark's new results and the documents that
show them change in the same commit. Standard library only, so that it runs anywhere.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DOCUMENTS = ["README.md", "bench/README.md", "docs/*.md"]
BLOCK = re.compile(r"(<!-- generated:([a-z0-9_]+) -->\n)(.*?)(<!-- /generated:\2 -->)", re.S)


def zoo(data: dict) -> str:
    """bench/zoo.py: one row per model and wheel, onnxruntime in the same run."""
    lines = ["| model | wheel | latency | onnxruntime | ratio | compile | schedules |", "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['wheel']} | fails: {r['error']} | | | | |")
            continue
        sources = ", ".join(f"{n} {k}" for k, n in sorted(r["schedules"].items()))
        if r.get("timed", [0])[0]:  # functions whose schedule was picked by timing candidates at compile time
            sources += f"; {r['timed'][0]} timed here ({r['timed'][1]} candidates)"
        lines.append(f"| {r['model']} | {r['wheel']} | {r['median_ms']:.1f} ms | {r['onnxruntime_ms']:.1f} ms | "
                     f"{r['vs_onnxruntime']:.2f}x | {r['compile_s']:.0f} s | {sources} |")
    means = ", ".join(f"{wheel} **{g:.2f}x**" for wheel, g in data.get("geomean_vs_onnxruntime", {}).items() if g)
    lines += ["", f"Geometric mean vs onnxruntime: {means} ({data['host']['cores']} cores, "
              f"median of {data['repeat']}; rows measured {', '.join(sorted({r['date'] for r in data['rows']}))})."]
    return "\n".join(lines)


def resnet50_latency(data: dict) -> str:
    """bench/resnet50_latency.py: one row per engine, each in its own venv, in one run."""
    lines = [f"| engine (ResNet-50 batch 1, median of {data['repeat']}) | threads | latency | compile | tuning |",
             "|---|---|---|---|---|"]
    for r in data["rows"]:
        compile_s = f"{r['compile_s']:.0f} s" if "compile_s" in r else ""
        tune = f"{r['tune_s'] / 60:.1f} min" if "tune_s" in r else ""
        lines.append(f"| {r['engine']} | {r['threads']} | {r['median_ms']:.0f} ms | {compile_s} | {tune} |")
    lines += ["", f"Measured {data['date']} on {data['machine']['cores']} cores ({data['machine']['processor']})."]
    return "\n".join(lines)


def build_cost(data: list) -> str:
    """tools/build_cost.py run/collect: one row per cold build (empty ccache and wheel cache)."""
    lines = ["| build, cold | variant | ref | wall | compile steps | compile CPU | wheel |", "|---|---|---|---|---|---|---|"]
    for r in data:
        wall = f"{r['wall_s'] / 60:.1f} min"
        if not r.get("complete", True):
            wall = f"stopped after {wall} at {r['steps_done']} of {r['steps_total']} steps"
        wheel = f"{r['wheel_mb']:.1f} MB" if r.get("wheel_mb") else ""
        lines.append(f"| {r['label']} | {r['variant']} | {r['ref'][:7]} | {wall} | {r['compile_steps']} | "
                     f"{r['compile_cpu_s']} s | {wheel} |")
    return "\n".join(lines)


def build_levers(data: dict) -> str:
    """tools/build_cost.py levers: each lever alone on a sample of TVM's sources."""
    lines = [f"| setting ({len(data['sample'])} sources) | compiles | CPU | vs as built | peak memory |",
             "|---|---|---|---|---|"]
    for r in data["settings"]:
        lines.append(f"| {r['setting']} | {r['compiles']} | {r['cpu_s']:.0f} s | {r['vs_as_built']:.2f} | "
                     f"{r['peak_rss_mb']} MB |")
    return "\n".join(lines)


def ci_tier1(data: dict) -> str:
    """tests/conftest.py's record of a measured tier-1 run (TVM_WHEELS_CI_RECORD)."""
    return "\n".join([
        "| tier 1, `.ci/run` start to end | ref | date | wall | tests | of CI's limit |", "|---|---|---|---|---|---|",
        f"| {data.get('conditions') or 'fresh clone'} ({data['host']['cores']} cores, "
        f"{data['host'].get('x86_64_level', '')}) | {data['ref']} | {data['date']} | **{data['wall_s'] / 60:.1f} min** | "
        f"{data['passed']} passed, {data['failed']} failed, {data['skipped']} skipped | "
        f"{data['wall_s'] / data['limit_s']:.0%} |"])


def rpc_tune(data: dict) -> str:
    """bench/rpc_tune.py: the same tune here and through 1 and 2 loopback RPC servers, one run."""
    lines = [f"| {data['trials']} trials of {data['model']} | wall | best found | modules each server loaded |",
             "|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['runner']} | {r['seconds']:.0f} s | {r['best']} | {', '.join(map(str, r['loaded'])) or '-'} |")
    lines += ["", f"Measured {data['date']} on {data['host']['cores']} cores ({data['host']['cpu']}); the servers "
              "share those cores with the builder and with each other."]
    return "\n".join(lines)


def dynamic(data: dict) -> str:
    """bench/dynamic.py: models with symbolic axes, one compile each, run at several sizes."""
    lines = ["| model | size | latency | onnxruntime | ratio | output diff |", "|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['model']} | {r['size']} | {r['median_ms']:.2f} ms | {r['onnxruntime_ms']:.2f} ms | "
                     f"{r['vs_onnxruntime']:.2f}x | {r['rel_diff']:.0e} |")
    compiles = "; ".join(f"{m}: " + (f"failed ({v['error']})" if "error" in v else f"{v['compile_s']:.0f} s, "
                                     + ", ".join(f"{n} {s}" for s, n in v["schedules"].items()))
                         for m, v in data["models"].items())
    lines += ["", f"One compile per model ({compiles}). Measured {data['date']}, {data['wheel']} wheel, "
              f"{data['host']['cores']} cores, median of {data['repeat']} runs, onnxruntime in the same run."]
    return "\n".join(lines)


TABLES = {"zoo": zoo, "dynamic": dynamic, "rpc_tune": rpc_tune, "ci_tier1": ci_tier1, "resnet50_latency": resnet50_latency, "build_cost": build_cost, "build_levers": build_levers}


def render(name: str) -> str:
    if name not in TABLES:
        raise KeyError(f"bench/tables.py: no table named {name!r} (known: {', '.join(TABLES)})")
    return TABLES[name](json.loads((RESULTS / f"{name}.json").read_text())) + "\n"


def documents() -> list[Path]:
    return sorted({p for pattern in DOCUMENTS for p in ROOT.glob(pattern) if p.is_file()})


def update(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + render(m.group(2)) + m.group(4), text)


def stale() -> list[str]:
    """'document: table' for each generated block that differs from its results."""
    out = []
    for doc in documents():
        text = doc.read_text()
        for m in BLOCK.finditer(text):
            if m.group(3) != render(m.group(2)):
                out.append(f"{doc.relative_to(ROOT)}: {m.group(2)}")
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say which blocks are out of step (exit 1)")
    if parser.parse_args(argv[1:]).check:
        out = stale()
        for line in out:
            print(f"out of step with bench/results: {line} (fix: python bench/tables.py)", file=sys.stderr)
        return 1 if out else 0
    for doc in documents():
        text = doc.read_text()
        if (new := update(text)) != text:
            doc.write_text(new)
            print(f"wrote {doc.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
