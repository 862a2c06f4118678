"""End to end: an ONNX ResNet-50 imported with tvm.relax.frontend.onnx, compiled
for llvm, run on the Relax VM, compared with onnxruntime on the same input.

Tolerance: |tvm - ort| <= 1e-4 * max|ort| + 1e-5 elementwise (float32, 50
layers of reassociated sums; measured differences are reported in the output).
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from models import resnet50

pytestmark = pytest.mark.wheel


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    d = tmp_path_factory.mktemp("resnet50")
    model = resnet50.build(seed=0)
    (d / "resnet50.onnx").write_bytes(model.SerializeToString())
    x = resnet50.sample_input(seed=1)
    np.save(d / "input.npy", x)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return d, session.run(None, {"input": x})[0]


def run_tvm(venv, d):
    venv.run(f"""
        import numpy as np, onnx, tvm
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx
        mod = from_onnx(onnx.load({str(d / "resnet50.onnx")!r}), keep_params_in_input=False)
        ex = tvm.compile(mod, target="llvm")
        vm = relax.VirtualMachine(ex, tvm.cpu())
        out = vm["main"](tvm.runtime.tensor(np.load({str(d / "input.npy")!r})))
        np.save({str(d / f"out-{venv.label.split()[0]}.npy")!r}, out.numpy())
    """)
    return np.load(d / f"out-{venv.label.split()[0]}.npy")


def test_resnet50_matches_onnxruntime(any_venv, resnet):
    d, expected = resnet
    got = run_tvm(any_venv, d)
    diff = np.abs(got - expected)
    print(f"[{any_venv.label}] ResNet-50 max abs diff vs onnxruntime: {diff.max():.3g} "
          f"(max |ort| {np.abs(expected).max():.3g})")
    assert got.shape == expected.shape == (1, 1000)
    assert np.argmax(got) == np.argmax(expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4 * np.abs(expected).max() + 1e-5)
