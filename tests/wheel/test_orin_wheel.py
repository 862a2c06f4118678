"""The aarch64-orin wheel (tier 2), cross-built on this machine and run under qemu-user in
Debian's aarch64 Python (tools/qemu_python.py): its files, `import tvm` and `tvm-wheels info`,
a model compiled for Orin's CPU and run against numpy, CUDA source for the Orin GPU (sm_87), the
import guard on an aarch64 CPU without the features the wheel is built for, and the wheel as an
RPC server that the x86 cpu wheel compiles for, runs on and tunes through. GPU execution
and JetPack's own libcudart need a board (README: aarch64-orin)."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

import loopback
from conftest import COMPILE_FOR_ORIN, PRINT
from models import dense, gpu_mlp
from tvm_wheels import variants

pytestmark = [pytest.mark.wheel, pytest.mark.tier2]

VARIANT = variants.load("aarch64-orin")


@pytest.fixture(scope="module")
def unpacked(orin_wheel, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("orin-wheel")
    with zipfile.ZipFile(orin_wheel) as z:
        z.extractall(out)
    return out


def test_every_library_is_aarch64_and_the_cuda_runtime_is_in(orin_wheel, unpacked):
    assert orin_wheel.name.startswith(f"apache_tvm-0.26.0+{VARIANT.label}-py3-none-manylinux_")
    assert orin_wheel.name.endswith("_aarch64.whl")
    libs = sorted(p.name for p in (unpacked / "tvm" / "lib").glob("*.so"))
    assert libs == ["libtvm_compiler.so", "libtvm_runtime.so", "libtvm_runtime_cuda.so", "libtvm_runtime_extra.so"]
    for so in (unpacked / "tvm" / "lib").glob("*.so"):
        header = subprocess.run(["readelf", "-h", str(so)], capture_output=True, text=True, check=True).stdout
        assert re.search(r"Machine:\s+AArch64", header), (so.name, header)
    # nothing of CUDA is bundled: JetPack provides the driver, libcudart and NVRTC
    names = zipfile.ZipFile(orin_wheel).namelist()
    assert not [n for n in names if re.search(r"lib(cuda|cudart|nvrtc)[.-]", n)]


def test_the_cuda_runtime_needs_libcudart_12_and_the_driver_from_the_board(unpacked):
    dyn = subprocess.run(["readelf", "-d", str(unpacked / "tvm" / "lib" / "libtvm_runtime_cuda.so")],
                         capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.+)\]", dyn)
    assert "libcuda.so.1" in needed and "libcudart.so.12" in needed, needed
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.+)\]", dyn)
    assert runpath == ["$ORIGIN:$ORIGIN/../../nvidia/cuda_runtime/lib"], runpath


def test_import_and_info_under_qemu(orin_python):
    py = orin_python()
    got = py.json("""
        import json, platform, tvm
        from tvm_wheels import backends
        print(json.dumps({"machine": platform.machine(), "version": tvm.__version__,
                          "llvm": tvm.target.codegen.llvm_version_major(),
                          "problems": backends.problems()}))
    """)
    assert got["machine"] == "aarch64"
    assert got["version"] == f"0.26.0+{VARIANT.label}"
    assert got["llvm"] == 22
    # no driver and no libcudart under qemu: TVM's CUDA runtime cannot load, and says why
    assert list(got["problems"]) == ["tvm_runtime_cuda"]
    assert re.search(r"libcuda(rt)?\.so", got["problems"]["tvm_runtime_cuda"])

    info = json.loads(py.run("import sys; from tvm_wheels import cli; sys.exit(cli.main(['info', '--json']))").stdout)
    assert info["variant"] == "aarch64-orin"
    assert info["cuda_version"] == VARIANT.cuda and info["cuda_archs"] == ["87"]
    assert info["march"] == VARIANT.march and info["host_target"] == "cortex-a78ae"
    assert info["sidecar_libs"] == ["tvm_runtime_cuda"]
    assert info["cpu_features"] == list(VARIANT.cpu_features)


def test_compiles_a_conv_and_dense_model_for_orins_cpu_and_matches_numpy(orin_python):
    got = orin_python().json("""
        import json
        import numpy as np
        import tvm, tvm_wheels, tvm_wheels.target
        from tvm import relax
        from tvm.script import relax as R

        rng = np.random.default_rng(0)
        w_conv = rng.standard_normal((8, 3, 3, 3)).astype("float32")
        w_fc = rng.standard_normal((8 * 6 * 6, 10)).astype("float32")
        bb = relax.BlockBuilder()
        x = relax.Var("x", R.Tensor((1, 3, 8, 8), "float32"))
        with bb.function("main", [x]):
            with bb.dataflow():
                y = bb.emit(relax.op.nn.relu(relax.op.nn.conv2d(x, relax.const(w_conv))))
                y = bb.emit(relax.op.reshape(y, (1, 8 * 6 * 6)))
                out = bb.emit_output(relax.op.matmul(y, relax.const(w_fc)))
            bb.emit_func_output(out)
        target = tvm_wheels.target.host()
        ex = tvm_wheels.compile(bb.get(), target=target)
        vm = relax.VirtualMachine(ex, tvm.cpu())
        data = rng.standard_normal((1, 3, 8, 8)).astype("float32")
        got = vm["main"](tvm.runtime.tensor(data)).numpy()

        # numpy: the same convolution (valid padding, stride 1) and dense layer
        win = np.lib.stride_tricks.sliding_window_view(data[0], (3, 3), axis=(1, 2))  # (3, 6, 6, 3, 3)
        conv = np.maximum(np.einsum("chwij,ocij->ohw", win, w_conv), 0)
        want = conv.reshape(1, -1) @ w_fc
        print(json.dumps({"target": str(target), "max_abs_err": float(np.abs(got - want).max()), "scale": float(np.abs(want).max())}))
    """)
    assert "cortex-a78ae" in got["target"]
    assert got["max_abs_err"] <= 1e-4 * got["scale"], got


def test_generates_cuda_source_for_the_orin_gpu(orin_python):
    got = orin_python().json(gpu_mlp.SOURCE + textwrap.dedent("""
        import json
        import tvm_wheels.target
        target = tvm_wheels.target.cuda()  # no GPU under qemu: the wheel's arch, sm_87
        ex = tvm.compile(mod, target=target)
        cuda = next(m for m in walk(ex.mod) if m.kind == "cuda")
        src = cuda.inspect_source("cuda")
        print(json.dumps({"arch": str(target.attrs["arch"]), "kernels": src.count("__global__"),
                          "host": str(target.host)}))
    """))
    assert got["arch"] == "sm_87"
    assert got["kernels"] >= 1
    assert "cortex-a78ae" in got["host"]


def test_guard_refuses_a_cpu_without_orins_features(orin_python):
    """Cortex-A53 (Armv8.0-A: Raspberry Pi 3, older Jetsons) has no FP16 arithmetic or dot
    product: `import tvm` stops before any of the wheel's code runs, naming them."""
    proc = orin_python("cortex-a53").run("import tvm", check=False)
    assert proc.returncode == 1
    assert "ImportError: tvm-wheels: this apache-tvm wheel is the aarch64-orin variant" in proc.stderr
    assert "lacks ASIMDHP, ASIMDDP" in proc.stderr
    assert "illegal instruction" in proc.stderr and "Fix:" in proc.stderr


