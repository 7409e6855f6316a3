"""Reference interpreter: runs a lowered ``Program`` (``transforms/ir.py``) with torch on the CPU.

This is the semantic oracle every backend is compared against, so each choice below is
deliberate; change one only together with its test in ``tests/interp/``. The numeric rules for
NaN, infinities, signed zeros, overflow, saturation and rounding that every backend shares are
written once in docs/semantics.md; the points below say how this module computes them.

Entry point: ``run_program(program, inputs)``. ``inputs`` maps parameter names to values:
tensor parameters are the caller's torch tensors (outputs are written *in place*, and only
in the regions the program assembles into; an input whose memory overlaps an output's is read
as it was at the call, and an output that is a leaf requiring grad raises ``ArgumentError``,
the rules of ``pypto_ast/arguments.py`` every backend shares); scalar parameters are Python numbers bound to
``Var(name)`` (a missing one falls back to ``Param.value``). The result is the value of the
program's ``Return`` node (one tensor, or a tuple for several; each is the value's *valid*
data) or ``None`` when the program has no ``Return``. Every runtime
problem raises ``InterpError(message, span)`` with the ``Span`` of the Op/Loop/Branch at
fault (or ``None``); torch exceptions raised inside an op are wrapped, never leaked.

Control
  * ``Block`` runs its ops in order; ``Loop`` evaluates ``start/stop/step`` when it is reached
    and binds ``var`` to each element of ``range(start, stop, step)``; the body is run as
    given. ``Loop.step`` is taken as the per-iteration step: an unrolled loop (``unroll``
    > 1) already holds its copies (``var``, ``var + k*step'``) and is not re-expanded here.
    ``kind``, ``name`` and ``submit_before_loop`` (a barrier) have no effect on values.
    Bounds must be integers; a zero step is an error.
  * ``Branch`` evaluates ``cond`` with Python truthiness. ``Return`` ends the program.
  * ``Op.tile`` / ``Op.cube_tile`` are ignored: tiling changes the schedule, not the values
    (it may change the float summation order on the device; compare with a tolerance).

Scalar expressions follow Python: ``//`` and ``%`` floor, ``/`` is true division, ``and``/``or``
/``not`` and the comparisons give bools, ``min``/``max`` are Python's. ``ShapeOf`` reads a
named tensor's dimension (or an SSA value's declared one). ``Read`` reads one element of a
named integer tensor (bounds-checked, no negative indices, locals must have been written).

Memory and values
  * SSA values live in one environment; a value defined in a loop body is redefined on each
    iteration and after the loop holds the last one. Named tensors (``@x``) are the
    parameters (the caller's tensors, dtype and static dims checked against ``Param.type``)
    and ``Program.locals``, allocated at start with a per-element *written* mask: reading
    any element of a local that was never written raises "read before write" (through a
    view, a whole-tensor operand ``@t`` or a scalar ``Read``). Parameters count as written.
    An elementwise op reads a whole-tensor operand only over the common valid extent of its
    operands (below), so only that region of it must have been written.
  * A runtime value (``TVal``) holds the torch tensor of its **valid** data plus its
    **declared** shape and dtype string. Valid data always starts at the origin of the
    declared block. ``view`` with ``valid_shape`` reads ``[offsets, offsets + valid)``; that
    region must lie inside the source (inside the *valid* data when the source is an SSA
    value); ``valid <= shape`` and no extent may be negative (0 gives an empty value).
    Without ``valid_shape`` a view of a named tensor must fit entirely (out of bounds is an
    error, as pypto does not check it and reads garbage); a view of an SSA value inherits
    the source's valid extent clipped to the block (pypto: "valid shape inferred from the
    input").
  * ``assemble(value, @t){offsets}`` writes the value's valid data at ``offsets``
    (bounds-checked, rank and dtype must match: pypto never casts on assemble). ``move`` is
    ``assemble`` at offset 0. ``store_scalar`` writes one element of an integer tensor.
  * When ``Op.types`` is present, the computed declared shape and dtype are checked against
    it (a mismatch is an error: it means the lowering and the semantics disagree).
  * ``view`` with a ``dtype`` attribute is a bit-cast of the region (equal element sizes).

Ops (operands are SSA values, ``@tensors`` read whole, ``Expr``s or Python numbers; a
named argument is taken from the operand at its position if present, else from ``attrs``)
  * Supported dtypes per op follow the pypto 0.2.0 op pages (table ``_DT``); anything else
    is "dtype not supported". Tensor operands of one op must share a dtype (no implicit
    promotion). Scalars take the tensor operand's dtype first (``Element`` rule): they are
    rounded to fp16/bf16, or truncated to an integer for integer tensors.
  * Elementwise ops on fp16/bf16 compute in fp32 and round the result once to the value's
    dtype (nearest-even), as a vector unit does; ``add/sub`` with ``alpha`` round
    ``a + alpha*b`` once (computed in double, ``alpha`` rounded by the Element rule). fp32 ops
    use torch's fp32 CPU kernels (operands made contiguous so a given shape always takes the
    same vector/scalar path). ``maximum``/``minimum``/``clip``/``relu`` (= ``maximum(x, 0)``)
    and ``amax``/``amin`` propagate NaN and order -0 < +0, fixing the sign of a zero result that
    torch leaves to its kernel. ``pow`` with a scalar exponent passes torch a Python number, as
    ``x ** p`` does (torch's exact special cases: ``x * x``, ``sqrt``, ...). Integer arithmetic wraps
    (torch); integer ``pow`` with a negative exponent and an integer ``remainder`` /
    ``floor_div`` / ``ceil_div`` by zero are errors. ``cbrt`` computes in fp64. ``round`` is
    half-to-even. ``exp2/expm1`` on integers give fp32.
  * Integers and bits (``bitwise_*``, shifts, ``gcd``, ``floor_div``, ``ceil_div``, ``copysign``):
    torch's results (``ceil_div`` exact in int64, wrapping back); ``bitwise_not`` of uint16 /
    uint32 goes through the signed type (torch has none); ``logical_and`` takes operands of
    different dtypes. Their dtypes are the op pages' (``ir/op_dtypes.py``, the front end's too).
  * Broadcasting: torch rules on the declared shapes (an error if incompatible). The result's
    valid extent on each axis is the smallest valid extent among the operands that are not
    broadcast along it (elements outside any operand's valid region are not produced).
  * Comparisons (``eq ne lt le gt ge greater``), ``logical_not``, ``isfinite``, ``signbit``
    give bool; ``where(cond, a, b)`` needs a bool cond.
  * Reductions ``sum amax amin prod var`` run over the valid data only (``dim`` int, tuple or,
    for ``var``, None = all; ``keepdim``; ``var`` has ``correction`` default 1). fp16/bf16
    accumulate in fp32. ``cumsum`` of an integer tensor gives int64 (pypto rule); ``cumsum`` and
    ``cumprod`` of floats accumulate sequentially in fp32, each partial result rounded to fp32 (a
    device's Add/Mul along the axis; torch's CPU scan accumulates in double), each output rounded
    once to the dtype.
  * Indexing and sorting (``argmax argmin argsort topk topk_indices gather scatter scatter_update
    one_hot``): docs/semantics.md "Indexing, sorting and scans" has the rules (NaN ordering, ties,
    index ranges); they are implemented in the last section of this module.
  * ``matmul(a, b[, bias])``: same-dtype inputs, rank 2..4 (batch dims broadcast),
    ``a_trans``/``b_trans`` swap the last two axes, ``out_dtype`` defaults to b's dtype (int32
    for int8). fp16/bf16 accumulate in fp32, int8 in integers (result int32), fp32 in fp32;
    the bias is added in the accumulator before the single rounding to ``out_dtype``. K is
    a's valid K extent (pypto's rule): b's rows past it are not read; b valid over less is an error.
  * ``cast(dtype, mode, satmode)``: only the pairs of the pypto cast page (plus identity).
    float->int: ``CAST_NONE``/``CAST_TRUNC`` truncate, ``CAST_RINT`` nearest-even,
    ``CAST_ROUND`` half away from zero, ``CAST_FLOOR``/``CAST_CEIL``; ``CAST_ODD`` falls back
    to truncation. float->narrower float: ``CAST_NONE``/``CAST_RINT`` nearest-even, the other
    modes are honoured exactly (directed rounding, ``CAST_ODD`` = round to odd; a zero result
    keeps the sign of x).
    Saturation: ``satmode`` None means the pypto default for the pair (wrap for fp16->
    uint8/int8/int16, fp32->int16, int64->int32, int32->int16; clamp otherwise). Integer
    targets: NaN becomes 0, clamping saturates to the type's range, wrapping keeps the low
    bits (two's complement). Float targets: clamping turns a finite overflow into the largest
    finite value and keeps inf/NaN; without it a finite overflow becomes inf.
  * Layout: ``reshape`` (one ``-1`` allowed; a partially valid input must be a row-major
    prefix of its block, and the result's valid extent is ``valid_shape`` or the prefix
    inferred in the new shape), ``transpose(dims=(d0, d1))``, ``unsqueeze(dim)``,
    ``concat`` (every input but the last fully valid along ``dim``), ``expand_clone(shape)``
    (broadcast size-1 axes; valid extent of a broadcast axis = ``valid_shape`` or the
    target), ``pad(pad, value)`` (torch ``F.pad`` order, right/bottom only, input fully
    valid), ``fillpad(value)`` (fills up to the declared shape).
  * Creation: ``full(fill)``, ``zeros``, ``ones``, ``arange`` with ``shape``/``dtype``/
    ``valid_shape``; ``zeros``/``ones`` default to fp32, ``arange`` to fp32 when any bound is
    a float and int32 otherwise.
  * ``quantize(x, scale[, zero_points])`` / ``dequantize``: ``dtype`` and ``axis`` (-1: a scale per
    row, -2: per column); round half to even, saturated, NaN 0; dequantize subtracts the zero
    point (docs/semantics.md "Quantization"). Implemented in the last section of this module.
  * An opcode missing from ``OPS`` raises "unknown opcode".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from ..arguments import aliased_inputs, check_outputs
from .casts import saturates
from .op_dtypes import OP_DTYPES
from .nodes import (
    BinExpr, Block, Branch, Const, Loop, Op, Program, Read, Return, ShapeOf, Span, TensorRef,
    UnExpr, Value, Var,
)

__all__ = ["OPS", "TORCH_DTYPES", "InterpError", "TVal", "run_program"]


class InterpError(Exception):
    """A runtime error of the program being interpreted (not of the interpreter)."""

    def __init__(self, message: str, span: Span | None = None, code: str | None = None):
        where = f" (line {span.line}, col {span.col + 1})" if span is not None else ""
        super().__init__(message + where)
        self.message = message
        self.span = span
        self.code = code  # "PTO106": a rule pypto itself has (ir/shape_rules.py), refused before running


TORCH_DTYPES = {
    "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "double": torch.float64,
    "int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
    "uint8": torch.uint8, "uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64,
    "bool": torch.bool,
}
_NAMES = {v: k for k, v in TORCH_DTYPES.items()}
FLOATS = frozenset({"fp32", "fp16", "bf16"})
INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_HALF = frozenset({"fp16", "bf16"})


@dataclass
class TVal:
    """A runtime tensor value: ``data`` is the valid region, ``shape`` the declared block."""

    data: torch.Tensor
    shape: tuple
    dtype: str

    @property
    def valid(self) -> tuple:
        return tuple(self.data.shape)


class _Return(Exception):
    def __init__(self, values):
        self.values = values


_MISSING = object()


# ---------------------------------------------------------------------------------------
# The machine: environment, expressions, control.


class _Machine:
    def __init__(self, program: Program, inputs: dict):
        self.program = program
        self.span: Span | None = None
        self.values: dict[str, TVal] = {}
        self.scalars: dict[str, Any] = {}
        self.tensors: dict[str, torch.Tensor] = {}
        self.tensor_dtypes: dict[str, str] = {}
        self.written: dict[str, torch.Tensor] = {}  # locals only
        self.unwritten: dict = {}  # id(TVal) -> (local, written mask, TVal): a partly written local read by this op
        self._bind(inputs)

    # -- errors and helpers --------------------------------------------------------------
    def err(self, message: str) -> InterpError:
        return InterpError(message, self.span)

    def torch_dtype(self, name: str) -> torch.dtype:
        if name not in TORCH_DTYPES:
            raise self.err(f"unknown dtype {name!r}")
        return TORCH_DTYPES[name]

    def _bind(self, inputs: dict) -> None:
        for p in self.program.params:
            if p.kind == "scalar":
                if p.name in inputs:
                    value = inputs[p.name]
                elif p.value is not None:
                    value = p.value
                else:
                    raise self.err(f"no value for scalar parameter {p.name!r}")
                if isinstance(value, torch.Tensor):
                    raise self.err(f"scalar parameter {p.name!r} got a torch.Tensor")
                self.scalars[p.name] = value
                continue
            if p.name not in inputs:
                raise self.err(f"no tensor for parameter {p.name!r}")
            t = inputs[p.name]
            if not isinstance(t, torch.Tensor):
                raise self.err(f"tensor parameter {p.name!r} got {type(t).__name__}")
            if t.dtype not in _NAMES:
                raise self.err(f"parameter {p.name!r}: unsupported torch dtype {t.dtype}")
            self.tensors[p.name] = t
            self.tensor_dtypes[p.name] = _NAMES[t.dtype]
        # Declared parameter types are checked once every tensor is bound (ShapeOf may refer
        # to any of them).
        for p in self.program.params:
            if p.kind != "tensor" or p.type is None:
                continue
            t = self.tensors[p.name]
            if self.tensor_dtypes[p.name] != p.type.dtype:
                raise self.err(
                    f"parameter {p.name!r} is declared {p.type.dtype} but got {_NAMES[t.dtype]}")
            if len(p.type.shape) != t.dim():
                raise self.err(f"parameter {p.name!r} is declared rank {len(p.type.shape)} "
                               f"but got shape {tuple(t.shape)}")
            for axis, dim in enumerate(p.type.shape):
                if isinstance(dim, (Const, int)):
                    want = dim.value if isinstance(dim, Const) else dim
                    if want != t.shape[axis]:
                        raise self.err(f"parameter {p.name!r} is declared with dim {axis} = "
                                       f"{want} but got shape {tuple(t.shape)}")
        # the rules every backend applies to tensor arguments (pypto_ast/arguments.py): outputs
        # autograd forbids writing are refused; inputs sharing an output's memory are read as
        # they were at the call
        params = [p for p in self.program.params if p.kind == "tensor"]
        names = [p.name for p in params]
        tensors = [self.tensors[name] for name in names]
        outputs = [p.is_output for p in params]
        check_outputs(names, tensors, outputs, f"{self.program.name}(): ")
        for i in aliased_inputs(tensors, outputs):
            self.tensors[names[i]] = tensors[i].clone()
        for local in self.program.locals:
            shape = self.shape_of(local.type.shape, "local shape")
            dtype = self.torch_dtype(local.type.dtype)
            data = torch.empty(shape, dtype=dtype)
            if data.is_floating_point():
                data.fill_(float("nan"))
            else:
                data.zero_()
            self.tensors[local.name] = data
            self.tensor_dtypes[local.name] = local.type.dtype
            self.written[local.name] = torch.zeros(shape, dtype=torch.bool)

    # -- expressions ---------------------------------------------------------------------
    def eval(self, e: Any) -> Any:
        """Evaluate an Expr (or pass a Python number through)."""
        if isinstance(e, (bool, int, float)):
            return e
        if isinstance(e, Const):
            return e.value
        if isinstance(e, Var):
            if e.name not in self.scalars:
                raise self.err(f"unbound scalar {e.name!r}")
            return self.scalars[e.name]
        if isinstance(e, ShapeOf):
            if e.tensor in self.tensors:
                shape = tuple(self.tensors[e.tensor].shape)
            elif e.tensor in self.values:
                shape = self.values[e.tensor].shape
            else:
                raise self.err(f"ShapeOf: unknown tensor {e.tensor!r}")
            if not -len(shape) <= e.axis < len(shape):
                raise self.err(f"ShapeOf: axis {e.axis} out of range for {e.tensor!r} {shape}")
            return shape[e.axis]
        if isinstance(e, Read):
            return self.read_scalar(e)
        if isinstance(e, BinExpr):
            return self._binexpr(e.op, self.eval(e.a), self.eval(e.b))
        if isinstance(e, UnExpr):
            a = self.eval(e.a)
            if e.op == "-":
                return -a
            if e.op == "not":
                return not a
            raise self.err(f"unknown unary scalar operator {e.op!r}")
        raise self.err(f"not a scalar expression: {e!r}")

    def _binexpr(self, op: str, a: Any, b: Any) -> Any:
        try:
            fn = _SCALAR_OPS[op]
        except KeyError:
            raise self.err(f"unknown scalar operator {op!r}") from None
        try:
            return fn(a, b)
        except ZeroDivisionError:
            raise self.err(f"scalar division by zero: {a} {op} {b}") from None

    def read_scalar(self, e: Read) -> Any:
        if e.tensor not in self.tensors:
            raise self.err(f"Read: unknown tensor @{e.tensor}")
        t = self.tensors[e.tensor]
        if self.tensor_dtypes[e.tensor] not in INTS:
            raise self.err(f"Read: @{e.tensor} is {self.tensor_dtypes[e.tensor]}; "
                           "scalar reads need an integer tensor")
        index = tuple(self.int_of(i, "Read index") for i in e.index)
        if len(index) != t.dim():
            raise self.err(f"Read: @{e.tensor} has rank {t.dim()}, got {len(index)} indices")
        for i, n in zip(index, t.shape):
            if not 0 <= i < n:
                raise self.err(f"Read: index {index} out of bounds for @{e.tensor} "
                               f"{tuple(t.shape)}")
        if e.tensor in self.written and not bool(self.written[e.tensor][index]):
            raise self.err(f"read before write: @{e.tensor}{list(index)} was never written")
        return int(t[index].item())

    def int_of(self, e: Any, what: str) -> int:
        v = self.eval(e)
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, float):
            if not v.is_integer():
                raise self.err(f"{what} is not an integer: {v}")
            return int(v)
        if not isinstance(v, int):
            raise self.err(f"{what} is not an integer: {v!r}")
        return v

    def shape_of(self, dims: Any, what: str) -> tuple:
        if not isinstance(dims, (tuple, list)):
            dims = (dims,)
        shape = tuple(self.int_of(d, what) for d in dims)
        if any(d < 0 for d in shape):
            raise self.err(f"{what} has a negative extent: {shape}")
        return shape

    # -- operands ------------------------------------------------------------------------
    def value(self, x: Any) -> TVal:
        """A tensor operand: an SSA value or a named tensor read whole."""
        if isinstance(x, Value):
            if x.name not in self.values:
                raise self.err(f"%{x.name} is not defined")
            return self.values[x.name]
        if isinstance(x, TensorRef):
            t = self.tensors.get(x.name)
            if t is None:
                raise self.err(f"unknown tensor @{x.name}")
            value = TVal(t.clone(), tuple(t.shape), self.tensor_dtypes[x.name])
            mask = self.written.get(x.name)
            if mask is not None and not bool(mask.all()):
                # checked where the op reads it: an elementwise op reads only the common valid
                # extent of its operands (_broadcast); any other op reads it whole (exec_op)
                self.unwritten[id(value)] = (x.name, mask, value)
            return value
        raise self.err(f"expected a tensor operand, got {x!r}")

    def operand(self, x: Any) -> Any:
        """A tensor operand (TVal) or a scalar (Python number)."""
        if isinstance(x, (Value, TensorRef)):
            return self.value(x)
        return self.eval(x)

    def attr(self, op: Op, key: str, default: Any = _MISSING) -> Any:
        for k, v in op.attrs:
            if k == key:
                return self.evaluate_attr(v)
        if default is _MISSING:
            raise self.err(f"{op.opcode}: missing attribute {key!r}")
        return default

    def evaluate_attr(self, v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return tuple(self.evaluate_attr(x) for x in v)
        if isinstance(v, (Const, Var, ShapeOf, Read, BinExpr, UnExpr)):
            return self.eval(v)
        if isinstance(v, (Value, TensorRef)):  # e.g. tensor bounds of clip
            return self.value(v)
        return v

    def arg(self, op: Op, index: int, key: str, default: Any = _MISSING) -> Any:
        """Operand ``index`` if present, else attribute ``key`` (evaluated)."""
        if len(op.operands) > index:
            x = op.operands[index]
            if isinstance(x, (tuple, list)):
                return tuple(self.operand(y) for y in x)
            return self.operand(x)
        return self.attr(op, key, default)

    def raise_unwritten(self) -> None:
        """A partly written local the op read whole (not through an elementwise op's valid extent)."""
        if self.unwritten:
            name = next(iter(self.unwritten.values()))[0]
            self.unwritten = {}
            raise self.err(f"read before write: local @{name} is read in a region that was never written")

    def check_written(self, name: str, region: tuple) -> None:
        mask = self.written.get(name)
        if mask is not None and not bool(mask[region].all()):
            raise self.err(f"read before write: local @{name} is read in a region that was "
                           "never written")

    # -- control -------------------------------------------------------------------------
    def run(self) -> Any:
        try:
            self.run_region(self.program.body)
        except _Return as r:
            return r.values
        return None

    def run_region(self, region: tuple) -> None:
        for node in region:
            if isinstance(node, Block):
                for op in node.ops:
                    self.exec_op(op)
            elif isinstance(node, Loop):
                self.run_loop(node)
            elif isinstance(node, Branch):
                self.span = node.span
                if self.eval(node.cond):
                    self.run_region(node.then)
                else:
                    self.run_region(node.orelse)
            elif isinstance(node, Return):
                raise _Return(self.returned(node))
            else:
                raise self.err(f"unknown IR node {type(node).__name__}")

    def run_loop(self, loop: Loop) -> None:
        self.span = loop.span
        start = self.int_of(loop.start, f"loop {loop.var} start")
        stop = self.int_of(loop.stop, f"loop {loop.var} stop")
        step = self.int_of(loop.step, f"loop {loop.var} step")
        if step == 0:
            raise self.err(f"loop {loop.var} has step 0")
        for i in range(start, stop, step):
            self.scalars[loop.var] = i
            self.run_region(loop.body)

    def returned(self, node: Return) -> Any:
        self.unwritten = {}
        out = tuple(self.value(v).data for v in node.values)
        self.raise_unwritten()
        return out[0] if len(out) == 1 else out

    # -- ops -----------------------------------------------------------------------------
    def exec_op(self, op: Op) -> None:
        self.span = op.span
        fn = OPS.get(op.opcode)
        if fn is None:
            raise self.err(f"unknown opcode {op.opcode!r}")
        self.unwritten = {}
        try:
            out = fn(self, op)
        except InterpError:
            self.raise_unwritten()
            raise
        except (RuntimeError, ValueError, TypeError, IndexError, ZeroDivisionError,
                OverflowError) as exc:
            self.raise_unwritten()
            raise self.err(f"{op.opcode}: {type(exc).__name__}: {exc}") from exc
        self.raise_unwritten()
        outs = () if out is None else (out if isinstance(out, tuple) else (out,))
        if len(outs) != len(op.results):
            raise self.err(f"{op.opcode} produces {len(outs)} value(s) but the op names "
                           f"{len(op.results)}")
        for i, (name, val) in enumerate(zip(op.results, outs)):
            if i < len(op.types) and op.types[i] is not None:
                self.check_type(op, val, op.types[i])
            self.values[name] = val

    def check_type(self, op: Op, val: TVal, ty: Any) -> None:
        shape = self.shape_of(ty.shape, f"declared shape of {op.opcode}")
        if shape != tuple(val.shape) or ty.dtype != val.dtype:
            raise self.err(f"{op.opcode}: declared {ty.dtype}{list(shape)} but the op computes "
                           f"{val.dtype}{list(val.shape)}")


_SCALAR_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "/": lambda a, b: a / b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "and": lambda a, b: bool(a) and bool(b), "or": lambda a, b: bool(a) or bool(b),
    "min": min, "max": max,
}


