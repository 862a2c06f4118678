"""Run the project's CMake check functions in `cmake -P` script mode with fake inputs."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CMAKE = shutil.which("cmake") or "cmake"


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
