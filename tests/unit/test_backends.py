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
