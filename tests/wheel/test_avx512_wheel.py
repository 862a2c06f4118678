"""The cpu-avx512 wheel: AVX-512 code inside, a guard that refuses CPUs without it."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

pytestmark = pytest.mark.wheel
QEMU = shutil.which("qemu-x86_64") or "qemu-x86_64 (missing: apt-get install qemu-user)"


@pytest.mark.avx512_host
def test_identity_and_default_target(avx512_wheel, avx512_venv):
    assert avx512_wheel.name.startswith("apache_tvm-0.26.0+avx512-")
    out = avx512_venv.json("""
        import json, tvm, tvm_wheels.buildinfo as b, tvm_wheels.target as t
        h = t.host()
        print(json.dumps([tvm.__version__, b.load()["variant"], b.load()["march"], str(h.attrs["mcpu"]),
                          [str(a) for a in h.attrs["mattr"]]]))
    """)
    assert out == ["0.26.0+avx512", "cpu-avx512", "x86-64-v4", "x86-64-v4", ["-prefer-256-bit"]]


@pytest.mark.avx512_host
def test_tvm_itself_is_compiled_with_avx512(avx512_venv):
    lib = avx512_venv.tvm_dir()
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib / "lib" / "libtvm_runtime.so")],
                         capture_output=True, text=True, check=True).stdout
    assert "%zmm" in asm or "{%k" in asm  # EVEX-encoded instructions: the reason the guard exists


@pytest.mark.avx512_host
def test_default_target_vectorizes_with_zmm(avx512_venv, tmp_path):
    avx512_venv.run(f"""
        import tvm, tvm_wheels.target
        from tvm import te
        A = te.placeholder((4096,), name="A"); B = te.placeholder((4096,), name="B")
        C = te.compute((4096,), lambda i: A[i] * 2.0 + B[i], name="C")
        tvm.build(te.create_prim_func([A, B, C]), target=tvm_wheels.target.host()).export_library({str(tmp_path / "v.so")!r})
    """)
    asm = subprocess.run(["objdump", "-d", str(tmp_path / "v.so")], capture_output=True, text=True, check=True).stdout
    assert "%zmm" in asm


@pytest.mark.avx512_host
def test_default_target_compiles_correct_code(avx512_venv, tmp_path):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 128)).astype("float32"), rng.standard_normal((128, 32)).astype("float32")
    np.savez(tmp_path / "ab.npz", a=a, b=b)
    report = avx512_venv.json(f"""
        import json, numpy as np, tvm, tvm_wheels
        from tvm import relax
        from tvm.script import relax as R
        d = np.load({str(tmp_path / "ab.npz")!r})
        bb = relax.BlockBuilder()
        x = relax.Var("x", R.Tensor((64, 128), "float32")); w = relax.Var("w", R.Tensor((128, 32), "float32"))
        with bb.function("main", [x, w]):
            with bb.dataflow():
                y = bb.emit_output(relax.op.matmul(x, w))
            bb.emit_func_output(y)
        report = []
        ex = tvm_wheels.compile(bb.get(), report=report)
        ex.export_library({str(tmp_path / "mm.so")!r})
        vm = relax.VirtualMachine(ex, tvm.cpu())
        np.save({str(tmp_path / "out.npy")!r}, vm["main"](tvm.runtime.tensor(d["a"]), tvm.runtime.tensor(d["b"])).numpy())
        print(json.dumps({{e.function: e.source for e in report}}))
    """, env={"TVM_WHEELS_TUNING_DB": str(tmp_path)})
    # a shape no database has: the nearest shipped matmul record's trace, re-fitted to it
    assert list(report) == ["matmul"] and report["matmul"].startswith("similar:")
    assert report["matmul"].endswith("/tvm_wheels/tuning/llvm-x86-64-v4--prefer-256-bit"), report
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.avx512_host
def test_imports_on_this_avx512_host(avx512_venv):
    assert avx512_venv.json("import json, tvm; print(json.dumps(bool(tvm.runtime.enabled('llvm'))))") is True


def test_guard_refuses_haswell_with_the_fix_and_no_sigill(avx512_venv):
    # The real interpreter binary under an emulated Haswell (AVX2, no AVX-512):
    # numpy's CPUID-based table says AVX512F False there, as it would on such a CPU.
    proc = subprocess.run([QEMU, "-cpu", "Haswell", str(avx512_venv.python), "-c", "import tvm"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])  # SIGILL would be -4
    assert "ImportError: tvm-wheels: this apache-tvm wheel is the cpu-avx512 variant (0.26.0+avx512)" in proc.stderr
    assert "this CPU lacks AVX512F, AVX512CD, AVX512BW, AVX512DQ, AVX512VL" in proc.stderr
    assert "TVM_WHEEL_VARIANT=cpu pip install ./" in proc.stderr


def test_cpu_variant_is_what_select_offers_on_haswell(avx512_venv):
    proc = subprocess.run([QEMU, "-cpu", "Haswell", str(avx512_venv.bin("python")), "-m", "tvm_wheels", "select",
                           "--json"], capture_output=True, text=True, timeout=600)
    assert json.loads(proc.stdout)["variants"][0] == "cpu"
