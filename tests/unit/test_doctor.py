"""`tvm-wheels doctor` with fake environments: each check passes, or fails with the fix."""

from __future__ import annotations

import dataclasses
import stat

import pytest

from tvm_wheels import doctor, variants

REQ = variants.requirements()


def fake_tool(directory, name, script):
    path = directory / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.mark.parametrize("version,status", [("6.3.0", doctor.FAIL), ("9.4.0", doctor.WARN), ("12.2.0", doctor.PASS)])
def test_compiler_versions(tmp_path, version, status):
    cxx = fake_tool(tmp_path, "g++", f'case "$1" in --version) echo "g++ (Fake) {version}";; '
                                      f'-dumpfullversion) echo {version};; esac\n')
    c = doctor.check_compiler(REQ, env={"CXX": str(cxx)})
    assert c.status == status, c
    if status == doctor.FAIL:
        assert "GCC >= 7.1 (11+ recommended)" in c.detail and "apt-get install g++-12" in c.fix


def test_missing_compiler_names_the_package(tmp_path):
    c = doctor.check_compiler(REQ, env={"CXX": str(tmp_path / "nope")})
    assert c.status == doctor.FAIL and "apt-get install g++" in c.fix


def test_low_memory_fails_with_swap_advice(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 2000000 kB\nMemAvailable: 1500000 kB\n")
    c = doctor.check_memory(REQ, cores=8, mem_mb=doctor.meminfo(str(meminfo))["MemAvailable"], env={})
    assert c.status == doctor.FAIL and "swapon" in c.fix and "1464 MB available" in c.detail


def test_jobs_follow_cores_and_memory():
    assert "runs 8 compile jobs" in doctor.check_memory(REQ, cores=16, mem_mb=16000, env={}).detail
    c = doctor.check_memory(REQ, cores=16, mem_mb=16000, env={"TVM_WHEELS_JOBS": "12"})
    assert c.status == doctor.FAIL and "TVM_WHEELS_JOBS=8 pip install ./" in c.fix


def test_avx512_variant_on_a_cpu_without_it():
    c = doctor.check_cpu(variants.load("cpu-avx512"), {"AVX2": True, "AVX512F": False})
    assert c.status == doctor.FAIL and "missing AVX512F" in c.detail and "TVM_WHEEL_VARIANT=cpu" in c.fix
    assert doctor.check_cpu(variants.load("cpu"), {"AVX2": True}).status == doctor.PASS


def test_llvm_list_marks_supported_static_ones(tmp_path, monkeypatch):
    fake_tool(tmp_path, "llvm-config-19", 'case "$*" in --version) echo 19.1.7;; *) echo /x/libLLVMCore.a;; esac\n')
    fake_tool(tmp_path, "llvm-config-23", 'case "$*" in --version) echo 23.1.1;; *) echo /x/libLLVMCore.a;; esac\n')
    fake_tool(tmp_path, "llvm-config-17", 'case "$*" in --version) echo 17.0.6;; *) exit 1;; esac\n')
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(doctor.glob, "glob", lambda pattern: sorted(tmp_path.glob("llvm-config*"))
                        if str(tmp_path) in pattern else [])
    by_name = {c.name.rsplit("/", 1)[-1]: c for c in doctor.check_llvm(REQ) if "/" in c.name}
    assert by_name["llvm-config-19"].status == doctor.PASS and "static, supported" in by_name["llvm-config-19"].detail
    assert "not supported by TVM 0.26.0 (15..22)" in by_name["llvm-config-23"].detail
    assert "shared only" in by_name["llvm-config-17"].detail and by_name["llvm-config-17"].fix == \
        "apt-get install llvm-17-dev"


def test_incomplete_sources_fail_with_the_submodule_command(tmp_path):
    (tmp_path / "tvm").mkdir()
    c = doctor.check_sources(tmp_path, REQ)
    assert c.status == doctor.FAIL and c.fix == "git submodule update --init --recursive"


def test_planned_variant_is_a_failure(monkeypatch, tmp_path):
    planned = dataclasses.replace(variants.load("cuda-cutlass"), status="planned")
    monkeypatch.setattr(doctor.variants, "load", lambda name: planned)
    checks = doctor.run("cuda-cutlass", root=tmp_path)
    assert checks[0].status == doctor.FAIL and "planned" in checks[0].detail
    assert doctor.exit_code(checks) == 2


def test_exit_codes():
    assert doctor.exit_code([doctor.Check("a", doctor.PASS, ""), doctor.Check("b", doctor.INFO, "")]) == 0
    assert doctor.exit_code([doctor.Check("a", doctor.WARN, "")]) == 1
    assert doctor.exit_code([doctor.Check("a", doctor.WARN, ""), doctor.Check("b", doctor.FAIL, "")]) == 2


def test_cuda_driver_version_comes_from_the_driver_library(tmp_path):
    import json
    import os
    import subprocess
    import sys

    src = tmp_path / "fakecuda.c"
    src.write_text("int cuDriverGetVersion(int *v) { *v = 13020; return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "libcuda.so.1"), str(src)], check=True)
    # ... and `select` reads it: the CUDA variant comes first where the driver runs it
    code = ("import json; from tvm_wheels import host; "
            "print(json.dumps([host.cuda_driver_version(), host.fitting_variants(arch='x86_64')[0].name]))")
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), PYTHONPATH=str(doctor.variants.cmake_dir().parent / "python"))
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                    check=True).stdout)
    assert out == [[13, 2], "cuda-cutlass"]


