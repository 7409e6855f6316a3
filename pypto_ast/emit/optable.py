"""The op table: for each op the front end lowers, how the Ascend C emitter writes it and how
the host runtime computes it, per dtype -- or why it does not yet.

Descriptive, and held to the code by ``tests/emit_host/test_optable.py``: every op the front end
lowers (``frontend/ops.py``) is here exactly once, as ``EMITTED`` (each of its dtypes has a
kernel in the edge-value suite, ``tests/emit_host/test_edge_semantics.py``, or a named numeric
test, and every Ascend C call listed appears in the kernels emitted for it), ``LOWERED_INTO``
(the front end rewrites it into other ops), or ``GAPS`` (the emitter stops at PTO109 naming
it).  ``python scripts/document_ops.py`` writes the README's coverage table from it.  The
numeric rules each op follows (NaN, overflow, rounding) are docs/semantics.md.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Emitted:
    """``op`` (the front end's name, the IR opcode) on ``dtypes`` (the input's; ``matmul``:
    ``in->out``): its kernel calls the Ascend C APIs ``ascendc`` (each appears in at least one of
    its kernels), which the host runtime computes as ``host`` says.  ``cases``: names of
    edge-value cases (``<case>/<dtype>``) covering it; an op with none (layout, creation) has
    probe kernels in ``tests/emit_host/test_optable.py``, checked there against torch."""

    op: str
    dtypes: tuple
    ascendc: tuple
    host: str
    cases: tuple = ()


F = ("fp32", "fp16")
FB = ("fp32", "fp16", "bf16")
FI = ("fp32", "fp16", "int32")
FI16 = ("fp32", "fp16", "bf16", "int32", "int16")
INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32")
_INTEGER = "emit/vector_int.py"
_ELEMENTWISE = "runtime/elementwise.cpp"
_REDUCE = "runtime/reduce.cpp"

EMITTED = (
    # arithmetic
    Emitted("add", FI16, ("Add", "Adds", "Axpy"), f"{_ELEMENTWISE}: IEEE add (integers wrap); Axpy for alpha",
            ("add", "add_s", "add_alpha")),
    Emitted("sub", FI16, ("Sub", "Adds", "Axpy"), f"{_ELEMENTWISE}: IEEE subtract; scalar as Adds(-s); Axpy for alpha",
            ("sub", "sub_s", "rsub_s", "sub_alpha")),
    Emitted("mul", FI16, ("Mul", "Muls"), f"{_ELEMENTWISE}: IEEE multiply (integers wrap)", ("mul", "mul_s", "mul_0")),
    Emitted("div", FB, ("Div", "Muls", "Reciprocal"),
            f"{_ELEMENTWISE}: IEEE divide; Muls only by an exact power-of-two reciprocal",
            ("div", "div_s", "div_pow2", "rdiv_s", "div_row", "rdiv_row", "div_col")),
    Emitted("maximum", FI16, ("Max", "Maxs"), f"{_ELEMENTWISE}: IEEE 754-2019 maximum (NaN propagates, -0 < +0)",
            ("maximum", "max_s", "max_0", "max_row")),
    Emitted("minimum", FI16, ("Min", "Mins"), f"{_ELEMENTWISE}: IEEE 754-2019 minimum", ("minimum", "min_s", "min_0",
                                                                                      "min_col")),
    Emitted("clip", FB, ("Maxs", "Mins"), f"{_ELEMENTWISE}: Maxs then Mins", ("clip",)),
    Emitted("neg", FI16, ("Muls",), f"{_ELEMENTWISE}: Muls(-1)", ("neg",)),
    Emitted("abs", FB, ("Abs",), f"{_ELEMENTWISE}: exact", ("abs",)),
    Emitted("relu", FB, ("Relu",), f"{_ELEMENTWISE}: Maxs(x, 0)", ("relu",)),
    Emitted("lrelu", FB, ("CompareScalar", "Muls", "Select"), f"{_ELEMENTWISE}: x >= 0 ? x : slope * x", ("lrelu",)),
    Emitted("reciprocal", FB, ("Reciprocal",), f"{_ELEMENTWISE}: IEEE 1 / x", ("reciprocal",)),
    Emitted("sign", FB, ("CompareScalar", "Select", "Add"), f"{_ELEMENTWISE}: (x > 0) - (x < 0)", ("sign",)),
    # transcendental
    Emitted("sqrt", FB, ("Sqrt",), f"{_ELEMENTWISE}: correctly rounded", ("sqrt",)),
    Emitted("rsqrt", FB, ("Rsqrt",), f"{_ELEMENTWISE}: 1 / sqrt(x) in double", ("rsqrt",)),
    Emitted("exp", FB, ("Exp",), f"{_ELEMENTWISE}: libm exp", ("exp",)),
    Emitted("log", FB, ("Ln",), f"{_ELEMENTWISE}: libm log", ("log",)),
    Emitted("exp2", FB + ("int8", "uint8", "int16", "int32"), ("Muls", "Exp"),
            "composed: exp(x * ln 2), fp16 widened to fp32; an integer input Cast to fp32 first (8-bit via half), "
            "an fp32 result", ("exp2",)),
    Emitted("log2", FB, ("Ln", "Muls"), "composed: ln(x) / ln 2", ("log2",)),
    Emitted("log10", FB, ("Ln", "Muls"), "composed: ln(x) / ln 10", ("log10",)),
    Emitted("expm1", FB, ("Exp", "Ln", "Div", "Select"), "composed: Kahan's (u - 1) / ln(u) * x", ("expm1",)),
    Emitted("log1p", FB, ("Ln", "Div", "Select"), "composed: Kahan's ln(u) / (u - 1) * x", ("log1p",)),
    Emitted("sigmoid", FB, ("Exp", "Adds", "Div"), "composed: 1 / (1 + exp(-x))", ("sigmoid",)),
    Emitted("sin", F, ("Cast", "Mul", "Select"), "composed: three-part pi/2 reduction, Taylor polynomials",
            ("sin",)),
    Emitted("cos", F, ("Cast", "Mul", "Select"), "composed: as sin, the other quadrant", ("cos",)),
    Emitted("pow", FB, ("Mul", "Reciprocal", "Sqrt", "Rsqrt", "Exp", "Ln", "Abs"),
            "composed by exponent: torch's special cases, else |x| ** p = exp(p ln|x|) with the sign for odd p",
            ("pow0", "pow2", "pow3", "pow-1", "pow-2", "pow0.5", "pow-0.5", "pow1.5", "pow4", "pow5", "pow-3")),
    # rounding
    Emitted("floor", ("fp32", "bf16"), ("Cast",), f"{_ELEMENTWISE}: Cast float -> float, CAST_FLOOR", ("floor",)),
    Emitted("ceil", ("fp32", "bf16"), ("Cast",), f"{_ELEMENTWISE}: Cast float -> float, CAST_CEIL", ("ceil",)),
    Emitted("round", ("fp32", "bf16"), ("Cast", "Muls", "Div"), f"{_ELEMENTWISE}: Cast float -> float, CAST_RINT (half to "
            "even); decimals=d: rint(x * 10^d) / 10^d as torch", ("round", "round_d1", "round_d3", "round_d-1",
                                                                 "round_d-2")),
    Emitted("trunc", ("fp32", "bf16"), ("Cast",), f"{_ELEMENTWISE}: Cast float -> float, CAST_TRUNC", ("trunc",)),
    # compare and select
    *(Emitted(op, FB, ("Compare", "Select") + (("CompareScalar",) if op in ("gt", "eq") else ()),
              f"{_ELEMENTWISE}: IEEE compare into a bit mask (CompareScalar for a scalar operand), Select 1/0 "
              "into bool", (op,) + ((f"{op}_s",) if op in ("gt", "eq") else ()))
      for op in ("eq", "ne", "lt", "le", "gt", "ge")),
    Emitted("where", FB, ("Compare", "CompareScalar", "Select"), f"{_ELEMENTWISE}: Select by a mask from the bool cond",
            ("where", "where_s")),
    # reductions
    Emitted("sum", ("fp32", "bf16"), ("ReduceSum", "Add"), f"{_REDUCE}: from +0, a binary tree per 64 elements; over the "
            "rows Add per tile; over an inner axis the rows of each slice (emit/axes.py)", ("sum_row", "sum_col")),
    Emitted("amax", FB, ("ReduceMax", "Max"), f"{_REDUCE}: Max folded over the row (NaN anywhere gives NaN)",
            ("amax_row", "amax_col")),
    Emitted("amin", FB, ("ReduceMin", "Min"), f"{_REDUCE}: Min folded over the row", ("amin_row", "amin_col")),
    Emitted("prod", ("fp32",), (), f"{_REDUCE}: sequential products from 1 (scalar loop over UB)", ("prod_row",)),
    # casts
    Emitted("cast", ("fp32", "fp16", "bf16", "int32"), ("Cast", "Maxs", "Mins", "Select"), f"{_ELEMENTWISE}: Cast with the round mode; finite "
            "values clamped to +-65504 before fp32 -> fp16",
            ("cast_f16", "cast_f16_trunc", "cast_f32", "cast_i32_none", "cast_i32_rint", "cast_i32_round",
             "cast_i32_floor", "cast_i32_ceil")),
    # matmul (the cube unit)
    Emitted("matmul", ("fp16->fp16", "fp16->fp32", "fp32->fp32", "bf16->bf16", "bf16->fp32", "int8->int32"),
            ("LoadData", "Mmad", "Fixpipe"),
            "runtime/cube.cpp: GM -> L1 -> L0A/L0B, Mmad accumulates exactly (double), Fixpipe rounds once; int8: "
            "16x32 fractals, int32 in L0C (exact), operands brought to a @ b^T by the transpose kernel",
            ("matmul", "matmul_bias")),
    # quantization (emit/quant.py: rewritten into basic vector ops before the block is planned)
    Emitted("quantize", ("fp32->int8", "fp32->uint8"), ("Mul", "Muls", "Adds", "Cast", "Maxs", "Mins"),
            f"{_ELEMENTWISE}: x * scale (+ zero point) per row or column, Cast float -> float CAST_RINT, Maxs/Mins "
            "to the range, Cast float -> half -> int8/uint8 (NaN -> 0)", ("quantize", "quantize_row")),
    Emitted("dequantize", ("int8->fp32", "int16->fp32"), ("Cast", "Adds", "Muls", "Mul"),
            f"{_ELEMENTWISE}: Cast int8 -> half -> float (int16 -> float), - zero point, * scale per row or column",
            ("dequantize",)),
    Emitted("conv", FB, ("DataCopyPad", "Gather", "LoadData", "Mmad", "Fixpipe"),
            "emit/conv.py: im2col through UB (Gather, bit copies) into GM, then the matmul kernel per group; bias as "
            "an extra K column (fp32 bias of bf16: three bf16 parts), relu by Fixpipe's reluEn"),
    # the math functions: the high-level math APIs where A2 has them (runtime/math.cpp, pypto_host_math.h)
    *(Emitted(op, FB, (api,), f"adv_api {api} (work buffer as its sharedTmpBuffer), computed in double and rounded "
              "once; 16-bit dtypes widened to fp32", (op,))
      for op, api in (("erf", "Erf"), ("erfc", "Erfc"), ("atan", "Atan"), ("sinh", "Sinh"), ("cosh", "Cosh"),
                      ("asinh", "Asinh"), ("acosh", "Acosh"), ("atanh", "Atanh"), ("tan", "Tan"),
                      ("tanh", "Tanh"), ("asin", "Asin"), ("acos", "Acos"))),
    Emitted("atan2", FB, ("Atan", "Div", "Select"), "composed: atan of the smaller ratio, the quadrant by Select",
            ("atan2",)),
    Emitted("hypot", FB, ("Max", "Min", "Div", "Sqrt"), "composed: max * sqrt(1 + (min / max)^2)", ("hypot", "hypot_s")),
    Emitted("cbrt", FB, ("Ln", "Exp"), "composed: exp(ln|x| / 3) with one Newton step, the sign of x", ("cbrt",)),
    Emitted("prelu", FB, ("Mul", "Select"), "composed: x > 0 ? x : w * x, w along axis 1", ("prelu",)),
    Emitted("softmax", FB, ("ReduceMax", "Exp", "ReduceSum", "Div"), "pypto's composition exp(x - amax) / sum, in "
            "fp32; over the rows of a 2-D value the row reductions", ("softmax", "softmax_col")),
    # integers, bits and logic (composed exactly from the A2 API: docs/design.md §11)
    Emitted("bitwise_and", INTS, ("And",), f"{_INTEGER}: And on a uint16 view; runtime/integer.cpp",
            ("bitwise_and", "bitwise_and_s")),
    Emitted("bitwise_or", INTS, ("Or",), f"{_INTEGER}: Or on a uint16 view", ("bitwise_or", "bitwise_or_s")),
    Emitted("bitwise_xor", INTS, ("And", "Not", "Or"), f"{_INTEGER}: (a | b) & ~(a & b)",
            ("bitwise_xor", "bitwise_xor_s")),
    Emitted("bitwise_not", INTS + ("bool",), ("Not",), f"{_INTEGER}: Not on a uint16 view (bool: on the mask)",
            ("bitwise_not",)),
    Emitted("bitwise_left_shift", ("int16",), ("ShiftLeft",), f"{_INTEGER}: by a scalar ShiftLeft; by a tensor "
            "each bit of the amount selects a shift", ("bitwise_left_shift", "bitwise_left_shift_3")),
    Emitted("bitwise_right_shift", ("int16",), ("ShiftRight",), f"{_INTEGER}: as the left shift",
            ("bitwise_right_shift", "bitwise_right_shift_3")),
    Emitted("remainder", ("fp32", "fp16", "int16", "int32"), ("Div", "Cast"), f"{_INTEGER}: floats exact while "
            "|x / y| < 2^24; integers by float quotient estimates and a correction (exact); a zero divisor faults",
            ("remainder", "remainder_s")),
    Emitted("fmod", F, ("Div", "Cast"), f"{_INTEGER}: x - trunc(x / y) * y with the product exact", ("fmod", "fmod_s")),
    Emitted("floor_div", ("int32",), ("Div", "Cast"), f"{_INTEGER}: as the integer remainder",
            ("floor_div", "floor_div_s")),
    Emitted("ceil_div", ("int32",), ("Div", "Cast"), f"{_INTEGER}: as the integer remainder", ("ceil_div", "ceil_div_s")),
    Emitted("gcd", ("int32",), ("Select",), f"{_INTEGER}: torch's loop, 48 rounds on every lane", ("gcd", "gcd_s")),
    Emitted("copysign", F, ("And", "Or"), f"{_INTEGER}: the sign bit of y onto |x|", ("copysign", "copysign_s")),
    Emitted("signbit", ("fp32", "fp16", "int32", "int16", "int8"), ("CompareScalar",), f"{_INTEGER}: the sign bit",
            ("signbit",)),
    Emitted("isfinite", ("fp32", "fp16", "int16", "int32"), ("Sub", "CompareScalar", "Duplicate"),
            f"{_INTEGER}: x - x == 0 (NaN for inf and NaN); integers always", ("isfinite",)),
    Emitted("logical_not", INTS + F + ("bool",), ("CompareScalar",), f"{_INTEGER}: x == 0 (bool: Not on the mask)",
            ("logical_not",)),
    Emitted("logical_and", ("fp32", "int16", "bool"), ("CompareScalar", "And"), f"{_INTEGER}: each operand != 0, "
            "And of the masks", ("logical_and",)),
    Emitted("greater", F, ("Compare", "CompareScalar"), f"{_ELEMENTWISE}: gt", ("greater", "greater_s")),
    # index ops: a kernel each, GM in and out (emit/index.py; runtime/index.cpp, pypto_host_index.h)
    Emitted("argmax", F, ("ReduceMax", "Compare", "Select"), "last axis: ReduceMax with calIndex; other axes: Compare "
            "and Select over the rows (the first extreme; NaN counts as one)", ("argmax", "argmax_col")),
    Emitted("argmin", F, ("ReduceMin", "Compare", "Select"), "as argmax, with ReduceMin", ("argmin", "argmin_col")),
    Emitted("argsort", F, ("CreateVecIndex", "Sort", "Extract"), "Sort of (score, index) pairs, stable, NaN above "
            "+inf; ascending by negated scores", ("argsort", "argsort_desc")),
    Emitted("topk", ("fp32",), ("Sort", "Extract"), "as argsort, the first k (values and indices: a kernel each)",
            ("topk", "topk_indices", "topk_small", "topk_small_indices")),
    Emitted("gather", FI, ("CreateVecIndex", "Gather"), "Gather by byte offsets into UB; indices range-checked "
            "(ascendc_assert)", ("gather_col", "gather_row")),
    Emitted("scatter", FI, ("SetValue",), "element writes in order along dim (A2 has no Scatter: a scalar loop); "
            "reduce add/multiply combine in that order", ("scatter", "scatter_add", "scatter_row_mul", "scatter_s")),
    Emitted("scatter_update", FI, ("DataCopyPad",), "row moves GM -> UB -> GM in index order", ("scatter_update",)),
    Emitted("experimental.gather_in_ub", FI, ("DataCopyPad", "GetValue"),
            "rows moved GM -> UB -> GM through the block table on one core; tokens and rows checked", ("gather_in_ub",)),
    Emitted("one_hot", ("int32", "int64"), ("Duplicate", "SetValue"), "zeros, then a one per row (int64 result)",
            ("one_hot",)),
    Emitted("cumsum", FI, ("CumSum", "Add"), "last axis: the adv_api CumSum; other axes: Add over the rows; fp32 "
            "accumulation element after element; integers to int64", ("cumsum", "cumsum_col")),
    Emitted("cumprod", F, ("Mul",), "other axes: Mul over the rows; last axis: a scalar loop", ("cumprod", "cumprod_col")),
    # data movement, layout, creation: their kernels are the probes of tests/emit_host/test_optable.py
    Emitted("clone", FB, (), "runtime/core.cpp: DataCopy GM -> UB -> GM", ("clone",)),
    Emitted("view", FI, ("DataCopyPad",), "runtime/core.cpp: DataCopyPad of the region (ragged rows and columns; one per run of rows in a region of several levels of row stride)"),
    Emitted("assemble", FI, ("DataCopyPad",), "runtime/core.cpp: DataCopyPad into the region"),
    Emitted("reshape", FI, (), "no data movement: the same GM seen with another shape (a strided view: copied compact through UB first)"),
    Emitted("unsqueeze", FI, (), "no data movement: the same GM seen with another shape (a strided view: copied compact through UB first)"),
    Emitted("transpose", ("fp32", "fp16", "bf16", "int16", "int32"), ("DataCopyPad", "GetValue", "SetValue"),
            "a permute kernel (emit/layout.py), any two axes: matrices through UB, typed by element size (a bit copy)"),
    Emitted("concat", FI, ("DataCopy",), "each input copied into its slice of the result"),
    Emitted("expand_clone", F, ("DataCopy",), "the broadcast row copied into every row of the tile"),
    Emitted("full", F, ("Duplicate",), "runtime/core.cpp: Duplicate"),
    Emitted("zeros", F, ("Duplicate",), "runtime/core.cpp: Duplicate(0)"),
    Emitted("ones", F, ("Duplicate",), "runtime/core.cpp: Duplicate(1)"),
    Emitted("arange", ("fp32", "int32"), ("SetValue",), "a scalar fill of the row in UB"),
    # random numbers: pypto's Philox-4x32-10 (ir/random.py; a kernel of its own, emit/random.py)
    Emitted("uniform", FB, ("CreateVecIndex", "Muls", "ShiftRight", "And", "Or", "Not", "Cast", "Gather"),
            "Philox from 16-bit products and shifts; a word's low mantissa bits scaled to [0, 1) (exact)"),
    Emitted("normal", FB, ("Div", "Sqrt", "CompareScalar", "Select", "Gather"),
            "Box-Muller on the Philox uniforms in a fixed fp32 composition: the interpreter's bits"),
)

LOWERED_INTO = {
    "experimental.gather.gather_in_ub": ("experimental.gather_in_ub",),  # the same function, by its module
    "max": ("maximum",),
    "min": ("minimum",),
    "rms_norm": ("mul", "sum", "rsqrt"),
    **{f"experimental{ns}.online_softmax": ("mul", "amax", "sub", "exp", "sum", "cast")
       for ns in ("", ".operation")},
    **{f"experimental{ns}.online_softmax_update": ("maximum", "sub", "exp", "mul", "add")
       for ns in ("", ".operation")},
    # composed before planning by emit/decompose.py (numbers: tests/emit_host/test_decompose.py)
    "var": ("cast", "sum", "div", "expand_clone", "sub", "mul"),
    "pad": ("full", "concat"),
    "tril": ("arange", "reshape", "expand_clone", "sub", "le", "concat", "where"),
    "triu": ("arange", "reshape", "expand_clone", "sub", "ge", "concat", "where"),
}
"""Ops rewritten into others, by the front end or by emit/decompose.py before a block is planned
(each of those in EMITTED or GAPS)."""

OPCODE = {"experimental.gather_in_ub": "gather_in_ub"}
"""The IR opcode of an EMITTED op whose front-end name differs from it."""

GAPS = {
    name: "pypto-ast's Ascend C emitter does not support it yet (PTO109); the interpreter runs it"
    for name in ()
}
"""Ops the front end lowers that the emitter stops at, with the reason."""


def emitted(op: str):
    """The EMITTED entry of ``op``, or None."""
    return next((e for e in EMITTED if e.op == op), None)
