"""Facts about the machine this runs on, for the import guard, `select` and `doctor`.

CPU features come from numpy's runtime dispatch table, which asks the CPU
itself (CPUID, and XGETBV for the OS-enabled register state): /proc/cpuinfo
can report features that the CPU (or an emulator) does not execute.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from . import variants


def cpu_name() -> str:
    """The CPU's model name, for benchmark records (not for decisions: features come from CPUID)."""
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8", errors="replace"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def physical_cores(cpus: set[int] | None = None, sysfs: Path = Path("/sys/devices/system/cpu")) -> int:
    """Cores this process may run on, each core's hyper-threads counted once."""
    cpus = (os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))) \
        if cpus is None else cpus
    cores = set()
    for cpu in cpus:
        try:  # the same text ("0,32", "4-5") for every hyper-thread of one core
            cores.add((sysfs / f"cpu{cpu}" / "topology" / "thread_siblings_list").read_text().strip())
        except OSError:  # no topology (a container without /sys, another OS): a CPU is a core
            cores.add(str(cpu))
    return max(len(cores), 1)


def cpu_features() -> dict[str, bool]:
    try:
        from numpy._core._multiarray_umath import __cpu_features__  # numpy >= 2
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    return dict(__cpu_features__)


# The x86-64 microarchitecture levels of the psABI, highest first, with the names of numpy's
# CPUID groups for them (numpy >= 2.4): X86_V3 is AVX2, FMA, BMI1/2, F16C, MOVBE ... on top of v2.
X86_64_LEVELS = {"x86-64-v4": "X86_V4", "x86-64-v3": "X86_V3", "x86-64-v2": "X86_V2"}


def x86_64_level(features: dict[str, bool] | None = None) -> str | None:
    """The highest x86-64 level this CPU has ("x86-64" below v2); None where numpy's table
    has no level groups (numpy < 2.4)."""
    features = cpu_features() if features is None else features
    if not any(group in features for group in X86_64_LEVELS.values()):
        return None
    return next((level for level, group in X86_64_LEVELS.items() if features.get(group)), "x86-64")


def machine() -> str:
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def missing_features(required: list[str] | tuple[str, ...], features: dict[str, bool] | None = None) -> list[str]:
    features = cpu_features() if features is None else features
    return [f for f in required if not features.get(f, False)]


def cuda_driver_version() -> tuple[int, int] | None:
    """The CUDA version the installed driver supports (cuDriverGetVersion), None without a driver."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    v = ctypes.c_int()
    if cuda.cuDriverGetVersion(ctypes.byref(v)) != 0:
        return None
    return v.value // 1000, v.value % 1000 // 10


def driver_runs(variant: variants.Variant, driver: tuple[int, int] | None) -> bool:
    """Whether a driver runs a CUDA variant's code: CUDA's minor-version compatibility holds
    within a major, so a driver of the wheel's CUDA major (or newer) does."""
    return driver is not None and driver[0] >= int(variant.cuda.split(".")[0])


_DETECT = object()


def fitting_variants(features: dict[str, bool] | None = None, arch: str | None = None,
                     compiler: bool | None = None, driver=_DETECT) -> list[variants.Variant]:
    """Supported variants this host can run, the most specific first: a CUDA variant where the
    NVIDIA driver runs it (driver: cuDriverGetVersion's (major, minor), None for no driver),
    then by CPU features."""
    features = cpu_features() if features is None else features
    arch = arch or machine()
    driver = cuda_driver_version() if driver is _DETECT else driver
    fits = [
        v for v in variants.table()
        if v.supported and arch in v.archs and not missing_features(v.cpu_features, features)
        and (compiler is None or v.compiler == compiler) and (not v.cuda or driver_runs(v, driver))
    ]
    return sorted(fits, key=lambda v: (not v.cuda, -len(v.cpu_features), v.name))


def variant_fix(features: dict[str, bool] | None = None, compiler: bool | None = None,
                tvm_version: str | None = None) -> str:
    """What to install on a CPU that cannot run a variant: the most specific variant that fits it."""
    fits = fitting_variants(features, compiler=compiler)
    if not fits:  # e.g. an aarch64 CPU older than the aarch64-orin variant's Armv8.2-A
        official = f"apache-tvm=={tvm_version}" if tvm_version else "apache-tvm"
        return (f"no variant of tvm-wheels is built for this {machine()} CPU; install the official wheel, "
                f"built for the architecture's baseline: pip install '{official}'")
    fix = f"install the {fits[0].name} variant instead: TVM_WHEEL_VARIANT={fits[0].name} pip install ./"
    return fix + (f" (or apache-tvm=={fits[0].version(tvm_version)} from its index)" if tvm_version else "")
