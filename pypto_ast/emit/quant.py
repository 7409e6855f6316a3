"""quantize / dequantize as the vector ops a segment kernel already computes.

A2 has no fp32 -> int8 conversion and no int8 -> fp32 one (ascendc.md §6.3), and the adv_api
AscendQuant / AscendDequant round and order their steps their own way, so the block planner
rewrites each op, before it is planned, into basic vector instructions whose every step is exact
or rounded once, in the order docs/semantics.md "Quantization" gives::

    quantize(x, s[, zp], int8|uint8)      t = x * s            Mul (s broadcast per row or column)
                                          t = t + zp           Add (asymmetric)
                                          t = rint(t)          Cast float -> float, CAST_RINT
                                          t = clip(t, lo, hi)  Maxs, Mins (saturation; +-inf too)
                                          h = half(t)          Cast float -> half (exact: integers <= 255)
                                          q = int8/uint8(h)    Cast half -> int8 / uint8 (NaN -> 0)
    dequantize(x, s[, zp], fp32)          f = float(half(x))   Cast int8 -> half -> float (int16 -> float)
                                          f = f - zp           Sub (asymmetric)
                                          y = f * s            Mul

``s`` and ``zp`` have one axis fewer than ``x``: along axis -1 one value per row (``[..., row]``,
seen as the column ``[rows, 1]`` of the kernel's ``[rows, cols]``), along axis -2 one per column
of a 2-D ``x`` (``[col]``, the broadcast row ``[1, cols]``).
"""

from __future__ import annotations

import math

from .. import ir
from ..ir.interp import DEQUANT_SUBTRACTS
from . import gm
from .errors import unsupported
from .gm import GVal

__all__ = ["QUANT_OPS", "lower_quant"]

QUANT_OPS = ("quantize", "dequantize")
_RANGE = {"int8": (-128, 127), "uint8": (0, 255)}


def _column(g: GVal, span) -> GVal:
    """A per-row parameter ``[..., row]`` as the column ``[rows, 1]`` (no data moves)."""
    if g.cols == 1:
        return g
    if g.rows == 1:  # one row of n contiguous elements: n rows of one
        return GVal(g.buf, g.offset, g.cols, 1, 1, g.vc, gm.C(1), g.dtype, tuple(g.shape) + (1,))
    if not gm.static_ld(g) or g.ld != g.cols or gm.const(g.vr) != g.rows or gm.const(g.vc) != g.cols:
        unsupported("a quantization scale of rank > 1 that is strided or partially valid", span)
    return GVal(g.buf, g.offset, g.rows * g.cols, 1, 1, gm.C(g.rows * g.cols), gm.C(1), g.dtype,
                tuple(g.shape) + (1,))


def lower_quant(planner, op: ir.Op) -> list:
    """The ops ``op`` (quantize / dequantize) becomes; puts the GM views of its parameters in the
    planner's environment under new names."""
    span, res = op.span, op.results[0]
    x = op.operands[0]
    xshape = tuple(d if isinstance(d, int) else gm.const(d) for d in planner._operand_shape(x, span))
    axis = op.attr("axis", -1)
    axis = axis - len(xshape) if axis >= 0 else axis
    if axis == -2 and (None in xshape or math.prod(xshape[:-2]) > 1):
        unsupported(f"'{op.opcode}' along axis -2 of a rank-{len(xshape)} value (per column of a 2-D value only)", span)
    params = []
    for j, p in enumerate(op.operands[1:]):
        g = planner.gval_of(p, span)
        if g.dtype != "fp32":
            unsupported(f"'{op.opcode}' with an {g.dtype} scale or zero point", span)
        if axis == -1 and len(xshape) > 1:
            g = _column(g, span)
        name = f"{res}.{('scale', 'zp')[j]}"
        planner.env[name] = g
        params.append(ir.Value(name))
    scale, zp = params[0], (params[1] if len(params) > 1 else None)
    out_dt = op.types[0].dtype
    shape = op.types[0].shape
    steps: list = []

    def step(opcode, operands, dtype, attrs=(), final=False):
        name = res if final else f"{res}.{len(steps)}"
        typ = op.types[0] if final else ir.TensorType(shape, dtype)
        steps.append(ir.Op((name,), opcode, tuple(operands), tuple(attrs), (typ,), op.tile, None, span))
        return ir.Value(name)

    if op.opcode == "quantize":
        lo, hi = _RANGE[out_dt]
        t = step("mul", (x, scale), "fp32")
        if zp is not None:
            t = step("add", (t, zp), "fp32")
        t = step("round", (t,), "fp32")
        t = step("clip", (t,), "fp32", (("max", float(hi)), ("min", float(lo))))
        h = step("cast", (t,), "fp16", (("dtype", "fp16"), ("mode", "CAST_NONE"), ("satmode", False)))  # exact
        step("cast", (h,), out_dt, (("dtype", out_dt), ("mode", "CAST_NONE")), final=True)
        return steps
    in_dt = planner.gval_of(x, span).dtype if not (isinstance(x, ir.Value) and x.name in planner.ub) \
        else planner.ub[x.name].dtype[x.name]
    f = x
    if in_dt == "int8":
        f = step("cast", (f,), "fp16", (("dtype", "fp16"), ("mode", "CAST_NONE")))
    f = step("cast", (f,), "fp32", (("dtype", "fp32"), ("mode", "CAST_NONE")))
    if zp is not None:
        f = step("sub" if DEQUANT_SUBTRACTS else "add", (f, zp), "fp32")
    step("mul", (f, scale), "fp32", final=True)
    return steps
