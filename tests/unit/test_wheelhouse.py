"""The content key of tools/wheelhouse.py: same inputs, same key; any build input changes it."""

from __future__ import annotations

import shutil

import pytest

import wheelhouse

ROOT = wheelhouse.ROOT


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A copy of the project's build inputs, with a two-file stand-in for tvm/."""
    for name in ("pyproject.toml", "CMakeLists.txt", "LICENSE"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "wheelhouse.py", tmp_path / "tools" / "wheelhouse.py")
    for name in ("cmake", "licenses", "patches", "python", "sidecar"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tvm" / "src").mkdir(parents=True)
    (tmp_path / "tvm" / "src" / "a.cc").write_text("int a;\n")
    (tmp_path / "tvm" / ".git").write_text("gitdir: elsewhere\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "README.md").write_text("docs\n")
    monkeypatch.setattr(wheelhouse, "toolchain", lambda env: {"cxx": "g++ 12.2.0", "cmake": "4.4.5"})
    for k in wheelhouse.BUILD_ENV:
        monkeypatch.delenv(k, raising=False)
    return tmp_path


def key(tree, variant="cpu"):
    return wheelhouse.content_key(variant, tree / "env", root=tree)[0]


def test_same_inputs_same_key(tree):
    assert key(tree) == key(tree)


@pytest.mark.parametrize("edit", ["tvm/src/a.cc", "cmake/presets/cpu.cmake", "CMakeLists.txt", "pyproject.toml",
                                  "patches/0001-tvm-init-import-guard.patch", "python/tvm_wheels/guard.py",
                                  "tools/wheelhouse.py", "sidecar/fpA_intB_gemm_tvm_binding.cu"])
def test_any_build_input_changes_the_key(tree, edit):
    before = key(tree)
    with open(tree / edit, "a") as f:
        f.write("\n# changed\n")
    assert key(tree) != before


def test_new_file_in_sources_changes_the_key(tree):
    before = key(tree)
    (tree / "tvm" / "src" / "b.cc").write_text("int b;\n")
    assert key(tree) != before


def test_docs_tests_and_git_metadata_do_not_change_the_key(tree):
    before = key(tree)
    (tree / "README.md").write_text("other docs\n")
    (tree / "tests" / "test_x.py").write_text("x = 1\n")
    (tree / "tvm" / ".git").write_text("gitdir: moved\n")
    assert key(tree) == before


def test_variant_toolchain_and_flags_change_the_key(tree, monkeypatch):
    base = key(tree)
    assert key(tree, "runtime") != base
    monkeypatch.setenv("CXXFLAGS", "-O3")
    assert key(tree) != base
    monkeypatch.delenv("CXXFLAGS")
    monkeypatch.setattr(wheelhouse, "toolchain", lambda env: {"cxx": "g++ 13.1.0", "cmake": "4.4.5"})
    assert key(tree) != base


def test_cuda_arch_list_and_toolkit_change_a_cuda_variant_key(tree, monkeypatch):
    base = key(tree, "cuda-cutlass")
    monkeypatch.setenv("TVM_WHEELS_CUDA_ARCHS", "80;89;90a")
    archs = key(tree, "cuda-cutlass")
    monkeypatch.setenv("TVM_WHEELS_CUDA", "/opt/cuda-13.1")
    assert len({base, archs, key(tree, "cuda-cutlass")}) == 3

