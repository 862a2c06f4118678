"""The import guard's decisions, with faked CPU features and tvm-ffi versions."""

from __future__ import annotations

import pytest

from tvm_wheels import guard, host

AVX512_INFO = {
    "variant": "cpu-avx512", "version": "0.26.0+avx512", "tvm_version": "0.26.0", "compiler_included": True,
    "cpu_features": ["AVX512F", "AVX512CD", "AVX512BW", "AVX512DQ", "AVX512VL"],
}
HASWELL = {"SSE42": True, "AVX": True, "AVX2": True, "FMA3": True, "AVX512F": False, "AVX512CD": False,
           "AVX512BW": False, "AVX512DQ": False, "AVX512VL": False}


def test_avx512_wheel_on_haswell_names_missing_features_and_the_cpu_variant(monkeypatch):
    monkeypatch.setattr(host, "cpu_features", lambda: HASWELL)
    msg = guard._cpu_problem(AVX512_INFO)
    assert "lacks AVX512F, AVX512CD, AVX512BW, AVX512DQ, AVX512VL" in msg
    assert "TVM_WHEEL_VARIANT=cpu pip install ./" in msg
    assert "apache-tvm==0.26.0+cpu" in msg


def test_avx512_wheel_on_avx512_host_passes(monkeypatch):
    monkeypatch.setattr(host, "cpu_features", lambda: {**HASWELL, **{f: True for f in AVX512_INFO["cpu_features"]}})
    assert guard._cpu_problem(AVX512_INFO) is None


def test_runtime_only_wheel_suggests_a_runtime_variant(monkeypatch):
    monkeypatch.setattr(host, "cpu_features", lambda: HASWELL)
    info = {**AVX512_INFO, "compiler_included": False}
    assert "TVM_WHEEL_VARIANT=runtime" in guard._cpu_problem(info)


def test_ffi_outside_declared_range_is_a_problem(monkeypatch):
    monkeypatch.setattr(guard.metadata, "requires", lambda dist: ["numpy", "apache-tvm-ffi<0.1.15,>=0.1.13.post2"])
    monkeypatch.setattr(guard.metadata, "version", lambda dist: "0.1.15.post2")
    msg = guard._ffi_problem()
    assert "apache-tvm-ffi 0.1.15.post2 is installed" in msg
    assert "pip install 'apache-tvm-ffi<0.1.15,>=0.1.13.post2'" in msg


@pytest.mark.parametrize("have", ["0.1.13.post2", "0.1.14.post1"])
def test_ffi_inside_range_passes(monkeypatch, have):
    monkeypatch.setattr(guard.metadata, "requires", lambda dist: ["apache-tvm-ffi<0.1.15,>=0.1.13.post2"])
    monkeypatch.setattr(guard.metadata, "version", lambda dist: have)
    assert guard._ffi_problem() is None


def test_select_prefers_the_most_specific_fitting_variant():
    avx512 = {**HASWELL, **{f: True for f in AVX512_INFO["cpu_features"]}}
    assert [v.name for v in host.fitting_variants(avx512, "x86_64", driver=None)] == ["cpu-avx512", "cpu", "runtime"]
    assert [v.name for v in host.fitting_variants(HASWELL, "x86_64", driver=None)] == ["cpu", "runtime"]
    assert host.fitting_variants({}, "aarch64", driver=None) == []  # no aarch64 variant is built yet


def test_select_puts_the_cuda_variant_first_where_the_driver_runs_it():
    # cuDriverGetVersion's (major, minor); the cuda-cutlass wheel is built with CUDA 13.0
    assert [v.name for v in host.fitting_variants(HASWELL, "x86_64", driver=(13, 2))] == ["cuda-cutlass", "cpu", "runtime"]
    assert [v.name for v in host.fitting_variants(HASWELL, "x86_64", driver=(12, 8))] == ["cpu", "runtime"]
