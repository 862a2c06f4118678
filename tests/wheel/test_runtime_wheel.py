"""The runtime-only wheel: small, no compiler, runs what compiler wheels export."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel
ROOT = Path(__file__).resolve().parents[2]

EXPORT = """
    import numpy as np, os, tvm
    from tvm import relax, te
    from tvm.script import relax as R
    out = os.environ["OUT_DIR"]
    A = te.placeholder((16,), name="A"); B = te.placeholder((16,), name="B")
    C = te.compute((16,), lambda i: A[i] * B[i] + 1.0, name="C")
    tvm.build(te.create_prim_func([A, B, C]), target="llvm").export_library(os.path.join(out, "fma.so"))
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((2, 8), "float32")); w = relax.Var("w", R.Tensor((8, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit_output(relax.op.nn.relu(relax.op.matmul(x, w)))
        bb.emit_func_output(y)
    tvm.compile(bb.get(), target="llvm").export_library(os.path.join(out, "mlp.so"))
"""

RUN = """
    import json, numpy as np, os, tvm
    from tvm.runtime.vm import VirtualMachine
    out = os.environ["OUT_DIR"]
    a = np.arange(16, dtype="float32"); b = np.full(16, 0.5, dtype="float32")
    c = tvm.runtime.tensor(np.zeros(16, dtype="float32"))
    tvm.runtime.load_module(os.path.join(out, "fma.so"))["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), a * b + 1.0)
    x = np.linspace(-1, 1, 16, dtype="float32").reshape(2, 8); w = np.linspace(1, -1, 24, dtype="float32").reshape(8, 3)
    vm = VirtualMachine(tvm.runtime.load_module(os.path.join(out, "mlp.so")), tvm.cpu())
    np.testing.assert_allclose(vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy(),
                               np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)
    print(json.dumps({"ok": True}))
"""


def test_runtime_wheel_is_small_and_has_no_compiler(runtime_wheel):
    size = runtime_wheel.stat().st_size
    print(f"runtime wheel: {size / 1e6:.2f} MB")
    assert size < 5_000_000
    names = zipfile.ZipFile(runtime_wheel).namelist()
    assert "tvm/lib/libtvm_runtime.so" in names
    assert not any("libtvm_compiler" in n or "LLVM" in n for n in names)
    assert runtime_wheel.name.startswith("apache_tvm-0.26.0+runtime-")


def test_runtime_wheel_imports_runtime_only_and_refuses_to_compile(runtime_venv):
    proc = runtime_venv.run("""
        import tvm
        assert tvm.base._RUNTIME_ONLY
        try:
            tvm.build(None, target="llvm")
        except RuntimeError as e:
            assert "has no compiler" in str(e), e
        else:
            raise AssertionError("tvm.build did not refuse")
        tvm.compile(None, target="llvm")
    """, check=False)
    assert proc.returncode == 1
    assert "RuntimeError: tvm-wheels: this apache-tvm is the runtime variant (0.26.0+runtime)" in proc.stderr
    assert "has no compiler" in proc.stderr and "TVM_WHEEL_VARIANT=cpu pip install ./" in proc.stderr


def test_runtime_wheel_refuses_to_tune(runtime_venv, tmp_path):
    (tmp_path / "m.onnx").write_bytes(b"")
    proc = subprocess.run([str(runtime_venv.bin("tvm-wheels")), "tune", str(tmp_path / "m.onnx")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "runtime-only wheel; it cannot compile or tune" in proc.stderr
    assert "TVM_WHEEL_VARIANT=cpu pip install ./" in proc.stderr


def test_official_exports_run_in_runtime_wheel(official_venv, runtime_venv, tmp_path):
    official_venv.run(EXPORT, env={"OUT_DIR": str(tmp_path)})
    assert runtime_venv.json(RUN, env={"OUT_DIR": str(tmp_path)}) == {"ok": True}


def test_cpu_wheel_exports_run_in_official_wheel(cpu_venv, official_venv, tmp_path):
    cpu_venv.run(EXPORT, env={"OUT_DIR": str(tmp_path)})
    assert official_venv.json(RUN, env={"OUT_DIR": str(tmp_path)}) == {"ok": True}


def test_cpu_wheel_exports_run_in_runtime_wheel(cpu_venv, runtime_venv, tmp_path):
    """The runtime wheel's purpose (README: compile with a compiler wheel, deploy with this one)."""
    cpu_venv.run(EXPORT, env={"OUT_DIR": str(tmp_path)})
    assert runtime_venv.json(RUN, env={"OUT_DIR": str(tmp_path)}) == {"ok": True}


def test_variants_command_prints_the_table_the_readme_has(runtime_venv):
    """`tvm-wheels variants` as typed, in the smallest wheel: --markdown is the README's table."""
    def variants(*args: str) -> str:
        return subprocess.run([str(runtime_venv.bin("tvm-wheels")), "variants", *args], capture_output=True,
                              text=True, check=True).stdout

    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- variants:begin -->\n", 1)[1].split("\n<!-- variants:end -->", 1)[0]
    assert variants("--markdown").strip() == block.strip()
    assert {v["name"] for v in json.loads(variants("--json"))} == {
        "cpu", "cpu-avx512", "runtime", "cuda-cutlass", "aarch64-orin"}
    names = sorted(v["name"] for v in json.loads(variants("--json")))
    assert sorted(line.split()[0] for line in variants().splitlines()) == names
