"""Ops with no Ascend C instruction of their own, rewritten into ops the vector kernels have,
before a block is planned (as ``axes.split_axis_reductions`` rewrites reductions).

* ``var(x, dim, correction, keepdim)``: two passes in fp32, as the interpreter's ``torch.var``
  accumulates: ``mean = sum(x) / N``, ``var = sum((x - mean)^2) / (N - correction)``; a 16-bit
  ``x`` is widened first and the result rounded once.  ``dim=None`` reduces everything (the
  value seen as one row).
* ``pad(x, [0, right, 0, bottom], value)``: the value concatenated with ``full`` blocks of
  ``value`` on the right (last axis) and at the bottom (the axis before it).
* ``cast(x: int32, fp16, mode)``: the A2 ``Cast`` int32 -> half is a ``vconv_deq`` through a
  deq scale that ignores the round mode, and an int -> float cast rounds to nearest-even whatever
  the mode (docs/semantics.md, "Casts"), so ``cast(cast(x, fp32), fp16, CAST_RINT)`` with the
  op's ``satmode``: the first step is exact below 2^24, and every int32 at or past 2^24 overflows
  fp16 either way, so the two steps round as the one cast does.
* ``tril(x, d)`` / ``triu(x, d)`` on floats: ``where(col - row <= d, x, 0)`` (``>=`` for
  ``triu``), the column and row indices from ``arange`` (exact in fp32 below 2^24) expanded to
  the value's last two axes; leading axes repeat the mask (``concat``).

Each rewrite needs the operand's static shape, and ``var`` a fully valid operand (its divisor is
the element count); without them the op stays as it was and the emitter names it (PTO109).  docs/design.md ("Ops composed before planning") says why here.
"""

from __future__ import annotations

import math

from .. import ir

MAX_REPEATS = 64  # leading slices of a tril/triu mask built by concat (as axes.MAX_SLICES)
_FLOATS = ("fp32", "fp16", "bf16")


def decompose(ops: tuple, named: dict, dtypes: dict = None) -> tuple:
    """``ops`` with every ``var``, ``pad``, ``tril`` and ``triu`` of a static operand, and every
    int32 -> fp16 cast, rewritten; ``named``: the static shape of each named tensor (``@x``);
    ``dtypes``: the dtype of each named tensor."""
    shapes = {("@", k): tuple(v) for k, v in named.items()}
    kinds = {("@", k): v for k, v in (dtypes or {}).items()}
    partial: set = set()  # values that may be partially valid (a valid_shape upstream)
    out = []
    for op in ops:
        if op.attr("valid_shape") is not None or any(isinstance(x, ir.Value) and x.name in partial
                                                     for x in op.operands):
            partial.update(op.results)
        rewrite = _REWRITES.get(op.opcode)
        shape = _shape_of(op.operands[0], shapes) if rewrite and op.operands else None
        if op.opcode == "var" and isinstance(op.operands[0], ir.Value) and op.operands[0].name in partial:
            shape = None  # its count is the valid elements', known only at run time: left to PTO109
        new = rewrite(op, shape) if shape is not None else None
        if op.opcode == "cast" and op.operands and _key(op.operands[0]) in kinds:
            new = _int32_to_half(op, kinds[_key(op.operands[0])])
        for o in new or [op]:
            for name, t in zip(o.results, o.types):
                kinds[("%", name)] = t.dtype
                dims = tuple(getattr(d, "value", d) for d in t.shape)
                if all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
                    shapes[("%", name)] = dims
        out += new or [op]
    return tuple(out)


def _key(x):
    if isinstance(x, ir.Value):
        return ("%", x.name)
    if isinstance(x, ir.TensorRef):
        return ("@", x.name)
    return None


def _int32_to_half(op: ir.Op, source: str):
    if source != "int32" or op.types[0].dtype != "fp16":
        return None
    shape = tuple(getattr(d, "value", d) for d in op.types[0].shape)
    if not all(isinstance(d, int) for d in shape):
        return None
    b = _Builder(op)
    wide = b("cast", (op.operands[0],), {"dtype": "fp32"}, shape, "fp32")
    attrs = {**{k: v for k, v in op.attrs}, "mode": "CAST_RINT"}
    return b.final("cast", (wide,), attrs)


def _shape_of(x, shapes):
    if isinstance(x, ir.Value):
        return shapes.get(("%", x.name))
    if isinstance(x, ir.TensorRef):
        return shapes.get(("@", x.name))
    return None


class _Builder:
    """New ops named after ``op``'s result, with its tile and span."""

    def __init__(self, op: ir.Op):
        self.op, self.res, self.ops, self.k = op, op.results[0], [], 0

    def __call__(self, opcode, operands, attrs, shape, dtype, name=None):
        if name is None:
            self.k += 1
            name = f"{self.res}_{opcode}{self.k}"
        typ = ir.TensorType(tuple(ir.Const(d) for d in shape), dtype)
        self.ops.append(ir.Op((name,), opcode, tuple(operands), tuple(sorted(attrs.items())), (typ,),
                              self.op.tile, None, self.op.span))
        return ir.Value(name)

    def final(self, opcode, operands, attrs):
        """The op defining the original result (its name and type)."""
        self.ops.append(ir.Op((self.res,), opcode, tuple(operands), tuple(sorted(attrs.items())), self.op.types,
                              self.op.tile, None, self.op.span))
        return self.ops


