"""Shared fixtures: real wheels (built or reused by content key) in clean venvs."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "python"))

# Clean venvs, as the benchmarks make them too (tools/venvs.py); the fixtures below hold them.
from venvs import MODEL_DEPS, OFFICIAL, Venv, make_venv  # noqa: E402,F401


def pytest_addoption(parser):
    parser.addoption("--tier", type=int, choices=(1, 2), default=1,
                     help="CI tier: 1 = what .ci/run runs (default); 2 = .ci/run --full, every variant's wheel")


def pytest_collection_modifyitems(config, items):
    """A test is in tier 2 by its marker: tier 1 deselects it (never a skip). Inside the tier
    that runs it, a missing wheel or tool is a failure."""
    _avx512_host(items)
    if config.getoption("--tier") >= 2:
        return
    tier2 = [item for item in items if item.get_closest_marker("tier2")]
    if tier2:
        config.hook.pytest_deselected(items=tier2)
        items[:] = [item for item in items if not item.get_closest_marker("tier2")]


def _avx512_host(items) -> None:
    """Tests that run the cpu-avx512 wheel's code need a CPU with its features. On one without
    them the wheel refuses to load (what test_guard_refuses_haswell_* checks under qemu), and QEMU's
    TCG has no AVX-512 to emulate them with: those tests are skipped, saying which features lack."""
    from tvm_wheels import host, variants

    missing = host.missing_features(variants.load("cpu-avx512").cpu_features)
    if missing:
        skip = pytest.mark.skip(reason=f"this host's CPU lacks {', '.join(missing)}: the cpu-avx512 wheel cannot run here")
        for item in items:
            if item.get_closest_marker("avx512_host"):
                item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, config):
    started = os.environ.get("TVM_WHEELS_CI_STARTED")
    if started:  # set by .ci/run: installs and builds included
        minutes = (time.time() - int(started)) / 60
        terminalreporter.write_line(f"tvm-wheels: CI tier {config.getoption('--tier')}: {minutes:.1f} min "
                                    "since .ci/run started")
        record = os.environ.get("TVM_WHEELS_CI_RECORD")
        if record:  # a measured run of the tier (bench/results/ci_tier*.json, docs/ci.md's table)
            _record_tier(Path(record), terminalreporter, config, int(started))


def _record_tier(path: Path, reporter, config, started: int) -> None:
    import json
    import platform
    import subprocess

    from tvm_wheels import host

    def count(key: str) -> int:
        return len([r for r in reporter.stats.get(key, []) if getattr(r, "when", "call") == "call"])

    ref = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    path.write_text(json.dumps({
        "what": f"CI tier {config.getoption('--tier')}: .ci/run from start to end (apt, submodules, venv, builds, tests)",
        "ref": ref.stdout.strip(), "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime(started)),
        "host": {"cores": os.cpu_count(), "machine": platform.machine(), "x86_64_level": host.x86_64_level()},
        "wall_s": round(time.time() - started), "passed": count("passed"), "failed": count("failed"),
        "skipped": len(reporter.stats.get("skipped", [])), "limit_s": 4500,
        # what the run started from (new machine, warm ccache...), as the person who ran it says
        "conditions": os.environ.get("TVM_WHEELS_CI_CONDITIONS", "")}, indent=1) + "\n")


class OnX86Model(Venv):
    """A venv's Python under qemu-x86_64 on an older x86-64 CPU model: numpy's CPUID table (the
    import guard's, the default target's) sees that CPU, and QEMU's TCG executes no instruction
    it lacks (AVX-512 is not emulated at all), so code built for a newer CPU dies with SIGILL."""

    def __init__(self, env: Venv, cpu: str):
        super().__init__(env.path, f"{env.label} under qemu-x86_64 -cpu {cpu}")
        self.cpu = cpu

    def argv(self) -> list[str]:
        import shutil

        qemu = shutil.which("qemu-x86_64") or "qemu-x86_64 (missing: apt-get install qemu-user)"
        return [qemu, "-cpu", self.cpu, str(self.python)]


class QemuPython(Venv):
    """Debian's Python of another architecture under qemu-user on one CPU model
    (tools/qemu_python.py), with a wheel and its dependencies, resolved by pip for that
    architecture, on its PYTHONPATH: the wheel as it would run on its board."""

    def __init__(self, site: Path, cpu: str, label: str):
        import qemu_python

        super().__init__(site, f"{label} under qemu -cpu {cpu}")
        self.root, self.cpu = qemu_python.sysroot(), cpu

    def argv(self) -> list[str]:
        import qemu_python

        return qemu_python.command(self.root, self.cpu)

    def environ(self) -> dict[str, str]:
        import qemu_python

        return qemu_python.environment(self.path)


# On the x86 compiling machine: the ONNX model $MODEL compiled for a Jetson Orin's CPU and exported
# with the cross toolchain to $OUT (the README's three lines); `result` holds the report. PRINT
# prints it, after whatever else a test adds to it.
COMPILE_FOR_ORIN = """
import json, os, numpy as np, onnx, tvm, tvm_wheels, tvm_wheels.target
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
from tvm_wheels import remote
model = onnx.load(os.environ["MODEL"])
report = []
target = tvm_wheels.target.orin()
ex = tvm_wheels.compile(from_onnx(model, keep_params_in_input=False), target, report=report)
ex.export_library(os.environ["OUT"], fcompile=tvm_wheels.target.toolchain(target))
result = {"report": {e.function: e.source for e in report}}
"""
PRINT = "print(json.dumps(result))\n"


def _wheel(variant: str) -> Path:
    import wheelhouse

    return wheelhouse.build(variant)


def shell_blocks(page: str) -> list[list[str]]:
    """The command lines of each of a document's shell code blocks (```sh, ```bash, ```console or
    a bare fence), comments dropped: the commands as a reader copies them."""
    blocks, language = [], None
    for line in (ROOT / page).read_text().splitlines():
        if line.startswith("```"):
            language = line[3:].strip() if language is None else None
            if language in ("", "sh", "bash", "console"):
                blocks.append([])
            continue
        if language in ("", "sh", "bash", "console"):
            command = line.split(" #")[0].strip()  # a comment after the command
            if command and not command.startswith("#"):
                blocks[-1].append(command)
    return blocks


def shell_lines(page: str) -> list[str]:
    """Every command line of a document's shell code blocks, in order."""
    return [line for block in shell_blocks(page) for line in block]


