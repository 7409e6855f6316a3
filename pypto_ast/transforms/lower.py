"""Lowering: trace a kernel into the explicit control/compute IR, the way PyPTO runs it.

The kernel's Python runs (build time, as in PyPTO) against ``pypto_ast.lang`` with this
tracer as its backend: ops append to the current compute block; ``pypto.loop`` is a
generator that opens a control loop, yields the symbolic index and closes the loop; an
``if`` on a symbolic value asks the tracer for an outcome. Like PyPTO, every loop body is
traced once per control path: the loop generator yields again until each combination of
branch outcomes in its body has been traced, then merges the traces into ``Branch`` nodes.
The whole body runs inside an implicit ``loop(1)`` (``default_loop_1``).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from .. import ir
from ..ir import name_blocks
from . import ops
from .symbolic import Sym, SymbolicValueError, binexpr, const_of, describe, to_expr, wrap
from .tensors import TensorH, ir_dtype

MAX_PATHS_PER_BODY = 4096
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class LoweringError(Exception):
    """A kernel cannot be lowered; ``span`` points at the source (file, ir.Span)."""

    def __init__(self, message: str, span: Optional[ir.Span] = None, path: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.path = path


@dataclass
class Decision:
    cond: ir.Expr
    outcome: bool
    span: Optional[ir.Span]


class PathEnumerator:
    """Depth-first enumeration of branch outcomes within one loop body."""

    def __init__(self):
        self.pending: list = [[]]
        self.current: list = []
        self.pos = 0

    def next(self) -> bool:
        if not self.pending:
            return False
        self.current = self.pending.pop()
        self.pos = 0
        return True

    def decide(self) -> bool:
        if self.pos < len(self.current):
            outcome = self.current[self.pos]
        else:
            self.pending.append(self.current[: self.pos] + [False])
            self.current = self.current + [True]
            outcome = True
        self.pos += 1
        return outcome


@dataclass
class LoopContext:
    var: str
    start: Any  # original loop bounds (ints or Syms) for is_loop_begin/end
    stop: Any
    step: Any


@dataclass
class BodyFrame:
    paths: PathEnumerator = field(default_factory=PathEnumerator)
    traces: list = field(default_factory=list)
    var: str = ""


class Tracer:
    """The ``pypto_ast.lang`` backend while one kernel is traced."""

    def __init__(self, name: str, source_path: Optional[str]):
        self.name = name
        self.source_path = os.path.abspath(source_path) if source_path else None
        self.counter = 0
        self.loop_counter = 0
        self.events: list = []
        self.frames: list[BodyFrame] = []
        self.active_vars: list[str] = []
        self.vec_tile: Optional[tuple] = None
        self.cube_tile: Optional[tuple] = None
        self.params: dict = {}
        self.param_order: list = []
        self.locals: dict = {}
        self.outputs: set = set()
        self.total_paths = 0
        self.fatal: Optional[LoweringError] = None
        self._positions: dict = {}

    # -- source positions -------------------------------------------------------------------
    def span(self) -> Optional[ir.Span]:
        """The span of the kernel-code expression that is executing right now."""
        frame = sys._getframe(1)
        while frame is not None:
            filename = os.path.abspath(frame.f_code.co_filename)
            if not filename.startswith(_PACKAGE_DIR + os.sep):
                break
            frame = frame.f_back
        if frame is None:
            return None
        code = frame.f_code
        positions = self._positions.get(code)
        if positions is None:
            positions = self._positions[code] = list(code.co_positions())
        index = frame.f_lasti // 2
        if 0 <= index < len(positions):
            line, end_line, col, end_col = positions[index]
            if line is not None:
                return ir.Span(line, col or 0, end_line or line, end_col or 0)
        return ir.Span(frame.f_lineno, 0, frame.f_lineno, 0)

    def error(self, message: str) -> LoweringError:
        return LoweringError(message, self.span(), self.source_path)

    # -- recording -------------------------------------------------------------------------
    def fresh(self) -> str:
        name = str(self.counter)
        self.counter += 1
        return name

    def emit(self, opcode: str, operands: tuple, attrs: dict, shape=None, dtype=None, *,
             tile: str = "", results: int = 1, valid=None) -> Any:
        names = tuple(self.fresh() for _ in range(results)) if shape is not None else ()
        types = ()
        if shape is not None:
            types = (ir.TensorType(tuple(to_expr(d) for d in shape), dtype),) * results
        op = ir.Op(
            names, opcode, tuple(ops.operand(x) for x in operands),
            tuple(sorted((k, ops.attr_value(v)) for k, v in attrs.items() if v is not None)),
            types,
            self.vec_tile if tile == "vec" else None,
            self.cube_tile if tile == "cube" else None,
            self.span(),
        )
        self.events.append(op)
        if not names:
            return None
        handles = [TensorH(self, ir.Value(n), shape, dtype, valid) for n in names]
        return handles[0] if results == 1 else tuple(handles)

    def call(self, name: str, args: tuple, kwargs: dict):
        try:
            return ops.dispatch(self, name, args, kwargs)
        except (LoweringError, SymbolicValueError):
            raise
        except (TypeError, ValueError) as exc:
            raise self.error(f"pypto.{name}: {exc}") from None

    # -- conditions ------------------------------------------------------------------------
    def decide(self, sym: Sym) -> bool:
        expr = sym.expr
        if isinstance(expr, ir.Const):
            return bool(expr.value)
        frame = self.frames[-1]
        outcome = frame.paths.decide()
        self.events.append(Decision(expr, outcome, self.span()))
        return outcome

    # -- loops -----------------------------------------------------------------------------
    def loop(self, kind: str, args: tuple, kwargs: dict):
        span = self.span()
        if not args or len(args) > 3:
            raise LoweringError(f"pypto.{kind} takes 1 to 3 positional bounds", span, self.source_path)
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        step_c = const_of(step)
        if step_c is None or step_c == 0:
            raise LoweringError(f"pypto.{kind}: the step must be a non-zero build-time int", span, self.source_path)
        self.loop_counter += 1
        var = kwargs.get("idx_name") or f"loop_idx_{self.loop_counter}"
        if var in self.active_vars:
            raise LoweringError(
                f"nested loops reuse idx_name {var!r} (pypto 0.2.0 logs F21007 and segfaults); "
                "give each nested loop its own idx_name", span, self.source_path)
        name = kwargs.get("name") or f"loop_{self.loop_counter}"
        unroll = kwargs.get("unroll_list")
        if kind == "loop_unroll":
            factors = sorted(set(unroll or []) | {1}, reverse=True)
        else:
            factors = sorted(set(unroll), reverse=True) if unroll else [1]
        if any(not isinstance(k, int) or k < 1 for k in factors):
            raise LoweringError(f"unroll_list must hold positive ints, got {unroll!r}", span, self.source_path)
        submit = bool(kwargs.get("submit_before_loop", False))
        ctx = LoopContext(var, start, stop, step)
        return self._loop_segments(kind, ctx, factors, name, submit, span)

    def _loop_segments(self, kind, ctx, factors, name, submit, span):
        """pypto's expansion: each factor k steps k*step over the part divisible by k; the
        remainder goes to the next factor; the last factor covers the rest (as pypto, even
        when it does not divide — always include 1 to get an exact tail)."""
        step = const_of(ctx.step)
        cur = to_expr(ctx.start)
        stop = to_expr(ctx.stop)
        for i, k in enumerate(factors):
            stride = k * step
            if i < len(factors) - 1:
                count = binexpr("//", binexpr("-", stop, cur), ir.Const(stride))
                seg_stop = binexpr("+", cur, binexpr("*", count, ir.Const(stride)))
            else:
                seg_stop = stop
            if isinstance(cur, ir.Const) and isinstance(seg_stop, ir.Const) and (
                    (step > 0 and cur.value >= seg_stop.value) or (step < 0 and cur.value <= seg_stop.value)):
                cur = seg_stop
                continue
            yield from self._loop_body(kind, ctx, k, cur, seg_stop, stride, name, submit, span)
            cur = seg_stop

    def _loop_body(self, kind, ctx, k, start, stop, stride, name, submit, span):
        step = const_of(ctx.step)
        saved = (self.events, self.vec_tile, self.cube_tile)
        frame = BodyFrame(var=ctx.var)
        self.frames.append(frame)
        self.active_vars.append(ctx.var)
        counter_start, ends = self.counter, []
        finished = False
        try:
            while frame.paths.next():
                self.counter = counter_start
                self.events = []
                self.vec_tile, self.cube_tile = saved[1], saved[2]
                if kind == "loop_unroll":
                    yield (Sym(ir.Var(ctx.var), self, ctx, 0), k)
                else:
                    for j in range(k):
                        index = binexpr("+", ir.Var(ctx.var), ir.Const(j * step))
                        yield Sym(index, self, ctx, j)
                frame.traces.append(self.events)
                ends.append(self.counter)
                if len(frame.traces) > MAX_PATHS_PER_BODY:
                    raise LoweringError(f"more than {MAX_PATHS_PER_BODY} control paths in one loop body",
                                        span, self.source_path)
            finished = True
        except GeneratorExit:
            self.fatal = LoweringError("`break` or `return` inside a pypto loop is not supported: "
                                       "a pypto loop body always runs to its end", span, self.source_path)
            raise
        finally:
            self.frames.pop()
            self.active_vars.pop()
            self.events, self.vec_tile, self.cube_tile = saved
        if not finished:
            return
        self.counter = max(ends) if ends else counter_start
        self.total_paths += len(frame.traces)
        body = build_region(frame.traces)
        self.events.append(ir.Loop(
            ctx.var, start, stop, ir.Const(stride), body, name,
            "loop_unroll" if kind == "loop_unroll" else "loop", k, submit, span,
        ))

    # -- indexing --------------------------------------------------------------------------
    def getitem(self, tensor: TensorH, key):
        return ops.getitem(self, tensor, key)

    def setitem(self, tensor: TensorH, key, value):
        ops.setitem(self, tensor, key, value)

    def legacy_function(self, name, tensors):
        raise self.error("legacy `with pypto.function(...)` kernels are not lowered; "
                         "decorate the kernel with @pypto.frontend.jit")


# ---------------------------------------------------------------------------------------
def build_region(traces: list) -> tuple:
    """Merge the traces of one body (one per control path) into a region with Branches."""
    items = _merge(traces)
    return _group(items)


def _merge(traces: list) -> list:
    out: list = []
    i = 0
    while True:
        heads = [t[i] if i < len(t) else None for t in traces]
        first = heads[0]
        if isinstance(first, Decision):
            if not all(isinstance(h, Decision) and h.cond == first.cond for h in heads):
                raise LoweringError("the kernel's Python state differs between traced paths "
                                    "(a build-time value changed inside a branch)", first.span)
            then = [t[i + 1:] for t, h in zip(traces, heads) if h.outcome]
            orelse = [t[i + 1:] for t, h in zip(traces, heads) if not h.outcome]
            out.append(("branch", first, _merge(then) if then else [], _merge(orelse) if orelse else []))
            return out
        if first is None:
            if any(h is not None for h in heads):
                raise LoweringError("traced paths of one loop body do not line up")
            return out
        if any(h != first for h in heads[1:]):
            raise LoweringError("the kernel's Python state differs between traced paths "
                                "(ops recorded before a branch are not the same on every path)",
                                getattr(first, "span", None))
        out.append(first)
        i += 1


def _group(items: list) -> tuple:
    region: list = []
    pending: list = []

    def flush():
        if pending:
            region.append(ir.Block("", tuple(pending)))
            pending.clear()

    for item in items:
        if isinstance(item, ir.Op):
            pending.append(item)
            continue
        flush()
        if isinstance(item, tuple) and item[0] == "branch":
            _, decision, then, orelse = item
            region.append(ir.Branch(decision.cond, _group(then), _group(orelse), decision.span))
        else:
            region.append(item)
    flush()
    return tuple(region)


# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorArg:
    """A tensor argument's specialisation: shape (ints, or None for dims left dynamic) and dtype."""

    shape: tuple
    dtype: str


