"""What this wheel is and how it was built (tvm_wheels/_build_info.json, written by CMake)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

_PATH = Path(__file__).resolve().parent / "_build_info.json"


class NotBuilt(RuntimeError):
    pass


@functools.lru_cache(maxsize=1)
def load() -> dict:
    """The build info of the installed wheel; NotBuilt when running from a source tree."""
    try:
        return json.loads(_PATH.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotBuilt(
            "tvm_wheels is running from a source tree, not from a built wheel: there is no build info. "
            "Install the wheel: pip install ./"
        ) from None
