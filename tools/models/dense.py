"""A one-task ONNX model, relu(x @ w + b) at 64x256 @ 256x128: the smallest model that tuning
(`tvm-wheels tune`, locally or through RPC) has a real task in, a dense layer with its epilogue."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

INPUT = (64, 256)


def write(path: Path, seed: int = 0):
    """Writes the model to path and returns it (onnx.ModelProto)."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((256, 128)).astype(np.float32) / 16, "w")
    b = numpy_helper.from_array(rng.standard_normal(128).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["input", "w"], ["mm"]), helper.make_node("Add", ["mm", "b"], ["y"]),
             helper.make_node("Relu", ["y"], ["output"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(INPUT))],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [64, 128])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    Path(path).write_bytes(model.SerializeToString())
    return model


def reference(model, x: np.ndarray) -> np.ndarray:
    """numpy's relu(x @ w + b) with the model's weights."""
    w, b = (numpy_helper.to_array(t) for t in model.graph.initializer)
    return np.maximum(x @ w + b, 0)
