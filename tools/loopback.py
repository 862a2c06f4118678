"""TVM's RPC tracker and tvm-wheels rpc-servers on 127.0.0.1, as processes that a test or a
benchmark starts and stops: each listens on a free loopback port, is waited for until it is
ready (bounded), and is killed with everything it forked when its `with` block ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Process:
    """A process in a session of its own (its forks die with it), its output in a log file."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str] | None = None):
        self.log = log
        with open(log, "w") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, needle: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while needle not in self.text():
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.log.name}: exited {self.proc.returncode} before {needle!r}:\n{self.text()[-3000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.log.name}: no {needle!r} after {timeout_s:.0f} s:\n{self.text()[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


@contextlib.contextmanager
def tracker(python: list[str], logs: Path, env: dict[str, str] | None = None):
    """TVM's tracker (python -m tvm.exec.rpc_tracker; needs tornado): yields its HOST:PORT."""
    port = free_port()
    p = Process([*python, "-m", "tvm.exec.rpc_tracker", "--host", HOST, "--port", str(port),
                 "--port-end", str(port + 1)], logs / f"tracker-{port}.log", env)
    try:
        p.wait_for(f"bind to {HOST}:{port}", 60)
        yield f"{HOST}:{port}"
    finally:
        p.stop()


# Until the tracker lists a server under the key (TVM's own server says nothing when it registers).
LISTED = """
import sys, time
from tvm import rpc
host, port = sys.argv[1].rsplit(":", 1)
deadline = time.monotonic() + float(sys.argv[3])
while time.monotonic() < deadline:
    if any(s["key"] == "server:" + sys.argv[2] for s in rpc.connect_tracker(host, int(port)).summary()["server_info"]):
        sys.exit(0)
    time.sleep(0.2)
sys.exit(1)
"""


@contextlib.contextmanager
def server(python: list[str], address: str, key: str, logs: Path, env: dict[str, str] | None = None,
           ready_s: float = 60, plain: bool = False):
    """`tvm-wheels rpc-server` of the wheel that `python` runs (python -m tvm_wheels), registered
    at the tracker under key; yields the process (its log counts what it loaded). plain: TVM's
    own server (python -m tvm.exec.rpc_server) instead."""
    port = free_port()
    command = ["-m", "tvm.exec.rpc_server", "--host", HOST] if plain else ["-m", "tvm_wheels", "rpc-server"]
    p = Process([*python, *command, "--tracker", address, "--key", key, "--port", str(port),
                 "--port-end", str(port + 1)], logs / f"server-{key}-{port}.log", env)
    try:
        if plain:
            p.wait_for(f"bind to {HOST}:{port}", ready_s)
            subprocess.run([*python, "-c", LISTED, address, key, str(ready_s)], env=env, check=True, timeout=ready_s + 30)
        else:
            p.wait_for("tvm-wheels rpc-server:", ready_s)
        yield p
    finally:
        p.stop()


@contextlib.contextmanager
def servers(python: list[str], address: str, key: str, logs: Path, count: int, **kw):
    """`count` servers (server()) under one key, started together and stopped together."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(server(python, address, key, logs, **kw)) for _ in range(count)]


def loaded(server_process: Process) -> int:
    """How many modules a server loaded: one per candidate measured or library run there."""
    return server_process.text().count("load_module")
