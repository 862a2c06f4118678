"""tvm_wheels.compile: TVM's CPU pipeline with every function scheduled.

TVM 0.26's default CPU pipeline legalizes every op to TIR and schedules none of it. This one
rewrites the graph for inference (rewrites.py), converts convolutions to NHWC, and after
legalization and fusion (front_passes) gives every PrimFunc a schedule (schedules.py: tuning
records, carried-over records, MetaSchedule's rules). A schedule may lay a constant weight out
in the order its loops read it; that reordering is done once, at compile time.

    import tvm_wheels
    report = []
    ex = tvm_wheels.compile(mod, report=report)   # target: the variant's default
"""

from __future__ import annotations

import dataclasses
import logging

from . import rewrites, schedules
from .fast_math import fast_math as fast_math_pass
from ..target import for_compile

log = logging.getLogger("tvm_wheels.pipeline")

# Convolutions in NHWC: the output channels are the innermost axis, so a schedule vectorizes
# them 16 wide on AVX-512 even where the image is 7x7 or read with stride 2. Measured here with
# 32 trials each (convs of ResNet-50): NCHW 28-62 GFLOP/s, NHWC with prepacked weights 95-164.
LAYOUTS = {"relax.nn.conv2d": ["NHWC", "OHWI"]}
# the names relax.transform.SplitLayoutRewritePreproc gives the two halves of a function
PREPACKED, PREPACK = "_prepacked", "_weight_prepack"


def _mark_constant_weights(mod):
    """relax.transform.AttachAttrLayoutFreeBuffers for constants only, keeping each function's
    name: that pass also marks weights passed as parameters, and renames every function it touches."""
    import tvm
    from tvm import relax

    call_tir = tvm.ir.Op.get("relax.call_tir")
    found = {}

    def visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(call_tir) and isinstance(expr.args[1], relax.Tuple):
            consts = tuple(i for i, a in enumerate(expr.args[1].fields) if isinstance(a, relax.Constant))
            found.setdefault(expr.args[0], set()).add(consts)

    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, visit)
    mod = mod.clone()
    for gv, uses in found.items():
        if len(uses) == 1 and next(iter(uses)):  # the same arguments are constants at every call
            mod[gv] = mod[gv].with_attr("layout_free_buffers", list(next(iter(uses))))
    return mod


def _scalar_calls_unfused(passes: list) -> list:
    """TVM's legalize passes with, after AnnotateTIROpPattern, the functions that take a scalar
    (a symbolic dimension, as a model with dynamic axes passes one to a subtract) marked opaque,
    so that FuseOps leaves their calls alone. FuseOps gives a fused function such a scalar as a
    parameter of its own, the output's shape is then one the caller cannot state, and
    CallTIRRewrite stops ("call_tir expects all TensorType has shape": LLaMA's position ids
    with a symbolic sequence). TVM's default pipeline does not fuse, and so does not meet it."""
    import tvm

    opaque = 8  # TVM's kOpaque: FuseOps fuses nothing into or out of it

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.ScalarCallsUnfused")
    def _pass(mod, _ctx):
        mod = mod.clone()
        for gv, func in mod.functions_items():
            if isinstance(func, tvm.tirx.PrimFunc) and any(getattr(p, "shape", None) is None for p in func.params):
                mod[gv] = func.with_attr("op_pattern", opaque)
        return mod

    at = next(i for i, p in enumerate(passes) if p.info.name == "AnnotateTIROpPattern") + 1
    return passes[:at] + [_pass] + passes[at:]


def front_passes(target) -> list:
    """The CPU pipeline up to fusion, the stage at which tasks are extracted and schedules applied.

    TVM's cpu_generic passes. When the weights are constants (from_onnx(...,
    keep_params_in_input=False), as `tvm-wheels tune` reads models), the graph gets the
    rewrites.for_inference rewrites, convolutions are converted to LAYOUTS, dense layers get
    rewrites.rows_padded and, after fusion,
    the weights are marked layout-free: a schedule (tuned, carried over or from the rules) may
    then store a weight in the order its loops read it, and
    relax_pipeline folds both reorderings into the constants at compile time. Weights passed
    as parameters are left as they are: reordering them would cost time on every call.
    """
    import tvm
    from tvm import relax
    from tvm.relax.backend.cpu_generic import pipeline as cpu

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.FrontPasses")
    def _front(mod, _ctx):
        passes = cpu.library_dispatch_passes(target) + _scalar_calls_unfused(cpu.legalize_passes(target))
        params = any(isinstance(f, relax.Function) and f.attrs and "num_input" in f.attrs
                     and len(f.params) > int(f.attrs["num_input"]) for f in mod.functions.values())
        if params:
            return tvm.transform.Sequential(passes)(mod)
        mod = rewrites.for_inference()(mod)
        try:
            converted = relax.transform.ConvertLayout(LAYOUTS)(mod)
        except (RuntimeError, ValueError) as e:  # tvm.error.InternalError is a RuntimeError
            # A graph TVM's layout conversion cannot handle still compiles, as TVM's own
            # pipeline does: convolutions stay NCHW (slower; tuned records do not match).
            log.warning("convolutions stay NCHW: TVM's ConvertLayout failed (%s)", str(e).strip().splitlines()[-1])
            converted = mod
        return _mark_constant_weights(tvm.transform.Sequential(passes)(rewrites.rows_padded()(converted)))

    return [_front]