def lower(func, args: dict, *, name: Optional[str] = None) -> ir.Program:
    """Trace ``func`` (a kernel's Python function) into a Program.

    ``args`` maps parameter names to torch tensors, ``TensorArg``s or Python values. A
    parameter annotated ``pypto.Tensor(...)`` is a tensor; DYNAMIC dims stay symbolic.
    """
    from .. import lang

    source = inspect.getsourcefile(func)
    tracer = Tracer(name or func.__name__, source)
    if lang._module_tiles["vec"] is not None:
        tracer.vec_tile = tuple(lang._module_tiles["vec"])
    if lang._module_tiles["cube"] is not None:
        tracer.cube_tile = lang._module_tiles["cube"]
    call_args, params = _bind_params(tracer, func, args)
    previous = lang._set_backend(tracer)
    frame = BodyFrame(var="loop_idx_0")
    tracer.frames.append(frame)
    tracer.active_vars.append("loop_idx_0")
    returned = []
    try:
        while frame.paths.next():
            tracer.counter = 0
            tracer.events = []
            try:
                result = func(*call_args)
            except SymbolicValueError as exc:
                raise LoweringError(str(exc), tracer_span_of_exception(exc, source), source) from None
            if tracer.fatal is not None:
                raise tracer.fatal
            frame.traces.append(tracer.events)
            returned.append(result)
            if len(frame.traces) > MAX_PATHS_PER_BODY:
                raise LoweringError(f"more than {MAX_PATHS_PER_BODY} control paths in the kernel body")
    finally:
        lang._set_backend(previous)
    tracer.total_paths += len(frame.traces)
    body = build_region(frame.traces)
    region: list = [ir.Loop("loop_idx_0", ir.Const(0), ir.Const(1), ir.Const(1), body,
                            "default_loop_1", "implicit")]
    result = returned[-1] if returned else None
    if result is not None:
        values = result if isinstance(result, tuple) else (result,)
        if not all(isinstance(v, TensorH) for v in values):
            raise LoweringError("a kernel may only return tensors", None, source)
        region.append(ir.Return(tuple(_returned_value(tracer, v) for v in values)))
    final_params = tuple(
        dataclasses.replace(p, is_output=p.name in tracer.outputs) if p.kind == "tensor" else p
        for p in params
    )
    locals_ = tuple(ir.LocalTensor(n, t) for n, t in tracer.locals.items())
    attrs = (("source", os.path.basename(source)),) if source else ()
    return ir.Program(tracer.name, final_params, name_blocks(tuple(region)), locals_, tracer.total_paths, attrs)


