"""Models compiled and run by the installed wheel, compared with numpy and onnxruntime.

Each runs against this project's cpu wheel and the official apache-tvm 0.26.0
wheel side by side (any_venv): a test of ours that the reference fails is suspect.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.wheel


def test_import_and_llvm(any_venv):
    out = any_venv.json("""
        import json, tvm
        print(json.dumps({"version": tvm.__version__, "llvm": bool(tvm.runtime.enabled("llvm"))}))
    """)
    assert out["llvm"] is True
    assert out["version"].startswith("0.26.0")


def test_relax_mlp_matches_numpy(any_venv, tmp_path):
    """A small Relax model (matmul + bias + relu + softmax) compiled for llvm, run on the VM."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 64)).astype("float32")
    w = rng.standard_normal((64, 32)).astype("float32")
    b = rng.standard_normal(32).astype("float32")
    np.savez(tmp_path / "io.npz", x=x, w=w, b=b)
    any_venv.run(f"""
        import numpy as np, tvm
        from tvm import relax
        from tvm.script import relax as R
        d = np.load({str(tmp_path / "io.npz")!r})
        bb = relax.BlockBuilder()
        x = relax.Var("x", R.Tensor((4, 64), "float32"))
        w = relax.Var("w", R.Tensor((64, 32), "float32"))
        b = relax.Var("b", R.Tensor((32,), "float32"))
        with bb.function("main", [x, w, b]):
            with bb.dataflow():
                y = bb.emit(relax.op.nn.relu(relax.op.add(relax.op.matmul(x, w), b)))
                out = bb.emit_output(relax.op.nn.softmax(y, axis=-1))
            bb.emit_func_output(out)
        ex = tvm.compile(bb.get(), target="llvm")
        vm = relax.VirtualMachine(ex, tvm.cpu())
        res = vm["main"](*(tvm.runtime.tensor(d[k]) for k in "xwb")).numpy()
        np.save({str(tmp_path / "out.npy")!r}, res)
    """)
    y = np.maximum(x @ w + b, 0)
    e = np.exp(y - y.max(-1, keepdims=True))
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_te_vector_add_exported_and_reloaded(any_venv, tmp_path):
    """TE kernel -> export_library -> load_module in a fresh process -> numpy."""
    any_venv.run(f"""
        import tvm
        from tvm import te
        n = 1024
        A = te.placeholder((n,), name="A"); B = te.placeholder((n,), name="B")
        C = te.compute((n,), lambda i: A[i] * 2.0 + B[i], name="C")
        mod = tvm.build(te.create_prim_func([A, B, C]), target="llvm")
        mod.export_library({str(tmp_path / "vadd.so")!r})
    """)
    any_venv.run(f"""
        import numpy as np, tvm
        f = tvm.runtime.load_module({str(tmp_path / "vadd.so")!r})
        a = np.arange(1024, dtype="float32"); b = np.ones(1024, dtype="float32")
        c = tvm.runtime.tensor(np.zeros(1024, dtype="float32"))
        f["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
        np.testing.assert_allclose(c.numpy(), a * 2 + b)
    """)


def test_every_registered_op_resolves(any_venv):
    # Unity batches change the order of TVM's static initializers; a batch that registered ops
    # from two places once left 32 of them listed but null (tvm.ir.Op.get returned None).
    out = any_venv.json("""
        import json, tvm
        names = [str(n) for n in tvm.ir._ffi_api.ListOpNames()]
        print(json.dumps({"count": len(names), "null": [n for n in names if tvm.ir.Op.get(n) is None]}))
    """)
    assert out["count"] > 500 and out["null"] == []
