"""Smoke tests of the TVM wheel installed in *this* environment.

cibuildwheel runs them in its test venv (pyproject: test-command); the main suite
runs them inside each variant's clean venv (tests/wheel/test_installed_smoke.py).
TVM_WHEEL_VARIANT names the variant expected.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import tvm
from tvm_wheels import buildinfo, guard, threads, variants

INFO = buildinfo.load()
VARIANT = variants.load(os.environ.get("TVM_WHEEL_VARIANT", INFO["variant"]))


def test_identity():
    assert INFO["variant"] == VARIANT.name
    assert tvm.__version__ == INFO["version"] == f"{INFO['tvm_version']}+{VARIANT.label}"


def test_guard_is_satisfied():
    assert guard.problems() == []


def test_compiler_matches_the_variant():
    assert bool(tvm.runtime.enabled("llvm")) is VARIANT.compiler
    assert INFO["compiler_included"] is VARIANT.compiler


def test_compiles_and_runs_a_kernel_or_refuses_clearly():
    from tvm import te

    if not VARIANT.compiler:
        with pytest.raises(RuntimeError, match="has no compiler"):
            tvm.compile(None)
        return
    n = 256
    a = te.placeholder((n,), name="a")
    b = te.compute((n,), lambda i: a[i] * a[i] - 1.0, name="b")
    f = tvm.build(te.create_prim_func([a, b]), target="llvm")
    x = np.linspace(-2, 2, n, dtype="float32")
    out = tvm.runtime.tensor(np.zeros(n, dtype="float32"))
    f["main"](tvm.runtime.tensor(x), out)
    np.testing.assert_allclose(out.numpy(), x * x - 1.0, rtol=1e-6)


def cores_by_lscpu() -> int:
    """Cores from util-linux, not from tvm_wheels: the CPUs this process may use, hyper-threads once."""
    rows = subprocess.run(["lscpu", "-p=CPU,CORE,SOCKET"], capture_output=True, text=True, check=True).stdout
    allowed = os.sched_getaffinity(0)
    return len({(core, socket) for cpu, core, socket in
                (line.split(",") for line in rows.splitlines() if not line.startswith("#")) if int(cpu) in allowed})


@pytest.mark.parametrize("setting,expected", [({}, None), ({"TVM_NUM_THREADS": "1"}, 1), ({"OMP_NUM_THREADS": "1"}, 1)])
def test_thread_pool_uses_every_core_unless_told_otherwise(setting, expected):
    env = {k: v for k, v in os.environ.items() if k not in threads.VARIABLES}
    out = subprocess.run([sys.executable, "-c", "import tvm; print(tvm.runtime.num_threads())"],
                         env={**env, **setting}, capture_output=True, text=True, check=True).stdout
    assert int(out.split()[-1]) == (expected or cores_by_lscpu())
