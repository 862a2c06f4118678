"""Build progress: a real CMake + ninja build of a small project through cmake/modules/Progress.cmake."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from cmake_script import CMAKE, ROOT

sys.path.insert(0, str(ROOT / "cmake"))
import ninja_progress  # noqa: E402

SOURCES = 40


def _project(tmp_path, broken: int | None = None):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(SOURCES):
        body = "this is not C;" if i == broken else f"int f{i}(void) {{ return {i}; }}"
        (src / f"f{i}.c").write_text(body + "\n")
    (src / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.24)
list(APPEND CMAKE_MODULE_PATH "{ROOT}/cmake/modules")
include(Progress)
project(demo C)
add_library(demo STATIC {' '.join(f'f{i}.c' for i in range(SOURCES))})
""")
    build = tmp_path / "build"
    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    subprocess.run([CMAKE, "-S", str(src), "-B", str(build), "-G", "Ninja", f"-DPython_EXECUTABLE={sys.executable}"],
                   check=True, capture_output=True, env=env)
    return build, env


def test_build_log_shows_a_bar_every_few_percent(tmp_path):
    build, env = _project(tmp_path)
    cache = (build / "CMakeCache.txt").read_text()
    assert f"CMAKE_MAKE_PROGRAM:FILEPATH={build / 'ninja-progress'}" in cache
    proc = subprocess.run([CMAKE, "--build", str(build), "-j2"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bars = [line for line in proc.stdout.splitlines() if line.startswith("building [")]
    assert 10 <= len(bars) <= 22, proc.stdout  # every 5 %, not one line per object
    assert bars[-1].startswith("building [" + "#" * 30 + "] 41/41 100%")
    assert "elapsed" in bars[0] and "ETA" in bars[0]
    assert "Building C object" not in proc.stdout
    assert (build / "libdemo.a").exists()


def test_a_failing_compile_is_shown_whole_and_fails_the_build(tmp_path):
    build, env = _project(tmp_path, broken=7)
    proc = subprocess.run([CMAKE, "--build", str(build), "-j1"], capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    assert "FAILED: " in proc.stdout and "f7.c" in proc.stdout and "error" in proc.stdout


def test_terminal_bar_redraws_one_line():
    out, clock = io.StringIO(), iter(range(100))
    progress = ninja_progress.Progress(out, tty=True, now=lambda: float(next(clock)))
    for i in range(1, 5):
        progress.feed(f"[{i}/4] Building C object f{i}.o\n")
    progress.feed("warning: something\n")
    progress.close(succeeded=True)
    assert out.getvalue() == (
        "\rbuilding [.......] 1/4  25%  elapsed 00:01  ETA 00:03".replace("[.......]", "[" + "#" * 7 + "." * 23 + "]")
        + "\rbuilding [" + "#" * 15 + "." * 15 + "] 2/4  50%  elapsed 00:02  ETA 00:02"
        + "\rbuilding [" + "#" * 22 + "." * 8 + "] 3/4  75%  elapsed 00:03  ETA 00:01"
        + "\rbuilding [" + "#" * 30 + "] 4/4 100%  elapsed 00:04  ETA 00:00"
        + "\nwarning: something\n"
        + "\rbuilding [" + "#" * 30 + "] 4/4 100%  elapsed 00:05  ETA 00:00\n")


def test_anything_but_a_build_runs_ninja_untouched():
    assert not ninja_progress.is_build(["--version"]) and not ninja_progress.is_build(["-t", "restat"])
    assert ninja_progress.is_build(["-C", "build", "-j2", "all"])
