"""Commands the documents show, run as they are written (placeholders filled in)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import make_index

pytestmark = pytest.mark.wheel
ROOT = Path(__file__).resolve().parents[2]


def test_install_from_the_release_index(avx512_wheel, documented, tmp_path):
    """docs/release.md's index command against an index that tools/make_index.py made from the
    built cpu-avx512 wheel: pip takes the variant's wheel from the index and its dependencies from
    PyPI. The wheel is not imported (that needs AVX-512); its installed metadata is checked."""
    command = documented("docs/release.md", r"--index-url <index>/")
    assert command == documented("README.md", r"--index-url <index>/"), "README and docs/release.md differ"
    wheels = tmp_path / "dist"
    wheels.mkdir()
    shutil.copy2(avx512_wheel, wheels / avx512_wheel.name)
    assert make_index.build(wheels, tmp_path / "index") == {"cpu-avx512": [avx512_wheel.name]}
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = dict(os.environ, VIRTUAL_ENV=str(env_dir), PATH=f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}")
    command = command.replace("<index>", (tmp_path / "index").as_uri())
    proc = subprocess.run(command, shell=True, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    version = subprocess.run([str(env_dir / "bin" / "python"), "-c",
                              "from importlib.metadata import version; print(version('apache-tvm'), "
                              "version('apache-tvm-ffi'))"], capture_output=True, text=True, check=True).stdout.split()
    assert version[0] == "0.26.0+avx512" and version[1].startswith("0.1.1"), version


def test_wheelhouse_command_line_as_the_docs_type_it(documented):
    """docs/ci.md's `python tools/wheelhouse.py key --variant V` prints the content key; an unknown
    variant stops at once (exit 2) with the valid names, before anything is built."""
    assert documented("docs/ci.md", r"^python tools/wheelhouse.py key ")
    script = str(ROOT / "tools" / "wheelhouse.py")
    key = subprocess.run([sys.executable, script, "key", "--variant", "runtime"], capture_output=True, text=True,
                         timeout=1800)
    assert key.returncode == 0, key.stderr
    assert re.fullmatch(r"[0-9a-f]{64}", key.stdout.splitlines()[0])
    bad = subprocess.run([sys.executable, script, "build", "--variant", "cpu-avx1024"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2
    assert "cpu-avx1024" in bad.stderr and "cpu-avx512" in bad.stderr
