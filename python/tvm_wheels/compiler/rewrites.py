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
And one more for the records: a matmul of a flattened input by a 2-D weight is written as the
[1, rows, K] x [K, N] matmul that a transformer's dense layer is in the tuned BERT block. ONNX's
Gemm is 2-D, so exporters reshape [1, 128, 768] to [128, 768] before it and back after it
(GPT-2): the same arithmetic, but a loop nest of another depth, which no record of the 3-D form
fits (measured: GPT-2's dense layers carried over from the 1x1000x2048 classifier, 10x
onnxruntime).
And ONNX's Clip as relax ops (_clip_as_ops), which the layout conversion carries through.
After the layout conversion (rows_padded), a dense layer whose rows are not a multiple of
ROWS_MULTIPLE is computed on padded rows (_matmul_rows_padded), and so is a big 1x1 convolution
at an odd height and width, written as the matmul it is (_conv1x1_as_matmul).
"""

from __future__ import annotations

ROWS_MULTIPLE = 8  # a dense layer's rows are padded to a multiple of this (_matmul_rows_padded) ...
PAD_ROWS_FROM = 64  # ... from this many rows: below, the added rows would cost more than the tiling gains
MATMUL_WEIGHTS_FROM = 512 * 512  # a 1x1 convolution this big at an odd size is a dense layer (_conv1x1_as_matmul)


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


def _broadcast_to_own_shape():
    """broadcast_to(x, shape of x) is x. ONNX Sum's importer broadcasts each input to the output's
    shape, a no-op where they already have it, but a TVM ConvertLayout does not know: it keeps the
    add in NCHW between two transposes, where it would fuse into the convolution before it (onnx's
    ResNet-50, whose residual adds are Sums)."""
    from tvm.relax.dpl import is_op, wildcard

    x = wildcard()

    def rewrite(orig, m):
        shape = _static_shape(orig)
        return m[x] if shape is not None and _static_shape(m[x]) == shape else orig

    return is_op("relax.broadcast_to")(x, wildcard()), rewrite


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


def _static_shape(expr):
    """An expression's shape as ints, None unless every dimension is a constant."""
    values = getattr(getattr(expr.ty, "shape", None), "values", None)
    if values is None or not all(isinstance(v, int) or hasattr(v, "value") for v in values):
        return None
    return [int(v) for v in values]


def _reshape_of_reshape():
    """reshape(reshape(x)) is one reshape, or none where it gives x's shape back: the pairs that
    _matmul_rows_batched leaves beside the exporter's own reshapes, which would otherwise stand
    between a matmul and its epilogue and keep them from fusing."""
    from tvm import relax
    from tvm.relax.dpl import is_op, wildcard

    x = wildcard()
    inner = is_op("relax.reshape")(x, wildcard())
    outer = is_op("relax.reshape")(inner, wildcard())

    def rewrite(orig, m):
        src, out = _static_shape(m[x]), _static_shape(orig)
        if out is None:
            return orig
        return m[x] if src == out else relax.op.reshape(m[x], out)

    return outer, rewrite


def _with_column_bias(y, bias, columns):
    """y (a rewritten matmul) + bias as a vector of its `columns` output columns, or y where
    there is no bias (bias None); None where `bias` is not one of the output columns (shape
    [1, ..., 1, columns] or [1, ..., 1, 1]): the rewrite then leaves the matched call as it is."""
    from tvm import relax

    if bias is None:
        return y
    b = _static_shape(bias)
    if b is None or b[:-1] != [1] * (len(b) - 1) or b[-1] not in (1, columns):
        return None
    return relax.op.add(y, relax.op.reshape(bias, [b[-1]]))


def _matmul_rows_batched():
    import math

    from tvm import relax
    from tvm.relax.dpl import is_const, is_op, wildcard

    # only where the exporter flattened the input (a reshape; it reshapes the result back after
    # the bias, so both pairs of reshapes cancel): elsewhere the reshape this leaves after the
    # matmul would keep its epilogue (an MLP's ReLU) out of its fused function
    x, w, bias = is_op("relax.reshape")(wildcard(), wildcard()), wildcard(), is_const()
    mm = is_op("relax.matmul")(x, w)
    with_bias = is_op("relax.add")(mm, bias)

    def rewrite(orig, m):
        xs, ws, out = _static_shape(m[x]), _static_shape(m[w]), _static_shape(orig)
        if xs is None or ws is None or out is None or len(ws) != 2 or len(xs) < 2:
            return orig
        rows = math.prod(xs[:-1])
        if rows == 1 or (len(xs) == 3 and xs[0] == 1):
            return orig  # a classifier's [1, K] x [K, N] (ResNet-50's record), or already [1, rows, K]
        y = relax.op.matmul(relax.op.reshape(m[x], [1, rows, xs[-1]]), m[w], out_dtype=m[mm].attrs.out_dtype)
        y = _with_column_bias(y, m[bias] if orig.op.name == "relax.add" else None, ws[1])
        return orig if y is None else relax.op.reshape(y, out)

    return [(with_bias, rewrite), (mm, rewrite)]


