"""Emit Ascend C from a lowered ``Program`` (vertical slice: vector elementwise, row reductions).

``emit_program(program)`` returns ``{file name: text}``:

* ``<block>.cpp`` — one kernel per compute ``Block``:
  ``extern "C" __global__ __aicore__ void <program>_<block>(GM_ADDR <tensor>..., GM_ADDR tiling)``.
  The tiling struct carries the per-launch element offsets of every GM region the block
  reads or writes (the control program evaluates them).  The body is the canonical
  double-buffered pipeline of ascendc.md §5.3: row tiles of the ops' vector tile shape,
  tiles distributed round-robin over ``GetBlockIdx()/GetBlockNum()``, CopyIn (DataCopy/DataCopyPad) /
  Compute (the fused chain in UB) / CopyOut (DataCopy/DataCopyPad).
* ``control.cpp`` — ``extern "C" int pypto_run(void** tensors, const int64_t* scalars)`` walks
  the loop tree and calls ``pypto_host::Launch`` per block; faults are caught and reported via
  ``pypto_last_error()``; GM traffic summed over launches via ``pypto_traffic``.
* ``manifest.json`` — kernels, parameters, tiling layout.

Supported (anything else raises :class:`EmitError`, see ``analyse``):

* 2-D fp32/fp16 blocks of one [rows, cols] shape: elementwise add/sub/mul/div/maximum/minimum
  (tensor or scalar operand, ``alpha``), exp/abs/sqrt/rsqrt/reciprocal/relu/neg, cast fp32<->fp16;
* row reductions ``sum``/``amax``/``amin`` (fp32, dim=-1, keepdim=True) when a row fits one tile
  (the tile's last dim == cols): ReduceSum/ReduceMax/ReduceMin per row, the [rows, 1] result kept
  as one 32-byte block per row in UB;
* [rows, 1] (fp32) op [rows, cols] in binary ops: per row, the row's scalar via GetValue (after a
  V->S flag) then Adds/Muls/Maxs/Mins, or Duplicate + Div for division (exact);
  [rows, 1] values may be read from / written to [rows, 1] tensors;
* ragged tiles: a short last row tile (``nr`` rows), and rows whose byte length (or leading-dim
  gap) is not a multiple of 32 B via DataCopyPad; UB rows are padded to 32 B.

Not supported yet: reductions along other axes, without keepdim, over rows longer than one tile,
or on fp16; column ([1, cols]) broadcasts; [rows, 1] fp16 values; ``alpha`` with a row-broadcast
operand; other ops (sigmoid, where, matmul...), locals, branches, values crossing blocks.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Optional

from ..transforms import ir
from .errors import EmitError, unsupported as _unsupported

UB_BUDGET = 184 * 1024  # emitter budget (ascendc.md §1.2 / §15)
MAX_CORES = 40  # AIV cores on A2 (910B)
CTYPE = {"fp32": "float", "fp16": "half"}
BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "maximum": "Max", "minimum": "Min"}
UNARY = {"exp": "Exp", "abs": "Abs", "sqrt": "Sqrt", "rsqrt": "Rsqrt", "reciprocal": "Reciprocal",
         "relu": "Relu"}
REDUCE = {"sum": "ReduceSum", "amax": "ReduceMax", "amin": "ReduceMin"}
ROUND_MODES = ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD")


def _const_int(e, span, what):
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, int) and not isinstance(e, bool):
        return e
    _unsupported(f"{what} {e!r} (only static shapes)", span)


# ---------------------------------------------------------------------------------------
# Scalar expressions -> C++ (control program).

def _cexpr(e, scope: set, params: dict, span=None) -> str:
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        e = ir.Const(e)
    if isinstance(e, ir.Const):
        if isinstance(e.value, bool):
            return "1" if e.value else "0"
        if isinstance(e.value, int):
            return f"INT64_C({e.value})"
        _unsupported(f"non-integer scalar {e.value!r} in an offset or loop bound", span)
    if isinstance(e, ir.Var):
        if e.name in scope:
            return f"v_{e.name}"
        if e.name in params:
            return f"s_{e.name}"
        raise EmitError(f"unknown scalar {e.name!r}", span)
    if isinstance(e, ir.ShapeOf):
        p = params.get(e.tensor)
        if p is None or p.type is None:
            _unsupported(f"shape of {e.tensor!r}", span)
        return _cexpr(p.type.shape[e.axis], scope, params, span)
    if isinstance(e, ir.BinExpr):
        a, b = _cexpr(e.a, scope, params, span), _cexpr(e.b, scope, params, span)
        if e.op in ("+", "-", "*", "==", "!=", "<", "<=", ">", ">="):
            return f"({a} {e.op} {b})"
        if e.op == "//":
            return f"pypto_floordiv({a}, {b})"
        if e.op == "%":
            return f"pypto_floormod({a}, {b})"
        if e.op in ("min", "max"):
            return f"std::{e.op}<int64_t>({a}, {b})"
        if e.op in ("and", "or"):
            return f"({a} {'&&' if e.op == 'and' else '||'} {b})"
        _unsupported(f"scalar operator {e.op!r}", span)
    if isinstance(e, ir.UnExpr):
        a = _cexpr(e.a, scope, params, span)
        return f"(-{a})" if e.op == "-" else f"(!{a})"
    _unsupported(f"scalar expression {e!r}", span)


def _float_lit(v, ctype: str, span) -> str:
    v = float(v)
    if not math.isfinite(v):
        _unsupported(f"non-finite scalar {v}", span)
    lit = repr(v)
    if "e" not in lit and "." not in lit:
        lit += ".0"
    return f"static_cast<{ctype}>({lit}f)" if ctype == "half" else f"{lit}f"


# ---------------------------------------------------------------------------------------
# Block analysis.

@dataclass
class Region:
    """A GM region of a named tensor moved by one queue: rows x cols at (offsets)."""

    tensor: str
    dtype: str
    offsets: tuple  # Exprs
    ld: int  # the named tensor's last dim
    numel: int
    queue: str
    field_index: int  # index into the tiling struct
    cols: int = 0  # columns moved per row (the block's width, or 1 for a [rows, 1] value)


@dataclass
class KernelPlan:
    block: ir.Block
    name: str
    rows: int
    cols: int
    tile_rows: int
    tensors: list  # named tensors passed to the kernel (param order)
    inputs: list = field(default_factory=list)  # Region
    outputs: list = field(default_factory=list)  # (Region, value)
    ub_bytes: int = 0
    temp_slots: int = 0


def _is_scalar(x) -> bool:
    return isinstance(x, ir.Const) or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _scalar_value(x):
    return x.value if isinstance(x, ir.Const) else x


class _BlockEmitter:
    def __init__(self, program: ir.Program, block: ir.Block, params: dict, line_directives: bool):
        self.program, self.block, self.params = program, block, params
        self.lines_on = line_directives
        self.source = dict(program.attrs).get("source", f"{program.name}.py")
        self.name = f"{program.name}_{block.name}"

    # -- analysis ------------------------------------------------------------------------
    def analyse(self):
        vtype = {}  # SSA name -> dtype
        vwidth = {}  # SSA name or "@t" -> last dim (the block's cols, or 1)
        reduces = []
        shape = None
        tile = None
        self.inputs: list[Region] = []
        self.in_of = {}  # SSA name or "@t" -> Region (input)
        self.outputs: list = []  # (Region, value name)
        written = set()
        read = {}  # tensor -> offsets read
        compute = []

        def named(t, span):
            p = self.params.get(t)
            if p is None or p.kind != "tensor":
                _unsupported(f"tensor {t!r} that is not a kernel parameter (locals)", span)
            if p.type.dtype not in CTYPE:
                _unsupported(f"dtype {p.type.dtype} of {t!r}", span)
            dims = tuple(_const_int(d, span, "dimension") for d in p.type.shape)
            if len(dims) != 2:
                _unsupported(f"rank-{len(dims)} tensor {t!r} (only 2-D)", span)
            return p, dims

        def check_shape(s, span):
            # One [rows, cols] shape per block; [rows, 1] values (row reductions) broadcast against it.
            nonlocal shape
            if shape is None or (shape[1] == 1 and s[0] == shape[0]):
                shape = s if shape is None or s[1] != 1 else shape
            elif s != shape and s != (shape[0], 1):
                _unsupported(f"shape {list(s)} differing from the block's shape {list(shape)} "
                             "(one [rows, cols] shape per block, plus [rows, 1] row values)", span)

        def add_input(key, tensor, offsets, s, span):
            if tensor in written:
                _unsupported(f"reading @{tensor} after assembling into it in the same block", span)
            p, dims = named(tensor, span)
            check_shape(s, span)
            vwidth[key] = s[1]
            if tensor in read and read[tensor] != offsets:
                pass
            read.setdefault(tensor, offsets)
            for r in self.inputs:
                if r.tensor == tensor and r.offsets == offsets:
                    self.in_of[key] = r
                    return
            r = Region(tensor, p.type.dtype, offsets, dims[1], dims[0] * dims[1], f"qIn{len(self.inputs)}", -1, s[1])
            self.inputs.append(r)
            self.in_of[key] = r
            vtype[key] = p.type.dtype

        for op in self.block.ops:
            sp = op.span
            if op.opcode == "view":
                src = op.operands[0]
                if not isinstance(src, ir.TensorRef):
                    _unsupported("view of an SSA value", sp)
                if op.attr("valid_shape") is not None or op.attr("dtype") is not None:
                    _unsupported("view with valid_shape/dtype", sp)
                s = tuple(_const_int(d, sp, "view shape") for d in op.attr("shape"))
                add_input(op.results[0], src.name, tuple(op.attr("offsets")), s, sp)
                vtype[op.results[0]] = self.params[src.name].type.dtype
                continue
            if op.opcode == "assemble":
                val, dst = op.operands
                if not isinstance(dst, ir.TensorRef) or not isinstance(val, ir.Value):
                    _unsupported("assemble of a non-SSA value or into a non-named tensor", sp)
                p, dims = named(dst.name, sp)
                if dst.name in written:
                    _unsupported(f"assembling into @{dst.name} twice in one block", sp)
                if val.name not in vtype:
                    _unsupported(f"value %{val.name} defined in another block", sp)
                if vtype[val.name] != p.type.dtype:
                    raise EmitError(f"assemble: dtype {vtype[val.name]} into @{dst.name} of {p.type.dtype}", sp)
                offsets = tuple(op.attr("offsets"))
                if dst.name in read and read[dst.name] != offsets:
                    _unsupported(f"reading and writing different regions of @{dst.name} in one block", sp)
                written.add(dst.name)
                if vwidth[val.name] > dims[1]:
                    _unsupported(f"assembling a value wider than @{dst.name}", sp)
                r = Region(dst.name, p.type.dtype, offsets, dims[1], dims[0] * dims[1], f"qOut{len(self.outputs)}", -1,
                           vwidth[val.name])
                self.outputs.append((r, val.name))
                continue
            # compute op
            if op.opcode not in BINARY and op.opcode not in UNARY and op.opcode not in REDUCE \
                    and op.opcode not in ("neg", "cast"):
                _unsupported(f"op '{op.opcode}'", sp)
            if len(op.results) != 1 or len(op.types) != 1:
                _unsupported(f"op '{op.opcode}' with {len(op.results)} results", sp)
            rtype = op.types[0]
            if rtype.dtype not in CTYPE:
                _unsupported(f"op '{op.opcode}' on dtype {rtype.dtype}", sp)
            s = tuple(_const_int(d, sp, "shape") for d in rtype.shape)
            if len(s) != 2:
                _unsupported(f"op '{op.opcode}' on a rank-{len(s)} value (only 2-D)", sp)
            check_shape(s, sp)
            if op.tile is not None:
                t = tuple(op.tile)
                if tile is None:
                    tile = t
                elif t != tile:
                    _unsupported(f"op '{op.opcode}' with a second tile shape {list(t)}", sp)
            for x in op.operands:
                if isinstance(x, ir.TensorRef):
                    p, dims = named(x.name, sp)
                    add_input("@" + x.name, x.name, (ir.Const(0), ir.Const(0)), dims, sp)
                elif isinstance(x, ir.Value):
                    if x.name not in vtype:
                        _unsupported(f"value %{x.name} defined in another block", sp)
                    if vtype[x.name] != (rtype.dtype if op.opcode != "cast" else vtype[x.name]):
                        raise EmitError(f"op '{op.opcode}': mixed dtypes", sp)
                elif _is_scalar(x):
                    if op.opcode not in BINARY:
                        _unsupported(f"scalar operand of '{op.opcode}'", sp)
                else:
                    _unsupported(f"operand {x!r} of '{op.opcode}'", sp)
            for k, v in op.attrs:
                if op.opcode == "cast" and k in ("dtype", "mode"):
                    continue
                if op.opcode in ("add", "sub") and k == "alpha":
                    continue
                if op.opcode in REDUCE and (k, v) in (("dim", 1), ("dim", -1), ("keepdim", True)):
                    continue
                if op.opcode in REDUCE and k in ("dim", "keepdim"):
                    _unsupported(f"'{op.opcode}' with {k}={v!r} (only row reductions dim=-1, keepdim=True)", sp)
                _unsupported(f"attribute {k}={v!r} of '{op.opcode}'", sp)
            if op.opcode in BINARY and all(_is_scalar(x) for x in op.operands):
                _unsupported(f"'{op.opcode}' of two scalars", sp)
            if op.opcode == "cast":
                src_dt = vtype.get(op.operands[0].name if isinstance(op.operands[0], ir.Value)
                                   else "@" + op.operands[0].name)
                pair = (src_dt, rtype.dtype)
                mode = op.attr("mode", "CAST_NONE")
                if pair not in (("fp32", "fp16"), ("fp16", "fp32"), ("fp32", "fp32"), ("fp16", "fp16")):
                    _unsupported(f"cast {src_dt}->{rtype.dtype}", sp)
                if mode not in ROUND_MODES or (pair == ("fp16", "fp32") and mode != "CAST_NONE") \
                        or (pair == ("fp32", "fp16") and mode not in ("CAST_NONE", "CAST_RINT", "CAST_FLOOR",
                                                                      "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC",
                                                                      "CAST_ODD")):
                    _unsupported(f"cast {src_dt}->{rtype.dtype} with mode {mode}", sp)
            widths = [vwidth[x.name if isinstance(x, ir.Value) else "@" + x.name]
                      for x in op.operands if isinstance(x, (ir.Value, ir.TensorRef))]
            if op.opcode in REDUCE:
                if rtype.dtype != "fp32":
                    _unsupported(f"'{op.opcode}' on {rtype.dtype} (row reductions are fp32 only)", sp)
                if op.attr("keepdim") is not True or op.attr("dim") not in (1, -1):
                    _unsupported(f"'{op.opcode}' other than along the last axis with keepdim=True", sp)
                if s[1] != 1 or widths[0] == 1:
                    _unsupported(f"'{op.opcode}' of a [rows, 1] value", sp)
                reduces.append(op)
            elif s[1] != max(widths):
                _unsupported(f"op '{op.opcode}' whose result is narrower than its operands", sp)
            vtype[op.results[0]] = rtype.dtype
            vwidth[op.results[0]] = s[1]
            compute.append(op)

        if not self.outputs:
            _unsupported(f"block {self.block.name} that writes no named tensor (values crossing blocks)")
        if shape is None:
            shape = tuple(_const_int(d, None, "view shape") for d in
                          next(o for o in self.block.ops if o.opcode == "view").attr("shape"))
        rows, cols = shape
        if cols > 1:
            for k, w in vwidth.items():
                if w == 1 and vtype[k] != "fp32":
                    _unsupported(f"[rows, 1] value of dtype {vtype[k]} (only fp32)")
        for op in reduces:
            if op.tile is None or op.tile[-1] != cols:
                _unsupported(f"'{op.opcode}' whose tile's last dim {op.tile and op.tile[-1]} is not the row "
                             f"length {cols} (a row must fit one tile)", op.span)
        # UB row stride of a [rows, cols] value: cols rounded up so that every row starts 32-byte
        # aligned in every dtype of the block (DataCopyPad pads ragged rows, §7.2).
        align = 32 // min({"fp32": 4, "fp16": 2}[d] for d in set(vtype.values()) | {"fp32"})
        self.cpad = -(-cols // align) * align
        for r in self.inputs + [r for r, _ in self.outputs]:
            r.cols = r.cols or cols
        self.vtype, self.vwidth, self.compute, self.rows, self.cols = vtype, vwidth, compute, rows, cols
        self.uses_work = any(op.opcode in REDUCE or (op.opcode == "div" and self._bcast(op)) for op in compute)
        self.tile_rows = self._pick_tile_rows(tile[0] if tile else rows)

    def _key(self, x) -> str:
        return x.name if isinstance(x, ir.Value) else "@" + x.name

    def _bcast(self, op) -> bool:
        """A binary op of a [rows, cols] and a [rows, 1] operand (row broadcast)."""
        if op.opcode not in BINARY or self.cols == 1:
            return False
        ws = [self.vwidth[self._key(x)] for x in op.operands if isinstance(x, (ir.Value, ir.TensorRef))]
        return len(ws) == 2 and ws[0] != ws[1]

    def _stride(self, width: int) -> int:
        """UB elements per row of a value of this width: a [rows, 1] value keeps one 32-byte block per row."""
        return self.cpad if width == self.cols else 8

    def _pick_tile_rows(self, want: int) -> int:
        # Row tiles of the ops' tile rows; a short last tile takes the remainder (self.tail).
        tr = max(1, min(want, self.rows))
        while True:
            self._plan_ub(tr)
            if self.ub_bytes <= UB_BUDGET or tr == 1:
                break
            tr -= 1
        if self.ub_bytes > UB_BUDGET:
            _unsupported(f"block {self.block.name}: one row needs {self.ub_bytes} B of UB")
        return tr

    def _plan_ub(self, tr: int):
        """Assign every compute result a UB home: an output queue tensor or a temp slot."""
        es = {"fp32": 4, "fp16": 2}
        self.slot_bytes = tr * self.cpad * 4
        out_of = {}
        for r, v in self.outputs:
            out_of.setdefault(v, r)
        last_use = {}
        for i, op in enumerate(self.compute):
            for x in op.operands:
                if isinstance(x, ir.Value):
                    last_use[x.name] = i
        for r, v in self.outputs:
            last_use[v] = len(self.compute)
        home = {}  # value -> ("in", Region) | ("out", Region) | ("tmp", slot)
        for k, r in self.in_of.items():
            home[k] = ("in", r)
        free: list[int] = []
        nslots = 0

        def take():
            nonlocal nslots
            if free:
                return free.pop()
            nslots += 1
            return nslots - 1

        self.scratch = {}  # op index -> slot for alpha temp
        for i, op in enumerate(self.compute):
            res = op.results[0]
            # operands whose last use is this op release their slots (100% overlap is allowed)
            released, late = [], []  # late: may not share the result's slot (rows at other strides)
            for x in op.operands:
                if isinstance(x, ir.Value) and last_use.get(x.name) == i and home[x.name][0] == "tmp":
                    same = self.vwidth[x.name] == self.vwidth[res] and op.opcode not in REDUCE
                    if home[x.name][1] not in released + late:
                        (released if same else late).append(home[x.name][1])
            alpha = op.attr("alpha")
            needs_scratch = alpha is not None and float(alpha) != 1.0 and not any(_is_scalar(x) for x in op.operands)
            if op.opcode == "div" and _is_scalar(op.operands[0]):
                needs_scratch = False
            if needs_scratch:
                self.scratch[i] = take()
            if op.opcode != "cast":
                free.extend(released)
                released = []
            if res in out_of:
                home[res] = ("out", out_of[res])
            else:
                home[res] = ("tmp", take())
            free.extend(released + late)
            if i in self.scratch:
                free.append(self.scratch[i])
            if res not in last_use:  # dead value
                if home[res][0] == "tmp":
                    free.append(home[res][1])
        self.home = home
        self.temp_slots = nslots
        q = sum(2 * tr * self._stride(r.cols) * es[r.dtype] for r in self.inputs + [r for r, _ in self.outputs])
        self.ub_bytes = q + nslots * self.slot_bytes + (self.cpad * 4 if self.uses_work else 0)

    # -- emission ------------------------------------------------------------------------
    def emit(self) -> tuple[str, dict]:
        self.analyse()
        tensors = [p.name for p in self.program.params if p.kind == "tensor" and
                   (any(r.tensor == p.name for r in self.inputs) or any(r.tensor == p.name for r, _ in self.outputs))]
        regions = self.inputs + [r for r, _ in self.outputs]
        for i, r in enumerate(regions):
            r.field_index = i
        cls = f"PyptoKernel_{self.name}"
        tiling = f"PyptoTiling_{self.name}"
        tr = self.tile_rows
        ntiles = -(-self.rows // tr)
        last = self.rows - (ntiles - 1) * tr
        self.tail = last != tr  # short last tile: CopyIn/Compute/CopyOut take its row count nr
        nr_arg = ", uint32_t nr" if self.tail else ""
        L: list[str] = []
        L.append(f"// Generated by pypto-ast (host backend slice) from IR block {self.block.name} of program "
                 f"{self.program.name} ({self.source}).")
        L.append('#include "kernel_operator.h"')
        L.append("")
        L.append(f"struct {tiling} {{")
        L.append(f"    int64_t offset[{len(regions)}];  // element offset of each GM region: "
                 + ", ".join(f"[{r.field_index}] {'in' if r in self.inputs else 'out'} @{r.tensor}" for r in regions))
        L.append("};")
        L.append("")
        L.append(f"class {cls} {{")
        L.append("public:")
        args = ", ".join(f"GM_ADDR {t}" for t in tensors)
        L.append(f"    __aicore__ inline void Init(AscendC::TPipe* p, {args}, const {tiling}& t)")
        L.append("    {")
        L.append("        pipe = p;")
        for r in regions:
            g = f"g{r.field_index}"
            L.append(f"        {g}.SetGlobalBuffer((__gm__ {CTYPE[r.dtype]}*){r.tensor}, {r.numel});  // @{r.tensor}")
            L.append(f"        base{r.field_index} = static_cast<uint64_t>(t.offset[{r.field_index}]);")
        for r in regions:
            L.append(f"        pipe->InitBuffer({r.queue}, 2, {tr * self._stride(r.cols) * (4 if r.dtype == 'fp32' else 2)});")
        if self.temp_slots:
            L.append(f"        pipe->InitBuffer(tmp, {self.temp_slots * self.slot_bytes});")
        if self.uses_work:
            L.append(f"        pipe->InitBuffer(work, {self.cpad * 4});")
        L.append("    }")
        L.append("    __aicore__ inline void Process()")
        L.append("    {")
        L.append(f"        for (uint32_t i = AscendC::GetBlockIdx(); i < {ntiles}u; i += AscendC::GetBlockNum()) {{")
        if self.tail:
            L.append(f"            const uint32_t nr = i + 1 < {ntiles}u ? {tr}u : {last}u;  // rows in this tile")
            L.append("            CopyIn(i, nr);")
            L.append("            Compute(nr);")
            L.append("            CopyOut(i, nr);")
        else:
            L.append("            CopyIn(i);")
            L.append("            Compute();")
            L.append("            CopyOut(i);")
        L.append("        }")
        L.append("    }")
        L.append("")
        L.append("private:")
        L.append(f"    __aicore__ inline void CopyIn(uint32_t i{nr_arg})")
        L.append("    {")
        for r in self.inputs:
            ct = CTYPE[r.dtype]
            L.append(f"        AscendC::LocalTensor<{ct}> l{r.field_index} = {r.queue}.AllocTensor<{ct}>();")
        for r in self.inputs:
            L.append("        " + self._copy(r, True, f"l{r.field_index}"))
        for r in self.inputs:
            L.append(f"        {r.queue}.EnQue(l{r.field_index});")
        L.append("    }")
        L.append(f"    __aicore__ inline void Compute({nr_arg[2:]})")
        L.append("    {")
        for r in self.inputs:
            ct = CTYPE[r.dtype]
            L.append(f"        AscendC::LocalTensor<{ct}> l{r.field_index} = {r.queue}.DeQue<{ct}>();")
        for r, _ in self.outputs:
            ct = CTYPE[r.dtype]
            L.append(f"        AscendC::LocalTensor<{ct}> l{r.field_index} = {r.queue}.AllocTensor<{ct}>();")
        body = self._compute_body()
        L.extend(body)
        # Outputs assembled from a value that lives elsewhere (an input, or a second output).
        for r, v in self.outputs:
            h = self.home.get(v)
            if not (h[0] == "out" and h[1] is r):
                L.append(f"        AscendC::DataCopy(l{r.field_index}, {self._ref(v)}, {self._count(self.vwidth[v])});"
                         f"  // UB->UB for @{r.tensor}")
        if self.lines_on and body:
            L.append(f'#line {len(L) + 2} "{self.block.name}.cpp"')
        for r, _ in self.outputs:
            L.append(f"        {r.queue}.EnQue(l{r.field_index});")
        for r in self.inputs:
            L.append(f"        {r.queue}.FreeTensor(l{r.field_index});")
        L.append("    }")
        L.append(f"    __aicore__ inline void CopyOut(uint32_t i{nr_arg})")
        L.append("    {")
        for r, _ in self.outputs:
            ct = CTYPE[r.dtype]
            L.append(f"        AscendC::LocalTensor<{ct}> l{r.field_index} = {r.queue}.DeQue<{ct}>();")
            L.append("        " + self._copy(r, False, f"l{r.field_index}"))
            L.append(f"        {r.queue}.FreeTensor(l{r.field_index});")
        L.append("    }")
        L.append("")
        L.append("    AscendC::TPipe* pipe;")
        for r in self.inputs:
            L.append(f"    AscendC::TQue<AscendC::TPosition::VECIN, 1> {r.queue};  // @{r.tensor}")
        for r, _ in self.outputs:
            L.append(f"    AscendC::TQue<AscendC::TPosition::VECOUT, 1> {r.queue};  // @{r.tensor}")
        if self.temp_slots:
            L.append(f"    AscendC::TBuf<AscendC::TPosition::VECCALC> tmp;  // {self.temp_slots} slots of "
                     f"{self.slot_bytes} B")
        if self.uses_work:
            L.append("    AscendC::TBuf<AscendC::TPosition::VECCALC> work;  // one row: reduce work / broadcast row")
        for r in regions:
            L.append(f"    AscendC::GlobalTensor<{CTYPE[r.dtype]}> g{r.field_index};")
        L.append("    uint64_t " + ", ".join(f"base{r.field_index}" for r in regions) + ";")
        L.append("};")
        L.append("")
        L.append(f'extern "C" __global__ __aicore__ void {self.name}({args}, GM_ADDR tiling)')
        L.append("{")
        L.append(f"    {tiling} t;")
        L.append(f"    for (int32_t k = 0; k < {len(regions)}; ++k) {{")
        L.append("        t.offset[k] = ((__gm__ int64_t*)tiling)[k];")
        L.append("    }")
        L.append("    AscendC::TPipe pipe;")
        L.append(f"    {cls} op;")
        L.append(f"    op.Init(&pipe, {', '.join(tensors)}, t);")
        L.append("    op.Process();")
        L.append("}")
        info = {
            "block": self.block.name, "kernel": self.name, "file": f"{self.block.name}.cpp",
            "tensors": tensors, "shape": [self.rows, self.cols], "tile_rows": tr, "tiles": ntiles,
            "num_blocks": min(ntiles, MAX_CORES), "ub_bytes": self.ub_bytes,
            "tiling": [{"index": r.field_index, "tensor": r.tensor, "dir": "in" if r in self.inputs else "out",
                        "bytes": self.rows * r.cols * (4 if r.dtype == "fp32" else 2)} for r in regions],
        }
        self.regions = regions
        return "\n".join(L) + "\n", info

    def _count(self, width: int) -> str:
        """Element count of a tile of a value of this width (padded rows), for count-form APIs."""
        st = self._stride(width)
        return f"nr * {st}u" if self.tail else str(self.tile_rows * st)

    def _copy(self, r: Region, gm_to_ub: bool, local: str) -> str:
        es = 4 if r.dtype == "fp32" else 2
        ct = CTYPE[r.dtype]
        tr, cols, st = self.tile_rows, r.cols, self._stride(r.cols)
        g = f"g{r.field_index}[base{r.field_index} + static_cast<uint64_t>(i) * {tr * r.ld}]"
        nrows = "static_cast<uint16_t>(nr)" if self.tail else str(tr)
        if (cols * es) % 32 == 0 and ((r.ld - cols) * es) % 32 == 0:  # aligned: DataCopy (§7.1)
            if cols == r.ld == st:
                n = f"nr * {cols}u" if self.tail else str(tr * cols)
                return (f"AscendC::DataCopy({local}, {g}, {n});" if gm_to_ub
                        else f"AscendC::DataCopy({g}, {local}, {n});")
            blk, gap, ugap = cols * es // 32, (r.ld - cols) * es // 32, (st - cols) * es // 32
            if gm_to_ub:
                return f"AscendC::DataCopy({local}, {g}, AscendC::DataCopyParams{{{nrows}, {blk}, {gap}, {ugap}}});"
            return f"AscendC::DataCopy({g}, {local}, AscendC::DataCopyParams{{{nrows}, {blk}, {ugap}, {gap}}});"
        # ragged rows: DataCopyPad (§7.2); GM-side strides in bytes, UB-side in 32-byte blocks
        row = cols * es
        ugap, ggap = (st * es - -(-row // 32) * 32) // 32, (r.ld - cols) * es
        if gm_to_ub:
            return (f"AscendC::DataCopyPad({local}, {g}, AscendC::DataCopyExtParams{{{nrows}, {row}, {ggap}, {ugap}, 0}}, "
                    f"AscendC::DataCopyPadExtParams<{ct}>{{false, 0, 0, static_cast<{ct}>(0)}});")
        return f"AscendC::DataCopyPad({g}, {local}, AscendC::DataCopyExtParams{{{nrows}, {row}, {ugap}, {ggap}, 0}});"

    def _ref(self, v: str) -> str:
        kind, where = self.home[v]
        if kind in ("in", "out"):
            return f"l{where.field_index}"
        dt = self.vtype[v]
        n = self.tile_rows * self._stride(self.vwidth[v])
        return f"tmp.GetWithOffset<{CTYPE[dt]}>({n}, {where * self.slot_bytes})"

    def _operand(self, x) -> str:
        if isinstance(x, ir.TensorRef):
            return self._ref("@" + x.name)
        return self._ref(x.name)

    def _rows_loop(self, out: list, lines: list):
        nr = "nr" if self.tail else f"{self.tile_rows}u"
        out.append(f"        for (uint32_t r = 0; r < {nr}; ++r) {{")
        out.extend("            " + x for x in lines)
        out.append("        }")

    def _reduce(self, op, out: list, comment: str):
        """Row reduction into one 32-byte block per row (§6.5, count form per row)."""
        dst, src = self._ref(op.results[0]), self._operand(op.operands[0])
        self._rows_loop(out, [f"AscendC::{REDUCE[op.opcode]}({dst}[r * 8], {src}[r * {self.cpad}], "
                              f"work.Get<float>(), {self.cols});{comment}"])

    def _broadcast(self, op, out: list, comment: str):
        """[rows, cols] op [rows, 1]: per row, the row's scalar via GetValue then a scalar op (§6.6)."""
        code, (a, b) = op.opcode, op.operands
        if op.attr("alpha") is not None and float(op.attr("alpha")) != 1.0:
            _unsupported(f"'{code}' with alpha and a row-broadcast operand", op.span)
        col_first = self.vwidth[self._key(a)] == 1
        t, c = (b, a) if col_first else (a, b)
        dst, src, cs, n, cp = self._ref(op.results[0]), self._operand(t), self._operand(c), self.cols, self.cpad
        d, x = f"{dst}[r * {cp}]", f"{src}[r * {cp}]"
        body = [f"const float s = {cs}.GetValue(r * 8);{comment}"]
        if code == "add":
            body.append(f"AscendC::Adds({d}, {x}, s, {n});")
        elif code == "sub" and not col_first:
            body.append(f"AscendC::Adds({d}, {x}, -s, {n});")
        elif code == "sub":  # s - t
            body += [f"AscendC::Muls({d}, {x}, -1.0f, {n});", f"AscendC::Adds({d}, {d}, s, {n});"]
        elif code == "mul":
            body.append(f"AscendC::Muls({d}, {x}, s, {n});")
        elif code == "div":  # exact division: the row's scalar duplicated into the work row
            body.append(f"AscendC::Duplicate(work.Get<float>(), s, {n});")
            body.append(f"AscendC::Div({d}, work.Get<float>(), {x}, {n});" if col_first
                        else f"AscendC::Div({d}, {x}, work.Get<float>(), {n});")
        else:
            body.append(f"AscendC::{'Maxs' if code == 'maximum' else 'Mins'}({d}, {x}, s, {n});")
        # the scalar reads follow vector writes: V -> S sync (§6.6, §9.1)
        out.append("        AscendC::SetFlag<AscendC::HardEvent::V_S>(0);")
        out.append("        AscendC::WaitFlag<AscendC::HardEvent::V_S>(0);")
        self._rows_loop(out, body)

    def _compute_body(self) -> list[str]:
        out = []
        for i, op in enumerate(self.compute):
            if self.lines_on and op.span is not None:
                out.append(f'#line {op.span.line} "{self.source}"')
            res = op.results[0]
            dt = self.vtype[res]
            ct = CTYPE[dt]
            dst = self._ref(res)
            ops = op.operands
            comment = f"  // %{res} = {op.opcode}"
            code = op.opcode
            n = self._count(self.vwidth[res])
            if code in REDUCE:
                self._reduce(op, out, comment)
                continue
            if code in BINARY and self._bcast(op):
                self._broadcast(op, out, comment)
                continue
            if code in BINARY:
                a, b = ops
                alpha = op.attr("alpha")
                if _is_scalar(a) and _is_scalar(b):
                    _unsupported("binary op of two scalars", op.span)
                if _is_scalar(b) or _is_scalar(a):
                    s_first = _is_scalar(a)
                    t, s = (b, _scalar_value(a)) if s_first else (a, _scalar_value(b))
                    if alpha is not None and code in ("add", "sub") and not s_first:
                        s = s * float(alpha)
                    elif alpha is not None and code in ("add", "sub"):
                        # k*t applied to the tensor operand
                        _unsupported(f"'{code}' with alpha and a scalar first operand", op.span)
                    src = self._operand(t)
                    if code == "add" or (code == "sub" and not s_first):
                        val = s if code == "add" else -s
                        out.append(f"        AscendC::Adds({dst}, {src}, {_float_lit(val, ct, op.span)}, {n});{comment}")
                    elif code == "sub":  # s - t
                        out.append(f"        AscendC::Muls({dst}, {src}, {_float_lit(-1.0, ct, op.span)}, {n});{comment}")
                        out.append(f"        AscendC::Adds({dst}, {dst}, {_float_lit(s, ct, op.span)}, {n});")
                    elif code == "mul":
                        out.append(f"        AscendC::Muls({dst}, {src}, {_float_lit(s, ct, op.span)}, {n});{comment}")
                    elif code == "div" and not s_first:
                        if float(s) == 0.0:
                            _unsupported("division by the scalar 0", op.span)
                        out.append(f"        AscendC::Muls({dst}, {src}, {_float_lit(1.0 / float(s), ct, op.span)}, {n});{comment}")
                    elif code == "div":  # s / t
                        out.append(f"        AscendC::Reciprocal({dst}, {src}, {n});{comment}")
                        out.append(f"        AscendC::Muls({dst}, {dst}, {_float_lit(s, ct, op.span)}, {n});")
                    else:
                        fn = "Maxs" if code == "maximum" else "Mins"
                        out.append(f"        AscendC::{fn}({dst}, {src}, {_float_lit(s, ct, op.span)}, {n});{comment}")
                    continue
                sa, sb = self._operand(a), self._operand(b)
                if alpha is not None and float(alpha) != 1.0:
                    scr = f"tmp.GetWithOffset<{ct}>({n}, {self.scratch[i] * self.slot_bytes})"
                    out.append(f"        AscendC::Muls({scr}, {sb}, {_float_lit(alpha, ct, op.span)}, {n});{comment} (alpha)")
                    sb, comment = scr, ""
                out.append(f"        AscendC::{BINARY[code]}({dst}, {sa}, {sb}, {n});{comment}")
            elif code in UNARY:
                out.append(f"        AscendC::{UNARY[code]}({dst}, {self._operand(ops[0])}, {n});{comment}")
            elif code == "neg":
                out.append(f"        AscendC::Muls({dst}, {self._operand(ops[0])}, {_float_lit(-1.0, ct, op.span)}, {n});{comment}")
            elif code == "cast":
                src = ops[0]
                sdt = self.vtype[src.name if isinstance(src, ir.Value) else "@" + src.name]
                if sdt == dt:
                    out.append(f"        AscendC::DataCopy({dst}, {self._operand(src)}, {n});{comment} (same dtype)")
                else:
                    mode = op.attr("mode", "CAST_NONE")
                    out.append(f"        AscendC::Cast({dst}, {self._operand(src)}, AscendC::RoundMode::{mode}, {n});{comment}")
        return out


