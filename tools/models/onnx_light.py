"""ONNX's own model zoo, the light versions shipped in the onnx package (onnx.backend.test data),
made testable (random weights around their constant ones): the tier-1 test of tvm_wheels.compile on graphs as the ONNX importer writes them
(tests/wheel/test_onnx_zoo.py) and bench/zoo.py read the same list and the same weights."""

from __future__ import annotations

import os

import onnx
from onnx import TensorProto, helper, numpy_helper

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet", "squeezenet",
          "vgg19", "zfnet512"]


def with_random_weights(model, rng):
    """Each ConstantOfShape weight becomes an initializer of random values around its own, and
    the output is the scores before a final Softmax (which saturates to 0 and 1 here)."""
    graph = model.graph
    shapes = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    nodes, weights = [], []
    for node in graph.node:
        value = next((a.t for a in node.attribute if a.name == "value"), None)
        if node.op_type == "ConstantOfShape" and node.input[0] in shapes and value is not None:
            fill = numpy_helper.to_array(value).ravel()[0]
            weight = (fill * rng.uniform(0.5, 1.5, shapes[node.input[0]])).astype(fill.dtype)
            weights.append(numpy_helper.from_array(weight, node.output[0]))
        else:
            nodes.append(node)
    if nodes[-1].op_type == "Softmax" and list(nodes[-1].output) == [graph.output[0].name]:
        scores = nodes.pop().input[0]
        del graph.output[:]
        graph.output.append(helper.make_tensor_value_info(scores, TensorProto.FLOAT, None))
    used = {i for n in nodes for i in n.input}
    inputs = [i for i in graph.input if i.name in used]  # the shapes of the weights go
    kept = [i for i in graph.initializer if i.name in used]
    del graph.node[:], graph.initializer[:], graph.input[:]
    graph.node.extend(nodes)
    graph.initializer.extend(kept + weights)
    graph.input.extend(inputs)
    return model
