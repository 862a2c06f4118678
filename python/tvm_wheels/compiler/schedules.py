"""Which schedule each function gets, first hit wins (`report` says which, per function):

1. a record of this workload for this target: the user's database (`tvm-wheels tune`), then the
   ones shipped in the wheel (records.for_target);
2. a record of a workload with the same anchor block (its convolution or matmul) and another
   epilogue: that record's trace, applied to the anchor (`anchor:`);
3. a record of the same operator at the nearest shapes: its trace with the tilings re-fitted
   (`similar:`); where the traces of several such records apply, each is timed here and the
   fastest kept (measure.py);
4. one schedule drawn, with a fixed seed, from MetaSchedule's CPU rules (tiling, parallel,
   vectorize, unroll) (`rules`).
A function whose schedule from 3 or 4 still takes HEAVY_US or longer per run of the model here
(its time by the number of places the model calls it) gets RULES_MEASURED more samples of the
rules timed beside it, and the fastest of all is kept (`rules` where a sample won). A schedule
from 2 to 4 with an access provably out of its buffer is turned down (_in_bounds).
No op stays unscheduled unless no sample of the rules lowers (`unscheduled: ...`).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import itertools
import logging
import math
import os
import re
import sys
import time

from . import cache, measure, records, symbolic
from ..target import for_compile

log = logging.getLogger("tvm_wheels.schedules")

RULES_SEED = 0
SPARE_SEEDS = 3  # seeds tried past the samples wanted: every sample of a seed may be rejected
SIMILAR_TRIED = 8  # records of the nearest shapes whose traces are tried on a function with none of its own
SIMILAR_MEASURED = 4  # of those that apply, how many are built and timed at compile time (about 0.2 s each)
HEAVY_US = 500  # per run of the model: a carried-over or rules schedule this slow gets RULES_MEASURED samples of the rules timed beside it
RULES_MEASURED = 8  # (onnx's ShuffleNet v1: 14.8 ms with 4 samples where one function alone took HEAVY_US, 10.6 ms with 8 where its calls did)
SIZABLE = 1e6  # FLOPs plus buffer elements, by calls, below which a function is not timed: it cannot take HEAVY_US
SCHEDULED = "tirx.is_scheduled"


@dataclasses.dataclass(frozen=True)
class Entry:
    function: str
    source: str  # "database:<path>", "anchor:<path>", "rules" or "unscheduled: <why>"
    latency_us: float | None = None  # database, anchor: the record's latency; similar, rules: measured at compile time
    prepacked: bool = False  # its weights were re-laid out for the schedule at compile time
    measured: int = 0  # similar, rules: how many candidates were timed here to pick this one
    cached: bool = False  # chosen by an earlier compile of the same function (cache.py), not again


def _from_database(mod, target, databases, calls=1):
    """(scheduled PrimFunc, Entry) from the first database with a record of this workload for this
    target; else from the first with a record of its anchor block (_from_anchor); else from the
    traces of records at the nearest shapes (_from_similar): where several apply to a function
    with work enough to matter (_sizable), the fastest here, else the nearest."""
    for db in databases:
        record = db.best(mod, target)
        if record is None:
            continue
        return _as_tuned(record)["main"], Entry("", f"database:{db.path}", float(record.run_secs[0]) * 1e6)
    for db in databases:
        record = db.best_by_anchor(mod, target)
        new = None if record is None else _from_anchor(mod, record, target)
        if new is not None:
            return new, Entry("", f"anchor:{db.path}", float(record.run_secs[0]) * 1e6)
    for db in databases:
        # lazily: applying a trace costs its postprocessing, so none is applied past the first that count
        applied = (_from_similar(mod, r, target) for r in db.similar(mod, target)[:SIMILAR_TRIED])
        wanted = SIMILAR_MEASURED if _sizable(mod, calls) else 1  # timing cannot pay where the work is small
        found = list(itertools.islice((f for f in applied if f is not None), wanted))
        if len(found) == 1:
            return found[0], Entry("", f"similar:{db.path}")
        if found:
            new, us = measure.fastest(found, target)
            return new, Entry("", f"similar:{db.path}", us, measured=len(found) if us is not None else 0)
    return None, None


def _as_tuned(record):
    """The record's workload with its whole trace applied: the schedule that was measured in tuning."""
    from tvm.s_tir import Schedule

    sch = Schedule(record.workload.mod)
    record.trace.apply_to_schedule(sch, remove_postproc=False)
    return sch.mod


