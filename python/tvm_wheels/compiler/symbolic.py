"""Schedules for functions with symbolic extents (a sequence length or a batch left free by the
exporter), valid at every value of them, from one compile.

MetaSchedule samples tile sizes only for loops of known extent: on a symbolic loop its rules
leave the loop whole (one row at a time, no register blocking of it), and its
DisallowDynamicLoop postprocessor then rejects the sample, because tuning times candidates at
one shape. Here a function is scheduled with each symbolic extent set to a size (sizes(): the
batch at 1, the sequence where the function does a set amount of work), where samples can be
drawn and timed; the chosen sample's trace, its postprocessing included (parallel, vectorize,
unroll), is then replayed on the symbolic function with every tile size a constant: a split of a loop of unknown extent by known inner
factors keeps the inner tiles and guards the outermost (ceil-division, a predicate for the
last partial tile). The code is correct at every extent and tiled as at that size.
"""

from __future__ import annotations

# The sizes a function with symbolic extents is scheduled at: every symbolic extent but the last
# (a batch, which repeats the same work) at 1; the last (a sequence: the rows tiles must cover)
# at the power of two where the function does about WORK (FLOPs plus elements it reads and
# writes: enough rows for the rules to tile them as a matrix product's), at most AT, so that
# short sequences waste little on partial tiles and the candidates are quick to time.
WORK = 1 << 26
AT = 128


def variables(func) -> list:
    """The symbolic variables of a PrimFunc's buffer shapes, in order of appearance."""
    import tvm

    found = []
    for param in func.params:
        for dim in _shape(param):
            for var in tvm.tirx.analysis.undefined_vars(dim, []):
                if not any(var.same_as(v) for v in found):
                    found.append(var)
    return found


def _shape(param) -> list:
    """A parameter's buffer shape; none for a scalar parameter (TVM 0.26's buffers are Vars)."""
    shape = getattr(param, "shape", None)
    return list(shape) if shape is not None else []


def sizes(mod) -> dict:
    """{variable: extent} to schedule mod's "main" at (WORK, AT); empty where it has none."""
    import math

    names = variables(mod["main"])
    if not names:
        return {}
    at_one = _bound(mod, {v: 1 for v in names})
    if at_one is None:
        return {}
    last = int(min(max(2 ** round(math.log2(WORK / max(work(at_one), 1))), 1), AT))
    return {**{v: 1 for v in names[:-1]}, names[-1]: last}


def work(mod) -> float:
    """The work of a static function: its FLOPs (none for a copy) plus the elements of its
    buffers, read and written. It sets the size a symbolic function is scheduled at (sizes), and
    whether timing a function's candidates can pay (schedules._sizable)."""
    import math

    from tvm.s_tir.analysis import estimate_tir_flops

    return estimate_tir_flops(mod) + sum(math.prod(int(d) for d in _shape(p)) for p in mod["main"].params)


def specialized(mod):
    """(mod with each symbolic extent set as sizes() says, those sizes), or (None, {}) where TVM
    cannot bind them (an extent that is an expression of several variables)."""
    values = sizes(mod)
    static = _bound(mod, values) if values else None
    return (static, values) if static is not None else (None, {})


def label(values: dict) -> str:
    """Sizes as the report gives them: "batch=1 seq=64"."""
    return " ".join(f"{v.name}={n}" for v, n in values.items())


def _bound(mod, values):
    """mod with its symbolic extents set to values ({Var: int}), or None where they do not bind."""
    import tvm

    func = mod["main"]
    values = {v: tvm.tirx.IntImm(v.ty.dtype, n) for v, n in values.items()}
    analyzer = tvm.arith.Analyzer()
    binds = {}
    for param in func.params:
        dims = _shape(param)
        # a buffer is bound where each of its symbolic dimensions is a variable itself (TVM's
        # specialize unifies those only); a dimension such as batch * 4 follows from the others
        if not any(tvm.tirx.analysis.undefined_vars(d, []) for d in dims) or not all(
                isinstance(d, (tvm.tirx.IntImm, tvm.tirx.Var)) for d in dims):
            continue
        shape = [analyzer.simplify(tvm.tirx.stmt_functor.substitute(d, values)) for d in dims]
        binds[param] = tvm.tirx.decl_buffer(shape, param.dtype, param.name)
    try:
        static = func.specialize(binds)
    except (RuntimeError, TypeError, ValueError):  # TVM raises its checks as any of these
        return None
    if variables(static):
        return None
    return tvm.IRModule({"main": static})


def generalized(trace):
    """The trace, its postprocessing included, with each sampled tiling made constant: a
    SamplePerfectTile's decision, its outermost factor left to the loop's extent (None), put
    into the splits that used it. Replayed on a loop of symbolic extent, such a split keeps the
    inner tiles; on a loop of the extent the decision was drawn for, it is the same split."""
    import tvm
    from tvm.s_tir.schedule import Instruction, Trace

    decisions = dict(trace.decisions)
    consts, insts, kept = [], [], {}

    def const(rv):
        for old, new in consts:
            if old.same_as(rv):
                return True, new
        return False, None

    for inst in trace.insts:
        if inst.kind.name == "SamplePerfectTile":
            factors = [int(f) for f in decisions[inst]]
            consts += [(rv, None if k == 0 else tvm.tirx.IntImm("int64", f)) for k, (rv, f) in
                       enumerate(zip(inst.outputs, factors))]
            continue
        inputs = []
        for i in inst.inputs:
            found, value = const(i) if isinstance(i, tvm.tirx.Var) else (False, None)
            inputs.append(value if found else i)
        new = Instruction(inst.kind, inputs, inst.attrs, inst.outputs)
        insts.append(new)
        if inst in decisions:
            kept[new] = decisions[inst]
    return Trace(insts, kept)


def agrees(work, scheduled, target, at: dict) -> bool:
    """Whether `scheduled` (work's function, replayed on its symbolic extents) computes what the
    unscheduled function computes, on seeded inputs, where each symbolic extent is one short of
    `at`'s (at least 2: a batch scheduled at 1 is checked at 2) and at 1: sizes with a partial
    last tile, the case a replay can get wrong (TVM's rfactor of a reduction split with a
    predicate drops the predicate, and reads past the row).
    Integer inputs are 0 or 1, valid indices of any gather."""
    import numpy as np
    import tvm

    funcs = {}
    for k, values in enumerate(({v: max(n - 1, 2) for v, n in at.items()}, {v: 1 for v in at})):
        ref, new = _bound(work, values), _bound(tvm.IRModule({"main": scheduled}), values)
        if ref is None or new is None:
            return False
        funcs.update({f"ref{k}": ref["main"], f"new{k}": new["main"]})
    # one module, one compile: a compile costs more than all the runs
    lib = tvm.compile(tvm.IRModule({n: f.with_attr("global_symbol", n) for n, f in funcs.items()}), target=target)
    for k in range(len(funcs) // 2):
        outs = []
        for name in (f"ref{k}", f"new{k}"):
            args = []
            for j, param in enumerate(funcs[name].params):
                shape, dtype = [int(d) for d in param.shape], str(param.dtype)
                gen = np.random.default_rng(j)  # the same inputs for both
                data = gen.standard_normal(shape) if "float" in dtype else gen.integers(0, 2, shape)
                args.append(tvm.runtime.tensor(data.astype(dtype)))
            lib[name](*args)
            outs.append([a.numpy() for a in args])
        if not all(np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True) for a, b in zip(*outs)):
            return False
    return True