def run_program(program: Program, inputs: dict) -> Any:
    """Run ``program``; see the module docstring for the conventions.  A program pypto's tracer
    refuses (ir/shape_rules.py) raises before anything runs, as the emitter refuses it."""
    from .shape_rules import first_refusal

    found = first_refusal(program)
    if found is not None:
        message, page, span = found
        raise InterpError(f"{message} (pypto refuses it: see {page})", span, code="PTO106")
    return _Machine(program, dict(inputs)).run()


# ---------------------------------------------------------------------------------------
# Shared helpers for op implementations.

_ALL = frozenset(TORCH_DTYPES)
_F_I16_I32 = FLOATS | {"int16", "int32"}
# Supported input dtypes per op (pypto 0.2.0 op pages, reference §8).
_DT: dict[str, frozenset] = {
    "add": _F_I16_I32, "sub": _F_I16_I32, "mul": _F_I16_I32, "div": FLOATS,
    "maximum": _F_I16_I32, "minimum": _F_I16_I32, "pow": FLOATS | {"int32"},
    "remainder": _F_I16_I32, "fmod": FLOATS, "hypot": FLOATS,
    "bitwise_and": frozenset({"int16", "uint16"}), "bitwise_or": frozenset({"int16", "uint16"}),
    "bitwise_xor": frozenset({"int16", "uint16"}), "bitwise_not": frozenset({"int16", "uint16", "bool"}),
    "abs": FLOATS, "neg": _F_I16_I32, "exp": FLOATS, "sqrt": FLOATS, "rsqrt": FLOATS,
    "reciprocal": FLOATS, "exp2": _F_I16_I32 | {"int8", "uint8"}, "expm1": _F_I16_I32,
    "log": FLOATS, "log2": FLOATS, "log10": FLOATS, "log1p": FLOATS,
    "ceil": _F_I16_I32, "floor": _F_I16_I32, "trunc": _F_I16_I32, "round": _F_I16_I32,
    "sign": _F_I16_I32 | {"int8"}, "relu": FLOATS, "lrelu": FLOATS,
    "sigmoid": FLOATS, "sin": frozenset({"fp32", "fp16"}), "cos": frozenset({"fp32", "fp16"}),
    "softmax": FLOATS, "cbrt": FLOATS, "clip": _F_I16_I32,
    "tril": _F_I16_I32 | {"int8"}, "triu": _F_I16_I32 | {"int8"}, "clone": _ALL,
    "logical_not": FLOATS | {"bool", "int8", "uint8"}, "isfinite": FLOATS | INTS,
    "signbit": FLOATS | {"int8", "int16", "int32", "int64"},
    "eq": FLOATS, "ne": FLOATS, "lt": FLOATS, "le": FLOATS, "gt": FLOATS, "ge": FLOATS,
    "greater": FLOATS, "where": FLOATS,
    "sum": frozenset({"fp32", "bf16", "int32", "int16"}), "prod": frozenset({"fp32"}), "amax": FLOATS, "amin": FLOATS,
    "var": FLOATS, "cumsum": _F_I16_I32,
    "matmul": frozenset({"int8", "fp16", "bf16", "fp32"}),
    "transpose": frozenset({"fp16", "bf16", "int16", "uint16", "fp32", "int32", "uint32"}),
    "full": frozenset({"fp32", "int32", "int16", "fp16", "bf16"}),
}
_DT.update(OP_DTYPES)  # the integer, bitwise and logical family: the table the front end checks too


