"""exp, sigmoid, tanh, erf and small powers of float32 as arithmetic the CPU vectorizes: a pass
on the scheduled PrimFuncs (pipeline.relax_pipeline) and on the candidates timed (measure.py).

TVM lowers `exp` on LLVM targets to LLVM's exp intrinsic, which x86 code generation turns into
one call of the C library's expf per element, also inside a vectorized loop; `sigmoid` and
`tanh` lower to expressions of it, `erf` (BERT's GELU) to erff, `pow` to powf. Measured on this
project's 2-core AVX-512 machine: EfficientNet-B0's 1x1 expansion conv with its SiLU epilogue
(112x112x96) took 2.1 ms, of which the conv's record says 0.38 ms; a loop of 2^20 sigmoid + exp
+ tanh took 10.6 ms with the C library, 1.0 ms as below. onnxruntime computes them with
vectorized polynomials too.

exp(x) = 2^n * p(r), n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts, so r is exact),
p the Cephes expf polynomial; the error is within 1e-7 relative, as the C library's is to a few
ulp. Past ln(FLT_MAX) the product overflows to inf, as the C library's does; below -87
(exp = 1.6e-38, near the smallest normal float32) it is 0, where the C library goes on in
subnormals. tanh near 0, where (e^2x - 1) cancels, is its Taylor polynomial. erf is TVM's own
fast_erf (the rational approximation of topi.fast_erf, which TVM registers as the lowering of
erf for its GPU backends). x ** n for a small whole constant n is a product. NaN stays NaN.
Other dtypes are left to TVM.
"""

from __future__ import annotations

F32 = "float32"
EXP_RANGE = (-87.33, 89.0)  # n from -126 (2^(n-1) is 0) to 128: past that p * 2^(n-1) * 2 is inf
TANH_CLAMP = 9.0  # tanh(9) is 1 in float32
TANH_TAYLOR_BELOW = 0.1  # |x| where tanh's Taylor polynomial to x^7 is exact to float32
# Cephes expf: exp(r) ~ 1 + r + r^2 * P(r) for |r| <= ln(2) / 2, highest power first
EXP_P = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4  # ln 2 = LN2_HI + LN2_LO; LN2_HI has few bits, so n * LN2_HI is exact
TANH_TAYLOR = (1.0, -1 / 3, 2 / 15, -17 / 315)  # of x, x^3, x^5, x^7


def _c(value):
    from tvm import tirx

    return tirx.const(value, F32)


def _let(value, body):
    """body(v) with v bound once to value: an argument used several times is computed once."""
    from tvm import tirx

    v = tirx.Var("v", F32)
    return tirx.Let(v, value, body(v))


def _horner(coefficients, x):
    out = _c(coefficients[0])
    for c in coefficients[1:]:
        out = out * x + _c(c)
    return out


def exp(x):
    from tvm import tirx

    def with_n(x, n):
        def with_r(r):
            p = _horner(EXP_P, r) * r * r + r + _c(1.0)
            # 2^(n-1) from its exponent bits, times 2: n reaches 128 at the top of the range, where 2^n is
            # not a float32 but p * 2^(n-1) * 2 is (or overflows to inf where exp does)
            half = tirx.reinterpret(F32, tirx.shift_left(tirx.Cast("int32", n) + 126, tirx.const(23, "int32")))
            return p * half * _c(2.0)
        return _let(x - n * _c(LN2_HI) - n * _c(LN2_LO), with_r)

    def clamped(x):
        return _let(tirx.floor(x * _c(1.4426950408889634) + _c(0.5)), lambda n: with_n(x, n))

    low, high = EXP_RANGE
    return _let(tirx.max(tirx.min(x, _c(high)), _c(low)), clamped)


def sigmoid(x):
    return _c(1.0) / (_c(1.0) + exp(-x))


def tanh(x):
    from tvm import tirx

    def of(x):
        def far(e):
            return (e - _c(1.0)) / (e + _c(1.0))
        near = x * _horner(TANH_TAYLOR[::-1], x * x)
        return tirx.Select(tirx.abs(x) < _c(TANH_TAYLOR_BELOW), near,
                           _let(exp(_c(2.0) * tirx.max(tirx.min(x, _c(TANH_CLAMP)), _c(-TANH_CLAMP))), far))

    return _let(x, of)


def erf(x):
    import tvm
    from tvm import tirx

    fast_erf = tvm.ir.Op.get("tirx.erf").get_attr(FAST_ERF_FROM)
    # the rule repeats its argument a dozen times: give it a variable, bound once
    return _let(x, lambda v: fast_erf(tirx.erf(v)))


def power(x, exponent):
    """x ** n for a constant whole n from 2 to POWER_MULTIPLIED as products (GPT-2's tanh GELU has
    x ** 3), else None: TVM lowers every power to the C library's powf."""
    from tvm import tirx

    n = exponent.value if isinstance(exponent, tirx.FloatImm) else None
    if n is None or n != int(n) or not 2 <= n <= POWER_MULTIPLIED:
        return None

    def product(v):
        out = v
        for _ in range(int(n) - 1):
            out = out * v
        return out

    return _let(x, product)


POWER_MULTIPLIED = 4
FAST_ERF_FROM = "metal.FLowerIntrinsic"  # TVM's lowering of erf to fast_erf, also the other GPU backends'
FAST = {"tirx.exp": exp, "tirx.sigmoid": sigmoid, "tirx.tanh": tanh, "tirx.erf": erf}


def fast_math():
    """A pass that replaces float32 exp, sigmoid, tanh, erf and powers in every PrimFunc by the above."""
    import tvm
    from tvm import tirx

    def rewrite(node):
        if not isinstance(node.op, tvm.ir.Op) or str(node.ty) != F32:
            return None
        if node.op.name == "tirx.pow":
            return power(*node.args)
        if node.op.name not in FAST:
            return None
        # the clamps would turn NaN into a number
        return _let(node.args[0], lambda v: tirx.Select(tirx.isnan(v), v, FAST[node.op.name](v)))

    @tirx.transform.prim_func_pass(opt_level=0, name="tvm_wheels.FastMath")
    def _pass(func, _mod, _ctx):
        return func.with_body(tirx.stmt_functor.ir_transform(func.body, None, rewrite, ["ir.Call"]))

    return _pass
