"""cmake/compile.cmake applied by cmake/modules/Compile.cmake: a real configure of a small project
shaped like TVM's (definitions added by a subdirectory, an interface target carrying them as options)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from cmake_script import CMAKE, ROOT

sys.path.insert(0, str(ROOT / "python"))
from tvm_wheels import cmakedata  # noqa: E402

SETTINGS = cmakedata.read(ROOT / "cmake" / "compile.cmake")


def _configure(tmp_path, *defines: str, extra: str = "") -> subprocess.CompletedProcess:
    src = tmp_path / "src"
    (src / "tvm" / "inner").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (src / "tvm" / f"{name}.cc").write_text(f"int {name}() {{ return 1; }}\n")
    (src / "tvm" / "inner" / "d.cc").write_text("int d() { return 1; }\n")
    (src / "tvm" / "CMakeLists.txt").write_text(
        "add_definitions(-D_DEBUG -D_GLIBCXX_ASSERTIONS -DKEEP_ME)\n"  # as TVM's LLVM.cmake does
        "add_library(hdr INTERFACE)\n"
        "target_compile_options(hdr INTERFACE -D_DEBUG -DKEEP_TOO)\n"
        "add_subdirectory(inner)\n"
        "add_library(objs OBJECT a.cc b.cc c.cc)\n"
        "target_link_libraries(objs PUBLIC hdr)\n")
    (src / "tvm" / "inner" / "CMakeLists.txt").write_text("add_library(inner OBJECT d.cc)\n")
    (src / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.24)
list(APPEND CMAKE_MODULE_PATH "{ROOT}/cmake/modules")
project(demo CXX)
include(Compile)
{extra}
tvm_wheels_compile_settings()
add_subdirectory(tvm)
tvm_wheels_compile_fixups("${{CMAKE_CURRENT_SOURCE_DIR}}/tvm")
""")
    build = tmp_path / "build"
    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([CMAKE, "-S", str(src), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                           *defines], capture_output=True, text=True, env=env)


def _commands(tmp_path) -> list[str]:
    ninja = shutil.which("ninja", path=os.path.dirname(sys.executable)) or "ninja"
    out = subprocess.run([ninja, "-C", str(tmp_path / "build"), "-t", "commands"], capture_output=True, text=True,
                         check=True).stdout
    return [line for line in out.splitlines() if " -c " in line]


def test_release_flags_and_no_debug_definitions(tmp_path):
    r = _configure(tmp_path)
    assert r.returncode == 0, r.stderr
    commands = _commands(tmp_path)
    assert commands
    for cmd in commands:
        for name in SETTINGS["TVM_WHEELS_DROP_DEFINITIONS"].split(";"):
            assert f"-D{name}" not in cmd.split(), cmd  # from the directory and from the interface target
        assert "-DKEEP_ME" in cmd  # the other definitions stay
        assert SETTINGS["TVM_WHEELS_OPT_LEVEL"] in cmd.split() and "-O3" not in cmd.split()
    assert any("-DKEEP_TOO" in c for c in commands)


def test_sources_compile_in_unity_batches_except_the_listed_ones(tmp_path):
    r = _configure(tmp_path, extra='set(TVM_WHEELS_UNITY_SKIP "a.cc")')
    assert r.returncode == 0, r.stderr
    commands = _commands(tmp_path)
    objs = [c for c in commands if "objs.dir" in c]
    assert len(objs) == 2  # a.cc alone, b.cc + c.cc in one unity file
    unity = [c for c in objs if "unity_0_cxx.cxx" in c]
    assert len(unity) == 1 and not any("/b.cc" in c for c in objs)
    assert any(c.rstrip().endswith("a.cc") for c in objs)
    text = next((tmp_path / "build").rglob("unity_0_cxx.cxx")).read_text()
    # relative includes: clones in other directories give identical files (ccache hits)
    assert '#include "tvm/b.cc"' in text and str(tmp_path) not in text


def test_unity_batch_zero_turns_it_off(tmp_path):
    r = _configure(tmp_path, "-DTVM_WHEELS_UNITY_BATCH=0")
    assert r.returncode == 0, r.stderr
    assert not any("/Unity/" in c for c in _commands(tmp_path))


def test_a_batch_that_is_not_a_number_is_refused_with_the_fix(tmp_path):
    r = _configure(tmp_path, "-DTVM_WHEELS_UNITY_BATCH=lots")
    assert r.returncode != 0
    assert "TVM_WHEELS_UNITY_BATCH='lots'" in r.stderr and "TVM_WHEELS_UNITY_BATCH=16" in r.stderr


def test_every_source_kept_out_of_unity_batches_exists_in_tvm():
    skip = cmakedata.as_list(SETTINGS["TVM_WHEELS_UNITY_SKIP"])
    assert skip
    missing = [s for s in skip if not (ROOT / "tvm" / s).is_file()]
    assert missing == [], f"{missing}: moved or gone in this TVM; update TVM_WHEELS_UNITY_SKIP (cmake/compile.cmake)"