def test_a_driver_older_than_the_toolkit_fails_naming_both_versions():
    cu = doctor.variants.load("cuda-cutlass")
    old = doctor.check_cuda_driver(cu, (12, 6))
    assert old.status == doctor.FAIL
    assert "supports CUDA 12.6" in old.detail and "built with CUDA 13.0" in old.detail and "CUDA 13" in old.fix
    assert doctor.check_cuda_driver(cu, (13, 0)).status == doctor.PASS
    assert doctor.check_cuda_driver(cu, (13, 2)).status == doctor.PASS  # minor-version compatibility
    assert doctor.check_cuda_driver(cu, None).status == doctor.WARN


def test_cuda_toolkit_check_follows_the_build_lookup(tmp_path):
    from cmake_script import fake_toolkit

    cu = doctor.variants.load("cuda-cutlass")
    assert doctor.check_cuda_toolkit(cu, {}).status == doctor.PASS  # pip provisions it
    good, old = fake_toolkit(tmp_path / "good"), fake_toolkit(tmp_path / "old", release="12.6")
    c = doctor.check_cuda_toolkit(cu, {"TVM_WHEELS_CUDA": str(old)})
    assert c.status == doctor.FAIL and f"{old}: CUDA 12.6" in c.detail and "TVM_WHEELS_CUDA=" in c.fix
    c = doctor.check_cuda_toolkit(cu, {"TVM_WHEELS_CUDA": "system", "CUDA_HOME": str(good), "PATH": "/nonexistent"})
    assert c.status == doctor.PASS and str(good) in c.detail
    assert doctor.check_cuda(doctor.variants.load("cpu")) == []


def test_a_cross_variant_checks_its_toolchain_not_this_cpu(monkeypatch):
    orin = variants.load("aarch64-orin")
    monkeypatch.setattr(doctor.host, "machine", lambda: "x86_64")
    monkeypatch.setattr(doctor.shutil, "which", lambda name, **kw: None if name == "qemu-aarch64" else f"/usr/bin/{name}")
    c = doctor.check_cross(orin)
    assert c.status == doctor.FAIL and "qemu-aarch64 not found" in c.detail
    assert c.fix == "apt-get install g++-aarch64-linux-gnu qemu-user"
    monkeypatch.setattr(doctor.shutil, "which", lambda name, **kw: f"/usr/bin/{name}")
    assert doctor.check_cross(orin).status == doctor.PASS
    assert "tools/wheelhouse.py provisions CUDA 12.6" in doctor.check_cuda_toolkit(orin, {}).detail


def test_doctor_from_the_source_tree_as_the_docs_type_it(tmp_path):
    """`PYTHONPATH=python python -m tvm_wheels doctor --variant cpu --json` before any build: the
    build checks (compiler, CMake against pyproject's minimum, LLVM, sources, memory) in JSON."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "tvm_wheels", "doctor", "--variant", "cpu", "--json"], cwd=root,
                          env=dict(os.environ, PYTHONPATH="python"), capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr  # 1: warnings (no wheel installed in this venv)
    checks = {c["name"]: c for c in json.loads(proc.stdout)}
    assert {"C++ compiler", "cmake", "ninja", "LLVM for the build", "TVM sources", "memory"} <= set(checks), sorted(checks)
    assert checks["TVM sources"]["status"] == doctor.PASS
    assert checks["C++ compiler"]["status"] != doctor.FAIL, checks["C++ compiler"]
