"""The CUDA toolkit lookup and checks of a CUDA variant (cmake/modules/CudaToolkit.cmake), with
fake toolkits; the libcuda link stub from the real toolkit's cuda.h."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cmake_script import fake_toolkit, run

def find(choice: str, tmp_path: Path, python: str = "", env: dict | None = None):
    return run(f'include(CudaToolkit)\ntvm_wheels_find_cuda("{choice}" "{python}" "13.0" "nvidia-cuda-nvcc==13.0.88")\n'
               'message(STATUS "root=${TVM_WHEELS_CUDA_ROOT} version=${TVM_WHEELS_CUDA_VERSION} '
               'source=${TVM_WHEELS_CUDA_SOURCE} cudart=${TVM_WHEELS_CUDART}")', tmp_path, env=env)


def test_a_named_toolkit_is_used_and_reported(tmp_path):
    root = fake_toolkit(tmp_path / "cuda")
    r = find(str(root), tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"root={root} version=13.0 source=user (TVM_WHEELS_CUDA) cudart={root}/lib/libcudart.so.13" in r.stdout


def test_nvcc_path_names_its_toolkit_and_system_layouts_are_found(tmp_path):
    root = fake_toolkit(tmp_path / "cuda", layout="targets/x86_64-linux/lib")
    r = find(str(root / "bin" / "nvcc"), tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"root={root} " in r.stdout and "targets/x86_64-linux/lib/libcudart.so.13" in r.stdout


@pytest.mark.parametrize("release,why", [("12.6", "CUDA 12.6, but this variant is built with CUDA 13.x, at least 13.0"),
                                         ("14.0", "CUDA 14.0, but this variant is built with CUDA 13.x")])
def test_a_toolkit_of_another_major_is_refused_with_the_fix(tmp_path, release, why):
    root = fake_toolkit(tmp_path / "cuda", release=release)
    r = find(str(root), tmp_path)
    assert r.returncode != 0
    assert why in r.stderr
    assert "TVM_WHEELS_CUDA=system pip install ./" in r.stderr and "nvidia-cuda-nvcc==13.0.88" in r.stderr


def test_a_toolkit_without_the_runtime_library_is_refused(tmp_path):
    root = fake_toolkit(tmp_path / "cuda", cudart=None)
    r = find(str(root), tmp_path)
    assert r.returncode != 0 and "without the runtime's headers or libcudart.so.13" in r.stderr


def test_system_lookup_takes_cuda_home_and_lists_every_rejected_candidate(tmp_path):
    old = fake_toolkit(tmp_path / "old", release="12.4")
    env = dict(os.environ, CUDA_HOME=str(old), PATH="/usr/bin:/bin")  # no nvcc on PATH
    r = find("system", tmp_path, env=env)
    if Path("/usr/local/cuda/bin/nvcc").exists():
        assert r.returncode == 0 and "root=/usr/local/cuda" in r.stdout  # the next candidate
    else:
        assert r.returncode != 0 and "/usr/local/cuda: no bin/nvcc" in r.stderr
    assert f"{old}: CUDA 12.4" in r.stderr or "root=/usr/local/cuda" in r.stdout
    good = fake_toolkit(tmp_path / "good")
    r = find("system", tmp_path, env=dict(env, CUDA_HOME=str(good)))
    assert r.returncode == 0 and f"root={good} " in r.stdout and "source=system" in r.stdout


def test_pip_lookup_finds_nvidia_wheels_next_to_the_build_python(tmp_path):
    site = tmp_path / "site"
    fake_toolkit(site / "nvidia" / "cu13")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec {shutil.which("python3")} "$@"\n')
    python.chmod(0o755)
    r = find("pip", tmp_path, python=str(python))
    assert r.returncode == 0, r.stderr
    assert f"root={site}/nvidia/cu13 " in r.stdout and "source=pip (nvidia-cuda-nvcc==13.0.88)" in r.stdout


def test_an_unknown_choice_is_refused(tmp_path):
    r = find("conda", tmp_path)
    assert r.returncode != 0 and "TVM_WHEELS_CUDA='conda' is not 'pip', 'system' or a path" in r.stderr


def check_archs(archs: str, tmp_path: Path):
    root = fake_toolkit(tmp_path / "cuda")
    return run(f'include(CudaToolkit)\ntvm_wheels_check_cuda_archs("{root}/bin/nvcc" "{archs}")', tmp_path)


@pytest.mark.parametrize("archs", ["80;90a", "75;86;89;90;120", "100f"])
def test_archs_the_toolkit_targets_pass(tmp_path, archs):
    r = check_archs(archs, tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("archs,bad", [("70;80", "70"), ("80;90b", "90b"), ("sm_80", "sm_80"), ("", "(empty)")])
def test_an_arch_the_toolkit_cannot_target_stops_with_the_list_it_can(tmp_path, archs, bad):
    r = check_archs(archs, tmp_path)
    assert r.returncode != 0
    assert f"CUDA arch {bad} cannot be built" in r.stderr
    assert "which targets 75;80;86;89;90;100;120" in r.stderr and "TVM_WHEELS_CUDA_ARCHS=" in r.stderr


def test_the_driver_stub_has_the_soname_and_the_driver_api(tmp_path, cuda_toolkit):
    inc = cuda_toolkit / "include"  # the real cuda.h, of the toolkit the CUDA variant is built with
    r = run(f'include(CudaToolkit)\ntvm_wheels_make_cuda_stub(cc "{inc}" "{tmp_path / "stub"}" s)\n'
            'message(STATUS "stub=${s}")', tmp_path)
    assert r.returncode == 0, r.stderr
    stub = tmp_path / "stub" / "libcuda.so"
    assert f"stub={stub}" in r.stdout
    dynamic = subprocess.run(["readelf", "-d", str(stub)], capture_output=True, text=True, check=True).stdout
    assert "Library soname: [libcuda.so.1]" in dynamic
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(stub)], capture_output=True, text=True,
                             check=True).stdout.split()
    # what libtvm_runtime_cuda calls, under the names cuda.h gives them (cuMemAlloc is cuMemAlloc_v2)
    for name in ("cuInit", "cuLaunchKernel", "cuModuleLoadData", "cuMemAlloc_v2", "cuDriverGetVersion"):
        assert name in symbols


def _runtime_only_toolkit(root: Path, cudart_version: int) -> Path:
    """A CUDA 12 runtime wheel's layout: headers and libcudart, no nvcc."""
    (root / "include").mkdir(parents=True)
    (root / "include" / "cuda_runtime.h").write_text("")
    (root / "include" / "cuda_runtime_api.h").write_text(f"#define CUDART_VERSION  {cudart_version}\n")
    (root / "lib").mkdir()
    (root / "lib" / "libcudart.so.12").write_text("")
    return root


