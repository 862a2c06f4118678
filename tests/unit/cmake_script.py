"""Run the project's CMake check functions in `cmake -P` script mode with fake inputs."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the pinned cmake of the test venv (tests/requirements.txt) even when the venv is not activated
CMAKE = shutil.which("cmake", path=os.path.dirname(sys.executable)) or shutil.which("cmake") or "cmake"


@dataclasses.dataclass
class Result:
    """stdout/stderr with whitespace collapsed: CMake re-wraps long messages."""

    returncode: int
    stdout: str
    stderr: str


def _flat(text: str) -> str:
    return " ".join(text.split())


def run(body: str, tmp_path: Path, env: dict | None = None) -> Result:
    script = tmp_path / "check.cmake"
    script.write_text(f'list(APPEND CMAKE_MODULE_PATH "{ROOT}/cmake/modules")\n{body}\n')
    p = subprocess.run([CMAKE, "-P", str(script)], capture_output=True, text=True, env=env, timeout=60)
    return Result(p.returncode, _flat(p.stdout), _flat(p.stderr))


GPU_CODES = "sm_75\nsm_80\nsm_86\nsm_89\nsm_90\nsm_100\nsm_120\n"


def fake_toolkit(root: Path, release: str = "13.0", cudart: str | None = "13", layout: str = "lib") -> Path:
    """bin/nvcc that answers --version and --list-gpu-code like nvcc, the runtime header and library."""
    (root / "bin").mkdir(parents=True)
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\n"
                    f'case "$1" in --list-gpu-code) printf "{GPU_CODES}";; '
                    f'*) echo "Cuda compilation tools, release {release}, V{release}.88";; esac\n')
    nvcc.chmod(0o755)
    (root / "include").mkdir()
    (root / "include" / "cuda_runtime.h").write_text("")
    if cudart:
        (root / layout).mkdir(parents=True)
        (root / layout / f"libcudart.so.{cudart}").write_text("")
    return root
