"""The configure-time checks (cmake/modules/Checks.cmake, LLVM.cmake) fail with the fix."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from cmake_script import CMAKE, run


def test_gcc_below_floor_is_refused_with_recommendation(tmp_path):
    r = run('include(Checks)\ntvm_wheels_check_compiler(GNU 6.3.0 /usr/bin/g++-6)', tmp_path)
    assert r.returncode != 0
    assert "GCC 6.3.0 (/usr/bin/g++-6) is too old" in r.stderr
    assert "GCC >= 7.1 (11+ recommended)" in r.stderr
    assert "apt-get install g++-12" in r.stderr


def test_gcc_between_floor_and_recommended_warns(tmp_path):
    r = run('include(Checks)\ntvm_wheels_check_compiler(GNU 9.4.0 /usr/bin/g++-9)', tmp_path)
    assert r.returncode == 0
    assert "GCC 11+ is recommended" in r.stderr


def test_current_gcc_passes_silently(tmp_path):
    r = run('include(Checks)\ntvm_wheels_check_compiler(GNU 12.2.0 /usr/bin/g++)', tmp_path)
    assert r.returncode == 0 and r.stderr == ""


def test_empty_submodule_lists_missing_files_and_fix(tmp_path):
    (tmp_path / "tvm").mkdir()
    r = run(f'include(Checks)\ntvm_wheels_check_sources("{tmp_path / "tvm"}")', tmp_path)
    assert r.returncode != 0
    assert "3rdparty/tvm-ffi/CMakeLists.txt" in r.stderr
    assert "git submodule update --init --recursive" in r.stderr


def test_real_sources_pass(tmp_path):
    from cmake_script import ROOT

    r = run(f'include(Checks)\ntvm_wheels_check_sources("{ROOT / "tvm"}")', tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("cores,mem,expected", [(2, 24000, 2), (16, 16000, 8), (4, 3000, 1)])
def test_default_jobs_fit_cores_and_memory(tmp_path, cores, mem, expected):
    r = run(f'include(Checks)\ntvm_wheels_plan_jobs({cores} {mem} "" j)\nmessage(STATUS "jobs=${{j}}")', tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"jobs={expected}" in r.stdout


def test_too_little_memory_for_one_job_names_swap(tmp_path):
    r = run('include(Checks)\ntvm_wheels_plan_jobs(8 1500 "" j)', tmp_path)
    assert r.returncode != 0
    assert "1500 MB of memory is available" in r.stderr and "swapon" in r.stderr


def test_requested_jobs_beyond_memory_are_refused_with_a_count_that_fits(tmp_path):
    r = run('include(Checks)\ntvm_wheels_plan_jobs(16 8000 "8" j)', tmp_path)
    assert r.returncode != 0
    assert "TVM_WHEELS_JOBS=8 needs about 16000 MB" in r.stderr
    assert "TVM_WHEELS_JOBS=4 pip install ./" in r.stderr


def _fake_llvm_config(directory, name, version, static=True):
    path = directory / name
    path.write_text(f"""#!/bin/sh
case "$*" in
  --version) echo {version} ;;
  *--link-static*) {'echo /fake/libLLVMCore.a' if static else 'echo "llvm-config: error: missing: libLLVMCore.a" >&2; exit 1'} ;;
  *) exit 0 ;;
