"""tvm_wheels.compile computes exp, sigmoid, tanh, erf and x ** 3 of float32 as arithmetic the CPU
vectorizes (tvm_wheels.compiler.fast_math), not one C library call per element: the values match numpy's
float64 ones to float32 precision across the range, at its ends and near 0, and the compiled code
calls none of expf, erff, powf or LLVM's exp/pow (which x86 code generation turns into them),
unless compiled with fast_math=False.
Speed is bench/'s business (zoo: EfficientNet-B0's SiLU, GPT-2's GELU)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

pytestmark = pytest.mark.wheel

OPS = {"exp": "Exp", "sigmoid": "Sigmoid", "tanh": "Tanh", "erf": "Erf", "cube": "Pow"}
SLOW = ("llvm.exp", "llvm.pow", "expf", "erff", "powf", "tanhf")

RUN = """
import json, os, re, sys, numpy as np, onnx, tvm, tvm_wheels
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
d = os.environ["MODEL_DIR"]
mod = from_onnx(onnx.load(os.path.join(d, "model.onnx")), keep_params_in_input=False)
declared = {}
for fast in (True, False):
    ex = tvm_wheels.compile(mod, fast_math=fast)
    if fast:
        outs = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(np.load(os.path.join(d, "input.npy"))))
        np.savez(os.path.join(d, "out.npz"), *[o.numpy() for o in outs])
    (llvm,) = [m for m in ex.mod.imports if m.kind == "llvm"]
    declared[str(fast)] = sorted(set(re.findall(r"declare [^@]*@([\\w.]+)", llvm.inspect_source("ll"))))
print(json.dumps(declared))
"""


def _model(n):
    nodes = [helper.make_node(op, ["x", "three"] if name == "cube" else ["x"], [name]) for name, op in OPS.items()]
    graph = helper.make_graph(
        nodes, "fast_math", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [n]) for name in OPS],
        initializer=[numpy_helper.from_array(np.array(3.0, np.float32), "three")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _input():
    ends = [0.0, 1e-6, -1e-6, 0.05, -0.099, 0.1, 9.5, -9.5, 80.0, 88.7, 88.8, -86.9, -90.0, 100.0, -100.0, np.nan]
    spread = np.random.default_rng(0).standard_normal(4096 - len(ends)) * 4
    return np.concatenate([ends, spread]).astype(np.float32)


def test_transcendentals_are_polynomials_as_accurate_as_the_c_library(cpu_venv, tmp_path):
    x = _input()
    (tmp_path / "model.onnx").write_bytes(_model(x.size).SerializeToString())
    np.save(tmp_path / "input.npy", x)
    declared = cpu_venv.json(RUN, env={"MODEL_DIR": str(tmp_path)})
    got = dict(zip(OPS, np.load(tmp_path / "out.npz").values()))

    assert not [f for f in declared["True"] if f.startswith(SLOW)], declared
    # compile(..., fast_math=False): TVM's own lowering, a call per element
    assert [f for f in declared["False"] if f.startswith(SLOW)], declared
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore"):
        expected = {"exp": np.exp(x64).astype(np.float32), "sigmoid": 1 / (1 + np.exp(-x64)), "tanh": np.tanh(x64),
                    "erf": np.vectorize(math.erf)(x64), "cube": x64 ** 3}
    normal = (x64 > -86.9) & np.isfinite(expected["exp"])  # below -87 exp is 0 (documented), not subnormal
    rel = np.abs(got["exp"][normal] - expected["exp"][normal]) / expected["exp"][normal]
    assert rel.max() < 2e-7, rel.max()
    assert np.all(got["exp"][np.isinf(expected["exp"])] == np.inf) and np.all(got["exp"][x64 < -87.4] < 2e-38)
    for name in ("sigmoid", "tanh", "erf"):  # NaN stays NaN: assert_allclose compares NaN positions too
        np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=5e-7, err_msg=name)
    small = (np.abs(x64) < 0.1) & (x64 != 0)  # relative, where tanh(x) ~ x: no cancellation
    assert (np.abs(got["tanh"][small] - expected["tanh"][small]) / np.abs(x64[small])).max() < 2e-7
    np.testing.assert_allclose(got["cube"], expected["cube"], rtol=3e-7, err_msg="x ** 3")
    assert np.isnan(got["exp"][np.isnan(x)]).all()
