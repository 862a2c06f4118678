"""Tuning records: the databases, where they live, which target they belong to.

A database is a directory with MetaSchedule's two JSON files. It belongs to one target:
its directory is named by `target_id` (kind, mcpu, mattr; not the core count), and a record
is used only when its own target has the same id, so records tuned for x86-64-v4 never reach
a wheel compiling for another CPU.

Looked up, first hit wins (for_target):
  1. $TVM_WHEELS_TUNING_DB/<target id>/  (default ~/.cache/tvm-wheels/tuning/): `tvm-wheels tune`
  2. tvm_wheels/tuning/<target id>/ in the wheel: shipped (the preset's TVM_WHEEL_TUNING_DB),
     made by tools/tune_db.py
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

SHIPPED = Path(__file__).resolve().parent.parent / "tuning"  # the package's tvm_wheels/tuning/
FAILED_SECS = 1e9  # MetaSchedule records a failed build or run as 1e10 s


def user_root() -> Path:
    env = os.environ.get("TVM_WHEELS_TUNING_DB")
    if env:
        return Path(env)
    return cache_home() / "tuning"


def cache_home() -> Path:
    """This project's folder in the user's cache ($XDG_CACHE_HOME or ~/.cache)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tvm-wheels"


def target_id(target) -> str:
    """The part of a target that decides which code is right: kind, mcpu, mattr."""
    spec = dict(target if isinstance(target, dict) else target.export())
    parts = [str(spec.get("kind", "")), str(spec.get("mcpu", "") or "generic")]
    parts += sorted(str(a) for a in (spec.get("mattr") or []))
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", "-".join(parts)).strip("_")


class Database:
    """A MetaSchedule JSON database restricted to one target id."""

    def __init__(self, path: Path, writable: bool = False):
        self.path = Path(path)
        if writable:
            self.path.mkdir(parents=True, exist_ok=True)
        self.writable = writable
        self.ms = self._open("structural")
        self._by_anchor = self._by_operator = None

    def _open(self, module_equality: str):
        from tvm.s_tir import meta_schedule as ms

        return ms.database.JSONDatabase(
            path_workload=str(self.path / "database_workload.json"),
            path_tuning_record=str(self.path / "database_tuning_record.json"),
            allow_missing=self.writable, module_equality=module_equality,
        )

    @staticmethod
    def _top(db, mod, target, top: int):
        if not db.has_workload(mod):
            return []
        tid = target_id(target)
        found = db.get_top_k(db.commit_workload(mod), 1 << 20)
        return [r for r in found if r.target is not None and target_id(r.target) == tid][:top]

    def records(self, mod, target, top: int = 1):
        """Best measured records of `mod` tuned for this target id (never commits a workload)."""
        return self._top(self.ms, mod, target, top)

    def best_by_anchor(self, mod, target):
        """The best record for this target id of a workload whose anchor block (the convolution or
        matmul a fused function is built around) equals `mod`'s, whatever its epilogue: MetaSchedule's
        "anchor-block" equality, read from the same files."""
        if self._by_anchor is None:
            self._by_anchor = self._open("anchor-block")
        found = self._top(self._by_anchor, mod, target, 1)
        return found[0] if found else None

    def similar(self, mod, target) -> list:
        """The best record (for this target id) of each workload whose anchor block is the same
        operator as `mod`'s (block name and loop count) at other shapes, nearest first: by the
        summed |log| ratio of the anchor's loop extents."""
        mine = anchor_shape(mod)
        if mine is None:
            return []
        if self._by_operator is None:
            self._by_operator = {}
            for record in self.ms.get_all_tuning_records():
                shape = anchor_shape(record.workload.mod)
                if shape is not None and record.target is not None:
                    self._by_operator.setdefault(shape[0], []).append((shape[1], record))
        tid = target_id(target)
        best = {}
        for extents, record in self._by_operator.get(mine[0], []):
            if target_id(record.target) != tid or len(extents) != len(mine[1]):
                continue
            secs = sum(float(t) for t in record.run_secs) / len(record.run_secs)
            if secs < FAILED_SECS and (extents not in best or secs < best[extents][0]):
                best[extents] = (secs, record)
        return [best[e][1] for e in sorted(best, key=lambda e: sum(abs(math.log(a / b)) for a, b in zip(e, mine[1])))]

    def in_order(self):
        """Every record in the order it was measured (the JSON files are append-only logs;
        MetaSchedule's own listing is sorted by latency)."""
        import json

        from tvm.s_tir import meta_schedule as ms

        workloads = [ms.database.Workload.from_json(json.loads(line))
                     for line in (self.path / "database_workload.json").read_text().splitlines() if line.strip()]
        for line in (self.path / "database_tuning_record.json").read_text().splitlines():
            if line.strip():
                index, record = json.loads(line)
                yield ms.database.TuningRecord.from_json(record, workloads[index])

    def best(self, mod, target):
        found = self.records(mod, target)
        return found[0] if found else None


def anchor_shape(mod):
    """(operator, loop extents) of a workload's anchor block: its block name without the numbering
    of fused copies (`matmul3`) or the Relax variable it was legalized from (layer norm's
    `lv8_var_sum`), and the extents of its iteration variables; None without one, or where an
    extent is symbolic (a sequence axis left dynamic): no record's shape is near or far from it."""
    import tvm
    from tvm.s_tir.analysis import find_anchor_sblock

    block = find_anchor_sblock(mod)
    if block is None or not all(isinstance(v.dom.extent, tvm.tirx.IntImm) for v in block.iter_vars):
        return None
    extents = tuple(max(int(v.dom.extent), 1) for v in block.iter_vars)
    return re.sub(r"^lv\d+_|_?\d+$", "", block.name_hint), extents


def for_target(target) -> list[Database]:
    """The databases a compile for `target` consults, in order."""
    tid = target_id(target)
    found = []
    for root in (user_root(), SHIPPED):
        path = root / tid
        if (path / "database_tuning_record.json").is_file():
            found.append(Database(path))
    return found


def export(sources, dest: Path, top: int = 1, first: int | None = None) -> Database:
    """Copy the best `top` records of each workload of `sources` (one Database or several, e.g.
    the shipped one and a user's) into a fresh database at `dest`: what ships in a wheel, without
    the search history. `first`: consider only each workload's first N valid measurements, so a
    budget's result can be reproduced from a history that went on to larger budgets."""
    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms

    sources = [sources] if isinstance(sources, Database) else list(sources)
    found = {}  # workload hash -> (workload mod, [valid records in measurement order])
    for src in sources:
        for record in src.in_order():
            if record.run_secs and all(float(t) < FAILED_SECS for t in record.run_secs):
                key = tvm_ffi.structural_hash(record.workload.mod)
                found.setdefault(key, (record.workload.mod, []))[1].append(record)
    for name in ("database_workload.json", "database_tuning_record.json"):
        (Path(dest) / name).unlink(missing_ok=True)
    out = Database(dest, writable=True)
    for _, (mod, records) in sorted(found.items(), key=lambda kv: kv[0]):
        entry = out.ms.commit_workload(mod)
        considered = sorted(records[:first], key=lambda r: sum(float(t) for t in r.run_secs) / len(r.run_secs))
        for r in considered[:top]:
            out.ms.commit_tuning_record(ms.database.TuningRecord(
                r.trace, entry, run_secs=r.run_secs, target=r.target, args_info=r.args_info))
    return out
