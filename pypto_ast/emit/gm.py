"""GM buffers and 2-D regions of them: what kernels read and write, and what the control
program evaluates (offsets, valid extents, sizes) before each launch.

Every tensor a kernel touches is seen as a 2-D row-major region ``rows x cols`` with a row
stride ``ld`` (elements) at an element ``offset`` of a ``Buffer``: an N-D value flattens to
``[prod(leading dims), last dim]``.  Offsets and valid extents are IR ``Expr``s (they may
depend on loop indices, scalar parameters, dynamic dims and ``lens[b]`` reads); shapes of the
region itself are static.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import ir
from ..ir import printer
from .errors import unsupported


@dataclass
class Buffer:
    """A GM allocation: a kernel parameter, a ``pypto.tensor`` local, a workspace holding a
    value that crosses kernels, or a returned value."""

    name: str
    kind: str  # "param" | "local" | "ws" | "ret"
    dtype: str
    shape: tuple  # Exprs / ints (N-D)
    index: int  # slot in the control program's tensor table

    @property
    def numel(self):
        out = C(1)
        for d in self.shape:
            out = mul(out, d)
        return out


@dataclass
class GVal:
    """A value living in GM: ``rows x cols`` at ``offset`` with row stride ``ld`` and valid
    extent ``vr x vc`` (Exprs)."""

    buf: Buffer
    offset: object
    rows: int
    cols: int
    ld: object  # the row stride in elements: an int, or an Expr for a tensor with a dynamic last dim
    vr: object
    vc: object
    dtype: str
    shape: tuple  # the value's N-D static shape (-1 for a dim known at run time: see ``dims``)
    outer: tuple = ()
    """Levels of row stride above ``ld``, outermost first: ``(count, stride)`` pairs (stride an int
    or an Expr).  Empty: every row is ``ld`` after the previous one.  Else the rows are
    ``inner = rows / prod(counts)`` rows ``ld`` apart, repeated ``count`` times ``stride`` apart
    per level: row ``r`` starts at ``offset + (r % inner) * ld + sum_k digit_k(r) * stride_k``."""
    dims: tuple = None  # the N-D shape as Exprs when a dim is dynamic (an inplace reshape, a dynamic view)
    vg: tuple = None
    """Valid rows per level: ``(level, valid, nd)``, an int, an Expr and the N-D valid extent, when
    only the first ``valid`` rows of every ``level`` rows are valid (a middle axis valid to a run-time extent: ``level_valid``).
    Only the vector kernels read and write such a value; every other consumer refuses it."""

    def same_region(self, other: "GVal") -> bool:
        return (self.buf.name == other.buf.name and self.offset == other.offset and self.rows == other.rows
                and self.cols == other.cols and self.ld == other.ld and self.outer == other.outer)

    @property
    def inner(self) -> int:
        """Rows of the innermost level (all of them for a uniformly strided region)."""
        return self.rows // math.prod(c for c, _ in self.outer) if self.outer else self.rows

    def nd(self) -> tuple:
        """The N-D shape as Exprs (dynamic dims included)."""
        return self.dims if self.dims is not None else tuple(C(d) for d in self.shape)


# ---------------------------------------------------------------------------------------
# Expr arithmetic with constant folding (the control program evaluates what remains).

def C(v) -> ir.Const:
    return ir.Const(v)


def as_expr(e):
    if isinstance(e, bool):
        return ir.Const(e)
    if isinstance(e, (int, float)):
        return ir.Const(e)
    return e


def const(e):
    e = as_expr(e)
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


def add(a, b):
    a, b = as_expr(a), as_expr(b)
    ca, cb = const(a), const(b)
    if ca is not None and cb is not None:
        return C(ca + cb)
    if ca == 0:
        return b
    if cb == 0:
        return a
    return ir.BinExpr("+", a, b)


def sub(a, b):
    a, b = as_expr(a), as_expr(b)
    ca, cb = const(a), const(b)
    if ca is not None and cb is not None:
        return C(ca - cb)
    if cb == 0:
        return a
    if a == b:
        return C(0)
    return ir.BinExpr("-", a, b)


def mul(a, b):
    a, b = as_expr(a), as_expr(b)
    ca, cb = const(a), const(b)
    if ca is not None and cb is not None:
        return C(ca * cb)
    if ca == 1:
        return b
    if cb == 1:
        return a
    if ca == 0 or cb == 0:
        return C(0)
    return ir.BinExpr("*", a, b)


def _terms(e, op: str) -> list:
    return _terms(e.a, op) + _terms(e.b, op) if isinstance(e, ir.BinExpr) and e.op == op else [e]


def _fold(a, b, op: str, pick):
    """``op`` ("min" or "max") of ``a`` and ``b``; when either is itself such an ``op``, over the
    flattened terms of both, each term once and the constants folded into one (where the first
    was): a chain of valid extents (each op the min of its operands') stays as long as its
    distinct terms instead of doubling per op."""
    nested = any(isinstance(x, ir.BinExpr) and x.op == op for x in (a, b))
    if not nested:
        return ir.BinExpr(op, a, b)
    terms, at, consts = [], None, []
    for t in _terms(a, op) + _terms(b, op):
        if const(t) is not None:
            consts.append(const(t))
            at = len(terms) if at is None else at
        elif t not in terms:
            terms.append(t)
    if consts:
        terms.insert(at, C(pick(consts)))
    out = terms[0]
    for t in terms[1:]:
        out = ir.BinExpr(op, out, t)
    return out


def emin(a, b):
    a, b = as_expr(a), as_expr(b)
    if a == b:
        return a
    ca, cb = const(a), const(b)
    if ca is not None and cb is not None:
        return C(min(ca, cb))
    return _fold(a, b, "min", min)


def emax(a, b):
    a, b = as_expr(a), as_expr(b)
    if a == b:
        return a
    ca, cb = const(a), const(b)
    if ca is not None and cb is not None:
        return C(max(ca, cb))
    return _fold(a, b, "max", max)


def static_dims(shape, span, what) -> tuple:
    out = []
    for d in shape:
        v = const(d)
        if v is None:
            unsupported(f"dynamic {what} {list(shape)}", span)
        out.append(v)
    return tuple(out)


def flat2(shape: tuple) -> tuple:
    """``[prod(leading dims), last dim]`` of a static N-D shape (rank 0 -> 1x1, rank 1 -> 1xN)."""
    if not shape:
        return 1, 1
    return math.prod(shape[:-1]), shape[-1]


def whole(buf: Buffer, span=None) -> GVal:
    """The whole buffer as a region.  With a dynamic dim its static rows/cols are -1 (kernels
    read such a tensor through static-shaped views); a dynamic last dim makes the row stride an
    Expr that each launch evaluates."""
    if not buf.shape:
        unsupported(f"rank-0 tensor @{buf.name}", span)
    last = const(buf.shape[-1])
    ld = last if last is not None else as_expr(buf.shape[-1])
    rows = C(1)
    for d in buf.shape[:-1]:
        rows = mul(rows, d)
    srows = const(rows)
    dynamic = srows is None or last is None
    return GVal(buf, C(0), srows if not dynamic else -1, last if last is not None else -1,
                ld, rows, as_expr(ld), buf.dtype, tuple(const(d) if const(d) is not None else -1 for d in buf.shape),
                (), tuple(as_expr(d) for d in buf.shape) if dynamic else None)


def static_ld(g: GVal) -> bool:
    """Whether ``g``'s row stride is known when the kernel is emitted."""
    return isinstance(g.ld, int)


def view(src: GVal, offsets, shape, valid, span, src_is_named: bool) -> GVal:
    """A sub-block of ``src`` at N-D ``offsets``; ``valid`` (Exprs) or None.  ``shape`` is static
    or holds Exprs (a dynamic view: rows -1, the Exprs in ``dims``).  The view's leading axes
    become levels of row stride (``GVal.outer``), merged where they are evenly spaced."""
    shape = tuple(shape)
    n = len(shape)
    full = src.buf.shape if src_is_named else src.nd()
    if len(offsets) != n or len(full) != n:
        unsupported(f"view of rank {n} from a rank-{len(full)} source", span)
    strides = nd_strides(whole(src.buf, span) if src_is_named else src, span)
    off = src.offset
    for k in range(n):
        off = add(off, mul(offsets[k], strides[k]))
    static = tuple(const(d) for d in shape)
    if None in static:  # a dynamic view: a region the control program sizes (its consumers refuse or copy it)
        rows = C(1)
        for d in shape[:-1]:
            rows = mul(rows, d)
        return GVal(src.buf, off, -1, const(shape[-1]) if const(shape[-1]) is not None else -1, _int(strides[-2])
                    if n > 1 else _int(src.ld), rows, as_expr(shape[-1]), src.dtype, tuple(-1 if d is None else d
                                                                                          for d in static),
                    (), tuple(as_expr(d) for d in shape))
    shape = static
    ld, outer = _levels(shape, strides, src.ld)
    rows, cols = flat2(shape)
    if valid is None:
        if src_is_named:
            vr, vc = C(rows), C(cols)
        else:  # clipped to the source's valid data
            vr = emin(C(rows), emax(C(0), sub(src.vr, _row_of(offsets, shape, full, src))))
            vc = emin(C(cols), emax(C(0), sub(src.vc, offsets[-1])))
    else:
        vg = level_valid(tuple(valid), shape) if src_is_named else None
        if vg is not None:
            return GVal(src.buf, off, rows, cols, ld, vg[0], vg[1], src.dtype, shape, outer, vg=vg[2])
        vr, vc = flat_valid(tuple(valid), shape, span, f"view of {src.dtype} @{src.buf.name}")
        if not src_is_named:
            vr = emin(vr, emax(C(0), sub(src.vr, _row_of(offsets, shape, full, src))))
            vc = emin(vc, emax(C(0), sub(src.vc, offsets[-1])))
    return GVal(src.buf, off, rows, cols, ld, vr, vc, src.dtype, shape, outer)


def level_valid(valid: tuple, shape: tuple):
    """``(vr, vc, (level, valid rows per level))`` of a block whose one partial axis ``j`` but the
    last lies under full leading axes (``[tile, l_max, d]`` valid ``[tile, l, d]``): every level of
    ``prod(shape[j:-1])`` rows holds its first ``valid[j] * prod(shape[j+1:-1])``.  None for any
    other form (a row prefix, or more than one partial axis)."""
    n = len(shape)
    if n < 3 or 0 in shape:
        return None
    partial = [k for k in range(n - 1) if const(valid[k]) != shape[k]]
    if len(partial) != 1 or partial[0] == 0 or shape[partial[0]] == 1:
        return None
    j = partial[0]
    if all(shape[k] == 1 for k in range(j)):  # a row prefix: flat_valid's
        return None
    level = math.prod(shape[j:n - 1])
    inner = math.prod(shape[j + 1:n - 1])
    per = emin(emax(mul(as_expr(valid[j]), C(inner)), C(0)), C(level))
    return C(math.prod(shape[:n - 1])), as_expr(valid[-1]), (level, per, tuple(as_expr(v) for v in valid))


def _int(e):
    """An int when ``e`` is a constant (row strides are ints where they can be: ``static_ld``)."""
    c = const(e)
    return c if c is not None else e


def nd_strides(g: GVal, span) -> tuple:
    """The element stride of each axis of ``g``'s N-D shape (Exprs; the last is 1): its leading
    axes split over its levels of row stride, innermost first."""
    shape = g.nd()
    n = len(shape)
    if n == 0:
        return ()
    out = [C(1)] * n
    levels = [(g.inner if g.rows >= 0 else None, as_expr(g.ld))] + [(c, as_expr(s)) for c, s in reversed(g.outer)]
    li, left, unit = 0, levels[0][0], levels[0][1]
    for k in range(n - 2, -1, -1):
        d = const(shape[k])
        if d in (0, 1):  # one index (or none): any stride
            out[k] = unit
            continue
        while left == 1 and li + 1 < len(levels):
            li += 1
            left, unit = levels[li]
        if left is None:  # a dynamic region has one level: row-major over its dims
            out[k] = unit
            unit = mul(unit, shape[k])
            continue
        if d is None or left % d:
            unsupported(f"a view of a value of shape {list(g.shape)} whose axes cut across its row levels", span)
        out[k] = unit
        unit, left = mul(unit, C(d)), left // d
    return tuple(out)


def _levels(shape: tuple, strides: tuple, src_ld) -> tuple:
    """(ld, outer) of a static view with these N-D element strides: its leading axes of more
    than one index, merged wherever one steps by exactly the extent of the next."""
    levels = [(shape[k], strides[k]) for k in range(len(shape) - 1) if shape[k] != 1]
    if not levels or 0 in shape:  # one row, or none at all: no levels
        return _int(src_ld), ()
    merged = [levels[-1]]
    for count, stride in reversed(levels[:-1]):
        c, s = merged[0]
        if _same(stride, mul(s, C(c))):
            merged[0] = (count * c, s)
        else:
            merged.insert(0, (count, stride))
    return _int(merged[-1][1]), tuple((c, _int(s)) for c, s in merged[:-1])


def _same(a, b) -> bool:
    a, b = as_expr(a), as_expr(b)
    return a == b or (const(a) is not None and const(a) == const(b))


def _row_of(offsets, shape, full, src):
    """The flattened source row at which the view starts."""
    n = len(shape)
    row = C(0)
    for k in range(n - 1):
        inner = C(1)
        for d in full[k + 1:n - 1]:
            inner = mul(inner, d)
        row = add(row, mul(offsets[k], inner))
    return row


def flat_valid(valid: tuple, shape: tuple, span, what: str = "a value"):
    """The valid extent of a block as (valid rows, valid cols) of its 2-D form: it must be a
    row prefix.  ``what`` names the op and dtype for the refusal of any other form."""
    n = len(shape)
    vc = valid[-1]
    if n == 1:
        return C(1), vc
    lead_v, lead_s = valid[:-1], shape[:-1]
    gate = C(1)  # a leading axis of one element holds all or nothing: a factor of 0 or 1
    for k in range(n - 1):
        if lead_s[k] == 1 and const(lead_v[k]) != 1:
            gate = mul(gate, emin(emax(as_expr(lead_v[k]), C(0)), C(1)))
    partial = [k for k in range(n - 1) if const(lead_v[k]) != lead_s[k] and lead_s[k] != 1]
    if not partial:
        return mul(gate, C(math.prod(lead_s))), vc
    j = partial[0]
    if any(lead_s[k] != 1 for k in range(j)) or len(partial) > 1:
        unsupported(_not_a_prefix(valid, shape, partial, what), span)
    return mul(gate, mul(lead_v[j], C(math.prod(lead_s[j + 1:])))), vc


def _not_a_prefix(valid: tuple, shape: tuple, partial: list, what: str) -> str:
    """Why a valid extent is not a row prefix, naming its form: the rows valid in each inner level
    (a middle axis valid to a run-time extent under a full leading axis: the models' ``[tile,
    l_max, d]`` of ``l`` blocks) is the form none of the kernels carries yet."""
    text = "[" + ", ".join(printer.expr(as_expr(v)) for v in valid) + "]"
    head = f"{what}: valid_shape {text} of a {list(shape)} block that is not a row prefix"
    j, lead = partial[-1], [k for k in range(partial[-1]) if shape[k] != 1]
    if len(partial) == 1 and lead:
        runtime = "a run-time" if const(valid[j]) is None else "a partial"
        level = math.prod(shape[j:-1])
        head += (f" (axis {j} valid to {runtime} extent under the {math.prod(shape[k] for k in lead)} indices of axis "
                 f"{', '.join(map(str, lead))}: a count of valid rows per level of {level} rows, which the vector "
                 "kernels' copies, reductions and stores and the batched matmul's per-batch valid K and N do not carry)")
    return head


def per_matrix(g: GVal):
    """The valid ``(rows, cols)`` of every matrix of a batch (``g``'s last two axes) when they are
    alike: all rows with ``vc`` columns, or ``g.vg``'s first rows of each matrix; else None."""
    if len(g.shape) < 3:
        return None
    if g.vg is not None:
        return (g.vg[1], g.vc) if g.vg[0] == g.shape[-2] else None
    return (C(g.shape[-2]), g.vc) if const(g.vr) == g.rows else None


def of_matrices(g: GVal, vrows, vcols) -> GVal:
    """``g`` (a batch, its data where it is) with ``vrows x vcols`` valid in every matrix."""
    shape = g.shape
    if const(vrows) == shape[-2]:
        return GVal(g.buf, g.offset, g.rows, g.cols, g.ld, C(g.rows), as_expr(vcols), g.dtype, shape, g.outer)
    nd = tuple(C(d) for d in shape[:-2]) + (as_expr(vrows), as_expr(vcols))
    return GVal(g.buf, g.offset, g.rows, g.cols, g.ld, C(g.rows), as_expr(vcols), g.dtype, shape, g.outer,
                vg=(shape[-2], as_expr(vrows), nd))


def contiguous(g: GVal) -> bool:
    """Whether ``g``'s rows follow each other in GM (a reshape of it moves no data)."""
    return not g.outer and (g.rows == 1 or g.ld == g.cols or (g.dims is not None and _same(g.ld, g.dims[-1])))


def reshape(src: GVal, shape: tuple, span) -> GVal:
    """A contiguous fully valid GM value seen with another static shape (no data movement)."""
    if not contiguous(src):
        unsupported("reshape of a strided view (rows not contiguous)", span)
    rows, cols = flat2(shape)
    vr, vc = C(rows), C(cols)
    if const(src.vr) != src.rows or const(src.vc) != src.cols:  # a prefix of whole rows: as many elements
        vr = quotient(mul(src.vr, C(src.cols)), cols) if const(src.vc) == src.cols else None
        if vr is None:
            unsupported("reshape of a partially valid value (only a prefix of whole rows, as many whole rows "
                        "of the result)", span)
    return GVal(src.buf, src.offset, rows, cols, cols, vr, vc, src.dtype, tuple(shape))


def reshape_dynamic(src: GVal, dims: tuple, span) -> GVal:
    """A contiguous fully valid value seen with a shape known at run time (``inplace=True``):
    its rows (and row stride, for a dynamic last dim) are Exprs the control program evaluates."""
    rows = C(1)
    for d in dims[:-1]:
        rows = mul(rows, d)
    cols = const(dims[-1])
    srows = const(rows)
    return GVal(src.buf, src.offset, srows if srows is not None and cols is not None else -1,
                cols if cols is not None else -1, cols if cols is not None else as_expr(dims[-1]), rows,
                as_expr(dims[-1]), src.dtype, tuple(const(d) if const(d) is not None else -1 for d in dims), (),
                tuple(as_expr(d) for d in dims))


# -- boolean Exprs with folding (the control program's checks) ---------------------------------
def truth(e):
    e = as_expr(e)
    return e.value if isinstance(e, ir.Const) and isinstance(e.value, bool) else None


def eq(a, b):
    a, b = as_expr(a), as_expr(b)
    if const(a) is not None and const(b) is not None:
        return C(const(a) == const(b))
    return C(True) if a == b else ir.BinExpr("==", a, b)


def all_of(terms):
    out = C(True)
    for t in terms:
        if truth(t) is False:
            return C(False)
        if truth(t) is None:
            out = t if truth(out) is True else ir.BinExpr("and", out, t)
    return out


def any_of(terms):
    out = C(False)
    for t in terms:
        if truth(t) is True:
            return C(True)
        if truth(t) is None:
            out = t if truth(out) is False else ir.BinExpr("or", out, t)
    return out


def is_prefix(shape: tuple, valid: tuple):
    """The interpreter's ``_is_prefix`` as an Expr: the valid region is a row-major prefix of
    the block (every axis full but one, and every axis before that one of extent 1)."""
    n = len(shape)
    return any_of(all_of(eq(valid[i], shape[i]) for i in range(n) if i != j)
                  for j in range(n) if all(d == 1 for d in shape[:j]))


def _dims_text(n: int) -> str:
    return "[" + ", ".join(["%lld"] * n) + "]"


def reshape_valid(g: GVal, shape: tuple, valid_attr, span) -> tuple:
    """``(vr, vc, checks)`` of a reshape of the contiguous value ``g`` to static ``shape``: the
    result's valid extent, and the interpreter's run-time checks (``_op_reshape``) as
    ``(condition, printf message, values)``."""
    checks = []
    full = const(g.vr) == g.rows and const(g.vc) == g.cols
    if full:
        vin = tuple(C(d) for d in g.shape)
    else:
        vin = valid_dims(g.vr, g.vc, g.shape)
        if vin is None:
            unsupported(f"reshape of a partially valid value of shape {list(g.shape)} (valid rows not whole "
                        "slices of the first axis)", span)
        checks.append((is_prefix(g.shape, vin), f"reshape: valid region {_dims_text(len(vin))} of a "
                       f"{list(g.shape)} block is not contiguous; reshape needs a fully valid (or row-prefix) input",
                       vin))
        # past the check, every axis after the first one of more than one index is full
        first = next((k for k, d in enumerate(g.shape) if d != 1), len(g.shape) - 1)
        vin = tuple(v if k <= first else C(g.shape[k]) for k, v in enumerate(vin))
        full = all(const(v) == d for v, d in zip(vin, g.shape))
    count = C(1)
    for v in vin:
        count = mul(count, v)
    rows, cols = flat2(shape)
    if valid_attr is not None:
        va = tuple(as_expr(v) for v in valid_attr)
        prod = C(1)
        for v in va:
            prod = mul(prod, v)
        checks.append((all_of([eq(prod, count), is_prefix(shape, va)]),
                       f"reshape: valid_shape {_dims_text(len(va))} does not hold the %lld valid elements of the input",
                       va + (count,)))
        if full:  # all of a fully valid input: a valid_shape that passes the check is the shape
            return C(rows), C(cols), checks
        vr, vc = flat_valid(va, shape, span)
        return vr, vc, checks
    if full:
        return C(rows), C(cols), checks
    n = len(shape)
    j = next((k for k in range(n) if shape[k] != 1), n - 1)
    inner = math.prod(shape[j + 1:])
    checks.append((eq(ir.BinExpr("%", count, C(inner)) if const(count) is None else C(const(count) % inner), C(0)),
                   f"reshape: the %lld valid elements do not form a block of {list(shape)}", (count,)))
    if n == 1:
        return C(1), count, checks
    if j < n - 1:  # whole rows of the 2-D form
        q = quotient(count, cols)
        return (q if q is not None else ir.BinExpr("//", count, C(cols))), C(cols), checks
    # leading axes all 1: the first count elements of the one row ([0, ..., C] when there are none)
    return emin(count, C(1)), emax(count, mul(C(cols), sub(C(1), emin(count, C(1))))), checks


def unsqueeze(src: GVal, shape: tuple, span) -> GVal:
    """``src`` with a size-1 axis inserted (``shape``: the result's).  Before the last axis the
    2-D form ``[prod(leading), last]`` is unchanged, so a strided or partially valid value keeps
    its layout and valid extent; a new last axis makes every element a row (a reshape)."""
    if src.shape and shape[-1] == src.shape[-1]:  # the same [prod(leading), last] form
        return GVal(src.buf, src.offset, src.rows, src.cols, src.ld, src.vr, src.vc, src.dtype, tuple(shape))
    return reshape(src, shape, span)


def valid_dims(vr, vc, shape: tuple):
    """The N-D valid extent of a value of static ``shape`` whose 2-D form has ``vr x vc`` valid,
    or None when the 2-D form does not say it (a row count that is not a prefix along the first
    axis of a rank-3 value)."""
    n = len(shape)
    if n <= 1:
        return (vc,) * n
    if n == 2:
        return vr, vc
    if shape[0] == 1:  # a leading axis of one index: the rest says it
        rest = valid_dims(vr, vc, shape[1:])
        return None if rest is None else (C(1),) + tuple(rest)
    if const(vr) == math.prod(shape[:-1]):
        return tuple(C(d) for d in shape[:-1]) + (vc,)
    lead = quotient(vr, math.prod(shape[1:-1]))  # whole slices of the first axis
    if lead is not None:
        return (lead,) + tuple(C(d) for d in shape[1:-1]) + (vc,)
    return None


def quotient(e, m: int):
    """``e / m`` as an Expr when ``e`` is a multiple of ``m`` by its form (a constant, a product
    with such a constant, a min, max, sum or difference of such), else None."""
    e = as_expr(e)
    if m == 1:
        return e
    if const(e) is not None:
        return C(const(e) // m) if const(e) % m == 0 else None
    if isinstance(e, ir.BinExpr) and e.op == "*":
        for x, k in ((e.a, e.b), (e.b, e.a)):
            if const(k) is not None and const(k) > 0:  # x * k / m = (x / (m / g)) * (k / g)
                g = math.gcd(const(k), m)
                q = quotient(x, m // g)
                if q is not None:
                    return mul(q, C(const(k) // g))
    if isinstance(e, ir.BinExpr) and e.op in ("min", "max", "+", "-"):
        a, b = quotient(e.a, m), quotient(e.b, m)
        if a is not None and b is not None:
            return {"min": emin, "max": emax, "+": add, "-": sub}[e.op](a, b)
    return None


VIEW_OF_TENSOR, VIEW_OF_VALUE, ASSEMBLE = "ViewOfTensor", "ViewOfValue", "Assemble"


def region_holds(kind: str, offsets, shape, valid, extent) -> bool:
    """Whether a region is certain to pass the control program's check (the interpreter's
    rules for a view or an assemble, ``pypto_host::CheckRegion``): False when it may fail,
    including when any of its numbers is known only at run time."""
    values = [const(e) for e in tuple(offsets) + tuple(shape) + tuple(valid or ()) + tuple(extent)]
    if None in values:
        return False
    n = len(offsets)
    o, s, e = values[:n], values[n:2 * n], values[-n:]
    v = values[2 * n:3 * n] if valid is not None else s
    if kind == ASSEMBLE:
        return all(0 <= a and a + b <= c for a, b, c in zip(o, v, e))
    if any(a < 0 for a in o) or any(b < 0 or b > c for b, c in zip(v, s)):
        return False
    return all(a + b <= c for a, b, c in zip(o, v, e))