def _returned_value(tracer, value: TensorH) -> ir.Value:
    if isinstance(value.ref, ir.Value):
        return value.ref
    raise LoweringError(f"returning the parameter @{value.ref.name} itself; return a computed tensor",
                        None, tracer.source_path)


def tracer_span_of_exception(exc: BaseException, source: Optional[str]) -> Optional[ir.Span]:
    """The kernel-source span of the innermost frame of ``exc``'s traceback in ``source``."""
    tb = exc.__traceback__
    best = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if source and os.path.abspath(code.co_filename) == os.path.abspath(source):
            positions = list(code.co_positions())
            index = tb.tb_lasti // 2
            if 0 <= index < len(positions) and positions[index][0] is not None:
                line, end_line, col, end_col = positions[index]
                best = ir.Span(line, col or 0, end_line or line, end_col or 0)
        tb = tb.tb_next
    return best


def _bind_params(tracer: Tracer, func, args: dict):
    from ..lang import TensorSpec, _Marker
    from ..lang.frontend import DynamicDim

    from .unsupported import function_node

    sig = inspect.signature(func)
    call_args, params = [], []
    node = function_node(func)
    arg_nodes = {a.arg: a for a in (node.args.posonlyargs + node.args.args + node.args.kwonlyargs)} if node else {}
    for pname, param in sig.parameters.items():
        try:
            _bind_one(tracer, pname, param, args, call_args, params, TensorSpec, _Marker, DynamicDim)
        except LoweringError as exc:
            where = arg_nodes.get(pname)
            if exc.span is None and where is not None:
                exc.span = ir.Span(where.lineno, where.col_offset, where.end_lineno, where.end_col_offset)
            raise
    return call_args, params


