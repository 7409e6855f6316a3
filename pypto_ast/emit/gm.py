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
    shape: tuple  # the value's N-D static shape

    def same_region(self, other: "GVal") -> bool:
        return (self.buf.name == other.buf.name and self.offset == other.offset and self.rows == other.rows
                and self.cols == other.cols and self.ld == other.ld)


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


def emin(a, b):
    a, b = as_expr(a), as_expr(b)
    if a == b:
        return a
    ca, cb = const(a), const(b)
    if ca is not None and cb is not None:
        return C(min(ca, cb))
    return ir.BinExpr("min", a, b)


def emax(a, b):
    a, b = as_expr(a), as_expr(b)
    if a == b:
        return a
    ca, cb = const(a), const(b)
    if ca is not None and cb is not None:
        return C(max(ca, cb))
    return ir.BinExpr("max", a, b)


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
    return GVal(buf, C(0), srows if srows is not None and last is not None else -1, last if last is not None else -1,
                ld, rows, as_expr(ld), buf.dtype, tuple(const(d) if const(d) is not None else -1 for d in buf.shape))


def static_ld(g: GVal) -> bool:
    """Whether ``g``'s row stride is known when the kernel is emitted."""
    return isinstance(g.ld, int)


def view(src: GVal, offsets, shape, valid, span, src_is_named: bool) -> GVal:
    """A static-shaped sub-block of ``src`` at N-D ``offsets``; ``valid`` (Exprs) or None."""
    shape = tuple(shape)
    n = len(shape)
    full = src.buf.shape if src_is_named else src.shape
    if len(offsets) != n or len(full) != n:
        unsupported(f"view of rank {n} from a rank-{len(full)} source", span)
    # element strides of the source, N-D (row-major over the source's own shape)
    strides = [None] * n
    acc = C(1)
    for k in range(n - 1, -1, -1):
        strides[k] = acc if k < n - 1 else C(1)
        if k == n - 1:
            acc = as_expr(src.ld)
        else:
            acc = mul(acc, full[k])
    # rows of the view must be uniformly strided by the source's row stride
    for k in range(n - 2):
        if shape[k] > 1:
            inner_src = C(1)
            for d in full[k + 1:n - 1]:
                inner_src = mul(inner_src, d)
            if const(inner_src) != math.prod(shape[k + 1:n - 1]):
                unsupported(f"view of shape {list(shape)} whose rows are not evenly spaced in the source", span)
    off = src.offset
    for k in range(n):
        off = add(off, mul(offsets[k], strides[k]))
    rows, cols = flat2(shape)
    if valid is None:
        if src_is_named:
            vr, vc = C(rows), C(cols)
        else:  # clipped to the source's valid data
            vr = emin(C(rows), emax(C(0), sub(src.vr, _row_of(offsets, shape, full, src))))
            vc = emin(C(cols), emax(C(0), sub(src.vc, offsets[-1])))
    else:
        vr, vc = flat_valid(tuple(valid), shape, span)
        if not src_is_named:
            vr = emin(vr, emax(C(0), sub(src.vr, _row_of(offsets, shape, full, src))))
            vc = emin(vc, emax(C(0), sub(src.vc, offsets[-1])))
    return GVal(src.buf, off, rows, cols, src.ld, vr, vc, src.dtype, shape)


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


def flat_valid(valid: tuple, shape: tuple, span):
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
        unsupported(f"valid_shape {list(valid)} of a {list(shape)} block that is not a row prefix", span)
    return mul(gate, mul(lead_v[j], C(math.prod(lead_s[j + 1:])))), vc


def reshape(src: GVal, shape: tuple, span) -> GVal:
    """A contiguous GM value seen with another static shape (no data movement)."""
    if src.rows > 1 and (not static_ld(src) or src.ld != src.cols):
        unsupported("reshape of a strided view (rows not contiguous)", span)
    rows, cols = flat2(shape)
    vr, vc = C(rows), C(cols)
    if const(src.vr) != src.rows or const(src.vc) != src.cols:  # a prefix of whole rows: as many elements
        vr = quotient(mul(src.vr, C(src.cols)), cols) if const(src.vc) == src.cols else None
        if vr is None:
            unsupported("reshape of a partially valid value (only a prefix of whole rows, as many whole rows "
                        "of the result)", span)
    return GVal(src.buf, src.offset, rows, cols, cols, vr, vc, src.dtype, tuple(shape))


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