def _from_anchor(mod, record, target):
    """`mod` scheduled with the trace of a record tuned for the same anchor block in another fused
    function (a convolution followed by a residual add where the record's had a bias only): the
    trace's steps for the anchor and its producers, the epilogue inlined into its output stage
    (MetaSchedule's ScheduleUsingAnchorTrace). None where that fails."""
    sch = _with_anchor_trace(mod, _anchor_layout_rewrites_only(record.trace, record.workload.mod), target)
    return sch.mod["main"] if sch is not None and _in_bounds(sch.mod, mod, record) else None


def _with_anchor_trace(mod, trace, target):
    """A Schedule of `mod` with `trace` applied to its anchor block (MetaSchedule's
    ScheduleUsingAnchorTrace), or None. Where the trace does not replay as it is, once more with
    the epilogue first inlined into its output block: a trace looks up the anchor's consumers, and
    an epilogue that reads the anchor's result twice (GPT-2's tanh GELU: x * (1 + tanh(x + x^3)))
    has another number of them than the record's had."""
    import tvm
    from tvm.s_tir import Schedule

    apply = tvm.get_global_func("s_tir.meta_schedule.ScheduleUsingAnchorTrace")
    for inline in (False, True):
        sch = Schedule(mod)
        try:
            if inline and not _inline_epilogue(sch):
                return None
            apply(sch, trace, target)
            return sch
        except (RuntimeError, ValueError) as e:  # TVM raises InternalError (a RuntimeError) or ValueError
            log.debug("anchor trace%s: %s", " (epilogue inlined)" if inline else "", str(e).strip().splitlines()[-1])
    return None


def _inline_epilogue(sch) -> bool:
    """Inline every block that reads the anchor block's result, directly or not, into its
    consumers, except the function's output blocks; False where there is nothing to inline."""
    from tvm.s_tir.analysis import find_anchor_sblock

    anchor = find_anchor_sblock(sch.mod)
    after, inlined = [w.buffer for w in anchor.writes], False  # the buffers the anchor's result flows into
    for block in [sch.get(b) for b in sch.get_child_blocks(sch.get_sblock("root"))]:
        if block.same_as(anchor) or not any(r.buffer.same_as(b) for r in block.reads for b in after):
            continue
        after += [w.buffer for w in block.writes]
        rv = sch.get_sblock(block.name_hint)
        if sch.get_consumers(rv):
            sch.compute_inline(rv)
            inlined = True
    return inlined


def _anchor_layout_rewrites_only(trace, workload):
    """The trace without its layout rewrites of buffers that blocks other than the anchor read.

    MetaSchedule's RewriteLayout step re-lays out every constant a block reads, by block name
    and read index: in the record's function the epilogue block's second read is the bias, in
    another function with the same anchor it may be a residual input (ResNet-18's blocks), which
    the bias's layout would then scramble (measured: wrong outputs). The anchor's own weight is
    the same buffer in both."""
    from tvm.s_tir.analysis import find_anchor_sblock
    from tvm.s_tir.schedule import Trace

    anchor = find_anchor_sblock(workload).name_hint
    names, dropped, kept = {}, set(), []
    for inst in trace.insts:
        if inst.kind.name == "GetSBlock":
            names[inst.outputs[0]] = str(inst.attrs[0])
        block = names.get(inst.inputs[0]) if inst.inputs else None
        if ((inst.kind.name in ("CacheRead", "TransformLayout") and block not in (None, anchor, f"{anchor}_update"))
                or any(i in dropped for i in inst.inputs)):
            dropped.update(inst.outputs)
        else:
            kept.append(inst)
    decisions = dict(trace.decisions)
    return Trace(kept, {i: decisions[i] for i in kept if i in decisions})


