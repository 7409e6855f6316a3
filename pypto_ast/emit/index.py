"""Kernels for indexing, sorting and scans: argmax/argmin, argsort, topk, gather, scatter,
scatter_update, one_hot, cumsum and cumprod (docs/design.md §10).

Each op is one kernel of its own, GM in and GM out, launched in the block's order like the
transpose and matmul kernels: these ops need a whole axis in UB (pypto does not tile the axis
they run along), their iteration differs from the elementwise segments', and several read
what another core's tile would hold.  A kernel works on *units*, which cores take round-robin:

* along the last axis, a unit is a row of the 2-D flattening ``[rows, cols]``;
* along another axis ``dim``, a unit is a group: the ``n * m`` rows of the flattening that one
  index of the axes before ``dim`` spans (``n`` = the axis, ``m`` = the rows of the axes between
  it and the last), kept in UB as ``n`` super-rows of ``m * cpad`` elements, so one vector op
  covers every column of the group.

The A2 API does each op where it has one (ReduceMax/ReduceMin with calIndex, Compare/Select,
Sort + Extract, Gather, CumSum, Add/Mul along the rows); where it has none, a scalar loop over
UB does it (scatter's element writes: A2 has no Scatter; int64 scans: no int64 Add; cumprod
along the last axis; one_hot's ones), said at the call.  Index values outside their axis are
refused with ``ascendc_assert``, with the interpreter's message.

A result whose only use is the next ``assemble`` into a named tensor is written there directly
(the assemble's region check stays), which also carries the int64 results (one_hot, integer
cumsum) that the vector copy kernels do not read; otherwise it goes to a GM workspace.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

from .. import ir
from . import gm
from .errors import unsupported
from .gm import GVal

OPS = frozenset({"argmax", "argmin", "argsort", "topk", "topk_indices", "gather", "scatter", "scatter_update",
                 "one_hot", "cumsum", "cumprod", "gather_in_ub"})
CTYPE = {"fp32": "float", "fp16": "half", "bf16": "bfloat16_t", "int8": "int8_t", "uint8": "uint8_t",
         "int16": "int16_t", "int32": "int32_t", "int64": "int64_t"}
ES = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8}
FLOATS = ("fp32", "fp16")  # what Compare / Select / ReduceMax / Sort take on A2
MAX_CORES = 40
MAX_SORT = 255 * 32  # Sort / Extract: repeatTime <= 255 runs of 32
MAX_BLOCKS = 4095  # DataCopyPad blockCount


def _cpad(n: int, dt: str) -> int:
    """n elements rounded up to a whole 32-byte block."""
    a = 32 // ES[dt]
    return -(-n // a) * a


def _vec(n: int, dt: str = "fp32") -> int:
    """n elements rounded up to 256 bytes of ``dt`` (Compare's count rule), at least 128 elements
    so masks of half and float compares cover each other."""
    per = 256 // ES[dt]
    return max(128, -(-n // per) * per)


def _bytes(n: int) -> int:
    return -(-n // 32) * 32


@dataclass
class IndexLaunch:
    """One kernel of this module in a block's launch order: its inputs and its output, in GM."""

    name: str
    text: str
    info: dict
    regions: list  # GVal inputs..., output last
    span: object
    label: str

    @property
    def stores(self) -> list:
        return [self.regions[-1]]

    def launch(self, planner, scope: set, depth: int):
        """Checked like every kernel's sizes; the tiling is each region's offset, valid rows,
        valid columns and buffer size."""
        sizes = [(f"rows of @{g.buf.name}", g.rows) for g in self.regions] + \
            [(f"columns of @{g.buf.name}", g.cols) for g in self.regions]
        planner._check_extents(self.regions, self.span, sizes)
        fields = []
        for g in self.regions:
            fields += [planner.cexpr(x, scope, self.span) for x in (g.offset, g.vr, g.vc, g.buf.numel)]
        planner._launch_fixed(self.name, self.text, self.info, self.regions, fields, self.label, scope, depth,
                              self.span)


# ---------------------------------------------------------------------------------------------
# Planning: operands, the result's region, the launch.


class IndexPlanner:
    """The index ops of one compute block (``ascendc._BlockPlanner`` hands them over)."""

    def __init__(self, block):
        self.B = block
        self.absorbed: set = set()  # ids of assemble ops whose store a kernel of ours does itself

    def absorbs(self, op) -> bool:
        return id(op) in self.absorbed

    def op(self, op):
        if self.absorbs(op):
            return
        if op.opcode in ("argmax", "argmin"):
            self._argext(op)
        elif op.opcode in ("argsort", "topk", "topk_indices"):
            self._sort(op)
        elif op.opcode == "gather":
            self._gather(op)
        elif op.opcode == "scatter":
            self._scatter(op)
        elif op.opcode == "scatter_update":
            self._scatter_update(op)
        elif op.opcode == "gather_in_ub":
            self._gather_in_ub(op)
        elif op.opcode == "one_hot":
            self._one_hot(op)
        else:
            self._scan(op)

    # -- operands and results --------------------------------------------------------------
    def _input(self, op, k: int, what: str, dtypes=tuple(CTYPE)) -> GVal:
        x = op.operands[k]
        if not isinstance(x, (ir.Value, ir.TensorRef)):
            unsupported(f"'{op.opcode}' with a {what} that is not a tensor", op.span)
        g = self.B.gval_of(x, op.span)
        if g.rows < 0:
            unsupported(f"'{op.opcode}' of a dynamically shaped {what}", op.span)
        if g.outer:  # rows in several levels of stride: read a compact copy
            g = self.B.compact(g, op.span)
        if g.dtype not in dtypes:
            unsupported(f"'{op.opcode}' on {g.dtype} (its {what})", op.span)
        return g

    def _shape(self, op) -> tuple:
        return gm.static_dims(op.types[0].shape, op.span, "shape")

    def _result(self, op, vr, vc, inputs: list) -> GVal:
        """The GVal the kernel writes: the region of the next assemble of the result when that is
        its only use (and nothing in between touches the target), else a new workspace."""
        res = op.results[0]
        shape = self._shape(op)
        dt = op.types[0].dtype
        rows, cols = gm.flat2(shape)
        target = self._sole_store(op, res, inputs)
        if target is not None:
            store, buf = target
            offsets = tuple(store.attr("offsets"))
            region = gm.view(gm.whole(buf, op.span), offsets, shape, None, op.span, True)
        if target is not None and region.outer:  # several levels of row stride: via a workspace
            target = None
        if target is not None:
            self.B._check_region(gm.ASSEMBLE, f"@{buf.name}", offsets, shape, gm.valid_dims(vr, vc, shape), buf.shape,
                                 store.span)
            region.vr, region.vc = gm.emin(region.vr, vr), gm.emin(region.vc, vc)
            self.absorbed.add(id(store))
            self.B.env[res] = region
            return region
        buf = self.B.P.new_ws(dt, shape, res in self.B.P.returned)
        g = GVal(buf, gm.C(0), rows, cols, cols, vr, vc, dt, shape)
        self.B.env[res] = g
        self.B._ir_shape[res] = shape
        return g

    def _sole_store(self, op, res: str, inputs: list):
        """(assemble op, target buffer) when ``res`` is used once, by an assemble into a named
        tensor of its dtype that no input reads and no op between the two touches."""
        if self.B.used_later(res):
            return None
        ops = self.B.ops  # the block's ops as planned (emit/axes.py may have rewritten some)
        at = next(i for i, o in enumerate(ops) if o is op)
        uses = [(i, o) for i, o in enumerate(ops) if i > at and any(_names(x, res) for x in o.operands)]
        if len(uses) != 1:
            return None
        i, store = uses[0]
        if store.opcode != "assemble" or store.operands[0] != ir.Value(res) or \
                not isinstance(store.operands[1], ir.TensorRef):
            return None
        buf = self.B.P.named.get(store.operands[1].name)
        if buf is None or buf.dtype != op.types[0].dtype or any(g.buf.name == buf.name for g in inputs):
            return None
        if any(_touches(o, buf.name, self.B.env) for o in ops[at + 1:i]):
            return None
        return store, buf

    def _launch(self, op, kernel: "_Kernel", inputs: list, out: GVal, num_blocks: int):
        self.B.close()  # after the vector kernels before it, in program order
        text, info = kernel.text(num_blocks)
        self.B.done.append(IndexLaunch(kernel.name, text, info, inputs + [out], op.span,
                                       f"{self.B.block.name} %{op.results[0]} = {op.opcode}"))

    def _kernel(self, op, regions: list) -> "_Kernel":
        self.B.nseg += 1
        name = f"{self.B.P.p.name}_{self.B.block.name}_ix{self.B.nseg}"
        line = f", line {op.span.line}" if op.span else ""
        return _Kernel(name, f"{self.B.block.name}: %{op.results[0]} = {op.opcode}{line}", regions)

    # -- the axis ----------------------------------------------------------------------------
    def _axis(self, op, g: GVal, dim: int, what: str = "input") -> tuple:
        """(groups, n, m) of ``g`` for an op along ``dim``: ``groups`` groups of ``n`` super-rows of
        ``m`` rows each; m = 0 along the last axis (a unit is a row)."""
        shape = g.shape
        rank = len(shape)
        if dim == rank - 1:
            return 0, shape[-1], 0
        groups, n, m = math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:-1])
        if (groups > 1 or m > 1) and gm.const(g.vr) != g.rows:
            unsupported(f"'{op.opcode}' along dim {dim} of a partially valid rank-{rank} {what}", op.span)
        if n * m > MAX_BLOCKS:
            unsupported(f"'{op.opcode}' along an axis of {n} x {m} rows (a DataCopyPad moves at most {MAX_BLOCKS})",
                        op.span)
        return groups, n, m

    # -- argmax / argmin ---------------------------------------------------------------------
    def _argext(self, op):
        x = self._input(op, 0, "input", FLOATS)
        dim = op.attr("dim")
        groups, n, m = self._axis(op, x, dim)
        K = self._kernel(op, [x])
        largest = op.opcode == "argmax"
        if not m:  # along the last axis: ReduceMax / ReduceMin with calIndex, a row at a time
            if x.dtype == "fp16" and x.cols > 65535:
                unsupported(f"'{op.opcode}' of fp16 rows of {x.cols} elements (ReduceMax returns a half's index "
                            "in 16 bits)", op.span)
            out = self._result(op, *self._unit_valid(op, x, 1), [x])
            K.regions.append(out)
            _argext_rows(K, x, out, largest)
            self._launch(op, K, [x], out, min(x.rows, MAX_CORES))
            return
        out = self._result(op, gm.C(groups * m), x.vc, [x])
        K.regions.append(out)
        _argext_cols(K, x, out, groups, n, m, largest)
        self._launch(op, K, [x], out, min(groups, MAX_CORES))

    def _unit_valid(self, op, x: GVal, per_unit: int) -> tuple:
        """The result's (vr, vc), in its own 2-D form, for ``per_unit`` values per input row: a row
        each, one row holding them all (a rank-1 result), or a whole fully valid result."""
        rows, cols = gm.flat2(self._shape(op))
        if cols == per_unit:
            return x.vr, gm.C(per_unit)
        if rows == 1:
            return gm.C(1), x.vr
        if gm.const(x.vr) != x.rows:
            unsupported(f"'{op.opcode}' of a partially valid rank-{len(x.shape)} input without keepdim", op.span)
        return gm.C(rows), gm.C(cols)

    # -- argsort / topk ----------------------------------------------------------------------
    def _sort(self, op):
        x = self._input(op, 0, "input", FLOATS)
        dim = op.attr("dim")
        if dim != len(x.shape) - 1:
            unsupported(f"'{op.opcode}' along dim {dim}, not the last", op.span)
        if x.cols > MAX_SORT:
            unsupported(f"'{op.opcode}' of rows of {x.cols} elements (Sort sorts at most {MAX_SORT} in UB; longer rows "
                        "need a merge in GM)", op.span)
        k = op.attr("k")
        out = self._result(op, x.vr, x.vc if k is None else gm.C(k), [x])
        descending = bool(op.attr("descending", False) if k is None else op.attr("largest", True))
        K = self._kernel(op, [x, out])
        _sort_rows(K, x, out, descending, k, op.opcode == "topk", dim, op.span)
        self._launch(op, K, [x], out, min(x.rows, MAX_CORES))

    # -- gather ------------------------------------------------------------------------------
    def _gather(self, op):
        x = self._input(op, 0, "input")
        idx = self._input(op, 1, "index", ("int32", "int64"))
        dim = op.attr("dim")
        if x.dtype not in ("fp32", "fp16", "bf16", "int16", "int32"):
            unsupported(f"'gather' of {x.dtype}", op.span)
        _same_layout(op, x, idx, dim, "index")
        groups, n, m = self._axis(op, x, dim)
        self._axis(op, idx, dim, "index")
        K = self._kernel(op, [x, idx])
        if not m:
            out = self._result(op, gm.emin(idx.vr, x.vr), idx.vc, [x, idx])
            K.regions.append(out)
            _gather_rows(K, x, idx, out, dim)
            self._launch(op, K, [x, idx], out, min(idx.rows, MAX_CORES))
            return
        out = self._result(op, idx.vr, gm.emin(idx.vc, x.vc), [x, idx])
        K.regions.append(out)
        _gather_cols(K, x, idx, out, groups, n, idx.shape[dim], m, dim)
        self._launch(op, K, [x, idx], out, min(groups, MAX_CORES))

    # -- scatter -----------------------------------------------------------------------------
    def _scatter(self, op):
        x = self._input(op, 0, "input")
        idx = self._input(op, 1, "index", ("int32", "int64"))
        src = op.operands[2] if len(op.operands) > 2 else None
        srcg = self._input(op, 2, "src") if isinstance(src, (ir.Value, ir.TensorRef)) else None
        if srcg is None and not isinstance(src, ir.Const):
            unsupported("'scatter' with a src that is neither a tensor nor a constant", op.span)
        dim = op.attr("dim")
        rank = len(x.shape)
        _same_layout(op, x, idx, dim, "index")
        if srcg is not None:
            _same_layout(op, srcg, idx, None, "src")
        for g in [idx] + ([srcg] if srcg is not None else []):
            if rank > 2 and gm.const(g.vr) != g.rows:
                unsupported(f"'scatter' with a partially valid rank-{rank} operand", op.span)
        groups = math.prod(x.shape[:dim]) if dim < rank - 1 else x.rows
        inputs = [x, idx] + ([srcg] if srcg is not None else [])
        out = self._result(op, x.vr, x.vc, inputs)
        K = self._kernel(op, inputs + [out])
        _scatter(K, x, idx, srcg, None if srcg is not None else src.value, out, dim, op.attr("reduce"), op.span)
        self._launch(op, K, inputs, out, min(groups, MAX_CORES))

    def _scatter_update(self, op):
        x = self._input(op, 0, "input", ("fp32", "fp16", "bf16", "int32", "int16"))
        idx = self._input(op, 1, "index", ("int64", "int32", "int16"))
        src = self._input(op, 2, "src", ("fp32", "fp16", "bf16", "int32", "int16"))
        if len(idx.shape) != 2:
            unsupported(f"'scatter_update' with a rank-{len(idx.shape)} index", op.span)
        if idx.rows * idx.cols > src.rows:
            unsupported("'scatter_update' with fewer src rows than index entries", op.span)
        out = self._result(op, x.vr, x.vc, [x, idx, src])
        K = self._kernel(op, [x, idx, src, out])
        _scatter_update(K, x, idx, src, out)
        self._launch(op, K, [x, idx, src], out, 1)

    def _gather_in_ub(self, op):
        """The rows of a paged cache through a block table (docs/semantics.md, gather_in_ub): the
        source is the GM tensor the param view reads, at the view's origin, whatever its rows."""
        src = op.operands[0]
        buf = self.B.P.named.get(src.name) if isinstance(src, ir.TensorRef) else None
        row0, col0 = op.attr("offsets")
        cols = op.attr("cols")
        whole = gm.whole(buf, op.span) if buf is not None else None
        if whole is None or not gm.static_ld(whole) or not isinstance(col0, int) or not isinstance(cols, int):
            unsupported("'gather_in_ub' of a tensor with a dynamic last dimension or column offset", op.span)
        if buf.dtype not in ("fp32", "fp16", "bf16", "int8", "int16", "int32"):
            unsupported(f"'gather_in_ub' of {buf.dtype}", op.span)
        cache = GVal(buf, gm.add(gm.mul(row0, whole.ld), col0), whole.rows, cols, whole.ld, whole.vr, gm.C(cols),
                     buf.dtype, (whole.rows, cols))
        idx = self._input(op, 1, "indices", ("int32", "int64"))
        table = self._input(op, 2, "block table", ("int32", "int64"))
        out = self._result(op, idx.vc, gm.C(cols), [cache, idx, table])
        K = self._kernel(op, [cache, idx, table, out])
        _gather_in_ub(K, cache, idx, table, out, int(op.attr("block_size")), col0)
        self._launch(op, K, [cache, idx, table], out, 1)

    # -- one_hot -------------------------------------------------------------------------------
    def _one_hot(self, op):
        x = self._input(op, 0, "input", ("int8", "int16", "int32", "int64"))
        n = op.attr("num_classes")
        if len(x.shape) > 1 and gm.const(x.vc) != x.cols:
            unsupported("'one_hot' of a value partially valid along its last axis", op.span)
        vr = gm.mul(x.vr, gm.C(x.cols)) if len(x.shape) > 1 else x.vc
        out = self._result(op, vr, gm.C(n), [x])
        K = self._kernel(op, [x, out])
        _one_hot(K, x, out, n)
        self._launch(op, K, [x], out, min(x.rows, MAX_CORES))

    # -- cumsum / cumprod ----------------------------------------------------------------------
    def _scan(self, op):
        x = self._input(op, 0, "input", ("fp32", "fp16", "int16", "int32"))
        dim = op.attr("dim")
        groups, n, m = self._axis(op, x, dim)
        out = self._result(op, x.vr, x.vc, [x])
        K = self._kernel(op, [x, out])
        _scan(K, x, out, groups, n, m, op.opcode == "cumprod")
        self._launch(op, K, [x], out, min(groups if m else x.rows, MAX_CORES))


