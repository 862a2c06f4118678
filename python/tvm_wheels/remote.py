"""Other machines through TVM's RPC: a server for a tracker, and the checks a client makes first.

    tvm-wheels rpc-server --tracker HOST:PORT --key KEY     # on each device (runtime or orin wheel)
    tvm-wheels tune model.onnx --rpc HOST:PORT --key KEY    # on the compiling machine
    sess = tvm_wheels.remote.session("HOST:PORT", "KEY", target)   # run a library exported for it

A server runs the code it is sent: trusted networks only (docs/remote.md). It binds to
loopback unless given an address.

Before a tune starts, connect() asks the tracker for every server under the key and each server
for what it is (server_info, registered by `tvm-wheels rpc-server`); check() turns down one that
cannot load this machine's libraries or run the target's code, naming the fix, before any
record is written. Candidates are built here and exported as shared libraries with the
target's own toolchain (target.cross_compiler), so a server needs no compiler.
"""

from __future__ import annotations

import dataclasses
import json
import socket

INFO = "tvm_wheels.remote.server_info"  # the global function a server of this project registers
DEFAULT_TRACKER_PORT = 9190


class RemoteError(RuntimeError):
    """A tracker or server that cannot do what was asked; the message names the fix."""


def parse_address(text: str, default_port: int = DEFAULT_TRACKER_PORT) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = text, str(default_port)
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RemoteError(f"tvm-wheels: {text!r} is not an address. Fix: give HOST:PORT, e.g. 127.0.0.1:9190")
    return host, int(port)


def server_info() -> dict:
    """What a client needs to know of this server's TVM before it sends code."""
    import tvm
    import tvm_ffi

    from . import buildinfo, host

    machine = host.machine()
    cuda = False
    try:
        cuda = bool(tvm.cuda(0).exist)
    except Exception:  # no CUDA runtime in this wheel, or no driver
        pass
    return {"tvm": tvm.__version__, "tvm_ffi": tvm_ffi.__version__, "variant": buildinfo.load().get("variant"),
            "machine": machine, "x86_64_level": host.x86_64_level() if machine == "x86_64" else None,
            "cuda": cuda}


def check(info: dict, local: dict, target, where: str) -> None:
    """Refuse a server (its server_info) that cannot load what this machine (local: its
    server_info) exports for `target` (a tvm.target.Target or its spec): another TVM or tvm-ffi
    (a library is loaded through tvm-ffi's ABI), another architecture, an x86-64 level below the
    target's, no GPU for a GPU target."""
    from . import host
    from .target import arch, spec

    t = spec(target)
    versions = lambda i: (i["tvm"].split("+")[0], i["tvm_ffi"])  # noqa: E731 - the label is the variant's
    if versions(info) != versions(local):
        tvm_v, ffi_v = versions(local)
        raise RemoteError(
            f"tvm-wheels: the server {where} runs TVM {info['tvm']} with apache-tvm-ffi {info['tvm_ffi']}; "
            f"this machine TVM {local['tvm']} with apache-tvm-ffi {local['tvm_ffi']}. A library exported here is "
            f"loaded there through tvm-ffi's ABI: both sides need the same. Fix: on the server, pip install "
            f"'apache-tvm-ffi=={ffi_v}' and a wheel of this project for TVM {tvm_v}, then restart tvm-wheels rpc-server")
    to = arch(t)
    mcpu = str(t.get("mcpu") or "") if t.get("kind") == "llvm" else ""
    if info["machine"] != to:
        raise RemoteError(
            f"tvm-wheels: the target is for {to} ({mcpu or t.get('kind')}) and the server {where} is an "
            f"{info['machine']} machine ({info['variant']} wheel): its code cannot run there. Fix: register the "
            f"{to} devices under a key of their own and tune with that key, or tune for the server's CPU (--target)")
    levels = list(host.X86_64_LEVELS)[::-1]  # v2, v3, v4
    have = info.get("x86_64_level")
    if mcpu in levels and (have not in levels or levels.index(have) < levels.index(mcpu)):
        raise RemoteError(
            f"tvm-wheels: the target is {mcpu} and the server {where} has {have or 'no x86-64 level'}: "
            f"the code would die of an illegal instruction there. Fix: tune for --target "
            f"'{{\"kind\": \"llvm\", \"mcpu\": \"{have or 'x86-64'}\"}}' or use servers with {mcpu}")
    if t.get("kind") == "cuda" and not info.get("cuda"):
        raise RemoteError(
            f"tvm-wheels: the target is CUDA and the server {where} ({info['variant']} wheel) has no GPU it can "
            f"use. Fix: run the server from a CUDA wheel of this project on a machine with an NVIDIA driver")


@dataclasses.dataclass
class Servers:
    """The servers under one key at a tracker, checked for a target."""

    host: str
    port: int
    key: str
    infos: list[dict]

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def __str__(self) -> str:
        n = len(self.infos)
        return f"{n} server{'s' if n != 1 else ''} under {self.key!r} at {self.address}"

    def runner(self, session_timeout_s: int = 60):
        """MetaSchedule's RPC runner, one worker per server, so that every server measures."""
        from tvm.s_tir import meta_schedule as ms

        config = ms.runner.RPCConfig(tracker_host=self.host, tracker_port=self.port, tracker_key=self.key,
                                     session_timeout_sec=session_timeout_s)
        return ms.runner.RPCRunner(rpc_config=config, max_workers=len(self.infos))


