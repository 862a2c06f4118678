"""MobileNet v2 (torchvision's architecture: inverted residual blocks with depthwise 3x3
convolutions, ReLU6) as an ONNX graph written with onnx.helper, seeded random weights, batch
norms folded into the convolutions as torch's exporter folds them. No downloads, no torch.

At 224x224 it is one of the workloads the shipped databases are tuned on (tools/tune_db.py);
at another resolution (MobileNet's published 160, 192) every convolution is a shape no record
has: what a model nobody tuned gets.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .resnet50 import OPSET, Graph

# torchvision's inverted residual settings: expansion t, output channels c, repeats n, stride s
SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


class _MobileGraph(Graph):
    def conv6(self, x: str, cin: int, cout: int, k: int, stride: int = 1, groups: int = 1, relu6: bool = True) -> str:
        w = self.rng.standard_normal((cout, cin // groups, k, k)) * np.sqrt(2.0 / (cin // groups * k * k))
        out = self.name("conv")
        self.nodes.append(helper.make_node(
            "Conv", [x, self.const(w, "w"), self.const(self.rng.standard_normal(cout) * 0.01, "b")], [out],
            kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=groups))
        if not relu6:
            return out
        clipped = self.name("relu6")
        self.nodes.append(helper.make_node("Clip", [out, self.const(np.array(0.0), "lo"), self.const(np.array(6.0), "hi")],
                                           [clipped]))
        return clipped

    def inverted_residual(self, x: str, cin: int, cout: int, stride: int, t: int) -> str:
        hidden = cin * t
        y = self.conv6(x, cin, hidden, 1) if t != 1 else x
        y = self.conv6(y, hidden, hidden, 3, stride, groups=hidden)
        y = self.conv6(y, hidden, cout, 1, relu6=False)
        return self.add(y, x) if stride == 1 and cin == cout else y


def build(seed: int = 0, size: int = 224) -> onnx.ModelProto:
    g = _MobileGraph(seed)
    x, cin = g.conv6("input", 3, 32, 3, 2), 32
    for t, c, n, s in SETTINGS:
        for i in range(n):
            x, cin = g.inverted_residual(x, cin, c, s if i == 0 else 1, t), c
    x = g.conv6(x, cin, 1280, 1)
    gap, flat = g.name("gap"), g.name("flatten")
    g.nodes += [helper.make_node("GlobalAveragePool", [x], [gap]), helper.make_node("Flatten", [gap], [flat], axis=1)]
    w = g.const(g.rng.standard_normal((1000, 1280)) * np.sqrt(1.0 / 1280), "fc_w")
    b = g.const(g.rng.standard_normal(1000) * 0.01, "fc_b")
    g.nodes.append(helper.make_node("Gemm", [flat, w, b], ["logits"], transB=1))
    graph = helper.make_graph(g.nodes, "mobilenet_v2",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def sample_input(seed: int = 1, size: int = 224) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, 3, size, size)).astype(np.float32)
