"""The sdist carries the submodule sources and builds a wheel with no git repository or git tool."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
import zipfile

import pytest

pytestmark = pytest.mark.wheel


def test_sdist_builds_the_runtime_wheel_without_git(tmp_path):
    import wheelhouse
    from tvm_wheels import variants

    env_python = str(wheelhouse.build_env() / "bin" / "python")
    subprocess.run([env_python, "-c", f"from scikit_build_core.build import build_sdist; build_sdist({str(tmp_path)!r})"],
                   cwd=wheelhouse.ROOT, check=True, env=dict(os.environ, TVM_WHEEL_VARIANT="runtime"))
    (sdist,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        names = t.getnames()
        t.extractall(tmp_path / "src", filter="data")
    (top,) = (tmp_path / "src").iterdir()
    req = variants.requirements()
    for f in variants.cmakedata.as_list(req["TVM_WHEELS_SOURCE_FILES"]):
        assert f"{top.name}/tvm/{f}" in names, f
    assert not any(n.endswith("/.git") and n.count("/") == 2 for n in names)  # no repository of its own

    env = dict(os.environ, TVM_WHEEL_VARIANT="runtime", CMAKE_ARGS="-DGIT_EXECUTABLE=/nonexistent/git",
               SKBUILD_BUILD_DIR="build/runtime",  # the layout of a checkout build: ccache hits
               PATH=f"{wheelhouse.build_env() / 'bin'}{os.pathsep}{os.environ['PATH']}")
    env.pop("TVM_WHEELS_PROJECT_COMMIT", None)
    subprocess.run([env_python, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w",
                    str(tmp_path / "dist"), str(top)], check=True, env=env)
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    info = json.loads(zipfile.ZipFile(wheel).read("tvm_wheels/_build_info.json"))
    assert info["variant"] == "runtime" and info["version"] == "0.26.0+runtime"
    assert info["tvm_commit"] == req["TVM_WHEELS_TVM_COMMIT"]  # from the pin, not from git
    assert info["project_commit"] == "unknown"