def find_runtime_only(root: Path, tmp_path: Path):
    """A variant that compiles no CUDA code (TVM_WHEEL_CUDA_BUILD "runtime", aarch64-orin)."""
    return run(f'include(CudaToolkit)\nset(TVM_WHEEL_CUDA_BUILD runtime)\n'
               f'tvm_wheels_find_cuda("{root}" "" "12.6" "nvidia-cuda-runtime-cu12==12.6.77")\n'
               'message(STATUS "version=${TVM_WHEELS_CUDA_VERSION} cudart=${TVM_WHEELS_CUDART}")', tmp_path)


def test_a_runtime_only_variant_needs_no_nvcc_and_reads_the_version_from_the_header(tmp_path):
    root = _runtime_only_toolkit(tmp_path / "cuda_runtime", 12060)
    r = find_runtime_only(root, tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"version=12.6 cudart={root}/lib/libcudart.so.12" in r.stdout


def test_a_runtime_only_variant_refuses_headers_newer_than_its_boards(tmp_path):
    """Jetson has no CUDA minor-version compatibility: 12.8 headers for a 12.6 board are refused."""
    r = find_runtime_only(_runtime_only_toolkit(tmp_path / "cuda_runtime", 12080), tmp_path)
    assert r.returncode != 0
    assert "CUDA 12.8, newer than the CUDA 12.6 this variant's boards have" in r.stderr
