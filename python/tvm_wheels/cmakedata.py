"""Read the project's CMake data files (cmake/presets/*.cmake, cmake/requirements.cmake).

Those files are data written in the subset of CMake that both CMake and this
module understand: ``set(NAME value...)`` (on one or several lines) and ``include(${CMAKE_CURRENT_LIST_DIR}/x.cmake)``
lines, and comments. Anything else is an error, so the two readers cannot drift.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

_SET = re.compile(r"^set\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*(.*?)\s*\)$")
_INCLUDE = re.compile(r"^include\(\s*\$\{CMAKE_CURRENT_LIST_DIR\}/([A-Za-z0-9_.-]+)\s*\)$")


class CMakeDataError(ValueError):
    pass


def _strip_comment(line: str) -> str:
    out, quoted = [], False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            break
        out.append(ch)
    return "".join(out).strip()


def _value(raw: str) -> str:
    """A set() value as CMake stores it: several arguments join into a ;-list."""
    words = shlex.split(raw, posix=True) if raw else []
    return ";".join(words)


def read(path: Path) -> dict[str, str]:
    """Variables a data file sets, after its includes, in CMake's order."""
    path = Path(path)
    values: dict[str, str] = {}
    pending, start = "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = _strip_comment(line)
        if not text:
            continue
        if pending or (text.startswith("set(") and not text.endswith(")")):
            # a set() spanning lines: join until its closing parenthesis
            pending, start = (pending + " " + text).strip(), start or number
            if not text.endswith(")"):
                continue
            text, pending, number, start = pending, "", start, 0
        if m := _INCLUDE.match(text):
            values.update(read(path.parent / m.group(1)))
        elif m := _SET.match(text):
            values[m.group(1)] = _value(m.group(2))
        else:
            raise CMakeDataError(f"{path}:{number}: only set(...) and include(...) lines belong in a data file: {line!r}")
    return values


def as_list(value: str) -> list[str]:
    return [v for v in value.split(";") if v]


def as_bool(value: str) -> bool:
    """CMake truthiness for the values a data file uses."""
    return value.upper() in {"1", "ON", "YES", "TRUE", "Y"}