@pytest.fixture(scope="session")
def readme_setup() -> tuple[str, str]:
    """The README's two set-up commands, as a newcomer copies them: its first code block (build
    and install; run the tests)."""
    assert (ROOT / "README.md").read_text().split("```", 2)[1].split("\n", 1)[0] in ("sh", "bash", ""), \
        "README.md's first code block should be the set-up commands"
    commands = shell_blocks("README.md")[0]
    assert len(commands) == 2, f"README's first code block should be the two set-up commands: {commands}"
    return commands[0], commands[1]


@pytest.fixture(scope="session")
def documented():
    """documented(page, pattern): the one command line of page's shell blocks that matches."""
    import re as _re

    def find(page: str, pattern: str) -> str:
        found = [c for c in shell_lines(page) if _re.search(pattern, c)]
        assert len(found) == 1, f"{page}: expected one command matching {pattern!r}, found {found}"
        return found[0]

    return find


@pytest.fixture(scope="session")
def cuda_toolkit() -> Path:
    """The CUDA toolkit of the cuda-cutlass variant, from NVIDIA's wheels (tools/wheelhouse.py), as
    its build gets it when the user names none; installed once into the cache."""
    import wheelhouse
    from tvm_wheels import variants

    return Path(wheelhouse.cuda_toolkit(variants.load("cuda-cutlass"), provision=True)["TVM_WHEELS_CUDA"])


@pytest.fixture(scope="session")
def cpu_wheel() -> Path:
    return _wheel("cpu")


