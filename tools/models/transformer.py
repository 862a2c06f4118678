"""One BERT-base encoder block (hidden 768, 12 heads, FFN 3072, sequence 128, batch 1) as an
ONNX graph written with onnx.helper, with seeded random weights: no downloads.

Post-norm, GELU by its erf formula, as exporters emit it at opset 17. `gemm=True` writes each
dense layer as GPT-2's export does: the [1, seq, 768] input reshaped to [seq, 768], an ONNX Gemm
(2-D only) with its bias, and reshaped back.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
HIDDEN, HEADS, FFN, SEQ = 768, 12, 3072, 128


def build(seed: int = 0, seq: int = SEQ, gemm: bool = False) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, out, **attrs):
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def dense(x, name, cin, cout):
        w = const(f"{name}_w", (rng.standard_normal((cin, cout)) / np.sqrt(cin)).astype(np.float32))
        b = const(f"{name}_b", (rng.standard_normal(cout) * 0.02).astype(np.float32))
        if gemm:
            rows = node("Reshape", [x, const(f"{name}_rows", np.array([seq, cin], np.int64))], f"{name}_2d")
            y = node("Gemm", [rows, w, b], f"{name}_gemm")
            return node("Reshape", [y, const(f"{name}_3d", np.array([1, seq, cout], np.int64))], name)
        return node("Add", [node("MatMul", [x, w], f"{name}_mm"), b], name)

    def layer_norm(x, name):
        g = const(f"{name}_g", np.ones(HIDDEN, np.float32))
        b = const(f"{name}_b", np.zeros(HIDDEN, np.float32))
        return node("LayerNormalization", [x, g, b], name, axis=-1, epsilon=1e-12)

    heads_shape = const("heads_shape", np.array([1, seq, HEADS, HIDDEN // HEADS], np.int64))
    merged_shape = const("merged_shape", np.array([1, seq, HIDDEN], np.int64))

    def heads(x, name, perm):
        return node("Transpose", [node("Reshape", [x, heads_shape], f"{name}_r")], name, perm=perm)

    q = heads(dense("input", "q", HIDDEN, HIDDEN), "qh", [0, 2, 1, 3])
    k = heads(dense("input", "k", HIDDEN, HIDDEN), "kh", [0, 2, 3, 1])
    v = heads(dense("input", "v", HIDDEN, HIDDEN), "vh", [0, 2, 1, 3])
    scale = const("scale", np.array(np.sqrt(HIDDEN // HEADS), np.float32))
    scores = node("Div", [node("MatMul", [q, k], "qk"), scale], "scores")
    probs = node("Softmax", [scores], "probs", axis=-1)
    ctx = node("Transpose", [node("MatMul", [probs, v], "pv")], "ctx_t", perm=[0, 2, 1, 3])
    ctx = node("Reshape", [ctx, merged_shape], "ctx")
    x = layer_norm(node("Add", [dense(ctx, "o", HIDDEN, HIDDEN), "input"], "res1"), "ln1")

    h = dense(x, "ffn1", HIDDEN, FFN)
    erf = node("Erf", [node("Div", [h, const("sqrt2", np.array(np.sqrt(2.0), np.float32))], "h_s")], "h_erf")
    one = const("one", np.array(1.0, np.float32))
    half = const("half", np.array(0.5, np.float32))
    gelu = node("Mul", [node("Mul", [h, node("Add", [erf, one], "h_1")], "h_m"), half], "gelu")
    layer_norm(node("Add", [dense(gelu, "ffn2", FFN, HIDDEN), x], "res2"), "output")

    graph = helper.make_graph(
        nodes, "bert_block",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, seq, HIDDEN])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, seq, HIDDEN])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def sample_input(seed: int = 1, seq: int = SEQ) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, seq, HIDDEN)).astype(np.float32)


def attention_scores(tokens: int = 197) -> onnx.ModelProto:
    """One layer's attention scores, Q K^T over 12 heads at `tokens` tokens (ViT-B/16's 197 by
    default), with Q = K = the input [1, HEADS, tokens, 64]: a batched matmul with no weight."""
    head = HIDDEN // HEADS
    nodes = [helper.make_node("Transpose", ["input"], ["k_t"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["input", "k_t"], ["scores"])]
    graph = helper.make_graph(nodes, "attention_scores",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, HEADS, tokens, head])],
                              [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, HEADS, tokens, tokens])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


def attention_input(seed: int = 1, tokens: int = 197) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, HEADS, tokens, HIDDEN // HEADS)).astype(np.float32)