def _names(x, name: str) -> bool:
    if isinstance(x, tuple):
        return any(_names(y, name) for y in x)
    return isinstance(x, ir.Value) and x.name == name


def _touches(op, buf: str, env: dict) -> bool:
    """Whether ``op`` reads or writes the named tensor ``buf``: a view of it, an assemble into it, or
    a value that lives in it (``env``: the block's GM values)."""
    def refs(x):
        if isinstance(x, tuple):
            return any(refs(y) for y in x)
        if isinstance(x, ir.Value):
            g = env.get(x.name)
            return isinstance(g, GVal) and g.buf.name == buf
        return isinstance(x, ir.TensorRef) and x.name == buf
    return refs(op.operands)


def _same_layout(op, x: GVal, other: GVal, dim, what: str):
    """Rank-3+ operands pair up group by group only when their axes other than ``dim`` and the last
    agree (rank 2: any shapes the op page allows)."""
    if len(other.shape) != len(x.shape):
        unsupported(f"'{op.opcode}' with a {what} of another rank", op.span)
    if len(x.shape) > 2 and any(a != b for k, (a, b) in enumerate(zip(x.shape[:-1], other.shape[:-1])) if k != dim):
        unsupported(f"'{op.opcode}' with a rank-{len(x.shape)} {what} whose leading dims differ from the input's",
                    op.span)