def legalize(mod, target):
    """`mod` through front_passes: the functions that get scheduled (and tuned)."""
    import tvm

    with target:
        return tvm.transform.Sequential(front_passes(target))(mod)


def from_onnx(path):
    import onnx

    return from_onnx_model(onnx.load(str(path)))


def from_onnx_model(model):
    """Relax module with the weights as constants (they fold into the compiled code)."""
    from tvm.relax.frontend.onnx import from_onnx as convert

    return convert(model, keep_params_in_input=False)


def fold_weight_prepack(target):
    """A pass that runs each weight reordering whose inputs are constants once, at compile time.

    relax.transform.SplitLayoutRewritePreproc moves a schedule's weight reorderings into
    *_weight_prepack functions; relax.transform.FoldConstant leaves those in place, because it
    folds only calls with one output and they return one tensor per weight (a tuple, or the
    tensor itself when the function reorders one weight). They run here: for a target of another
    machine (an Orin's CPU), compiled for this one, since a reordering is the same on every CPU."""
    import tvm
    from tvm import relax
    from tvm.relax.expr_functor import PyExprMutator, mutator

    from . import measure

    if not measure.runs_here(target):
        target = tvm.target.Target("llvm")

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


def split_layout_rewrites():
    """relax.transform.SplitLayoutRewritePreproc on the functions it has something to split in:
    those where a schedule laid a weight out anew (a block annotated
    meta_schedule.layout_rewrite_preproc). TVM's pass visits every PrimFunc and stops at one whose
    root holds no block at all, as TOPI's scans and sorts written with the IR builder are (CumSum:
    the position ids of RoBERTa's family), though there is nothing to split in it."""
    import tvm
    from tvm import relax

    def splits(func) -> bool:
        found = []

        def visit(node):
            if isinstance(node, tvm.tirx.SBlock) and "meta_schedule.layout_rewrite_preproc" in node.annotations:
                found.append(node)

        tvm.tirx.stmt_functor.post_order_visit(func.body, visit)
        return bool(found)

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.SplitLayoutRewrites")
    def _pass(mod, _ctx):
        kept = {gv: f for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc) and not splits(f)}
        if not kept:
            return relax.transform.SplitLayoutRewritePreproc()(mod)
        split = relax.transform.SplitLayoutRewritePreproc()(
            tvm.IRModule({gv: f for gv, f in mod.functions_items() if gv not in kept}, attrs=mod.attrs,
                         global_infos=mod.global_infos))
        for gv, func in kept.items():
            split[gv] = func
        return split

    return _pass


def relax_pipeline(target, databases=None, report: list | None = None, fast_math: bool = True):
    """TVM's CPU pipeline (relax/backend/cpu_generic) with `schedule` after fusion (the stage of
    front_passes), then the weight reorderings that schedules chose split out and folded
    into the constants, so they cost nothing per call. fast_math: exp, sigmoid, tanh, erf and
    powers as in fast_math.py; False: as TVM lowers them (the C library's, per element)."""
    import tvm
    from tvm import relax
    from tvm.relax.backend.cpu_generic import pipeline as cpu

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.Schedule")
    def _schedule(mod, _ctx):
        return schedules.schedule(mod, target, databases, report)

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

    passes = (front_passes(target)
              + [_schedule] + ([fast_math_pass()] if fast_math else [])
              + [split_layout_rewrites(), fold_weight_prepack(target),
                 relax.transform.CanonicalizeBindings(), relax.transform.DeadCodeElimination(), _note_prepacked]
              + cpu.dataflow_lower_passes(target) + cpu.finalize_passes(target))

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.Pipeline")
    def _pipeline(mod, _ctx):
        with target:
            return tvm.transform.Sequential(passes)(mod)

    return _pipeline


def compile(mod, target=None, *, databases=None, report: list | None = None, fast_math: bool = True,  # noqa: A001
            **kwargs):
    """tvm.compile with this project's pipeline. target: the variant's default (tvm_wheels.target.host())."""
    import tvm

    target = for_compile(target)
    entries = []
    try:
        ex = tvm.compile(mod, target=target, relax_pipeline=relax_pipeline(target, databases, entries, fast_math),
                         **kwargs)
    except Exception as e:  # noqa: BLE001
        # Never fail where tvm.compile works: what this pipeline cannot handle (a graph rewrite or
        # a TVM pass that stops on a shape or an op it has not met) compiles with TVM's own.
        why = schedules.error_line(e, 300)
        log.warning("this project's pipeline failed (%s); compiling with TVM's default pipeline, "
                    "no function scheduled", why)
        ex = tvm.compile(mod, target=target, **kwargs)
        entries = [schedules.Entry("*", f"unscheduled: TVM's default pipeline ({why})")]
    if report is not None:
        report.extend(entries)
    return ex
