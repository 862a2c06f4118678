"""`tvm-wheels doctor` after install: the wheel against this host, outside any source tree."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tvm_wheels import threads, variants

pytestmark = pytest.mark.wheel


def doctor(venv, tmp_path, *args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in (variants.ENV, *threads.VARIABLES)}
    env.update(env_extra or {})
    p = subprocess.run([str(venv.bin("tvm-wheels")), "doctor", "--json", *args], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    return p.returncode, {c["name"]: c for c in json.loads(p.stdout)}


@pytest.mark.parametrize("venv_fixture,variant,roundtrip", [("cpu_venv", "cpu", "pass"),
                                                             ("runtime_venv", "runtime", "info")])
def test_installed_wheel_fits_this_host(request, tmp_path, venv_fixture, variant, roundtrip):
    rc, checks = doctor(request.getfixturevalue(venv_fixture), tmp_path, "--variant", variant)
    assert checks["installed wheel"]["status"] == "pass" and checks["installed wheel"]["detail"].startswith(variant)
    assert checks["compile/export/load"]["status"] == roundtrip
    assert checks["libstdc++"]["status"] == "pass" and "GLIBCXX_" in checks["libstdc++"]["detail"]
    assert "C++ compiler" not in checks  # no source tree here: no build checks
    assert checks["threads"]["status"] == "pass" and "sized by tvm-wheels on import" in checks["threads"]["detail"]
    assert rc == 0


def test_a_thread_pool_smaller_than_the_cores_is_reported(cpu_venv, tmp_path):
    _, checks = doctor(cpu_venv, tmp_path, env_extra={"TVM_NUM_THREADS": "1"})
    cores = int(checks["threads"]["detail"].split(" on ")[1].split()[0])
    assert checks["threads"]["detail"].startswith("TVM runs 1 threads on")
    assert "TVM_NUM_THREADS=1" in checks["threads"]["detail"]
    if cores > 1:
        assert checks["threads"]["status"] == "warn" and f"TVM_NUM_THREADS={cores}" in checks["threads"]["fix"]
    else:
        assert checks["threads"]["status"] == "pass"


@pytest.mark.parametrize("venv_fixture,variant", [pytest.param("avx512_venv", "cpu-avx512", marks=pytest.mark.avx512_host), ("runtime_venv", "runtime")])
def test_doctor_checks_the_installed_variant_when_none_is_named(request, tmp_path, venv_fixture, variant):
    rc, checks = doctor(request.getfixturevalue(venv_fixture), tmp_path)
    assert checks["CPU"]["detail"].startswith(f"{variant} runs here"), checks["CPU"]
    assert rc == 0


def test_installed_wheel_with_wrong_ffi_is_reported(runtime_venv, tmp_path):
    runtime_venv.pip("apache-tvm-ffi==0.1.15.post2")
    try:
        rc, checks = doctor(runtime_venv, tmp_path)
    finally:
        runtime_venv.pip("apache-tvm-ffi==0.1.14.post1")
    assert rc == 2
    assert checks["installed wheel"]["status"] == "fail"
    assert "apache-tvm-ffi 0.1.15.post2 is installed" in checks["installed wheel"]["detail"]