# ---------------------------------------------------------------------------------------------
# Kernel text.


@dataclass
class _Kernel:
    """A single-function kernel over GM regions ``t0..`` (tiling: per region its element
    offset, valid rows, valid columns and buffer size) with TBufs in UB and manual syncs."""

    name: str
    label: str
    regions: list
    body: list = field(default_factory=list)
    buffers: list = field(default_factory=list)  # (name, bytes)
    ops: list = field(default_factory=list)  # the Ascend C calls the kernel makes, for its info

    def buf(self, name: str, nbytes: int):
        self.buffers.append((name, _bytes(nbytes)))

    def local(self, buf: str, dt: str, name: str = None) -> str:
        """A declaration of ``name`` (default ``buf``) as the whole of TBuf ``b_<buf>`` in ``dt``."""
        return f"AscendC::LocalTensor<{CTYPE[dt]}> {name or buf} = b_{buf}.Get<{CTYPE[dt]}>();"

    def ub_bytes(self) -> int:
        return sum(n for _, n in self.buffers)

    def text(self, num_blocks: int) -> tuple:
        L = [f"// Generated by pypto-ast from {self.label}.", '#include "kernel_operator.h"', "",
             f'extern "C" __global__ __aicore__ void {self.name}('
             + ", ".join(f"GM_ADDR t{k}" for k in range(len(self.regions))) + ", GM_ADDR tiling)", "{",
             "    AscendC::TPipe pipe;",
             "    const __gm__ int64_t* tl = (__gm__ int64_t*)tiling;"]
        for k, g in enumerate(self.regions):
            ct = CTYPE[g.dtype]
            L += [f"    AscendC::GlobalTensor<{ct}> g{k};  // @{g.buf.name} [{g.rows}, {g.cols}] ld {g.ld}",
                  f"    g{k}.SetGlobalBuffer((__gm__ {ct}*)t{k}, static_cast<uint64_t>(tl[{4 * k + 3}]));",
                  f"    const uint64_t off{k} = static_cast<uint64_t>(tl[{4 * k}]);",
                  f"    const uint32_t vr{k} = static_cast<uint32_t>(tl[{4 * k + 1}]), vc{k} = static_cast<uint32_t>(tl[{4 * k + 2}]);",
                  f"    (void)vr{k}; (void)vc{k};"]
        for name, nbytes in self.buffers:
            L += [f"    AscendC::TBuf<AscendC::TPosition::VECCALC> b_{name};", f"    pipe.InitBuffer(b_{name}, {nbytes});"]
        L += ["    " + x if x else "" for x in self.body]
        L.append("}")
        calls = sorted({c for c in self.ops})
        info = {"kernel": self.name, "kind": "index", "file": f"{self.name}.cpp", "num_blocks": max(1, num_blocks),
                "ub_bytes": self.ub_bytes(), "api": calls}
        return "\n".join(L) + "\n", info

    # -- pieces --------------------------------------------------------------------------------
    def sync(self, event: str, into: list):
        into += [f"AscendC::SetFlag<AscendC::HardEvent::{event}>(0);", f"AscendC::WaitFlag<AscendC::HardEvent::{event}>(0);"]

    def call(self, api: str, args: str, note: str = "", template: str = "") -> str:
        self.ops.append(api)
        return f"AscendC::{api}{template}({args});" + (f"  // {note}" if note else "")

    def copy_in(self, k: int, local: str, row0: str, nrows: str, cols: str, ub_row: int, pad: str = "",
                at: str = "") -> str:
        """DataCopyPad of ``nrows`` rows of ``cols`` elements (C++ expressions) of region k from
        its row ``row0`` (or from the element ``at`` of its buffer) into ``local``, whose rows are
        ``ub_row`` elements apart."""
        g = self.regions[k]
        es, ct = ES[g.dtype], CTYPE[g.dtype]
        src = f"g{k}[{at}]" if at else f"g{k}[off{k} + static_cast<uint64_t>({row0}) * {g.ld}u]"
        length = f"static_cast<uint32_t>({cols}) * {es}u"
        params = (f"AscendC::DataCopyExtParams{{static_cast<uint16_t>({nrows}), {length}, {g.ld * es}u - {length}, "
                  f"static_cast<uint32_t>(({ub_row * es}u - ({length} + 31u) / 32u * 32u) / 32u), 0}}")
        self.ops.append("DataCopyPad")
        return (f"{_guard(nrows, cols)}AscendC::DataCopyPad({local}, {src}, {params}, "
                f"AscendC::DataCopyPadExtParams<{ct}>{{{pad or f'false, 0, 0, static_cast<{ct}>(0)'}}});")

    def copy_out(self, k: int, local: str, row0: str, nrows: str, cols: str, ub_row: int, at: str = "") -> str:
        """DataCopyPad of ``nrows`` rows of ``cols`` elements from ``local`` (rows ``ub_row`` apart)
        to region k's row ``row0`` (or to the element offset ``at`` of it)."""
        g = self.regions[k]
        es = ES[g.dtype]
        dst = f"g{k}[off{k} + {at or f'static_cast<uint64_t>({row0}) * {g.ld}u'}]"
        length = f"static_cast<uint32_t>({cols}) * {es}u"
        params = (f"AscendC::DataCopyExtParams{{static_cast<uint16_t>({nrows}), {length}, "
                  f"static_cast<uint32_t>(({ub_row * es}u - ({length} + 31u) / 32u * 32u) / 32u), {g.ld * es}u - {length}, 0}}")
        self.ops.append("DataCopyPad")
        return f"{_guard(nrows, cols)}AscendC::DataCopyPad({dst}, {local}, {params});"

    def units(self, count: str, body: list, ind: int = 0) -> list:
        """``for`` over the units this core takes (round-robin over the blocks)."""
        return [f"for (uint32_t u = static_cast<uint32_t>(AscendC::GetBlockIdx()); u < {count}; "
                "u += static_cast<uint32_t>(AscendC::GetBlockNum())) {"] + ["    " + b for b in body] + ["}"]


