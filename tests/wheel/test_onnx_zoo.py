"""ONNX's own model zoo, the light versions shipped in the onnx package (onnx.backend.test data):
each compiles with tvm_wheels.compile in the cpu wheel and matches onnxruntime.

TVM's default pipeline compiles all nine (and the official wheel does); the project's pipeline
must never fail where it passes. These graphs are the ONNX importer's, unlike the torch exports
of the other tests: Dropout nodes, `Sum` of branches, BatchNormalization kept, channel
shuffles, weights listed as graph inputs. Their weights are one value everywhere (0.02, from
ConstantOfShape nodes), which would make every class score alike; the test draws them at random
around that value, so a wrong index or layout shows in the scores it compares.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from models.onnx_light import LIGHT, MODELS, with_random_weights

pytestmark = pytest.mark.wheel

# In the wheel's venv: compile $MODEL, run it on d/input.npy, save d/out.npy, print where the
# schedules came from and which functions got none.
COMPILE = """
import json, os, sys, numpy as np, onnx, tvm, tvm_wheels
from tvm import relax
from tvm_wheels.compiler import pipeline
d = os.environ["MODEL_DIR"]
report = []
ex = tvm_wheels.compile(pipeline.from_onnx(os.environ["MODEL"]), report=report)
out = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(np.load(os.path.join(d, "input.npy"))))
np.save(os.path.join(d, "out.npy"), (out if isinstance(out, tvm.runtime.Tensor) else out[0]).numpy())
print(json.dumps({"sources": sorted({e.source.split(":")[0] for e in report}),
                  "unscheduled": [e.function for e in report if e.source.startswith("unscheduled")]}))
"""


def test_the_zoo_is_all_there():
    assert sorted(f[len("light_"):-len(".onnx")] for f in os.listdir(LIGHT) if f.endswith(".onnx")) == MODELS


@pytest.mark.parametrize("name", MODELS)
def test_light_model_compiles_and_matches_onnxruntime(cpu_venv, tmp_path, name):
    rng = np.random.default_rng(0)
    model = with_random_weights(onnx.load(os.path.join(LIGHT, f"light_{name}.onnx")), rng)
    path = str(tmp_path / "model.onnx")
    onnx.save(model, path)
    graph = model.graph
    weights = {i.name for i in graph.initializer}
    (data,) = [i for i in graph.input if i.name not in weights]  # older models list weights as inputs too
    x = rng.standard_normal([d.dim_value for d in data.type.tensor_type.shape.dim])
    x = x.astype("float32")
    np.save(tmp_path / "input.npy", x)
    result = cpu_venv.json(COMPILE, env={"MODEL_DIR": str(tmp_path), "MODEL": path,
                                          "TVM_WHEELS_TUNING_DB": str(tmp_path / "no-user-db")})
    expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {data.name: x})[0]
    got = np.load(tmp_path / "out.npy")
    scale = float(np.abs(expected).max())
    print(f"[{name}] max abs diff vs onnxruntime {np.abs(got - expected).max():.3g} (scale {scale:.3g}); {result}")
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-3 * scale)
    # the operators that carry the FLOPs always get a schedule (ShuffleNet's channel shuffles,
    # fused transposes and reshapes, may get none from the rules)
    assert not [f for f in result["unscheduled"] if any(op in f for op in ("conv", "matmul", "dense"))], result
