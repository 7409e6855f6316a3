"""Emit Ascend C from a lowered ``Program``: kernels for the AI Cores, a control program for
the AI CPU side, and a manifest.

``emit_program(program)`` returns ``{file name: text}``:

* ``<kernel>.cpp`` — one kernel per fused vector segment of a compute block (``vector.py``:
  the canonical TPipe/TQue double-buffered pipeline, an elementwise/broadcast/reduction chain
  computed in UB) and one per matmul (``cube.py``, the cube unit).  A block is split into
  several kernels only where it must be: at a matmul, at a change of iteration shape, or when
  a kernel would read GM that the same kernel writes (docs/design.md §6).
* ``control.cpp`` — ``extern "C" int pypto_run(void** tensors, const int64_t* scalars,
  const int64_t* dims)``: the loop/branch tree, checking each block's view and store regions
  as the interpreter does (``pypto_host::CheckRegion``), evaluating each launch's tiling
  (offsets, valid extents, sizes) and calling ``pypto_host::Launch``; faults are caught and
  reported via ``pypto_last_error()``, at the source span ``pypto_fault_site()`` names; GM
  traffic summed over launches via ``pypto_traffic``.
* ``manifest.json`` — the tensor table (parameters, locals, workspaces, returned values),
  kernels and their GM regions, and the "sites": the source spans (line, col, end line, end
  col) of the ops, loops and branches the control program runs.

Values that cross kernels (or blocks) go through GM workspaces; ``pypto.tensor`` locals are
GM buffers the runtime allocates.  Anything outside the supported subset raises
:class:`EmitError` with the IR span of the cause.
"""

from __future__ import annotations

import json
import math
import re

from .. import ir
from ..diagnostics import format_count
from . import abi, gm
from .axes import OwnTile, split_axis_reductions
from .cut import fitting
from ..ir import shape_rules
from .decompose import decompose
from .errors import UNSUPPORTED, EmitError, refused, unsupported
from .gm import GVal
from .index import OPS as INDEX_OPS, IndexLaunch, IndexPlanner
from .quant import QUANT_OPS, lower_quant
from .vector import CTYPE, ES, HONOURED_ATTRS, REDUCE, VECTOR_OPS, Load, Segment, SegmentEmitter, Store
from .vector_int import MASK_OF_BYTES

__all__ = ["EmitError", "emit_program", "UB_BUDGET", "CTYPE"]

UB_BUDGET = 184 * 1024  # emitter budget (ascendc.md §1.2 / §15)
MAX_DIMS = 8
MAX_SEGMENT_LOADS = 8  # a fused kernel reads at most this many GM values: one VECIN queue buffer each (ascendc.md §5.1)
SUPPORTED_DTYPES = ("fp32", "fp16", "int32", "bf16")
SUPPORTED_DTYPES += ("int16", "uint16", "int8", "uint8", "uint32")  # the integer family: vector_int.py
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1  # the control program's integers
INDEX_LIMIT = 2 ** 31
"""The kernels count rows, columns, bytes of a row and tiles in ``uint32_t`` and step them by a
tile or a core count (``i += GetBlockNum()``, ``r0 + tile``): below 2**31 those sums never wrap."""


def emit_program(program: ir.Program, *, line_directives: bool = True, budget: int = UB_BUDGET,
                 npu: bool = False) -> dict:
    """Return ``{file name: text}``: the kernels, ``control.cpp`` and ``manifest.json``; with ``npu``
    also ``control_npu.cpp``, the same control program for an NPU (ACL, g++)."""
    return _Planner(program, line_directives, budget).run(npu)


def _count(n: int) -> str:
    """A size for a message: exact up to 2**64, beyond it in the diagnostics' scientific form."""
    return str(n) if -(2 ** 64) <= n <= 2 ** 64 else format_count(n)


def _names_in_ops(block: ir.Block) -> set:
    out = set()
    for op in block.ops:
        for x in op.operands:
            for y in (x if isinstance(x, tuple) else (x,)):
                if isinstance(y, ir.Value):
                    out.add(y.name)
    return out


