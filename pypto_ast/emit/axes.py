"""Reductions over any axis, as the vector kernels compute them: over the last axis (one value
per row) or over the rows of a 2-D value (one row, accumulated across tiles).

A reduction over another axis ``k`` of an N-D value of static shape ``S`` is rewritten, before
a block is planned, into those: the value seen as ``[A*K, B]`` (``A = prod(S[:k])``, ``K =
S[k]``, ``B = prod(S[k+1:])``, a reshape: no data moves), each of the ``A`` slices of ``K``
rows reduced over its rows, the ``A`` results concatenated and reshaped to the result's shape
(with or without ``keepdim``: the same data).  ``A`` column reductions are ``A`` kernel
launches, so ``A`` is bounded (``MAX_SLICES``).  Past it (a tile of 256 tokens reduced over
its 4 heads) the planner reduces it (ascendc.py ``_inner_reduce``): when the axis is fully valid
and short (``MAX_AXIS``), as the elementwise sum (max, min) of its ``K`` slices, each a strided
view of the value ``[A, B]`` (no data moves, one vector kernel); else moved to the front
(``by_permute``): one permute kernel (layout.py) writes the value as ``[K, A*B]`` (axes ``k,
0, .., k-1, k+1, ..``: the other axes keep their order), one column reduction of ``K`` rows
gives ``[1, A*B]``, the result's shape by a reshape.  Both add the same rows in the same
order as the column reductions do (``((0 + x0) + x1) + ...``).
"""

from __future__ import annotations

import math

from .. import ir

REDUCTIONS = ("sum", "amax", "amin")
MAX_SLICES = 8  # a concat of the slices reads one VECIN queue buffer each (at most 8)
MAX_AXIS = 64  # slices of a reduced axis added in the planner (ascendc.py ``_inner_reduce``)


class OwnTile(tuple):
    """The vector tile of an op the emitter composed (this module's steps), not one the kernel
    set: pypto never sees it, so its UB rule ("pypto refuses this tile too") does not judge it
    and the planner may run it in fewer rows or columns (vector.py ``_fit_rows``)."""


def split_axis_reductions(ops: tuple, named: dict) -> tuple:
    """``ops`` with every reduction over an inner axis of a static N-D value rewritten (see the
    module docstring); the others as they were.  ``named``: the static shape of each named
    tensor (``@x``) the ops may read."""
    shapes = {("@", k): v for k, v in named.items()}
    out = []
    for op in ops:
        rewritten = _rewrite(op, shapes)
        for new in rewritten:
            for name, t in zip(new.results, new.types):
                shapes[("%", name)] = _static(t.shape)
        out += rewritten
    return tuple(out)


def _static(shape):
    dims = tuple(getattr(d, "value", d) for d in shape)
    return dims if all(isinstance(d, int) and not isinstance(d, bool) for d in dims) else None


def _rewrite(op: ir.Op, shapes: dict) -> list:
    if op.opcode not in REDUCTIONS or len(op.results) != 1:
        return [op]
    src = op.operands[0]
    key = ("%", src.name) if isinstance(src, ir.Value) else ("@", src.name) if isinstance(src, ir.TensorRef) else None
    shape = shapes.get(key)
    dim = op.attr("dim")
    dim = dim[0] if isinstance(dim, tuple) and len(dim) == 1 else dim
    if shape is None or not isinstance(dim, int) or len(shape) < 2:
        return [op]
    n = len(shape)
    k = dim % n
    if k == n - 1 or (n == 2 and k == 0 and op.attr("keepdim")):
        return [op]  # the kernels' own forms
    a, kk, b = math.prod(shape[:k]), shape[k], math.prod(shape[k + 1:])
    res, dtype = op.results[0], op.types[0].dtype
    if a > MAX_SLICES and kk > 1:
        return [op]  # the planner's (ascendc.py ``_inner_reduce``: slices of the axis, or ``by_permute``)

    def t(*dims):
        return ir.TensorType(tuple(ir.Const(d) for d in dims), dtype)

    def new(name, opcode, operands, attrs, typ):
        return ir.Op((name,), opcode, operands, tuple(sorted(attrs.items())), (typ,), OwnTile((min(kk, 8), b)), None, op.span)

    flat = f"{res}_rows"
    ops = [new(flat, "reshape", (src,), {"shape": (a * kk, b)}, t(a * kk, b))]
    if kk == 1:  # over an axis of one element: the value itself (a sum from +0: -0 gives +0)
        joined = flat
        if op.opcode == "sum":
            joined = f"{res}_plus0"
            ops.append(new(joined, "add", (ir.Value(flat), ir.Const(0.0)), {}, t(a, b)))
        return ops + [ir.Op((res,), "reshape", (ir.Value(joined),), (("shape", _static(op.types[0].shape)),),
                            op.types, op.tile, None, op.span)]
    parts = []
    for i in range(a):
        rows = flat
        if a > 1:
            rows = f"{res}_s{i}"
            ops.append(new(rows, "view", (ir.Value(flat),), {"shape": (kk, b), "offsets": (i * kk, 0)}, t(kk, b)))
        part = f"{res}_r{i}"
        ops.append(new(part, op.opcode, (ir.Value(rows),), {"dim": 0, "keepdim": True}, t(1, b)))
        parts.append(ir.Value(part))
    joined = parts[0].name
    if a > 1:
        joined = f"{res}_cat"
        ops.append(new(joined, "concat", (tuple(parts),), {"dim": 0}, t(a, b)))
    ops.append(ir.Op((res,), "reshape", (ir.Value(joined),), (("shape", _static(op.types[0].shape)),), op.types,
                     op.tile, None, op.span))
    return ops


PERMUTE_DTYPES = ("fp32", "fp16", "bf16", "int16", "int32")  # the permute kernel's (layout.py)
COL_TILE = 2048  # columns of a column-reduction tile over the permuted value


def by_permute(op: ir.Op, src, shape: tuple, k: int, dtype: str) -> list:
    """The reduction over axis ``k`` as a permute of ``k`` to the front and a column reduction
    (module docstring); the op as it was when the permute kernel does not take its dtype."""
    if dtype not in PERMUTE_DTYPES:
        return [op]
    res, n = op.results[0], len(shape)
    perm = (k,) + tuple(j for j in range(n) if j != k)
    kk, rest = shape[k], math.prod(shape) // shape[k]

    def t(*dims):
        return ir.TensorType(tuple(ir.Const(d) for d in dims), dtype)

    def new(name, opcode, operands, attrs, typ, tile):
        return ir.Op((name,), opcode, operands, tuple(sorted(attrs.items())), (typ,), tile, None, op.span)

    tile = OwnTile((min(kk, 8), min(rest, COL_TILE)))
    front, rows = f"{res}_front", f"{res}_r"
    return [  # "front": the emitter's permute of axis k to the front, seen as [K, A*B] (ascendc.py)
        new(front, "transpose", (src,), {"perm": perm, "front": True}, t(kk, rest), op.tile),
        new(rows, op.opcode, (ir.Value(front),), {"dim": 0, "keepdim": True}, t(1, rest), tile),
        ir.Op((res,), "reshape", (ir.Value(rows),), (("front", front), ("shape", _static(op.types[0].shape))),
              op.types, op.tile, None, op.span),
    ]
