"""One vector kernel (AIV) per fused segment of a compute block.

A ``Segment`` is a run of vector ops over one 2-D iteration shape ``[R, C]`` whose values are
kept in UB: every input region is read from GM once per tile (``loads``), every region the
segment writes is written once per tile (``stores``), and the chain in between is computed
in UB with no GM round trip.  Each value has a *kind* relative to ``[R, C]``:

* ``F`` full ``[R, C]`` — ``cpad`` elements per UB row (rows 32-byte aligned, ragged rows via
  DataCopyPad);
* ``R`` one value per row (``[R, 1]``, row reductions) — one 32-byte block per row;
* ``C`` one row broadcast over rows (``[1, C]``) and ``S`` a single value (``[1, 1]``) —
  loaded once per core into a TBuf, before the tile loop.

``emit_segment`` renders the canonical double-buffered pipeline of ascendc.md §5.3: row tiles
split round-robin over ``GetBlockIdx()/GetBlockNum()``, CopyIn / Compute / CopyOut.  The
tiling struct carries, per GM region, its element offset, valid rows, valid cols and the
buffer's element count (evaluated by the control program for each launch).
"""

from __future__ import annotations

import functools
import math
import struct
from dataclasses import dataclass, field

from .. import ir
from ..ir.casts import saturates
from .errors import EmitError, unsupported
from . import fuse, gm
from .gm import GVal
from .vector_int import INT_CTYPES, INT_SIZES, INTEGER_OPS, IntegerOps, int_literal

CTYPE = {"fp32": "float", "fp16": "half", "int32": "int32_t", "bool": "uint8_t"}
ES = {"fp32": 4, "fp16": 2, "int32": 4, "bool": 1}
MAX_CORES = 40  # AIV cores on A2 (910B)
UB_CAPACITY = 192 * 1024  # MEM_UB of A2/A3 (196608 B): what pypto's own plan must fit (pypto-dsl.md)
BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "maximum": "Max", "minimum": "Min"}
COMPARE = {"gt": "GT", "ge": "GE", "lt": "LT", "le": "LE", "eq": "EQ", "ne": "NE"}
SWAP_CMP = {"GT": "LT", "GE": "LE", "LT": "GT", "LE": "GE", "EQ": "EQ", "NE": "NE"}
DIRECT_UNARY = {"exp": "Exp", "log": "Ln", "abs": "Abs", "sqrt": "Sqrt", "rsqrt": "Rsqrt",
                "reciprocal": "Reciprocal", "relu": "Relu"}
ROUNDING = {"floor": "CAST_FLOOR", "ceil": "CAST_CEIL", "round": "CAST_RINT", "trunc": "CAST_TRUNC"}
REDUCE = {"sum": "ReduceSum", "amax": "ReduceMax", "amin": "ReduceMin"}
COMPOSED_UNARY = ("neg", "sigmoid", "exp2", "expm1", "log2", "log10", "log1p", "sign", "lrelu", "clip")
CREATION = ("full", "zeros", "ones")
VECTOR_OPS = (set(BINARY) | set(COMPARE) | set(DIRECT_UNARY) | set(ROUNDING) | set(REDUCE)
              | set(COMPOSED_UNARY) | set(CREATION) | {"cast", "where", "clone", "expand_clone", "prod", "pow", "arange",
                                                       "sin", "cos"})
HONOURED_ATTRS = {
    "add": {"alpha"}, "sub": {"alpha"}, "round": {"decimals"}, "lrelu": {"negative_slope"}, "clip": {"min", "max"},
    "cast": {"dtype", "mode", "satmode"}, "arange": {"dtype", "start", "step", "stop"},
    "full": {"dtype", "shape", "value", "valid_shape"}, "zeros": {"dtype", "shape"}, "ones": {"dtype", "shape"},
    "expand_clone": {"shape"}, "softmax": {"dim"}, **{code: {"dim", "keepdim"} for code in ("sum", "amax", "amin", "prod")},
}
"""The attributes the vector emitter reads, per opcode: an op carrying any other is refused (PTO109),
never emitted as if it were absent (round(x, decimals=1) once came out as round(x))."""
ROUND_MODES = ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD")
# the integer, bitwise and logical family (vector_int.py composes it from the A2 API)
CTYPE.update(INT_CTYPES)
ES.update(INT_SIZES)
COMPARE["greater"] = "GT"  # pypto.greater is gt
VECTOR_OPS |= {"greater"} | set(INTEGER_OPS)

# ---- bf16 and the math library (docs/semantics.md "bf16", "Math functions") ----------------------
# bf16 values live in UB as bf16 (2-byte DataCopy); A2 has no bf16 arithmetic (ascendc.md §3), so an op
# on bf16 casts its bf16 operands to fp32 (CAST_NONE, exact), computes in fp32 and rounds its result
# once (CAST_RINT): SegmentEmitter._in_fp32.  These ops handle bf16 themselves (bit copies, Cast, the
# row reductions' fp32 widening):
CTYPE["bf16"] = "bfloat16_t"
ES["bf16"] = 2
BF16_MAX = 3.3895313892515355e38  # the largest finite bf16
_BF16_OWN = frozenset(REDUCE) | {"cast", "clone", "expand_clone", "prod"}
# High-level math APIs of kernel_operator.h (CANN adv_api) called on fp32: op -> (API, k): the API's
# sharedTmpBuffer needs k blocks of 256 bytes at least and uses k bytes per input byte at most
ADV_UNARY = {"erf": ("Erf", 3), "erfc": ("Erfc", 7), "atan": ("Atan", 5), "sinh": ("Sinh", 1),
             "cosh": ("Cosh", 2), "asinh": ("Asinh", 3), "acosh": ("Acosh", 1), "atanh": ("Atanh", 1),
             "tan": ("Tan", 4), "tanh": ("Tanh", 1), "asin": ("Asin", 2), "acos": ("Acos", 2)}
POWER_TMP = 5  # Power(tensor, tensor) on float: 4 blocks + one repeat
ADV_TMP_CAP = 2048  # bytes per block of temporary used at most (more only speeds the API up)
# integer inputs of exp2 (an fp32 result): the Cast to fp32 and its round mode (int32 rounds to
# nearest, as torch converts; int16 is exact); int8/uint8 go through half, exact as well
_INT_TO_FP32 = {"int8": "CAST_NONE", "uint8": "CAST_NONE", "int16": "CAST_NONE", "int32": "CAST_RINT"}
MATH_OPS = frozenset(ADV_UNARY) | {"hypot", "atan2", "cbrt", "prelu", "softmax"}
_MATH_OWN_SCRATCH = {"hypot": 5, "atan2": 5, "cbrt": 4, "prelu": 2, "softmax": 1}  # fp32 slots (masks: one each)
VECTOR_OPS |= MATH_OPS
QUANT_CASTS = (("fp16", "int8"), ("fp16", "uint8"), ("int8", "fp16"), ("int16", "fp32"))  # emit/quant.py's steps


@dataclass
class Access:
    """A GM region a kernel reads (in ``loads``) or writes (in ``stores``) for one value."""

    key: str  # value name
    gval: GVal
    kind: str = "F"
    field: int = -1  # index of the region in the kernel's arguments and tiling


Load = Store = Access


@dataclass
class Segment:
    name: str  # kernel symbol
    label: str  # "<block> seg <k>" for comments
    shape: tuple = None  # (R, C)
    loads: list = field(default_factory=list)
    stores: list = field(default_factory=list)
    ops: list = field(default_factory=list)  # compute ir.Op
    shape2: dict = field(default_factory=dict)  # value -> (rows, cols)
    dtype: dict = field(default_factory=dict)  # value -> dtype
    written: set = field(default_factory=set)  # buffer names stored to
    read: set = field(default_factory=set)  # buffer names loaded from
    tile_rows: int = 0  # rows of the vector tile in effect (0: none set)
    tile_cols: int = 0
    tile_own: bool = False  # the tile is the emitter's (axes.OwnTile), not the kernel's: pypto's rule does not judge it
    tile_set: tuple = None  # the N-D vector tile in effect (clipped to the op's extents) and where
    tile_span: object = None  # the op that set it is (for the UB diagnostic)
    single_core: bool = False  # a reduction over the rows accumulates across all tiles
    span: object = None

    def has(self, key: str) -> bool:
        return key in self.dtype


def _is_scalar(x) -> bool:
    return isinstance(x, ir.Const) or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _sval(x):
    return x.value if isinstance(x, ir.Const) else x


def lit(v, dt: str, span=None) -> str:
    """A C++ literal of the element type; inf and NaN are compiler builtins (<cmath>'s INFINITY and
    NAN exist in CANN's CPU-debug build only, not for the NPU)."""
    if dt == "int32" or dt in INT_CTYPES:
        return int_literal(v, dt, span)
    v = float(v)
    if not math.isfinite(v):
        return ("static_cast<half>(" if dt == "fp16" else "static_cast<float>(") + \
            ("-" if v < 0 else "") + ("__builtin_inff()" if not math.isnan(v) else '__builtin_nanf("")') + ")"
    s = repr(v)
    if "e" not in s and "." not in s:
        s += ".0"
    return f"static_cast<half>({s}f)" if dt == "fp16" else f"{s}f"


def _exact_reciprocal(v, dt: str):
    """1 / v when multiplying by it is exactly dividing by v in ``dt`` (v, rounded to dt, a power of
    two whose reciprocal is a normal number of dt), else None."""
    fmt, lowest, highest = {"fp32": ("<f", -126, 127), "fp16": ("<e", -14, 15)}.get(dt, (None, 0, 0))
    if fmt is None:
        return None
    try:
        v = struct.unpack(fmt, struct.pack(fmt, float(v)))[0]
    except OverflowError:  # beyond the dtype's range
        return None
    m, e = math.frexp(abs(v))
    if m != 0.5 or not lowest <= 1 - e <= highest:
        return None
    return 1.0 / v


def _in_dtype(v, dt: str) -> float:
    """v as pypto's Element rule makes it for a ``dt`` tensor (rounded to fp16 for fp16)."""
    if dt == "bf16":
        return to_bf16(v)
    if dt != "fp16":
        return float(v)
    try:
        return struct.unpack("<e", struct.pack("<e", float(v)))[0]
    except OverflowError:
        return math.copysign(math.inf, float(v))


def to_bf16(v) -> float:
    """v rounded to bf16 as torch rounds a Python number for a bf16 tensor: to fp32 first, then to
    nearest-even bf16 (a finite value past the fp32 range is an infinity)."""
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return v
    try:
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


# pi = 3.140625 + 0.000965118408203125 + 2.5351817e-06 (8 bits, 8 bits, the float nearest the rest)
_PI_PARTS = (3.140625, 0.000965118408203125, 2.5351816930196946e-06)
_POW_ONE_ROUNDING = ("one", "copy", "square", "sqrt", "recip", "rsqrt")  # one vector op, one rounding
_POW_NO_SCRATCH = _POW_ONE_ROUNDING + ("inv_square",)


def _pow_exponent(op, dt: str) -> float:
    e = op.operands[1] if len(op.operands) > 1 else None
    if not _is_scalar(e):
        unsupported("'pow' with a tensor exponent", op.span)
    if dt not in ("fp32", "fp16", "bf16"):
        unsupported(f"'pow' on {dt}", op.span)
    p = _in_dtype(_sval(e), dt)
    if not math.isfinite(p):
        unsupported(f"'pow' with the exponent {p} (pypto's scalar operands are finite)", op.span)
    return p


def _pow_kind(p: float) -> str:
    """Which computation x ** p takes: torch's special cases (its pow with a Python exponent
    computes x * x, sqrt, rsqrt, 1 / x, 1 / (x * x), x * x * x), an integer exponent (even or odd:
    the sign of x matters), or a general real one."""
    special = {0.0: "one", 1.0: "copy", 2.0: "square", 0.5: "sqrt", -0.5: "rsqrt", -1.0: "recip",
               -2.0: "inv_square", 3.0: "cube"}
    if p in special:
        return special[p]
    if math.isfinite(p) and p.is_integer():
        return "odd" if int(p) % 2 else "even"
    return "real"


