"""The variant table: one preset file per variant, read the same way by CMake and Python."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import tomllib

import pytest

from cmake_script import CMAKE, ROOT
from tvm_wheels import cmakedata, variants
from tvm_wheels_build import metadata

SUPPORTED = {"cpu", "cpu-avx512", "runtime", "cuda-cutlass", "aarch64-orin"}


def test_table_lists_every_preset_file():
    assert set(variants.names()) == {"cpu", "cpu-avx512", "runtime", "cuda-cutlass", "aarch64-orin"}
    assert {v.name for v in variants.table() if v.supported} == SUPPORTED


def test_labels_are_unique_and_valid_local_versions():
    from packaging.version import Version

    labels = [v.label for v in variants.table()]
    assert len(labels) == len(set(labels))
    for v in variants.table():
        assert Version(v.version("0.26.0")).local == v.label


def test_avx512_inherits_cpu_and_adds_isa():
    cpu, avx = variants.load("cpu"), variants.load("cpu-avx512")
    assert avx.march == "x86-64-v4" and "AVX512F" in avx.cpu_features
    assert cpu.cpu_features == () and cpu.march == ""
    assert avx.options["USE_LLVM"] == cpu.options["USE_LLVM"] == "ON"


def test_runtime_has_no_compiler():
    rt = variants.load("runtime")
    assert rt.compiler is False and rt.options["USE_LLVM"] == "OFF"


@pytest.mark.parametrize("name", [f"presets/{n}" for n in sorted(variants.names())] + ["requirements", "compile"])
def test_cmake_and_python_read_a_data_file_identically(tmp_path, name):
    py = cmakedata.read(ROOT / "cmake" / f"{name}.cmake")
    body = f'include("{ROOT}/cmake/{name}.cmake")\n' + "".join(
        f'message(STATUS "{k}=${{{k}}}")\n' for k in py)
    script = tmp_path / "dump.cmake"
    script.write_text(body)
    r = subprocess.run([CMAKE, "-P", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from_cmake = dict(line.removeprefix("-- ").split("=", 1) for line in r.stdout.splitlines())
    assert from_cmake == py


def test_a_preset_with_logic_is_refused(tmp_path):
    bad = tmp_path / "bad.cmake"
    bad.write_text('if(X)\n  set(A 1)\nendif()\n')
    with pytest.raises(cmakedata.CMakeDataError, match="only set"):
        cmakedata.read(bad)


def test_unknown_variant_lists_valid_ones():
    with pytest.raises(variants.UnknownVariant) as e:
        variants.load("gpu")
    assert "unknown variant 'gpu'" in str(e.value)
    assert "cpu, cpu-avx512, cuda-cutlass, runtime" in str(e.value).replace("aarch64-orin, ", "")


@pytest.mark.parametrize("name,label", [("cpu", "cpu"), ("cpu-avx512", "avx512"), ("runtime", "runtime")])
def test_version_plugin_labels_the_wheel(monkeypatch, name, label):
    monkeypatch.setenv("TVM_WHEEL_VARIANT", name)
    assert metadata.dynamic_metadata("version") == f"0.26.0+{label}"


def test_version_plugin_defaults_to_cpu(monkeypatch):
    monkeypatch.delenv("TVM_WHEEL_VARIANT", raising=False)
    assert metadata.dynamic_metadata("version") == "0.26.0+cpu"


def test_dependencies_are_the_common_list_and_the_variant_own(monkeypatch):
    import tomllib

    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["scikit-build"]["metadata"]["dependencies"]
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "cpu")
    cpu = metadata.dynamic_metadata("dependencies", table)
    assert cpu == table["common"] and any(d.startswith("apache-tvm-ffi>=") for d in cpu)
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "cuda-cutlass")
    cu = metadata.dynamic_metadata("dependencies", table)
    assert cu[:len(cpu)] == cpu and "nvidia-cuda-runtime>=13.0,<14" in cu and "cuda-bindings>=13.0,<14" in cu


def test_extras_are_the_common_ones_and_the_variant_own(monkeypatch):
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["scikit-build"]["metadata"]
    table = meta["optional-dependencies"]
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "cpu")
    cpu = metadata.dynamic_metadata("optional-dependencies", table)
    assert cpu == table["common"] and "xgboost-cpu" in cpu["tune"]
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "cuda-cutlass")
    cu = metadata.dynamic_metadata("optional-dependencies", table)
    assert cu["tune"] == cpu["tune"] and "nvidia-cuda-nvcc>=13.0,<14" in cu["cutlass"]


def test_a_malformed_extra_is_refused(tmp_path):
    (tmp_path / "x.cmake").write_text('set(TVM_WHEEL_LABEL "x")\nset(TVM_WHEEL_EXTRAS "nvcc>=13")\n')
    with pytest.raises(ValueError, match="is not 'extra :: requirement'"):
        variants.load("x", tmp_path)


def test_build_requires_pull_llvm_only_when_needed(monkeypatch):
    monkeypatch.delenv("TVM_WHEELS_LLVM", raising=False)
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "cpu")
    assert any(r.startswith("xtc-llvm-dev==") for r in metadata.get_requires_for_dynamic_metadata())
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "runtime")
    assert metadata.get_requires_for_dynamic_metadata() == []
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "cpu")
    monkeypatch.setenv("TVM_WHEELS_LLVM", "/usr/lib/llvm-19/bin/llvm-config")
    assert metadata.get_requires_for_dynamic_metadata() == []


def test_build_requires_pull_cuda_for_cuda_variants_unless_a_toolkit_is_named(monkeypatch):
    monkeypatch.delenv("TVM_WHEELS_LLVM", raising=False)
    monkeypatch.delenv("TVM_WHEELS_CUDA", raising=False)
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "cuda-cutlass")
    reqs = metadata.get_requires_for_dynamic_metadata()
    assert "nvidia-cuda-nvcc==13.0.88" in reqs and any(r.startswith("xtc-llvm-dev==") for r in reqs)
    monkeypatch.setenv("TVM_WHEELS_CUDA", "system")
    assert not any(r.startswith("nvidia-") for r in metadata.get_requires_for_dynamic_metadata())
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "cpu")
    monkeypatch.delenv("TVM_WHEELS_CUDA")
    assert not any(r.startswith("nvidia-") for r in metadata.get_requires_for_dynamic_metadata())


def test_cuda_presets_name_their_toolkit_and_archs():
    cu = variants.load("cuda-cutlass")
    assert cu.cuda == "13.0" and cu.cutlass and "90a" in cu.cuda_archs
    # the main build keeps the cpu variant's TVM options: its objects are the cpu build's
    assert cu.options == variants.load("cpu").options
    assert all(r.split("==")[1].startswith(cu.cuda + ".") for r in cu.cuda_pip)
    assert variants.load("cpu").cuda == ""


def _configure(tmp_path, variant):
    env = dict(os.environ, TVM_WHEEL_VARIANT=variant)
    p = subprocess.run([CMAKE, "-S", str(ROOT), "-B", str(tmp_path / "b"), "-DTVM_WHEELS_CHECKS_ONLY=ON",
                        "-DTVM_WHEELS_LLVM=system"], capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, " ".join((p.stdout + p.stderr).split())


def test_configure_refuses_unknown_variant_at_once(tmp_path):
    rc, out = _configure(tmp_path, "cpu-avx1024")
    assert rc != 0
    assert "unknown variant 'cpu-avx1024'. Valid variants: aarch64-orin, cpu, cpu-avx512, cuda-cutlass, runtime" in out


def test_a_cross_configure_names_the_toolkit_it_needs_and_the_command_that_provisions_it(tmp_path):
    """aarch64-orin on x86_64: the cross toolchain is picked, and a CUDA toolkit or LLVM of the
    build machine's architecture is refused with the project's build command as the fix."""
    if platform.machine() in variants.load("aarch64-orin").archs:
        pytest.fail("this test is for a build machine of another architecture than aarch64")
    rc, out = _configure(tmp_path, "aarch64-orin")
    assert rc != 0
    assert "tvm-wheels: cross build for aarch64 on x86_64" in out
    assert "a cross build for aarch64 links libcudart for aarch64" in out
    assert "python tools/wheelhouse.py build --variant aarch64-orin" in out


def test_cross_variants_are_tagged_for_their_architecture(monkeypatch):
    """pyproject's overrides tag a variant with a toolchain for its own architecture (scikit-build-core
    would tag the build machine's); no other variant is overridden."""
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["scikit-build"]["overrides"]
    for v in variants.table():
        tags = [o["wheel"]["tags"] for o in overrides if re.search(o["if"]["env"]["TVM_WHEEL_VARIANT"], v.name)]
        assert tags == ([[f"py3-none-linux_{v.archs[0]}"]] if v.toolchain else []), v.name
    orin = variants.load("aarch64-orin")
    assert orin.cross("x86_64") and not orin.cross("aarch64")
    # pip would install the build machine's LLVM and CUDA: a cross build gets its own from
    # tools/wheelhouse.py, so nothing is asked of the build environment
    monkeypatch.setenv("TVM_WHEEL_VARIANT", "aarch64-orin")
    monkeypatch.delenv("TVM_WHEELS_LLVM", raising=False)
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    assert metadata.get_requires_for_dynamic_metadata() == []
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert set(metadata.get_requires_for_dynamic_metadata()) == {
        *variants.requirements()["TVM_WHEELS_PIP_LLVM"].split(";"), *orin.cuda_pip}


def test_readme_table_is_the_preset_table():
    from tvm_wheels import cli

    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- variants:begin -->\n", 1)[1].split("\n<!-- variants:end -->", 1)[0]
    assert block == cli.markdown_table()