# ---------------------------------------------------------------------------------------
# Control program.

def _control(program: ir.Program, kernels: dict, params: dict) -> str:
    tparams = [p for p in program.params if p.kind == "tensor"]
    sparams = [p for p in program.params if p.kind == "scalar"]
    tindex = {p.name: i for i, p in enumerate(tparams)}
    L = [f"// Generated by pypto-ast: control program of {program.name} (runs on the host / AI CPU).",
         '#include "kernel_operator.h"', "#include <algorithm>", "#include <cstdint>", "#include <exception>",
         "#include <string>", ""]
    for k in kernels.values():
        args = ", ".join("GM_ADDR" for _ in k["tensors"])
        L.append(f'extern "C" __global__ __aicore__ void {k["kernel"]}({args}, GM_ADDR tiling);')
    L += ["", "namespace {", "std::string g_error;", "uint64_t g_traffic[4];",
          "inline int64_t pypto_floordiv(int64_t a, int64_t b) { int64_t q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }",
          "inline int64_t pypto_floormod(int64_t a, int64_t b) { return a - pypto_floordiv(a, b) * b; }",
          "void pypto_account()", "{", "    const auto& t = pypto_host::Traffic();",
          "    g_traffic[0] += t.gmToUbBytes; g_traffic[1] += t.ubToGmBytes;",
          "    g_traffic[2] += t.gmToUbCalls; g_traffic[3] += t.ubToGmCalls;", "}", "}  // namespace", "",
          'extern "C" const char* pypto_last_error() { return g_error.c_str(); }',
          'extern "C" void pypto_traffic(uint64_t* out) { for (int k = 0; k < 4; ++k) out[k] = g_traffic[k]; }', "",
          'extern "C" int pypto_run(void** tensors, const int64_t* scalars)', "{",
          "    g_error.clear();", "    for (int k = 0; k < 4; ++k) g_traffic[k] = 0;"]
    for i, p in enumerate(sparams):
        L.append(f"    const int64_t s_{p.name} = scalars[{i}];")
        L.append(f"    (void)s_{p.name};")
    L.append("    (void)scalars;")
    L.append("    try {")

    def region(nodes, scope, depth):
        ind = "    " * depth
        for node in nodes:
            if isinstance(node, ir.Loop):
                v = f"v_{node.var}"
                start = _cexpr(node.start, scope, params, node.span)
                inner = scope | {node.var}
                stop = _cexpr(node.stop, scope, params, node.span)
                step = _cexpr(node.step, scope, params, node.span)
                L.append(f"{ind}{{  // loop {node.var} ({node.name or node.kind})")
                L.append(f"{ind}    const int64_t stop_{node.var} = {stop}, step_{node.var} = {step};")
                L.append(f"{ind}    if (step_{node.var} == 0) pypto_host::Fault(\"loop {node.var}: zero step\");")
                L.append(f"{ind}    for (int64_t {v} = {start}; step_{node.var} > 0 ? {v} < stop_{node.var} : "
                         f"{v} > stop_{node.var}; {v} += step_{node.var}) {{")
                region(node.body, inner, depth + 2)
                L.append(f"{ind}    }}")
                L.append(f"{ind}}}")
            elif isinstance(node, ir.Block):
                k = kernels[node.name]
                em = k["_emitter"]
                offs = []
                for r in em.regions:
                    o0 = _cexpr(r.offsets[0], scope, params)
                    o1 = _cexpr(r.offsets[1], scope, params)
                    offs.append(f"{o0} * {r.ld} + {o1}")
                L.append(f"{ind}{{  // block {node.name}")
                L.append(f"{ind}    int64_t tiling[{len(offs)}] = {{{', '.join(offs)}}};")
                targs = ", ".join(f"(GM_ADDR)tensors[{tindex[t]}]" for t in k["tensors"])
                L.append(f"{ind}    pypto_host::Launch({k['num_blocks']}, {k['kernel']}, {targs}, (GM_ADDR)tiling);")
                L.append(f"{ind}    pypto_account();")
                L.append(f"{ind}}}")
            elif isinstance(node, ir.Branch):
                _unsupported("branch (if/else) in the control tree", node.span)
            else:
                _unsupported(f"control node {type(node).__name__}")

    region(program.body, set(), 2)
    L += ["    } catch (const pypto_host::HardwareFault& e) {", "        g_error = e.what();", "        return 1;",
          "    } catch (const std::exception& e) {", "        g_error = std::string(\"error: \") + e.what();",
          "        return 2;", "    }", "    return 0;", "}"]
    return "\n".join(L) + "\n"


