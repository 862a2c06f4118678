"""`tvm-wheels doctor`: the build's requirements checked on this machine, each failure with its fix.

Thresholds come from cmake/requirements.cmake, the file CMake's configure
checks include: one definition of "GCC >= 7.1, 11+ recommended", read twice.
Before a build (from the source tree) it checks the toolchain, LLVM, sources,
memory and the variant's hardware; after install it checks the installed
wheel against this host.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

from . import buildinfo, cmakedata, host, variants

PASS, INFO, WARN, FAIL = "pass", "info", "warn", "fail"  # info: a fact that needs no action


@dataclasses.dataclass
class Check:
    name: str
    status: str
    detail: str
    fix: str = ""


def _out(cmd: list[str]) -> str | None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def _version(text: str | None) -> tuple[int, ...] | None:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return tuple(int(g) for g in m.groups() if g is not None) if m else None


def _vt(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in s.split("."))


def check_compiler(req: dict, env=os.environ) -> Check:
    cxx = env.get("CXX") or shutil.which("c++") or shutil.which("g++") or "g++"
    banner = _out([cxx, "--version"])
    if banner is None:
        return Check("C++ compiler", FAIL, f"{cxx} not found",
                     "apt-get install g++ (Debian/Ubuntu), or set CXX to a C++17 compiler")
    clang = "clang" in banner.lower()
    ver = _out([cxx, "-dumpfullversion"]) or _out([cxx, "-dumpversion"]) or banner
    v = _version(ver) or (0,)
    kind = "Clang" if clang else "GCC"
    floor = _vt(req["TVM_WHEELS_CLANG_MIN" if clang else "TVM_WHEELS_GCC_MIN"])
    rec = _vt(req["TVM_WHEELS_CLANG_RECOMMENDED" if clang else "TVM_WHEELS_GCC_RECOMMENDED"])
    text = f"{kind} {'.'.join(map(str, v))} ({cxx})"
    fix = "apt-get install g++-12, then CXX=g++-12 CC=gcc-12 pip install ./"
    if v < floor:
        return Check("C++ compiler", FAIL, f"{text}: TVM needs C++17, {kind} >= "
                     f"{'.'.join(map(str, floor))} ({'.'.join(map(str, rec))}+ recommended)", fix)
    if v < rec:
        return Check("C++ compiler", WARN, f"{text}: works; {kind} {'.'.join(map(str, rec))}+ recommended", fix)
    return Check("C++ compiler", PASS, text)


def check_tool(name: str, minimum: str) -> Check:
    path = shutil.which(name)
    v = _version(_out([path, "--version"])) if path else None
    if v is None:
        return Check(name, WARN, "not on PATH; pip installs it into the build environment of `pip install ./`",
                     f"pip install {name}  (only needed for builds without isolation)")
    if v < _vt(minimum):
        return Check(name, WARN, f"{'.'.join(map(str, v))} at {path} is older than {minimum}; pip's build "
                     "environment brings its own", f"pip install -U {name}")
    return Check(name, PASS, f"{'.'.join(map(str, v))} ({path})")


def llvm_configs() -> list[str]:
    """Every llvm-config this machine offers: the `llvm` package of this Python, PATH, /usr/lib/llvm-*."""
    found = []
    try:
        import importlib.util

        spec = importlib.util.find_spec("llvm")
        if spec and spec.submodule_search_locations:
            found.append(os.path.join(list(spec.submodule_search_locations)[0], "bin", "llvm-config"))
    except (ImportError, ValueError):
        pass
    for d in os.environ.get("PATH", "").split(os.pathsep):
        found += sorted(glob.glob(os.path.join(d, "llvm-config*")))
    found += sorted(glob.glob("/usr/lib/llvm-*/bin/llvm-config"))
    unique = {}
    for p in found:
        if os.access(p, os.X_OK):
            unique.setdefault(os.path.realpath(p), p)  # /bin and /usr/bin are one directory on merged-/usr systems
    return list(unique.values())


def check_llvm(req: dict) -> list[Check]:
    lo, hi = int(req["TVM_WHEELS_LLVM_MIN"]), int(req["TVM_WHEELS_LLVM_MAX"])
    pip_llvm = " ".join(cmakedata.as_list(req["TVM_WHEELS_PIP_LLVM"]))
    checks, usable = [], 0
    for cfg in llvm_configs():
        ver = _out([cfg, "--version"])
        v = _version(ver)
        if v is None:
            checks.append(Check(f"LLVM {cfg}", WARN, "does not run"))
            continue
        static = _out([cfg, "--link-static", "--libfiles"]) is not None
        ok_major = lo <= v[0] <= hi
        detail = f"LLVM {ver}, {'static' if static else 'shared only'}, " + \
            (f"supported ({lo}..{hi})" if ok_major else f"not supported by TVM {req['TVM_WHEELS_TVM_VERSION']} "
                                                         f"({lo}..{hi})")
        if ok_major and static:
            usable += 1
            checks.append(Check(f"LLVM {cfg}", PASS, detail + f"; use it: TVM_WHEELS_LLVM={cfg} pip install ./"))
        else:
            checks.append(Check(f"LLVM {cfg}", INFO, detail + "; the build skips it",
                                f"apt-get install llvm-{v[0]}-dev" if ok_major else ""))
    checks.append(Check("LLVM for the build", PASS,
                        f"pip provisions {pip_llvm} by default" + (f"; {usable} usable system LLVM(s) above" if usable
                                                                  else "")))
    return checks


def check_sources(root: Path, req: dict) -> Check:
    missing = [f for f in cmakedata.as_list(req["TVM_WHEELS_SOURCE_FILES"]) if not (root / "tvm" / f).exists()]
    if missing:
        return Check("TVM sources", FAIL, f"missing under tvm/: {', '.join(missing)}",
                     "git submodule update --init --recursive")
    return Check("TVM sources", PASS, "tvm/ and its submodules are complete")


def meminfo(path: str = "/proc/meminfo") -> dict[str, int]:
    """MemAvailable etc. in MB."""
    out = {}
    for line in Path(path).read_text().splitlines():
        key, _, rest = line.partition(":")
        out[key] = int(rest.split()[0]) // 1024
    return out


def check_memory(req: dict, cores: int | None = None, mem_mb: int | None = None, env=os.environ) -> Check:
    cores = cores or os.cpu_count() or 1
    mem_mb = mem_mb if mem_mb is not None else meminfo()["MemAvailable"]
    per_job = int(req["TVM_WHEELS_MB_PER_JOB"])
    fit = mem_mb // per_job
    swap = ("add swap: fallocate -l 4G /swapfile && chmod 600 /swapfile && mkswap /swapfile && swapon /swapfile")
    if fit < 1:
        return Check("memory", FAIL, f"{mem_mb} MB available; one compile job needs ~{per_job} MB", swap)
    asked = env.get("TVM_WHEELS_JOBS")
    if asked and int(asked) > fit:
        return Check("memory", FAIL, f"TVM_WHEELS_JOBS={asked} needs ~{int(asked) * per_job} MB, {mem_mb} MB "
                     "available", f"TVM_WHEELS_JOBS={fit} pip install ./ (or unset it), or {swap}")
    jobs = int(asked) if asked else min(cores, fit)
    return Check("memory", PASS, f"{cores} cores, {mem_mb} MB available: the build runs {jobs} compile jobs")


def check_cpu(variant: variants.Variant, features: dict | None = None) -> Check:
    missing = host.missing_features(variant.cpu_features, features)
    if host.machine() not in variant.archs:
        return Check("CPU", FAIL, f"{variant.name} is built for {', '.join(variant.archs)}, this is {host.machine()}",
                     "tvm-wheels select")
    if missing:
        return Check("CPU", FAIL, f"{variant.name} needs {', '.join(variant.cpu_features)}; missing "
                     f"{', '.join(missing)}", host.variant_fix(features))
    return Check("CPU", PASS, f"{variant.name} runs here" + (f" ({', '.join(variant.cpu_features)})"
                                                           if variant.cpu_features else ""))


def check_cross(variant: variants.Variant) -> Check:
    """A variant of another architecture, cross-built here (cmake/toolchains/): its compiler, and
    qemu-user, which runs its LLVM's llvm-config during the build and its tests."""
    arch = variant.archs[0]
    missing = [t for t in (f"{arch}-linux-gnu-g++", f"qemu-{arch}") if not shutil.which(t)]
    if missing:
        return Check("cross toolchain", FAIL, f"{variant.name} is cross-built on {host.machine()} for {arch}: "
                     f"{', '.join(missing)} not found", f"apt-get install g++-{arch}-linux-gnu qemu-user")
    return Check("cross toolchain", PASS, f"{variant.name} is cross-built here for {arch} "
                 f"(python tools/wheelhouse.py build --variant {variant.name}); it runs on its board")


