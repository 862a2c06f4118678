"""A small model for a GPU target, as code to run inside a wheel's Python: matmul + bias-free
relu, scheduled by TVM's default GPU pipeline, and `walk` over a compiled module's imports (the
VM executable imports the host (llvm) module, which imports the CUDA one)."""

SOURCE = """
import numpy as np, tvm
from tvm import relax
from tvm.script import relax as R
bb = relax.BlockBuilder()
x = relax.Var("x", R.Tensor((4, 64), "float32"))
w = relax.const(np.linspace(-1, 1, 64 * 32, dtype="float32").reshape(64, 32))
with bb.function("main", [x]):
    with bb.dataflow():
        y = bb.emit_output(relax.op.nn.relu(relax.op.matmul(x, w)))
    bb.emit_func_output(y)
mod = bb.get()

def walk(m):
    yield m
    for i in m.imports:
        yield from walk(i)
"""
