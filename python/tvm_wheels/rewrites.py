"""Graph rewrites for inference that run before the layout conversion (tuning.front_passes).

TVM's ConvertLayout stops with an internal error on two constructs that its ONNX importer
makes, where TVM's default pipeline (no layout conversion) compiles the model:
  - `Dropout` becomes `relax.nn.dropout`, which returns (output, mask): "Expected nested to
    match tuple" (AlexNet, VGG, SqueezeNet, Inception v1 of onnx's model zoo). At inference
    dropout is the identity, so its output is its input.
  - `Sum` of n tensors becomes sum(stack(broadcast_to(x_i)), axis=0): the stacked 5-D tensor
    has no layout to convert ("can't find S in source layout"; ResNet-50, ShuffleNet). It is
    x_1 + ... + x_n, which broadcasts the same way.
And one that makes the tuned schedules apply: an inference BatchNormalization after a
convolution is folded into the convolution's constant weights and a bias (TVM's
FoldBatchnormToConv2D, then FoldConstant), so the fused function is the convolution + bias of
a torch export, the workload the databases were tuned on, not a convolution + multiply + add
that no record matches (measured on ResNet-50 with its BN nodes kept: 5 of 44 functions from
the cpu-avx512 database before, see the README's fast-models section for after).
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


def for_inference():
    """A module pass applying the rewrites above to every Relax function."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import rewrite_call

    rules = [_dropout_identity(), _sum_of_stack()]

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.RewritesForInference")
    def _pass(mod, _ctx):
        out = mod.clone()
        for gv, func in mod.functions_items():
            if isinstance(func, relax.Function):
                for pattern, rewriter in rules:
                    func = rewrite_call(pattern, rewriter, func)
                out[gv] = func
        out = relax.transform.FoldBatchnormToConv2D()(out)
        return relax.transform.FoldConstant()(relax.transform.DeadCodeElimination()(out))

    return _pass