def _matmul_rows_padded():
    """A dense layer whose rows (tokens) are not a multiple of ROWS_MULTIPLE is computed on zero
    rows added up to one and cut after its bias, as the [1, rows, K] x [K, N] matmul of the tuned
    BERT block (the token axis may be another one: torch's MultiheadAttention gives [197, 1, 768]).
    The rows of a matmul are independent, so the rows it keeps are the same numbers. MetaSchedule
    tiles a loop only by divisors of its extent, so at ViT's 197 tokens (a prime) every record's
    tiling of the rows falls to 1 (measured on a 197 x 768 x 3072 layer: 47 GFLOP/s; padded to
    200 rows, 106)."""
    import math

    from tvm import relax
    from tvm.relax.dpl import is_const, is_op, wildcard

    x, w, bias = wildcard(), wildcard(), is_const()  # w: a constant, or one transposed (ONNX Gemm's transB)
    mm = is_op("relax.matmul")(x, w)
    with_bias = is_op("relax.add")(mm, bias)

    def rewrite(orig, m):
        xs, ws, out = _static_shape(m[x]), _static_shape(m[w]), _static_shape(orig)
        if xs is None or ws is None or out is None or len(ws) != 2 or len(xs) < 2 or out != [*xs[:-1], ws[1]]:
            return orig
        rows = math.prod(xs[:-1])
        extra = -rows % ROWS_MULTIPLE
        if rows < PAD_ROWS_FROM or not extra or sum(d > 1 for d in xs[:-1]) != 1:
            return orig  # rows that tile, or a batch of row blocks (a batched matmul's)
        # rows on the next-to-last axis stay there: a reshape around the matmul would keep its
        # epilogue (ViT's GELU, its residual add) out of its fused function
        flat = xs[-2] != rows
        data = relax.op.reshape(m[x], [1, rows, xs[-1]]) if flat else m[x]
        n = 3 if flat else len(xs)
        y = relax.op.matmul(relax.op.nn.pad(data, [0, 0] * (n - 2) + [0, extra, 0, 0]), m[w],
                            out_dtype=m[mm].attrs.out_dtype)
        y = _with_column_bias(y, m[bias] if orig.op.name == "relax.add" else None, ws[1])
        if y is None:
            return orig
        y = relax.op.strided_slice(y, axes=[n - 2], begin=[0], end=[rows])
        return relax.op.reshape(y, out) if flat else y

    return [(with_bias, rewrite), (mm, rewrite)]


def _conv1x1_as_matmul():
    """A 1x1 convolution (stride 1, unpadded, NHWC, batch 1) at an odd height and width, with
    MATMUL_WEIGHTS_FROM weights or more, as the dense layer it is: [1, pixels, in] x [in, out],
    its bias and ReLU, then the reshape back to [1, height, width, out]. MetaSchedule tiles the
    convolution's height and width only by their divisors, which at 13x13 (a prime) are none;
    as a matmul its rows are padded (_matmul_rows_padded, 169 -> 176) and the dense layers'
    records carry over (measured: SqueezeNet's 512 -> 1000 classifier convolution at 13x13,
    2.9 ms; as a matmul, 1.0 ms). Even sizes keep their convolution records (ResNet's 14x14),
    and so do small convolutions, whose convolution records carry over well (SqueezeNet's
    squeeze and expand layers converted too: the model in 7.9 ms, against 5.6 ms)."""
    from tvm import relax
    from tvm.relax.dpl import is_op, wildcard

    x, w, bias = wildcard(), wildcard(), wildcard()  # the layout conversion transposes the constants
    conv = is_op("relax.nn.conv2d")(x, w)
    with_bias = is_op("relax.add")(conv, bias)
    activated = is_op("relax.nn.relu")(with_bias)

    def rewrite(orig, m):
        a = m[conv].attrs
        xs, ws, out = _static_shape(m[x]), _static_shape(m[w]), _static_shape(orig)
        layouts = (a.data_layout, a.kernel_layout, a.out_layout)
        if (xs is None or ws is None or out is None or layouts != ("NHWC", "OHWI", "NHWC") or ws[1:3] != [1, 1]
                or int(a.groups) != 1 or any(int(p) for p in a.padding) or any(int(s) != 1 for s in a.strides)
                or xs[0] != 1):
            return orig
        pixels = xs[1] * xs[2]
        if pixels < PAD_ROWS_FROM or not pixels % 2 or ws[0] * ws[3] < MATMUL_WEIGHTS_FROM:  # odd pixels: both sides
            return orig
        weight = relax.op.permute_dims(relax.op.reshape(m[w], [ws[0], ws[3]]))
        y = relax.op.matmul(relax.op.reshape(m[x], [1, pixels, xs[3]]), weight, out_dtype=a.out_dtype)
        # the epilogue before the reshape back, so that it fuses into the matmul
        y = _with_column_bias(y, m[bias] if orig.op.name != "relax.nn.conv2d" else None, ws[0])
        if y is None:
            return orig
        return relax.op.reshape(relax.op.nn.relu(y) if orig.op.name == "relax.nn.relu" else y, out)

    return [(activated, rewrite), (with_bias, rewrite), (conv, rewrite)]