def _tracker_keys(summary: dict) -> dict[str, int]:
    keys: dict[str, int] = {}
    for item in summary.get("server_info", []):
        key = str(item["key"]).split(":", 1)[-1]  # "server:KEY"
        keys[key] = keys.get(key, 0) + 1
    return keys


def session(address: str, key: str, target, timeout_s: int = 300):
    """An RPC session on a server under key, every server there checked for `target` first:
    upload a library exported for it, load it, run it (docs/remote.md)."""
    from tvm import rpc

    servers = connect(address, key, target)
    return rpc.connect_tracker(servers.host, servers.port).request(key, session_timeout=timeout_s)


def _tracker_answers(address: str, timeout_s: float) -> tuple[str, int]:
    host, port = parse_address(address)
    try:  # TVM's client and server retry a refused connection for a minute; ask once first
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as e:
        raise RemoteError(
            f"tvm-wheels: no RPC tracker answers at {host}:{port} ({e.strerror or e}). Fix: start one there, "
            f"python -m tvm.exec.rpc_tracker --host {host} --port {port}, or give the address of yours") from None
    return host, port


def connect(address: str, key: str, target, timeout_s: float = 5.0) -> Servers:
    """The servers registered under `key` at the tracker, each asked what it is and checked
    against this machine and `target`; RemoteError, within seconds, where any cannot serve."""
    from tvm import rpc

    host, port = _tracker_answers(address, timeout_s)
    tracker = rpc.connect_tracker(host, port)
    keys = _tracker_keys(tracker.summary())
    count = keys.get(key, 0)
    if not count:
        raise RemoteError(
            f"tvm-wheels: no server is registered under the key {key!r} at the tracker {host}:{port} "
            f"(keys there: {', '.join(f'{k} ({n})' for k, n in sorted(keys.items())) or 'none'}). Fix: on each "
            f"device, tvm-wheels rpc-server --tracker {host}:{port} --key {key} --host <its address>")
    local = server_info()
    infos, sessions = [], []
    try:
        for _ in range(count):  # sessions held open at once: the tracker hands out each server once
            sess = tracker.request(key, session_timeout=30, max_retry=1)
            sessions.append(sess)
            where = f"#{len(sessions)} under {key!r} at {host}:{port}"
            try:
                ask = sess.get_function(INFO)
            except (AttributeError, RuntimeError, ValueError):
                ask = None
            if ask is None:
                raise RemoteError(
                    f"tvm-wheels: the server {where} does not say which TVM and tvm-ffi it runs (it is not a "
                    f"server of this project). Fix: start it with tvm-wheels rpc-server --tracker {host}:{port} "
                    f"--key {key}, from the runtime or aarch64-orin wheel of the TVM this machine has")
            info = json.loads(ask())
            check(info, local, target, where)
            infos.append(info)
    finally:
        sessions.clear()  # closes them: the servers go back to the tracker's pool
    return Servers(host, port, key, infos)


def serve(tracker: str | None, key: str, host: str = "127.0.0.1", port: int = 9090, port_end: int | None = None,
          custom_addr: str | None = None) -> None:
    """TVM's RPC server in this process, registered at the tracker under key; returns when it stops."""
    import tvm_ffi
    from tvm.rpc import server

    tracker_addr = _tracker_answers(tracker, 5.0) if tracker else None
    tvm_ffi.register_global_func(INFO, lambda: json.dumps(server_info()), override=True)
    # TVM's rpc.Server runs this same state in a PopenWorker, which needs cloudpickle to send it
    # there; in this process, the runtime wheel serves with its own dependencies only. Each
    # session is a fork of it, with INFO registered.
    port_end = port_end or port + 100
    try:
        state = server.PopenRPCServerState(host, port, port_end, tracker_addr=tracker_addr,
                                           key=key, custom_addr=custom_addr)
    except (OSError, ValueError) as e:
        raise RemoteError(f"tvm-wheels rpc-server: cannot listen on {host}, ports {port} to {port_end - 1}: {e}. "
                          f"Fix: --host an address of this machine, --port a free port") from None
    if tracker_addr is not None:
        _wait_registered(tracker_addr, key, state.port)
    print(f"tvm-wheels rpc-server: {host}:{state.port}, key {key!r}"
          + (f", registered at the tracker {tracker}" if tracker else "")
          + ". It runs any code it is sent: trusted networks only.", flush=True)
    state.thread.join()


def _wait_registered(tracker_addr: tuple[str, int], key: str, port: int, timeout_s: float = 30) -> None:
    """Until the tracker lists this server (it registers from its own thread)."""
    import time

    from tvm import rpc

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        listed = rpc.connect_tracker(*tracker_addr).summary().get("server_info", [])
        if any(item["key"] == f"server:{key}" and int(item["addr"][1]) == port for item in listed):
            return
        time.sleep(0.2)
    raise RemoteError(f"tvm-wheels rpc-server: the tracker {tracker_addr[0]}:{tracker_addr[1]} did not list this "
                      f"server within {timeout_s:.0f} s. Fix: check that the tracker can reach this machine "
                      f"(--host, --custom-addr)")