def emit_program(program: ir.Program, *, line_directives: bool = True) -> dict:
    """Return ``{file name: text}``: one ``<block>.cpp`` per Block, ``control.cpp``, ``manifest.json``."""
    params = {p.name: p for p in program.params}
    if program.locals:
        _unsupported(f"local tensor @{program.locals[0].name} (pypto.tensor)")
    for node in ir.walk(program.body):
        if isinstance(node, ir.Branch):
            _unsupported("branch (if/else) in the control tree", node.span)
        if isinstance(node, ir.Return):
            _unsupported("return-convention kernel (Return node)")
    for p in program.params:
        if p.kind == "scalar" and p.value is not None and not isinstance(p.value, (int, float)):
            _unsupported(f"scalar parameter {p.name} of type {type(p.value).__name__}")
    files, kernels = {}, {}
    for block in ir.blocks(program):
        em = _BlockEmitter(program, block, params, line_directives)
        text, info = em.emit()
        files[f"{block.name}.cpp"] = text
        info["_emitter"] = em
        kernels[block.name] = info
    files["control.cpp"] = _control(program, kernels, params)
    manifest = {
        "program": program.name,
        "entry": "pypto_run", "error": "pypto_last_error", "traffic": "pypto_traffic",
        "tensors": [p.name for p in program.params if p.kind == "tensor"],
        "outputs": [p.name for p in program.params if p.kind == "tensor" and p.is_output],
        "scalars": [p.name for p in program.params if p.kind == "scalar"],
        "kernels": [{k: v for k, v in info.items() if k != "_emitter"} for info in kernels.values()],
    }
    files["manifest.json"] = json.dumps(manifest, indent=1) + "\n"
    return files