def _check_dtype(m: _Machine, op: Op, dtype: str) -> None:
    allowed = _DT.get(op.opcode)
    if allowed is not None and dtype not in allowed:
        raise m.err(f"{op.opcode}: dtype {dtype} not supported (supported: "
                    f"{', '.join(sorted(allowed))})")


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _scalar_tensor(s: Any, dtype: str) -> torch.Tensor:
    """A Python scalar as a 0-d tensor of ``dtype`` (the Element rule), in compute precision."""
    td = TORCH_DTYPES[dtype]
    if dtype in INTS:
        s = int(s)  # truncation toward zero
    elif dtype == "bool":
        s = bool(s)
    return torch.tensor(s, dtype=td).to(_compute_dtype(td))


def _norm_dim(m: _Machine, d: int, rank: int, what: str) -> int:
    if not -rank <= d < rank:
        raise m.err(f"{what}: dim {d} out of range for rank {rank}")
    return d % rank


def _broadcast(m: _Machine, op: Op, vals: list) -> tuple[tuple, list]:
    """Declared broadcast shape and each TVal's data narrowed to the common valid extent."""
    try:
        shape = tuple(torch.broadcast_shapes(*[v.shape for v in vals]))
    except RuntimeError:
        raise m.err(f"{op.opcode}: shapes {[list(v.shape) for v in vals]} do not broadcast") from None
    rank = len(shape)
    valid = []
    for d in range(rank):
        extents = []
        for v in vals:
            k = d - (rank - len(v.shape))
            if k < 0:
                continue
            if v.shape[k] != 1:
                extents.append(v.data.shape[k])
            elif v.data.shape[k] == 0:
                extents.append(0)
        if not extents:  # every operand is declared 1 along d: keep their (1 or 0) extent
            extents = [v.data.shape[d - rank + len(v.shape)] for v in vals if d >= rank - len(v.shape)]
        valid.append(min(extents))
    datas = []
    for v in vals:
        data = v.data
        pending = m.unwritten.pop(id(v), None)
        mask = pending[1] if pending is not None else None
        off = rank - len(v.shape)
        for k in range(len(v.shape)):
            if v.shape[k] != 1:
                data = data.narrow(k, 0, valid[off + k])
                mask = mask.narrow(k, 0, valid[off + k]) if mask is not None else None
        if mask is not None and not bool(mask.all()):
            raise m.err(f"read before write: local @{pending[0]} is read in a region that was never written")
        datas.append(data)
    return shape, datas


def _elementwise(m: _Machine, op: Op, operands: list, fn: Callable, *, result: str = "same",
                 dtype_from: list | None = None) -> TVal:
    """Apply ``fn`` to operands (TVals or scalars) in compute precision.

    ``result``: "same" (round back to the operands' dtype), "bool", or a dtype name.
    ``dtype_from``: which operands define the common dtype (default: all tensor operands).
    """
    tensors = [x for x in (dtype_from if dtype_from is not None else operands) if isinstance(x, TVal)]
    if not tensors:
        raise m.err(f"{op.opcode}: needs at least one tensor operand")
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise m.err(f"{op.opcode}: operand dtypes differ ({', '.join(sorted(dtypes))}); pypto "
                    "does not promote, cast explicitly")
    dtype = tensors[0].dtype
    _check_dtype(m, op, dtype)
    tvals = [x for x in operands if isinstance(x, TVal)]
    shape, datas = _broadcast(m, op, tvals)
    it = iter(datas)
    args = []
    for x in operands:
        if isinstance(x, TVal):
            d = next(it)
            # contiguous: torch's vector and scalar paths differ by an ulp for transcendental
            # functions, so a fixed layout keeps results reproducible for a given shape
            args.append(d.to(_compute_dtype(d.dtype)).contiguous())
        else:
            args.append(_scalar_tensor(x, dtype))
    out_dtype = dtype if result == "same" else result
    out = fn(*args).to(TORCH_DTYPES[out_dtype])
    valid = torch.broadcast_shapes(*[d.shape for d in datas])
    if out.shape != valid:  # e.g. where() with scalar branches: shape of the tensor operands
        out = out.expand(valid)
    return TVal(out.contiguous(), shape, out_dtype)


# ---------------------------------------------------------------------------------------
# Elementwise families.


