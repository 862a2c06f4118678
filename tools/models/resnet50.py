"""ResNet-50 (torchvision's architecture, v1.5: stride on the 3x3 conv) as an
ONNX graph written with onnx.helper, with seeded random weights: no downloads.

Batch norms are folded into the convolutions' weights and biases, as torch's
exporter does for inference; `batch_norm=True` keeps them as BatchNormalization
nodes after bias-free convolutions, as many ONNX files have them.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Graph:
    def __init__(self, seed: int, batch_norm: bool = False):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0
        self.batch_norm = batch_norm

    def name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}_{self.n}"

    def const(self, array: np.ndarray, prefix: str) -> str:
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, relu: bool = True,
             gain: float = 1.0) -> str:
        # He init keeps activations O(1) through 50 layers, like a trained net.
        w = self.rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)) * gain
        b = self.rng.standard_normal(cout) * 0.01
        out = self.name("conv")
        inputs = [x, self.const(w, "w")] + ([] if self.batch_norm else [self.const(b, "b")])
        self.nodes.append(helper.make_node(
            "Conv", inputs, [out], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4))
        if self.batch_norm:  # the bias is the BN's shift; scale, mean and variance near identity
            stats = [1 + 0.1 * self.rng.standard_normal(cout), b, 0.1 * self.rng.standard_normal(cout),
                     self.rng.uniform(0.8, 1.2, cout)]
            conv, out = out, self.name("bn")
            self.nodes.append(helper.make_node(
                "BatchNormalization", [conv, *(self.const(a, n) for a, n in zip(stats, "sbmv"))], [out]))
        return self.relu(out) if relu else out

    def relu(self, x: str) -> str:
        out = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [x], [out]))
        return out

    def add(self, a: str, b: str) -> str:
        out = self.name("add")
        self.nodes.append(helper.make_node("Add", [a, b], [out]))
        return out

    def bottleneck(self, x: str, cin: int, width: int, stride: int) -> str:
        cout = width * 4
        y = self.conv(x, cin, width, 1)
        y = self.conv(y, width, width, 3, stride)
        # A small last conv in each residual branch (as trained ResNets' BN gammas
        # are) keeps 16 blocks from blowing the activations up.
        y = self.conv(y, width, cout, 1, relu=False, gain=0.2)
        shortcut = self.conv(x, cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else x
        return self.relu(self.add(y, shortcut))


def build(seed: int = 0, batch: int = 1, batch_norm: bool = False) -> onnx.ModelProto:
    g = Graph(seed, batch_norm)
    x = g.conv("input", 3, 64, 7, 2)
    pooled = g.name("maxpool")
    g.nodes.append(helper.make_node("MaxPool", [x], [pooled], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = pooled, 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            x = g.bottleneck(x, cin, width, stride if i == 0 else 1)
            cin = width * 4
    gap = g.name("gap")
    g.nodes.append(helper.make_node("GlobalAveragePool", [x], [gap]))
    flat = g.name("flatten")
    g.nodes.append(helper.make_node("Flatten", [gap], [flat], axis=1))
    w = g.const(g.rng.standard_normal((1000, 2048)) * np.sqrt(1.0 / 2048), "fc_w")
    b = g.const(g.rng.standard_normal(1000) * 0.01, "fc_b")
    g.nodes.append(helper.make_node("Gemm", [flat, w, b], ["logits"], transB=1))
    graph = helper.make_graph(
        g.nodes, "resnet50",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 1000])],
        g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def basic_block(seed: int = 0, channels: int = 64, size: int = 56) -> onnx.ModelProto:
    """ResNet-18/34's basic block: two 3x3 convolutions of ResNet-50's shapes (its bottlenecks'
    middle ones), the second ending in the residual add where ResNet-50's ends in a ReLU."""
    g = Graph(seed)
    y = g.conv(g.conv("input", channels, channels, 3), channels, channels, 3, relu=False)
    out = g.relu(g.add(y, "input"))
    shape = [1, channels, size, size]
    graph = helper.make_graph(g.nodes, "basic_block", [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, shape)], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def conv_relu(seed: int = 0, cin: int = 64, cout: int = 128, k: int = 3, stride: int = 2, size: int = 56):
    """One convolution + bias + ReLU of any shape (ResNet-18's first downsampling one by default,
    a shape ResNet-50 does not have)."""
    g = Graph(seed)
    out = g.conv("input", cin, cout, k, stride)
    side = (size + 2 * (k // 2) - k) // stride + 1
    graph = helper.make_graph(g.nodes, "conv_relu",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, cin, size, size])],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, cout, side, side])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def sample_input(seed: int = 1, batch: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, 3, 224, 224)).astype(np.float32)