def _nvcc_release(root: str) -> tuple[int, ...] | None:
    banner = _out([os.path.join(root, "bin", "nvcc"), "--version"])
    m = re.search(r"release (\d+)\.(\d+)", banner or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def system_cuda_roots(env=os.environ) -> list[str]:
    """Where TVM_WHEELS_CUDA=system looks, in CMake's order (cmake/modules/CudaToolkit.cmake)."""
    roots = [env[k] for k in ("CUDA_HOME", "CUDA_PATH") if env.get(k)]
    if nvcc := shutil.which("nvcc", path=env.get("PATH")):
        roots.append(str(Path(nvcc).resolve().parent.parent))
    roots.append("/usr/local/cuda")
    return list(dict.fromkeys(roots))


def check_cuda_toolkit(variant: variants.Variant, env=os.environ) -> Check:
    want = _vt(variant.cuda)
    choice = env.get("TVM_WHEELS_CUDA", "")
    if choice in ("", "pip"):
        who = ("tools/wheelhouse.py provisions" if variant.cross(host.machine())
               else "pip provisions")
        return Check("CUDA toolkit", PASS, f"{who} CUDA {variant.cuda} by default: {' '.join(variant.cuda_pip)}")
    fix = (f"pip install ./ (pip provisions CUDA {variant.cuda}), or TVM_WHEELS_CUDA=/path/to/cuda-{want[0]}.x "
           "pip install ./")
    rejected = []
    for root in system_cuda_roots(env) if choice == "system" else [choice]:
        have = _nvcc_release(root)
        if have and have[0] == want[0] and have >= want:
            return Check("CUDA toolkit", PASS, f"CUDA {have[0]}.{have[1]} at {root}")
        rejected.append(f"{root}: " + (f"CUDA {have[0]}.{have[1]}" if have else "no bin/nvcc"))
    return Check("CUDA toolkit", FAIL, f"no CUDA {want[0]}.x >= {variant.cuda} ({'; '.join(rejected)})", fix)


def check_cuda_driver(variant: variants.Variant, driver: tuple[int, int] | None) -> Check:
    if driver is None:
        return Check("CUDA driver", WARN, "no libcuda.so.1: this machine can build but not run CUDA code",
                     "install the NVIDIA driver on the machine that runs the wheel")
    want = _vt(variant.cuda)
    text = f"{driver[0]}.{driver[1]} (cuDriverGetVersion)"
    if not host.driver_runs(variant, driver):
        return Check("CUDA driver", FAIL, f"{text}: the driver supports CUDA {driver[0]}.{driver[1]}, but "
                     f"{variant.name} is built with CUDA {variant.cuda} and needs a driver for CUDA {want[0]}.x",
                     f"update the NVIDIA driver to one for CUDA {want[0]} or newer")
    return Check("CUDA driver", PASS, text)


def check_cuda(variant: variants.Variant) -> list[Check]:
    if not variant.cuda:
        return []
    return [check_cuda_toolkit(variant), check_cuda_driver(variant, host.cuda_driver_version())]


def _glibcxx(path: str) -> set[tuple[int, ...]]:
    text = _out(["strings", "-a", path]) or ""
    return {_vt(m) for m in re.findall(r"GLIBCXX_(\d+(?:\.\d+)+)", text)}


def check_installed() -> list[Check]:
    """The installed wheel against this host."""
    try:
        info = buildinfo.load()
    except buildinfo.NotBuilt:
        return []
    from . import guard

    checks = [Check("installed wheel", PASS if not (p := guard.problems()) else FAIL,
                    f"{info['variant']} ({info['version']})" + ("" if not p else ": " + " ".join(p)),
                    "tvm-wheels select" if p else "")]
    if not p:
        checks += [check_module_roundtrip(info), check_threads()]
    libs = sorted(Path(__file__).resolve().parent.parent.joinpath("tvm", "lib").glob("*.so"))
    need = set().union(*(_glibcxx(str(lib)) for lib in libs)) if libs else set()

    have_path = None
    for cand in ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/aarch64-linux-gnu/libstdc++.so.6",
                 "/usr/lib64/libstdc++.so.6"):
        if os.path.exists(cand):
            have_path = cand
            break
    have = _glibcxx(have_path) if have_path else set()
    if need and have:
        top_need, top_have = max(need), max(have)
        fmt = ".".join
        ok = top_need <= top_have
        checks.append(Check("libstdc++", PASS if ok else FAIL,
                            f"wheel needs GLIBCXX_{fmt(map(str, top_need))}, {have_path} has up to "
                            f"GLIBCXX_{fmt(map(str, top_have))}",
                            "" if ok else "install a newer libstdc++6 (or use a wheel built for an older "
                                          "manylinux)"))
    return checks