def _pow(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if not b.is_floating_point() and bool((b < 0).any()):
        raise ValueError("integer pow with a negative exponent is undefined")
    return torch.pow(a, b)


def _op_pow(m: _Machine, op: Op) -> TVal:
    """``pow(x, p)`` with a scalar ``p`` calls torch with a Python number, as the user's torch
    code (``x ** 2``) does: torch then takes its exact special cases (``x * x``, ``sqrt``,
    ``reciprocal``); a 0-d tensor exponent would take its generic, inexact pow."""
    if len(op.operands) != 2:
        raise m.err(f"pow takes 2 operands, got {len(op.operands)}")
    a, b = m.operand(op.operands[0]), m.operand(op.operands[1])
    if not isinstance(a, TVal) or isinstance(b, TVal):
        return _elementwise(m, op, [a, b], _pow)
    p = _scalar_tensor(b, a.dtype).item()  # the Element rule: p in x's dtype

    def scalar_pow(t: torch.Tensor) -> torch.Tensor:
        if not t.is_floating_point() and p < 0:
            raise ValueError("integer pow with a negative exponent is undefined")
        return torch.pow(t, p)
    return _elementwise(m, op, [a], scalar_pow)


def _signed_zero(out: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
    """``out`` with each zero made -0 where ``negative`` holds, +0 elsewhere."""
    return torch.where(out == 0, torch.where(negative, -torch.zeros_like(out), torch.zeros_like(out)), out)


def _maximum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.maximum (a NaN operand gives NaN) with -0 < +0: torch leaves the sign of a zero
    result to the kernel it takes (the vectorised one returns the other operand)."""
    out = torch.maximum(a, b)
    return _signed_zero(out, torch.signbit(a) & torch.signbit(b)) if out.is_floating_point() else out


def _minimum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.minimum(a, b)
    return _signed_zero(out, torch.signbit(a) | torch.signbit(b)) if out.is_floating_point() else out


def _binary(fn: Callable) -> Callable:
    def run(m: _Machine, op: Op) -> TVal:
        if len(op.operands) != 2:
            raise m.err(f"{op.opcode} takes 2 operands, got {len(op.operands)}")
        a, b = m.operand(op.operands[0]), m.operand(op.operands[1])
        return _elementwise(m, op, [a, b], fn)
    return run


def _add_sub(sign: int) -> Callable:
    def run(m: _Machine, op: Op) -> TVal:
        a, b = m.operand(op.operands[0]), m.operand(op.operands[1])
        alpha = m.attr(op, "alpha", 1)
        tensor = a if isinstance(a, TVal) else b
        if isinstance(tensor, TVal) and tensor.dtype in INTS:
            alpha = int(alpha)
        elif alpha != 1 and isinstance(tensor, TVal):
            # a + alpha * b rounded once, computed in double (the product is exact there), alpha
            # rounded as a scalar operand is (the Element rule): torch's fused path, and the host's Axpy
            k = sign * _scalar_tensor(alpha, tensor.dtype).item()
            return _elementwise(m, op, [a, b], lambda x, y: (x.double() + k * y.double()).to(x.dtype))
        return _elementwise(m, op, [a, b], lambda x, y: torch.add(x, y, alpha=sign * alpha))
    return run


def _compare(fn: Callable) -> Callable:
    def run(m: _Machine, op: Op) -> TVal:
        a, b = m.operand(op.operands[0]), m.operand(op.operands[1])
        return _elementwise(m, op, [a, b], fn, result="bool")
    return run


def _unary(fn: Callable, result: str = "same", int_result: str | None = None) -> Callable:
    """``int_result``: dtype of the result when the input is an integer (e.g. exp2 -> fp32)."""
    def run(m: _Machine, op: Op) -> TVal:
        if len(op.operands) < 1:
            raise m.err(f"{op.opcode} takes a tensor operand")
        x = m.value(op.operands[0])
        res = result
        if int_result is not None and x.dtype in INTS:
            res = int_result
        return _elementwise(m, op, [x], lambda t: fn(m, op, t), result=res)
    return run


def _int_identity(torch_fn: Callable) -> Callable:
    return lambda m, op, t: t.clone() if not t.is_floating_point() else torch_fn(t)


def _as_float(torch_fn: Callable) -> Callable:
    return lambda m, op, t: torch_fn(t.float() if not t.is_floating_point() else t)


def _round(m: _Machine, op: Op, t: torch.Tensor) -> torch.Tensor:
    decimals = int(m.attr(op, "decimals", 0))
    if not t.is_floating_point():
        return t.clone() if decimals >= 0 else torch.round(t.double(), decimals=decimals).to(t.dtype)
    return torch.round(t, decimals=decimals)


def _lrelu(m: _Machine, op: Op, t: torch.Tensor) -> torch.Tensor:
    slope = float(m.attr(op, "negative_slope", 0.01))
    return torch.where(t >= 0, t, t * slope)


def _cbrt(m: _Machine, op: Op, t: torch.Tensor) -> torch.Tensor:
    d = t.double()
    return torch.where(d == 0, d, torch.sign(d) * d.abs().pow(1.0 / 3.0)).to(t.dtype)  # cbrt(-0) = -0 (C99)


def _softmax(m: _Machine, op: Op, t: torch.Tensor) -> torch.Tensor:
    """pypto's composition (operator.py): exp(x - amax) / sum, in fp32 (a true division)."""
    dim = _norm_dim(m, int(m.attr(op, "dim", -1)), t.dim(), "softmax")
    e = torch.exp(t - torch.amax(t, dim=dim, keepdim=True))
    return e / torch.sum(e, dim=dim, keepdim=True)


def _tri(torch_fn: Callable) -> Callable:
    def run(m: _Machine, op: Op, t: torch.Tensor) -> torch.Tensor:
        if t.dim() < 2:
            raise m.err(f"{op.opcode} needs rank >= 2")
        return torch_fn(t, diagonal=int(m.attr(op, "diagonal", 0)))
    return run


def _op_clip(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    lo = m.arg(op, 1, "min", None)
    hi = m.arg(op, 2, "max", None)
    operands = [x] + [b for b in (lo, hi) if b is not None]
    has_lo, has_hi = lo is not None, hi is not None

    def fn(t, *bounds):
        it = iter(bounds)
        lo_t = next(it) if has_lo else None
        hi_t = next(it) if has_hi else None
        if lo_t is not None:
            t = _maximum(t, lo_t)
        if hi_t is not None:
            t = _minimum(t, hi_t)
        return t
    return _elementwise(m, op, operands, fn)


def _op_where(m: _Machine, op: Op) -> TVal:
    cond = m.value(op.operands[0])
    if cond.dtype != "bool":
        raise m.err(f"where: condition must be bool, got {cond.dtype}")
    a, b = m.operand(op.operands[1]), m.operand(op.operands[2])
    if not isinstance(a, TVal) and not isinstance(b, TVal):
        dtype = op.types[0].dtype if op.types else "fp32"
        zero = TVal(torch.zeros((), dtype=TORCH_DTYPES[dtype]), (), dtype)
        operands = [cond, a, b, zero]
        return _elementwise(m, op, operands, lambda c, x, y, _z: torch.where(c, x, y),
                            dtype_from=[zero])
    return _elementwise(m, op, [cond, a, b], lambda c, x, y: torch.where(c, x, y),
                        dtype_from=[a, b])


# ---------------------------------------------------------------------------------------
# Reductions and scans.


def _dims(m: _Machine, op: Op, rank: int, default: Any = _MISSING) -> tuple | None:
    dim = m.attr(op, "dim", default)
    if dim is None:
        return None
    dims = dim if isinstance(dim, tuple) else (dim,)
    return tuple(sorted({_norm_dim(m, int(d), rank, op.opcode) for d in dims}))


def _reduce(fn: Callable, default_dim: Any = _MISSING) -> Callable:
    def run(m: _Machine, op: Op) -> TVal:
        x = m.value(op.operands[0])
        _check_dtype(m, op, x.dtype)
        rank = len(x.shape)
        dims = _dims(m, op, rank, default_dim)
        if dims is None:
            dims = tuple(range(rank))
        keepdim = bool(m.attr(op, "keepdim", False))
        data = x.data.to(_compute_dtype(x.data.dtype)).contiguous()
        if data.numel() == 0 and op.opcode in ("amax", "amin"):
            raise m.err(f"{op.opcode} over an empty valid region")
        out = fn(m, op, data, dims, keepdim) if dims else data.clone()
        if keepdim:
            shape = tuple(1 if d in dims else n for d, n in enumerate(x.shape))
        else:
            shape = tuple(n for d, n in enumerate(x.shape) if d not in dims)
        return TVal(out.to(TORCH_DTYPES[x.dtype]).contiguous(), shape, x.dtype)
    return run


def _amax(m, op, t, dims, keepdim):
    """torch.amax (NaN anywhere gives NaN) with -0 < +0, as ``maximum`` folded over the row."""
    out = torch.amax(t, dim=dims, keepdim=keepdim)
    if not out.is_floating_point():
        return out
    return _signed_zero(out, ~((t == 0) & ~torch.signbit(t)).any(dim=dims, keepdim=keepdim))


def _amin(m, op, t, dims, keepdim):
    out = torch.amin(t, dim=dims, keepdim=keepdim)
    if not out.is_floating_point():
        return out
    return _signed_zero(out, ((t == 0) & torch.signbit(t)).any(dim=dims, keepdim=keepdim))


def _prod(m, op, t, dims, keepdim):
    for d in reversed(dims):
        t = torch.prod(t, dim=d, keepdim=True)
    return t if keepdim else t.reshape([n for i, n in enumerate(t.shape) if i not in dims])


def _var(m, op, t, dims, keepdim):
    correction = m.attr(op, "correction", 1)
    return torch.var(t, dim=dims, correction=correction, keepdim=keepdim)


def _op_cumsum(m: _Machine, op: Op) -> TVal:
    return _scan(m, op, torch.add)


# ---------------------------------------------------------------------------------------
# Matmul.

# fp32 inputs: the fp32 accumulator leaves through Fixpipe's F322F16 / F322BF16 on master
# (cube_operation_impl.cpp CheckOperandDtype takes any float out_dtype; the 0.2.0 page lists fp32 only)
_MATMUL_OUT = {"fp16": {"fp16", "fp32"}, "bf16": {"bf16", "fp32"}, "int8": {"int32"}, "fp32": {"fp32", "fp16", "bf16"}}
_MATMUL_BIAS = {"fp16": {"fp16", "fp32"}, "bf16": {"bf16", "fp32"}, "int8": {"int32"}, "fp32": {"fp32"}}


def _cube_base_k(op: Op, k: int) -> int:
    """The K step of the cube kernel for this matmul (emit/cube.py: kL0, at most K rounded up to 16)."""
    cube = op.cube_tile or ((64, 64), (64, 64), (64, 64))
    return max(16, min(int(cube[1][0]), -(-k // 16) * 16))


def _cube_accumulate(ad, bd, init, bk: int):
    """A float matmul as the cube unit accumulates it (docs/semantics.md, matmul): each ``bk``
    step of K summed exactly (products and sums in double), added to the fp32 accumulator (L0C)
    with one rounding per step; the bias, if any, is the accumulator's start."""
    kv = ad.shape[-1]
    out = None if init is None else init.double()
    for k0 in range(0, max(kv, 1), bk):
        part = torch.matmul(ad[..., k0:k0 + bk].double(), bd[..., k0:k0 + bk, :].double())
        out = (part if out is None else out + part).float()
        out = out.double() if k0 + bk < kv else out
    return out.float()


def _op_matmul(m: _Machine, op: Op) -> TVal:
    a, b = m.value(op.operands[0]), m.value(op.operands[1])
    if a.dtype != b.dtype:
        raise m.err(f"matmul: operand dtypes differ ({a.dtype}, {b.dtype})")
    _check_dtype(m, op, a.dtype)
    out_dtype = m.attr(op, "out_dtype", "int32" if a.dtype == "int8" else b.dtype)
    if out_dtype not in _MATMUL_OUT[a.dtype]:
        raise m.err(f"matmul: out_dtype {out_dtype} not supported for {a.dtype} inputs")
    if len(a.shape) != len(b.shape) or not 2 <= len(a.shape) <= 4:
        raise m.err(f"matmul: operands must have the same rank in 2..4, got "
                    f"{list(a.shape)} and {list(b.shape)}")
    ad, bd, ash, bsh = a.data, b.data, list(a.shape), list(b.shape)
    if m.attr(op, "a_trans", False):
        ad, ash = ad.transpose(-1, -2), ash[:-2] + [ash[-1], ash[-2]]
    if m.attr(op, "b_trans", False):
        bd, bsh = bd.transpose(-1, -2), bsh[:-2] + [bsh[-1], bsh[-2]]
    if ash[-1] != bsh[-2]:
        raise m.err(f"matmul: inner dimensions differ ({ash} @ {bsh})")
    if ad.shape[-1] > bd.shape[-2]:  # pypto's K is a's valid K; b must hold data over it
        raise m.err(f"matmul: a's valid K extent {ad.shape[-1]} exceeds b's {bd.shape[-2]} "
                    f"(pypto sums over a's valid K and would read b past its valid data)")
    bd = bd[..., : ad.shape[-1], :]
    try:
        batch = list(torch.broadcast_shapes(tuple(ash[:-2]), tuple(bsh[:-2])))
    except RuntimeError:
        raise m.err(f"matmul: batch dims {ash[:-2]} and {bsh[:-2]} do not broadcast") from None
    acc = torch.int64 if a.dtype == "int8" else torch.float32
    init = None
    if len(op.operands) > 2:
        bias = m.value(op.operands[2])
        if bias.dtype not in _MATMUL_BIAS[a.dtype]:
            raise m.err(f"matmul: bias dtype {bias.dtype} not supported for {a.dtype} inputs")
        n = bsh[-1]
        if tuple(bias.shape) not in ((1, n), (n,)) or bias.valid != tuple(bias.shape):
            raise m.err(f"matmul: bias must be a fully valid (1, {n}), got {list(bias.shape)} "
                        f"valid {list(bias.valid)}")
        init = bias.data.reshape(-1)[: bd.shape[-1]].to(acc)
    if acc is torch.float32:
        out = _cube_accumulate(ad, bd, init, _cube_base_k(op, ash[-1]))
    else:
        out = torch.matmul(ad.to(acc), bd.to(acc))
        out = out if init is None else out + init
    return TVal(out.to(TORCH_DTYPES[out_dtype]).contiguous(), tuple(batch + [ash[-2], bsh[-1]]),
                out_dtype)


# ---------------------------------------------------------------------------------------
# Cast.

_CAST_PAIRS = {
    ("fp16", t) for t in ("fp32", "int32", "int16", "int8", "uint8")
} | {("bf16", "fp32"), ("bf16", "int32"), ("int32", "fp32"), ("int32", "int16"),
     ("int32", "int64"), ("uint8", "fp16"), ("int8", "fp16"), ("int16", "fp32"),
     ("int16", "fp16"), ("int64", "fp32"), ("int64", "int32"),
     ("int32", "fp16")} | {  # int32 -> fp16: master's A2/A3 table (CheckCastTypeSupport); not on 0.2.0's page
    ("fp32", t) for t in ("bf16", "fp16", "int16", "int32", "int64")}
_CAST_MODES = ("CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC",
               "CAST_ODD")


def _satmode(m: _Machine, raw: Any, pair: tuple) -> bool:
    """True = saturate (clamp)."""
    try:
        return saturates(pair, raw)
    except ValueError as exc:
        raise m.err(f"cast: {exc}") from None


def _round_to_integral(x: torch.Tensor, mode: str) -> torch.Tensor:
    """x: float64. Rounds to integral values according to ``mode``."""
    if mode == "CAST_RINT":
        return torch.round(x)  # half to even
    if mode == "CAST_ROUND":
        return torch.sign(x) * torch.floor(x.abs() + 0.5)
    if mode == "CAST_FLOOR":
        return torch.floor(x)
    if mode == "CAST_CEIL":
        return torch.ceil(x)
    return torch.trunc(x)  # CAST_NONE, CAST_TRUNC, CAST_ODD (fallback)


def _key16(y: torch.Tensor) -> torch.Tensor:
    """Monotone integer key of a 16-bit float (fp16/bf16): adjacent floats differ by 1."""
    b = y.view(torch.int16).to(torch.int32)
    return torch.where(b >= 0, b, -(b & 0x7FFF))


def _from_key16(k: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    b = torch.where(k >= 0, k, (-k) | 0x8000)
    b = torch.where(b >= 0x8000, b - 0x10000, b).to(torch.int16)
    return b.view(dtype)


def _narrow_float(x: torch.Tensor, target: torch.dtype, mode: str, saturate: bool) -> torch.Tensor:
    """fp32 -> fp16/bf16 with the rounding ``mode`` (nearest-even for NONE/RINT)."""
    y = x.to(target)
    if mode not in ("CAST_NONE", "CAST_RINT"):
        xd, yd = x.double(), y.double()
        finite = torch.isfinite(xd)
        k = _key16(y)
        dirn = torch.sign(xd).to(torch.int32)  # away from zero
        if mode == "CAST_FLOOR":
            k = torch.where(finite & (yd > xd), k - 1, k)
        elif mode == "CAST_CEIL":
            k = torch.where(finite & (yd < xd), k + 1, k)
        elif mode in ("CAST_TRUNC", "CAST_ODD"):
            k = torch.where(finite & (yd.abs() > xd.abs()), k - dirn, k)
            if mode == "CAST_ODD":
                inexact = _from_key16(k, target).double() != xd
                k = torch.where(finite & inexact & (k % 2 == 0), k + dirn, k)
        elif mode == "CAST_ROUND":
            other = torch.where(xd > yd, k + 1, k - 1)
            od = _from_key16(other, target).double()
            tie = finite & torch.isfinite(yd) & (yd != xd) & ((xd - yd).abs() == (od - xd).abs())
            k = torch.where(tie & (od.abs() > yd.abs()), other, k)
        y = _from_key16(k, target)
        y = torch.where(torch.signbit(x), -y.abs(), y.abs())  # key 0 is +0: -1e-8 truncates to -0
    if saturate:
        big = torch.finfo(target).max
        over = torch.isinf(y) & torch.isfinite(x)
        y = torch.where(over, torch.full_like(y, big) * torch.sign(x).to(target), y)
    return y


def _note_ties(m: _Machine, src: torch.Tensor, rounded: torch.Tensor) -> None:
    """Tell ``rounding_ties`` of the values this cast rounded from within ULPS fp32 steps of n + 0.5."""
    from .. import rounding_ties

    x = src.double()
    finite = torch.isfinite(x)
    gap = ((x - torch.floor(x)) - 0.5).abs()  # distance to the tie between two integers
    ulp = torch.nextafter(src.float().abs(), torch.tensor(float("inf"))).double() - src.float().abs().double()
    # a tie is only near where the window is well inside the half-unit: |x| < 2^18 in fp32
    near = finite & (gap <= rounding_ties.ULPS * ulp) & (rounding_ties.ULPS * ulp < 0.25)
    count = int(near.sum())
    if count:
        first = int(torch.nonzero(near.flatten())[0])
        rounding_ties.record(rounding_ties.Ties(m.span, count, int(x.numel()), float(x.flatten()[first]),
                                                float(rounded.flatten()[first])))


def _op_cast(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    dst = m.arg(op, 1, "dtype")
    if not isinstance(dst, str):
        raise m.err(f"cast: dtype must be a dtype name, got {dst!r}")
    dst = dst.lower().removeprefix("dt_")
    target = m.torch_dtype(dst)
    mode = str(m.attr(op, "mode", "CAST_NONE") or "CAST_NONE").rsplit(".", 1)[-1].upper()
    if mode not in _CAST_MODES:
        raise m.err(f"cast: unknown mode {mode!r}")
    pair = (x.dtype, dst)
    if x.dtype == dst:
        return TVal(x.data.clone(), x.shape, dst)
    if pair not in _CAST_PAIRS:
        raise m.err(f"cast: {x.dtype} -> {dst} is not a supported cast")
    saturate = _satmode(m, m.attr(op, "satmode", None), pair)
    src = x.data
    if src.is_floating_point() and dst in INTS:
        r = _round_to_integral(src.double(), mode)
        if mode in ("CAST_RINT", "CAST_ROUND"):
            _note_ties(m, src, r)
        r = torch.nan_to_num(r, nan=0.0)
        if saturate:
            info = torch.iinfo(target)
            out = r.clamp(info.min, info.max).to(torch.int64).to(target)
        else:
            out = r.clamp(-2.0 ** 62, 2.0 ** 62).to(torch.int64).to(target)  # wraps
    elif src.is_floating_point():
        if target.itemsize < src.dtype.itemsize:
            out = _narrow_float(src.float(), target, mode, saturate)
        else:
            out = src.to(target)
    elif dst in INTS:
        if saturate:
            info = torch.iinfo(target)
            out = src.to(torch.int64).clamp(info.min, info.max).to(target)
        else:
            out = src.to(torch.int64).to(target)
    else:  # int -> float: nearest-even
        out = src.to(target)
        if saturate and dst in _HALF:
            big = torch.finfo(target).max
            out = torch.where(torch.isinf(out), torch.full_like(out, big) * torch.sign(out), out)
    return TVal(out.contiguous(), x.shape, dst)


# ---------------------------------------------------------------------------------------
# Layout ops.


def _is_prefix(shape: tuple, valid: tuple) -> bool:
    """Is the valid region a row-major prefix of the block?"""
    for j, (n, v) in enumerate(zip(shape, valid)):
        if v != n:
            return all(s == 1 for s in shape[:j]) and tuple(valid[j + 1:]) == tuple(shape[j + 1:])
    return True


def _unit_reshape_valid(shape: tuple, valid: tuple, to: tuple) -> tuple | None:
    """The valid region after a reshape of a partially valid, non-empty value that only inserts or
    drops axes of one index ([128, 1, 32] -> [128, 32]): every other axis keeps its extent; None for
    any other reshape (or a fully valid or empty input, which the general rule takes)."""
    if tuple(valid) == tuple(shape) or 0 in valid or [d for d in shape if d != 1] != [d for d in to if d != 1]:
        return None
    kept = iter(v for d, v in zip(shape, valid) if d != 1)
    return tuple(next(kept) if d != 1 else 1 for d in to)


def _prefix_valid(shape: tuple, count: int) -> tuple | None:
    """The valid extent of the first ``count`` elements laid out in ``shape``, if rectangular."""
    if count == math.prod(shape):
        return tuple(shape)
    for k in range(len(shape)):
        inner = math.prod(shape[k + 1:])
        if all(s == 1 for s in shape[:k]) and inner and count % inner == 0 and count // inner <= shape[k]:
            return tuple(shape[:k]) + (count // inner,) + tuple(shape[k + 1:])
    return None


def _op_reshape(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    shape = list(m.arg(op, 1, "shape"))
    shape = [m.int_of(d, "reshape shape") for d in shape]
    if shape.count(-1) > 1:
        raise m.err("reshape: at most one -1")
    total = math.prod(x.shape)
    if -1 in shape:
        rest = math.prod(d for d in shape if d != -1)
        if rest == 0 or total % rest:
            raise m.err(f"reshape: cannot infer -1 for {list(x.shape)} -> {shape}")
        shape[shape.index(-1)] = total // rest
    shape = tuple(shape)
    if math.prod(shape) != total:
        raise m.err(f"reshape: {list(x.shape)} and {list(shape)} have different sizes")
    unit = _unit_reshape_valid(x.shape, x.valid, shape)
    if unit is not None:  # only axes of one index come or go: each valid element keeps its place
        valid = m.attr(op, "valid_shape", None)
        if valid is not None and tuple(m.shape_of(valid, "reshape valid_shape")) != unit:
            raise m.err(f"reshape: valid_shape {list(m.shape_of(valid, 'reshape valid_shape'))} is not the valid "
                        f"region {list(unit)} of the input {list(x.valid)} of {list(x.shape)}")
        return TVal(x.data.reshape(unit).clone(), shape, x.dtype)
    if not _is_prefix(x.shape, x.valid):
        raise m.err(f"reshape: valid region {list(x.valid)} of a {list(x.shape)} block is not "
                    "contiguous; reshape needs a fully valid (or row-prefix) input")
    count = x.data.numel()
    valid = m.attr(op, "valid_shape", None)
    if valid is not None:
        valid = m.shape_of(valid, "reshape valid_shape")
        if math.prod(valid) != count or not _is_prefix(shape, valid):
            raise m.err(f"reshape: valid_shape {list(valid)} does not hold the {count} valid "
                        "elements of the input")
    else:
        valid = _prefix_valid(shape, count)
        if valid is None:
            raise m.err(f"reshape: the {count} valid elements do not form a block of {list(shape)}")
    return TVal(x.data.reshape(valid).clone(), shape, x.dtype)


def _op_transpose(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    _check_dtype(m, op, x.dtype)
    dims = m.attr(op, "dims", None)
    if dims is None:
        dims = (m.arg(op, 1, "dim0"), m.arg(op, 2, "dim1"))
    if len(dims) != 2:
        raise m.err(f"transpose: dims must be a pair, got {dims}")
    rank = len(x.shape)
    d0, d1 = (_norm_dim(m, int(d), rank, "transpose") for d in dims)
    shape = list(x.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return TVal(x.data.transpose(d0, d1).contiguous(), tuple(shape), x.dtype)


def _op_unsqueeze(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    dim = int(m.arg(op, 1, "dim"))
    rank = len(x.shape)
    if not -rank - 1 <= dim <= rank:
        raise m.err(f"unsqueeze: dim {dim} out of range for rank {rank}")
    dim = dim % (rank + 1)
    shape = x.shape[:dim] + (1,) + x.shape[dim:]
    return TVal(x.data.unsqueeze(dim), tuple(shape), x.dtype)


def _op_concat(m: _Machine, op: Op) -> TVal:
    items = op.operands[0] if op.operands and isinstance(op.operands[0], (tuple, list)) else op.operands
    vals = [m.value(v) for v in items]
    if not vals:
        raise m.err("concat: no inputs")
    if len({v.dtype for v in vals}) > 1 or len({len(v.shape) for v in vals}) > 1:
        raise m.err("concat: inputs must share dtype and rank")
    rank = len(vals[0].shape)
    dim = _norm_dim(m, int(m.attr(op, "dim", 0)), rank, "concat")
    for d in range(rank):
        if d != dim and len({v.shape[d] for v in vals}) > 1:
            raise m.err(f"concat: shapes {[list(v.shape) for v in vals]} differ off dim {dim}")
    for v in vals[:-1]:
        if v.valid[dim] != v.shape[dim]:
            raise m.err("concat: only the last input may be partially valid along the concat dim")
    datas = []
    for v in vals:
        data = v.data
        for d in range(rank):
            if d != dim:
                data = data.narrow(d, 0, min(u.valid[d] for u in vals))
        datas.append(data)
    shape = list(vals[0].shape)
    shape[dim] = sum(v.shape[dim] for v in vals)
    return TVal(torch.cat(datas, dim=dim), tuple(shape), vals[0].dtype)


def _op_expand_clone(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    shape = m.shape_of(m.arg(op, 1, "shape"), "expand_clone shape")
    if len(shape) != len(x.shape):
        raise m.err(f"expand_clone: rank of {list(shape)} differs from {list(x.shape)}")
    valid_attr = m.attr(op, "valid_shape", None)
    valid_attr = m.shape_of(valid_attr, "expand_clone valid_shape") if valid_attr is not None else None
    valid = []
    for d, (src, dst) in enumerate(zip(x.shape, shape)):
        if src == dst:
            valid.append(x.valid[d])
        elif src == 1:
            valid.append(valid_attr[d] if valid_attr is not None else dst)
            if x.valid[d] == 0:
                valid[-1] = 0
        else:
            raise m.err(f"expand_clone: cannot broadcast {list(x.shape)} to {list(shape)}")
    return TVal(x.data.expand(valid).clone(), shape, x.dtype)


def _op_pad(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    pad = tuple(int(p) for p in m.arg(op, 1, "pad"))
    value = float(m.attr(op, "value", 0.0))
    mode = m.attr(op, "mode", "constant")
    if mode != "constant":
        raise m.err(f"pad: mode {mode!r} not supported (constant only)")
    if len(pad) not in (2, 4) or any(p < 0 for p in pad) or pad[0] or (len(pad) == 4 and pad[2]):
        raise m.err(f"pad: only right/bottom non-negative padding of length 2 or 4, got {pad}")
    if x.valid != tuple(x.shape):
        raise m.err("pad: input must be fully valid (use fillpad first)")
    shape = list(x.shape)
    shape[-1] += pad[1]
    if len(pad) == 4:
        shape[-2] += pad[3]
    if x.dtype in INTS and not math.isfinite(value):
        raise m.err(f"pad: value {value} does not fit {x.dtype}")
    return TVal(F.pad(x.data, pad, mode="constant", value=value), tuple(shape), x.dtype)


def _op_fillpad(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    value = float(m.attr(op, "value", 0.0))
    out = torch.full(x.shape, value, dtype=x.data.dtype)
    out[tuple(slice(0, v) for v in x.valid)] = x.data
    return TVal(out, x.shape, x.dtype)


# ---------------------------------------------------------------------------------------
# Creation ops.


def _created(m: _Machine, op: Op, shape: tuple, dtype: str, make: Callable) -> TVal:
    valid = m.attr(op, "valid_shape", None)
    valid = shape if valid is None else m.shape_of(valid, f"{op.opcode} valid_shape")
    if len(valid) != len(shape) or any(v > s for v, s in zip(valid, shape)):
        raise m.err(f"{op.opcode}: valid_shape {list(valid)} does not fit shape {list(shape)}")
    return TVal(make(valid), shape, dtype)


def _default_dtype(m: _Machine, op: Op, fallback: str) -> str:
    dtype = m.attr(op, "dtype", None)
    if dtype is None:
        dtype = op.types[0].dtype if op.types else fallback
    m.torch_dtype(dtype)
    return dtype


def _fill_value(m: _Machine, op: Op, value: Any, dtype: str) -> Any:
    if dtype in INTS or dtype == "bool":
        if isinstance(value, float) and not value.is_integer():
            raise m.err(f"{op.opcode}: fill value {value} does not fit {dtype}")
        return int(value)
    return float(value)


def _op_full(m: _Machine, op: Op) -> TVal:
    fill = m.arg(op, 0, "fill_value", _MISSING)
    if fill is _MISSING:
        fill = m.attr(op, "value")
    if isinstance(fill, TVal):
        raise m.err("full: the fill value must be a scalar")
    shape = m.shape_of(m.attr(op, "shape"), "full shape")
    dtype = _default_dtype(m, op, "fp32")
    _check_dtype(m, op, dtype)
    fill = _fill_value(m, op, fill, dtype)
    return _created(m, op, shape, dtype, lambda v: torch.full(v, fill, dtype=TORCH_DTYPES[dtype]))


def _const_fill(value: int) -> Callable:
    def run(m: _Machine, op: Op) -> TVal:
        shape = m.shape_of(m.arg(op, 0, "shape"), f"{op.opcode} shape")
        dtype = _default_dtype(m, op, "fp32")
        return _created(m, op, shape, dtype,
                        lambda v: torch.full(v, value, dtype=TORCH_DTYPES[dtype]))
    return run


def _op_arange(m: _Machine, op: Op) -> TVal:
    start = m.arg(op, 0, "start", 0)
    stop = m.arg(op, 1, "stop", _MISSING)
    if stop is _MISSING:
        stop = m.attr(op, "end")
    step = m.arg(op, 2, "step", 1)
    if step == 0:
        raise m.err("arange: step must not be 0")
    floaty = any(isinstance(v, float) for v in (start, stop, step))
    dtype = _default_dtype(m, op, "fp32" if floaty else "int32")
    data = torch.arange(start, stop, step, dtype=torch.float64 if floaty else torch.int64)
    data = data.to(TORCH_DTYPES[dtype])
    return TVal(data, (data.numel(),), dtype)


# ---------------------------------------------------------------------------------------
# The integer, bitwise and logical family (docs/semantics.md, "Integers and bits"): torch's
# results; an integer division by zero is an error (torch raises, pypto leaves it to the chip).


def _integer_division(fn: Callable) -> Callable:
    def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if not b.is_floating_point() and bool((b == 0).any()):
            raise ValueError("integer division by zero")
        return fn(a, b)
    return run


def _floor_div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="floor")


def _ceil_div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """ceil(a / b) exactly (in int64, so -INT_MIN is no overflow); the result wraps to the dtype."""
    return -torch.div(-a.to(torch.int64), b.to(torch.int64), rounding_mode="floor")


def _bitwise_not(t: torch.Tensor) -> torch.Tensor:
    """~t; torch has no bitwise_not for uint16 / uint32: the same bits through the signed type."""
    signed = {torch.uint16: torch.int16, torch.uint32: torch.int32}.get(t.dtype)
    return torch.bitwise_not(t) if signed is None else torch.bitwise_not(t.view(signed)).view(t.dtype)


def _op_logical_and(m: _Machine, op: Op) -> TVal:
    """logical_and: each operand's truth (!= 0); pypto allows operands of different dtypes."""
    if len(op.operands) != 2:
        raise m.err(f"logical_and takes 2 operands, got {len(op.operands)}")
    a, b = m.operand(op.operands[0]), m.operand(op.operands[1])
    tvals = [x for x in (a, b) if isinstance(x, TVal)]
    if not tvals:
        raise m.err("logical_and: needs at least one tensor operand")
    for t in tvals:
        _check_dtype(m, op, t.dtype)
    shape, datas = _broadcast(m, op, tvals)
    it = iter(datas)
    truths = [next(it) != 0 if isinstance(x, TVal) else torch.tensor(bool(x)) for x in (a, b)]
    out = torch.logical_and(*truths)
    valid = torch.broadcast_shapes(*[d.shape for d in datas])
    return TVal(out.expand(valid).contiguous(), shape, "bool")


# ---------------------------------------------------------------------------------------
# Memory: view, assemble, move, store_scalar.


def _op_view(m: _Machine, op: Op) -> TVal:
    src = op.operands[0]
    shape = m.shape_of(m.attr(op, "shape"), "view shape")
    offsets = m.attr(op, "offsets", None)
    offsets = (0,) * len(shape) if offsets is None else tuple(
        m.int_of(o, "view offset") for o in offsets)
    valid_attr = m.attr(op, "valid_shape", None)
    if isinstance(src, TensorRef):
        if src.name not in m.tensors:
            raise m.err(f"view: unknown tensor @{src.name}")
        base = m.tensors[src.name]
        name, extent, dtype = f"@{src.name}", tuple(base.shape), m.tensor_dtypes[src.name]
    else:
        v = m.value(src)
        base, name, extent, dtype = v.data, f"%{src.name}", v.valid, v.dtype
    rank = len(extent)
    if len(shape) != rank or len(offsets) != rank:
        raise m.err(f"view of {name}: shape {list(shape)} / offsets {list(offsets)} do not match "
                    f"rank {rank}")
    if any(o < 0 for o in offsets):
        raise m.err(f"view of {name}: negative offset {list(offsets)}")
    if valid_attr is not None:
        valid = m.shape_of(valid_attr, "view valid_shape")
        if len(valid) != rank or any(v > s for v, s in zip(valid, shape)):
            raise m.err(f"view of {name}: valid_shape {list(valid)} exceeds shape {list(shape)}")
        if any(o + v > n for o, v, n in zip(offsets, valid, extent)):
            raise m.err(f"view of {name}: region offsets {list(offsets)} + valid {list(valid)} is "
                        f"out of bounds of {'valid extent' if name[0] == '%' else 'shape'} "
                        f"{list(extent)}")
    elif isinstance(src, TensorRef):
        if any(o + s > n for o, s, n in zip(offsets, shape, extent)):
            raise m.err(f"view of {name}: offsets {list(offsets)} + shape {list(shape)} is out of "
                        f"bounds of {list(extent)} (give valid_shape for a partial block)")
        valid = shape
    else:
        declared = m.values[src.name].shape
        if any(o + s > n for o, s, n in zip(offsets, shape, declared)):
            raise m.err(f"view of {name}: offsets {list(offsets)} + shape {list(shape)} is out of "
                        f"bounds of {list(declared)}")
        valid = tuple(max(0, min(s, n - o)) for o, s, n in zip(offsets, shape, extent))
    region = tuple(slice(o, o + v) for o, v in zip(offsets, valid))
    if isinstance(src, TensorRef):
        m.check_written(src.name, region)
    data = base[region].clone()
    bitcast = m.attr(op, "dtype", None)
    if bitcast is not None and bitcast != dtype:
        target = m.torch_dtype(bitcast)
        if target.itemsize != data.dtype.itemsize:
            raise m.err(f"view: bit-cast {dtype} -> {bitcast} needs equal element sizes")
        data, dtype = data.view(target), bitcast
    return TVal(data, shape, dtype)


def _write(m: _Machine, op: Op, val: TVal, target: Any, offsets: tuple) -> None:
    if not isinstance(target, TensorRef):
        raise m.err(f"{op.opcode}: target must be a named tensor, got {target!r}")
    if target.name not in m.tensors:
        raise m.err(f"{op.opcode}: unknown tensor @{target.name}")
    t = m.tensors[target.name]
    tdtype = m.tensor_dtypes[target.name]
    if val.dtype != tdtype:
        raise m.err(f"{op.opcode}: value is {val.dtype} but @{target.name} is {tdtype} "
                    "(pypto does not cast; insert a cast)")
    if len(val.valid) != t.dim() or len(offsets) != t.dim():
        raise m.err(f"{op.opcode}: rank of value {list(val.shape)} / offsets {list(offsets)} does "
                    f"not match @{target.name} {list(t.shape)}")
    if any(o < 0 or o + v > n for o, v, n in zip(offsets, val.valid, t.shape)):
        raise m.err(f"{op.opcode}: region offsets {list(offsets)} + valid {list(val.valid)} is out "
                    f"of bounds of @{target.name} {list(t.shape)}")
    region = tuple(slice(o, o + v) for o, v in zip(offsets, val.valid))
    t[region] = val.data
    if target.name in m.written:
        m.written[target.name][region] = True


def _op_assemble(m: _Machine, op: Op) -> None:
    val = m.value(op.operands[0])
    offsets = tuple(m.int_of(o, "assemble offset") for o in m.attr(op, "offsets"))
    _write(m, op, val, op.operands[1], offsets)


def _op_move(m: _Machine, op: Op) -> None:
    val = m.value(op.operands[0])
    _write(m, op, val, op.operands[1], (0,) * len(val.shape))


def _op_store_scalar(m: _Machine, op: Op) -> None:
    value = m.eval(op.operands[0])
    target = op.operands[1]
    if not isinstance(target, TensorRef) or target.name not in m.tensors:
        raise m.err(f"store_scalar: target must be a known named tensor, got {target!r}")
    t = m.tensors[target.name]
    if m.tensor_dtypes[target.name] not in INTS:
        raise m.err(f"store_scalar: @{target.name} is {m.tensor_dtypes[target.name]}; scalar "
                    "stores need an integer tensor")
    index = tuple(m.int_of(i, "store_scalar index") for i in m.attr(op, "index"))
    if len(index) != t.dim() or any(not 0 <= i < n for i, n in zip(index, t.shape)):
        raise m.err(f"store_scalar: index {list(index)} out of bounds for @{target.name} "
                    f"{list(t.shape)}")
    t[index] = int(value)
    if target.name in m.written:
        m.written[target.name][index] = True


def _random(kind: str) -> Callable:
    """uniform / normal: the generator of ir/random.py (Philox-4x32-10, pypto's)."""
    def run(m: _Machine, op: Op) -> TVal:
        from . import random as rng
        from .rng_spec import check_args

        shape = m.shape_of(m.attr(op, "shape"), f"{kind} shape")
        key, counter, alg = (m.attr(op, k, None) for k in ("key", "counter", "alg"))
        wrong = check_args(key, counter, alg)
        if wrong:
            raise m.err(f"{kind}: {wrong}")
        dtype = _default_dtype(m, op, "fp32")
        if dtype not in rng.MANTISSA:
            raise m.err(f"{kind}: dtype {dtype} not supported (supported: bf16, fp16, fp32)")
        return TVal(rng.generate(kind, tuple(shape), dtype, int(key[0]), int(counter[1])), tuple(shape), dtype)
    return run


# ---------------------------------------------------------------------------------------
# The dispatch table.

OPS: dict[str, Callable[[_Machine, Op], Any]] = {
    # elementwise binary
    "add": _add_sub(1), "sub": _add_sub(-1), "mul": _binary(torch.mul), "div": _binary(torch.div),
    "maximum": _binary(_maximum), "minimum": _binary(_minimum),
    "pow": _op_pow, "remainder": _binary(torch.remainder), "fmod": _binary(torch.fmod),
    "hypot": _binary(torch.hypot), "bitwise_and": _binary(torch.bitwise_and),
    "bitwise_or": _binary(torch.bitwise_or), "bitwise_xor": _binary(torch.bitwise_xor),
    # elementwise unary
    "abs": _unary(lambda m, op, t: torch.abs(t)), "neg": _unary(lambda m, op, t: torch.neg(t)),
    "exp": _unary(lambda m, op, t: torch.exp(t)),
    "exp2": _unary(_as_float(torch.exp2), int_result="fp32"),
    "expm1": _unary(_as_float(torch.expm1), int_result="fp32"),
    "sqrt": _unary(lambda m, op, t: torch.sqrt(t)), "rsqrt": _unary(lambda m, op, t: torch.rsqrt(t)),
    "reciprocal": _unary(lambda m, op, t: torch.reciprocal(t)),
    "log": _unary(lambda m, op, t: torch.log(t)), "log2": _unary(lambda m, op, t: torch.log2(t)),
    "log10": _unary(lambda m, op, t: torch.log10(t)), "log1p": _unary(lambda m, op, t: torch.log1p(t)),
    "ceil": _unary(_int_identity(torch.ceil)), "floor": _unary(_int_identity(torch.floor)),
    "trunc": _unary(_int_identity(torch.trunc)), "round": _unary(_round),
    "sign": _unary(lambda m, op, t: torch.sign(t)), "relu": _unary(lambda m, op, t: _maximum(t, torch.zeros_like(t))),
    "lrelu": _unary(_lrelu), "sigmoid": _unary(lambda m, op, t: torch.sigmoid(t)),
    "sin": _unary(lambda m, op, t: torch.sin(t)), "cos": _unary(lambda m, op, t: torch.cos(t)),
    "cbrt": _unary(_cbrt), "softmax": _unary(_softmax),
    "tril": _unary(_tri(torch.tril)), "triu": _unary(_tri(torch.triu)),
    "clone": _unary(lambda m, op, t: t.clone()),
    "bitwise_not": _unary(lambda m, op, t: torch.bitwise_not(t)),
    "logical_not": _unary(lambda m, op, t: t == 0, result="bool"),
    "isfinite": _unary(lambda m, op, t: torch.isfinite(t), result="bool"),
    "signbit": _unary(lambda m, op, t: torch.signbit(t), result="bool"),
    "clip": _op_clip,
    # comparison and selection
    "eq": _compare(torch.eq), "ne": _compare(torch.ne), "lt": _compare(torch.lt),
    "le": _compare(torch.le), "gt": _compare(torch.gt), "ge": _compare(torch.ge),
    "greater": _compare(torch.gt), "where": _op_where,
    # reductions and scans
    "sum": _reduce(lambda m, op, t, dims, k: torch.sum(t, dim=dims, keepdim=k)),
    "amax": _reduce(_amax), "amin": _reduce(_amin),
    "prod": _reduce(_prod), "var": _reduce(_var, default_dim=None), "cumsum": _op_cumsum,
    # matrix
    "matmul": _op_matmul,
    # conversion and layout
    "cast": _op_cast, "reshape": _op_reshape, "transpose": _op_transpose,
    "unsqueeze": _op_unsqueeze, "concat": _op_concat, "expand_clone": _op_expand_clone,
    "pad": _op_pad, "fillpad": _op_fillpad,
    # creation
    "full": _op_full, "zeros": _const_fill(0), "ones": _const_fill(1), "arange": _op_arange,
    # memory
    "view": _op_view, "assemble": _op_assemble, "move": _op_move, "store_scalar": _op_store_scalar,
    # random numbers
    "uniform": _random("uniform"), "normal": _random("normal"),
}


# ---------------------------------------------------------------------------------------
# Indexing, sorting and scans: the rules are docs/semantics.md "Indexing, sorting and scans".
# Index outputs are int32 (argmax/argmin/argsort/topk) or int64 (one_hot); index inputs are
# int32/int64 (int16 too for scatter_update). An index value outside its axis's valid extent
# is an error, with the message the host kernels assert with.

_INDEX_DTYPES = frozenset({"int32", "int64"})


def _index_data(m: _Machine, op: Op, t: TVal, allowed: frozenset = _INDEX_DTYPES) -> torch.Tensor:
    if t.dtype not in allowed:
        raise m.err(f"{op.opcode}: the index is {t.dtype}; it must be {' or '.join(sorted(allowed))}")
    return t.data.to(torch.int64)


def _check_range(m: _Machine, op: Op, idx: torch.Tensor, n: int, what: str) -> None:
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise m.err(f"{op.opcode}: {what} is outside [0, {n})")


def _arg_extreme(largest: bool) -> Callable:
    """argmax / argmin: the first index of the extreme; a NaN counts as the extreme (the first
    NaN's index), -0 equals +0."""
    def run(m: _Machine, op: Op) -> TVal:
        x = m.value(op.operands[0])
        _check_dtype(m, op, x.dtype)
        rank = len(x.shape)
        dim = _norm_dim(m, int(m.attr(op, "dim", -1)), max(rank, 1), op.opcode)
        keepdim = bool(m.attr(op, "keepdim", False))
        data = x.data.float().reshape(x.data.shape if rank else (1,))
        if data.shape[dim] == 0:
            raise m.err(f"{op.opcode} over an empty valid region")
        nan = torch.isnan(data)
        clean = torch.where(nan, torch.tensor(-math.inf if largest else math.inf), data)
        best = torch.argmax(clean, dim, keepdim=True) if largest else torch.argmin(clean, dim, keepdim=True)
        first_nan = torch.argmax(nan.to(torch.int32), dim, keepdim=True)  # ties: the first
        out = torch.where(nan.any(dim, keepdim=True), first_nan, best).to(torch.int32)
        shape = tuple(1 if d == dim else n for d, n in enumerate(x.shape))
        if not keepdim:
            out = out.squeeze(dim) if rank else out.reshape(())
            shape = tuple(n for d, n in enumerate(x.shape) if d != dim)
        return TVal(out.contiguous(), shape, "int32")
    return run


def _sorted_along(m: _Machine, op: Op, x: TVal, dim: int, descending: bool) -> tuple:
    """(values, int64 indices) of a stable sort: ties keep their order, NaN sorts above +inf,
    -0 equals +0 (torch's stable sort)."""
    _check_dtype(m, op, x.dtype)
    values, indices = torch.sort(x.data, dim=dim, descending=descending, stable=True)
    return values, indices


def _op_argsort(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    dim = _norm_dim(m, int(m.attr(op, "dim", -1)), len(x.shape), "argsort")
    _, indices = _sorted_along(m, op, x, dim, bool(m.attr(op, "descending", False)))
    return TVal(indices.to(torch.int32).contiguous(), x.shape, "int32")


def _topk(m: _Machine, op: Op) -> tuple:
    x = m.value(op.operands[0])
    dim = _norm_dim(m, int(m.attr(op, "dim", -1)), len(x.shape), "topk")
    k = int(m.attr(op, "k"))
    if not 1 <= k <= x.valid[dim]:
        raise m.err(f"topk: k = {k} is outside [1, {x.valid[dim]}], the valid extent of dim {dim}")
    values, indices = _sorted_along(m, op, x, dim, bool(m.attr(op, "largest", True)))
    shape = tuple(k if d == dim else n for d, n in enumerate(x.shape))
    return x, values.narrow(dim, 0, k).contiguous(), indices.narrow(dim, 0, k).to(torch.int32).contiguous(), shape


def _op_topk(m: _Machine, op: Op) -> TVal:
    x, values, _, shape = _topk(m, op)
    return TVal(values, shape, x.dtype)


def _op_topk_indices(m: _Machine, op: Op) -> TVal:
    _, _, indices, shape = _topk(m, op)
    return TVal(indices, shape, "int32")


def _op_gather(m: _Machine, op: Op) -> TVal:
    """out[i][j] = x[index[i][j]][j] (dim 0, and so on): the index's shape; off ``dim`` the valid
    extent is the smaller of the index's and x's, as for elementwise operands."""
    x, index = m.value(op.operands[0]), m.value(op.operands[1])
    _check_dtype(m, op, x.dtype)
    idx = _index_data(m, op, index)
    rank = len(x.shape)
    if len(index.shape) != rank:
        raise m.err(f"gather: the index has rank {len(index.shape)}, the input {rank}")
    dim = _norm_dim(m, int(m.attr(op, "dim")), rank, "gather")
    for d in range(rank):
        if d != dim and index.shape[d] > x.shape[d]:
            raise m.err(f"gather: the index's dim {d} ({index.shape[d]}) exceeds the input's ({x.shape[d]})")
    for d in range(rank):
        if d != dim:
            n = min(idx.shape[d], x.valid[d])
            idx = idx.narrow(d, 0, n)
    _check_range(m, op, idx, x.valid[dim], f"an index along dim {dim}")
    data = x.data
    for d in range(rank):
        if d != dim:
            data = data.narrow(d, 0, idx.shape[d])
    return TVal(torch.gather(data, dim, idx).contiguous(), index.shape, x.dtype)


def _op_scatter(m: _Machine, op: Op) -> TVal:
    """A copy of x with src (a tensor, or one scalar) written at the index's positions along dim
    (``reduce`` 'add' / 'multiply': combined with what is there). Elements are applied in order
    along dim, so a repeated position keeps the last write, or combines in that order."""
    x, index = m.value(op.operands[0]), m.value(op.operands[1])
    src = m.operand(op.operands[2]) if len(op.operands) > 2 else m.attr(op, "src")
    _check_dtype(m, op, x.dtype)
    idx = _index_data(m, op, index)
    rank = len(x.shape)
    dim = _norm_dim(m, int(m.attr(op, "dim")), rank, "scatter")
    reduce = m.attr(op, "reduce", None)
    if reduce not in (None, "add", "multiply"):
        raise m.err(f"scatter: reduce={reduce!r} (None, 'add' or 'multiply')")
    if len(index.shape) != rank:
        raise m.err(f"scatter: the index has rank {len(index.shape)}, the input {rank}")
    for d in range(rank):
        if d != dim and idx.shape[d] > x.valid[d]:
            raise m.err(f"scatter: the index's valid extent {list(idx.shape)} exceeds the input's "
                        f"{list(x.valid)} off dim {dim}")
    if isinstance(src, TVal):
        if src.dtype != x.dtype or len(src.shape) != rank:
            raise m.err(f"scatter: src is {src.dtype}{list(src.shape)}, the input {x.dtype}{list(x.shape)}")
        if any(i > s for i, s in zip(idx.shape, src.valid)):
            raise m.err(f"scatter: the index's valid extent {list(idx.shape)} exceeds src's {list(src.valid)}")
        values = src.data
        for d in range(rank):
            values = values.narrow(d, 0, idx.shape[d])
    else:
        values = _scalar_tensor(src, x.dtype).to(x.data.dtype).expand(idx.shape)
    _check_range(m, op, idx, x.valid[dim], f"an index along dim {dim}")
    out = x.data.clone()
    half = x.dtype in _HALF
    for i in range(idx.shape[dim]):  # in order along dim: one slice never writes a position twice
        ix, v = idx.narrow(dim, i, 1), values.narrow(dim, i, 1)
        if reduce is None:
            out.scatter_(dim, ix, v)
            continue
        work, v = (out.float(), v.float()) if half else (out, v)
        if reduce == "add":
            work = work.scatter_add(dim, ix, v)
        else:
            work = work.scatter_reduce(dim, ix, v, reduce="prod", include_self=True)
        out = work.to(out.dtype)
    return TVal(out, x.shape, x.dtype)


def _op_gather_in_ub(m: _Machine, op: Op) -> TVal:
    """experimental.gather_in_ub(@param, indices, block_table){block_size, offsets, cols}: row j is
    row ``offsets[0] + block_table[0, t // block_size] * block_size + t % block_size`` (t =
    indices[0, j]) of the GM tensor, columns ``[offsets[1], offsets[1] + cols)``, for the indices'
    valid k.  A row outside the tensor, or a block outside the table's valid extent, is an error."""
    src, idx, table = (m.value(x) for x in op.operands[:3])
    block = int(m.attr(op, "block_size"))
    row0, col0 = (int(v) for v in m.attr(op, "offsets"))
    cols = int(m.attr(op, "cols"))
    if len(src.shape) != 2 or len(idx.shape) != 2 or len(table.shape) != 2:
        raise m.err("gather_in_ub: param, indices and block_table must be 2-D")
    if idx.dtype not in ("int32", "int64") or table.dtype not in ("int32", "int64"):
        raise m.err(f"gather_in_ub: indices and block_table must be int32/int64, not {idx.dtype}/{table.dtype}")
    rows, width = src.data.shape
    if not 0 <= col0 <= width - cols:
        raise m.err(f"gather_in_ub: columns [{col0}, {col0 + cols}) outside the tensor's {width}")
    k = idx.data.shape[1] if idx.data.shape[0] else 0
    out = torch.zeros((k, cols), dtype=src.data.dtype)
    for j in range(k):
        t = int(idx.data[0, j])
        b = t // block
        if t < 0 or b >= table.data.shape[1]:
            raise m.err(f"gather_in_ub: token {t} (indices[0, {j}]) is outside the block table's "
                        f"{table.data.shape[1]} blocks of {block}")
        r = row0 + int(table.data[0, b]) * block + t % block
        if not 0 <= r < rows:
            raise m.err(f"gather_in_ub: token {t} maps to row {r}, outside the tensor's {rows} rows")
        out[j] = src.data[r, col0:col0 + cols]
    return TVal(out, (idx.shape[1], cols), src.dtype)


def _op_scatter_update(m: _Machine, op: Op) -> TVal:
    """KV-cache row update: x rows (x of [T, d], or [blocks, block_size, 1, d] as T rows) at
    index[i][j] take src row i * s + j (src of [b * s, d] or [b, s, 1, d]), in row-major order."""
    x, index, src = (m.value(v) for v in op.operands[:3])
    _check_dtype(m, op, x.dtype)
    idx = _index_data(m, op, index, _INDEX_DTYPES | {"int16"})
    if int(m.attr(op, "dim", -2)) != -2:
        raise m.err("scatter_update: dim must be -2 (op page: keep the default)")
    if len(x.shape) not in (2, 4) or len(src.shape) != len(x.shape) or len(index.shape) != 2:
        raise m.err(f"scatter_update: shapes {list(x.shape)}, index {list(index.shape)}, src {list(src.shape)} "
                    "(2-D or 4-D input and src, 2-D index)")
    if src.dtype != x.dtype:
        raise m.err(f"scatter_update: src is {src.dtype}, the input {x.dtype}")
    if x.valid != x.shape or src.valid != src.shape:
        raise m.err("scatter_update: the input and src must be fully valid")
    rows = x.data.reshape(-1, x.shape[-1]).clone()
    src_rows = src.data.reshape(-1, src.shape[-1])
    if src_rows.shape[1] != rows.shape[1] or src_rows.shape[0] < index.shape[0] * index.shape[1]:
        raise m.err(f"scatter_update: src {list(src.shape)} does not hold a row of {rows.shape[1]} for each "
                    f"of the {index.shape[0]} x {index.shape[1]} index entries")
    _check_range(m, op, idx, rows.shape[0], "an index")
    s = index.shape[1]
    for i in range(idx.shape[0]):
        for j in range(idx.shape[1]):
            rows[int(idx[i, j])] = src_rows[i * s + j]
    return TVal(rows.reshape(x.shape), x.shape, x.dtype)


def _op_one_hot(m: _Machine, op: Op) -> TVal:
    x = m.value(op.operands[0])
    _check_dtype(m, op, x.dtype)
    n = int(m.attr(op, "num_classes"))
    idx = x.data.to(torch.int64)
    _check_range(m, op, idx, n, "a class value")
    out = F.one_hot(idx, n) if idx.numel() else torch.zeros(tuple(idx.shape) + (n,), dtype=torch.int64)
    return TVal(out.contiguous(), tuple(x.shape) + (n,), "int64")


def _scan(m: _Machine, op: Op, combine: Callable) -> TVal:
    """cumsum / cumprod along dim: integers in int64 exactly (cumsum), floats accumulated in fp32
    one element after the other, each result rounded once to the dtype."""
    x = m.value(op.operands[0])
    _check_dtype(m, op, x.dtype)
    dim = _norm_dim(m, int(m.arg(op, 1, "dim")), len(x.shape), op.opcode)
    if x.dtype in INTS:
        return TVal(torch.cumsum(x.data.to(torch.int64), dim=dim), x.shape, "int64")
    data = x.data.float()
    out = torch.empty_like(data)
    acc = None
    for i in range(data.shape[dim]):
        cur = data.select(dim, i)
        acc = cur.clone() if acc is None else combine(acc, cur)
        out.select(dim, i).copy_(acc)
    return TVal(out.to(TORCH_DTYPES[x.dtype]), x.shape, x.dtype)


_DT.update({  # the pypto op pages (A2 lines)
    "argmax": FLOATS, "argmin": FLOATS, "argsort": frozenset({"fp32", "fp16"}), "topk": frozenset({"fp32"}),
    "topk_indices": frozenset({"fp32"}),
    "gather": frozenset({"int16", "int32", "uint16", "uint32", "fp16", "fp32", "bf16"}),
    "scatter": FLOATS | {"int8", "uint8", "int16", "int32"},
    "scatter_update": FLOATS | {"int32", "int16"},
    "one_hot": frozenset({"int8", "int16", "int32", "int64"}), "cumprod": FLOATS,
})

OPS.update({
    "argmax": _arg_extreme(True), "argmin": _arg_extreme(False), "argsort": _op_argsort, "topk": _op_topk,
    "topk_indices": _op_topk_indices, "gather": _op_gather, "scatter": _op_scatter,
    "scatter_update": _op_scatter_update, "one_hot": _op_one_hot, "gather_in_ub": _op_gather_in_ub,
    "cumprod": lambda m, op: _scan(m, op, torch.mul),
})

OPS.update({  # the integer, bitwise and logical family
    "remainder": _binary(_integer_division(torch.remainder)), "floor_div": _binary(_integer_division(_floor_div)),
    "ceil_div": _binary(_integer_division(_ceil_div)), "gcd": _binary(torch.gcd),
    "bitwise_left_shift": _binary(torch.bitwise_left_shift), "bitwise_right_shift": _binary(torch.bitwise_right_shift),
    "bitwise_not": _unary(lambda m, op, t: _bitwise_not(t)), "copysign": _binary(torch.copysign),
    "logical_and": _op_logical_and,
})


# Math functions (docs/semantics.md, "Math functions"). erf ... atanh are computed in fp64 and
# rounded once, as the host's math APIs compute them: torch's vectorised fp32 sinh and cosh
# overflow to inf from |x| > 88.72, where the result is finite up to 89.4. atan2 and prelu are
# torch's fp32 ops; fp16/bf16 compute in fp32 and round once (as torch's 16-bit CPU kernels do).


def _in_double(torch_fn: Callable) -> Callable:
    return _unary(lambda m, op, t: torch_fn(t.double()).to(t.dtype))


def _op_prelu(m: _Machine, op: Op) -> TVal:
    """``prelu(x, weight)``: ``x > 0 ? x : weight * x`` (torch), the 1-D weight running along axis 1
    (length 1 for a 1-D x)."""
    x, w = m.value(op.operands[0]), m.value(op.operands[1])
    if len(w.shape) != 1:
        raise m.err(f"prelu: the weight must be 1-D, got {list(w.shape)}")
    if len(x.shape) >= 2:  # along axis 1, broadcast over the others
        shape = (1, w.shape[0]) + (1,) * (len(x.shape) - 2)
        w = TVal(w.data.reshape((1, w.valid[0]) + (1,) * (len(x.shape) - 2)), shape, w.dtype)
    return _elementwise(m, op, [x, w], lambda a, b: torch.where(a > 0, a, a * b))


_DT.update({name: FLOATS for name in ("erf", "erfc", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh",
                                      "tan", "tanh", "asin", "acos", "prelu")})
OPS.update({
    "erf": _in_double(torch.erf), "erfc": _in_double(torch.erfc), "atan": _in_double(torch.atan),
    "sinh": _in_double(torch.sinh), "cosh": _in_double(torch.cosh), "asinh": _in_double(torch.asinh),
    "acosh": _in_double(torch.acosh), "atanh": _in_double(torch.atanh),
    "tan": _in_double(torch.tan), "tanh": _in_double(torch.tanh), "asin": _in_double(torch.asin),
    "acos": _in_double(torch.acos),
    "atan2": _binary(torch.atan2), "prelu": _op_prelu,
})


# ---------------------------------------------------------------------------------------
# Quantization (docs/semantics.md "Quantization": the op pages pypto-quantize.md / -dequantize.md).

_QUANT_RANGE = {"int8": (-128, 127), "uint8": (0, 255)}


def _quant_param(m: _Machine, op: Op, x: TVal, p: TVal, axis: int, what: str) -> torch.Tensor:
    """scale / zero_points (fp32, one axis fewer than x) shaped to broadcast over x's valid data."""
    if p.dtype != "fp32":
        raise m.err(f"{op.opcode}: {what} must be fp32, got {p.dtype}")
    rank = len(x.shape)
    if rank == 1:
        want = (1,)
        data = p.data
    else:
        want = tuple(x.shape[:-1]) if axis == -1 else tuple(x.shape[:-2]) + (x.shape[-1],)
        keep = tuple(x.valid[:-1]) if axis == -1 else tuple(x.valid[:-2]) + (x.valid[-1],)
        if tuple(p.shape) != want:
            raise m.err(f"{op.opcode}: {what} of shape {list(p.shape)} for an input of shape {list(x.shape)} "
                        f"along axis {axis} (want {list(want)})")
        if any(v < k for v, k in zip(p.valid, keep)):
            raise m.err(f"{op.opcode}: {what} is valid for {list(p.valid)} only, the input needs {list(keep)}")
        data = p.data[tuple(slice(0, k) for k in keep)].unsqueeze(axis)
    return data.to(torch.float32)


def _quant_operands(m: _Machine, op: Op):
    x = m.value(op.operands[0])
    axis = int(m.attr(op, "axis", -1))
    if axis >= 0:
        axis -= len(x.shape)
    if axis not in (-1, -2) or (len(x.shape) == 1 and axis != -1):
        raise m.err(f"{op.opcode}: axis {axis} (the last two axes only; -1 for a 1-D input)")
    scale = _quant_param(m, op, x, m.value(op.operands[1]), axis, "scale")
    zp = _quant_param(m, op, x, m.value(op.operands[2]), axis, "zero_points") if len(op.operands) > 2 else None
    return x, scale, zp


def _op_quantize(m: _Machine, op: Op) -> TVal:
    """round(x * scale [+ zero_points]) in fp32, half to even, saturated to the target; NaN gives 0."""
    x, scale, zp = _quant_operands(m, op)
    if x.dtype != "fp32":
        raise m.err(f"quantize: the input must be fp32, got {x.dtype}")
    dst = str(m.attr(op, "dtype", "uint8" if zp is not None else "int8"))
    if dst != ("uint8" if zp is not None else "int8"):
        raise m.err(f"quantize: {'asymmetric' if zp is not None else 'symmetric'} quantization gives "
                    f"{'uint8' if zp is not None else 'int8'}, not {dst}")
    t = x.data * scale
    if zp is not None:
        t = t + zp
    lo, hi = _QUANT_RANGE[dst]
    r = torch.nan_to_num(torch.round(t), nan=0.0).clamp(lo, hi)
    return TVal(r.to(TORCH_DTYPES[dst]).contiguous(), x.shape, dst)


DEQUANT_SUBTRACTS = True
"""dequantize computes (x - zero_points) * scale: pypto's on-board test golden and the inverse of
quantize (the op page writes ``(x + zero_points) * scale``; docs/semantics.md "Quantization")."""


def _op_dequantize(m: _Machine, op: Op) -> TVal:
    """(float(x) - zero_points) * scale in fp32, each step rounded once."""
    x, scale, zp = _quant_operands(m, op)
    if x.dtype not in ("int8", "int16"):
        raise m.err(f"dequantize: the input must be int8 or int16, got {x.dtype}")
    dst = str(m.attr(op, "dtype", "fp32"))
    if dst != "fp32":
        raise m.err(f"dequantize: otype must be fp32, not {dst}")
    t = x.data.to(torch.float32)
    if zp is not None:
        t = t - zp if DEQUANT_SUBTRACTS else t + zp
    return TVal((t * scale).contiguous(), x.shape, "fp32")


OPS.update({"quantize": _op_quantize, "dequantize": _op_dequantize})


def _op_conv(m: _Machine, op: Op) -> TVal:
    """``conv(x, w[, bias])`` (pypto-conv.md): torch's conv1d/2d/3d in double on the valid input,
    explicit (lo, hi) zero padding, bias and relu, rounded once to the input's dtype.  A partially
    valid input (a view's valid_shape) convolves its valid data: the output's valid extent
    follows from it."""
    x, w = m.value(op.operands[0]), m.value(op.operands[1])
    _check_dtype(m, op, x.dtype)
    nd = len(x.shape) - 2
    if w.dtype != x.dtype or len(w.shape) != len(x.shape) or not 1 <= nd <= 3:
        raise m.err(f"conv: input {x.dtype}{list(x.shape)} and weight {w.dtype}{list(w.shape)} do not match")
    if m.attr(op, "scale", False):
        raise m.err("conv: a quantized conv (scale) is not supported")
    if w.valid != tuple(w.shape) or x.valid[1] != x.shape[1]:
        raise m.err(f"conv: the weight and the input's channels must be fully valid (input valid {list(x.valid)}, "
                    f"weight valid {list(w.valid)})")
    strides, dils = (tuple(m.evaluate_attr(m.attr(op, k))) for k in ("strides", "dilations"))
    pads, groups = tuple(m.evaluate_attr(m.attr(op, "paddings"))), m.attr(op, "groups", 1)
    bias = None
    if len(op.operands) > 2:
        b = m.value(op.operands[2])
        if b.valid != (w.shape[0],):
            raise m.err(f"conv: the bias must be a fully valid ({w.shape[0]},), got {list(b.shape)}")
        bias = b.data.double()
    xd = x.data.double()
    pad = []
    for i in reversed(range(nd)):  # F.pad: the last axis first
        pad += [pads[2 * i], pads[2 * i + 1]]
    xd = torch.nn.functional.pad(xd, pad)
    out_sp = [(xd.shape[2 + i] - dils[i] * (w.shape[2 + i] - 1) - 1) // strides[i] + 1 for i in range(nd)]
    if min(out_sp + [xd.shape[0]]) <= 0:
        out = torch.zeros((max(xd.shape[0], 0), w.shape[0]) + tuple(max(s, 0) for s in out_sp), dtype=torch.float64)
    else:
        fn = (torch.nn.functional.conv1d, torch.nn.functional.conv2d, torch.nn.functional.conv3d)[nd - 1]
        out = fn(xd, w.data.double(), bias, stride=strides, dilation=dils, groups=groups)
    if m.attr(op, "relu", False) is True:
        out = torch.relu(out)
    shape = (x.shape[0], w.shape[0]) + tuple(
        (x.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] - dils[i] * (w.shape[2 + i] - 1) - 1) // strides[i] + 1
        for i in range(nd))
    return TVal(out.to(TORCH_DTYPES[x.dtype]).contiguous(), shape, x.dtype)


_DT["conv"] = FLOATS
OPS["conv"] = _op_conv