def _from_similar(mod, record, target):
    """`mod` scheduled with the trace of a record of the same operator at other shapes (the
    nearest, Database.similar): its steps up to MetaSchedule's postprocessing, each tiling
    decision re-fitted to this function's loop extents (the record's inner tile sizes where they
    divide them, the rest outermost), applied to the anchor block as _from_anchor does, then the
    postprocessors, as for a sample of the rules. None where it does not apply."""
    extents = records.anchor_shape(mod)[1]
    trace = _refitted(record.trace, extents)
    if trace is None:
        return None
    sch = _with_anchor_trace(mod, trace, target)
    try:
        if sch is not None and all(p.apply(sch) for p in _postprocs(mod, target)) and _in_bounds(sch.mod, mod, record):
            return sch.mod["main"]
    except (RuntimeError, ValueError) as e:  # TVM raises InternalError (a RuntimeError) or ValueError
        log.debug("similar trace: %s", str(e).strip().splitlines()[-1])
    return None


def _in_bounds(scheduled, original, record=None) -> bool:
    """Whether `scheduled` may be taken: TVM's OOBChecker proves no access of it outside its
    buffer, or it reports one and also reports one in `original`, the function before
    scheduling, or in the schedule of the `record` whose trace made `scheduled` (as tuned: it
    ran): its bounds of an index are loose there (ShuffleNet v2's channel shuffles, div and mod
    of fused loops; a stride-2 depthwise convolution's padding inlined, a read of row -1 where
    the pad's condition is false), so what it reports says nothing of the schedule. A candidate
    the checker fails on (an error that is not its report) is not taken, and a failure on
    `original` is no report: it does not switch the check off. A trace applied where the
    anchor's epilogue covers fewer rows than the anchor (a dense layer padded to 200 rows, cut
    to 197 before its residual add) can move the epilogue into the anchor's tiles without a
    bound: measured, writes past the output, a corrupted heap."""
    found = _bounds(scheduled)
    if found != FLAGGED:
        return found == PROVED
    return _flagged_unscheduled(original) or (record is not None and _flagged_as_tuned(record))


@functools.lru_cache(maxsize=1)  # keyed by the object: the function whose candidates are being checked
def _flagged_unscheduled(original) -> bool:
    """Whether the checker reports an access out of bounds in the function before scheduling
    (ShuffleNet's shuffles: then every rejected sample of the rules would check it again)."""
    return _bounds(original) == FLAGGED


@functools.lru_cache(maxsize=64)  # keyed by the object: a record carried over to several functions
def _flagged_as_tuned(record) -> bool:
    return _bounds(_as_tuned(record)) == FLAGGED


PROVED, FLAGGED, FAILED = "proved", "flagged", "failed"
OOB_REPORT = re.compile(r"Out of bounds? memory access")  # OOBChecker's own error (its OOBError)


def _bounds(mod) -> str:
    """TVM's OOBChecker on `mod`: PROVED (no access provably out of bounds), FLAGGED (it reports
    one) or FAILED (it raised something else: it could not check)."""
    from tvm.s_tir.analysis import OOBChecker

    try:
        with _stderr_silenced():  # its report prints the function, and the printer warns on stderr
            OOBChecker()(mod)
        return PROVED
    except (RuntimeError, ValueError) as e:  # TVM raises a ScheduleError (a RuntimeError)
        flagged = OOB_REPORT.search(str(e)) is not None
        log.debug("%s: %s", "out of bounds" if flagged else "bounds checker failed", str(e).strip().splitlines()[-1])
        return FLAGGED if flagged else FAILED


