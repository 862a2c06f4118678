"""The compile path's own checks (compiler/schedules.py, compiler/measure.py) check what they
claim: the bounds check turns down a candidate that reads past its buffer even where TVM's
checker fails on the function before scheduling, and a candidate is timed as the compiled
model runs it, its weight already in the layout its schedule chose."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.wheel

BOUNDS = """
import json, tvm
from tvm import te
import tvm.s_tir.analysis as analysis
from tvm_wheels.compiler import schedules

def func(body):
    A = te.placeholder((16,), name="A")
    return tvm.IRModule({"main": te.create_prim_func([A, te.compute((16,), lambda i: body(A, i), name="B")])})

shifted = func(lambda A, i: A[i + 1])   # reads A[16]: out of bounds
doubled = func(lambda A, i: A[i] * 2.0)
result = {"checked": [schedules._bounds(doubled), schedules._bounds(shifted)]}

# TVM's checker failing on the function before scheduling (injected: an analyzer error, not its
# report of an access out of bounds) does not switch the check off for the candidates
real = analysis.OOBChecker
original = func(lambda A, i: A[i])
def checker():
    def check(mod):
        if mod.same_as(original):
            raise RuntimeError("InternalError: injected: the analyzer could not bound an index")
        return real()(mod)
    return check
analysis.OOBChecker = checker
result["checker_failed_on_original"] = {"shifted": schedules._in_bounds(shifted, original),
                                        "doubled": schedules._in_bounds(doubled, original)}
# a candidate it fails on is not taken
result["checker_failed_on_candidate"] = schedules._in_bounds(original, doubled)
analysis.OOBChecker = real
# where the checker reports the function before scheduling too, its bounds are loose there and a
# reported candidate is taken (ShuffleNet's channel shuffles)
result["original_flagged"] = schedules._in_bounds(shifted, func(lambda A, i: A[i + 1]))
print(json.dumps(result))
"""


def test_the_bounds_check_stays_on_when_tvms_checker_fails_on_the_unscheduled_function(cpu_venv):
    got = cpu_venv.json(BOUNDS)
    assert got["checked"] == ["proved", "flagged"], got
    assert got["checker_failed_on_original"] == {"shifted": False, "doubled": True}, got
    assert got["checker_failed_on_candidate"] is False, got
    assert got["original_flagged"] is True, got


# A dense layer whose weight is layout-free (a constant, as from_onnx(keep_params_in_input=False)
# gives): MetaSchedule's rules re-lay the weight out inside the function; the pipeline moves that
# out and does it once at compile time, so the timed function takes the weight re-laid out.
AS_RUN = """
import json, tvm
from tvm import te
from tvm_wheels.compiler import measure, schedules
from tvm_wheels.target import for_compile
A = te.placeholder((128, 256), name="A"); W = te.placeholder((256, 256), name="W")
k = te.reduce_axis((0, 256), "k")
C = te.compute((128, 256), lambda i, j: te.sum(A[i, k] * W[k, j], axis=k), name="C")
mod = tvm.IRModule({"main": te.create_prim_func([A, W, C]).with_attr("layout_free_buffers", [1])})
target = for_compile(None)
(sample,) = schedules._from_rules(mod, target, 1)
relaid = []
def visit(node):
    if isinstance(node, tvm.tirx.SBlock) and "meta_schedule.layout_rewrite_preproc" in node.annotations:
        relaid.append([[int(d) for d in w.buffer.shape] for w in node.writes])
tvm.tirx.stmt_functor.post_order_visit(sample.body, visit)
timed = measure.as_run(sample)["main"]
print(json.dumps({"sample": [[int(d) for d in p.shape] for p in sample.params], "relaid": relaid,
                  "timed": [[int(d) for d in p.shape] for p in timed.params],
                  "latency_us": measure.latency_us(sample, target)}))
"""


def test_a_candidate_is_timed_with_its_weight_in_the_layout_the_compiled_model_has(cpu_venv):
    got = cpu_venv.json(AS_RUN)
    assert got["sample"] == [[128, 256], [256, 256], [128, 256]], got
    (new_layout,) = got["relaid"][0]  # the rules re-lay the weight out in the function
    assert got["timed"] == [[128, 256], new_layout, [128, 256]], got  # timed: it comes re-laid out
    assert 0 < got["latency_us"] < float("inf"), got
