"""Beyond one machine on TVM's RPC, on loopback: a tracker and `tvm-wheels rpc-server`s of the
runtime wheel in clean venvs, `tvm-wheels tune --rpc` from the cpu wheel through them, and the
inputs it must refuse before it writes anything. Every process is started and killed here
(tools/loopback.py), bounded in time. The Orin round trip under qemu: test_orin_wheel.py."""

from __future__ import annotations

import re
import subprocess
import time

import pytest

import loopback
from conftest import COMPILE_FOR_ORIN, PRINT, make_venv
from models import dense

pytestmark = pytest.mark.wheel

# relu(x @ w + b) of models/dense.py, compiled with the records in TVM_WHEELS_TUNING_DB and run
# here: prints the report's source for its one function and the output's error against numpy.
COMPILE_WITH_RECORDS = """
import json, os, numpy as np, onnx, tvm, tvm_wheels
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
model = onnx.load(os.environ["MODEL"])
report = []
ex = tvm_wheels.compile(from_onnx(model, keep_params_in_input=False), report=report)
x = np.random.default_rng(1).standard_normal((64, 256)).astype("float32")
got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()
w, b = (onnx.numpy_helper.to_array(t) for t in model.graph.initializer)
want = np.maximum(x @ w + b, 0)
print(json.dumps({"report": {e.function: e.source for e in report},
                  "err": float(np.abs(got - want).max()), "scale": float(np.abs(want).max())}))
"""


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("rpc-model") / "dense.onnx"
    dense.write(path)
    return path


def _tune(tune_venv, model, out, *args, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run([str(tune_venv.bin("tvm-wheels")), "tune", str(model), "--trials", "8", "--out", str(out),
                           *args], capture_output=True, text=True, timeout=timeout)


def test_a_tune_through_two_runtime_servers_measures_on_both_and_compile_takes_its_records(
        tune_venv, runtime_venv, model, rpc_tracker, tmp_path):
    with loopback.servers(runtime_venv.argv(), rpc_tracker, "x86", tmp_path, 2) as (one, two):
        start = time.monotonic()
        proc = _tune(tune_venv, model, tmp_path / "db", "--rpc", rpc_tracker, "--key", "x86")
        print(f"tune through 2 servers: {time.monotonic() - start:.1f} s")
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        assert f"measured on 2 servers under 'x86' at {rpc_tracker}" in proc.stdout
        assert "[1/1] fused_matmul_add_relu (x1): 8 trials, best" in proc.stdout, proc.stdout
        # every candidate measured is a module a server loaded; both measured
        assert loopback.loaded(one) >= 1 and loopback.loaded(two) >= 1, (one.text()[-2000:], two.text()[-2000:])
        assert loopback.loaded(one) + loopback.loaded(two) >= 8
    (db,) = (tmp_path / "db").iterdir()  # one target's database, as a local tune writes it
    assert len((db / "database_tuning_record.json").read_text().splitlines()) == 8
    got = tune_venv.json(COMPILE_WITH_RECORDS, env={"MODEL": str(model), "TVM_WHEELS_TUNING_DB": str(tmp_path / "db")})
    assert got["report"] == {"fused_matmul_add_relu": f"database:{db}"}, got
    assert got["err"] <= 1e-4 * got["scale"], got


def _refused(proc, out, *needles):
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-3000:]
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert not out.exists(), "a refused tune wrote a database"


def test_no_tracker_and_no_server_under_the_key_are_refused_within_seconds(tune_venv, runtime_venv, model, rpc_tracker,
                                                                        tmp_path):
    closed = f"127.0.0.1:{loopback.free_port()}"
    start = time.monotonic()
    proc = _tune(tune_venv, model, tmp_path / "db", "--rpc", closed, "--key", "x86")
    _refused(proc, tmp_path / "db", f"no RPC tracker answers at {closed}",
             f"Fix: start one there, python -m tvm.exec.rpc_tracker --host 127.0.0.1 --port {closed.split(':')[1]}")
    with loopback.server(runtime_venv.argv(), rpc_tracker, "x86", tmp_path):
        proc = _tune(tune_venv, model, tmp_path / "db", "--rpc", rpc_tracker, "--key", "orin")
        _refused(proc, tmp_path / "db", f"no server is registered under the key 'orin' at the tracker {rpc_tracker} "
                 "(keys there: x86 (1))", f"Fix: on each device, tvm-wheels rpc-server --tracker {rpc_tracker} --key orin")
        # a target for another architecture than the servers'
        proc = _tune(tune_venv, model, tmp_path / "db", "--rpc", rpc_tracker, "--key", "x86", "--target", "orin")
        _refused(proc, tmp_path / "db", "the target is for aarch64 (cortex-a78ae)", "is an x86_64 machine (runtime wheel)")
    assert time.monotonic() - start < 120  # four refusals, each a new Python that imports TVM
    # a server without a tracker to register at stops at once, and says so
    proc = subprocess.run([*runtime_venv.argv(), "-m", "tvm_wheels", "rpc-server", "--tracker", closed, "--key", "x86"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and f"no RPC tracker answers at {closed}" in proc.stderr, proc.stderr


def test_a_server_of_another_tvm_ffi_or_tvms_own_server_is_refused_naming_the_fix(tune_venv, runtime_wheel, model, rpc_tracker,
                                                                          tmp_path):
    # the oldest apache-tvm-ffi the wheel admits: the server runs, and a library exported here would
    # meet another tvm-ffi there
    old = make_venv(tmp_path / "venv-old-ffi", "tvm-wheels runtime, older ffi", str(runtime_wheel),
                    "apache-tvm-ffi==0.1.13.post2")
    with loopback.server(old.argv(), rpc_tracker, "old-ffi", tmp_path):
        proc = _tune(tune_venv, model, tmp_path / "db", "--rpc", rpc_tracker, "--key", "old-ffi")
    _refused(proc, tmp_path / "db", "with apache-tvm-ffi 0.1.13.post2; this machine TVM 0.26.0+cpu with apache-tvm-ffi",
             "Fix: on the server, pip install 'apache-tvm-ffi==")
    # TVM's own server says nothing of what it runs: it is not taken on trust
    with loopback.server(tune_venv.argv(), rpc_tracker, "plain", tmp_path, plain=True):
        proc = _tune(tune_venv, model, tmp_path / "db", "--rpc", rpc_tracker, "--key", "plain")
    _refused(proc, tmp_path / "db", "does not say which TVM and tvm-ffi it runs (it is not a server of this project)",
             f"Fix: start it with tvm-wheels rpc-server --tracker {rpc_tracker} --key plain")


def test_the_cpu_wheel_compiles_for_the_orin_and_exports_an_aarch64_library(tune_venv, model, tmp_path):
    """The README's three lines: nothing of the model runs here (the pipeline folds the weights'
    layout on this CPU, since that is the same on every one)."""
    got = tune_venv.json(COMPILE_FOR_ORIN + PRINT, env={"MODEL": str(model), "OUT": str(tmp_path / "model.so")})
    assert got["report"] == {"fused_matmul_add_relu": "rules"}, got  # scheduled, not TVM's fallback
    header = subprocess.run(["readelf", "-h", str(tmp_path / "model.so")], capture_output=True, text=True,
                            check=True).stdout
    assert re.search(r"Machine:\s+AArch64", header), header