class _Planner:
    def __init__(self, program: ir.Program, line_directives: bool, budget: int):
        self.p = program
        self.lines_on = line_directives
        self.budget = budget
        self.source = dict(program.attrs).get("source", f"{program.name}.py")
        # kernel symbols start with the program's name as a C identifier (legacy bodies are named
        # by strings such as "MATMUL#2")
        self.symbol = re.sub(r"\W", "_", program.name)
        if not self.symbol or self.symbol[0].isdigit():
            self.symbol = "k_" + self.symbol
        self.params = {p.name: p for p in program.params}
        self.declared = shape_rules.declared_shapes(program)  # the IR's shapes, for pypto's shape rules
        self.buffers: list[gm.Buffer] = []
        self.named: dict[str, gm.Buffer] = {}
        for p in program.params:
            if p.kind == "tensor":
                self._add_buffer(p.name, "param", p.type.dtype, p.type.shape)
        for loc in program.locals:
            self._add_buffer(loc.name, "local", loc.type.dtype, loc.type.shape)
        self.files: dict = {}
        self.kernels: list = []
        self.returns: list = []
        self.ws_count = 0
        self.L: list = []
        self.decls: list = []
        self.sites: dict = {}  # (line, col, end_line, end_col) -> index: the manifest's "sites"
        # names each block's ops use, to know which values must outlive their block
        self.block_uses = {b.name: _names_in_ops(b) for b in ir.blocks(program)}
        self.returned = set()
        for node in ir.walk(program.body):
            if isinstance(node, ir.Return):
                self.returned |= {v.name for v in node.values}

    def _add_buffer(self, name, kind, dtype, shape) -> gm.Buffer:
        b = gm.Buffer(name, kind, dtype, tuple(shape), len(self.buffers))
        self.buffers.append(b)
        if kind in ("param", "local"):
            self.named[name] = b
        return b

    # -- control tree --------------------------------------------------------------------
    def run(self, npu: bool = False) -> dict:
        for p in self.p.params:
            if p.kind == "scalar" and p.value is not None and not isinstance(p.value, (int, float)):
                unsupported(f"scalar parameter {p.name} of type {type(p.value).__name__}")
        self.region(self.p.body, {}, set(), 2)
        manifest = {
            "program": self.p.name,
            "entry": "pypto_run", "error": "pypto_last_error", "traffic": "pypto_traffic",
            "tensors": [p.name for p in self.p.params if p.kind == "tensor"],
            "outputs": [p.name for p in self.p.params if p.kind == "tensor" and p.is_output],
            "scalars": [p.name for p in self.p.params if p.kind == "scalar"],
            "buffers": [{"name": b.name, "kind": b.kind, "dtype": b.dtype,
                         "shape": [gm.const(d) for d in b.shape]} for b in self.buffers],
            "returns": self.returns,
            "kernels": self.kernels,
            "sites": [list(span) for span in self.sites],
        }
        layout = abi.layout_digest(manifest, abi.param_layout(self.p))
        self.files["control.cpp"] = self._control_text(layout)
        if npu:
            self.files["control_npu.cpp"] = self._control_text(layout, npu=True)
        self.files["manifest.json"] = json.dumps(manifest, indent=1) + "\n"
        return self.files

    def region(self, nodes, env: dict, scope: set, depth: int):
        ind = "    " * depth
        L = self.L
        for node in nodes:
            if isinstance(node, ir.Loop):
                v = f"v_{node.var}"
                start = self.cexpr(node.start, scope, node.span)
                stop = self.cexpr(node.stop, scope, node.span)
                step = self.cexpr(node.step, scope, node.span)
                L.append(self.site(node.span, ind))
                L.append(f"{ind}{{  // loop {node.var} ({node.name or node.kind})")
                L.append(f"{ind}    const int64_t stop_{node.var} = {stop}, step_{node.var} = {step};")
                L.append(f"{ind}    if (step_{node.var} == 0) pypto_host::Fault(\"loop {node.var}: zero step\");")
                L.append(f"{ind}    for (int64_t {v} = {start}; step_{node.var} > 0 ? {v} < stop_{node.var} : "
                         f"{v} > stop_{node.var}; {v} += step_{node.var}) {{")
                self.region(node.body, env, scope | {node.var}, depth + 2)
                L.append(f"{ind}    }}")
                L.append(f"{ind}}}")
            elif isinstance(node, ir.Branch):
                L.append(self.site(node.span, ind))
                L.append(f"{ind}if ({self.cexpr(node.cond, scope, node.span)}) {{")
                self.region(node.then, dict(env), scope, depth + 1)
                if node.orelse:
                    L.append(f"{ind}}} else {{")
                    self.region(node.orelse, dict(env), scope, depth + 1)
                L.append(f"{ind}}}")
            elif isinstance(node, ir.Block):
                _BlockPlanner(self, node, env, scope, depth).run()
            elif isinstance(node, ir.Return):
                self._return(node, env, scope, depth)
                L.append(f"{ind}throw PyptoReturn{{}};")
            else:
                unsupported(f"control node {type(node).__name__}")

    def _return(self, node: ir.Return, env: dict, scope: set, depth: int):
        if self.returns:
            unsupported("a second Return in the control tree (returns on several paths)")
        for v in node.values:
            g = env.get(v.name)
            if not isinstance(g, GVal):
                raise EmitError(f"returned value %{v.name} is not defined")
            if gm.const(g.vr) != g.rows or gm.const(g.vc) != g.cols or g.vg is not None:
                unsupported(f"returning the partially valid value %{v.name}")
            if g.buf.kind != "ret" or g.rows * g.cols != math.prod(g.shape or (1,)) \
                    or gm.const(g.offset) != 0:
                unsupported(f"returning %{v.name}, which is not a whole computed value (return a computed value)")
            self.returns.append({"buffer": g.buf.name, "shape": list(g.shape), "dtype": g.dtype})

    # -- scalar expressions --------------------------------------------------------------
    def cexpr(self, e, scope: set, span=None) -> str:
        e = gm.as_expr(e)
        if isinstance(e, ir.Const):
            if isinstance(e.value, bool):
                return "1" if e.value else "0"
            if isinstance(e.value, int):
                if not INT64_MIN <= e.value <= INT64_MAX:
                    raise EmitError(f"the integer {format_count(e.value)} does not fit in int64, the type of the "
                                    "control program's scalars", span)
                return f"INT64_C({e.value})"
            unsupported(f"non-integer scalar {e.value!r} in an offset, extent or condition", span)
        if isinstance(e, ir.Var):
            if e.name in scope:
                return f"v_{e.name}"
            if e.name in self.params and self.params[e.name].kind == "scalar":
                return f"s_{e.name}"
            raise EmitError(f"unknown scalar {e.name!r}", span)
        if isinstance(e, ir.ShapeOf):
            b = self.named.get(e.tensor)
            if b is None or b.kind != "param":
                unsupported(f"shape of {e.tensor!r}", span)
            return f"dims[{b.index * MAX_DIMS + e.axis}]"
        if isinstance(e, ir.Read):
            b = self.named.get(e.tensor)
            if b is None or b.dtype != "int32":
                unsupported(f"scalar read from {e.tensor!r} (only int32 tensors)", span)
            lin = gm.C(0)
            for k, ix in enumerate(e.index):
                inner = gm.C(1)
                for d in b.shape[k + 1:]:
                    inner = gm.mul(inner, d)
                lin = gm.add(lin, gm.mul(ix, inner))
            return (f"pypto_read_i32(tensors[{b.index}], {self.cexpr(lin, scope, span)}, "
                    f"{self.cexpr(b.numel, scope, span)})")
        if isinstance(e, ir.BinExpr):
            a, b = self.cexpr(e.a, scope, span), self.cexpr(e.b, scope, span)
            if e.op in ("+", "-", "*", "==", "!=", "<", "<=", ">", ">="):
                return f"({a} {e.op} {b})"
            if e.op == "//":
                return f"pypto_floordiv({a}, {b})"
            if e.op == "%":
                return f"pypto_floormod({a}, {b})"
            if e.op in ("min", "max"):
                return f"pypto_{e.op}({a}, {b})"
            if e.op in ("and", "or"):
                return f"({a} {'&&' if e.op == 'and' else '||'} {b})"
            unsupported(f"scalar operator {e.op!r}", span)
        if isinstance(e, ir.UnExpr):
            a = self.cexpr(e.a, scope, span)
            return f"(-{a})" if e.op == "-" else f"(!{a})"
        unsupported(f"scalar expression {e!r}", span)

    # -- kernels -------------------------------------------------------------------------
    def new_ws(self, dtype: str, shape: tuple, returned: bool) -> gm.Buffer:
        self.ws_count += 1
        kind = "ret" if returned else "ws"
        return self._add_buffer(f"{kind}{self.ws_count}", kind, dtype, tuple(shape))

    def launch(self, seg, scope: set, depth: int):
        if isinstance(seg, IndexLaunch) or type(seg).__name__ in ("ScalarStore", "RandomLaunch"):
            return seg.launch(self, scope, depth)
        if isinstance(seg, _CubeLaunch):
            return self._launch_cube(seg, scope, depth)
        if isinstance(seg, _LayoutLaunch):
            from .layout import emit_permute_kernel, plan

            a = seg.args
            p = plan(a["shape"], a["perm"])
            rows, cols = a["shape"][p["ra"]], a["shape"][-1]
            numel = math.prod(a["shape"])
            self._check_extents(seg.regions, seg.span, (("rows", rows), ("columns", cols),
                                                         ("matrices", numel // max(1, rows * cols)),
                                                         ("elements", numel),
                                                         ("elements read", seg.regions[0].rows * (gm.const(seg.regions[0].ld) or 0))))
            text, info = emit_permute_kernel(budget=self.budget, **seg.args)
            src, dst = seg.regions
            fields = [self.cexpr(e, scope, seg.span) for e in (src.offset, src.buf.numel, dst.offset, dst.buf.numel,
                                                                 src.vr, src.vc, src.ld)]
            return self._launch_fixed(seg.name, text, info, seg.regions, fields, seg.label, scope, depth, seg.span)
        em = SegmentEmitter(seg, self.source, self.lines_on, self.budget)
        try:
            text, info = em.emit()
        except EmitError as exc:  # the kernel emitter's own errors are located at the segment's first op
            raise EmitError(exc.message, exc.span or seg.span) from None
        regions = [r.gval for r in seg.loads + seg.stores]
        rows, cols = info["shape"]
        self._check_extents(regions, seg.span, (("rows", rows), ("columns", cols), ("tiles", info["tiles"])))
        self.files[f"{seg.name}.cpp"] = text
        self.kernels.append(info)
        fields = []
        for g in regions:
            fields += [self.cexpr(g.offset, scope, seg.span), self.cexpr(g.vr, scope, seg.span),
                       self.cexpr(g.vc, scope, seg.span), self.cexpr(g.buf.numel, scope, seg.span)]
        fields += [self.cexpr(g.ld, scope, seg.span) for g in regions if not gm.static_ld(g)]  # after the 4 per region
        fields += [self.cexpr(stride, scope, seg.span) for g in regions for _, stride in g.outer]  # then the levels
        fields += [self.cexpr(g.vg[1], scope, seg.span) for g in regions if g.vg is not None]  # valid rows per level
        self._launch_lines(seg.name, info["num_blocks"], regions, fields, seg.label, depth, seg.span)

    def _launch_cube(self, cl, scope: set, depth: int):
        from .cube import emit_matmul_kernel

        spec = cl.spec
        self._check_extents(cl.regions, cl.span, (("rows (m)", spec.m), ("columns (n)", spec.n), ("k", spec.k),
                                                  ("matrices", spec.batch)))
        try:
            text, info = emit_matmul_kernel(cl.spec)
        except EmitError as exc:
            raise EmitError(exc.message, exc.span or cl.span) from None
        self._check_extents((), cl.span, (("tiles", info["tiles"]),))
        regions = cl.regions
        info = dict(info, kind="cube")
        fields = [self.cexpr(g.offset, scope, cl.span) for g in regions]
        if spec.valid_batches:
            fields.append(self.cexpr(cl.valid_batches, scope, cl.span))
        if spec.valid_mnk:
            fields += [self.cexpr(e, scope, cl.span) for e in cl.valid_mnk]
        self._launch_fixed(cl.name, text, info, regions, fields, cl.label, scope, depth, cl.span)

    def _check_extents(self, regions, span, counts):
        """Refuse a kernel whose sizes the emitted code cannot hold, rather than emit a literal g++
        truncates or a loop that never ends: a tensor of more bytes than int64 counts, or
        ``counts`` ((what, n) pairs), or the bytes of a region's row, at or over INDEX_LIMIT."""
        counts = list(counts)
        for g in regions:
            size = ir.DTYPE_BYTES.get(g.dtype, 8)
            n = gm.const(g.buf.numel)
            if n is not None and n * size > INT64_MAX:
                what = f"tensor @{g.buf.name}" if g.buf.kind in ("param", "local") else "an intermediate value"
                shape = ", ".join("?" if d is None else _count(d) for d in map(gm.const, g.buf.shape))
                raise EmitError(f"{what} of shape [{shape}] has {_count(n)} elements ({_count(n * size)} bytes): more "
                                "than int64, the type of GM sizes and offsets, can count", span)
            if gm.static_ld(g):  # a dynamic one is a real tensor's, which fits
                counts.append((f"bytes in a row of @{g.buf.name}" if g.buf.kind in ("param", "local") else
                               "bytes in a row", g.ld * size))
        for what, n in counts:
            if n >= INDEX_LIMIT:
                raise EmitError(f"a kernel of {_count(n)} {what}: the emitted kernels count rows, columns, the "
                                "bytes of a row and tiles in uint32_t, below 2**31 (split the work over a "
                                "pypto.loop of views)", span)

    def _launch_fixed(self, name, text, info, regions, fields, label, scope, depth, span):
        """A kernel with GM regions (inputs..., output last) and a flat int64 tiling array."""
        self.files[f"{name}.cpp"] = text
        info = dict(info, file=f"{name}.cpp", block=label.split()[0],
                    tiling=[{"index": i, "tensor": g.buf.name, "buffer_kind": g.buf.kind,
                             "dir": "out" if i == len(regions) - 1 else "in"} for i, g in enumerate(regions)])
        self.kernels.append(info)
        self._launch_lines(name, info["num_blocks"], regions, fields, label, depth, span)

    def _launch_lines(self, name, num_blocks, regions, fields, label, depth, span):
        """Control-program lines for one launch: its tiling array and the Launch call."""
        ind = "    " * depth
        args = ", ".join(f"(GM_ADDR)tensors[{g.buf.index}]" for g in regions)
        self.L.append(f"{ind}{{  // {label}: kernel {name}")
        self.L.append(self.site(span, ind + "    "))
        self.L.append(f"{ind}    int64_t tiling[{len(fields)}] = {{{', '.join(fields)}}};")
        self.L.append(f"{ind}    pypto_host::Launch({num_blocks}, {name}, {args}, (GM_ADDR)tiling);")
        self.L.append(f"{ind}    pypto_account();")
        self.L.append(f"{ind}}}")
        self.decls.append(f'extern "C" __global__ __aicore__ void {name}('
                          + ", ".join("GM_ADDR" for _ in regions) + ", GM_ADDR tiling);")

    def site(self, span, ind: str) -> str:
        """The control-program line saying what runs next: ``pypto_site`` indexes the manifest's
        "sites" (source spans), so a fault is reported at the op, loop or branch it happened in."""
        k = -1 if span is None else self.sites.setdefault((span.line, span.col, span.end_line, span.end_col),
                                                           len(self.sites))
        return f"{ind}pypto_site = {k};"

    def _control_text(self, layout: str, npu: bool = False) -> str:
        """The control program; ``layout`` is the digest of its launch ABI (``abi.layout_digest``).
        ``npu``: the same program against ``npu/pypto_npu_runtime.h`` (ACL on the host CPU): each
        kernel a ``PYPTO_NPU_KERNEL`` (its bisheng-built launcher), each tiling array copied to the
        device on the stream (``pypto_host::Tiling``), entry ``pypto_npu_run(stream, ...)``."""
        decls = list(dict.fromkeys(self.decls))
        sparams = [p for p in self.p.params if p.kind == "scalar"]
        where = "the host CPU, launching on an NPU through ACL" if npu else "the host / AI CPU"
        L = [f"// Generated by pypto-ast: control program of {self.p.name} ({self.source}); runs on {where}.",
             '#include "pypto_npu_runtime.h"' if npu else '#include "kernel_operator.h"', ""]
        if any("std::snprintf" in line for line in self.L):  # a check's message with run-time numbers
            L.insert(1, "#include <cstdio>")
        if npu:
            decls = [f"PYPTO_NPU_KERNEL({_KERNEL_NAME.search(d).group(1)});" for d in decls]
        L += decls
        L += ["", "// What runs now, an index into the manifest's \"sites\" (set before every loop, branch, region check",
              "// and launch): a fault is reported at that source span.",
              "static thread_local int pypto_site = -1;",
              'extern "C" int pypto_fault_site() { return pypto_site; }']
        L += ["", "namespace {", "uint64_t g_traffic[4];", "struct PyptoReturn {};",
              "struct PyptoArgs { void** tensors; const int64_t* scalars; const int64_t* dims; };",
              "inline int64_t pypto_floordiv(int64_t a, int64_t b) { int64_t q = a / b; "
              "return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }",
              "inline int64_t pypto_floormod(int64_t a, int64_t b) { return a - pypto_floordiv(a, b) * b; }",
              "inline int64_t pypto_min(int64_t a, int64_t b) { return a < b ? a : b; }",
              "inline int64_t pypto_max(int64_t a, int64_t b) { return a < b ? b : a; }",
              "inline int64_t pypto_read_i32(void* t, int64_t i, int64_t n) { return pypto_host::ReadInt32(t, i, n); }",
              "void pypto_account()", "{", "    const auto& t = pypto_host::Traffic();",
              "    g_traffic[0] += t.gmToUbBytes; g_traffic[1] += t.ubToGmBytes;",
              "    g_traffic[2] += t.gmToUbCalls; g_traffic[3] += t.ubToGmCalls;", "}", "",
              "// The program itself; a fault propagates to pypto_host::RunGuarded in pypto_run.",
              "void pypto_body(void* ctx)", "{",
              "    void** tensors = static_cast<PyptoArgs*>(ctx)->tensors;",
              "    const int64_t* scalars = static_cast<PyptoArgs*>(ctx)->scalars;",
              "    const int64_t* dims = static_cast<PyptoArgs*>(ctx)->dims;",
              "    (void)tensors; (void)scalars; (void)dims;"]
        for i, p in enumerate(sparams):
            L.append(f"    const int64_t s_{p.name} = scalars[{i}];")
            L.append(f"    (void)s_{p.name};")
        L.append("    try {")
        L += [_npu_launch(line) for line in self.L] if npu else self.L
        L += ["    } catch (const PyptoReturn&) {", "    }", "}", "}  // namespace", "",
              'extern "C" const char* pypto_last_error() { return pypto_host::LastError(); }',
              'extern "C" void pypto_traffic(uint64_t* out) { for (int k = 0; k < 4; ++k) out[k] = g_traffic[k]; }',
              "// The launch ABI this library was built for (pypto_ast/emit/abi.py): checked before a launch.",
              f'extern "C" const char* pypto_layout() {{ return "{layout}"; }}', "",
              'extern "C" int pypto_run(void** tensors, const int64_t* scalars, const int64_t* dims)', "{",
              "    for (int k = 0; k < 4; ++k) g_traffic[k] = 0;",
              "    PyptoArgs args{tensors, scalars, dims};",
              "    return pypto_host::RunGuarded(pypto_body, &args);", "}"]
        if npu:  # the stream first: launches are queued on it, nothing waits for them
            L[-6] = 'extern "C" int pypto_npu_run(void* stream, void** tensors, const int64_t* scalars, const int64_t* dims)'
            L.insert(-3, "    pypto_host::SetStream(stream);")
        return "\n".join(L) + "\n"



_HOST_TILING = ", (GM_ADDR)tiling);"
_KERNEL_NAME = re.compile(r"void (\w+)\(")


def _npu_launch(line: str) -> str:
    """A control-program line for the NPU: a launch's tiling array goes to the device first."""
    if "pypto_host::Launch(" in line and line.endswith(_HOST_TILING):
        return line[: -len(_HOST_TILING)] + ", pypto_host::Tiling(tiling, sizeof tiling));"
    return line


def _static_shape(shape):
    dims = tuple(gm.const(d) for d in shape)
    return None if None in dims else dims


def res_name(op: ir.Op) -> str:
    return op.results[0] if op.results else "_"


def _whole_matrices(g: GVal):
    """For a batch of matrices (``g``'s last two axes) whose valid data is a number of whole
    matrices (all columns valid, the valid rows a multiple of a matrix's rows): that number as an
    Expr; else None."""
    rows, cols = g.shape[-2], g.shape[-1]
    return gm.quotient(g.vr, rows) if gm.const(g.vc) == cols else None


def _where(span):
    """A span as a key: (line, column) of the op's source."""
    return (getattr(span, "line", None), getattr(span, "col", None)) if span is not None else None


class _BlockPlanner:
    """Split one compute block into kernels; values live in UB inside a segment, in GM across."""

    def __init__(self, planner: _Planner, block: ir.Block, env: dict, scope: set, depth: int):
        self.P, self.block, self.env, self.scope, self.depth = planner, block, env, scope, depth
        self.cur: Segment | None = None
        self.nseg = 0
        self.ub: dict = {}  # value name -> Segment holding it in UB
        self.vext: dict = {}  # value name -> (vr Expr, vc Expr)
        self.vlevel: dict = {}  # value name -> gm.GVal.vg (valid rows per level) where it has one
        self.nokeep: set = set()  # reductions without keepdim (shape [R], stored per row)
        self.colreduce: set = set()  # reductions over the rows ([R, C] -> [1, C])
        self.front_valid: dict = {}  # a reduction axis moved to the front: (source valid dims, axis)
        self.done: list = []  # closed segments, launched in order at the end
        self.checks: list = []  # (span, control-program line): region checks, run before the block's kernels
        self.conv_views: dict = {}  # views a conv reads through N-D strides (conv.py NdView)
        self.index = IndexPlanner(self)  # argmax, sort, gather, scatter, scans: kernels of their own (index.py)

    # -- segment management --------------------------------------------------------------
    def seg(self) -> Segment:
        if self.cur is None:
            self.nseg += 1
            name = f"{self.P.symbol}_{self.block.name}_k{self.nseg}"
            self.cur = Segment(name=name, label=f"{self.block.name} kernel {self.nseg}")
        return self.cur

    def close(self):
        if self.cur is not None:
            self.done.append(self.cur)
            self.cur = None

    def used_later(self, name: str) -> bool:
        if name in self.P.returned:
            return True
        return any(name in uses for b, uses in self.P.block_uses.items() if b != self.block.name)

    def materialize(self, name: str, span=None) -> GVal:
        """Store a UB value to a GM workspace (in the segment that computes it)."""
        g = self.env.get(name)
        if isinstance(g, GVal):
            return g
        seg = self.ub[name]
        dt = seg.dtype[name]
        rows, cols = seg.shape2[name]
        shape = (rows,) if name in self.nokeep else self._ir_shape.get(name, (rows, cols))
        buf = self.P.new_ws(dt, shape, name in self.P.returned)
        vr, vc = self.vext[name]
        g = GVal(buf, gm.C(0), rows, cols, cols, vr, vc, dt, tuple(shape), vg=self.vlevel.get(name))
        seg.stores.append(Store(name, g))
        seg.written.add(buf.name)
        self.env[name] = g
        del self.ub[name]
        if seg is self.cur:
            self.close()
        return g

    # -- the walk ------------------------------------------------------------------------
    def run(self):
        self._ir_shape = {}
        named = {name: tuple(gm.const(d) for d in b.shape) for name, b in self.P.named.items()}
        static = {n: s for n, s in named.items() if None not in s}
        self.origin = {_where(op.span): op.opcode for op in self.block.ops if op.span is not None}
        dtypes = {name: b.dtype for name, b in self.P.named.items()}
        ops = self.ops = split_axis_reductions(decompose(self.block.ops, static, dtypes), static)
        for op in ops:
            for r, t in zip(op.results, op.types):
                dims = tuple(gm.const(d) for d in t.shape)
                if None not in dims:
                    self._ir_shape[r] = dims
        for op in ops:
            self.op(op)
        # values needed by later blocks or returned: to GM
        for name in list(self.ub):
            if self.used_later(name):
                self.materialize(name)
        self.close()
        ind = "    " * self.depth
        for span, line in self.checks:  # every view and store of the block, as the interpreter checks them
            self.P.L.append(self.P.site(span, ind))
            self.P.L.append(ind + line)
        done = []  # a segment no tile plan fits: consecutive kernels through GM (cut.py)
        for seg in self.done:
            done += fitting(seg, lambda dt, shape: self.P.new_ws(dt, shape, False), self.vext, self.P.source,
                            self.P.budget) if isinstance(seg, Segment) and seg.stores else [seg]
        for seg in done:  # kernels whose results nobody stores are dead
            if seg.stores:
                self.P.launch(seg, self.scope, self.depth)
        for name in [n for n, v in self.env.items() if not isinstance(v, GVal)]:
            del self.env[name]

    def gval_of(self, x, span, levels: bool = False) -> GVal:
        """The GM value of ``x``; one valid per level of rows (gm.GVal.vg) only where ``levels``
        says the caller (the vector kernels) carries it."""
        g = self._gval_of(x, span)
        if g.vg is not None and not levels:
            err = self.conv_views.get(x.name)
            what = (err.error.message.split(": " + UNSUPPORTED)[0] if err is not None else
                    f"%{x.name}, a {g.dtype} value whose first rows of every {g.vg[0]} are valid (a count of valid "
                    "rows per level, which only the vector kernels' copies, elementwise ops and last-axis "
                    "reductions carry)")
            unsupported(f"op '{getattr(self, 'opcode', None)}' reading the {what}", span)
        return g

    def _gval_of(self, x, span) -> GVal:
        if isinstance(x, ir.TensorRef):
            b = self.P.named.get(x.name)
            if b is None:
                raise EmitError(f"unknown tensor @{x.name}", span)
            return gm.whole(b, span)
        if isinstance(x, ir.Value):
            if x.name in self.ub:
                return self.materialize(x.name, span)
            g = self.env.get(x.name)
            if g is None and x.name in self.conv_views:  # only a conv reads it: name the op that does
                err = self.conv_views[x.name].error
                reader = getattr(self, "opcode", None)
                raise EmitError(f"op '{reader}' reading the {err.message}" if reader else err.message, err.span, err.code)
            if g is None:
                raise EmitError(f"value %{x.name} is not defined here", span)
            return g
        unsupported(f"operand {x!r}", span)

    def flat_gval_of(self, x, span) -> GVal:
        """``gval_of`` for consumers that read uniformly strided rows only: a region in several
        levels of row stride is copied compact first (``compact``)."""
        g = self.gval_of(x, span)
        return self.compact(g, span) if g.outer else g

    def compact(self, g: GVal, span) -> GVal:
        """Copy a GM region through UB into a new contiguous workspace of its shape (a vector
        kernel of one load and one store; the valid extent comes along) and return that."""
        if g.rows < 0:
            unsupported("copying a dynamically shaped value", span)
        self.ncompact = getattr(self, "ncompact", 0) + 1
        key = f"packed{self.ncompact}"
        buf = self.P.new_ws(g.dtype, g.shape, False)
        self.env[key] = g
        self._ir_shape[key] = g.shape
        self.store(ir.Value(key), buf, tuple(gm.C(0) for _ in g.shape), span)
        del self.env[key]
        self.close()
        return GVal(buf, gm.C(0), g.rows, g.cols, g.cols, g.vr, g.vc, g.dtype, g.shape, vg=g.vg)

    def op(self, op: ir.Op):
        code, span = op.opcode, op.span
        # the user's op being planned, named when it reads what it cannot (not the steps it is composed of)
        self.opcode = getattr(self, "origin", {}).get(_where(span), code)
        found = shape_rules.refusal(op, self.P.declared)
        if found is not None:
            refused(found[0], found[1], span)
        if code in INDEX_OPS or self.index.absorbs(op):
            self.index.op(op)
            return
        if code == "softmax" and self._softmax_across(op):
            return
        if code in REDUCE and self._inner_reduce(op):
            return
        if code == "view":
            src = op.operands[0]
            named = isinstance(src, ir.TensorRef)
            g = self.gval_of(src, span)
            if op.attr("dtype") is not None:
                unsupported("view with a dtype", span)
            shape = tuple(gm.const(d) if gm.const(d) is not None else d for d in op.attr("shape"))
            valid = op.attr("valid_shape")
            if any(not isinstance(d, int) for d in shape) and valid is not None:
                unsupported(f"a view of dynamic shape with valid_shape", span)
            try:
                self.env[op.results[0]] = gm.view(g, tuple(op.attr("offsets")), shape, valid, span, named)
                if self.env[op.results[0]].vg is not None:  # a conv reads it by N-D strides, the others refuse
                    try:
                        gm.flat_valid(tuple(valid), shape, span, f"view of {g.dtype} @{g.buf.name}")
                    except EmitError as exc:
                        from .strided import nd_view
                        self.conv_views[op.results[0]] = nd_view(g.buf, tuple(op.attr("offsets")), shape, valid, exc)
            except EmitError as exc:  # rows not evenly spaced: only a conv reads such a view (conv.py)
                if not (named and ("not evenly spaced" in exc.message or "not a row prefix" in exc.message)):
                    raise
                from .strided import nd_view
                self.conv_views[op.results[0]] = nd_view(g.buf, tuple(op.attr("offsets")), shape, valid, exc)
            self._check_view(src, g, named, tuple(op.attr("offsets")), shape, valid, span)
            return
        if code == "reshape":
            self.env[op.results[0]] = self.reshape(op)
            return
        if code == "unsqueeze":
            g = self.gval_of(op.operands[0], span)
            shape = gm.static_dims(op.types[0].shape, span, code)
            if not g.shape or shape[-1] != g.shape[-1]:  # a new last axis: every element a row (a reshape)
                self.env[op.results[0]] = self._reshaped(g, shape, None, span)
            else:
                self.env[op.results[0]] = gm.unsqueeze(g, shape, span)
            return
        if code == "assemble":
            self.assemble(op)
            return
        if code == "concat":
            self.concat(op)
            return
        if code == "matmul":
            self.matmul(op)
            return
        if code == "conv":
            from .conv import plan_conv
            plan_conv(self, op)
            return
        if code == "transpose":
            self.transpose(op)
            return
        if code in QUANT_OPS:  # rewritten into vector ops (quant.py)
            for step in lower_quant(self, op):
                self.op(step)
            return
        if code == "store_scalar":
            self.store_scalar(op)
            return
        if code in ("uniform", "normal"):
            self.random(op)
            return
        if code not in VECTOR_OPS:
            unsupported(f"op '{code}'", span)
        self.vector_op(op)

    # -- reshape -------------------------------------------------------------------------
    def reshape(self, op: ir.Op) -> GVal:
        """A reshape is a new shape over the same GM data where that data is contiguous; a strided
        or multi-level region is copied compact first (``compact``).  A partially valid input
        must hold a row-major prefix of its block, and the result's valid extent is
        ``valid_shape`` or that prefix: the control program checks both as the interpreter does
        (``gm.reshape_checks``).  A dynamic shape (``inplace=True``, pypto's rule) is a view of a
        contiguous fully valid value whose rows the control program counts."""
        span = op.span
        g = self.gval_of(op.operands[0], span, levels=True)
        dims = tuple(gm.as_expr(d) for d in op.types[0].shape)
        if g.vg is not None and not op.attr("front"):
            return self._level_reshape(g, tuple(gm.const(d) for d in dims), op.attr("valid_shape"), span)
        if op.attr("front"):  # the end of a reduction over an axis moved to the front (``_front``)
            shape = tuple(gm.const(d) for d in dims)
            vin, k = self.front_valid[op.attr("front")]
            valid = vin[:k] + ((gm.C(1),) if len(shape) == len(vin) else ()) + vin[k + 1:]  # keepdim or not
            g = self._reshaped(GVal(g.buf, g.offset, g.rows, g.cols, g.ld, gm.C(g.rows), gm.C(g.cols), g.dtype, g.shape),
                               shape, None, span)
            vr, vc = gm.flat_valid(valid, shape, span)
            return GVal(g.buf, g.offset, g.rows, g.cols, g.ld, vr, vc, g.dtype, g.shape)
        if any(gm.const(d) is None for d in dims):
            if not gm.contiguous(g) or (g.rows >= 0 and (gm.const(g.vr) != g.rows or gm.const(g.vc) != g.cols)):
                unsupported("a dynamic reshape of a strided or partially valid value", span)
            return gm.reshape_dynamic(g, dims, span)
        return self._reshaped(g, tuple(gm.const(d) for d in dims), op.attr("valid_shape"), span)

    def _reshaped(self, g: GVal, shape: tuple, valid_attr, span) -> GVal:
        if g.rows < 0:
            unsupported(f"reshape of a dynamically shaped value to the static shape {list(shape)}", span)
        unit = self._unit_reshape(g, shape, valid_attr, span)
        if unit is not None:
            return unit
        if not gm.contiguous(g):
            g = self.compact(g, span)
        vr, vc, checks = gm.reshape_valid(g, shape, valid_attr, span)
        for cond, message, values in checks:
            self._check_fault(cond, message, values, span)
        rows, cols = gm.flat2(shape)
        return GVal(g.buf, g.offset, rows, cols, cols, vr, vc, g.dtype, tuple(shape))

    def _level_reshape(self, g: GVal, shape: tuple, valid_attr, span) -> GVal:
        """A reshape of a value valid per level of rows (gm.GVal.vg): one that keeps the 2-D form
        (``_unit_reshape``), or one that makes each level one row (``[A, L, D]`` -> ``[A, L*D]``: the
        emitter's own step of a reduction over ``A``, axes.py), whose valid columns are the level's
        valid rows' elements.  Any other is refused."""
        unit = self._unit_reshape(g, shape, valid_attr, span) if None not in shape else None
        if unit is not None:
            return unit
        level = g.vg[0]
        if None not in shape and valid_attr is None and gm.flat2(shape) == (g.rows // level, level * g.cols) \
                and gm.const(g.vc) == g.cols:
            if not gm.contiguous(g):
                g = self.compact(g, span)
            rows, cols = gm.flat2(shape)
            return GVal(g.buf, g.offset, rows, cols, cols, gm.C(rows), gm.mul(g.vg[1], gm.C(g.cols)), g.dtype, tuple(shape))
        unsupported(f"op '{getattr(self, 'opcode', 'reshape')}' reshaping a {g.dtype} {list(g.shape)} value whose first "
                    f"rows of every {level} are valid to {list(shape)} (a count of valid rows per level)", span)

    def _unit_reshape(self, g: GVal, shape: tuple, valid_attr, span):
        """A reshape of a partially valid value that only inserts or drops axes of one index
        (``[T, 1, L]`` -> ``[T, L]``): each valid element in its place, as the interpreter's
        ``_unit_reshape_valid``; a valid_shape must be that region.  Keeping the last axis keeps the
        2-D form; a last axis of one index coming or going (``[T, L]`` valid ``[T, l]`` -> ``[T, L, 1]``:
        each element a row, valid in the first ``l`` rows of every ``L``) is a new 2-D form over the
        same contiguous data (``_unit_last``).  None for any other reshape."""
        full = gm.const(g.vr) == g.rows and gm.const(g.vc) == g.cols and g.vg is None
        if full or not g.shape or [d for d in g.shape if d != 1] != [d for d in shape if d != 1]:
            return None
        vin = g.vg[2] if g.vg is not None else gm.valid_dims(g.vr, g.vc, g.shape)
        if vin is None or any(d == 1 and gm.const(v) != 1 for d, v in zip(g.shape, vin)):
            return None
        kept = iter(v for d, v in zip(g.shape, vin) if d != 1)
        unit = tuple(next(kept) if d != 1 else gm.C(1) for d in shape)
        if valid_attr is not None:
            va = tuple(gm.as_expr(v) for v in valid_attr)
            self._check_fault(gm.all_of(gm.eq(a, b) for a, b in zip(va, unit)),
                              f"reshape: valid_shape {gm._dims_text(len(va))} is not the valid region "
                              f"{gm._dims_text(len(unit))} of the input", va + unit, span)
        if shape[-1] != g.shape[-1]:
            return self._unit_last(g, shape, unit, span)
        rows, cols = gm.flat2(shape)
        vg = (g.vg[0], g.vg[1], unit) if g.vg is not None else None
        return GVal(g.buf, g.offset, rows, cols, g.ld, g.vr, g.vc, g.dtype, tuple(shape), g.outer if rows == g.rows else (),
                    vg=vg) if not g.outer else None

    def _unit_last(self, g: GVal, shape: tuple, unit: tuple, span) -> GVal:
        """``g`` (contiguous first) seen as ``shape``, whose last axis of one index came or went, valid
        in ``unit``: the elements keep their order, so the 2-D form is new (rows of one element, or
        rows joined) and its valid extent is ``unit``'s, a row prefix or valid rows per level
        (``gm.level_valid``)."""
        if not gm.contiguous(g):
            g = self.compact(g, span)
        rows, cols = gm.flat2(shape)
        form = gm.level_valid(unit, shape)
        vr, vc, vg = form if form is not None else gm.flat_valid(unit, shape, span, "a reshape") + (None,)
        return GVal(g.buf, g.offset, rows, cols, cols, vr, vc, g.dtype, tuple(shape), vg=vg)

    def _check_fault(self, cond, message: str, values: tuple, span):
        """Queue a control-program check: fault with ``message`` (printf ``%lld`` for each of
        ``values``, Exprs) unless ``cond`` (an Expr) holds.  Nothing when it folds to true."""
        if gm.const(cond) == 1 or cond is True or (isinstance(cond, ir.Const) and cond.value is True):
            return
        args = "".join(f", static_cast<long long>({self.P.cexpr(v, self.scope, span)})" for v in values)
        text = message.replace("\\", "\\\\").replace('"', '\\"')
        self.checks.append((span, f"if (!({self.P.cexpr(cond, self.scope, span)})) {{ char m[512]; "
                                  f"std::snprintf(m, sizeof m, \"{text}\"{args}); pypto_host::Fault(m); }}"))

    def _softmax_across(self, op: ir.Op) -> bool:
        """softmax over the rows of a 2-D value, as pypto composes it (amax, sub, exp, sum, div in fp32,
        fp16/bf16 cast to fp32 and back): the reductions over the rows then emit it (one core,
        accumulated per tile); along the last axis it stays one fused row kernel (SegmentEmitter)."""
        t = op.types[0]
        rank, dim = len(t.shape), op.attr("dim", -1)
        if not isinstance(dim, int) or rank == 0 or dim % rank == rank - 1:
            return False
        if rank != 2:
            unsupported(f"'softmax' along axis {dim} of a rank-{rank} value (the last axis, or the rows of a 2-D value)",
                        op.span)
        r = op.results[0]
        full = ir.TensorType(t.shape, "fp32")
        kept = ir.TensorType((ir.Const(1), t.shape[1]), "fp32")

        def part(name: str, code: str, operands: tuple, attrs: dict, ty) -> ir.Value:
            self._ir_shape[name] = tuple(gm.const(d) for d in ty.shape)
            self.op(ir.Op((name,), code, operands, tuple(sorted(attrs.items())), (ty,), op.tile, op.cube_tile, op.span))
            return ir.Value(name)
        x = op.operands[0]
        if t.dtype != "fp32":
            x = part(f"{r}_fp32", "cast", (x,), {"dtype": "fp32"}, full)
        e = part(f"{r}_exp", "exp", (part(f"{r}_sub", "sub", (x, part(f"{r}_max", "amax", (x,), {"dim": 0, "keepdim": True},
                                                                       kept)), {}, full),), {}, full)
        q = part(r if t.dtype == "fp32" else f"{r}_div", "div",
                 (e, part(f"{r}_sum", "sum", (e,), {"dim": 0, "keepdim": True}, kept)), {}, full)
        if t.dtype != "fp32":
            part(r, "cast", (q,), {"dtype": t.dtype}, t)
        return True

    # -- region checks -------------------------------------------------------------------
    def _check_view(self, src, g: GVal, named: bool, offsets: tuple, shape: tuple, valid, span):
        """A view's region, checked by the control program as the interpreter checks it: its
        extent is the tensor's dims, or the source value's valid extent (its declared shape
        without ``valid_shape``, where the valid data is clipped instead)."""
        if named:
            kind, extent = gm.VIEW_OF_TENSOR, g.buf.shape
        else:
            kind = gm.VIEW_OF_VALUE
            extent = gm.valid_dims(g.vr, g.vc, g.shape) if valid is not None else g.shape
            if extent is not None and -1 in g.shape and valid is None:  # a dim known at run time (its Expr)
                extent = g.nd()
        name = f"@{src.name}" if named else f"%{src.name}"
        self._check_region(kind, name, offsets, shape, None if valid is None else tuple(valid), extent, span)

    def _check_region(self, kind: str, name: str, offsets, shape, valid, extent, span):
        """Queue ``pypto_host::CheckRegion`` for a region unless it certainly holds (a fault
        there names the op: the line runs under its site)."""
        n = len(shape)
        if extent is None or len(extent) != n or len(offsets) != n or (valid is not None and len(valid) != n):
            return  # not a region the interpreter's rules apply to as given; the emitter refuses or clips it
        if gm.region_holds(kind, offsets, shape, valid, extent):
            return

        def array(name, values):
            return f"{name}[{n}] = {{{', '.join(self.P.cexpr(v, self.scope, span) for v in values)}}}"

        arrays = [array("o", offsets), array("s", shape), array("e", extent)]
        if valid is not None:
            arrays.append(array("v", valid))
        self.checks.append((span, f"{{ const int64_t {', '.join(arrays)}; pypto_host::CheckRegion(pypto_host::Region::"
                                  f"{kind}, \"{name}\", {n}, o, s, {'v' if valid is not None else 'nullptr'}, e); }}"))

    # -- vector ops ----------------------------------------------------------------------
    def _shape2_of_result(self, op) -> tuple:
        t = op.types[0]
        dims = gm.static_dims(t.shape, op.span, "shape")
        if op.opcode in REDUCE or op.opcode == "prod":
            src = op.operands[0]
            n = len(gm.static_dims(self._operand_shape(src, op.span), op.span, "shape"))
            dim = op.attr("dim")
            dim = dim if isinstance(dim, int) else (dim[0] if isinstance(dim, tuple) and len(dim) == 1 else None)
            rows, cols = gm.flat2(gm.static_dims(self._operand_shape(src, op.span), op.span, "shape"))
            if dim is not None and n == 2 and dim % n == 0 and op.opcode in REDUCE:
                if not op.attr("keepdim"):
                    unsupported(f"'{op.opcode}' over the rows without keepdim", op.span)
                self.colreduce.add(op.results[0])
                return 1, cols
            if dim is None or (dim % n) != n - 1:
                unsupported(f"'{op.opcode}' along axis {op.attr('dim')!r} (only the last axis, or the rows of a 2-D value)",
                            op.span)
            if not op.attr("keepdim"):
                self.nokeep.add(op.results[0])
            return rows, 1
        return gm.flat2(dims)

    def _tile_on(self, op: ir.Op, span) -> tuple:
        """The vector tile ``op`` runs in, each axis at most the op's extent (its widest operand or
        result: a tile longer than an axis covers it once, as pypto tiles it; the models set
        ``[1, 64, 64, 64]`` on ``[T, 32, 2, 64]``, whose tile is ``[1, 32, 2, 64]``).  Axes of a
        dynamic extent or of one element (broadcast, maybe, against the kernel's other values: a
        ``[R, 1]`` scale does not make the kernel's tile one column), or a tile of another rank,
        are taken as set."""
        shapes = [t.shape for t in op.types] + [self._operand_shape(x, span) for x in op.operands
                                                 if isinstance(x, (ir.Value, ir.TensorRef))]
        tile = tuple(op.tile)
        extents = []
        for axis in range(len(tile)):
            dims = [gm.const(sh[axis]) for sh in shapes if len(sh) == len(tile)]
            extents.append(None if not dims or None in dims else max(dims))
        return tuple(t if e is None or e == 1 else min(t, e) for t, e in zip(tile, extents))

    def _operand_shape(self, x, span):
        if isinstance(x, ir.Value):
            if x.name in self._ir_shape:
                return self._ir_shape[x.name]
            g = self.env.get(x.name)
            if isinstance(g, GVal):
                return g.shape
        if isinstance(x, ir.TensorRef):
            return self.P.named[x.name].shape
        raise EmitError(f"unknown operand {x!r}", span)

    def _compatible(self, seg_shape, shapes) -> tuple | None:
        R, Cc = seg_shape if seg_shape else (1, 1)
        for r, c in shapes:
            if r != R and r != 1 and R != 1:
                return None
            if c != Cc and c != 1 and Cc != 1:
                return None
            R, Cc = max(R, r), max(Cc, c)
        return R, Cc

    def vector_op(self, op: ir.Op):
        span = op.span
        res = op.results[0]
        if len(op.results) != 1:
            unsupported(f"op '{op.opcode}' with {len(op.results)} results", span)
        dt = op.types[0].dtype
        if dt not in SUPPORTED_DTYPES and dt != "bool":
            unsupported(f"op '{op.opcode}' on dtype {dt}", span)
        for key, value in (op.attrs.items() if isinstance(op.attrs, dict) else op.attrs):
            if key not in HONOURED_ATTRS.get(op.opcode, ()) and value is not None:
                unsupported(f"op '{op.opcode}' with {key}={value!r}", span)
        shape2 = self._shape2_of_result(op)
        op = self._broadcast_views(op, shape2)
        for x in op.operands:
            if isinstance(x, ir.Value) and x.name in self.nokeep:
                unsupported(f"using %{x.name}, a reduction without keepdim, in another op (use keepdim=True)", span)
        # operands: where do they live, and which shapes join the kernel
        shapes = [shape2]
        for x in op.operands:
            if isinstance(x, ir.Value) and x.name in self.ub and self.ub[x.name] is self.cur:
                shapes.append(self.cur.shape2[x.name])
            elif isinstance(x, (ir.Value, ir.TensorRef)):
                g = self.gval_of(x, span, levels=True)  # a value of an earlier kernel goes to GM here
                if g.rows < 0:
                    unsupported(f"reading a dynamically shaped tensor whole ({x!r})", span)
                shapes.append((g.rows, g.cols))
        seg = self.seg()
        joined = self._compatible(seg.shape, shapes)
        hazard = any(isinstance(x, (ir.Value, ir.TensorRef)) and not (isinstance(x, ir.Value) and x.name in self.ub)
                     and self.gval_of(x, span, levels=True).buf.name in seg.written for x in op.operands)
        fresh = {self._key(x) for x in op.operands if isinstance(x, (ir.Value, ir.TensorRef))
                 and not (isinstance(x, ir.Value) and self.ub.get(x.name) is seg) and not seg.has(self._key(x))}
        crowded = bool(seg.ops) and len(seg.loads) + len(fresh) > MAX_SEGMENT_LOADS  # the VECIN queues (§5.1)
        # a reduction over the rows reads a full value of its kernel ([N, 1] summed over N in a kernel
        # of [N, M]: a kernel of its own, where that column is the full value)
        apart = res in self.colreduce and len(shapes) > 1 and joined is not None and joined != shapes[1]
        if joined is None or hazard or crowded or apart:
            for x in op.operands:  # values of the closing kernel that this op needs go to GM
                if isinstance(x, ir.Value) and x.name in self.ub:
                    self.materialize(x.name, span)
            self.close()
            seg = self.seg()
            joined = self._compatible(None, shapes)
            if joined is None:
                unsupported(f"op '{op.opcode}' mixing shapes {shapes} (only [R, C] with [R, 1], [1, C] broadcasts)", span)
        seg.shape = joined
        seg.span = seg.span or span
        if not seg.tile_rows and op.tile is not None:
            tile = self._tile_on(op, span)
            seg.tile_rows = max(1, math.prod(tile[:-1]))
            seg.tile_cols = tile[-1]
            seg.tile_own = isinstance(op.tile, OwnTile)
            seg.tile_set, seg.tile_span = tile, span
        exts, levels = [], []
        for x in op.operands:
            if isinstance(x, (ir.Value, ir.TensorRef)):
                key = self.load(x, span)
                exts.append((seg.shape2[key], self.vext[key]))
                vg = self.vlevel.get(key)  # the same rows of each level, whatever the columns' extent
                if vg is not None and seg.shape2[key][0] == shape2[0] and vg[:2] not in [v[:2] for v in levels]:
                    levels.append(vg)
        # the result's valid extent: the smallest among operands not broadcast along each axis
        # (an operand of extent 1 along an axis where the result has 1 is not broadcast)
        vr, vc = gm.C(shape2[0]), gm.C(shape2[1])
        for (r, c), (er, ec) in exts:
            if r == shape2[0]:
                vr = gm.emin(vr, er)
            if c == shape2[1]:
                vc = gm.emin(vc, ec)
        if op.opcode == "full" and op.attr("valid_shape") is not None:  # a created value's own valid extent
            vr, vc = gm.flat_valid(tuple(op.attr("valid_shape")), gm.static_dims(op.types[0].shape, span, "full"), span)
        self.vext[res] = (vr, vc)
        self.vlevel[res] = self._level_of(op, levels, span)
        operands = tuple(ir.Value(self._key(x)) if isinstance(x, (ir.Value, ir.TensorRef)) else x
                         for x in op.operands)
        seg.ops.append(ir.Op(op.results, op.opcode, operands, op.attrs, op.types, op.tile, op.cube_tile, op.span))
        seg.shape2[res] = shape2
        seg.dtype[res] = dt
        self.ub[res] = seg
        if res in self.colreduce:  # complete only after the last tile: to GM, then a new kernel
            seg.single_core = True
            self.materialize(res, span)

    def _level_of(self, op: ir.Op, levels: set, span):
        """The result's valid rows per level (gm.GVal.vg): its operands', computed row by row (an
        elementwise op, a reduction along the last axis); a reduction over the rows would count
        the invalid rows of each level, and operands of other levels do not line up."""
        if not levels:
            return None
        if len({v[0] for v in levels}) > 1:
            unsupported(f"op '{op.opcode}' on values valid in the first rows of levels of {sorted({v[0] for v in levels})} "
                        "rows", span)
        while len(levels) > 1:  # the valid extent of an elementwise result: the smallest of its operands'
            a, b = levels.pop(), levels.pop()
            levels.append((a[0], gm.emin(a[1], b[1]), tuple(gm.emin(x, y) for x, y in zip(a[2], b[2]))))
        checked = op.types[0].dtype.startswith(("int", "uint")) and op.opcode in ("div", "floordiv", "remainder", "fmod")
        if op.results[0] in self.colreduce or op.results[0] in self.nokeep or checked or op.opcode in (
                "prod", "arange", "cumsum", "triu", "tril"):
            level = levels[0]
            unsupported(f"op '{op.opcode}' over the rows of a {op.types[0].dtype} value whose first rows of every "
                        f"{level[0]} are valid (a count of valid rows per level)", span)
        return levels[0]

    def _broadcast_views(self, op: ir.Op, shape2: tuple) -> ir.Op:
        """``op`` with each operand broadcast along an axis its 2-D form cannot say ([A, 1, B]
        against [A, K, B]: neither [R, 1] nor [1, C]) read through a view of the result's shape
        instead: the operand's rows in one level of stride per leading axis of the result, of
        stride 0 along a broadcast axis (gm.GVal.outer; each row one DataCopyPad).  Only for
        operands of the result's rank and last axis, over static shapes."""
        if op.opcode in REDUCE or op.opcode in ("prod", "expand_clone", "softmax", "cast"):
            return op
        shape = _static_shape(op.types[0].shape)
        if shape is None or len(shape) < 3:
            return op
        operands = []
        for x in op.operands:
            if not isinstance(x, (ir.Value, ir.TensorRef)):
                operands.append(x)
                continue
            try:
                xs = _static_shape(self._operand_shape(x, op.span))
            except EmitError:  # a value only in UB, of an op's own lowering (quant.py): its 2-D form says it
                xs = None
            if (xs is None or len(xs) != len(shape) or xs == shape or xs[-1] != shape[-1]
                    or any(a != b and a != 1 for a, b in zip(xs, shape))
                    or self._compatible(None, [shape2, gm.flat2(xs)]) is not None):
                operands.append(x)
                continue
            g = self.flat_gval_of(x, op.span)
            full = gm.const(g.vr) == g.rows and gm.const(g.vc) == g.cols
            vin = tuple(gm.C(d) for d in g.shape) if full else gm.valid_dims(g.vr, g.vc, g.shape)
            if vin is None or g.rows < 0:
                unsupported(f"op '{op.opcode}' broadcasting a partially valid {list(xs)} value to {list(shape)}", op.span)
            valid = tuple(gm.C(d) if a == 1 and d != 1 else v for a, d, v in zip(xs, shape, vin))
            vr, vc = gm.flat_valid(valid, shape, op.span)
            levels, stride = [], gm.as_expr(g.ld)
            for a, d in reversed(tuple(zip(xs[:-1], shape[:-1]))):
                levels.append((d, gm.C(0) if a == 1 and d != 1 else stride))
                stride = gm.mul(stride, gm.C(a))
            rows, cols = gm.flat2(shape)
            key = f"{self._key(x)}.to{res_name(op)}"
            self.env[key] = GVal(g.buf, g.offset, rows, cols, g.ld, vr, vc, g.dtype, shape, tuple(reversed(levels)))
            self._ir_shape[key] = shape
            operands.append(ir.Value(key))
        return ir.Op(op.results, op.opcode, tuple(operands), op.attrs, op.types, op.tile, op.cube_tile, op.span)

    def _key(self, x) -> str:
        return x.name if isinstance(x, ir.Value) else "@" + x.name

    def load(self, x, span) -> str:
        """Make operand ``x`` available in the current segment; returns its key."""
        seg = self.cur
        key = self._key(x)
        if isinstance(x, ir.Value) and self.ub.get(x.name) is seg:
            return key
        if seg.has(key):
            return key
        g = self.gval_of(x, span, levels=True)
        if g.dtype == "bool" and g.vg is None:
            return self._load_bool(key, g, span)
        if g.dtype == "bool":
            unsupported(f"reading the bool {key} valid in the first rows of every {g.vg[0]}", span)
        if g.dtype not in SUPPORTED_DTYPES:
            unsupported(f"reading {key} of dtype {g.dtype}", span)
        seg.loads.append(Load(key, g))
        seg.read.add(g.buf.name)
        seg.shape2[key] = (g.rows, g.cols)
        seg.dtype[key] = g.dtype
        self.vext[key] = (g.vr, g.vc)
        self.vlevel[key] = g.vg
        return key

    def _load_bool(self, key: str, g: GVal, span) -> str:
        """A bool tensor is one byte per element in GM and a bit mask in UB (Compare's output, what
        Select and the logical ops take): its bytes are loaded under ``key.bytes`` and turned into
        the mask ``key`` by an internal op (vector_int.py, MASK_OF_BYTES)."""
        seg = self.cur
        raw = key + ".bytes"
        seg.loads.append(Load(raw, g))
        seg.read.add(g.buf.name)
        seg.shape2[raw] = seg.shape2[key] = (g.rows, g.cols)
        seg.dtype[raw], seg.dtype[key] = "uint8", "bool"
        self.vext[raw] = self.vext[key] = (g.vr, g.vc)
        seg.ops.append(ir.Op((key,), MASK_OF_BYTES, (ir.Value(raw),), span=span))
        return key

    # -- writes --------------------------------------------------------------------------
    def assemble(self, op: ir.Op):
        span = op.span
        val, dst = op.operands
        if not isinstance(dst, ir.TensorRef):
            unsupported("assemble into a value (only into named tensors)", span)
        buf = self.P.named.get(dst.name)
        if buf is None:
            raise EmitError(f"unknown tensor @{dst.name}", span)
        offsets = tuple(op.attr("offsets"))
        if isinstance(val, ir.Value) and val.name in self.conv_views and val.name not in self.env:
            from .strided import store_strided  # a partially valid conv result (conv.py)
            store_strided(self, val, buf, offsets, span)
            return
        try:
            self.store(val, buf, offsets, span)
        except EmitError as exc:  # rows not evenly spaced in @buf: slabs copied by N-D strides (strided.py)
            if "not evenly spaced" not in exc.message:
                raise
            from .strided import store_strided
            store_strided(self, val, buf, offsets, span)

    def store(self, val, buf: gm.Buffer, offsets: tuple, span):
        if not isinstance(val, (ir.Value, ir.TensorRef)):
            unsupported("assemble of a non-value", span)
        name = self._key(val)
        if name in self.ub and self.ub[name] is not self.cur:
            self.materialize(name, span)  # computed by an earlier kernel: copy it from GM
        if name in self.ub:
            seg = self.ub[name]
            dt = seg.dtype[name]
            rows, cols = seg.shape2[name]
            shape = self._ir_shape.get(name, (rows, cols))
        else:
            g0 = self.gval_of(val, span, levels=True)
            dt, rows, cols, shape = g0.dtype, g0.rows, g0.cols, g0.shape
        if dt != buf.dtype:
            raise EmitError(f"assemble: dtype {dt} into @{buf.name} of {buf.dtype}", span)
        if name in self.nokeep:  # its N-D shape: the source's without the last axis
            shape = self._ir_shape.get(name, (rows,))
        region = gm.view(gm.whole(buf, span), offsets, shape, None, span, True)
        if name in self.nokeep:  # one value per row, stored contiguously
            contiguous = region.rows == 1 or (gm.static_ld(region) and region.ld == region.cols)
            if region.rows * region.cols != rows or not contiguous:
                unsupported(f"storing the keepdim=False reduction %{name} into a region whose rows are not "
                            "contiguous", span)
            region = GVal(region.buf, region.offset, rows, 1, 1, gm.C(rows), gm.C(1), region.dtype, region.shape)
        if name not in self.ub:  # a GM value: copy it through UB
            seg = self.seg()
            joined = self._compatible(seg.shape, [(rows, cols)])
            g0 = self.gval_of(val, span, levels=True)
            if joined is None or g0.buf.name in seg.written or buf.name in seg.read:
                self.close()
                seg = self.seg()
                joined = (rows, cols)
            seg.shape = joined
            seg.span = seg.span or span
            self.load(val, span)
        seg = self.ub.get(name) or self.cur
        vr, vc = self.vext[name]
        if buf.kind in ("param", "local"):  # the store's region, checked as the interpreter checks an assemble
            stored = (vr,) if name in self.nokeep else gm.valid_dims(vr, vc, shape)
            if self.vlevel.get(name) is not None:  # valid per level: its N-D valid extent
                stored = self.vlevel[name][2][:len(shape) - 1] + (vc,)
            self._check_region(gm.ASSEMBLE, f"@{buf.name}", offsets, shape, stored, buf.shape, span)
        region.vr, region.vc = gm.emin(region.vr, vr), gm.emin(region.vc, vc)
        region.vg = self.vlevel.get(name)
        # a kernel reading another region of the destination cannot also write it (other cores)
        if any(ld.gval.buf.name == buf.name and not ld.gval.same_region(region) for ld in seg.loads):
            g = self.materialize(name, span) if name in self.ub else self.gval_of(val, span, levels=True)
            self.close()
            seg = self.seg()
            seg.shape = (g.rows, g.cols)
            seg.span = span
            self.load(val, span)
        seg.stores.append(Store(name, region))
        seg.written.add(buf.name)

    def concat(self, op: ir.Op):
        span = op.span
        vals = op.operands[0] if isinstance(op.operands[0], tuple) else op.operands[:-1]
        dim = op.attr("dim")
        res = op.results[0]
        shape = gm.static_dims(op.types[0].shape, span, "concat shape")
        dim = dim % len(shape)
        buf = self.P.new_ws(op.types[0].dtype, shape, res in self.P.returned)
        at = 0
        for v in vals:
            vs = gm.static_dims(self._operand_shape(v, span), span, "concat operand")
            offsets = tuple(gm.C(at if k == dim else 0) for k in range(len(shape)))
            self.store(v, buf, offsets, span)
            at += vs[dim]
        self.env[res] = gm.whole(buf, span)
        self._ir_shape[res] = shape

    def random(self, op: ir.Op):
        """uniform / normal (random.py): a kernel of its own writing the whole result into GM."""
        from .random import RandomLaunch

        res = op.results[0]
        shape = gm.static_dims(op.types[0].shape, op.span, f"{op.opcode} shape")
        out = self.P.new_ws(op.types[0].dtype, shape, res in self.P.returned)
        g = gm.whole(out, op.span)
        self.close()
        self.nseg += 1
        name = f"{self.P.symbol}_{self.block.name}_rng{self.nseg}"
        self.done.append(RandomLaunch(name, op.opcode, g, int(op.attr("key")[0]), int(op.attr("counter")[1]),
                                      f"{self.block.name} %{res} = {op.opcode}", op.span))
        self.env[res] = g
        self._ir_shape[res] = shape

    def store_scalar(self, op: ir.Op):
        """``@t[index] = value`` (scalar_store.py): a one-core kernel in the block's order."""
        from .scalar_store import ScalarStore

        target = op.operands[1]
        if not isinstance(target, ir.TensorRef):
            unsupported("store_scalar into a value (only into a named tensor)", op.span)
        g = self.gval_of(target, op.span)
        self.close()
        self.nseg += 1
        name = f"{self.P.symbol}_{self.block.name}_st{self.nseg}"
        self.done.append(ScalarStore(name, g, tuple(op.attr("index")), op.operands[0],
                                     f"{self.block.name} store_scalar @{target.name}", op.span))

    def transpose(self, op: ir.Op):
        span = op.span
        g = self.flat_gval_of(op.operands[0], span)
        n = len(g.shape)
        perm = list(op.attr("perm") or range(n))  # "perm": the emitter's own permutes (axes.py)
        if op.attr("perm") is None:
            d0, d1 = (d % n for d in (op.attr("dims") or (n - 2, n - 1)))
            perm[d0], perm[d1] = perm[d1], perm[d0]
        res = op.results[0]
        if op.attr("front"):
            self._front(op, g, tuple(perm))
            return
        self.env[res] = self._permuted(g, tuple(perm), res in self.P.returned, span, f"%{res} = transpose")
        self._ir_shape[res] = self.env[res].shape

    def _inner_reduce(self, op: ir.Op) -> bool:
        """A reduction over an inner axis ``k`` of a static N-D value ``[A, K, B]`` that axes.py
        left to the planner (more than ``MAX_SLICES`` leading slices).  Axis ``k`` fully valid
        and at most ``MAX_AXIS`` long: the elementwise sum (max, min) of its ``K`` slices, each
        a strided view ``[A, B]`` of the value (rows ``K*B`` apart, an outer level when ``B``
        spans several axes), in the column reduction's order (``((0 + x0) + x1) + ...``; fp16
        and bf16 summed in fp32, rounded once).  Else ``axes.by_permute``.  False: not such a
        reduction (the kernels' own forms)."""
        from .axes import MAX_AXIS, by_permute

        span, res = op.span, op.results[0]
        src = op.operands[0]
        shape = _static_shape(self._operand_shape(src, span)) if isinstance(src, (ir.Value, ir.TensorRef)) else None
        dim = op.attr("dim")
        dim = dim[0] if isinstance(dim, tuple) and len(dim) == 1 else dim
        if shape is None or not isinstance(dim, int) or len(shape) < 3 or len(op.results) != 1:
            return False
        n, k = len(shape), dim % len(shape)
        if k == n - 1 or shape[k] == 1:
            return False
        dt = op.types[0].dtype
        g = self.gval_of(src, span, levels=True)
        if g.vg is not None:  # valid per level: summed over a full axis above the level, slice by slice
            top = next(j for j in range(n) if math.prod(shape[j:n - 1]) == g.vg[0])
            if k >= top or shape[k] > MAX_AXIS:
                unsupported(f"op '{op.opcode}' along axis {k} of a {g.dtype} {list(shape)} value whose first rows of "
                            f"every {g.vg[0]} are valid (a count of valid rows per level: only along the axes above "
                            f"it, of at most {MAX_AXIS})", span)
            if g.outer:
                g = self.compact(g, span)
        g = self.flat_gval_of(src, span) if g.vg is None else g
        full = gm.const(g.vr) == g.rows and gm.const(g.vc) == g.cols and g.vg is None
        vin = g.vg[2] if g.vg is not None else (tuple(gm.C(d) for d in g.shape) if full else gm.valid_dims(g.vr, g.vc, g.shape))
        kk = shape[k]
        if vin is None or gm.const(vin[k]) != kk or kk > MAX_AXIS or g.rows < 0:
            for step in by_permute(op, src, shape, k, dt):
                for r, t in zip(step.results, step.types):
                    self._ir_shape.setdefault(r, _static_shape(t.shape))
                self.op(step)
            return True
        a, m = math.prod(shape[:k]), math.prod(shape[k + 1:n - 1])  # rows before and after the axis
        ld = gm.as_expr(g.ld)
        step = gm.mul(ld, gm.C(m))  # one index of the axis
        sshape = shape[:k] + shape[k + 1:]
        rows, cols = gm.flat2(sshape)
        svalid = vin[:k] + vin[k + 1:]
        levels = gm.level_valid(svalid, sshape)  # the slices keep the rows valid per level
        vr, vc, svg = levels if levels is not None else gm.flat_valid(svalid, sshape, span) + (None,)
        tile = tuple(t for j, t in enumerate(op.tile) if j != k) if op.tile is not None and len(op.tile) == n else op.tile
        wide = dt in ("fp16", "bf16") and op.opcode == "sum"
        acc_dt = "fp32" if wide else dt

        def typed(dtype):
            return ir.TensorType(tuple(ir.Const(d) for d in sshape), dtype)

        def emit(name, opcode, operands, typ, attrs=()):
            self._ir_shape[name] = _static_shape(typ[0].shape)
            self.op(ir.Op((name,), opcode, operands, attrs, typ, tile, None, span))
            return ir.Value(name)

        acc = None
        for j in range(kk):
            key = f"{res}.k{j}"
            off = gm.add(g.offset, gm.mul(step, gm.C(j)))
            if m == 1 or a == 1:  # rows uniformly strided: K*ld apart (m == 1) or ld apart (a == 1)
                sld = gm.mul(step, gm.C(kk)) if m == 1 else ld
                sld = gm.const(sld) if gm.const(sld) is not None else sld
                sg = GVal(g.buf, off, rows, cols, sld, vr, vc, g.dtype, sshape, vg=svg)
            else:  # m rows ld apart, a times K*m*ld apart
                sg = GVal(g.buf, off, rows, cols, g.ld, vr, vc, g.dtype, sshape, ((a, gm.mul(step, gm.C(kk))),), vg=svg)
            self.env[key] = sg
            self._ir_shape[key] = sshape
            x = ir.Value(key)
            if wide:
                x = emit(f"{res}.w{j}", "cast", (x,), (typed("fp32"),), (("dtype", "fp32"),))
            last = j == kk - 1 and not wide
            name, typ = (res, op.types) if last else (f"{res}.a{j}", (typed(acc_dt),))
            if acc is None:
                acc = emit(name, "add", (x, ir.Const(0.0)), typ) if op.opcode == "sum" else x
            else:
                acc = emit(name, {"sum": "add", "amax": "maximum", "amin": "minimum"}[op.opcode], (acc, x), typ)
        if wide:
            emit(res, "cast", (acc,), op.types, (("dtype", dt),))
        return True

    def _front(self, op: ir.Op, g: GVal, perm: tuple):
        """A reduction's axis ``perm[0]`` moved to the front (axes.py): the permuted value seen as
        ``[K, rest]`` whose valid rows are the axis's valid extent and whose columns are all of
        them.  The whole block is permuted, its invalid elements too (the column reduction keeps
        each column apart: they land in the result's invalid elements only), so it must lie in
        memory of its full shape (a workspace or a ``pypto.tensor``; a parameter only when fully
        valid).  The result's valid extent: the other axes' (``self.front_valid``: the source's and the axis,
        for the reshape that ends the reduction)."""
        span, res = op.span, op.results[0]
        if g.rows < 0:
            unsupported(f"'{op.attr('perm')}' reduction of a dynamically shaped value", span)
        full = gm.const(g.vr) == g.rows and gm.const(g.vc) == g.cols
        vin = tuple(gm.C(d) for d in g.shape) if full else gm.valid_dims(g.vr, g.vc, g.shape)
        if vin is None or (not full and g.buf.kind == "param"):
            unsupported(f"a reduction over axis {perm[0]} of a partially valid value of shape {list(g.shape)} "
                        f"(valid {g.vr} x {g.vc} of its 2-D form)", span)
        whole = GVal(g.buf, g.offset, g.rows, g.cols, g.ld, gm.C(g.rows), gm.C(g.cols), g.dtype, g.shape, g.outer)
        go = self._permuted(whole, perm, False, span, f"%{res} = reduction axis {perm[0]} to the front")
        kk, rest = (gm.const(d) for d in op.types[0].shape)
        self.env[res] = GVal(go.buf, go.offset, kk, rest, rest, vin[perm[0]], gm.C(rest), g.dtype, (kk, rest))
        self._ir_shape[res] = (kk, rest)
        self.front_valid[res] = (vin, perm[0])

    def _transposed(self, g: GVal, returned: bool, span, what: str) -> GVal:
        """Launch a transpose of ``g``'s last two axes into a new GM buffer; return it."""
        n = len(g.shape)
        return self._permuted(g, tuple(range(n - 2)) + (n - 1, n - 2), returned, span, what)

    def _permuted(self, g: GVal, perm: tuple, returned: bool, span, what: str) -> GVal:
        """Launch a permute kernel (layout.py) of ``g``'s axes into a new contiguous GM buffer
        (the result's axis k is ``g``'s axis ``perm[k]``); return it.  The valid data it carries:
        all of a whole value; a matrix's [vr, vc] (one matrix: the other axes have one element);
        else whole slabs of the leading axes the permutation keeps in place."""
        from .layout import plan

        n = len(g.shape)
        if g.rows < 0 or n < 2:
            unsupported("transpose of a partially valid or dynamic value", span)
        shape = tuple(g.shape)
        oshape = tuple(shape[k] for k in perm)
        out = self.P.new_ws(g.dtype, oshape, returned)
        whole = gm.whole(out, span)
        p = plan(shape, perm)
        nbatch = math.prod(shape[k] for k in p["batch"])
        swap = perm == tuple(range(n - 2)) + (n - 1, n - 2)
        if g.vg is not None and not (swap and gm.per_matrix(g) is not None):
            unsupported(f"transpose of axes {[k for k in range(n) if perm[k] != k]} of a {g.dtype} value whose "
                        f"first rows of every {g.vg[0]} are valid (only its matrices' last two axes)", span)
        full = gm.const(g.vr) == g.rows and gm.const(g.vc) == g.cols and g.vg is None
        alike = swap and nbatch > 1 and not full and gm.per_matrix(g) is not None
        if g.vg is not None or alike:  # each matrix's valid rows and columns, swapped
            vrows, vcols = gm.per_matrix(g)
            go = gm.of_matrices(whole, vcols, vrows)
            vr, vc, vg = go.vr, go.vc, go.vg
        elif gm.const(g.vr) == g.rows and gm.const(g.vc) == g.cols:
            vr, vc = whole.vr, whole.vc
        elif nbatch == 1:  # one matrix: its valid rows and columns, swapped if the last axis moved
            vr, vc = (g.vc, g.vr) if p["transposed"] else (g.vr, g.vc)
        else:
            kept = next((j for j in range(n) if perm[j] != j), n)  # the leading axes left in place
            slab = math.prod(shape[kept:n - 1])
            slabs = gm.quotient(g.vr, slab) if kept >= 1 and gm.const(g.vc) == g.cols else None
            if slabs is None or not gm.static_ld(g):
                unsupported(f"transpose of axes {[k for k in range(n) if perm[k] != k]} of a partially valid "
                            "value (only whole slabs of the leading axes it keeps in place)", span)
            vr, vc = gm.mul(slabs, gm.C(math.prod(oshape[kept:n - 1]))), gm.C(oshape[-1])
        go = GVal(whole.buf, whole.offset, whole.rows, whole.cols, whole.ld, vr, vc, whole.dtype, whole.shape,
                  vg=vg if g.vg is not None or alike else None)
        self.close()
        self.nseg += 1
        name = f"{self.P.symbol}_{self.block.name}_tr{self.nseg}"
        args = dict(name=name, dtype=g.dtype, shape=shape, perm=tuple(perm), label=f"{self.block.name}: {what}",
                    span=span)
        self.done.append(_LayoutLaunch(name, args, [g, go], span, f"{self.block.name} {what}"))
        return go

    def _matmul_operand(self, x, span) -> GVal:
        """A matmul operand as the cube kernel reads it: matrices of uniformly strided rows, a
        batch of them one stride apart (a view of a batch of larger matrices keeps its layout:
        its only outer level steps over matrices); any other layout is copied compact first.  Valid
        rows per level are read where every matrix has them alike (``gm.per_matrix``)."""
        g = self.gval_of(x, span, levels=True)
        if g.rows >= 0 and not gm.static_ld(g):  # a row stride known at run time (a view of a DYNAMIC last dim)
            return self.compact(g, span)
        if g.vg is not None and gm.per_matrix(g) is None:
            unsupported(f"op 'matmul' reading the {g.dtype} %{getattr(x, 'name', x)} whose first rows of every "
                        f"{g.vg[0]} are valid (a level other than its matrices' rows)", span)
        if not g.outer:
            return g
        (count, stride), = g.outer if len(g.outer) == 1 else ((None, None),)
        if count is not None and len(g.shape) > 2 and g.inner == g.shape[-2] and isinstance(stride, int) \
                and count == math.prod(g.shape[:-2]):
            return g
        return self.compact(g, span)

    def matmul(self, op: ir.Op):
        """One cube kernel (cube.py): operands and result in GM; a bias row if given."""
        from .cube import MatmulSpec

        span = op.span
        ops = list(op.operands)
        if len(ops) not in (2, 3):
            unsupported(f"matmul with {len(ops)} operands", span)
        gs = [self._matmul_operand(x, span) for x in ops]
        valid_batches = []  # Exprs: how many matrices of a partially valid batched operand hold data
        oshape = gm.static_dims(op.types[0].shape, span, "matmul shape")
        partial = set()  # a (0) / b (1): one matrix whose valid extents the control program computes
        alike = {}  # a (0) / b (1) of a batch: every matrix valid alike (gm.per_matrix), partly
        for i, (x, g) in enumerate(zip(ops, gs)):
            if g.rows < 0 or not gm.static_ld(g):
                unsupported(f"matmul of a dynamically shaped operand {x!r}", span)
            if i == 2 and g.vg is not None:
                unsupported(f"a matmul bias {x!r} valid per level of rows", span)
            each = gm.per_matrix(g) if i < 2 and math.prod(oshape[:-2]) > 1 else None
            if each is not None and (g.vg is not None or gm.const(g.vc) != g.cols):
                alike[i] = each
                continue
            if gm.const(g.vr) != g.rows or gm.const(g.vc) != g.cols:
                if i < 2 and math.prod(g.shape[:-2]) == 1 and math.prod(oshape[:-2]) == 1:
                    partial.add(i)
                    continue
                batched = math.prod(g.shape[:-2]) > 1 or math.prod(oshape[:-2]) == 1  # not broadcast
                whole = _whole_matrices(g) if i < 2 and batched else None  # a or b: whole matrices valid
                if whole is None:
                    unsupported(f"matmul of the partially valid operand {x!r}", span)
                valid_batches.append(whole)
        ga, gb = gs[0], gs[1]
        ta, tb = bool(op.attr("a_trans")), bool(op.attr("b_trans"))
        valid_mnk = None
        if partial:  # valid m = a's, valid n = b's, valid k = a's (pypto's rule); the kernel checks b's covers it
            if valid_batches or math.prod(oshape[:-2]) > 1:
                unsupported(f"matmul of a partially valid operand {ops[min(partial)]!r} in a batched matmul", span)
            vm, vka = (ga.vc, ga.vr) if ta else (ga.vr, ga.vc)
            vkb, vn = (gb.vc, gb.vr) if tb else (gb.vr, gb.vc)
            valid_mnk = (vm, vn, vka, vkb)
        if alike:  # a batch whose matrices are valid alike: one valid m, n, k for all of them
            if valid_batches:
                unsupported(f"matmul of a batch valid in whole matrices and one valid in each matrix", span)
            (ar, ac), (br, bc) = (alike.get(i, (gm.C(g.shape[-2]), gm.C(g.shape[-1]))) for i, g in enumerate(gs[:2]))
            vm, vka = (ac, ar) if ta else (ar, ac)
            vkb, vn = (bc, br) if tb else (br, bc)
            valid_mnk = (vm, vn, vka, vkb)
        sa, sb = ga.shape, gb.shape
        if len(sa) != len(sb) or len(sa) < 2 or (math.prod(sa[:-2]) > 1 and math.prod(sb[:-2]) > 1
                                                  and sa[:-2] != sb[:-2]):
            unsupported(f"matmul of rank {len(sa)} x {len(sb)} operands", span)
        if ga.dtype in ("fp32", "int8") and (ta or not tb):  # the cube path reads these as a [m, k] @ b [n, k]^T
            if ta:
                ga, ta = self._transposed(ga, False, span, f"a^T for an {ga.dtype} matmul"), False
            if not tb:
                gb, tb = self._transposed(gb, False, span, f"b^T for an {gb.dtype} matmul"), True
            gs[0], gs[1] = ga, gb
            sa, sb = ga.shape, gb.shape
        m, k = (sa[-1], sa[-2]) if ta else (sa[-2], sa[-1])
        kb, n = (sb[-1], sb[-2]) if tb else (sb[-2], sb[-1])
        if k != kb:
            raise EmitError(f"matmul: inner dimensions differ ({k} and {kb})", span)
        batch = math.prod(oshape[:-2]) if len(oshape) > 2 else 1
        res = op.results[0]
        out = self.P.new_ws(op.types[0].dtype, oshape, res in self.P.returned)
        gc = gm.whole(out, span)

        def bstride(g):  # leading axes are rows of the 2-D form: one stride steps over a matrix
            if math.prod(g.shape[:-2]) == 1:
                return 0
            return g.outer[0][1] if g.outer else g.shape[-2] * g.ld  # _matmul_operand: one level per matrix

        cube = op.cube_tile or ((64, 64), (64, 64), (64, 64))
        # an m of fewer than 16 rows (the models' [1, 1] m tile of a one-row a) is one fractal of 16 rows
        spec = MatmulSpec(
            kernel=f"{self.P.symbol}_{self.block.name}_mm{self.nseg + 1}", a_dtype=ga.dtype, b_dtype=gb.dtype,
            c_dtype=out.dtype, m=m, n=n, k=k, lda=ga.ld, ldb=gb.ld, ldc=gc.ld, trans_a=ta, trans_b=tb,
            batch=batch, batch_stride_a=bstride(ga), batch_stride_b=bstride(gb), batch_stride_c=m * n if batch > 1 else 0,
            base_m=max(cube[0][0], 16) if m < 16 else cube[0][0], base_n=cube[2][0], base_k=cube[1][0], bias=len(gs) == 3,
            valid_batches=bool(valid_batches), valid_mnk=valid_mnk is not None,
            comment=f"{self.block.name}: %{res} = matmul, line {span.line if span else '?'}")
        acc = "int32" if ga.dtype == "int8" else "fp32"  # the L0C dtype, the bias's
        if len(gs) == 3 and (gs[2].dtype != acc or gs[2].rows * gs[2].cols != n):
            unsupported(f"a matmul bias other than an {acc} row of n elements", span)
        self.close()
        self.nseg += 1
        nb = None
        for e in valid_batches:
            nb = e if nb is None else gm.emin(nb, e)
        if nb is not None:  # the result's valid data: the first nb matrices, whole
            gc = GVal(gc.buf, gc.offset, gc.rows, gc.cols, gc.ld, gm.mul(nb, gm.C(m)), gm.C(n), gc.dtype, gc.shape)
        if valid_mnk is not None and batch > 1:  # the result's valid data: [valid m, valid n] of every matrix
            gc = gm.of_matrices(gc, valid_mnk[0], valid_mnk[1])
        elif valid_mnk is not None:  # the result's valid data: [valid m, valid n]
            gc = GVal(gc.buf, gc.offset, gc.rows, gc.cols, gc.ld, valid_mnk[0], valid_mnk[1], gc.dtype, gc.shape)
        self.done.append(_CubeLaunch(spec, gs + [gc], span, f"{self.block.name} matmul %{res}", nb, valid_mnk))
        self.env[res] = gc
        self._ir_shape[res] = oshape


class _LayoutLaunch:
    """A transpose kernel (layout.py) in a block's launch order."""

    def __init__(self, name, args: dict, regions: list, span, label: str):
        self.name, self.args, self.regions, self.span, self.label = name, args, regions, span, label
        self.stores = [regions[-1]]


class _CubeLaunch:
    """A matmul kernel in a block's launch order: operands (a, b[, bias]) and the result, all in GM."""

    def __init__(self, spec, regions: list, span, label: str, valid_batches=None, valid_mnk=None):
        self.spec, self.regions, self.span, self.label = spec, regions, span, label
        self.valid_batches = valid_batches  # an Expr when spec.valid_batches
        self.valid_mnk = valid_mnk  # (m, n, k) Exprs when spec.valid_mnk
        self.stores = [regions[-1]]
        self.name = spec.kernel
