"""Compile with schedules: tuning records first, MetaSchedule's rules for the rest.

TVM 0.26's default CPU pipeline legalizes every op to TIR and schedules none of it. This
pipeline inserts one step after legalization and fusion: each PrimFunc gets the best record
of the tuning databases (the user's, from `tvm-wheels tune`, then the one shipped in the
wheel for its variant), and a function no database knows gets one schedule drawn, with a fixed
seed, from MetaSchedule's CPU rules (tiling, parallel, vectorize, unroll). No op stays
unscheduled; `report` says which source scheduled each one.

    import tvm_wheels
    report = []
    ex = tvm_wheels.compile(mod, report=report)   # target: the variant's default
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from . import tuning

log = logging.getLogger("tvm_wheels.schedules")

RULES_SEED = 0
SCHEDULED = "tirx.is_scheduled"


@dataclass(frozen=True)
class Entry:
    function: str
    source: str  # "database:<path>", "rules" or "unscheduled: <why>"
    latency_us: float | None = None  # the record's measured latency, for database entries


def _from_database(func, target, databases):
    """(scheduled PrimFunc, Entry) from the first database with a record for this target."""
    from tvm.s_tir import Schedule
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    mod = _normalize_mod(func)
    for db in databases:
        record = db.best(mod, target)
        if record is None:
            continue
        sch = Schedule(record.workload.mod)
        record.trace.apply_to_schedule(sch, remove_postproc=False)
        return sch.mod["main"], Entry("", f"database:{db.path}", float(record.run_secs[0]) * 1e6)
    return None, None


def _from_rules(func, target):
    """One schedule from MetaSchedule's design space for `target`, postprocessed; None if no
    seed in a few gives a valid one."""
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    mod = _normalize_mod(func)
    for seed in range(RULES_SEED, RULES_SEED + 4):
        ctx = ms.TuneContext(mod=mod, target=target, space_generator="post-order-apply",
                             search_strategy="replay-trace", rand_state=seed, num_threads=1)
        for sch in ctx.generate_design_space():
            if all(p.apply(sch) for p in ctx.space_generator.postprocs):
                return sch.mod["main"]
    return None


def schedule(mod, target, databases=None, report: list | None = None):
    """`mod` with every unscheduled PrimFunc scheduled; appends an Entry per function to `report`."""
    import tvm

    target = tuning.tuning_target(target)
    databases = tuning.databases(target) if databases is None else databases
    out = {}
    for gv, func in mod.functions_items():
        if not isinstance(func, tvm.tirx.PrimFunc) or (func.attrs and func.attrs.get(SCHEDULED)):
            out[gv] = func
            continue
        new, entry = _from_database(func, target, databases)
        if new is None:
            new = _from_rules(func, target)
            entry = Entry("", "rules") if new is not None else Entry("", "unscheduled: no valid schedule")
        if new is None:
            new = func
        else:
            # keep the caller's attributes (global symbol, op pattern), as MetaSchedule's own pass does
            new = tvm.tirx.PrimFunc(new.params, new.body, new.ret_type, func.attrs).with_attr(SCHEDULED, True)
        out[gv] = new
        entry = Entry(gv.name_hint, entry.source, entry.latency_us)
        log.debug("%s: %s", entry.function, entry.source)
        if report is not None:
            report.append(entry)
    return tvm.IRModule(out, attrs=mod.attrs)


def pipeline(target, databases=None, report: list | None = None):
    """TVM's CPU pipeline (relax/backend/cpu_generic) with `schedule` after fusion."""
    import tvm

    from tvm.relax.backend.cpu_generic import pipeline as cpu

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.Schedule")
    def _schedule(mod, _ctx):
        return schedule(mod, target, databases, report)

    passes = (cpu.library_dispatch_passes(target) + cpu.legalize_passes(target) + [_schedule]
              + cpu.dataflow_lower_passes(target) + cpu.finalize_passes(target))

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.Pipeline")
    def _pipeline(mod, _ctx):
        with target:
            return tvm.transform.Sequential(passes)(mod)

    return _pipeline


def compile(mod, target=None, *, databases=None, report: list | None = None, **kwargs):  # noqa: A001
    """tvm.compile with this project's pipeline. target: the variant's default (tvm_wheels.target.host())."""
    import tvm

    target = tuning.tuning_target(target)
    return tvm.compile(mod, target=target, relax_pipeline=pipeline(target, databases, report), **kwargs)