class SegmentEmitter(IntegerOps):
    def __init__(self, seg: Segment, source: str, line_directives: bool, budget: int):
        self.s, self.source, self.lines_on, self.budget = seg, source, line_directives, budget

    # -- planning ------------------------------------------------------------------------
    def kind(self, key: str) -> str:
        r, c = self.s.shape2[key]
        R, Cc = self.s.shape
        if (r, c) == (R, Cc):
            return "F"
        if c == 1 and r == R:
            return "R"
        if r == 1 and c == Cc:
            return "C"
        if (r, c) == (1, 1):
            return "S"
        raise EmitError(f"value %{key} of shape [{r}, {c}] inside a [{R}, {Cc}] kernel")

    def plan(self):
        s = self.s
        R, Cc = s.shape
        dts = set(s.dtype.values())
        for d in dts:
            if d not in CTYPE:
                unsupported(f"dtype {d} in a vector kernel", s.span)
        align = 32 // min([ES[d] for d in dts] + [4])
        for ld in s.loads:
            ld.kind = self.kind(ld.key)
        for st in s.stores:
            st.kind = self.kind(st.key)
        kinds = {self.kind(k) for k in s.dtype}
        row_ops = any(op.opcode in REDUCE or op.opcode in ("prod", "expand_clone", "arange", "softmax")
                      or self.integer_whole_rows(op) for op in s.ops)
        self.align = align
        # Column tiles only where no op needs whole rows (reductions, row/column broadcasts, arange:
        # its fill counts from the row's first column) -- or where whole rows do not fit UB and the
        # segment can run in column tiles all the same (_column_ok: design.md section 26).
        tc = Cc
        if s.tile_cols and s.tile_cols < Cc and kinds <= {"F", "S"} and not row_ops:
            tc = min(Cc, -(-s.tile_cols // align) * align)
        self._set_cols(tc)
        self.qstores = s.stores if len(s.stores) <= 8 else s.stores[:7]
        self.xstores = [st for st in s.stores if st not in self.qstores]
        tr = self._fit_rows()
        narrower = 0 < s.tile_cols < Cc  # the tile asks for fewer columns than a row
        if (self.ub_bytes > self.budget or (self.requested_rows and narrower)) and self.nct == 1 and self._column_ok():
            whole = (tr, self.ub_bytes, self.single, self.requested_rows, self.pypto_live)
            tr = self._fit_columns()
            if tr is None:  # no column tile does better: keep the whole rows
                self._set_cols(Cc)
                tr, self.ub_bytes, self.single, self.requested_rows, self.pypto_live = whole
                self._plan_ub(tr)
        if len(self.per_tile) > 8:
            unsupported(f"a kernel reading {len(self.per_tile)} tiled inputs (at most 8 VECIN queue buffers)", s.span)
        self.tr = tr
        self.nrt = -(-R // tr)
        self.ntiles = self.nrt * self.nct
        return self

    def _set_cols(self, tc: int):
        """Tile the columns by ``tc``: a row broadcast ([1, C]) is then read per column tile with the
        other inputs, and a reduction along the rows accumulates over the column tiles (``raccs``)."""
        s = self.s
        R, Cc = s.shape
        self.tc = tc
        self.cpad = -(-tc // self.align) * self.align
        self.nct = -(-Cc // tc)
        tiled = ("F", "R", "C") if self.nct > 1 else ("F", "R")
        self.per_tile = [x for x in s.loads if x.kind in tiled]
        self.once = [x for x in s.loads if x.kind not in tiled]
        self.raccs = [i for i, op in enumerate(s.ops) if self.nct > 1 and op.opcode in REDUCE
                      and self.kind(op.operands[0].name) == "F" and self.kind(op.results[0]) == "R"]

    def _fit_rows(self) -> int:
        """The rows of a tile at the current columns (sets ``single``, ``requested_rows``)."""
        s = self.s
        R = s.shape[0]
        self.single = False  # queue buffers single, not double (a tile that fits UB only so)
        self.requested_rows = 0  # the tile's rows where the plan runs it in sub-tiles of fewer rows
        self.pypto_live = 0
        if s.tile_rows:  # the tile the kernel asked for; soc.check_plan reports it if it does not fit
            tr = max(1, min(s.tile_rows, R))
            self._plan_ub(tr)
            if self.ub_bytes > self.budget:  # pypto's rule is that the live tiles fit UB: give up the overlap
                self.single = True
                self._plan_ub(tr)
            self.pypto_live = 0 if s.tile_own else self._pypto_live_bytes(tr)
            if self.ub_bytes > self.budget and self.pypto_live <= UB_CAPACITY:
                # pypto accepts the tile (its live tiles fit UB); our plan also holds scratch and the
                # reserve: run each tile as sub-tiles of fewer rows (rows are independent in every op)
                self.requested_rows = tr
                tr = self._most_rows(tr)
            return tr
        return self._most_rows(R)  # no tile set: the most rows that fit

    def _fit_columns(self):
        """Column tiles for a segment whose whole rows do not fit the tile asked for: the tile's own
        columns when it names fewer than the row's; else, where pypto accepts the tile (or none is
        set), the widest that fits; ``None`` when that is no better than whole rows."""
        s = self.s
        Cc = s.shape[1]
        if s.tile_cols and s.tile_cols < Cc:
            widths = [min(Cc, -(-s.tile_cols // self.align) * self.align)]
        elif s.tile_rows and self.pypto_live > UB_CAPACITY:  # pypto refuses the tile: so does soc.check_plan
            return None
        else:
            widths, w = [], -(-Cc // 2 // self.align) * self.align
            while w >= self.align:
                widths.append(w)
                w = -(-w // 2 // self.align) * self.align if w > self.align else 0
        for tc in widths:
            self._set_cols(tc)
            if len(self.per_tile) > 8:
                return None
            tr = self._fit_rows()
            if self.ub_bytes <= self.budget:
                return tr
        return None

    def _column_ok(self) -> bool:
        """Can the segment run in column tiles?  Every op but a reduction treats a tile's columns
        alike.  A reduction along the rows is complete only after the row's last column tile, so
        what is computed from it must stay per row (``R``/``S``: recomputed at each column tile from
        the running value) and is stored after the last one.  A reduction over the rows (``[1, C]``,
        a single-core segment) keeps each column apart: it runs a column tile's row tiles in order
        (``_col_major``), so what is computed from it stays per column (``C``); the two orders do
        not mix in one segment."""
        s = self.s
        if not {self.kind(k) for k in s.dtype} <= {"F", "R", "C", "S"}:
            return False
        partial = {}  # value -> the kind of reduction it waits for ("R": along the rows, "C": over them)
        for op in s.ops:
            res = op.results[0]
            if op.opcode in ("prod", "arange", "softmax") or self.integer_whole_rows(op):
                return False
            srcs = [x.name for x in op.operands if isinstance(x, ir.Value)]
            waits = {partial[x] for x in srcs if x in partial}
            if op.opcode in REDUCE:
                if self.kind(srcs[0]) != "F" or self.kind(res) not in ("R", "C"):
                    return False
                waits.add(self.kind(res))
            if len(waits) > 1 or ("C" in waits and self.kind(res) != "C") or ("R" in waits and self.kind(res) not in ("R", "S")):
                return False
            if waits:
                partial[res] = waits.pop()
        waiting = set(partial.values())
        return len(waiting) < 2 and ("C" not in waiting or s.single_core)

    def _most_rows(self, tr: int) -> int:
        """The most rows up to ``tr`` whose plan fits the budget (1 if none does)."""
        while True:
            self._plan_ub(tr)
            if self.ub_bytes <= self.budget or tr == 1:
                return tr
            tr = max(1, min(tr - 1, tr * self.budget // max(1, self.ub_bytes)))

    def _pypto_live_bytes(self, tr: int) -> int:
        """A lower bound of the UB any plan of a ``tr``-row tile needs, pypto's included (pypto-dsl.md:
        the live tiles of a subgraph must fit UB, else 'Alloc tensor ... exceeds MEM_UB size'): pypto
        splits a chain into subgraphs as UB requires, but one op needs its operand tiles at once (its
        result may reuse a dead operand's buffer), and each input or output tile alone."""
        s = self.s

        def tile(key):
            rows = tr if self.kind(key) in ("F", "R") else 1
            cols = self.tc if self.kind(key) in ("F", "C") else 1
            return rows * cols * ES.get(s.dtype[key], 1)

        need = max([tile(x.key) for x in s.loads + s.stores] + [0])
        for op in s.ops:
            ins = {x.name for x in op.operands if isinstance(x, ir.Value) and x.name in s.dtype}
            need = max(need, sum(map(tile, ins)), sum(tile(r) for r in op.results if r in s.dtype))
        return need

    def stride(self, key_or_kind: str, dt: str) -> int:
        k = key_or_kind if len(key_or_kind) == 1 and key_or_kind in "FRCS" else self.kind(key_or_kind)
        return self.cpad if k in ("F", "C") else 32 // ES[dt]

    def count(self, key: str, tr: int = None) -> int:
        """Elements a count-form op covers for a value: the whole tile, rounded up to 256 B."""
        tr = self.tr if tr is None else tr
        dt = self.s.dtype[key]
        k = self.kind(key)
        n = (tr if k in ("F", "R") else 1) * self.stride(k, dt if dt != "bool" else "fp32")
        es = ES.get(dt, 4) if dt != "bool" else 4
        return -(-n * es // 256) * 256 // es

    def _buf_bytes(self, kind: str, dt: str, tr: int) -> int:
        rows = tr if kind in ("F", "R") else 1
        n = rows * self.stride(kind, dt) * ES[dt]
        return -(-n // 256) * 256

    def _plan_ub(self, tr: int):
        s = self.s
        self.tr = tr
        self.slot_bytes = -(-tr * self.cpad * 4 // 256) * 256
        last_use = {}
        for i, op in enumerate(s.ops):
            for x in op.operands:
                if isinstance(x, ir.Value):
                    last_use[x.name] = i
        for st in s.stores:
            last_use[st.key] = len(s.ops)
        out_home = {}
        for st in self.qstores:
            if st.key not in out_home and self._can_home(st):
                out_home[st.key] = st
        home = {ld.key: ("in", ld) for ld in s.loads}
        free, nslots = [], 0

        def take():
            nonlocal nslots
            if free:
                return free.pop()
            nslots += 1
            return nslots - 1

        self.scratch = {}
        reuse_in = {}  # an input tile buffer whose value is dead may hold a result (in place)
        for i, op in enumerate(s.ops):
            res = op.results[0]
            released, late = [], []  # late: a different layout than the result, so no overlap
            for x in op.operands:
                if isinstance(x, ir.Value) and last_use.get(x.name) == i and home.get(x.name, ("",))[0] == "tmp":
                    same = self.kind(x.name) == self.kind(res) and ES.get(s.dtype[x.name], 1) == ES.get(s.dtype[res], 1)
                    if home[x.name][1] not in released + late:
                        (released if same else late).append(home[x.name][1])
            need = self._scratch_count(op)
            self.scratch[i] = [take() for _ in range(need)]
            in_place = op.opcode not in ("sign", "cast", "prod") and op.opcode not in REDUCE
            in_place = in_place and not self._apart(op)
            dead_in = [x.name for x in op.operands if isinstance(x, ir.Value) and last_use.get(x.name) == i
                       and home.get(x.name, ("",))[0] == "in" and x.name not in reuse_in.values()
                       and self.kind(x.name) == "F"  # full loads are tiled: their queue buffer is per tile
                       and s.dtype[x.name] == s.dtype[res]]
            if op.opcode in REDUCE and self.kind(res) == "C":  # accumulates across tiles
                home[res] = ("acc", i)
            elif res in out_home and self.kind(res) == out_home[res].kind:
                home[res] = ("out", out_home[res])
            elif in_place and self.kind(res) == "F" and dead_in:
                home[res] = home[dead_in[0]]
                reuse_in[res] = dead_in[0]
            elif not in_place:  # the result must not overlap an operand that is read again
                home[res] = ("tmp", take())
            else:
                free.extend(released)
                released = []
                home[res] = ("tmp", take())
            free.extend(released + late)
            free.extend(self.scratch[i])
            if res not in last_use and home[res][0] == "tmp":
                free.append(home[res][1])
        self.home = home
        self.nslots = nslots
        q = 0
        for ld in self.per_tile:
            q += self._nbuf(len(self.per_tile)) * self._buf_bytes(ld.kind, ld.gval.dtype, tr)
        for ld in self.once:
            q += self._buf_bytes(ld.kind, ld.gval.dtype, tr)
        for st in self.qstores:
            q += self._nbuf(len(self.qstores)) * self._buf_bytes(st.kind if st.kind in ("F", "R") else "F", st.gval.dtype, tr)
        for st in self.xstores:
            q += self._buf_bytes(st.kind if st.kind in ("F", "R") else "F", st.gval.dtype, tr)
        self.accs = [(i, s.dtype[op.results[0]]) for i, op in enumerate(s.ops)
                     if op.opcode in REDUCE and self.kind(op.results[0]) == "C"]
        q += sum(self._buf_bytes("C", dt, tr) for _, dt in self.accs)
        q += len(self.raccs) * self._buf_bytes("R", "fp32", tr)  # running values over the column tiles
        self.work_bytes = max(256, -(-self.cpad * 4 * 2 // 256) * 256, self.slot_bytes if self._needs_full_work() else 0)
        self.work_bytes = max(self.work_bytes, self._math_tmp_bytes())
        self.ub_bytes = q + nslots * self.slot_bytes + self.work_bytes

    def _nbuf(self, n: int) -> int:
        return 2 if n <= 4 and not self.single else 1

    def _can_home(self, st: Store) -> bool:
        return st.kind in ("F", "R") and st.gval.dtype != "bool"

    def _needs_full_work(self) -> bool:
        return any(op.opcode in ("div", "sub", "where", "sign", "pow", "sin", "cos") or op.opcode in COMPARE
                   or (op.opcode == "round" and op.attr("decimals", 0))
                   or (op.opcode == "sum" and self.s.dtype[op.results[0]] == "bf16"  # _reduce_one
                       and self.kind(op.results[0]) == self.kind(op.operands[0].name)) for op in self.s.ops) \
            or any(st.gval.dtype == "bool" for st in self.s.stores)

    def _scratch_count(self, op) -> int:
        """Scratch slots of one op: its own, and one more for an fp16 op computed in fp32."""
        return self._op_scratch(op) + self._widened(op) + self._widen_slots(op)

    def _op_scratch(self, op) -> int:
        code = op.opcode
        if code in INTEGER_OPS:
            return self.integer_scratch(op)
        if code in MATH_OPS or (code == "pow" and self._pow_tensor(op)):
            return self._math_scratch(op)
        if code in ("expm1", "log1p"):
            return 4
        if code in ("sin", "cos"):
            return 5
        if code == "sign":
            return 3
        if code == "exp2" and op.operands and self.s.dtype.get(getattr(op.operands[0], "name", None)) in ("int8", "uint8"):
            return 1  # the half step of the widening
        if code in ("lrelu", "where", "sigmoid") or self._saturating_fp16(op):
            return 2
        if code == "add" or code == "sub":
            alpha = op.attr("alpha")
            if alpha is not None and float(alpha) != 1.0:
                return 2 if self.s.dtype[op.results[0]] == "fp16" else 1
        if code == "pow":
            return 0 if _pow_kind(_pow_exponent(op, self.s.dtype[op.results[0]])) in _POW_NO_SCRATCH else 1
        return 0

    def _widened(self, op) -> bool:
        """An fp16 op composed of several vector steps runs them in fp32 and rounds to fp16 once,
        as every fp16 op does in the interpreter (docs/semantics.md); half intermediates would
        round at each step (exp2 as Exp(x * ln2) was off by 8 in 2198)."""
        if op.opcode not in ("exp2", "expm1", "log2", "log10", "log1p", "pow", "sin", "cos") or self.s.dtype[op.results[0]] != "fp16":
            return False
        if op.opcode == "pow" and self._pow_tensor(op):
            return False  # both operands are widened (_math)
        return op.opcode != "pow" or _pow_kind(_pow_exponent(op, "fp16")) not in _POW_ONE_ROUNDING

    # -- rendering helpers ---------------------------------------------------------------
    def ref(self, key: str) -> str:
        kind, where = self.home[key]
        if kind == "in":
            return f"l{where.field}"
        if kind == "out":
            return f"o{where.field}"
        if kind == "acc":
            return f"acc{where}.Get<{CTYPE[self.s.dtype[key]]}>()"
        dt = self.s.dtype[key]
        ct = "uint8_t" if dt == "bool" else CTYPE[dt]
        n = self.slot_bytes // (1 if dt == "bool" else ES[dt])
        return f"tmp.GetWithOffset<{ct}>({n}, {where * self.slot_bytes})"

    def scratch_ref(self, i: int, j: int, dt: str) -> str:
        ct = "uint8_t" if dt == "bool" else CTYPE[dt]
        n = self.slot_bytes // (1 if dt == "bool" else ES[dt])
        return f"tmp.GetWithOffset<{ct}>({n}, {self.scratch[i][j] * self.slot_bytes})"

    def work(self, dt: str) -> str:
        return f"work.Get<{CTYPE[dt]}>()"

    # -- emission ------------------------------------------------------------------------
    def emit(self) -> tuple[str, dict]:
        s = self.s
        self.plan()
        regions = s.loads + s.stores
        for k, r in enumerate(regions):
            r.field = k
        self._vc_exprs()
        tr, nt = self.tr, self.ntiles
        R, Cc = s.shape
        L = [f"// Generated by pypto-ast from {s.label} of {self.source}: {len(s.ops)} vector op(s) fused in UB, "
             f"[{R}, {Cc}] in row tiles of {tr}.",
             '#include "kernel_operator.h"', "",
             "__aicore__ inline uint32_t PyptoMin(uint32_t a, uint32_t b) { return a < b ? a : b; }",
             "// valid rows of a tile starting at row0 with nr rows, for a region of vr valid rows",
             "__aicore__ inline uint16_t PyptoRows(int64_t vr, uint32_t row0, uint32_t nr)",
             "{",
             "    const int64_t left = vr - static_cast<int64_t>(row0);",
             "    return static_cast<uint16_t>(left <= 0 ? 0 : (left < static_cast<int64_t>(nr) ? left : nr));",
             "}", ""]
        nf = len(regions)
        strided = [r for r in regions if not gm.static_ld(r.gval)]  # row strides known per launch
        leveled = [r for r in regions if r.gval.outer]  # rows in several levels of stride
        nlev = sum(len(r.gval.outer) for r in leveled)
        grouped = [r for r in regions if r.gval.vg is not None]  # valid rows per level (gm.GVal.vg)
        L.append(f"// tiling: int64 x {4 * nf + len(strided) + nlev + len(grouped)}; per GM region k: [4k] element offset, "
                 "[4k+1] valid rows, [4k+2] valid cols, [4k+3] elements in the buffer" +
                 (f"; then the row stride of each region of a dynamic last dimension" if strided else "") +
                 (f"; then the strides of each region's outer levels of rows, outermost first" if leveled else "") +
                 (f"; then the valid rows of each level of rows, per region valid so" if grouped else ""))
        for r in regions:
            d = "in " if r in s.loads else "out"
            ld = r.gval.ld if gm.static_ld(r.gval) else f"ld{r.field} (per launch)"
            lev = "".join(f" x {c} (stride os{r.field}_{j})" for j, (c, _) in enumerate(r.gval.outer))
            L.append(f"//   region {r.field}: {d} @{r.gval.buf.name} [{r.gval.rows}, {r.gval.cols}] ld {ld} ({r.kind})"
                     + (f", rows in levels: {r.gval.inner} (ld){lev}" if lev else "")
                     + (f", valid: the first vl{r.field} rows of every {r.gval.vg[0]}" if r.gval.vg is not None else ""))
        args = ", ".join(f"GM_ADDR t{r.field}" for r in regions)
        cls = f"Kernel_{s.name}"
        L += [f"class {cls} {{", "public:",
              f"    __aicore__ inline void Init(AscendC::TPipe* p, {args}, GM_ADDR tiling)", "    {",
              "        pipe = p;"]
        for r in regions:
            k = r.field
            ct = CTYPE[r.gval.dtype]
            L.append(f"        off{k} = static_cast<uint64_t>(((__gm__ int64_t*)tiling)[{4 * k}]);")
            L.append(f"        vr{k} = static_cast<int64_t>(((__gm__ int64_t*)tiling)[{4 * k + 1}]);")
            L.append(f"        vc{k} = static_cast<uint32_t>(((__gm__ int64_t*)tiling)[{4 * k + 2}]);")
            L.append(f"        g{k}.SetGlobalBuffer((__gm__ {ct}*)t{k}, static_cast<uint64_t>(((__gm__ int64_t*)tiling)[{4 * k + 3}]));")
        for j, r in enumerate(strided):
            L.append(f"        ld{r.field} = static_cast<uint64_t>(((__gm__ int64_t*)tiling)[{4 * nf + j}]);")
        at = 4 * nf + len(strided)
        for r in leveled:  # the strides of the outer levels of rows, per launch (gm.GVal.outer)
            for j in range(len(r.gval.outer)):
                L.append(f"        os{r.field}_{j} = static_cast<uint64_t>(((__gm__ int64_t*)tiling)[{at}]);")
                at += 1
        for r in grouped:
            L.append(f"        vl{r.field} = static_cast<uint32_t>(((__gm__ int64_t*)tiling)[{at}]);")
            at += 1
        for r in self.per_tile:
            L.append(f"        pipe->InitBuffer(q{r.field}, {self._nbuf(len(self.per_tile))}, "
                     f"{self._buf_bytes(r.kind, r.gval.dtype, tr)});")
        for r in self.once:
            L.append(f"        pipe->InitBuffer(c{r.field}, {self._buf_bytes(r.kind, r.gval.dtype, tr)});")
        for r in self.xstores:
            L.append(f"        pipe->InitBuffer(xb{r.field}, "
                     f"{self._buf_bytes(r.kind if r.kind in ('F', 'R') else 'F', r.gval.dtype, tr)});")
        for r in self.qstores:
            L.append(f"        pipe->InitBuffer(q{r.field}, {self._nbuf(len(self.qstores))}, "
                     f"{self._buf_bytes(r.kind if r.kind in ('F', 'R') else 'F', r.gval.dtype, tr)});")
        if self.nslots:
            L.append(f"        pipe->InitBuffer(tmp, {self.nslots * self.slot_bytes});")
        L.append(f"        pipe->InitBuffer(work, {self.work_bytes});")
        for i, dt in self.accs:
            L.append(f"        pipe->InitBuffer(acc{i}, {self._buf_bytes('C', dt, tr)});")
        for i in self.raccs:
            L.append(f"        pipe->InitBuffer(racc{i}, {self._buf_bytes('R', 'fp32', tr)});")
        L += ["    }", "    __aicore__ inline void Process()", "    {"]
        for r in self.once:
            ct = CTYPE[r.gval.dtype]
            L.append(f"        l{r.field} = c{r.field}.Get<{ct}>();")
            L.append(self._copy_in(r, "0", "1", cols0=True, ind="        "))
        if self.once:
            L.append("        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);")
            L.append("        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);")
        nested = bool(self.raccs) or self._col_major()
        if self.raccs:  # a row's column tiles in order on one core: its reductions accumulate over them
            L.append(f"        for (uint32_t t = AscendC::GetBlockIdx(); t < {self.nrt}u; t += AscendC::GetBlockNum()) {{")
            L.append(f"          for (uint32_t i = t * {self.nct}u; i < (t + 1u) * {self.nct}u; ++i) {{")
        elif nested:  # a column tile's row tiles in order on one core: its reductions over the rows accumulate
            L.append(f"        for (uint32_t t = AscendC::GetBlockIdx(); t < {self.nct}u; t += AscendC::GetBlockNum()) {{")
            L.append(f"          for (uint32_t i = t * {self.nrt}u; i < (t + 1u) * {self.nrt}u; ++i) {{")
        else:
            L.append(f"        for (uint32_t i = AscendC::GetBlockIdx(); i < {nt}u; i += AscendC::GetBlockNum()) {{")
        if self._col_major():
            L.append(f"            const uint32_t r0 = i % {self.nrt}u * {tr}u, c0 = i / {self.nrt}u * {self.tc}u;")
        elif self.nct > 1:
            L.append(f"            const uint32_t r0 = i / {self.nct}u * {tr}u, c0 = i % {self.nct}u * {self.tc}u;")
        else:
            L.append(f"            const uint32_t r0 = i * {tr}u, c0 = 0;")
        L.append(f"            const uint32_t nr = r0 + {tr}u <= {R}u ? {tr}u : {R}u - r0;  // rows in this tile")
        L.append(f"            const uint32_t nc = c0 + {self.tc}u <= {Cc}u ? {self.tc}u : {Cc}u - c0;  // cols in this tile")
        L += ["            CopyIn(r0, c0, nr, nc);", "            Compute(r0, c0, nr, nc);", "            CopyOut(r0, c0, nr, nc);",
              "        }"] + (["          }"] if nested else []) + ["    }", "", "private:",
              "    __aicore__ inline void CopyIn(uint32_t r0, uint32_t c0, uint32_t nr, uint32_t nc)", "    {"]
        for r in self.per_tile:
            ct = CTYPE[r.gval.dtype]
            L.append(f"        AscendC::LocalTensor<{ct}> x{r.field} = q{r.field}.AllocTensor<{ct}>();")
            rows = ("0", "1") if r.kind == "C" else ("r0", "nr")  # a row broadcast: this column tile of it
            L.append(self._copy_in(r, *rows, local=f"x{r.field}", ind="        "))
            L.append(f"        q{r.field}.EnQue(x{r.field});")
        L += ["    }", "    __aicore__ inline void Compute(uint32_t r0, uint32_t c0, uint32_t nr, uint32_t nc)", "    {",
              "        (void)r0; (void)c0; (void)nr; (void)nc;"]
        for r in self.per_tile:
            ct = CTYPE[r.gval.dtype]
            L.append(f"        AscendC::LocalTensor<{ct}> l{r.field} = q{r.field}.DeQue<{ct}>();")
        for r in self.qstores:
            ct = CTYPE[r.gval.dtype]
            L.append(f"        AscendC::LocalTensor<{ct}> o{r.field} = q{r.field}.AllocTensor<{ct}>();")
        for r in self.xstores:
            ct = CTYPE[r.gval.dtype]
            L.append(f"        AscendC::LocalTensor<{ct}> o{r.field} = xb{r.field}.Get<{ct}>();")
        if self.xstores:  # the previous tile's copy-out of the TBuf outputs must be done
            L.append("        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(1);")
            L.append("        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(1);")
        body = []
        for i, op in enumerate(s.ops):
            if self.lines_on and op.span is not None:
                body.append(f'#line {op.span.line} "{self.source}"')
            body.extend(self._op(i, op))
        for r in s.stores:
            h = self.home.get(r.key)
            if r.gval.dtype == "bool":  # bit mask -> one byte 0/1 per element (Select in half, Cast to uint8)
                n = self.count(r.key)
                body += [f"        AscendC::Duplicate(work.Get<half>(), static_cast<half>(1.0f), {n});  // bool @{r.gval.buf.name}",
                         f"        AscendC::Select(work.GetWithOffset<half>({n}, {n * 2}), {self.ref(r.key)}, work.Get<half>(), "
                         f"static_cast<half>(0.0f), AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});",
                         f"        AscendC::Cast(o{r.field}, work.GetWithOffset<half>({n}, {n * 2}), "
                         f"AscendC::RoundMode::CAST_NONE, {n});"]
                continue
            if not (h[0] == "out" and h[1] is r):
                n = self.count(r.key) if r.kind in ("F", "R") else self.stride(r.kind, r.gval.dtype)
                body.append(f"        AscendC::DataCopy(o{r.field}, {self.ref(r.key)}, {n});  // UB -> UB for @{r.gval.buf.name}")
        def locals_of(dt: str) -> frozenset:  # the Compute's named local tensors of dtype dt
            return frozenset([f"l{r.field}" for r in self.per_tile + self.once if r.gval.dtype == dt] +
                             [f"o{r.field}" for r in self.qstores + self.xstores if r.gval.dtype == dt])

        body = fuse.fuse_body(body, locals_of("fp32"), locals_of("bf16"))
        L.extend(body)
        if self.lines_on and body:
            L.append(f'#line {len(L) + 2} "{s.name}.cpp"')
        for r in self.qstores:
            L.append(f"        q{r.field}.EnQue(o{r.field});")
        for r in self.per_tile:
            L.append(f"        q{r.field}.FreeTensor(l{r.field});")
        L += ["    }", "    __aicore__ inline void CopyOut(uint32_t r0, uint32_t c0, uint32_t nr, uint32_t nc)", "    {",
              "        (void)c0; (void)nc;"]
        if self.xstores:
            L.append("        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(1);")
            L.append("        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(1);")
        for r in s.stores:
            ct = CTYPE[r.gval.dtype]
            if r in self.xstores:
                L.append(f"        AscendC::LocalTensor<{ct}> y{r.field} = xb{r.field}.Get<{ct}>();")
            else:
                L.append(f"        AscendC::LocalTensor<{ct}> y{r.field} = q{r.field}.DeQue<{ct}>();")
            if r.kind in ("C", "S") and s.single_core:
                L.append(f"        if (r0 + nr == {R}u) {{  // complete after the last tile")
                L.append(self._copy_out(r, "0", "1", f"y{r.field}", ind="            "))
                L.append("        }")
            elif r.kind == "R" and self.nct > 1:
                L.append(f"        if (c0 + nc == {Cc}u) {{  // per row: complete after the row's last column tile")
                L.append(self._copy_out(r, "r0", "nr", f"y{r.field}", ind="            "))
                L.append("        }")
            elif r.kind in ("C", "S"):
                L.append("        if (r0 == 0) {  // a row broadcast over tiles: written once")
                L.append(self._copy_out(r, "0", "1", f"y{r.field}", ind="            "))
                L.append("        }")
            else:
                L.append(self._copy_out(r, "r0", "nr", f"y{r.field}", ind="        "))
            if r not in self.xstores:
                L.append(f"        q{r.field}.FreeTensor(y{r.field});")
        L += ["    }", "", "    AscendC::TPipe* pipe;"]
        for r in self.per_tile:
            L.append(f"    AscendC::TQue<AscendC::TPosition::VECIN, 1> q{r.field};  // @{r.gval.buf.name}")
        for r in self.once:
            L.append(f"    AscendC::TBuf<AscendC::TPosition::VECCALC> c{r.field};  // @{r.gval.buf.name}, loaded once")
            L.append(f"    AscendC::LocalTensor<{CTYPE[r.gval.dtype]}> l{r.field};")
        for r in self.qstores:
            L.append(f"    AscendC::TQue<AscendC::TPosition::VECOUT, 1> q{r.field};  // @{r.gval.buf.name}")
        for r in self.xstores:
            L.append(f"    AscendC::TBuf<AscendC::TPosition::VECOUT> xb{r.field};  // @{r.gval.buf.name} (manual sync)")
        if self.nslots:
            L.append(f"    AscendC::TBuf<AscendC::TPosition::VECCALC> tmp;  // {self.nslots} slots of {self.slot_bytes} B")
        L.append("    AscendC::TBuf<AscendC::TPosition::VECCALC> work;  // reduce work / broadcast scalars")
        for i, dt in self.accs:
            L.append(f"    AscendC::TBuf<AscendC::TPosition::VECCALC> acc{i};  // a reduction over the rows, kept across tiles")
        for i in self.raccs:
            L.append(f"    AscendC::TBuf<AscendC::TPosition::VECCALC> racc{i};  // a row reduction, kept over column tiles (fp32)")
        for r in regions:
            L.append(f"    AscendC::GlobalTensor<{CTYPE[r.gval.dtype]}> g{r.field};")
        L.append("    uint64_t " + ", ".join(f"off{r.field}" for r in regions) + ";")
        L.append("    int64_t " + ", ".join(f"vr{r.field}" for r in regions) + ";")
        L.append("    uint32_t " + ", ".join(f"vc{r.field}" for r in regions) + ";")
        if strided:
            L.append("    uint64_t " + ", ".join(f"ld{r.field}" for r in strided) + ";  // row strides (elements)")
        if leveled:
            L.append("    uint64_t " + ", ".join(f"os{r.field}_{j}" for r in leveled for j in range(len(r.gval.outer)))
                     + ";  // strides of the outer levels of rows (elements)")
        if grouped:
            L.append("    uint32_t " + ", ".join(f"vl{r.field}" for r in grouped) + ";  // valid rows of each level of rows")
        L += ["};", "", f'extern "C" __global__ __aicore__ void {s.name}({args}, GM_ADDR tiling)', "{",
              "    AscendC::TPipe pipe;", f"    {cls} op;",
              f"    op.Init(&pipe, {', '.join(f't{r.field}' for r in regions)}, tiling);", "    op.Process();", "}"]
        info = {"kernel": s.name, "kind": "vector", "block": s.label.split()[0], "file": f"{s.name}.cpp",
                "shape": [R, Cc], "tile_rows": tr, "tile": [tr, self.tc], "tiles": nt,
                **({"tile_requested": [self.requested_rows, self.tc]} if self.requested_rows else {}), "num_blocks": self._num_blocks(),
                **({"vec_tile": list(s.tile_set), "vec_tile_at": [s.tile_span.line, s.tile_span.col] if s.tile_span else None}
                   if s.tile_set and not s.tile_own else {}),
                "ub_bytes": self.ub_bytes, "buffers": 1 if self.single else 2,
                **({"pypto_live_bytes": self.pypto_live} if self.requested_rows or self.ub_bytes > self.budget else {}),
                "tiling": [{"index": r.field, "tensor": r.gval.buf.name, "buffer_kind": r.gval.buf.kind,
                            "dir": "in" if r in s.loads else "out"} for r in regions]}
        return "\n".join(L) + "\n", info

    def _col_major(self) -> bool:
        """Tiles in column-major order: a reduction over the rows in column tiles (``_column_ok``)."""
        return self.s.single_core and self.nct > 1

    def _num_blocks(self) -> int:
        """Cores of a launch: one per tile, capped; a reduction over the rows accumulates on one
        core, per column tile when it has several (each column tile's rows on one core)."""
        if self.s.single_core:
            return min(self.nct, MAX_CORES)
        return min(self.ntiles, MAX_CORES)

    def _vc_exprs(self):
        """C++ expressions of each value's valid column count and of a tile's valid rows (``vr``, for
        a value of rows computed from loads): reductions count only those."""
        s = self.s
        vc = {}
        for r in s.loads:
            vc[r.key] = f"vc{r.field}"
        for op in s.ops:
            ws = [vc[x.name] for x in op.operands if isinstance(x, ir.Value) and x.name in vc
                  and self.kind(x.name) in ("F", "C")]
            res = op.results[0]
            if self.kind(res) in ("R", "S"):
                vc[res] = "1u"
            elif not ws:
                vc[res] = f"{s.shape[1]}u"
            else:
                e = ws[0]
                for w in ws[1:]:
                    if w != e:
                        e = f"PyptoMin({e}, {w})"
                vc[res] = e
        self.vc = vc
        vr = {r.key: f"PyptoRows(vr{r.field}, r0, nr)" for r in s.loads if r.kind in ("F", "R")}
        for op in s.ops:  # the tile's valid rows of a value of rows: the fewest of its operands'
            ws = sorted({vr[x.name] for x in op.operands if isinstance(x, ir.Value) and x.name in vr})
            if ws and self.kind(op.results[0]) in ("F", "R"):
                vr[op.results[0]] = functools.reduce(lambda a, b: f"PyptoMin({a}, {b})", ws)
        self.vr = vr

    # -- data movement -------------------------------------------------------------------
    def _copy_in(self, r: Load, row0: str, nrows: str, local: str = None, cols0: bool = False, ind: str = "") -> str:
        return self._copy(r, row0, nrows, local or f"l{r.field}", True, cols0, ind)

    def _copy_out(self, r: Store, row0: str, nrows: str, local: str, ind: str = "") -> str:
        return self._copy(r, row0, nrows, local, False, r.kind == "S", ind)

    def _copy(self, r, row0: str, nrows: str, local: str, gm_to_ub: bool, cols0: bool, ind: str) -> str:
        """DataCopyPad of the valid rows of this tile (ascendc.md §7.2): blockLen = valid cols in
        bytes, GM stride the rest of the row, UB rows padded to 32 B."""
        g = r.gval
        es = ES[g.dtype]
        ct = CTYPE[g.dtype]
        k = r.field
        ub_row_bytes = self.stride(r.kind, g.dtype) * es
        if r.kind in ("R", "S"):
            cols, c0 = "1u", "0"
        elif cols0 or self.nct == 1:
            cols, c0 = f"vc{k}", "0"
        else:  # this column tile's valid columns
            cols, c0 = "PyptoRows(vc%d, c0, nc)" % k, "c0"
        ld = f"{g.ld}u" if gm.static_ld(g) else f"ld{k}"
        gmem = f"g{k}[off{k} + static_cast<uint64_t>({row0}) * {ld}" + (f" + {c0}" if c0 != "0" else "") + "]"
        ub_gap = "static_cast<uint32_t>(" + f"({ub_row_bytes}u - (len + 31u) / 32u * 32u) / 32u)"  # 32-byte blocks
        gm_gap = f"{g.ld * es}u - len" if gm.static_ld(g) else f"static_cast<uint32_t>(ld{k} * {es}u) - len"  # bytes
        what = f"@{g.buf.name} {'GM -> UB' if gm_to_ub else 'UB -> GM'}"
        if g.outer or g.vg is not None:
            return self._copy_levels(r, row0, nrows, local, gm_to_ub, cols, c0, ld, ub_gap, gm_gap, what, ind)
        if gm_to_ub:
            call = (f"AscendC::DataCopyPad({local}, {gmem}, AscendC::DataCopyExtParams{{n, len, {gm_gap}, {ub_gap}, 0}}, "
                    f"AscendC::DataCopyPadExtParams<{ct}>{{false, 0, 0, static_cast<{ct}>(0)}});")
        else:
            call = f"AscendC::DataCopyPad({gmem}, {local}, AscendC::DataCopyExtParams{{n, len, {ub_gap}, {gm_gap}, 0}});"
        return "\n".join([
            f"{ind}{{  // {what}: the tile's valid rows, valid columns of each",
            f"{ind}    const uint16_t n = PyptoRows(vr{k}, {row0}, {nrows});",
            f"{ind}    const uint32_t len = {cols} * {es}u;  // bytes per row",
            f"{ind}    if (n > 0) {call}",
            f"{ind}}}"])

    def _copy_levels(self, r, row0, nrows, local, gm_to_ub, cols, c0, ld, ub_gap, gm_gap, what, ind) -> str:
        """The tile's rows of a region in several levels of row stride (gm.GVal.outer): one
        DataCopyPad per run of rows inside the innermost level, at the address the row's digits
        give (its index in each level times the level's stride)."""
        g, k = r.gval, r.field
        es, ct = ES[g.dtype], CTYPE[g.dtype]
        ub_row = self.stride(r.kind, g.dtype)
        at = [f"static_cast<uint64_t>(row % {g.inner}u) * {ld}" if g.outer else f"static_cast<uint64_t>(row) * {ld}"]
        if c0 != "0":
            at.append(c0)
        digits = []
        for j in range(len(g.outer) - 1, -1, -1):  # innermost outer level first
            count = g.outer[j][0]
            digits.append(f"{ind}        at += static_cast<uint64_t>(rest % {count}u) * os{k}_{j}; rest /= {count}u;")
        src, dst = (f"g{k}[at]", f"{local}[q * {ub_row}u]") if gm_to_ub else (f"{local}[q * {ub_row}u]", f"g{k}[at]")
        if gm_to_ub:
            call = (f"AscendC::DataCopyPad({dst}, {src}, AscendC::DataCopyExtParams{{cnt, len, {gm_gap}, {ub_gap}, 0}}, "
                    f"AscendC::DataCopyPadExtParams<{ct}>{{false, 0, 0, static_cast<{ct}>(0)}});")
        else:
            call = f"AscendC::DataCopyPad({dst}, {src}, AscendC::DataCopyExtParams{{cnt, len, {ub_gap}, {gm_gap}, 0}});"
        run = f"PyptoMin({g.inner}u - row % {g.inner}u, n - q)" if g.outer else "n - q"
        skip = []
        if g.vg is not None:  # only the first vl rows of each level hold data: the run stops there
            lv = g.vg[0]
            run = f"PyptoMin({run}, vl{k} - row % {lv}u)"
            skip = [f"{ind}        if (row % {lv}u >= vl{k}) {{ q += {lv}u - row % {lv}u; continue; }}  // past the level's valid rows"]
        return "\n".join([
            f"{ind}{{  // {what}: the tile's valid rows, one DataCopyPad per run inside a level of {g.inner} rows",
            f"{ind}    const uint16_t n = PyptoRows(vr{k}, {row0}, {nrows});",
            f"{ind}    const uint32_t len = {cols} * {es}u;  // bytes per row",
            f"{ind}    for (uint32_t q = 0; len > 0 && q < n;) {{",
            f"{ind}        const uint32_t row = {row0} + q;"] + skip + [
            f"{ind}        const uint16_t cnt = static_cast<uint16_t>({run});",
            f"{ind}        uint64_t at = off{k} + {' + '.join(at)};",
            f"{ind}        uint32_t rest = row / {g.inner}u;"] + digits + [
            f"{ind}        {call}",
            f"{ind}        q += cnt;",
            f"{ind}    }}",
            f"{ind}}}"])

    # -- compute -------------------------------------------------------------------------
    def _operand(self, x, span):
        """("t", key) for a tensor value, ("s", python number) for a literal scalar."""
        if isinstance(x, ir.Value):
            return ("t", x.name)
        if _is_scalar(x):
            return ("s", _sval(x))
        unsupported(f"operand {x!r}", span)

    def _rows(self, lines: list, body: list, count: str = None):
        lines.append(f"        for (uint32_t r = 0; r < {count or 'nr'}; ++r) {{")
        lines.extend("            " + b for b in body)
        lines.append("        }")

    def _vs_sync(self, lines: list):
        lines.append("        AscendC::SetFlag<AscendC::HardEvent::V_S>(0);")
        lines.append("        AscendC::WaitFlag<AscendC::HardEvent::V_S>(0);")

    def _sv_sync(self, lines: list):
        lines.append("        AscendC::SetFlag<AscendC::HardEvent::S_V>(0);")
        lines.append("        AscendC::WaitFlag<AscendC::HardEvent::S_V>(0);")

    def _row_of(self, key: str, ref: str = None) -> str:
        """The UB tensor of row r of a F value, or the value itself for C."""
        ref = ref or self.ref(key)
        k = self.kind(key)
        if k == "F":
            return f"{ref}[r * {self.cpad}]"
        return ref

    def _scalar_of(self, key: str) -> str:
        k = self.kind(key)
        dt = self.s.dtype[key]
        st = self.stride(k, dt)
        return f"{self.ref(key)}.GetValue({'r * ' + str(st) if k == 'R' else '0'})"

    def _scalar_op(self, code: str, dst: str, x: str, s: str, n, dt: str, s_first: bool, out: list, span, literal):
        """dst = x (op) s, or s (op) x when s_first; s a C++ scalar expression of the element type."""
        w = self.work(dt)
        if code == "add":
            out.append(f"AscendC::Adds({dst}, {x}, {s}, {n});")
        elif code == "sub" and not s_first:
            neg = (lit(-float(literal), dt, span) if literal is not None
                   else f"static_cast<{CTYPE[dt]}>(-static_cast<float>({s}))")
            out.append(f"AscendC::Adds({dst}, {x}, {neg}, {n});")
        elif code == "sub":
            out.append(f"AscendC::Muls({dst}, {x}, {lit(-1, dt, span)}, {n});")
            out.append(f"AscendC::Adds({dst}, {dst}, {s}, {n});")
        elif code == "mul":
            out.append(f"AscendC::Muls({dst}, {x}, {s}, {n});")
        elif code == "div":  # a division, correctly rounded: x * (1 / s) is not x / s
            out.append(f"AscendC::Duplicate({w}, {s}, {n});")
            out.append(f"AscendC::Div({dst}, {w}, {x}, {n});" if s_first else f"AscendC::Div({dst}, {x}, {w}, {n});")
        elif code in ("maximum", "minimum"):
            out.append(f"AscendC::{'Maxs' if code == 'maximum' else 'Mins'}({dst}, {x}, {s}, {n});")
        else:
            unsupported(f"'{code}' with a scalar operand", span)

    def _op(self, i: int, op) -> list:
        code, span = op.opcode, op.span
        res = op.results[0]
        dt = self.s.dtype[res]
        rk = self.kind(res)
        dst = self.ref(res)
        n = self.count(res)
        out: list = []
        cm = f"  // %{res} = {code}"
        if self._widen_slots(op):
            return self._in_fp32(i, op)
        ops = [self._operand(x, span) for x in op.operands if not isinstance(x, tuple)]
        if code in INTEGER_OPS:
            return self.integer_op(i, op, ops, res, dt, dst, n, cm)
        if code in MATH_OPS or (code == "pow" and self._pow_tensor(op)):
            return self._math(i, op, ops, res, dt, dst, n, out, cm)

        if code in BINARY:
            a, b = ops
            alpha = op.attr("alpha")
            if a[0] == "s" and b[0] == "s":
                unsupported(f"'{code}' of two scalars", span)
            if alpha is not None and float(alpha) != 1.0:
                if b[0] == "s":
                    b = ("s", float(b[1]) * float(alpha))
                elif a[0] == "s" or self.kind(a[1]) != self.kind(b[1]):
                    unsupported(f"'{code}' with alpha and a broadcast operand", span)
                else:
                    out.extend("        " + x for x in self._alpha(i, code, a[1], b[1], float(alpha), res, dst, n, cm))
                    return out
            if a[0] == "s" or b[0] == "s":
                s_first = a[0] == "s"
                t, sv = (b[1], a[1]) if s_first else (a[1], b[1])
                if code == "div" and not s_first and float(sv) == 0.0:
                    unsupported("division by the scalar 0", span)
                if code == "div" and not s_first and _exact_reciprocal(sv, dt) is not None:
                    body = [f"AscendC::Muls({dst}, {self.ref(t)}, {lit(_exact_reciprocal(sv, dt), dt, span)}, {n});{cm}"]
                else:
                    body = []
                    self._scalar_op(code, dst, self.ref(t), lit(sv, dt, span), n, dt, s_first, body, span, sv)
                    body[0] += cm
                out.extend("        " + x for x in body)
                return out
            ka, kb = self.kind(a[1]), self.kind(b[1])
            if ka == kb:
                out.append(f"        AscendC::{BINARY[code]}({dst}, {self.ref(a[1])}, {self.ref(b[1])}, {n});{cm}")
                return out
            return self._broadcast_binary(code, a[1], b[1], res, dt, out, cm, span)

        if code in COMPARE:
            a, b = ops
            src_dt = self.s.dtype[a[1]] if a[0] == "t" else self.s.dtype[b[1]]
            mode = COMPARE[code]
            if a[0] == "s":
                a, b, mode = b, a, SWAP_CMP[mode]
            nn = self.count(a[1])
            if b[0] == "s":
                out.append(f"        AscendC::CompareScalar({dst}, {self.ref(a[1])}, {lit(b[1], src_dt, span)}, "
                           f"AscendC::CMPMODE::{mode}, {nn});{cm}")
            else:
                if self.kind(a[1]) != self.kind(b[1]):
                    unsupported(f"'{code}' of a broadcast operand", span)
                out.append(f"        AscendC::Compare({dst}, {self.ref(a[1])}, {self.ref(b[1])}, "
                           f"AscendC::CMPMODE::{mode}, {nn});{cm}")
            return out

        if code == "where":
            c, a, b = ops
            refs = []
            for j, x in enumerate((a, b)):
                if x[0] == "s":
                    scr = self.scratch_ref(i, j, dt)
                    out.append(f"        AscendC::Duplicate({scr}, {lit(x[1], dt, span)}, {n});")
                    refs.append(scr)
                else:
                    if self.kind(x[1]) != rk:
                        unsupported("'where' with a broadcast operand", span)
                    refs.append(self.ref(x[1]))
            if self.kind(c[1]) != rk:
                unsupported("'where' with a broadcast condition", span)
            out.append(f"        AscendC::Select({dst}, {self.ref(c[1])}, {refs[0]}, {refs[1]}, "
                       f"AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});{cm}")
            return out

        if code in REDUCE or code == "prod":
            return self._reduce(i, op, ops[0][1], res, dt, out, cm)

        if code == "cast":
            src = ops[0][1]
            sdt = self.s.dtype[src]
            mode = str(op.attr("mode", "CAST_NONE") or "CAST_NONE").rsplit(".", 1)[-1].upper()
            if mode not in ROUND_MODES:
                unsupported(f"cast mode {mode}", span)
            if sdt == dt:
                out.append(f"        AscendC::DataCopy({dst}, {self.ref(src)}, {n});{cm} (same dtype)")
                return out
            if (sdt, dt) in (("fp32", "int32"), ("bf16", "int32")) and mode == "CAST_NONE":
                mode = "CAST_TRUNC"  # float -> int32 needs a rounding mode on A2; C/torch truncate
            if (sdt, dt) not in (("fp32", "fp16"), ("fp16", "fp32"), ("fp32", "int32"), ("int32", "fp32"),
                                 ("fp16", "int32"), ("bf16", "fp32"), ("fp32", "bf16"), ("bf16", "int32"),
                                 *QUANT_CASTS):
                unsupported(f"cast {sdt} -> {dt}", span)
            if (sdt, dt) == ("fp32", "bf16"):  # A2: float -> bf16 rounds with a directed or nearest mode only
                if mode == "CAST_ODD":
                    unsupported("cast fp32 -> bf16 with CAST_ODD (A2's Cast to bf16 has no round-to-odd)", span)
                mode = "CAST_RINT" if mode == "CAST_NONE" else mode
            if dt == "int32" and not self._saturates(op, sdt, dt):  # the A2 Cast to an integer clamps
                unsupported(f"cast {sdt} -> int32 with satmode OFF (wrapping)", span)
            if (sdt, dt) in (("fp16", "fp32"), ("bf16", "fp32")) and mode != "CAST_NONE":
                mode = "CAST_NONE"  # exact widening: the only mode A2 allows
            n = min(n, self.count(src))  # both buffers hold the tile; the narrower rounds up further
            x = self.ref(src)
            if self._saturating_fp16(op):
                x = self._clamp_to_fp16(i, src, out, cm)
            if rk == "R":  # rows of one 32-byte block in each dtype: cast row by row
                body = [f"AscendC::Cast({dst}[r * {self.stride('R', dt)}], {x}[r * {self.stride('R', sdt)}], "
                        f"AscendC::RoundMode::{mode}, 1);{cm}"]
                self._rows(out, body)
                return out
            out.append(f"        AscendC::Cast({dst}, {x}, AscendC::RoundMode::{mode}, {n});{cm}")
            return out

        if code in DIRECT_UNARY:
            out.append(f"        AscendC::{DIRECT_UNARY[code]}({dst}, {self.ref(ops[0][1])}, {n});{cm}")
            return out
        if code in ROUNDING:
            if dt != "fp32":
                unsupported(f"'{code}' on {dt}", span)
            decimals = int(op.attr("decimals", 0) or 0) if code == "round" else 0
            if decimals:
                return out + self._round_decimals(self.ref(ops[0][1]), dst, decimals, n, cm)
            out.append(f"        AscendC::Cast({dst}, {self.ref(ops[0][1])}, AscendC::RoundMode::{ROUNDING[code]}, {n});{cm}")
            return out
        if code in COMPOSED_UNARY or code in ("pow", "sin", "cos"):
            return self._composed(i, op, ops, res, dt, dst, n, out, cm)
        if code == "clone":
            out.append(f"        AscendC::DataCopy({dst}, {self.ref(ops[0][1])}, {n});{cm}")
            return out
        if code == "expand_clone":
            src = ops[0][1]
            sk = self.kind(src)
            if sk == rk:
                out.append(f"        AscendC::DataCopy({dst}, {self.ref(src)}, {n});{cm}")
            elif rk == "F" and sk == "C":
                self._rows(out, [f"AscendC::DataCopy({dst}[r * {self.cpad}], {self.ref(src)}, {self.cpad});{cm}"],
                           f"{self.tr}u")
            elif rk == "F" and sk in ("R", "S"):
                self._vs_sync(out)
                self._rows(out, [f"AscendC::Duplicate({dst}[r * {self.cpad}], {self._scalar_of(src)}, {self.cpad});{cm}"],
                           f"{self.tr}u")
            elif rk == "R" and sk == "S":  # a scalar to a column: each row's value (one 32-byte block per row)
                rs = self.stride("R", dt)
                self._vs_sync(out)
                self._rows(out, [f"AscendC::Duplicate({dst}[r * {rs}], {self._scalar_of(src)}, {rs});{cm}"],
                           f"{self.tr}u")
            elif rk == "C" and sk == "S":  # a scalar to a row
                self._vs_sync(out)
                out.append(f"        AscendC::Duplicate({dst}, {self._scalar_of(src)}, {self.cpad});{cm}")
            else:
                unsupported(f"expand_clone from a {sk} value to a {rk} value", span)
            return out
        if code == "arange":
            if rk not in ("C", "S") and not (rk == "F" and self.s.shape[0] == 1):
                unsupported("'arange' other than as a 1-D row", span)
            start, step = op.attr("start", 0), op.attr("step", 1)
            ct = CTYPE[dt]
            self._vs_sync(out)
            out.append(f"        for (uint32_t j = 0; j < {1 if rk == 'S' else self.s.shape[1]}u; ++j) {{{cm} (scalar fill)")
            out.append(f"            {dst}.SetValue(j, static_cast<{ct}>({float(start)!r} + {float(step)!r} * static_cast<double>(j)));")
            out.append("        }")
            self._sv_sync(out)
            return out
        if code in CREATION:
            v = {"zeros": 0, "ones": 1}.get(code)
            if v is None:
                v = op.attr("value")
                if v is None:
                    vals = [x for x in op.operands if _is_scalar(x)]
                    v = _sval(vals[0]) if vals else None
            if v is None or not _is_scalar(v):
                unsupported(f"'{code}' without a constant fill value", span)
            out.append(f"        AscendC::Duplicate({dst}, {lit(_sval(v), dt, span)}, {n});{cm}")
            return out
        unsupported(f"op '{code}'", span)

    def _round_decimals(self, x: str, dst: str, decimals: int, n, cm: str) -> list:
        """round(x, decimals) as torch computes it in fp32: rint(x * 10^d) / 10^d, or for d < 0
        rint(x / 10^-d) * 10^-d (docs/semantics.md)."""
        p, w = lit(10.0 ** abs(decimals), "fp32"), self.work("fp32")
        rint = f"AscendC::Cast({dst}, {dst}, AscendC::RoundMode::CAST_RINT, {n});"
        if decimals > 0:
            body = [f"AscendC::Muls({dst}, {x}, {p}, {n});{cm} round(x, decimals={decimals})", rint,
                    f"AscendC::Duplicate({w}, {p}, {n});", f"AscendC::Div({dst}, {dst}, {w}, {n});"]
        else:
            body = [f"AscendC::Duplicate({w}, {p}, {n});{cm} round(x, decimals={decimals})",
                    f"AscendC::Div({dst}, {x}, {w}, {n});", rint, f"AscendC::Muls({dst}, {dst}, {p}, {n});"]
        return ["        " + line for line in body]

    def _broadcast_binary(self, code, a, b, res, dt, out, cm, span):
        ka, kb = self.kind(a), self.kind(b)
        rk = self.kind(res)
        dst = self.ref(res)
        ct = CTYPE[dt]
        scal = {"R", "S"}
        if rk == "F":
            drow = f"{dst}[r * {self.cpad}]"
            if ka in scal or kb in scal:
                s_first = ka in scal
                t, sk = (b, a) if s_first else (a, b)
                body = [f"const {ct} s = {self._scalar_of(sk)};{cm}"]
                if self.kind(t) == "F" or self.kind(t) == "C":
                    self._scalar_op(code, drow, self._row_of(t), "s", self.cpad, dt, s_first, body, span, None)
                else:
                    unsupported(f"'{code}' of two per-row values into a full value", span)
                self._vs_sync(out)
                self._rows(out, body, f"{self.tr}u")
                return out
            # F with C (column broadcast): per row, count form with the broadcast row
            body = [f"AscendC::{BINARY[code]}({drow}, {self._row_of(a)}, {self._row_of(b)}, {self.cpad});{cm}"]
            self._rows(out, body, f"{self.tr}u")
            return out
        if rk in ("R", "C") and {ka, kb} == {rk, "S"}:  # a per-row or broadcast row with a single value
            s_first = ka == "S"
            t, sk = (b, a) if s_first else (a, b)
            body = [f"const {ct} s = {self._scalar_of(sk)};{cm}"]
            self._vs_sync(out)
            self._scalar_op(code, dst, self.ref(t), "s", self.count(res), dt, s_first, body, span, None)
            out.extend("        " + x for x in body)
            return out
        unsupported(f"'{code}' broadcasting a {ka} and a {kb} value", span)

    def _sin_cos(self, i, code: str, x: str, dst: str, n, cm: str) -> list:
        """No sin/cos in the A2 vector API.  x = k pi/2 + y with k = rint(x * 2/pi) and y from a
        three-part pi/2 (Cody-Waite: the first two parts have 8 bits, so for |x| <= 2^16 the products are
        exact and y is right to an ulp; |y| <= pi/4 + 0.01), then sin(y) and cos(y) by their Taylor
        polynomials (to y^11 and y^10: error < 1e-10), picked and signed by the quadrant q = k (sin) or
        k + 1 (cos x = sin(x + pi/2)): sin x = [sin y, cos y, -sin y, -cos y][q mod 4], so cos 0 and
        sin(pi/2) are 1 exactly and sin(-0) is -0.  y is clamped to [-1, 1]: past 2^16 the result loses
        accuracy but stays in [-1, 1].  inf and NaN give NaN."""
        k, y, t, c = (self.scratch_ref(i, j, "fp32") for j in range(4))
        mask = self.scratch_ref(i, 4, "bool")
        f = lambda v: lit(v, "fp32")  # noqa: E731
        L = [f"AscendC::Muls({k}, {x}, {f(2 / math.pi)}, {n});{cm} (x = k pi/2 + y)",
             f"AscendC::Cast({k}, {k}, AscendC::RoundMode::CAST_RINT, {n});",
             f"AscendC::Adds({k}, {k}, {f(0.0)}, {n});  // -0 -> +0: y keeps the sign of x = -0"]
        for j, part in enumerate(_PI_PARTS):
            L += [f"AscendC::Muls({t}, {k}, {f(-part / 2)}, {n});", f"AscendC::Add({y}, {x if j == 0 else y}, {t}, {n});"]
        L += [f"AscendC::Maxs({y}, {y}, {f(-1.0)}, {n});", f"AscendC::Mins({y}, {y}, {f(1.0)}, {n});"]
        if code == "cos":
            L.append(f"AscendC::Adds({k}, {k}, {f(1.0)}, {n});  // the quadrant of x + pi/2")

        def mod2(target: str, v: str) -> list:  # target = v - 2 floor(v / 2), t = floor(v / 2) (target is not v)
            return [f"AscendC::Muls({t}, {v}, {f(0.5)}, {n});", f"AscendC::Cast({t}, {t}, AscendC::RoundMode::CAST_FLOOR, {n});",
                    f"AscendC::Muls({target}, {t}, {f(-2.0)}, {n});", f"AscendC::Add({target}, {target}, {v}, {n});"]
        L += mod2(c, k) + [f"AscendC::CompareScalar({mask}, {c}, {f(1.0)}, AscendC::CMPMODE::EQ, {n});  // q odd: cos y",
                           f"AscendC::DataCopy({k}, {t}, {n});"]
        L += mod2(c, k) + [f"AscendC::Muls({k}, {c}, {f(-2.0)}, {n});", f"AscendC::Adds({k}, {k}, {f(1.0)}, {n});  // q mod 4 >= 2: -1",
                           f"AscendC::Mul({t}, {y}, {y}, {n});"]

        def poly(target: str, coef: list) -> list:  # target = (((c[-1] t + c[-2]) t + ...) t + c[0]
            lines = [f"AscendC::Muls({target}, {t}, {f(coef[-1])}, {n});"]
            for a in reversed(coef[1:-1]):
                lines += [f"AscendC::Adds({target}, {target}, {f(a)}, {n});", f"AscendC::Mul({target}, {target}, {t}, {n});"]
            return lines + [f"AscendC::Adds({target}, {target}, {f(coef[0])}, {n});"]
        L += poly(dst, [(-1) ** j / math.factorial(2 * j + 1) for j in range(6)]) + [f"AscendC::Mul({dst}, {dst}, {y}, {n});"]
        L += poly(c, [(-1) ** j / math.factorial(2 * j) for j in range(6)])
        return L + [f"AscendC::Select({dst}, {mask}, {c}, {dst}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});",
                    f"AscendC::Mul({dst}, {dst}, {k}, {n});"]

    # -- bf16 and the math library ---------------------------------------------------------
    def _pow_tensor(self, op) -> bool:
        """pow with a tensor exponent (the Power API); a scalar exponent is _pow's."""
        return op.opcode == "pow" and len(op.operands) > 1 and isinstance(op.operands[1], ir.Value)

    def _apart(self, op) -> bool:
        """The op's result may not share a buffer with an operand: the math APIs forbid any overlap."""
        return (op.opcode in MATH_OPS and op.opcode != "softmax") or self._pow_tensor(op)

    def _widened_keys(self, op) -> tuple:
        """(16-bit tensor operands, whether the result is one) of an op computed in fp32 by _in_fp32:
        every bf16 op but those that handle bf16 themselves, and the math ops on fp16 too."""
        if op.opcode in _BF16_OWN:
            return [], False
        narrow = ("bf16", "fp16") if op.opcode in MATH_OPS or self._pow_tensor(op) else ("bf16",)
        keys = []
        for x in op.operands:
            if isinstance(x, ir.Value) and self.s.dtype.get(x.name) in narrow and x.name not in keys:
                keys.append(x.name)
        return keys, self.s.dtype[op.results[0]] in narrow

    def _widen_slots(self, op) -> int:
        """Scratch slots _in_fp32 adds to the op's own: an fp32 copy of each widened operand and the
        fp32 result."""
        keys, res = self._widened_keys(op)
        return len(keys) + res

    def _count_as(self, key: str, dt: str) -> int:
        """Elements of ``key``'s tile in dtype ``dt`` (the count of its fp32 copy), in 256-byte steps."""
        rows = self.tr if self.kind(key) in ("F", "R") else 1
        n = rows * self.stride(self.kind(key), dt)
        return -(-n * ES[dt] // 256) * 256 // ES[dt]

    def _cast_lines(self, key: str, dst: str, src: str, to: str, frm: str, mode: str, note: str) -> list:
        """Cast a whole value (its rows one by one for a per-row value, whose block holds a different
        number of elements in each dtype)."""
        if self.kind(key) == "R":
            body = [f"AscendC::Cast({dst}[r * {self.stride('R', to)}], {src}[r * {self.stride('R', frm)}], "
                    f"AscendC::RoundMode::{mode}, 1);{note}"]
            lines: list = []
            self._rows(lines, body, f"{self.tr}u")
            return lines
        return [f"        AscendC::Cast({dst}, {src}, AscendC::RoundMode::{mode}, {self._count_as(key, 'fp32')});{note}"]

    def _in_fp32(self, i: int, op) -> list:
        """An op on bf16 (a math op on fp16 or bf16) as A2 computes it: its 16-bit operands cast to
        fp32 copies (exact), the op emitted on fp32, the result rounded once to its dtype (CAST_RINT).
        Scalars take the tensor's dtype first (pypto's Element rule), as the interpreter rounds them."""
        keys, narrow_res = self._widened_keys(op)
        res = op.results[0]
        slots = self.scratch[i][self._op_scratch(op):]
        narrow = self.s.dtype[keys[0]] if keys else self.s.dtype[res]
        cm = f"  // %{res} = {op.opcode} in fp32"
        out: list = []
        saved = {}
        for j, key in enumerate(keys):
            w = f"tmp.GetWithOffset<float>({self.slot_bytes // 4}, {slots[j] * self.slot_bytes})"
            out += self._cast_lines(key, w, self.ref(key), "fp32", self.s.dtype[key], "CAST_NONE", cm if j == 0 else "")
            saved[key] = (self.home[key], self.s.dtype[key])
        real = self.ref(res)
        for j, key in enumerate(keys):
            self.home[key], self.s.dtype[key] = ("tmp", slots[j]), "fp32"
        if narrow_res:
            saved[res] = (self.home[res], self.s.dtype[res])
            self.home[res], self.s.dtype[res] = ("tmp", slots[len(keys)]), "fp32"

        def element(v):
            return ir.Const(_in_dtype(_sval(v), narrow)) if _is_scalar(v) else v
        attrs = tuple((k, element(v).value if k in ("alpha", "min", "max", "value") and _is_scalar(v) else v)
                      for k, v in op.attrs)
        op32 = ir.Op(op.results, op.opcode, tuple(element(x) for x in op.operands), attrs, op.types, op.tile,
                     op.cube_tile, op.span)
        try:
            out += self._op(i, op32)
            wide = self.ref(res)
        finally:
            for key, (home, dt) in saved.items():
                self.home[key], self.s.dtype[key] = home, dt
        if narrow_res:
            out += self._cast_lines(res, real, wide, self.s.dtype[res], "fp32", "CAST_RINT",
                                    f"  // rounded to {self.s.dtype[res]} once")
        return out

    def _math_scratch(self, op) -> int:
        """Scratch slots of a math op: its own, and a full copy of each operand it broadcasts."""
        res = self.kind(op.results[0])
        return _MATH_OWN_SCRATCH.get(op.opcode, 0) + sum(
            1 for x in op.operands[:2] if _is_scalar(x) or (isinstance(x, ir.Value) and self.kind(x.name) != res))

    def _math_tmp_bytes(self) -> int:
        """The sharedTmpBuffer of the math APIs (the work buffer): the API's minimum number of
        256-byte blocks, each as large as a tile's slot up to ADV_TMP_CAP."""
        blocks = 0
        for op in self.s.ops:
            if op.opcode in ADV_UNARY:
                blocks = max(blocks, ADV_UNARY[op.opcode][1])
            elif op.opcode == "atan2":
                blocks = max(blocks, ADV_UNARY["atan"][1])
            elif self._pow_tensor(op):
                blocks = max(blocks, POWER_TMP)
        return blocks * min(self.slot_bytes, ADV_TMP_CAP)

    def _full(self, i: int, x, res: str, slots: list, op, out: list) -> str:
        """Operand ``x`` (("t", key) or ("s", value)) of a math op as a value of the result's kind:
        itself, or broadcast over the full tile into the next of ``slots`` (scratch indices)."""
        if x[0] == "t" and self.kind(x[1]) == self.kind(res):
            return self.ref(x[1])
        if self.kind(res) != "F":
            unsupported(f"'{op.opcode}' broadcasting into a {self.kind(res)} value", op.span)
        t = self.scratch_ref(i, slots.pop(0), "fp32")
        if x[0] == "s":
            out.append(f"        AscendC::Duplicate({t}, {lit(x[1], 'fp32')}, {self.count(res)});  // broadcast")
        elif self.kind(x[1]) == "C":
            self._rows(out, [f"AscendC::DataCopy({t}[r * {self.cpad}], {self.ref(x[1])}, {self.cpad});  // broadcast"],
                       f"{self.tr}u")
        else:
            self._vs_sync(out)
            self._rows(out, [f"AscendC::Duplicate({t}[r * {self.cpad}], {self._scalar_of(x[1])}, {self.cpad});  // broadcast"],
                       f"{self.tr}u")
        return t

    def _math(self, i, op, ops, res, dt, dst, n, out, cm) -> list:
        """The math ops on fp32 (fp16 and bf16 reach here widened): the high-level math APIs where
        A2 has one (their temporary buffer is ``work``), compositions of basic APIs elsewhere
        (docs/semantics.md, "Math functions")."""
        code, span = op.opcode, op.span
        if dt != "fp32":
            unsupported(f"'{code}' on {dt}", span)
        if code == "softmax":
            return self._softmax(i, op, ops[0], dst, out, cm)
        own = _MATH_OWN_SCRATCH.get(code, 0)
        slots = list(range(own, self._op_scratch(op)))  # for broadcast operands
        args = [self._full(i, x, res, slots, op, out) for x in ops[:2]]
        tmp = "work.Get<uint8_t>()"
        L: list = []
        if code in ADV_UNARY:
            L.append(f"AscendC::{ADV_UNARY[code][0]}({dst}, {args[0]}, {tmp}, {n});{cm}")
        elif code == "pow":
            L.append(f"AscendC::Power({dst}, {args[0]}, {args[1]}, {tmp}, {n});{cm}")
        elif code == "cbrt":
            L += self._cbrt(i, args[0], dst, n, cm)
        elif code == "prelu":
            if len(op.types[0].shape) > 2:
                unsupported(f"'prelu' of a rank-{len(op.types[0].shape)} value (its weight runs along axis 1)", span)
            (x, w), t, mask = args, self.scratch_ref(i, 0, "fp32"), self.scratch_ref(i, 1, "bool")
            L += [f"AscendC::Mul({t}, {x}, {w}, {n});{cm} (x > 0 ? x : w * x)",
                  f"AscendC::CompareScalar({mask}, {x}, {lit(0.0, 'fp32')}, AscendC::CMPMODE::GT, {n});",
                  f"AscendC::Select({dst}, {mask}, {x}, {t}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});"]
        else:  # hypot, atan2
            L += (self._hypot if code == "hypot" else self._atan2)(i, args[0], args[1], dst, n, cm)
        out.extend("        " + x for x in L)
        return out

    def _hypot(self, i, a: str, b: str, dst: str, n, cm: str) -> list:
        """hypot(a, b) = m * sqrt(1 + (k / m)^2), m = max(|a|, |b|), k = min(|a|, |b|): no overflow
        or underflow of a*a; m = 0 gives 0; an infinite operand gives +inf, a NaN beside it too (C99)."""
        ax, ay, m, t = (self.scratch_ref(i, j, "fp32") for j in range(4))
        mask = self.scratch_ref(i, 4, "bool")
        f = lambda v: lit(v, "fp32")  # noqa: E731
        L = [f"AscendC::Abs({ax}, {a}, {n});{cm} (m * sqrt(1 + (k / m)^2))", f"AscendC::Abs({ay}, {b}, {n});",
             f"AscendC::Max({m}, {ax}, {ay}, {n});", f"AscendC::Min({t}, {ax}, {ay}, {n});",
             f"AscendC::Div({t}, {t}, {m}, {n});", f"AscendC::Mul({t}, {t}, {t}, {n});",
             f"AscendC::Adds({t}, {t}, {f(1.0)}, {n});", f"AscendC::Sqrt({t}, {t}, {n});", f"AscendC::Mul({dst}, {t}, {m}, {n});"]
        L += self._where_value(m, "EQ", 0.0, m, dst, mask, n, "fp32", "m = 0: 0")
        L += self._where_value(ax, "EQ", math.inf, ax, dst, mask, n, "fp32", "|a| = inf: inf")
        L += self._where_value(ay, "EQ", math.inf, ay, dst, mask, n, "fp32", "|b| = inf: inf")
        return L

    def _negative_lines(self, v: str, r: str, mask: str, src: str, dst: str, n) -> list:
        """dst = src where v is negative or -0 (v < 0, or 1 / v < 0), else dst unchanged."""
        f = lambda x: lit(x, "fp32")  # noqa: E731
        return [f"AscendC::CompareScalar({mask}, {v}, {f(0.0)}, AscendC::CMPMODE::LT, {n});",
                f"AscendC::Select({dst}, {mask}, {src}, {dst}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});",
                f"AscendC::Reciprocal({r}, {v}, {n});",
                f"AscendC::CompareScalar({mask}, {r}, {f(0.0)}, AscendC::CMPMODE::LT, {n});  // 1 / -0 = -inf",
                f"AscendC::Select({dst}, {mask}, {src}, {dst}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});"]

    def _atan2(self, i, y: str, x: str, dst: str, n, cm: str) -> list:
        """atan2(y, x) from Atan on [0, 1]: a = atan(min(|x|, |y|) / max(|x|, |y|)), then pi/2 - a where
        |y| > |x|, pi - a where x is negative (or -0), and the sign of y (or -0): C99's special values
        (both zero: q = 0; both infinite: q = 1)."""
        ax, ay, q, v = (self.scratch_ref(i, j, "fp32") for j in range(4))
        mask = self.scratch_ref(i, 4, "bool")
        f = lambda c: lit(c, "fp32")  # noqa: E731
        L = [f"AscendC::Abs({ax}, {x}, {n});{cm} (atan of min/max on [0, 1], then the octant)",
             f"AscendC::Abs({ay}, {y}, {n});", f"AscendC::Min({q}, {ax}, {ay}, {n});", f"AscendC::Max({v}, {ax}, {ay}, {n});",
             f"AscendC::CompareScalar({mask}, {q}, {f(math.inf)}, AscendC::CMPMODE::NE, {n});",
             f"AscendC::Div({q}, {q}, {v}, {n});",
             f"AscendC::Select({q}, {mask}, {q}, {f(1.0)}, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});  // both inf: 1",
             f"AscendC::CompareScalar({mask}, {v}, {f(0.0)}, AscendC::CMPMODE::NE, {n});",
             f"AscendC::Select({q}, {mask}, {q}, {f(0.0)}, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});  // both 0: 0",
             f"AscendC::Atan({dst}, {q}, work.Get<uint8_t>(), {n});",
             f"AscendC::Muls({v}, {dst}, {f(-1.0)}, {n});", f"AscendC::Adds({v}, {v}, {f(math.pi / 2)}, {n});",
             f"AscendC::Compare({mask}, {ay}, {ax}, AscendC::CMPMODE::GT, {n});",
             f"AscendC::Select({dst}, {mask}, {v}, {dst}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});  // pi/2 - a",
             f"AscendC::Muls({v}, {dst}, {f(-1.0)}, {n});", f"AscendC::Adds({v}, {v}, {f(math.pi)}, {n});  // pi - a"]
        L += self._negative_lines(x, q, mask, v, dst, n)
        L += [f"AscendC::Muls({v}, {dst}, {f(-1.0)}, {n});  // the sign of y"]
        return L + self._negative_lines(y, q, mask, v, dst, n)

    def _cbrt(self, i, x: str, dst: str, n, cm: str) -> list:
        """cbrt(x): y = exp(ln|x| / 3), one Newton step y = (2y + |x| / y^2) / 3, the sign of x;
        0, +-inf and NaN are |x| itself with that sign (cbrt(-0) = -0)."""
        a, y, t = (self.scratch_ref(i, j, "fp32") for j in range(3))
        mask = self.scratch_ref(i, 3, "bool")
        f = lambda c: lit(c, "fp32")  # noqa: E731
        L = [f"AscendC::Abs({a}, {x}, {n});{cm} (exp(ln|x| / 3) and a Newton step)", f"AscendC::Ln({y}, {a}, {n});",
             f"AscendC::Muls({y}, {y}, {f(1 / 3)}, {n});", f"AscendC::Exp({y}, {y}, {n});",
             f"AscendC::Mul({t}, {y}, {y}, {n});", f"AscendC::Div({t}, {a}, {t}, {n});",
             f"AscendC::Muls({y}, {y}, {f(2.0)}, {n});", f"AscendC::Add({y}, {y}, {t}, {n});",
             f"AscendC::Duplicate({t}, {f(3.0)}, {n});", f"AscendC::Div({y}, {y}, {t}, {n});"]
        L += self._where_value(a, "EQ", 0.0, a, y, mask, n, "fp32", "0")
        L += self._where_value(a, "EQ", math.inf, a, y, mask, n, "fp32", "inf")
        L += [f"AscendC::DataCopy({dst}, {y}, {n});", f"AscendC::Muls({y}, {y}, {f(-1.0)}, {n});  // the sign of x"]
        return L + self._negative_lines(x, t, mask, y, dst, n)

    def _softmax(self, i, op, x, dst: str, out: list, cm: str) -> list:
        """softmax along the last axis, row by row, as pypto composes it: m = max, e = exp(x - m), e / sum(e)
        (a row holding NaN, or +inf, or only -inf is NaN)."""
        rank = len(op.types[0].shape) if op.types else 2
        dim = op.attr("dim", -1)
        if not isinstance(dim, int) or dim % max(rank, 1) != rank - 1:
            unsupported(f"'softmax' along axis {dim!r} (the last axis, or the rows of a 2-D value)", op.span)
        if x[0] != "t" or self.kind(x[1]) != "F":
            unsupported("'softmax' of a broadcast value", op.span)
        src = x[1]
        m, w, cp = self.scratch_ref(i, 0, "fp32"), self.work("fp32"), self.cpad
        srow, drow, vc = f"{self.ref(src)}[r * {cp}]", f"{dst}[r * {cp}]", self.vc[src]
        sync = ["AscendC::SetFlag<AscendC::HardEvent::V_S>(0);", "AscendC::WaitFlag<AscendC::HardEvent::V_S>(0);"]
        body = [f"AscendC::ReduceMax({m}, {srow}, {w}, {vc});{cm} (max, exp(x - max), / sum)"] + sync + [
                f"const float mx = {m}.GetValue(0);",
                f"AscendC::Adds({drow}, {srow}, static_cast<float>(-mx), {cp});",
                f"AscendC::Exp({drow}, {drow}, {cp});",
                f"AscendC::ReduceSum({m}[8], {drow}, {w}, {vc});"] + sync + [
                f"AscendC::Duplicate({w}, {m}.GetValue(8), {cp});",
                f"AscendC::Div({drow}, {drow}, {w}, {cp});",
                "AscendC::SetFlag<AscendC::HardEvent::S_V>(0);", "AscendC::WaitFlag<AscendC::HardEvent::S_V>(0);"]
        self._rows(out, body, f"{self.tr}u")
        return out

    def _alpha(self, i, code: str, a: str, b: str, alpha: float, res: str, dst: str, n, cm: str) -> list:
        """a + alpha * b (sub: a - alpha * b) rounded once, as the interpreter computes it: Axpy into
        a copy of a (fp16: both widened to fp32 first, as every fp16 op); integers Muls and Add."""
        dt = self.s.dtype[res]
        if dt == "int32":
            scr = self.scratch_ref(i, 0, dt)
            return [f"AscendC::Muls({scr}, {self.ref(b)}, {lit(alpha, dt)}, {n});{cm} (alpha)",
                    f"AscendC::{BINARY[code]}({dst}, {self.ref(a)}, {scr}, {n});"]
        k = lit((1 if code == "add" else -1) * _in_dtype(alpha, dt), "fp32" if dt == "fp16" else dt)
        what = "a + alpha * b" if code == "add" else "a - alpha * b"
        if dt == "fp16":
            wa, wb = self.scratch_ref(i, 0, "fp32"), self.scratch_ref(i, 1, "fp32")
            m = self._fp32_count(res)
            return [f"AscendC::Cast({wa}, {self.ref(a)}, AscendC::RoundMode::CAST_NONE, {m});{cm} ({what} in fp32)",
                    f"AscendC::Cast({wb}, {self.ref(b)}, AscendC::RoundMode::CAST_NONE, {m});",
                    f"AscendC::Axpy({wa}, {wb}, {k}, {m});",
                    f"AscendC::Cast({dst}, {wa}, AscendC::RoundMode::CAST_RINT, {m});  // rounded to fp16 once"]
        scr = self.scratch_ref(i, 0, dt)  # not dst: dst may be b's buffer
        return [f"AscendC::DataCopy({scr}, {self.ref(a)}, {n});{cm} ({what}, one rounding)",
                f"AscendC::Axpy({scr}, {self.ref(b)}, {k}, {n});", f"AscendC::DataCopy({dst}, {scr}, {n});"]

    def _fp32_count(self, key: str) -> int:
        """Elements of an fp16 value's tile, in 256-byte steps of fp32 (for its widened copy)."""
        rows = self.tr if self.kind(key) in ("F", "R") else 1
        return -(-rows * self.stride(key, "fp16") // 64) * 64

    @staticmethod
    def _where_value(v: str, mode: str, s: float, a: str, b: str, mask: str, n, dt: str, note: str) -> list:
        """b = (v <mode> s) ? a : b."""
        return [f"AscendC::CompareScalar({mask}, {v}, {lit(s, dt)}, AscendC::CMPMODE::{mode}, {n});",
                f"AscendC::Select({b}, {mask}, {a}, {b}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});  // {note}"]

    def _pow(self, i, p: float, x: str, dst: str, dt: str, n, cm: str) -> list:
        """x ** p for a scalar p, as torch computes it: exact special cases, else exp(p * ln|x|)
        with the sign and the zeros, infinities and NaN that pow gives (C99 / torch)."""
        kind = _pow_kind(p)
        if kind == "one":
            return [f"AscendC::Duplicate({dst}, {lit(1, dt)}, {n});{cm} (x ** 0 is 1, NaN too)"]
        single = {"copy": "DataCopy({dst}, {x}, {n})", "square": "Mul({dst}, {x}, {x}, {n})",
                  "sqrt": "Sqrt({dst}, {x}, {n})", "recip": "Reciprocal({dst}, {x}, {n})",
                  "rsqrt": "Rsqrt({dst}, {x}, {n})"}
        if kind in single:
            return ["AscendC::" + single[kind].format(dst=dst, x=x, n=n) + f";{cm}"]
        if kind == "inv_square":  # 1 / (x * x)
            return [f"AscendC::Mul({dst}, {x}, {x}, {n});{cm}", f"AscendC::Reciprocal({dst}, {dst}, {n});"]
        t = self.scratch_ref(i, 0, dt)
        if kind == "cube":
            return [f"AscendC::Mul({t}, {x}, {x}, {n});{cm}", f"AscendC::Mul({dst}, {t}, {x}, {n});"]

        def power_of_abs(target: str, q: float) -> list:  # |x| ** q
            return [f"AscendC::Abs({target}, {x}, {n});", f"AscendC::Ln({target}, {target}, {n});",
                    f"AscendC::Muls({target}, {target}, {lit(q, dt)}, {n});", f"AscendC::Exp({target}, {target}, {n});"]
        def noted(lines: list, note: str) -> list:
            return [lines[0] + f"{cm} ({note})"] + lines[1:]
        if kind == "even":  # |x| ** p: the sign of x does not matter
            return noted(power_of_abs(dst, p), f"|x| ** {p!r}")
        if kind == "odd":  # x * |x| ** (|p| - 1), and its reciprocal for p < 0: the sign, -0 and -inf right
            lines = power_of_abs(t, abs(p) - 1) + [f"AscendC::Mul({dst}, {x}, {t}, {n});"]
            lines += [f"AscendC::Reciprocal({dst}, {dst}, {n});"] if p < 0 else []
            return noted(lines, f"x * |x| ** {abs(p) - 1!r}{', reciprocal' if p < 0 else ''}")
        # a non-integer p: exp(p * ln x) is NaN for x < 0 as pow is, but pow(-inf, p) is +inf / +0
        mask = self.scratch_ref(i, 0, "bool")
        return [f"AscendC::CompareScalar({mask}, {x}, {lit(-math.inf, dt)}, AscendC::CMPMODE::NE, {n});{cm}",
                f"AscendC::Ln({dst}, {x}, {n});", f"AscendC::Muls({dst}, {dst}, {lit(p, dt)}, {n});",
                f"AscendC::Exp({dst}, {dst}, {n});",
                f"AscendC::Select({dst}, {mask}, {dst}, {lit(math.inf if p > 0 else 0.0, dt)}, "
                f"AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});  // x = -inf"]

    def _saturates(self, op, sdt: str, dt: str) -> bool:
        try:
            return saturates((sdt, dt), op.attr("satmode"))
        except ValueError as exc:
            raise EmitError(f"cast: {exc}", op.span) from None

    def _saturating_fp16(self, op) -> bool:
        """An fp32 -> fp16 (or bf16) cast with saturation (pypto's default for the pair): the A2 Cast
        turns a finite overflow into inf (IEEE, the device's default Inf/NaN mode), so the kernel clamps."""
        if op.opcode != "cast" or not isinstance(op.operands[0], ir.Value):
            return False
        sdt, dt = self.s.dtype[op.operands[0].name], self.s.dtype[op.results[0]]
        return (sdt, dt) in (("fp32", "fp16"), ("fp32", "bf16")) and self._saturates(op, sdt, dt)

    def _clamp_to_fp16(self, i: int, src: str, out: list, cm: str) -> str:
        """Finite values of ``src`` clamped to +-65504 (bf16: +-BF16_MAX) in a scratch slot (+-inf and
        NaN kept, as the interpreter's saturation does); returns the slot."""
        n = self.count(src)
        t, mask = self.scratch_ref(i, 0, "fp32"), self.scratch_ref(i, 1, "bool")
        x = self.ref(src)
        target = self.s.dtype[self.s.ops[i].results[0]]
        limit = BF16_MAX if target == "bf16" else 65504.0
        big = lit(limit, "fp32")
        out += [f"        AscendC::Abs({t}, {x}, {n});{cm}: saturate finite values to the {target} range",
                f"        AscendC::CompareScalar({mask}, {t}, {lit(math.inf, 'fp32')}, AscendC::CMPMODE::EQ, {n});",
                f"        AscendC::Maxs({t}, {x}, {lit(-limit, 'fp32')}, {n});",
                f"        AscendC::Mins({t}, {t}, {big}, {n});",
                f"        AscendC::Select({t}, {mask}, {x}, {t}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});  // +-inf kept"]
        return t

    def _reduce(self, i, op, src, res, dt, out, cm):
        code, span = op.opcode, op.span
        sk = self.kind(src)
        rk = self.kind(res)
        if sk == "F" and rk == "C" and code in REDUCE:  # over the rows: one core, accumulated per tile
            if dt == "bf16":
                unsupported(f"'{code}' over the rows on bf16 (an fp32 accumulator across tiles)", span)
            acc = self.ref(res)
            init = {"sum": "0.0", "amax": "-__builtin_inff()", "amin": "__builtin_inff()"}[code]
            fn = {"sum": "Add", "amax": "Max", "amin": "Min"}[code]
            ct = CTYPE[dt]
            out.append(f"        if (r0 == 0) AscendC::Duplicate({acc}, static_cast<{ct}>({init}), {self.cpad});{cm}")
            self._rows(out, [f"AscendC::{fn}({acc}, {acc}, {self.ref(src)}[r * {self.cpad}], {self.cpad});"],
                       self.vr.get(src) or "nr")  # the valid rows only: the rest of the tile holds no data
            return out
        if sk == rk and code in REDUCE:  # along an axis of one element: the value itself (a sum from +0)
            return self._reduce_one(code, src, res, dt, out, cm)
        if sk != "F" or rk != "R":
            unsupported(f"'{code}' other than along the last axis of a full value", span)
        if i in self.raccs:
            return self._reduce_columns(i, code, src, res, dt, out, cm)
        dst = self.ref(res)
        rs = self.stride("R", dt)
        vc = self.vc[src]
        srow = f"{self.ref(src)}[r * {self.cpad}]"
        if code == "prod":
            ct = CTYPE[dt]
            self._vs_sync(out)
            body = [f"float p = 1.0f;{cm} (scalar loop: no product reduction in the vector API)",
                    f"for (uint32_t j = 0; j < {vc}; ++j) p *= static_cast<float>({srow}.GetValue(j));",
                    f"{dst}.SetValue(r * {rs}, static_cast<{ct}>(p));"]
            self._rows(out, body, f"{self.tr}u")
            self._sv_sync(out)
            return out
        fn = REDUCE[code]
        if dt == "fp32":
            self._rows(out, [f"AscendC::{fn}({dst}[r * {rs}], {srow}, work.Get<float>(), {vc});{cm}"], f"{self.tr}u")
            return out
        if dt in ("fp16", "bf16"):  # reduce in fp32: widen the row, reduce, narrow the result
            w = "work.Get<float>()"
            body = [f"AscendC::Cast({w}, {srow}, AscendC::RoundMode::CAST_NONE, {vc});{cm} (in fp32)",
                    f"AscendC::{fn}({w}[{self.cpad}], {w}, {w}[{self.cpad}], {vc});",
                    f"AscendC::Cast({dst}[r * {rs}], {w}[{self.cpad}], AscendC::RoundMode::CAST_RINT, 1);"]
            self._rows(out, body, f"{self.tr}u")
            return out
        unsupported(f"'{code}' on {dt}", span)

    def _reduce_one(self, code, src, res, dt, out, cm):
        """A reduction along an axis of extent 1 (a [1, 1] value summed over its rows): amax / amin
        copy the value, a sum adds it to +0 (-0 becomes +0, as torch's sum and the interpreter's)."""
        dst, x, n = self.ref(res), self.ref(src), self.count(res)
        if code != "sum":
            out.append(f"        AscendC::DataCopy({dst}, {x}, {n});{cm} (one element)")
        elif dt == "bf16":  # no bf16 arithmetic on A2: in fp32 (exact), back to bf16 (exact)
            w = self.work("fp32")
            out += [f"        AscendC::Cast({w}, {x}, AscendC::RoundMode::CAST_NONE, {n});{cm} (one element, from +0)",
                    f"        AscendC::Adds({w}, {w}, 0.0f, {n});",
                    f"        AscendC::Cast({dst}, {w}, AscendC::RoundMode::CAST_RINT, {n});"]
        else:
            out.append(f"        AscendC::Adds({dst}, {x}, {lit(0, dt)}, {n});{cm} (one element, from +0)")
        return out

    def _reduce_columns(self, i, code, src, res, dt, out, cm):
        """A reduction along rows that span several column tiles (design.md section 26): each tile
        reduces its valid columns of each row (fp16/bf16 widened to fp32) and folds that into the
        row's running fp32 value, which starts at the fold's identity at the row's first column
        tile; the result is the running value (rounded once to fp16/bf16), complete at the row's last
        column tile, where it is stored."""
        fn = REDUCE[code]
        fold = {"sum": "Add", "amax": "Max", "amin": "Min"}[code]
        init = {"sum": "0.0f", "amax": "-__builtin_inff()", "amin": "__builtin_inff()"}[code]
        acc, w, rs, cp = f"racc{i}.Get<float>()", "work.Get<float>()", self.stride("R", "fp32"), self.cpad
        srow = f"{self.ref(src)}[r * {cp}]"
        out.append(f"        if (c0 == 0) AscendC::Duplicate({acc}, {init}, {self.tr * rs});{cm} (over column tiles)")
        out.append(f"        const uint32_t vcc{i} = {self.vc[src]} > c0 ? PyptoMin({self.vc[src]} - c0, nc) : 0u;"
                   "  // this tile's valid columns")
        if dt == "fp32":
            body = [f"AscendC::{fn}({w}[{cp}], {srow}, {w}, vcc{i});"]
        else:  # widen the row's part, reduce it in fp32
            body = [f"AscendC::Cast({w}, {srow}, AscendC::RoundMode::CAST_NONE, vcc{i});",
                    f"AscendC::{fn}({w}[{cp}], {w}, {w}[{cp}], vcc{i});"]
        body.append(f"AscendC::{fold}({acc}[r * {rs}], {acc}[r * {rs}], {w}[{cp}], 1);")
        out.append(f"        if (vcc{i} > 0) {{")
        self._rows(out, body, f"{self.tr}u")
        out.append("        }")
        dst = self.ref(res)
        if dt == "fp32":
            out.append(f"        AscendC::DataCopy({dst}, {acc}, {self.tr * rs});")
        else:
            self._rows(out, [f"AscendC::Cast({dst}[r * {self.stride('R', dt)}], {acc}[r * {rs}], "
                             "AscendC::RoundMode::CAST_RINT, 1);"], f"{self.tr}u")
        return out

    def _composed(self, i, op, ops, res, dt, dst, n, out, cm, x=None):
        code, span = op.opcode, op.span
        src_dt = self.s.dtype.get(ops[0][1]) if x is None and ops else None
        if code in ("exp2", "expm1") and src_dt in _INT_TO_FP32:
            # an integer input gives an fp32 result (the op page): widened into the result's tile first
            if code == "expm1":
                unsupported(f"'expm1' on {src_dt}", span)
            src = self.ref(ops[0][1])
            if src_dt in ("int8", "uint8"):  # A2 casts 8-bit integers to half only; half holds them exactly
                h = self.scratch_ref(i, 0, "fp16")
                out += [f"        AscendC::Cast({h}, {src}, AscendC::RoundMode::CAST_NONE, {n});{cm} ({src_dt} -> fp32)",
                        f"        AscendC::Cast({dst}, {h}, AscendC::RoundMode::CAST_NONE, {n});"]
            else:
                out.append(f"        AscendC::Cast({dst}, {src}, AscendC::RoundMode::{_INT_TO_FP32[src_dt]}, {n});"
                           f"{cm} ({src_dt} -> fp32)")
            return self._composed(i, op, ops, res, dt, dst, n, out, cm, x=dst)
        if x is None and self._widened(op):  # in fp32: widen into a scratch slot, compute there, round once
            w = self.scratch_ref(i, self._op_scratch(op), "fp32")
            n32 = self._fp32_count(res)
            out.append(f"        AscendC::Cast({w}, {self.ref(ops[0][1])}, AscendC::RoundMode::CAST_NONE, {n32});{cm} (in fp32)")
            self._composed(i, op, ops, res, "fp32", w, n32, out, cm, x=w)
            out.append(f"        AscendC::Cast({dst}, {w}, AscendC::RoundMode::CAST_RINT, {n32});  // rounded to fp16 once")
            return out
        x = x or self.ref(ops[0][1])
        L = []
        if code == "neg":
            L.append(f"AscendC::Muls({dst}, {x}, {lit(-1, dt, span)}, {n});{cm}")
        elif code == "sigmoid":  # 1 / (1 + exp(-x))
            t = self.scratch_ref(i, 0, dt)
            one = self.scratch_ref(i, 1, dt)
            L += [f"AscendC::Muls({t}, {x}, {lit(-1, dt, span)}, {n});{cm}", f"AscendC::Exp({t}, {t}, {n});",
                  f"AscendC::Adds({t}, {t}, {lit(1, dt, span)}, {n});",
                  f"AscendC::Duplicate({one}, {lit(1, dt, span)}, {n});", f"AscendC::Div({dst}, {one}, {t}, {n});"]
        elif code in ("sin", "cos"):
            if dt != "fp32":
                unsupported(f"'{code}' on {dt}", span)
            L += self._sin_cos(i, code, x, dst, n, cm)
        elif code == "exp2":
            L += [f"AscendC::Muls({dst}, {x}, {lit(math.log(2.0), dt, span)}, {n});{cm}", f"AscendC::Exp({dst}, {dst}, {n});"]
        elif code == "expm1":  # Kahan: (u - 1) / ln(u) * x with u = e^x keeps the digits e^x - 1 loses near 0
            u, t, l = (self.scratch_ref(i, j, dt) for j in range(3))
            mask = self.scratch_ref(i, 3, "bool")
            L += [f"AscendC::Exp({u}, {x}, {n});{cm} (Kahan's expm1)", f"AscendC::Adds({t}, {u}, {lit(-1, dt)}, {n});",
                  f"AscendC::Ln({l}, {u}, {n});", f"AscendC::Div({t}, {t}, {l}, {n});", f"AscendC::Mul({t}, {t}, {x}, {n});"]
            L += self._where_value(u, "EQ", 1.0, x, t, mask, n, dt, "u = 1: x (and -0)")
            L += self._where_value(u, "EQ", math.inf, u, t, mask, n, dt, "u = inf: inf")
            # u <= 2^-25: u - 1 rounds to -1, and so does e^x - 1 (ln u of a denormal u is not x)
            L += [f"AscendC::Duplicate({l}, {lit(-1, dt)}, {n});",
                  f"AscendC::CompareScalar({mask}, {u}, {lit(2.0 ** -25, dt)}, AscendC::CMPMODE::LE, {n});",
                  f"AscendC::Select({dst}, {mask}, {l}, {t}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});  // -1"]
        elif code in ("log2", "log10"):
            k = 1.0 / math.log(2.0 if code == "log2" else 10.0)
            L += [f"AscendC::Ln({dst}, {x}, {n});{cm}", f"AscendC::Muls({dst}, {dst}, {lit(k, dt, span)}, {n});"]
        elif code == "log1p":  # Kahan: ln(u) / (u - 1) * x with u = 1 + x keeps the digits 1 + x rounds off
            u, t, d = (self.scratch_ref(i, j, dt) for j in range(3))
            mask = self.scratch_ref(i, 3, "bool")
            L += [f"AscendC::Adds({u}, {x}, {lit(1, dt)}, {n});{cm} (Kahan's log1p)", f"AscendC::Ln({t}, {u}, {n});",
                  f"AscendC::Adds({d}, {u}, {lit(-1, dt)}, {n});", f"AscendC::Div({t}, {t}, {d}, {n});",
                  f"AscendC::Mul({t}, {t}, {x}, {n});"]
            L += self._where_value(u, "EQ", 1.0, x, t, mask, n, dt, "u = 1: x (and -0)")
            L += [f"AscendC::CompareScalar({mask}, {u}, {lit(math.inf, dt)}, AscendC::CMPMODE::NE, {n});",
                  f"AscendC::Select({dst}, {mask}, {t}, {lit(math.inf, dt)}, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});  // u = inf: inf"]
        elif code == "lrelu":
            alpha = op.attr("negative_slope", op.attr("alpha"))
            if alpha is None:
                scal = [v for v in op.operands[1:] if _is_scalar(v)]
                alpha = _sval(scal[0]) if scal else 0.01
            # x >= 0 ? x : slope * x (one rounding; keeps -0 and NaN as the interpreter does)
            t, mask = self.scratch_ref(i, 0, dt), self.scratch_ref(i, 1, "bool")
            L += [f"AscendC::CompareScalar({mask}, {x}, {lit(0, dt, span)}, AscendC::CMPMODE::GE, {n});{cm}",
                  f"AscendC::Muls({t}, {x}, {lit(alpha, dt, span)}, {n});",
                  f"AscendC::Select({dst}, {mask}, {x}, {t}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});"]
        elif code == "clip":
            lo, hi = (op.operands + (None, None))[1:3]
            lo = op.attr("min", lo)
            hi = op.attr("max", hi)
            src = x
            first = True
            for bound, fn in ((lo, "Maxs"), (hi, "Mins")):
                if bound is None or (isinstance(bound, ir.Const) and bound.value is None):
                    continue
                if not _is_scalar(bound):
                    unsupported("'clip' with tensor bounds", span)
                L.append(f"AscendC::{fn}({dst}, {src}, {lit(_sval(bound), dt, span)}, {n});" + (cm if first else ""))
                src, first = dst, False
            if first:
                L.append(f"AscendC::DataCopy({dst}, {x}, {n});{cm}")
        elif code == "sign":  # (x > 0) - (x < 0) with Compare/Select
            if dt not in ("fp32", "fp16"):
                unsupported(f"'sign' on {dt}", span)
            one = self.scratch_ref(i, 0, dt)
            neg = self.scratch_ref(i, 1, dt)
            mask = self.scratch_ref(i, 2, "bool")
            L += [f"AscendC::Duplicate({one}, {lit(1, dt, span)}, {n});{cm}",
                  f"AscendC::CompareScalar({mask}, {x}, {lit(0, dt, span)}, AscendC::CMPMODE::GT, {n});",
                  f"AscendC::Select({dst}, {mask}, {one}, {lit(0, dt, span)}, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});",
                  f"AscendC::Duplicate({one}, {lit(-1, dt, span)}, {n});",
                  f"AscendC::CompareScalar({mask}, {x}, {lit(0, dt, span)}, AscendC::CMPMODE::LT, {n});",
                  f"AscendC::Select({neg}, {mask}, {one}, {lit(0, dt, span)}, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});",
                  f"AscendC::Add({dst}, {dst}, {neg}, {n});"]
        elif code == "pow":
            L += self._pow(i, _pow_exponent(op, self.s.dtype[res]), x, dst, dt, n, cm)
        else:
            unsupported(f"op '{code}'", span)
        out.extend("        " + s for s in L)
        return out