@contextlib.contextmanager
def _stderr_silenced():
    """File descriptor 2 to /dev/null for the duration: TVM's C++ logging writes there directly."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _refitted(trace, extents):
    """The trace before its postprocessing, with the k-th tile sampling (multi-level tiling samples
    one per loop of the anchor block, in its order) re-fitted to extents[k]; None if the trace
    samples another number of tilings."""
    import math

    from tvm.s_tir.schedule import Trace

    insts = []
    for inst in trace.insts:
        if inst.kind.name == "EnterPostproc":
            break
        insts.append(inst)
    tiles = [i for i in insts if i.kind.name == "SamplePerfectTile"]
    if len(tiles) != len(extents):
        return None
    decisions = {i: d for i, d in dict(trace.decisions).items() if any(i.same_as(j) for j in insts)}
    for inst, left in zip(tiles, extents):
        factors = [int(f) for f in decisions[inst]]
        fitted = [1] * len(factors)
        for k in range(len(factors) - 1, 0, -1):
            fitted[k] = math.gcd(factors[k], left)
            left //= fitted[k]
        decisions[inst] = [left, *fitted[1:]]
    return Trace(insts, decisions)


def _postprocs(mod, target):
    from tvm.s_tir import meta_schedule as ms

    ctx = ms.TuneContext(mod=mod, target=target, space_generator="post-order-apply", num_threads=1)
    return _compile_postprocs(ctx)


def _compile_postprocs(ctx) -> list:
    """MetaSchedule's postprocessors for the target, but DisallowDynamicLoop: tuning rejects a
    loop of symbolic extent because it times candidates at one shape; a compile keeps it (the
    code is valid at every extent: symbolic.py)."""
    return [p for p in ctx.space_generator.postprocs if type(p).__name__ != "DisallowDynamicLoop"]


def _from_rules(mod, target, count=1, first_seed=RULES_SEED):
    """Up to `count` distinct schedules from MetaSchedule's design space for `target`, each from
    its own seed from first_seed on, postprocessed (the first sample of each seed that the
    postprocessors accept)."""
    return [sch.mod["main"] for sch in _rules_samples(mod, target, count, first_seed)]


def _rules_samples(mod, target, count=1, first_seed=RULES_SEED):
    """_from_rules, as Schedules: a Schedule's trace, postprocessing included, replays the sample
    on another function (symbolic.py)."""
    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms

    found, seen = [], set()
    for seed in range(first_seed, first_seed + count + SPARE_SEEDS):
        ctx = ms.TuneContext(mod=mod, target=target, space_generator="post-order-apply",
                             search_strategy="replay-trace", rand_state=seed, num_threads=1)
        for sch in ctx.generate_design_space():
            try:
                if not all(p.apply(sch) for p in _compile_postprocs(ctx)) or not _in_bounds(sch.mod, mod):
                    continue
            except (RuntimeError, ValueError) as e:  # TVM raises InternalError (a RuntimeError) or ValueError
                # a sample the postprocessors cannot lower (measured: an index product past int32
                # in ShuffleNet's channel shuffle) is as invalid as one they reject
                log.debug("rules, seed %d: %s", seed, str(e).strip().splitlines()[-1])
                continue
            key = tvm_ffi.structural_hash(sch.mod)  # a function with few decisions gives the same sample again
            if key not in seen:
                seen.add(key)
                found.append(sch)
            break
        if len(found) == count:
            break
    return found


def _sizable(mod, calls) -> bool:
    """Whether `mod`, called `calls` times, has work enough (symbolic.work) to take HEAVY_US."""
    return symbolic.work(mod) * calls >= SIZABLE


def _calls(mod) -> collections.Counter:
    """How many places of the module's Relax functions call each PrimFunc, by name."""
    import tvm
    from tvm import relax

    counts = collections.Counter()

    def visit(expr):
        if isinstance(expr, relax.Call) and expr.args and isinstance(expr.args[0], tvm.ir.GlobalVar):
            counts[expr.args[0].name_hint] += 1

    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, visit)
    return counts


