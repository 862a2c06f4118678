"""tvm_wheels.backends: what a CUDA variant's wheel sets up for TVM at import."""

from __future__ import annotations

from tvm_wheels import backends

CUDA_INFO = {"cuda_version": "13.0", "sidecar_libs": ["tvm_runtime_cuda"]}


def _nvidia_site(tmp_path, cccl=True):
    root = tmp_path / "nvidia" / "cu13"
    (root / "include").mkdir(parents=True)
    (root / "include" / "cuda_runtime.h").write_text("")
    if cccl:
        (root / "include" / "cccl" / "cuda" / "std").mkdir(parents=True)
    return root


def test_nvrtc_is_pointed_at_nvidia_wheels_with_libcudacxx(tmp_path):
    root = _nvidia_site(tmp_path)
    env = backends.nvrtc_environment(CUDA_INFO, {}, site=tmp_path)
    assert env == {"CUDA_PATH": str(root), "TVM_CUDA_NVRTC_EXTRA_OPTS": f"-I{root}/include/cccl"}
    kept = backends.nvrtc_environment(CUDA_INFO, {"TVM_CUDA_NVRTC_EXTRA_OPTS": "-lineinfo"}, site=tmp_path)
    assert kept["TVM_CUDA_NVRTC_EXTRA_OPTS"] == f"-lineinfo -I{root}/include/cccl"


def test_a_cuda_path_the_user_set_is_kept(tmp_path):
    _nvidia_site(tmp_path)
    assert backends.nvrtc_environment(CUDA_INFO, {"CUDA_PATH": "/opt/cuda"}, site=tmp_path) == {}


def test_nothing_without_nvidia_wheels_or_for_a_cpu_wheel(tmp_path):
    assert backends.nvrtc_environment(CUDA_INFO, {}, site=tmp_path) == {}
    _nvidia_site(tmp_path)
    assert backends.nvrtc_environment({"variant": "cpu"}, {}, site=tmp_path) == {}


def test_the_cutlass_extra_nvcc_joins_path_unless_the_user_has_one(tmp_path):
    root = _nvidia_site(tmp_path)
    (root / "bin").mkdir()
    (root / "bin" / "nvcc").write_text("")
    env = backends.nvrtc_environment(CUDA_INFO, {"PATH": "/usr/bin"}, site=tmp_path)
    assert env["PATH"] == f"{root}/bin:/usr/bin"
    users = tmp_path / "user-bin"
    users.mkdir()
    (users / "nvcc").write_text("")
    (users / "nvcc").chmod(0o755)
    assert "PATH" not in backends.nvrtc_environment(CUDA_INFO, {"PATH": str(users)}, site=tmp_path)


def test_without_a_driver_loading_a_cuda_module_names_it():
    message = backends.no_driver_message({"cuda_version": "13.0", "variant": "cuda-cutlass"},
                                         "libcuda.so.1: cannot open shared object file")
    assert "libcuda.so.1: cannot open shared object file" in message
    assert "supports CUDA 13.0 or newer" in message and "tvm-wheels doctor" in message
