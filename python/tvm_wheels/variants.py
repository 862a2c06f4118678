"""The variant table: one preset file per wheel variant (cmake/presets/NAME.cmake).

CMake includes the same files; the installed wheel carries a copy
(tvm_wheels/cmake/), so `tvm-wheels variants` and `select` work after install.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from . import cmakedata

DEFAULT = "cpu"
ENV = "TVM_WHEEL_VARIANT"


def cmake_dir() -> Path:
    """The project's cmake/ data: the wheel's copy, or the source tree's."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "cmake", here.parent.parent / "cmake"):
        if (candidate / "presets").is_dir():
            return candidate
    raise FileNotFoundError(f"no cmake/presets next to {here}")


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    label: str
    summary: str
    archs: tuple[str, ...]
    toolchain: str
    status: str
    compiler: bool
    march: str
    cpu_features: tuple[str, ...]
    host_target: str
    host_mattr: tuple[str, ...]
    tuning_db: tuple[str, ...]
    properties: tuple[str, ...]
    repair_exclude: tuple[str, ...]
    ci_tier: int
    probe_build: str
    probe_sources: tuple[str, ...]
    cuda: str
    cuda_pip: tuple[str, ...]
    cuda_archs: tuple[str, ...]
    cutlass: bool
    dependencies: tuple[str, ...]
    extras: dict[str, tuple[str, ...]]
    options: dict[str, str]

    @property
    def supported(self) -> bool:
        return self.status == "supported"

    def version(self, tvm_version: str) -> str:
        return f"{tvm_version}+{self.label}"

    def cross(self, build_machine: str) -> bool:
        """Whether a build on build_machine is a cross build (cmake/modules/Toolchain.cmake)."""
        return bool(self.toolchain) and build_machine not in self.archs


def load(name: str, directory: Path | None = None) -> Variant:
    directory = directory or cmake_dir() / "presets"
    path = directory / f"{name}.cmake"
    if not path.is_file():
        raise UnknownVariant(name, names(directory))
    v = cmakedata.read(path)
    return Variant(
        name=name,
        label=v["TVM_WHEEL_LABEL"],
        summary=v.get("TVM_WHEEL_SUMMARY", ""),
        archs=tuple(cmakedata.as_list(v.get("TVM_WHEEL_ARCHS", ""))),
        toolchain=v.get("TVM_WHEEL_TOOLCHAIN", ""),
        status=v.get("TVM_WHEEL_STATUS", "supported"),
        compiler=cmakedata.as_bool(v.get("TVM_WHEEL_COMPILER", "ON")),
        march=v.get("TVM_WHEEL_MARCH", ""),
        cpu_features=tuple(cmakedata.as_list(v.get("TVM_WHEEL_CPU_FEATURES", ""))),
        host_target=v.get("TVM_WHEEL_HOST_TARGET", ""),
        host_mattr=tuple(cmakedata.as_list(v.get("TVM_WHEEL_HOST_MATTR", ""))),
        tuning_db=tuple(cmakedata.as_list(v.get("TVM_WHEEL_TUNING_DB", ""))),
        properties=tuple(cmakedata.as_list(v.get("TVM_WHEEL_VARIANT_PROPERTIES", ""))),
        repair_exclude=tuple(cmakedata.as_list(v.get("TVM_WHEEL_REPAIR_EXCLUDE", ""))),
        ci_tier=int(v.get("TVM_WHEEL_CI_TIER", "1")),
        probe_build=v.get("TVM_WHEEL_PROBE_BUILD", "main"),
        probe_sources=tuple(cmakedata.as_list(v.get("TVM_WHEEL_PROBE_SOURCES", ""))),
        cuda=v.get("TVM_WHEEL_CUDA", ""),
        cuda_pip=tuple(cmakedata.as_list(v.get("TVM_WHEEL_CUDA_PIP", ""))),
        cuda_archs=tuple(cmakedata.as_list(v.get("TVM_WHEEL_CUDA_ARCHS", ""))),
        cutlass=cmakedata.as_bool(v.get("TVM_WHEEL_CUTLASS", "OFF")),
        dependencies=tuple(cmakedata.as_list(v.get("TVM_WHEEL_DEPENDENCIES", ""))),
        extras=_extras(cmakedata.as_list(v.get("TVM_WHEEL_EXTRAS", ""))),
        options={k: val for k, val in v.items() if not k.startswith("TVM_WHEEL_")},
    )


def _extras(entries: list[str]) -> dict[str, tuple[str, ...]]:
    """TVM_WHEEL_EXTRAS: "extra :: requirement" entries, grouped by extra."""
    extras: dict[str, list[str]] = {}
    for entry in entries:
        name, sep, req = (part.strip() for part in entry.partition("::"))
        if not (sep and name and req):
            raise cmakedata.CMakeDataError(f"TVM_WHEEL_EXTRAS entry {entry!r} is not 'extra :: requirement'")
        extras.setdefault(name, []).append(req)
    return {name: tuple(reqs) for name, reqs in extras.items()}


def names(directory: Path | None = None) -> list[str]:
    directory = directory or cmake_dir() / "presets"
    return sorted(p.stem for p in directory.glob("*.cmake"))


def table(directory: Path | None = None) -> list[Variant]:
    return [load(n, directory) for n in names(directory)]


def requirements() -> dict[str, str]:
    """cmake/requirements.cmake: the toolchain facts the build checks."""
    return cmakedata.read(cmake_dir() / "requirements.cmake")


def selected(environ: os._Environ[str] | dict[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    return environ.get(ENV) or DEFAULT


class UnknownVariant(ValueError):
    def __init__(self, name: str, known: list[str]):
        super().__init__(
            f"tvm-wheels: unknown variant {name!r}. Valid variants: {', '.join(known)}.\n"
            f"Fix: {ENV}=<one of those> pip install ./"
        )
