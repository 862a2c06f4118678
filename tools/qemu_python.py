#!/usr/bin/env python3
"""A Python of another architecture under qemu-user, to test a cross-built wheel without its board.

    python tools/qemu_python.py sysroot [--arch aarch64]        # prints the sysroot's path
    python tools/qemu_python.py run --cpu cortex-a76 WHEEL -- -c "import tvm; print(tvm.__version__)"

The sysroot is Debian's own Python for that architecture (python3.11 and the libraries it
needs, as .deb files from Debian's archive), fetched with apt-get under a private APT
configuration (its own sources list, state and cache: nothing of the machine's APT setup
changes) and unpacked with dpkg -x. A wheel is installed with its dependencies, resolved by pip
for that architecture (--platform), into a directory on PYTHONPATH. qemu-aarch64 -L <sysroot>
then runs that Python; -cpu picks the CPU model, and with it the HWCAP features the kernel
reports (what numpy's CPU table, and so the import guard, read). binfmt_misc is not needed.
Cache: $TVM_WHEELS_CACHE/qemu, default ~/.cache/tvm-wheels/qemu.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from wheelhouse import cache_root  # noqa: E402

PYTHON = "python3.11"  # Debian 12's; the wheel is py3-none, so any CPython >= 3.10 would do
# The Python, and libstdc++ that TVM's and numpy's libraries need. Their dependencies come from
# apt-cache; of those, only shared libraries, Python and their data packages are unpacked
# (no dpkg, perl, tar: nothing here is installed, only run).
PACKAGES = [PYTHON, "libstdc++6"]
KEEP = ("lib", "zlib1g", "python3", "gcc-", "media-types")
SKIP = ("libperl",)
DEBIAN = {"aarch64": ("arm64", "http://deb.debian.org/debian bookworm main")}
QEMU = {"aarch64": "qemu-aarch64"}


class QemuPythonError(RuntimeError):
    pass


def _run(cmd: list[str], what: str, **kw) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise QemuPythonError(f"tvm-wheels: {what} failed ({proc.returncode}): {' '.join(cmd[:4])} ...\n"
                              f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def _apt_options(apt: Path, deb_arch: str) -> list[str]:
    return ["-o", f"Dir::Etc::SourceList={apt / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/nonexistent",
            "-o", f"Dir::State={apt / 'state'}", "-o", f"Dir::State::status={apt / 'status'}",
            "-o", f"Dir::Cache={apt / 'cache'}", "-o", f"APT::Architecture={deb_arch}",
            "-o", f"APT::Architectures::={deb_arch}", "-o", "Debug::NoLocking=1", "-q"]


def sysroot(arch: str = "aarch64") -> Path:
    """Debian's Python for arch, unpacked once into the cache (a directory only once complete)."""
    if arch not in DEBIAN:
        raise QemuPythonError(f"tvm-wheels: no Debian sysroot recipe for {arch}; known: {', '.join(DEBIAN)}")
    deb_arch, source = DEBIAN[arch]
    digest = hashlib.sha256("\n".join([arch, source, *PACKAGES, *KEEP, *SKIP]).encode()).hexdigest()[:16]
    root = cache_root() / "qemu" / f"{arch}-{digest}"
    if (root / "ready").exists():
        return root
    work = Path(tempfile.mkdtemp(prefix=f"sysroot-{arch}-", dir=root.parent if root.parent.exists() else None))
    try:
        apt = work / "apt"
        for d in ("state/lists/partial", "cache/archives/partial", "debs"):
            (apt / d).mkdir(parents=True)
        (apt / "sources.list").write_text(f"deb [arch={deb_arch}] {source}\n")
        (apt / "status").write_text("")
        opts = _apt_options(apt, deb_arch)
        _run(["apt-get", *opts, "update"], "apt-get update (private configuration)")
        closure = _run(["apt-cache", *opts, "depends", "--recurse", "--no-recommends", "--no-suggests",
                        "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *PACKAGES],
                       "apt-cache depends")
        names = sorted({line.strip() for line in closure.splitlines()
                        if line and not line.startswith((" ", "<")) and line.startswith(KEEP)
                        and not line.startswith(SKIP)})
        _run(["apt-get", *opts, "download", *names], "apt-get download", cwd=apt / "debs")
        tree = work / "root"
        for deb in sorted((apt / "debs").glob("*.deb")):
            _run(["dpkg", "-x", str(deb), str(tree)], f"dpkg -x {deb.name}")
        (tree / "packages.txt").write_text("\n".join(d.name for d in sorted((apt / "debs").glob("*.deb"))) + "\n")
        (tree / "ready").write_text("")
        root.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(root, ignore_errors=True)
        tree.rename(root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return root


def install(target: Path, *requirements: str, arch: str = "aarch64") -> Path:
    """pip installs requirements (a wheel's path among them: with its dependencies) for arch and
    the sysroot's Python into target, a directory for PYTHONPATH."""
    _run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--only-binary=:all:",
          "--platform", f"manylinux_2_35_{arch}", "--platform", f"manylinux_2_28_{arch}",
          "--platform", f"manylinux2014_{arch}", "--python-version", PYTHON.removeprefix("python"),
          "--implementation", "cp", "--target", str(target), *requirements], f"pip install for {arch}")
    return target


def command(root: Path, cpu: str, arch: str = "aarch64") -> list[str]:
    """argv prefix that runs the sysroot's Python under qemu-user on the given CPU model."""
    qemu = shutil.which(QEMU[arch])
    if qemu is None:
        raise QemuPythonError(f"tvm-wheels: {QEMU[arch]} not found. Fix: apt-get install qemu-user")
    return [qemu, "-cpu", cpu, "-L", str(root), str(root / "usr" / "bin" / PYTHON)]


def environment(site: Path) -> dict[str, str]:
    """The environment of that Python: only the given site directory, nothing of this machine's."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR", "TVM_WHEELS_CACHE")}
    return {**keep, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "PYTHONNOUSERSITE": "1"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["sysroot", "run"])
    parser.add_argument("wheel", nargs="?", help="run: the wheel to install")
    parser.add_argument("--arch", default="aarch64")
    parser.add_argument("--cpu", default="max", help="run: qemu's CPU model (qemu-aarch64 -cpu help)")
    args, rest = parser.parse_known_args(argv)
    try:
        root = sysroot(args.arch)
        if args.command == "sysroot":
            print(root)
            return 0
        if not args.wheel:
            parser.error("run needs a wheel")
        with tempfile.TemporaryDirectory(prefix="qemu-site-") as site:
            install(Path(site), args.wheel, arch=args.arch)
            rest = rest[1:] if rest[:1] == ["--"] else rest
            return subprocess.run([*command(root, args.cpu, args.arch), *rest], env=environment(Path(site))).returncode
    except QemuPythonError as e:
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
