"""Clean virtual environments with one TVM installed, and Python run in them: how the tests and
the benchmarks put a wheel (this project's or the official one) side by side with others."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import textwrap
import venv
from pathlib import Path

# The official wheel, for side-by-side runs. Its declared apache-tvm-ffi>=0.1.13.post2
# resolves to 0.1.15.post2, which crashes it; pin what it was released with.
OFFICIAL = ["apache-tvm==0.26.0", "apache-tvm-ffi==0.1.14.post1"]
# Packages a model test needs inside the venv under test (the ONNX frontend imports onnx).
MODEL_DEPS = ["onnx==1.23.2"]


class Venv:
    """A clean virtual environment with one TVM installed; runs Python in it."""

    def __init__(self, path: Path, label: str):
        self.path, self.label = path, label
        self.python = path / "bin" / "python"

    def pip(self, *args: str) -> None:
        subprocess.run([str(self.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args],
                       check=True)

    def argv(self) -> list[str]:
        return [str(self.python)]

    def environ(self) -> dict[str, str]:
        return dict(os.environ)

    def run(self, code: str, *, check: bool = True, env: dict | None = None, timeout: int = 1800,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
        # From a file, not -c: TVMScript parses the source of decorated functions.
        with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="snippet-", delete=False) as f:
            f.write(textwrap.dedent(code))
        try:
            proc = subprocess.run([*self.argv(), f.name], capture_output=True, text=True,
                                  env={**self.environ(), **(env or {})}, timeout=timeout, cwd=cwd)
        finally:
            os.unlink(f.name)
        if check and proc.returncode != 0:
            raise AssertionError(f"[{self.label}] exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n"
                                 f"{proc.stderr[-6000:]}")
        return proc

    def json(self, code: str, **kw) -> object:
        """Run code that prints one JSON document as its last line."""
        return json.loads(self.run(code, **kw).stdout.strip().splitlines()[-1])

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def tvm_dir(self) -> Path:
        """Where `import tvm` finds the package in this venv."""
        return Path(self.json("import json, os, tvm; print(json.dumps(os.path.dirname(tvm.__file__)))"))


def make_venv(path: Path, label: str, *requirements: str) -> Venv:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    env = Venv(path, label)
    env.pip(*requirements)
    return env
