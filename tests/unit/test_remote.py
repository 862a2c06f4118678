"""The checks a client makes of an RPC server before it sends code (tvm_wheels.remote.check) and
the target of another machine (tvm_wheels.target): logic on server_info dicts and target specs,
without TVM. The processes themselves: tests/wheel/test_rpc.py."""

from __future__ import annotations

import pytest

from tvm_wheels import remote, target

HERE = {"tvm": "0.26.0+cpu", "tvm_ffi": "0.1.14.post1", "variant": "cpu", "machine": "x86_64",
        "x86_64_level": "x86-64-v4", "cuda": False}
RUNTIME_V3 = {**HERE, "tvm": "0.26.0+runtime", "variant": "runtime", "x86_64_level": "x86-64-v3"}
ORIN = {**HERE, "tvm": "0.26.0+orin", "variant": "aarch64-orin", "machine": "aarch64", "x86_64_level": None}
ORIN_CPU = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a78ae"}


def test_addresses_parse_and_bad_ones_name_the_form():
    assert remote.parse_address("127.0.0.1:9190") == ("127.0.0.1", 9190)
    assert remote.parse_address("tracker.lan") == ("tracker.lan", remote.DEFAULT_TRACKER_PORT)
    for bad in ("127.0.0.1:", ":9190", "host:port", "host:70000"):
        with pytest.raises(remote.RemoteError, match="Fix: give HOST:PORT"):
            remote.parse_address(bad)


def test_a_server_of_the_same_tvm_and_ffi_that_runs_the_target_passes():
    remote.check(RUNTIME_V3, HERE, {"kind": "llvm", "mcpu": "x86-64-v3"}, "#1")  # another variant's label
    remote.check(RUNTIME_V3, HERE, {"kind": "llvm"}, "#1")
    remote.check(ORIN, HERE, ORIN_CPU, "#1")


def test_another_ffi_or_tvm_is_refused_with_the_versions_to_install():
    with pytest.raises(remote.RemoteError, match=r"apache-tvm-ffi 0\.1\.13\.post2.*Fix: on the server, "
                                                 r"pip install 'apache-tvm-ffi==0\.1\.14\.post1'"):
        remote.check({**RUNTIME_V3, "tvm_ffi": "0.1.13.post2"}, HERE, {"kind": "llvm"}, "#1")
    with pytest.raises(remote.RemoteError, match=r"runs TVM 0\.25\.0\+runtime.*for TVM 0\.26\.0"):
        remote.check({**RUNTIME_V3, "tvm": "0.25.0+runtime"}, HERE, {"kind": "llvm"}, "#1")


def test_a_target_the_server_cannot_run_is_refused():
    with pytest.raises(remote.RemoteError, match=r"for aarch64 \(cortex-a78ae\).*x86_64 machine.*Fix: register"):
        remote.check(RUNTIME_V3, HERE, ORIN_CPU, "#1")
    with pytest.raises(remote.RemoteError, match=r"x86-64-v4 and the server #1 has x86-64-v3: .*illegal "
                                                 r"instruction.*\"mcpu\": \"x86-64-v3\""):
        remote.check(RUNTIME_V3, HERE, {"kind": "llvm", "mcpu": "x86-64-v4"}, "#1")
    with pytest.raises(remote.RemoteError, match="the target is CUDA.*no GPU"):
        remote.check(ORIN, HERE, {"kind": "cuda", "arch": "sm_87", "host": ORIN_CPU}, "#1")
    remote.check({**ORIN, "cuda": True}, HERE, {"kind": "cuda", "arch": "sm_87", "host": ORIN_CPU}, "#1")


def test_the_architecture_of_a_target_is_its_triples_or_its_hosts():
    assert target.arch(ORIN_CPU) == "aarch64"
    assert target.arch({"kind": "cuda", "arch": "sm_87", "host": ORIN_CPU}) == "aarch64"
    assert target.arch({"kind": "llvm", "mcpu": "x86-64-v3"}) == "x86_64"  # this machine's


def test_cross_compiler_is_none_here_and_named_for_another_architecture(monkeypatch):
    assert target.cross_compiler({"kind": "llvm"}) is None
    assert target.cross_compiler(ORIN_CPU) == "aarch64-linux-gnu-g++"  # .ci/run installs it
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeError, match="Fix: apt-get install g\\+\\+-aarch64-linux-gnu"):
        target.cross_compiler(ORIN_CPU)
    with pytest.raises(RuntimeError, match="no cross toolchain is known for riscv64"):
        target.cross_compiler({"kind": "llvm", "mtriple": "riscv64-linux-gnu"})