def check_threads(env=os.environ) -> Check:
    """The thread pool `import tvm` started against the cores this process may use."""
    import tvm

    from . import threads

    used, cores = tvm.runtime.num_threads(), host.physical_cores()
    source = "sized by tvm-wheels on import" if threads.set_on_import else \
        next((f"{v}={env[v]}" for v in threads.VARIABLES if env.get(v)), "TVM's default")
    text = f"TVM runs {used} threads on {cores} cores ({source})"
    if used < cores:
        return Check("threads", WARN, text, f"unset {' and '.join(threads.VARIABLES)}, or set TVM_NUM_THREADS={cores}")
    return Check("threads", PASS if used == cores else INFO, text)


def check_module_roundtrip(info: dict) -> Check:
    """Compile a kernel, export it, load it back and run it: the wheel's whole path on this host."""
    import tempfile

    import numpy as np
    import tvm

    if not info.get("compiler_included"):
        return Check("compile/export/load", INFO, "runtime-only wheel: loads modules exported elsewhere")
    from tvm import te

    try:
        a = te.placeholder((8,), name="a")
        mod = tvm.build(te.create_prim_func([a, te.compute((8,), lambda i: a[i] + 1.0, name="b")]), target="llvm")
        with tempfile.TemporaryDirectory() as d:
            mod.export_library(os.path.join(d, "k.so"))
            out = tvm.runtime.tensor(np.zeros(8, "float32"))
            tvm.runtime.load_module(os.path.join(d, "k.so"))["main"](tvm.runtime.tensor(np.ones(8, "float32")), out)
        ok = bool((out.numpy() == 2).all())
    except Exception as e:  # the point of the check is to report it
        return Check("compile/export/load", FAIL, f"{type(e).__name__}: {str(e).splitlines()[0]}",
                     "export_library needs a C compiler on PATH (apt-get install gcc)")
    return Check("compile/export/load", PASS if ok else FAIL, "a kernel compiled here exports, loads and runs"
                 if ok else "the exported kernel gave wrong results")