def _bind_one(tracer, pname, param, args, call_args, params, TensorSpec, _Marker, DynamicDim):
    if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.KEYWORD_ONLY):
        raise LoweringError(f"parameter `{pname}`: *args, **kwargs and keyword-only parameters are "
                            "not supported in kernels", None, tracer.source_path)
    ann = param.annotation
    given = args.get(pname, param.default if param.default is not param.empty else None)
    if isinstance(ann, TensorSpec):
        shape, dtype = _tensor_spec(tracer, pname, ann, given, _Marker, DynamicDim)
        tensor = TensorH(tracer, ir.TensorRef(pname), shape, dtype)
        tracer.params[pname] = tensor
        params.append(ir.Param(pname, "tensor", tensor.type))
        call_args.append(tensor)
    else:
        if pname not in args and param.default is param.empty:
            raise LoweringError(f"no value for the non-tensor parameter `{pname}`", None, tracer.source_path)
        if _is_torch_tensor(given):
            raise LoweringError(f"parameter `{pname}` receives a tensor but is not annotated with "
                                "pypto.Tensor(...)", None, tracer.source_path)
        params.append(ir.Param(pname, "scalar", None, False, given))
        call_args.append(given)


def _is_torch_tensor(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "shape") and hasattr(value, "dtype")