# RUN_THERE, after conftest's COMPILE_FOR_ORIN: the library run on the server under the key
# through RPC (tvm_wheels.remote.session, which checks the server first), compared with numpy.
RUN_THERE = """
sess = remote.session(os.environ["TRACKER"], "orin", target)
sess.upload(os.environ["OUT"])
vm = relax.VirtualMachine(sess.load_module(os.path.basename(os.environ["OUT"])), sess.cpu())
x = np.random.default_rng(1).standard_normal((64, 256)).astype("float32")
got = vm["main"](tvm.runtime.tensor(x, sess.cpu())).numpy()
w, b = (onnx.numpy_helper.to_array(t) for t in model.graph.initializer)
want = np.maximum(x @ w + b, 0)
result.update(err=float(np.abs(got - want).max()), scale=float(np.abs(want).max()))
"""

def test_compiled_on_x86_run_and_tuned_on_an_orin_rpc_server_under_qemu(orin_python, tune_venv, rpc_tracker, tmp_path):
    """The Orin wheel as `tvm-wheels rpc-server` under qemu, at the tracker: a model compiled by
    the cpu wheel runs there and matches numpy; a tune for the Orin's CPU measures its candidates
    there (built and linked on x86) and compile then takes the records. Qemu's timings mean
    nothing for the board's speed."""
    dense.write(tmp_path / "dense.onnx")
    env = {"MODEL": str(tmp_path / "dense.onnx"), "TRACKER": rpc_tracker, "OUT": str(tmp_path / "model.so")}
    qemu = orin_python()
    with loopback.server(qemu.argv(), rpc_tracker, "orin", tmp_path, env=qemu.environ(), ready_s=300) as server:
        start = time.monotonic()
        got = tune_venv.json(COMPILE_FOR_ORIN + RUN_THERE + PRINT, env=env)
        print(f"compile here, run under qemu: {time.monotonic() - start:.1f} s, max abs err {got['err']:.3g}")
        assert got["report"] == {"fused_matmul_add_relu": "rules"}, got
        assert got["err"] <= 1e-4 * got["scale"], got
        assert loopback.loaded(server) == 1

        start = time.monotonic()
        tune = subprocess.run([str(tune_venv.bin("tvm-wheels")), "tune", env["MODEL"], "--trials", "4", "--target", "orin",
                               "--out", str(tmp_path / "db"), "--rpc", rpc_tracker, "--key", "orin"],
                              capture_output=True, text=True, timeout=900)
        print(f"tune for the Orin through 1 server under qemu: {time.monotonic() - start:.1f} s")
        assert tune.returncode == 0, tune.stdout[-2000:] + tune.stderr[-3000:]
        assert f"measured on 1 server under 'orin' at {rpc_tracker}" in tune.stdout
        assert "fused_matmul_add_relu (x1): 4 trials, best" in tune.stdout, tune.stdout
        assert loopback.loaded(server) >= 1 + 4
    db = tmp_path / "db" / "llvm-cortex-a78ae"
    assert len((db / "database_tuning_record.json").read_text().splitlines()) == 4
    got = tune_venv.json(COMPILE_FOR_ORIN + PRINT, env={**env, "TVM_WHEELS_TUNING_DB": str(tmp_path / "db")})
    assert got["report"] == {"fused_matmul_add_relu": f"database:{db}"}, got
