"""Compile with schedules: tuning records first, MetaSchedule's rules for the rest.

TVM 0.26's default CPU pipeline legalizes every op to TIR and schedules none of it. This
pipeline converts convolutions to NHWC and inserts one step after legalization and fusion
(tuning.front_passes): each PrimFunc gets the best record of the tuning databases (the
user's, from `tvm-wheels tune`, then the one shipped in the wheel for its variant), and a
function no database knows gets one schedule drawn, with a fixed seed, from MetaSchedule's
CPU rules (tiling, parallel, vectorize, unroll). No op stays unscheduled. A schedule may lay a
constant weight out in the order its loops read it; that reordering is done once, at compile
time. `report` says which source scheduled each function and whether its weights were
prepacked.

    import tvm_wheels
    report = []
    ex = tvm_wheels.compile(mod, report=report)   # target: the variant's default
"""

from __future__ import annotations

import dataclasses
import logging

from . import tuning

log = logging.getLogger("tvm_wheels.schedules")

RULES_SEED = 0
SCHEDULED = "tirx.is_scheduled"
# the names relax.transform.SplitLayoutRewritePreproc gives the two halves of a function
PREPACKED, PREPACK = "_prepacked", "_weight_prepack"


@dataclasses.dataclass(frozen=True)
class Entry:
    function: str
    source: str  # "database:<path>", "rules" or "unscheduled: <why>"
    latency_us: float | None = None  # the record's measured latency, for database entries
    prepacked: bool = False  # its weights were re-laid out for the schedule at compile time


def _from_database(mod, target, databases):
    """(scheduled PrimFunc, Entry) from the first database with a record for this target."""
    from tvm.s_tir import Schedule

    for db in databases:
        record = db.best(mod, target)
        if record is None:
            continue
        sch = Schedule(record.workload.mod)
        record.trace.apply_to_schedule(sch, remove_postproc=False)
        return sch.mod["main"], Entry("", f"database:{db.path}", float(record.run_secs[0]) * 1e6)
    return None, None


def _from_rules(mod, target):
    """One schedule from MetaSchedule's design space for `target`, postprocessed; None if no
    seed in a few gives a valid one."""
    from tvm.s_tir import meta_schedule as ms

    for seed in range(RULES_SEED, RULES_SEED + 4):
        ctx = ms.TuneContext(mod=mod, target=target, space_generator="post-order-apply",
                             search_strategy="replay-trace", rand_state=seed, num_threads=1)
        for sch in ctx.generate_design_space():
            try:
                if all(p.apply(sch) for p in ctx.space_generator.postprocs):
                    return sch.mod["main"]
            except (RuntimeError, ValueError) as e:  # TVM raises InternalError (a RuntimeError) or ValueError
                # a sample the postprocessors cannot lower (measured: an index product past int32
                # in ShuffleNet's channel shuffle) is as invalid as one they reject
                log.debug("rules, seed %d: %s", seed, str(e).strip().splitlines()[-1])
    return None


def schedule(mod, target, databases=None, report: list | None = None):
    """`mod` with every unscheduled PrimFunc scheduled; appends an Entry per function to `report`."""
    import tvm
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    target = tuning.tuning_target(target)
    databases = tuning.databases(target) if databases is None else databases
    out = {}
    for gv, func in mod.functions_items():
        if not isinstance(func, tvm.tirx.PrimFunc) or (func.attrs and func.attrs.get(SCHEDULED)):
            out[gv] = func
            continue
        work = _normalize_mod(func)  # the workload as MetaSchedule keys and schedules it
        new, entry = _from_database(work, target, databases)
        if new is None:
            new = _from_rules(work, target)
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


def fold_weight_prepack(target):
    """A pass that runs each weight reordering whose inputs are constants once, at compile time.

    relax.transform.SplitLayoutRewritePreproc moves a schedule's weight reorderings into
    *_weight_prepack functions; relax.transform.FoldConstant leaves those in place, because it
    folds only calls with one output and they return one tensor per weight (a tuple, or the
    tensor itself when the function reorders one weight)."""
    import tvm
    from tvm import relax
    from tvm.relax.expr_functor import PyExprMutator, mutator

    call_tir = tvm.ir.Op.get("relax.call_tir")

    @mutator
    class _Fold(PyExprMutator):
        def __init__(self, mod):
            super().__init__(mod)
            self.mod, self.built = mod, {}

        def visit_call_(self, call):
            if not (call.op.same_as(call_tir) and call.args[0].name_hint.endswith(PREPACK)
                    and all(isinstance(a, relax.Constant) for a in call.args[1].fields)):
                return call
            gv = call.args[0]
            if gv not in self.built:
                func = self.mod[gv].with_attr("global_symbol", "main")
                self.built[gv] = tvm.compile(tvm.IRModule({"main": func}), target=target)
            # one reordered weight: the call returns a tensor; several: a tuple of them
            single = not isinstance(call.ty, relax.TupleType)
            types = [call.ty] if single else call.ty.fields
            outs = [tvm.runtime.empty([int(d) for d in t.shape.values], str(t.dtype)) for t in types]
            self.built[gv]["main"](*(a.data for a in call.args[1].fields), *outs)
            consts = [relax.Constant(o) for o in outs]
            return consts[0] if single else relax.Tuple(consts)

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.FoldWeightPrepack")
    def _pass(mod, _ctx):
        folder = _Fold(mod)
        for gv, func in mod.functions_items():
            if isinstance(func, relax.Function):
                folder.builder_.update_func(gv, folder.visit_expr(func))
        return folder.builder_.get()

    return _pass


def pipeline(target, databases=None, report: list | None = None):
    """TVM's CPU pipeline (relax/backend/cpu_generic) with `schedule` after fusion (the stage of
    tuning.front_passes), then the weight reorderings that schedules chose split out and folded
    into the constants, so they cost nothing per call."""
    import tvm
    from tvm import relax
    from tvm.relax.backend.cpu_generic import pipeline as cpu

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.Schedule")
    def _schedule(mod, _ctx):
        return schedule(mod, target, databases, report)

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.NotePrepacked")
    def _note_prepacked(mod, _ctx):
        names = {gv.name_hint for gv in mod.get_global_vars()}
        if report is not None:
            report[:] = [dataclasses.replace(e, prepacked=f"{e.function}{PREPACKED}" in names) for e in report]
        left = sorted(n for n in names if n.endswith(PREPACK))
        if left:  # weights that are parameters, not constants, are re-laid out on every call
            log.warning("weights re-laid out on every call by %s: pass the weights as constants "
                        "(from_onnx(..., keep_params_in_input=False))", ", ".join(left))
        return mod

    passes = (tuning.front_passes(target)
              + [_schedule, relax.transform.SplitLayoutRewritePreproc(), fold_weight_prepack(target),
                 relax.transform.CanonicalizeBindings(), relax.transform.DeadCodeElimination(), _note_prepacked]
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