def _guard(*counts: str) -> str:
    """``if (...) `` for the counts that are not constants (a DMA of 0 rows or bytes is skipped)."""
    live = [c for c in counts if not c.rstrip("u").isdigit()]
    return f"if ({' && '.join(f'{c} > 0' for c in live)}) " if live else ""


def _unit_out(K: _Kernel, k: int, per_unit: int, span=None) -> str:
    """The element offset (C++, from the region's start) of unit u's ``per_unit`` results in
    region k: row u of a [units, per_unit] region, or u * per_unit of a contiguous one."""
    g = K.regions[k]
    if g.cols == per_unit:
        return f"static_cast<uint64_t>(u) * {g.ld}u"
    if g.rows == 1 or g.ld == g.cols:
        return f"static_cast<uint64_t>(u) * {per_unit}u"
    unsupported("an index result stored into a strided region of another shape", span)


def _argext_rows(K: _Kernel, x: GVal, out: GVal, largest: bool):
    """argmax / argmin of each row: -0 made +0 (Adds 0: torch counts them equal, ReduceMax orders
    -0 below +0), then ReduceMax / ReduceMin with calIndex (the first index of the extreme; a NaN
    counts as the extreme, docs/semantics.md), the index read as the raw integer of dst[1]."""
    dt = x.dtype
    cp = _cpad(x.cols, dt)
    red = "ReduceMax" if largest else "ReduceMin"
    K.buf("x", cp * ES[dt])
    K.buf("work", max(cp * ES[dt], 64))
    K.buf("r", 32)
    K.buf("o", 32)
    bits = "uint32_t" if dt == "fp32" else "uint16_t"
    oat = _unit_out(K, 1, 1)
    body = [K.local("x", dt), K.local("work", dt), K.local("r", dt), K.local("o", "int32")]
    loop = [f'ascendc_assert(vc0 > 0, "{"argmax" if largest else "argmin"} over an empty valid region");',
            K.copy_in(0, "x", "u", "1", "vc0", cp)]
    K.sync("MTE2_V", loop)
    loop += [K.call("Adds", f"x, x, static_cast<{CTYPE[dt]}>(0.0f), static_cast<int32_t>(vc0)", "-0 -> +0"),
             K.call(red, "r, x, work, static_cast<int32_t>(vc0), true", "value, then the index's bits")]
    K.sync("V_S", loop)
    loop.append(f"o.SetValue(0, static_cast<int32_t>(r.ReinterpretCast<{bits}>().GetValue(1)));")
    K.sync("S_MTE3", loop)
    loop.append(K.copy_out(1, "o", "u", "1", "1", 8, at=f"{oat}"))
    K.sync("MTE3_MTE2", loop)
    K.sync("MTE3_S", loop)
    K.body += body + K.units("vr0", loop)


