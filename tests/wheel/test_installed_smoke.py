"""tests/installed (what release CI runs in cibuildwheel's venv), run inside each variant's clean venv."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel
INSTALLED = Path(__file__).resolve().parent.parent / "installed"


@pytest.mark.parametrize("venv_fixture,variant", [("cpu_venv", "cpu"), pytest.param("avx512_venv", "cpu-avx512", marks=pytest.mark.avx512_host),
                                                  ("runtime_venv", "runtime")])
def test_installed_suite_passes(request, venv_fixture, variant):
    venv = request.getfixturevalue(venv_fixture)
    venv.pip("pytest")
    proc = venv.run(f"import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-m', 'pytest', '-q', "
                    f"'-p', 'no:cacheprovider', '--confcutdir', {str(INSTALLED)!r}, {str(INSTALLED)!r}]))", check=False,
                    env={"TVM_WHEEL_VARIANT": variant}, cwd=INSTALLED)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