def _tensor_spec(tracer, pname, ann, given, marker_cls, dynamic_cls):
    actual_shape = actual_dtype = None
    if _is_torch_tensor(given):
        actual_shape = tuple(int(d) for d in given.shape)
        actual_dtype = _torch_dtype_name(given.dtype)
    elif isinstance(given, TensorArg):
        actual_shape, actual_dtype = given.shape, given.dtype
    dtype = ir_dtype(ann.dtype) if ann.dtype is not None else actual_dtype
    if dtype is None:
        raise LoweringError(f"tensor parameter `{pname}` has no dtype in its annotation and no example input",
                            None, tracer.source_path)
    if actual_dtype is not None and actual_dtype != dtype:
        raise LoweringError(f"tensor `{pname}` is declared {dtype} but the argument is {actual_dtype}",
                            None, tracer.source_path)
    if ann.shape is None:
        if actual_shape is None:
            raise LoweringError(f"tensor parameter `{pname}` is annotated `pypto.Tensor()`: its shape comes "
                                "from the argument, and none was given (define example_inputs())",
                                None, tracer.source_path)
        return actual_shape, dtype
    dims = list(ann.shape)
    if dims and dims[-1] is Ellipsis:
        dims = dims[:-1]
        dims += ["static"] * ((len(actual_shape) if actual_shape else len(dims)) - len(dims))
    if actual_shape is not None and len(actual_shape) != len(dims):
        raise LoweringError(f"tensor `{pname}` is declared with rank {len(dims)} but the argument has shape "
                            f"{list(actual_shape)}", None, tracer.source_path)
    shape = []
    for axis, d in enumerate(dims):
        if isinstance(d, int):
            if actual_shape is not None and actual_shape[axis] is not None and actual_shape[axis] != d:
                raise LoweringError(f"tensor `{pname}` is declared {list(ann.shape)} but the argument has shape "
                                    f"{list(actual_shape)}", None, tracer.source_path)
            shape.append(d)
        elif (isinstance(d, marker_cls) and d.name == "STATIC") or d == "static":
            if actual_shape is None:
                raise LoweringError(f"tensor `{pname}`: a STATIC dim takes its size from the argument; "
                                    "none was given", None, tracer.source_path)
            shape.append(actual_shape[axis])
        elif isinstance(d, (marker_cls, dynamic_cls)):
            shape.append(Sym(ir.ShapeOf(pname, axis), tracer))
        else:
            raise LoweringError(f"tensor `{pname}`: unsupported dim {d!r} in its annotation", None, tracer.source_path)
    return tuple(shape), dtype


_TORCH_DTYPES = {
    "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int8": "int8", "uint8": "uint8",
    "int16": "int16", "int32": "int32", "int64": "int64", "bool": "bool", "float64": "double",
}


def _torch_dtype_name(dtype) -> str:
    return _TORCH_DTYPES.get(str(dtype).replace("torch.", ""), str(dtype))


__all__ = ["lower", "LoweringError", "TensorArg", "Tracer", "build_region", "describe", "wrap"]