def _argext_cols(K: _Kernel, x: GVal, out: GVal, groups: int, n: int, m: int, largest: bool):
    """argmax / argmin along an axis that is not the last: the n super-rows of a group folded one
    after the other with Compare / Select on every column at once, the index kept in fp32 (exact
    below 2^24; Select has no int32 on A2).  A row replaces the best one where it is greater
    (less), or where it is NaN and the best is not: the first extreme, a NaN counting as one."""
    dt = x.dtype
    ct = CTYPE[dt]
    cp = _cpad(x.cols, dt)
    L = m * cp
    V = _vec(L, dt)
    es = ES[dt]
    K.buf("x", max(n * L * es, V * es) + V * es)
    K.buf("best", V * es)
    K.buf("t", V * es)
    K.buf("idx", V * 4)
    K.buf("rv", V * 4)
    K.buf("oi", V * 4)
    for name in ("ok", "gt", "nan"):
        K.buf(name, V // 8)
    mode = "GT" if largest else "LT"
    nvalid = "vr0" if groups == 1 and m == 1 else f"{n}u"  # valid rows: only a 2-D value is partial
    body = [K.local("x", dt), K.local("best", dt), K.local("t", dt), K.local("idx", "fp32"), K.local("rv", "fp32"),
            K.local("oi", "int32")] + [f"AscendC::LocalTensor<uint8_t> {b} = b_{b}.Get<uint8_t>();" for b in ("ok", "gt", "nan")]
    sel = "AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE"
    loop = [f'ascendc_assert({nvalid} > 0, "{"argmax" if largest else "argmin"} over an empty valid region");',
            K.copy_in(0, "x", f"u * {n * m}u", f"{nvalid} * {m}u" if m > 1 else nvalid, "vc0", cp)]
    K.sync("MTE2_V", loop)
    loop += [K.call("DataCopy", f"best, x, {V}", "row 0 is the best so far"),
             K.call("Duplicate", f"idx, 0.0f, {V}")]
    step = [K.call("Compare", f"ok, best, best, AscendC::CMPMODE::EQ, {V}", "the best is not NaN"),
            K.call("Select", f"t, ok, x[r * {L}u], static_cast<{ct}>(0.0f), AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {V}"),
            K.call("Compare", f"nan, t, t, AscendC::CMPMODE::NE, {V}", "row r is NaN where the best is not"),
            K.call("Compare", f"gt, x[r * {L}u], best, AscendC::CMPMODE::{mode}, {V}"),
            K.call("Select", f"best, gt, x[r * {L}u], best, {sel}, {V}"),
            K.call("Select", f"best, nan, x[r * {L}u], best, {sel}, {V}"),
            K.call("Duplicate", f"rv, static_cast<float>(r), {V}"),
            K.call("Select", f"idx, gt, rv, idx, {sel}, {V}"),
            K.call("Select", f"idx, nan, rv, idx, {sel}, {V}")]
    loop += [f"for (uint32_t r = 1; r < {nvalid}; ++r) {{"] + ["    " + s for s in step] + ["}"]
    loop.append(K.call("Cast", f"oi, idx, AscendC::RoundMode::CAST_RINT, {V}", "exact: indices < 2^24"))
    K.sync("V_MTE3", loop)
    loop.append(K.copy_out(1, "oi", f"u * {m}u", f"{m}u", "vc0", cp))
    K.sync("MTE3_MTE2", loop)
    K.sync("MTE3_V", loop)
    K.body += body + K.units(f"{groups}u", loop)


def _sort_rows(K: _Kernel, x: GVal, out: GVal, descending: bool, k, values: bool, dim: int, span):
    """argsort / topk of each row with Sort (descending, equal scores in input order) + Extract.
    The row sits after 32 elements of -inf in UB and is padded with -inf to whole runs of 32, so
    the padding sorts last.  Ascending: the row is reversed first (Gather), sorted descending,
    and the result reversed back with each index i mapped to vc - 1 - i, which keeps equal values
    in input order and NaN last (docs/semantics.md)."""
    dt = x.dtype
    ct = CTYPE[dt]
    es = ES[dt]
    np_ = -(-x.cols // 32) * 32
    buffers = [("x", (32 + np_) * es, dt), ("iota", np_ * 4, "int32"), ("sorted", np_ * 8, dt), ("tmp", np_ * 8, dt),
               ("v", np_ * es, dt), ("si", np_ * 4, "int32")]
    if not descending:  # the reversed row, the Gather offsets, the reversed result
        buffers += [("y", np_ * es, dt), ("off", np_ * 4, "int32"), ("ri", np_ * 4, "int32")] + \
            ([("rv", np_ * es, dt)] if values else [])
    body = []
    for name, nbytes, bdt in buffers:
        K.buf(name, nbytes)
        body.append(K.local(name, bdt))
    body.append("const uint32_t a = 32u / sizeof(" + ct + ");")
    count = "vc0" if k is None else f"{k}u"
    loop = []
    if k is not None:
        loop.append(f'ascendc_assert({k}u <= vc0, "topk: k = %d is outside [1, %d], the valid extent of dim %d", '
                    f"{k}, static_cast<int>(vc0), {dim});")
    loop += ["const uint32_t n32 = (vc0 + 31u) / 32u * 32u;",
             K.call("Duplicate", f"x, static_cast<{ct}>(-__builtin_inff()), static_cast<int32_t>(32u + n32)", "padding sorts last")]
    K.sync("V_MTE2", loop)
    loop.append(K.copy_in(0, "x[32]", "u", "1", "vc0", np_,
                          pad=f"true, 0, static_cast<uint8_t>((a - vc0 % a) % a), static_cast<{ct}>(-__builtin_inff())"))
    K.sync("MTE2_V", loop)
    src = "x[32]"
    if not descending:
        loop += [K.call("CreateVecIndex", "off, 0, n32"), K.call("Muls", f"off, off, -{es}, static_cast<int32_t>(n32)"),
                 K.call("Adds", f"off, off, static_cast<int32_t>((32u + vc0 - 1u) * {es}u), static_cast<int32_t>(n32)"),
                 K.call("Gather", "y, x, off.ReinterpretCast<uint32_t>(), 0, n32", "y = the row reversed, -inf after it")]
        src = "y"
    loop += [K.call("CreateVecIndex", "iota, 0, n32"),
             K.call("Sort", f"sorted, {src}, iota.ReinterpretCast<uint32_t>(), tmp, static_cast<int32_t>(n32 / 32u)",
                    template=f"<{ct}, true>"),
             K.call("Extract", "v, si.ReinterpretCast<uint32_t>(), sorted, static_cast<int32_t>(n32 / 32u)")]
    result, rvals = "si", "v"
    if not descending:
        loop += [K.call("CreateVecIndex", f"off, 0, {count}"), K.call("Muls", f"off, off, -4, static_cast<int32_t>({count})"),
                 K.call("Adds", f"off, off, static_cast<int32_t>((vc0 - 1u) * 4u), static_cast<int32_t>({count})"),
                 K.call("Gather", f"ri.ReinterpretCast<uint32_t>(), si.ReinterpretCast<uint32_t>(), "
                                  f"off.ReinterpretCast<uint32_t>(), 0, {count}", "back in ascending order"),
                 K.call("Muls", f"ri, ri, -1, static_cast<int32_t>({count})"),
                 K.call("Adds", f"ri, ri, static_cast<int32_t>(vc0 - 1u), static_cast<int32_t>({count})",
                        "the position in the row")]
        result = "ri"
        if values:
            if es != 4:
                unsupported(f"'topk' of {dt}", span)
            loop.append(K.call("Gather", f"rv, v, off.ReinterpretCast<uint32_t>(), 0, {count}"))
            rvals = "rv"
    K.sync("V_MTE3", loop)
    loop.append(K.copy_out(1, rvals if values else result, "u", "1", count, np_))
    K.sync("MTE3_V", loop)
    K.body += body + K.units("vr0", loop)


def _index_check(K: _Kernel, idx: str, n: str, count: str, into: list, dim: int, op: str = "gather"):
    """ascendc_assert that the ``count`` int32 indices of ``idx`` lie in [0, n): their extremes by
    ReduceMin / ReduceMax on a float copy (exact below 2^24; beyond, still outside)."""
    into += [K.call("Cast", f"fi, {idx}, AscendC::RoundMode::CAST_NONE, {count}"),
             K.call("ReduceMin", f"lo, fi, fw, static_cast<int32_t>({count})"),
             K.call("ReduceMax", f"hi, fi, fw, static_cast<int32_t>({count})")]
    K.sync("V_S", into)
    into.append(f'ascendc_assert({count} == 0 || (lo.GetValue(0) >= 0.0f && hi.GetValue(0) < static_cast<float>({n})), '
                f'"{op}: an index along dim %d is outside [0, %d)", {dim}, static_cast<int>({n}));')


def _index_buffers(K: _Kernel, np_: int):
    for name, nbytes in (("fi", np_ * 4), ("fw", np_ * 4), ("lo", 32), ("hi", 32)):
        K.buf(name, nbytes)
    return [K.local("fi", "fp32"), K.local("fw", "fp32"), K.local("lo", "fp32"), K.local("hi", "fp32")]


def _to_int32(K: _Kernel, idx: GVal, raw: str, i32: str, count: str, into: list):
    """int64 indices narrowed to int32 (Cast int64 -> int32: values past int32 saturate, so they
    stay outside any axis)."""
    if idx.dtype == "int64":
        into.append(K.call("Cast", f"{i32}, {raw}, AscendC::RoundMode::CAST_NONE, {count}"))


def _gather_rows(K: _Kernel, x: GVal, idx: GVal, out: GVal, dim: int):
    """gather along the last axis: per row, byte offsets index * sizeof(T) into the input row."""
    dt = x.dtype
    es = ES[dt]
    cpx, cpi = _cpad(x.cols, dt), _cpad(idx.cols, "int32")
    K.buf("x", cpx * es)
    K.buf("iraw", cpi * ES[idx.dtype])
    K.buf("i", cpi * 4)
    K.buf("o", _cpad(idx.cols, dt) * es)
    body = [K.local("x", dt), K.local("iraw", idx.dtype), K.local("i", "int32"), K.local("o", dt)] + _index_buffers(K, cpi)
    loop = [K.copy_in(0, "x", "u", "1", "vc0", cpx), K.copy_in(1, "iraw" if idx.dtype == "int64" else "i", "u", "1", "vc1", cpi)]
    K.sync("MTE2_V", loop)
    _to_int32(K, idx, "iraw", "i", "vc1", loop)
    _index_check(K, "i", "vc0", "vc1", loop, dim)
    loop += [K.call("Muls", f"i, i, {es}, static_cast<int32_t>(vc1)", "byte offsets"),
             K.call("Gather", "o, x, i.ReinterpretCast<uint32_t>(), 0, vc1")]
    K.sync("V_MTE3", loop)
    loop.append(K.copy_out(2, "o", "u", "1", "vc1", _cpad(idx.cols, dt)))
    K.sync("MTE3_MTE2", loop)
    K.sync("MTE3_V", loop)
    K.body += body + K.units("(vr0 < vr1 ? vr0 : vr1)", loop)


def _gather_cols(K: _Kernel, x: GVal, idx: GVal, out: GVal, groups: int, n: int, ni: int, m: int, dim: int):
    """gather along an axis that is not the last: the group's input super-rows in UB, and for each
    index row the byte offsets (index * m + t) * row + column, one Gather per index row."""
    dt = x.dtype
    es = ES[dt]
    cpx, cpi = _cpad(x.cols, dt), _cpad(idx.cols, "int32")
    K.buf("x", n * m * cpx * es)
    K.buf("iraw", cpi * ES[idx.dtype])
    K.buf("i", cpi * 4)
    K.buf("col", cpi * 4)
    K.buf("o", _cpad(idx.cols, dt) * es)
    body = [K.local("x", dt), K.local("iraw", idx.dtype), K.local("i", "int32"), K.local("col", "int32"),
            K.local("o", dt)] + _index_buffers(K, cpi)
    nvalid = "vr0" if groups == 1 and m == 1 else f"{n}u"
    body += [K.call("CreateVecIndex", f"col, 0, {cpi}"), K.call("Muls", f"col, col, {es}, {cpi}", "column byte offsets")]
    rows = "vr1" if groups == 1 and m == 1 else f"{ni * m}u"
    cols = "(vc1 < vc0 ? vc1 : vc0)"
    loop = [K.copy_in(0, "x", f"u * {n * m}u", f"{nvalid} * {m}u" if m > 1 else nvalid, "vc0", cpx)]
    inner = [K.copy_in(1, "iraw" if idx.dtype == "int64" else "i", f"u * {ni * m}u + r", "1", cols, cpi)]
    K.sync("MTE2_V", inner)
    _to_int32(K, idx, "iraw", "i", cols, inner)
    _index_check(K, "i", nvalid, cols, inner, dim)
    inner += [K.call("Muls", f"i, i, {m * cpx * es}, static_cast<int32_t>({cols})"),
              K.call("Adds", f"i, i, static_cast<int32_t>((r % {m}u) * {cpx * es}u), static_cast<int32_t>({cols})"),
              K.call("Add", f"i, i, col, static_cast<int32_t>({cols})"),
              K.call("Gather", f"o, x, i.ReinterpretCast<uint32_t>(), 0, {cols}")]
    K.sync("V_MTE3", inner)
    inner.append(K.copy_out(2, "o", f"u * {ni * m}u + r", "1", cols, _cpad(idx.cols, dt)))
    K.sync("MTE3_MTE2", inner)
    K.sync("MTE3_V", inner)
    loop += [f"for (uint32_t r = 0; r < {rows}; ++r) {{"] + ["    " + s for s in inner] + ["}"]
    K.body += body + K.units(f"{groups}u", loop)


def _scatter(K: _Kernel, x: GVal, idx: GVal, src, value, out: GVal, dim: int, reduce, span):
    """scatter: the group's input in UB, then one scalar write per index element, in row-major
    order (increasing along dim: a repeated position keeps the last value, or combines in that
    order); A2 has no Scatter instruction.  The result is stored whole."""
    dt = x.dtype
    ct = CTYPE[dt]
    rank = len(x.shape)
    last = dim == rank - 1
    n = x.shape[dim]
    m = 1 if last else math.prod(x.shape[dim + 1:-1])
    cpx, cpi = _cpad(x.cols, dt), _cpad(idx.cols, idx.dtype)
    xrows = 1 if last else n * m
    irows = 1 if last else idx.shape[dim] * m
    K.buf("x", xrows * cpx * ES[dt])
    K.buf("i", irows * cpi * ES[idx.dtype])
    body = [K.local("x", dt), K.local("i", idx.dtype)]
    if src is not None:
        cps = _cpad(src.cols, dt)
        K.buf("s", irows * cps * ES[dt])
        body.append(K.local("s", dt))
    two = rank <= 2  # rank 3+: fully valid operands (checked when planned)
    xr = "1u" if last else ("vr0" if two else f"{xrows}u")
    ir_ = "(u < vr1 ? 1u : 0u)" if last else ("vr1" if two else f"{irows}u")  # last axis: x may have more rows
    loop = [K.copy_in(0, "x", "u" if last else f"u * {xrows}u", xr, "vc0", cpx),
            K.copy_in(1, "i", "u" if last else f"u * {irows}u", ir_, "vc1", cpi)]
    if src is not None:
        loop.append(K.copy_in(2, "s", "u" if last else f"u * {irows}u", ir_, "vc1", cps))
    if two:  # the index's valid region against the input's and src's (the interpreter's messages)
        dims = "[%d]" if rank == 1 else "[%d, %d]"
        iv = "static_cast<int>(vc1)" if rank == 1 else "static_cast<int>(vr1), static_cast<int>(vc1)"
        xv = "static_cast<int>(vc0)" if rank == 1 else "static_cast<int>(vr0), static_cast<int>(vc0)"
        off = "true" if rank == 1 else ("vc1 <= vc0" if dim == 0 else "vr1 <= vr0")  # the axes other than dim
        loop.append(f'ascendc_assert({off}, "scatter: the index\'s valid extent {dims} exceeds the input\'s {dims} '
                    f'off dim {dim}", {iv}, {xv});')
        if src is not None:
            sv = "static_cast<int>(vc2)" if rank == 1 else "static_cast<int>(vr2), static_cast<int>(vc2)"
            ok = "vc1 <= vc2" if rank == 1 else "vr1 <= vr2 && vc1 <= vc2"
            loop.append(f'ascendc_assert({ok}, "scatter: the index\'s valid extent {dims} exceeds src\'s {dims}", '
                        f"{iv}, {sv});")
    K.sync("MTE2_S", loop)
    nax = "vc0" if last else ("vr0" if two else f"{n}u")
    if reduce is None:
        combine = "v"
    else:
        op = "+" if reduce == "add" else "*"
        wide = "float" if dt in ("fp16", "bf16") else ct
        combine = f"static_cast<{ct}>(static_cast<{wide}>(x.GetValue(p)) {op} static_cast<{wide}>(v))"
    if src is None:  # the Element rule: the scalar in the tensor's dtype (fp16: rounded from the double once)
        if dt in ("fp32", "fp16", "bf16"):
            fmt = {"fp32": "<f", "fp16": "<e", "bf16": "<f"}[dt]
            scalar = struct.unpack(fmt, struct.pack(fmt, float(value)))[0]
            lit = f"static_cast<{ct}>({scalar!r}f)" if dt != "fp32" else f"{scalar!r}f"
        else:
            lit = f"static_cast<{ct}>({int(value)})"
        fetch = f"const {ct} v = {lit};"
    else:
        fetch = f"const {ct} v = s.GetValue(r * {cps}u + j);"
    pos = ("static_cast<uint32_t>(k)" if last else
           f"(static_cast<uint32_t>(k) * {m}u + r % {m}u) * {cpx}u + j")
    rows = ir_
    walk = [f"for (uint32_t r = 0; r < {rows}; ++r) {{  // the index's rows: scalar writes (no Scatter on A2)",
            "    for (uint32_t j = 0; j < vc1; ++j) {",
            f"        const int64_t k = static_cast<int64_t>(i.GetValue(r * {cpi}u + j));",
            f'        ascendc_assert(k >= 0 && k < static_cast<int64_t>({nax}), "scatter: an index along dim %d is outside [0, %d)", '
            f"{dim}, static_cast<int>({nax}));",
            f"        const uint32_t p = {pos};",
            f"        {fetch}",
            f"        x.SetValue(p, {combine});",
            "    }", "}"]
    loop += walk
    K.sync("S_MTE3", loop)
    loop.append(K.copy_out(3 if src is not None else 2, "x", "u" if last else f"u * {xrows}u", xr, "vc0", cpx))
    K.sync("MTE3_MTE2", loop)
    K.sync("MTE3_S", loop)
    K.ops += ["GetValue", "SetValue"]
    units = "vr0" if last else f"{math.prod(x.shape[:dim])}u"
    K.body += body + K.units(units, loop)


def _scatter_update(K: _Kernel, x: GVal, idx: GVal, src: GVal, out: GVal):
    """scatter_update: the input copied to the result a row at a time, then each index entry's src
    row DMAed to the result row it names (GM to UB to GM), in row-major order on one core."""
    dt = x.dtype
    cp = _cpad(x.cols, dt)
    cpi = _cpad(idx.cols, idx.dtype)
    K.buf("row", cp * ES[dt])
    K.buf("i", idx.rows * cpi * ES[idx.dtype])
    body = [K.local("row", dt), K.local("i", idx.dtype)]
    copy = [K.copy_in(0, "row", "r", "1", "vc0", cp)]
    K.sync("MTE2_MTE3", copy)
    copy.append(K.copy_out(3, "row", "r", "1", "vc0", cp))
    K.sync("MTE3_MTE2", copy)
    body += ["if (AscendC::GetBlockIdx() == 0) {"]
    # the input and src whole (the interpreter's rule, checked per launch); the index's valid entries
    full = " && ".join(f"vr{k} == {g.rows}u && vc{k} == {g.cols}u" for k, g in ((0, x), (2, src))
                       if gm.const(g.vr) != g.rows or gm.const(g.vc) != g.cols)
    inner = [f'ascendc_assert({full}, "scatter_update: the input and src must be fully valid");'] if full else []
    inner += [f"for (uint32_t r = 0; r < {x.rows}u; ++r) {{"] + ["    " + c for c in copy] + ["}",
              "AscendC::PipeBarrier<PIPE_MTE3>();  // the copy lands before the updated rows",
              K.copy_in(1, "i", "0", "vr1", "vc1", cpi)]
    K.sync("MTE2_S", inner)
    upd = [f"const int64_t t = static_cast<int64_t>(i.GetValue(e / {idx.cols}u * {cpi}u + e % {idx.cols}u));",
           f'ascendc_assert(t >= 0 && t < {x.rows}, "scatter_update: an index is outside [0, %d)", {x.rows});',
           K.copy_in(2, "row", "e", "1", "vc2", cp)]
    K.sync("MTE2_MTE3", upd)
    upd.append(K.copy_out(3, "row", "static_cast<uint32_t>(t)", "1", "vc0", cp))
    upd.append("AscendC::PipeBarrier<PIPE_MTE3>();  // a repeated row keeps the last entry")
    K.sync("MTE3_MTE2", upd)
    inner += [f"for (uint32_t e = 0; e < vr1 * {idx.cols}u; ++e) {{",
              f"    if (e % {idx.cols}u >= vc1) continue;  // past the index's valid columns"] + \
        ["    " + s for s in upd] + ["}"]
    K.ops.append("GetValue")
    K.body += body + ["    " + s for s in inner] + ["}"]


def _gather_in_ub(K: _Kernel, cache: GVal, idx: GVal, table: GVal, out: GVal, block: int, col0: int):
    """gather_in_ub on one core: the indices and the block table into UB, then per valid index j
    its cache row (the view's origin + (table[t // block] * block + t % block) rows, ``ld`` apart)
    DMAed GM -> UB -> GM into row j; the interpreter's checks and messages (the row bounded by the
    tensor: element offsets within the buffer)."""
    dt, ld = cache.dtype, cache.ld
    cp, cpi, cpt = _cpad(cache.cols, dt), _cpad(idx.cols, idx.dtype), _cpad(table.cols, table.dtype)
    K.buf("row", cp * ES[dt])
    K.buf("i", cpi * ES[idx.dtype])
    K.buf("bt", cpt * ES[table.dtype])
    body = [K.local("row", dt), K.local("i", idx.dtype), K.local("bt", table.dtype),
            "if (AscendC::GetBlockIdx() == 0) {"]
    inner = [K.copy_in(1, "i", "0", "1", "vc1", cpi), K.copy_in(2, "bt", "0", "1", "vc2", cpt)]
    K.sync("MTE2_S", inner)
    numel = "static_cast<int64_t>(tl[3])"
    row = [f"const int64_t t = static_cast<int64_t>(i.GetValue(j));",
           f"const int64_t b = t >= 0 ? t / {block} : -1;",
           f'ascendc_assert(t >= 0 && b < static_cast<int64_t>(vc2), "gather_in_ub: token %lld (indices[0, %u]) is '
           f'outside the block table\'s %u blocks of {block}", static_cast<long long>(t), j, vc2);',
           f"const int64_t at = static_cast<int64_t>(off0) + (static_cast<int64_t>(bt.GetValue(b)) * {block} + t % {block})"
           f" * {ld};  // the row's first element",
           f'ascendc_assert(at >= {col0} && at - {col0} + {ld} <= {numel}, "gather_in_ub: token %lld maps to row %lld, '
           f'outside the tensor\'s %lld rows", static_cast<long long>(t), static_cast<long long>((at - {col0}) / {ld}), '
           f'static_cast<long long>({numel} / {ld}));',
           K.copy_in(0, "row", "0", "1", f"{cache.cols}u", cp, at="static_cast<uint64_t>(at)")]
    K.sync("MTE2_MTE3", row)
    row.append(K.copy_out(3, "row", "j", "1", f"{cache.cols}u", cp))
    K.sync("MTE3_MTE2", row)
    inner += ["for (uint32_t j = 0; j < vc1; ++j) {"] + ["    " + s for s in row] + ["}"]
    K.ops.append("GetValue")
    K.body += body + ["    " + s for s in inner] + ["}"]


def _one_hot(K: _Kernel, x: GVal, out: GVal, n: int):
    """one_hot: per input row, the rows of int64 zeros (Duplicate on their int32 halves) with a 1
    in the low half of each element's class (a scalar write per input element)."""
    dt = x.dtype
    cpx = _cpad(x.cols, dt)
    cpo = _cpad(n, "int64")
    per = x.cols if len(x.shape) > 1 else 1  # result rows per unit
    K.buf("x", cpx * ES[dt])
    K.buf("o", x.cols * cpo * 8)
    body = [K.local("x", dt), K.local("o", "int64"),
            "AscendC::LocalTensor<int32_t> o32 = o.ReinterpretCast<int32_t>();"]
    loop = [K.copy_in(0, "x", "u", "1", "vc0", cpx)]
    loop.append(K.call("Duplicate", f"o32, 0, {x.cols * cpo * 2}"))
    K.sync("MTE2_S", loop)
    K.sync("V_S", loop)
    loop += ["for (uint32_t j = 0; j < vc0; ++j) {",
             "    const int64_t c = static_cast<int64_t>(x.GetValue(j));",
             f'    ascendc_assert(c >= 0 && c < {n}, "one_hot: a class value is outside [0, %d)", {n});',
             f"    o32.SetValue((j * {cpo}u + static_cast<uint32_t>(c)) * 2u, 1);  // the low half of 1",
             "}"]
    K.sync("S_MTE3", loop)
    loop.append(K.copy_out(1, "o", f"u * {per}u", "vc0", f"{n}u", cpo))
    K.sync("MTE3_V", loop)
    K.ops += ["GetValue", "SetValue"]
    K.body += body + K.units("vr0", loop)


def _scan(K: _Kernel, x: GVal, out: GVal, groups: int, n: int, m: int, product: bool):
    """cumsum / cumprod.  Floats in fp32 (fp16 widened by Cast, rounded back once): along another
    axis, Add / Mul of each super-row into the next over every column at once; along the last,
    CumSum (line by line) for sums and a scalar loop for products (no API).  Integer cumsum gives
    int64 in a scalar loop (A2 has no int64 Add)."""
    dt, odt = x.dtype, out.dtype
    cpx, cpo = _cpad(x.cols, dt), _cpad(x.cols, odt)
    nrows = 1 if not m else n * m
    nvalid = "1u" if not m else ("vr0" if groups == 1 and m == 1 else f"{n}u")
    rows_in = nvalid if m <= 1 else f"{nvalid} * {m}u"
    K.buf("x", nrows * cpx * ES[dt])
    body = [K.local("x", dt)]
    start = "u" if not m else f"u * {n * m}u"
    loop = [K.copy_in(0, "x", start, rows_in, "vc0", cpx)]
    if dt in ("int16", "int32"):
        K.buf("o", nrows * cpo * 8)
        body.append(K.local("o", "int64"))
        K.sync("MTE2_S", loop)
        if not m:
            walk = ["int64_t acc = 0;", "for (uint32_t j = 0; j < vc0; ++j) {",
                    "    acc += static_cast<int64_t>(x.GetValue(j));", "    o.SetValue(j, acc);", "}"]
        else:
            walk = [f"for (uint32_t t = 0; t < {m}u; ++t) {{", "    for (uint32_t c = 0; c < vc0; ++c) {",
                    "        int64_t acc = 0;", f"        for (uint32_t r = 0; r < {nvalid}; ++r) {{",
                    f"            acc += static_cast<int64_t>(x.GetValue((r * {m}u + t) * {cpx}u + c));",
                    f"            o.SetValue((r * {m}u + t) * {cpo}u + c, acc);", "        }", "    }", "}"]
        loop += ["// int64 sums in a scalar loop: A2 has no int64 Add"] + walk
        K.ops += ["GetValue", "SetValue"]
        K.sync("S_MTE3", loop)
        loop.append(K.copy_out(1, "o", start, rows_in, "vc0", cpo))
        K.sync("MTE3_MTE2", loop)
        K.sync("MTE3_S", loop)
    else:
        K.sync("MTE2_V", loop)
        w = "x"
        if dt == "fp16":
            K.buf("w", nrows * cpx * 4)
            body.append(K.local("w", "fp32"))
            loop.append(K.call("Cast", f"w, x, AscendC::RoundMode::CAST_NONE, {nrows * cpx}", "in fp32"))
            w = "w"
        L = m * cpx
        if m:
            fn = "Mul" if product else "Add"
            loop += [f"for (uint32_t r = 1; r < {nvalid}; ++r) {{",
                     "    " + K.call(fn, f"{w}[r * {L}u], {w}[r * {L}u], {w}[(r - 1u) * {L}u], {L}", "one row after the other"),
                     "}"]
        elif not product:
            K.buf("y", cpx * 4)
            K.buf("last", 32)
            K.buf("cs", cpx * 4)
            body += [K.local("y", "fp32"), K.local("last", "fp32"), "AscendC::LocalTensor<uint8_t> cs = b_cs.Get<uint8_t>();",
                     "static constexpr AscendC::CumSumConfig kRows{true, false, false, "
                     "AscendC::CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};"]
            loop.append(K.call("CumSum", f"y, last, {w}, cs, AscendC::CumSumInfo{{1, {cpx}}}", "along the row",
                               template="<float, kRows>"))
            w = "y"
        else:
            K.sync("V_S", loop)
            loop += ["// a running product along the row: scalar (no cumulative-product API)",
                     f"float acc = static_cast<float>({w}.GetValue(0));",
                     "for (uint32_t j = 1; j < vc0; ++j) {", f"    acc = acc * static_cast<float>({w}.GetValue(j));",
                     f"    {w}.SetValue(j, acc);", "}"]
            K.ops += ["GetValue", "SetValue"]
            K.sync("S_V", loop)
        res = w
        if dt == "fp16":
            loop.append(K.call("Cast", f"x, {w}, AscendC::RoundMode::CAST_RINT, {nrows * cpx}", "rounded once"))
            res = "x"
        K.sync("V_MTE3", loop)
        loop.append(K.copy_out(1, res, start, rows_in, "vc0", cpx))
        K.sync("MTE3_MTE2", loop)
        K.sync("MTE3_V", loop)
    units = "vr0" if not m else f"{groups}u"
    K.body += body + K.units(units, loop)