@pytest.fixture(scope="session")
def avx512_wheel(cpu_wheel) -> Path:
    # After cpu: the cold build is then the default wheel's, and cpu-avx512 recompiles only
    # its runtime libraries (the compiler's objects are the cpu build's, from ccache).
    return _wheel("cpu-avx512")


@pytest.fixture(scope="session")
def runtime_wheel() -> Path:
    return _wheel("runtime")


@pytest.fixture(scope="session")
def cuda_wheel(cpu_wheel) -> Path:
    # After cpu, as cpu-avx512: the main build's objects are the cpu build's (ccache), and what
    # compiles is the CUDA sidecar.
    return _wheel("cuda-cutlass")


@pytest.fixture(scope="session")
def orin_wheel() -> Path:
    return _wheel("aarch64-orin")


@pytest.fixture(scope="session")
def orin_site(orin_wheel, tmp_path_factory) -> Path:
    """The aarch64-orin wheel and its dependencies for aarch64, in a directory for PYTHONPATH."""
    import qemu_python

    return qemu_python.install(tmp_path_factory.mktemp("qemu-site-orin"), str(orin_wheel))


@pytest.fixture(scope="session")
def orin_python(orin_site):
    """The Orin wheel's Python under qemu, by CPU model: Orin's Cortex-A78AE has the ISA of
    qemu's cortex-a76 (Armv8.2-A, FP16, dot product, RCpc)."""
    return lambda cpu="cortex-a76": QemuPython(orin_site, cpu, "tvm-wheels aarch64-orin")


@pytest.fixture(scope="session")
def cpu_venv(cpu_wheel, tmp_path_factory) -> Venv:
    return make_venv(tmp_path_factory.mktemp("venv-cpu"), "tvm-wheels cpu", str(cpu_wheel), *MODEL_DEPS)


@pytest.fixture(scope="session")
def avx512_venv(avx512_wheel, tmp_path_factory) -> Venv:
    return make_venv(tmp_path_factory.mktemp("venv-avx512"), "tvm-wheels cpu-avx512", str(avx512_wheel), *MODEL_DEPS)


@pytest.fixture(scope="session")
def cuda_venv(cuda_wheel, tmp_path_factory) -> Venv:
    # pip brings the wheel's CUDA dependencies (nvidia-cuda-runtime, -nvrtc, -cccl, cuda-bindings)
    return make_venv(tmp_path_factory.mktemp("venv-cuda"), "tvm-wheels cuda-cutlass", str(cuda_wheel), *MODEL_DEPS)


@pytest.fixture(scope="session")
def runtime_venv(runtime_wheel, tmp_path_factory) -> Venv:
    return make_venv(tmp_path_factory.mktemp("venv-runtime"), "tvm-wheels runtime", str(runtime_wheel))


@pytest.fixture(scope="session")
def tune_venv(cpu_wheel, tmp_path_factory) -> Venv:
    """The compiling machine of the RPC tests: the cpu wheel with its [tune] extra (MetaSchedule's
    workers, tornado for TVM's tracker)."""
    return make_venv(tmp_path_factory.mktemp("venv-tune-cpu"), "tvm-wheels cpu[tune]", f"{cpu_wheel}[tune]")


@pytest.fixture(scope="session")
def rpc_tracker(tune_venv, tmp_path_factory):
    """TVM's RPC tracker on 127.0.0.1 (tools/loopback.py) for the session's RPC tests: its HOST:PORT."""
    import loopback

    with loopback.tracker(tune_venv.argv(), tmp_path_factory.mktemp("rpc-tracker")) as address:
        yield address


@pytest.fixture(scope="session")
def official_venv(tmp_path_factory) -> Venv:
    return make_venv(tmp_path_factory.mktemp("venv-official"), "official apache-tvm 0.26.0", *OFFICIAL, *MODEL_DEPS)


@pytest.fixture(params=["cpu", "official"])
def any_venv(request) -> Venv:
    """The same test against this project's cpu wheel and the official wheel."""
    return request.getfixturevalue("cpu_venv" if request.param == "cpu" else "official_venv")