def _rewriting(name, rules_of):
    """A module pass applying the rules (pattern, rewriter) that rules_of(module) gives, in their
    order, to every Relax function; the functions no call is left to are removed."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import rewrite_call

    @tvm.transform.module_pass(opt_level=0, name=name)
    def _pass(mod, _ctx):
        rules, out = rules_of(mod), mod.clone()
        for gv, func in mod.functions_items():
            if isinstance(func, relax.Function):
                for pattern, rewriter in rules:
                    func = rewrite_call(pattern, rewriter, func)
                out[gv] = func
        return relax.transform.DeadCodeElimination()(out)

    return _pass


def _bound_of(func):
    """relax.op.maximum or minimum where the PrimFunc `func` is max or min of a tensor and a 0-d
    one, element by element (what TVM's ONNX importer emits for Clip: topi.maximum, topi.minimum
    through emit_te); else None."""
    from tvm import relax, tirx

    if not isinstance(func, tirx.PrimFunc) or len(func.params) != 3:
        return None
    x, bound, out = func.params
    if len(bound.shape) != 0 or [int(d) for d in x.shape] != [int(d) for d in out.shape]:
        return None
    stores = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: stores.append(n) if isinstance(n, tirx.BufferStore) else None)
    op = {tirx.Max: relax.op.maximum, tirx.Min: relax.op.minimum}.get(type(stores[0].value)) if len(stores) == 1 else None
    if op is None or not stores[0].buffer.same_as(out):
        return None
    a, b = stores[0].value.a, stores[0].value.b
    same_element = (isinstance(a, tirx.BufferLoad) and a.buffer.same_as(x) and len(a.indices) == len(stores[0].indices)
                    and all(i.same_as(j) for i, j in zip(a.indices, stores[0].indices)))
    return op if same_element and isinstance(b, tirx.BufferLoad) and b.buffer.same_as(bound) else None


def _clip_as_ops(mod):
    """ONNX's Clip (ReLU6: MobileNet v2) as relax.maximum and minimum. TVM's importer emits it as
    calls of TE functions of `mod`, which ConvertLayout cannot see into: it keeps each in NCHW
    between two transposes, where the op would fuse into the convolution before it (measured on
    MobileNet v2, torch export: 35 transpose-clip-transpose functions, 11.6 ms; fused, 6.7 ms)."""
    import tvm
    from tvm.relax.dpl import is_op, wildcard

    def rewrite(orig, _m):
        callee = orig.args[0]
        op = _bound_of(mod[callee]) if isinstance(callee, tvm.ir.GlobalVar) and len(orig.args) == 2 else None
        return orig if op is None else op(*orig.args[1].fields)

    return is_op("relax.call_tir")(wildcard(), wildcard()), rewrite


def for_inference():
    """The rewrites above that come before the layout conversion."""
    return _rewriting("tvm_wheels.RewritesForInference",
                      lambda mod: [_clip_as_ops(mod), _dropout_identity(), _sum_of_stack(), _broadcast_to_own_shape(),
                                   _batch_norm_into_conv(), *_matmul_rows_batched(), _reshape_of_reshape()])


def rows_padded():
    """_conv1x1_as_matmul, then _matmul_rows_padded, after the layout conversion: TVM's
    ConvertLayout dies on the pad and slice they add (measured on ViT-B/16: std::bad_alloc, then
    a double free), and the convolution is NHWC only after it."""
    return _rewriting("tvm_wheels.RowsPadded", lambda _mod: [*_conv1x1_as_matmul(), *_matmul_rows_padded()])