esac
""")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _find(tmp_path, choice, fakes):
    env = dict(os.environ, PATH=f"{fakes}:/usr/bin:/bin")
    return run(f'include(LLVM)\ntvm_wheels_find_llvm("{choice}" "")\n'
               'message(STATUS "found=${TVM_WHEELS_LLVM_CONFIG} ${TVM_WHEELS_LLVM_VERSION} ${TVM_WHEELS_LLVM_SOURCE}")',
               tmp_path, env=env)


def test_fake_llvm_config_17_without_static_libs_is_rejected_with_reason(tmp_path):
    fakes = tmp_path / "bin"
    fakes.mkdir()
    _fake_llvm_config(fakes, "llvm-config-17", "17.0.6", static=False)
    r = _find(tmp_path, "system", fakes)
    assert r.returncode != 0
    assert "llvm-config-17: LLVM 17.0.6 has no static libraries" in r.stderr
    assert "apt-get install llvm-17-dev" in r.stderr
    assert "TVM_WHEELS_LLVM=/path/to/llvm-config" in r.stderr


def test_unsupported_major_is_rejected(tmp_path):
    fakes = tmp_path / "bin"
    fakes.mkdir()
    cfg = _fake_llvm_config(fakes, "llvm-config-23", "23.1.1")
    r = _find(tmp_path, str(cfg), fakes)
    assert r.returncode != 0
    assert "LLVM 23.1.1 is outside the majors TVM 0.26.0 supports (15..22)" in r.stderr


def test_newest_supported_suffixed_llvm_config_is_found(tmp_path):
    fakes = tmp_path / "bin"
    fakes.mkdir()
    _fake_llvm_config(fakes, "llvm-config-17", "17.0.6")
    _fake_llvm_config(fakes, "llvm-config-19", "19.1.7")
    _fake_llvm_config(fakes, "llvm-config-23", "23.1.1")
    r = _find(tmp_path, "system", fakes)
    assert r.returncode == 0, r.stderr
    assert f"found={fakes}/llvm-config-19 19.1.7 system" in r.stdout


def test_unknown_llvm_choice_is_refused(tmp_path):
    r = _find(tmp_path, "latest", tmp_path)
    assert r.returncode != 0
    assert "TVM_WHEELS_LLVM='latest' is not 'pip', 'system' or a path to llvm-config" in r.stderr


def test_llvm_is_named_through_a_link_in_the_build_tree(tmp_path):
    """pip's isolated build environment is a new directory on every build: TVM gets an
    llvm-config whose paths are the build tree's link to it, so compile lines stay the same."""
    prefix = tmp_path / "pip-build-env-x1y2" / "site-packages" / "llvm"
    (prefix / "include").mkdir(parents=True)
    real = tmp_path / "llvm-config"
    real.write_text(f"""#!/bin/sh
case "$1" in
  --prefix) echo {prefix} ;;
  --cxxflags) echo "-I{prefix}/include -std=c++17 -D_GNU_SOURCE" ;;
  *) echo "llvm-config: error: unknown $1" >&2; exit 3 ;;
esac
""")
    real.chmod(0o755)
    build = tmp_path / "build"
    build.mkdir()
    r = run(f'set(CMAKE_BINARY_DIR "{build}")\ninclude(LLVM)\n'
            f'tvm_wheels_llvm_config_in_build_tree("{real}" "pip (xtc-llvm-dev)" cfg)\n'
            f'message(STATUS "cfg=${{cfg}}")\n'
            f'tvm_wheels_llvm_config_in_build_tree("{real}" "system" sys)\nmessage(STATUS "sys=${{sys}}")', tmp_path)
    assert r.returncode == 0, r.stderr
    wrapper = build / "tvm-wheels-llvm-config"
    assert f"cfg={wrapper}" in r.stdout
    assert (build / "tvm-wheels-llvm").resolve() == prefix.resolve()
    assert f"sys={real}" in r.stdout  # a system LLVM keeps its own paths (/usr/include stays implicit)

    def ask(*args):
        import subprocess

        return subprocess.run([str(wrapper), *args], capture_output=True, text=True)

    assert ask("--prefix").stdout == f"{build}/tvm-wheels-llvm\n"
    assert ask("--cxxflags").stdout == f"-I{build}/tvm-wheels-llvm/include -std=c++17 -D_GNU_SOURCE\n"
    failed = ask("--bogus")
    assert failed.returncode == 3 and "unknown --bogus" in failed.stderr  # the real one's failure, unchanged


def test_a_cmake_older_than_pyproject_asks_is_refused_with_the_fix(tmp_path):
    """What a newcomer's Debian 12 has on PATH (3.25): configuring by hand with it stops at
    once, naming pyproject.toml's minimum and the fix, before TVM's own CMake files fail."""
    import re
    import subprocess

    from cmake_script import ROOT

    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != os.path.dirname(CMAKE))
    system = shutil.which("cmake", path=path)
    assert system, "no system CMake on PATH: .ci/run installs the distribution's (Debian 12: 3.25)"
    version = subprocess.run([system, "--version"], capture_output=True, text=True, check=True).stdout.split()[2]
    minimum = re.search(r'^cmake\.version = ">=([0-9.]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert tuple(map(int, version.split(".")[:2])) < tuple(map(int, minimum.split("."))), \
        f"the system CMake {version} is not older than {minimum}: this test needs the distribution's older one"
    p = subprocess.run([system, "-S", str(ROOT), "-B", str(tmp_path / "b")], capture_output=True, text=True,
                       timeout=120)
    err = " ".join(p.stderr.split())
    assert p.returncode != 0
    assert f"CMake {version} ({system}) is older than {minimum}" in err
    assert "pip install ./" in err and f"pip install 'cmake>={minimum}'" in err
    assert "tvm-ffi" not in err.split("Fix")[1] and "3rdparty" not in err  # ours, not TVM's own failure