def _rules_if_heavy(mod, target, new, entry, calls):
    """`new` (from `similar` or the first sample of the rules), or the fastest of it and
    RULES_MEASURED more samples of the rules where its `calls` runs take HEAVY_US or longer here: a trace
    carried over from other shapes can be slower than a random sample of the rules (measured:
    ViT's attention scores, 197 x 64 x 197, from the records of a dense layer), and the first
    sample of the rules can be slower than another (a random tiling)."""
    if not measure.runs_here(target) or not _sizable(mod, calls):
        return new, entry
    us = entry.latency_us if entry.latency_us is not None else measure.latency_us(new, target)
    # seeds past those the first sample may have come from
    samples = _from_rules(mod, target, RULES_MEASURED, RULES_SEED + 1 + SPARE_SEEDS) if us * calls >= HEAVY_US else []
    best, best_us = measure.fastest(samples, target, to_beat_us=us) if samples else (None, None)
    measured = max(entry.measured, 1) + len(samples)
    if best_us is not None and best_us < us:
        return best, Entry("", "rules", best_us, measured=measured)
    return new, dataclasses.replace(entry, latency_us=us, measured=measured)


def _from_static(work, target, databases, calls):
    """(scheduled PrimFunc or None, Entry) for a function with symbolic extents (symbolic.py):
    the schedule chosen for it at symbolic.sizes() (a record of that workload, else the rules, timed
    as _rules_if_heavy times them), replayed with constant tiles on the symbolic function and
    checked against the unscheduled function at other sizes (symbolic.agrees); where no replay
    passes, or the target does not run here, a sample of the rules on the symbolic function
    itself (its symbolic loops whole, no partial tiles)."""
    static, values = symbolic.specialized(work)
    at = symbolic.label(values)

    def candidates():  # (trace, Entry), lazily: the rules are drawn and timed only where no record replays
        if static is None or not measure.runs_here(target):  # a replay is checked by running it
            return
        for db in databases:
            record = db.best(static, target)
            if record is not None:
                yield record.trace, Entry("", f"symbolic:database {db.path} at {at}", float(record.run_secs[0]) * 1e6)
                break
        samples = _rules_samples(static, target)
        entry = Entry("", f"symbolic:rules at {at}")
        if samples and _sizable(static, calls):
            us = measure.latency_us(samples[0].mod["main"], target)
            if us * calls >= HEAVY_US:
                samples += _rules_samples(static, target, RULES_MEASURED, RULES_SEED + 1 + SPARE_SEEDS)
            funcs = [sch.mod["main"] for sch in samples]
            best, us = measure.fastest(funcs, target) if len(funcs) > 1 else (funcs[0], us)
            samples = [samples[next(i for i, f in enumerate(funcs) if f.same_as(best))]]
            entry = dataclasses.replace(entry, latency_us=us, measured=len(funcs))
        yield from ((sch.trace, entry) for sch in samples[:1])

    for trace, entry in candidates():
        new = _replayed(work, symbolic.generalized(trace), target)
        if new is not None and symbolic.agrees(work, new, target, values):
            return new, entry
    new = next(iter(_from_rules(work, target)), None)
    return new, Entry("", "rules" if new is not None else "unscheduled: no valid schedule")


def _replayed(work, trace, target):
    """`work` scheduled by `trace`, its postprocessing included, or None where it does not apply
    or a bound is not kept (_in_bounds). The postprocessors are not run again on the symbolic
    function: their choices (which loops run in parallel, which are vectorized and unrolled)
    depend on loop extents, and on a loop of unknown extent they choose none (measured: a
    replayed dense layer on one thread, not vectorized); replayed, the choices made at the
    scheduled size hold at every size."""
    from tvm.s_tir import Schedule

    sch = Schedule(work)
    try:
        trace.apply_to_schedule(sch, remove_postproc=False)
        if _in_bounds(sch.mod, work):
            return sch.mod["main"]
    except (RuntimeError, ValueError) as e:  # TVM raises InternalError (a RuntimeError) or ValueError
        log.debug("replay on symbolic extents: %s", str(e).strip().splitlines()[-1])
    return None