def run(variant_name: str | None = None, root: Path | None = None) -> list[Check]:
    """variant_name: the variant to check; None: the one a build here would make (a source tree),
    else the installed wheel's."""
    req = variants.requirements()
    checks = check_installed()
    if root is None:  # the project checkout we run from, if any
        candidates = [Path.cwd(), Path(__file__).resolve().parent.parent.parent]
        root = next((c for c in candidates if (c / "cmake" / "presets").is_dir()), candidates[0])
    source_tree = (root / "CMakeLists.txt").exists() and (root / "cmake" / "presets").is_dir()
    if variant_name is None and not source_tree and variants.ENV not in os.environ:
        try:
            variant_name = buildinfo.load()["variant"]
        except buildinfo.NotBuilt:
            pass
    variant = variants.load(variant_name or variants.selected())
    if not variant.supported:
        checks.append(Check("variant", FAIL, f"{variant.name} is {variant.status}: this project does not build it "
                            "yet", "tvm-wheels variants (pick a supported one)"))
    checks += [check_cross(variant) if variant.cross(host.machine()) else check_cpu(variant), *check_cuda(variant)]
    if source_tree:  # build checks
        checks += [check_compiler(req), check_tool("cmake", _pyproject_minimum(root, "cmake")),
                   check_tool("ninja", _pyproject_minimum(root, "ninja")),
                   *(check_llvm(req) if variant.compiler else []), check_sources(root, req), check_memory(req)]
    return checks


def _pyproject_minimum(root: Path, tool: str) -> str:
    """The `<tool>.version = ">=X"` that scikit-build-core enforces in pyproject.toml (no tomllib on 3.10)."""
    m = re.search(rf'^{tool}\.version\s*=\s*">=([0-9.]+)"', (root / "pyproject.toml").read_text(), re.M)
    return m.group(1) if m else "0"


def exit_code(checks: list[Check]) -> int:
    statuses = {c.status for c in checks}
    return 2 if FAIL in statuses else 1 if WARN in statuses else 0
