"""The fastest of a few schedules of one function, timed here at compile time.

A trace carried over from another shape (schedules.py, `similar:`) may apply and still be slow:
measured on DenseNet-121's 3x3 convolution at 56x56 (128 to 32 channels), the first of the
nearest records that applied ran in 18.2 ms, the fourth in 1.4 ms. Which one fits cannot be
read off the shapes, so each candidate is built and run on random inputs, a few milliseconds
each, and the fastest is kept. Only where the code runs on this CPU (runs_here): a target for
another machine keeps the first candidate, since running its code here could die of SIGILL.

A candidate is timed as the compiled model runs it (as_run): a weight its schedule lays out anew
arrives in that layout, since the pipeline does the re-layout once at compile time.
"""

from __future__ import annotations

import logging
import math

from .. import host
from .. import target as targets
from . import fast_math

log = logging.getLogger("tvm_wheels.measure")

REPEAT = 3  # runs per candidate; the minimum counts (the first run also pages the buffers in)
GIVE_UP = 2  # a candidate whose first run is this many times the fastest so far is not run again


def runs_here(target) -> bool:
    """Whether code compiled for `target` (tvm.target.Target) runs on this CPU: LLVM for this
    architecture, with this CPU's model, an x86-64 level it has, or no mcpu; no added features."""
    import tvm

    spec = dict(target.export())
    if spec.get("kind") != "llvm" or targets.arch(spec) != host.machine():
        return False
    if any(str(a).startswith("+") for a in spec.get("mattr") or []):
        return False
    mcpu = str(spec.get("mcpu") or "")
    if mcpu in ("", "native", tvm.target.codegen.llvm_get_system_cpu()) or (mcpu, host.machine()) == ("x86-64", "x86_64"):
        return True
    # a level runs where numpy's CPUID table says this CPU has its group (host.x86_64_level's source)
    return mcpu in host.X86_64_LEVELS and not host.missing_features([host.X86_64_LEVELS[mcpu]])


def as_run(func):
    """`func` (a scheduled PrimFunc) as an IRModule the way the compiled model runs it: the blocks
    that re-lay a weight out (meta_schedule.layout_rewrite_preproc) removed and the weight taken
    in the new layout, because the pipeline moves them out and runs them once on the constant
    weights (SplitLayoutRewritePreproc, FoldWeightPrepack); fast math as compile applies it.
    Timed with the re-layout, a candidate that re-lays a weight out pays for it on every run,
    and loses to one that does not, against what the model runs. MetaSchedule's builder times
    tuning candidates the same way (RemoveWeightLayoutRewriteBlock), so a record's latency and a
    candidate's timed here compare. Weights given as inputs (keep_params_in_input=True) are
    re-laid out on every call; their time is left out, as in tuning."""
    import tvm
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    mod = tvm.IRModule({"main": func.with_attr("global_symbol", "main")})
    return fast_math.fast_math()(RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod))


def latency_us(func, target, give_up_us: float = math.inf) -> float:
    """`func` (a scheduled PrimFunc) built alone for `target` and run on random inputs: its best
    time in microseconds, or inf where it does not build or run. Where its first run takes
    longer than give_up_us, that run's time: a random sample of the rules can run 20 times slower
    than the best (measured: 330 ms for a dense layer that another sample runs in 17 ms)."""
    import numpy as np
    import tvm

    try:
        mod = as_run(func)
        lib = tvm.compile(mod, target=target).jit()
        rng = np.random.default_rng(0)
        args = []
        for buf in mod["main"].params:
            shape, dtype = [int(d) for d in buf.shape], str(buf.dtype)
            # indices (integer inputs) stay in range at zero; floats get values that exercise the code
            data = rng.standard_normal(shape).astype(dtype) if "float" in dtype else np.zeros(shape, dtype)
            args.append(tvm.runtime.tensor(data))
        first = lib.time_evaluator("main", tvm.cpu(), number=1, repeat=1)(*args).mean * 1e6
        if first > give_up_us:
            return first
        timer = lib.time_evaluator("main", tvm.cpu(), number=1, repeat=REPEAT)
        return min(first, min(timer(*args).results) * 1e6)
    except (RuntimeError, ValueError, TypeError) as e:  # TVM raises InternalError (a RuntimeError)
        log.debug("candidate not measured: %s", str(e).strip().splitlines()[-1])
        return math.inf


def fastest(candidates: list, target, to_beat_us: float = math.inf):
    """(PrimFunc, microseconds) of the candidate that runs fastest; the first, unmeasured (None),
    where none runs or the target is not this CPU's. to_beat_us: the time of a schedule the
    candidates compete with, so that one far slower is not run again."""
    if not runs_here(target):
        return candidates[0], None
    times = []
    for f in candidates:
        times.append(latency_us(f, target, GIVE_UP * min([to_beat_us, *times])))
    best = min(range(len(candidates)), key=times.__getitem__)
    log.debug("measured %s us, kept #%d", [round(t, 1) for t in times], best)
    return candidates[best], (None if math.isinf(times[best]) else times[best])