def error_line(e: Exception, limit: int) -> str:
    """An exception as one line of a report entry or a warning: its type and its last line (TVM's
    errors end with the check that failed, after the C++ traceback)."""
    return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[-1]}"[:limit]


def _schedule_one(func, target, databases, calls):
    """(scheduled PrimFunc or None, Entry) for one function: its records, carried-over traces, or
    the rules (timed where the function is heavy)."""
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    work = _normalize_mod(func)  # the workload as MetaSchedule keys and schedules it
    kept_at = cache.path(work, target, databases)
    kept = cache.load(kept_at, work)
    if kept is not None:
        return kept[0], dataclasses.replace(Entry(**kept[1]), cached=True)
    if symbolic.variables(work["main"]):
        new, entry = _from_static(work, target, databases, calls)
        cache.store(kept_at, work, new, dataclasses.asdict(entry))
        return new, entry
    new, entry = _from_database(work, target, databases, calls)
    if new is None:
        new = next(iter(_from_rules(work, target)), None)
        entry = Entry("", "rules") if new is not None else Entry("", "unscheduled: no valid schedule")
    if new is not None and entry.source.split(":")[0] in ("similar", "rules"):
        new, entry = _rules_if_heavy(work, target, new, entry, calls)
    if not entry.source.startswith("database:"):
        cache.store(kept_at, work, new, dataclasses.asdict(entry))
    return new, entry


def schedule(mod, target, databases=None, report: list | None = None):
    """`mod` with every unscheduled PrimFunc scheduled; appends an Entry per function to `report`."""
    import tvm

    target = for_compile(target)
    databases = records.for_target(target) if databases is None else databases
    started, entries = time.monotonic(), []
    out, calls = {}, _calls(mod)
    for gv, func in mod.functions_items():
        if not isinstance(func, tvm.tirx.PrimFunc) or (func.attrs and func.attrs.get(SCHEDULED)):
            out[gv] = func
            continue
        try:
            new, entry = _schedule_one(func, target, databases, max(calls[gv.name_hint], 1))
        except Exception as e:  # noqa: BLE001  lookup, carry-over, rules, bounds check or timing
            # a function nothing here can schedule keeps TVM's default lowering, as tvm.compile
            # gives it, rather than failing a model that tvm.compile compiles
            why = error_line(e, 200)
            log.warning("%s keeps TVM's default lowering: scheduling it raised %s", gv.name_hint, why)
            new, entry = None, Entry("", f"unscheduled: {why}")
        if new is None:
            new = func
        else:
            # keep the caller's attributes (global symbol, op pattern), as MetaSchedule's own pass does
            new = tvm.tirx.PrimFunc(new.params, new.body, new.ret_type, func.attrs).with_attr(SCHEDULED, True)
        out[gv] = new
        entry = dataclasses.replace(entry, function=gv.name_hint)
        log.debug("%s: %s", entry.function, entry.source)
        entries.append(entry)
    if report is not None:
        report.extend(entries)
    _summarize(entries, time.monotonic() - started)
    return tvm.IRModule(out, attrs=mod.attrs)


def _summarize(entries, seconds):
    """One line for the user: where the schedules came from, and what timing them here cost."""
    sources = collections.Counter(e.source.split(":")[0] for e in entries)
    timed = [e.measured for e in entries if e.measured and not e.cached]
    cached = sum(e.cached for e in entries)
    log.info("%d functions scheduled in %.1f s: %s%s%s", len(entries), seconds,
             ", ".join(f"{n} {s}" for s, n in sources.most_common()),
             f"; {len(timed)} timed here ({sum(timed)} candidates)" if timed else "",
             f"; {cached} as an earlier compile chose them (compile cache)" if cached else "")
