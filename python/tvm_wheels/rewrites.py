"""Graph rewrites for inference that run before the layout conversion (pipeline.front_passes).

TVM's ConvertLayout stops with an internal error on two constructs that its ONNX importer
makes, where TVM's default pipeline (no layout conversion) compiles the model:
  - `Dropout` becomes `relax.nn.dropout`, which returns (output, mask): "Expected nested to
    match tuple" (AlexNet, VGG, SqueezeNet, Inception v1 of onnx's model zoo). At inference
    dropout is the identity, so its output is its input.
  - `Sum` of n tensors becomes sum(stack(broadcast_to(x_i)), axis=0): the stacked 5-D tensor
    has no layout to convert ("can't find S in source layout"; ResNet-50, ShuffleNet). It is
    x_1 + ... + x_n, which broadcasts the same way.
And one that makes the tuned schedules apply: an inference BatchNormalization after a
convolution is folded into the convolution's constant weights and a bias, so the fused function
is the convolution + bias of a torch export, the workload the databases were tuned on, not a
convolution + multiply + add that no record matches (ResNet-50 with its BN nodes kept: 5 of 44
functions from the cpu-avx512 database before, 29 of 29 after). The fold is numpy arithmetic on
the constants: TVM's FoldBatchnormToConv2D + FoldConstant did the same by compiling each
weight's computation, which more than doubled ResNet-50's compile time (13 s to 32 s).
"""

from __future__ import annotations


def _dropout_identity():
    from tvm.relax.dpl import is_op, is_tuple_get_item, wildcard

    x = wildcard()
    return is_tuple_get_item(is_op("relax.nn.dropout")(x), 0), lambda orig, m: m[x]


def _sum_of_stack():
    from tvm import relax
    from tvm.relax.dpl import is_op, wildcard

    stack = is_op("relax.stack")(wildcard())
    total = is_op("relax.sum")(stack)

    def rewrite(orig, m):
        call = m[stack]
        fields = call.args[0].fields if isinstance(call.args[0], relax.Tuple) else None
        axis = orig.attrs.axis
        if (not fields or int(call.attrs.axis) != 0 or orig.attrs.keepdims
                or axis is None or [int(a) for a in axis] != [0]):
            return orig
        out = fields[0]
        for f in fields[1:]:
            out = relax.op.add(out, f)
        return out

    return total, rewrite


def _batch_norm_into_conv():
    import numpy as np
    from tvm import relax
    from tvm.relax.dpl import is_const, is_op, is_tuple_get_item, wildcard

    x, w = wildcard(), is_const()
    conv = is_op("relax.nn.conv2d")(x, w)
    stats = [is_const() for _ in range(4)]  # gamma, beta, moving mean, moving variance
    bn = is_op("relax.nn.batch_norm")(conv, *stats)

    def rewrite(orig, m):
        c, b = m[conv], m[bn]
        if (c.attrs.data_layout, c.attrs.kernel_layout, int(b.attrs.axis)) != ("NCHW", "OIHW", 1):
            return orig
        weight = m[w].data.numpy()
        gamma, beta, mean, var = (m[p].data.numpy().astype("float64") for p in stats)
        if not b.attrs.scale:
            gamma = np.ones_like(gamma)
        if not b.attrs.center:
            beta = np.zeros_like(beta)
        scale = gamma / np.sqrt(var + float(b.attrs.epsilon))
        folded = (weight * scale.reshape(-1, 1, 1, 1)).astype(weight.dtype)
        bias = (beta - mean * scale).astype(weight.dtype).reshape(1, -1, 1, 1)
        return relax.op.add(relax.Call(c.op, [m[x], relax.const(folded)], c.attrs), relax.const(bias))

    return is_tuple_get_item(bn, 0), rewrite


def for_inference():
    """A module pass applying the rewrites above to every Relax function."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import rewrite_call

    rules = [_dropout_identity(), _sum_of_stack(), _batch_norm_into_conv()]

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.RewritesForInference")
    def _pass(mod, _ctx):
        out = mod.clone()
        for gv, func in mod.functions_items():
            if isinstance(func, relax.Function):
                for pattern, rewriter in rules:
                    func = rewrite_call(pattern, rewriter, func)
                out[gv] = func
        return relax.transform.DeadCodeElimination()(out)

    return _pass