def _var(op: ir.Op, shape: tuple):
    dtype = op.types[0].dtype
    if dtype not in _FLOATS or not shape:
        return None
    rank = len(shape)
    dim = op.attr("dim")
    dims = tuple(range(rank)) if dim is None else tuple(d % rank for d in (dim if isinstance(dim, tuple) else (dim,)))
    if len(dims) != 1 and dims != tuple(range(rank)):
        return None  # several but not all axes: left to the emitter's refusal
    b = _Builder(op)
    x = op.operands[0]
    if len(dims) > 1 or rank == 1:  # everything: one row
        x = b("reshape", (x,), {"shape": (1, math.prod(shape))}, (1, math.prod(shape)), dtype)
        shape, dims = (1, math.prod(shape)), (1,)
    k = dims[0]
    n = shape[k]
    kept = tuple(1 if d == k else s for d, s in enumerate(shape))
    if dtype != "fp32":
        x = b("cast", (x,), {"dtype": "fp32"}, shape, "fp32")
    if n == 1:  # one element: its own mean (x - x: 0, or NaN for inf and NaN)
        dev = b("sub", (x, x), {}, shape, "fp32")
        ss = b("mul", (dev, dev), {}, kept, "fp32")
    else:
        total = b("sum", (x,), {"dim": k, "keepdim": True}, kept, "fp32")
        mean = b("div", (total, ir.Const(float(n))), {}, kept, "fp32")
        wide = b("expand_clone", (mean,), {"shape": shape}, shape, "fp32")
        dev = b("sub", (x, wide), {}, shape, "fp32")
        sq = b("mul", (dev, dev), {}, shape, "fp32")
        ss = b("sum", (sq,), {"dim": k, "keepdim": True}, kept, "fp32")
    denom = n - float(op.attr("correction", 1))
    v = b("div", (ss, ir.Const(denom)), {}, kept, "fp32") if denom > 0 else \
        b("mul", (ss, ir.Const(float("inf") if denom == 0 else float("nan"))), {}, kept, "fp32")
    if dtype != "fp32":
        v = b("cast", (v,), {"dtype": dtype}, kept, dtype)
    result = tuple(getattr(d, "value", d) for d in op.types[0].shape)
    return b.final("reshape", (v,), {"shape": result})


def _pad(op: ir.Op, shape: tuple):
    pad = op.attr("pad")
    if pad is None or len(pad) not in (2, 4) or len(shape) < 2 or op.attr("mode", "constant") != "constant":
        return None
    dtype = op.types[0].dtype
    value = ir.Const(float(op.attr("value", 0.0)))
    right, bottom = int(pad[1]), int(pad[3]) if len(pad) == 4 else 0
    b = _Builder(op)
    x = op.operands[0]
    if right:
        side = b("full", (value,), {"dtype": dtype, "shape": shape[:-1] + (right,)}, shape[:-1] + (right,), dtype)
        shape = shape[:-1] + (shape[-1] + right,)
        x = b("concat", ((x, side),), {"dim": len(shape) - 1}, shape, dtype)
    if bottom:
        low = shape[:-2] + (bottom, shape[-1])
        foot = b("full", (value,), {"dtype": dtype, "shape": low}, low, dtype)
        shape = shape[:-2] + (shape[-2] + bottom, shape[-1])
        x = b("concat", ((x, foot),), {"dim": len(shape) - 2}, shape, dtype)
    return b.final("reshape", (x,), {"shape": shape})


def _tri(keep: str):
    def rewrite(op: ir.Op, shape: tuple):
        dtype = op.types[0].dtype
        if dtype not in _FLOATS or len(shape) < 2:
            return None
        lead = math.prod(shape[:-2])
        r, c = shape[-2], shape[-1]
        if lead > MAX_REPEATS or max(r, c) >= 2 ** 24:
            return None
        diagonal = op.attr("diagonal", 0)
        if not isinstance(diagonal, int) or isinstance(diagonal, bool):
            return None  # a symbolic diagonal: the mask would need a run-time scalar
        b = _Builder(op)
        def index(n, shape):  # 0 .. n-1 along the axis of length n of ``shape`` (n > 1)
            line = b("arange", (), {"dtype": "fp32", "start": 0.0, "step": 1, "stop": float(n)}, (n,), "fp32")
            line = b("reshape", (line,), {"shape": shape}, shape, "fp32")
            return b("expand_clone", (line,), {"shape": (r, c)}, (r, c), "fp32") if shape != (r, c) else line

        if r > 1 and c > 1:
            diff = b("sub", (index(c, (1, c)), index(r, (r, 1))), {}, (r, c), "fp32")
        elif c > 1:  # one row: the column index
            diff = index(c, (1, c))
        elif r > 1:  # one column: minus the row index
            diff = b("mul", (index(r, (r, 1)), ir.Const(-1.0)), {}, (r, c), "fp32")
        else:
            diff = b("full", (ir.Const(0.0),), {"dtype": "fp32", "shape": (1, 1)}, (1, 1), "fp32")
        mask = b(keep, (diff, ir.Const(float(diagonal))), {}, (r, c), "bool")
        if lead > 1:
            mask = b("concat", (tuple([mask] * lead),), {"dim": 0}, (lead * r, c), "bool")
        x = op.operands[0]
        if lead > 1 or len(shape) > 2:
            x = b("reshape", (x,), {"shape": (lead * r, c)}, (lead * r, c), dtype)
        kept = b("where", (mask, x, ir.Const(0.0)), {}, (lead * r, c), dtype)
        return b.final("reshape", (kept,), {"shape": shape})
    return rewrite


_REWRITES = {"var": _var, "pad": _pad, "tril": _tri("le"), "triu": _tri("ge")}
