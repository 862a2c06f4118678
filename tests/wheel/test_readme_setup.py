"""The README's set-up commands, run as a newcomer types them.

The other tests take their wheels from tools/wheelhouse.py (no build isolation, a build
environment it provisions, auditwheel's repair). This one runs the README's first command
itself: `pip install ./` in a new virtual environment, with pip's build isolation, from the
checkout CI cloned, with the machine's own CMake on PATH (Debian 12's 3.25 in CI, older than the
build needs: scikit-build-core must bring PyPI's). It comes after the cpu wheel's build, whose
objects it takes from ccache (cmake/modules/LLVM.cmake says how the isolated environment's LLVM
keeps the compile lines the same).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from packaging.version import Version

import wheelhouse

ROOT = Path(__file__).resolve().parents[2]
# scikit-build-core's build-dir for the default variant (pyproject.toml: build/{wheel_tag})
README_BUILD_DIR = ROOT / "build" / "py3-none-linux_x86_64"


def newcomer_env(venv_dir: Path) -> dict[str, str]:
    """An activated venv on the PATH a newcomer has: the test runner's own venv (whose bin holds
    a CMake 4 from tests/requirements.txt) is not on it."""
    own_bin = str(Path(sys.prefix) / "bin")
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != own_bin]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "TVM_WHEEL"))}
    env.update(VIRTUAL_ENV=str(venv_dir), PATH=os.pathsep.join([str(venv_dir / "bin"), *path]))
    return env


def assert_objects_from_ccache(cpu_wheel: Path) -> None:
    """Every compile of the build in README_BUILD_DIR came from ccache, as many as the cpu wheel's
    build made (its record beside it): pip's isolated environment changed no compile line."""
    built = json.loads((cpu_wheel.parent / "manifest.json").read_text())["ccache"]["."]
    record = wheelhouse.ccache_record(README_BUILD_DIR)["."]
    assert record["calls"] == built["calls"] and record["missed"] == [], (record, built)


@pytest.mark.wheel
def test_readme_install_builds_and_installs_the_cpu_wheel(cpu_wheel, readme_setup, tmp_path):
    install, _ = readme_setup
    env_dir = tmp_path / ".venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)  # python3 -m venv .venv
    env = newcomer_env(env_dir)
    system_cmake = shutil.which("cmake", path=env["PATH"])
    assert system_cmake, "no CMake on the machine's PATH: .ci/run installs Debian's (the case this test is for)"
    system_version = subprocess.run([system_cmake, "--version"], capture_output=True, text=True,
                                    check=True).stdout.split()[2]
    minimum = re.search(r'^cmake\.version = ">=([0-9.]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert Version(system_version) < Version(minimum), \
        f"the system CMake {system_version} is not older than {minimum}: .ci/run installs the distribution's older one"
    shutil.rmtree(README_BUILD_DIR, ignore_errors=True)  # a fresh clone has none
    proc = subprocess.run(install, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, f"`{install}` failed (system CMake {system_version})\n{proc.stdout[-3000:]}\n" \
                                 f"{proc.stderr[-6000:]}"

    # The CMake that configured it is at least the one pyproject.toml asks for, whatever the system had.
    cache = (README_BUILD_DIR / "CMakeCache.txt").read_text()
    used = ".".join(re.search(rf"^CMAKE_CACHE_{p}_VERSION:INTERNAL=(\d+)$", cache, re.M).group(1)
                    for p in ("MAJOR", "MINOR", "PATCH"))
    assert Version(used) >= Version(minimum), (used, minimum, system_version)

    # What a newcomer does next: import it, see the variant, compile and run something.
    python = str(env_dir / "bin" / "python")
    out = subprocess.run([python, "-c", """
import json, numpy as np, tvm
from tvm import te
n = 1024
A = te.placeholder((n,), name="A"); B = te.compute((n,), lambda i: A[i] * 2.0 + 1.0, name="B")
f = tvm.build(te.create_prim_func([A, B]), target="llvm")
a = np.random.rand(n).astype("float32"); b = tvm.runtime.tensor(np.zeros(n, "float32"))
f["main"](tvm.runtime.tensor(a), b)
print(json.dumps({"version": tvm.__version__, "ok": bool(np.allclose(b.numpy(), a * 2 + 1))}))
"""], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-4000:]
    assert json.loads(out.stdout.splitlines()[-1]) == {"version": "0.26.0+cpu", "ok": True}
    info = json.loads(subprocess.run([str(env_dir / "bin" / "tvm-wheels"), "info", "--json"], cwd=tmp_path, env=env,
                                     capture_output=True, text=True, check=True).stdout)
    assert info["variant"] == "cpu" and info["llvm_source"].startswith("pip (")

    assert_objects_from_ccache(cpu_wheel)
    shutil.rmtree(README_BUILD_DIR, ignore_errors=True)


@pytest.mark.tier2
@pytest.mark.parametrize("frontend", ["python -m build --wheel", "uv build --wheel", "uv pip install ./"])
def test_other_build_frontends_build_the_cpu_wheel(cpu_wheel, frontend, tmp_path):
    """docs/build.md: python -m build, uv build and uv pip install ./ go through the same backend,
    with the same CMake rule (Debian's on PATH, PyPI's taken) and the objects from ccache."""
    env_dir = tmp_path / ".venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = newcomer_env(env_dir)
    subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "build", "uv"], env=env, check=True)
    shutil.rmtree(README_BUILD_DIR, ignore_errors=True)
    out = tmp_path / "dist"
    command = frontend if frontend.startswith("uv pip") else f"{frontend} -o {out}"  # -o: both spell it so
    proc = subprocess.run(command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    if frontend.startswith("uv pip"):
        version = subprocess.run([str(env_dir / "bin" / "python"), "-c", "import tvm; print(tvm.__version__)"],
                                 cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.strip()
        assert version == "0.26.0+cpu"
    else:
        (wheel,) = out.glob("*.whl")
        assert wheel.name.startswith("apache_tvm-0.26.0+cpu-py3-none-linux_x86_64")
    assert_objects_from_ccache(cpu_wheel)
    shutil.rmtree(README_BUILD_DIR, ignore_errors=True)
