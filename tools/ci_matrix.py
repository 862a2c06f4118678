#!/usr/bin/env python3
"""The release workflow's build matrix, made from the variant table (cmake/presets/).

    python tools/ci_matrix.py        # {"include": [{"variant": "cpu", "arch": "x86_64", "runner": ...}, ...]}

One entry per supported variant and machine; the wheel is py3-none, so one
Python per entry (pyproject: [tool.cibuildwheel] build).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from tvm_wheels import variants  # noqa: E402

RUNNERS = {"x86_64": "ubuntu-24.04", "aarch64": "ubuntu-24.04-arm"}


def matrix() -> dict:
    return {"include": [{"variant": v.name, "label": v.label, "arch": arch, "runner": RUNNERS[arch]}
                        for v in variants.table() if v.supported for arch in v.archs]}


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    print(json.dumps(matrix()))
