"""Shape rules pypto's tracer enforces (framework/src/interface/operation, python/pypto/operation.py)
that the front end does not: a kernel breaking one still lowers (it is well-formed IR), and both
backends refuse it with PTO106 and pypto's own message -- the emitter when it meets the op, the
interpreter before it runs anything, as pypto refuses while tracing.

* an op computing on a tensor with a dynamic dim (``CheckTensorDynamicShape``: only view,
  assemble and reshape take a tensor in GM);
* an assemble whose source has a dynamic dim (``Assemble``);
* a reshape to a non-integer shape that is not ``inplace=True`` without ``valid_shape``
  (``pypto.reshape``).
"""

from __future__ import annotations

from typing import Callable, Optional

from . import nodes as ir

DYNAMIC_OPERAND = ("Dynamic shape tensors are not allowed as operation operands. "
                   "Use view in pypto.loop to get static shape tensors before computation.")
ASSEMBLE_SOURCE = "Assemble: shape of src tensor requires integer"
RESHAPE_SHAPE = "reshape() requires integer shape when using non-inplace reshape"
GM_OPS = frozenset({"view", "assemble", "reshape", "unsqueeze", "store_scalar"})
"""Ops whose tensor operands stay in GM: a dynamic dim there is an extent the control program knows."""


def is_dynamic(shape) -> bool:
    return shape is not None and any(not (isinstance(d, int) or (isinstance(d, ir.Const) and isinstance(d.value, int)))
                                     for d in shape)


def _text(shape) -> str:
    from .printer import expr

    return "[" + ", ".join(str(d) if isinstance(d, int) else expr(d) for d in shape) + "]"


def refusal(op: ir.Op, shape_of: Callable) -> Optional[tuple]:
    """``(message, op page)`` when pypto refuses ``op``; ``shape_of(operand)`` is its declared
    shape (or None when unknown)."""
    code = op.opcode
    if code == "reshape":
        shape = op.attr("shape")
        if is_dynamic(shape) and (op.attr("inplace") is not True or op.attr("valid_shape") is not None):
            return (f"{RESHAPE_SHAPE}, but the shape {_text(shape)} is known only at run time; use "
                    "'inplace=True' (without valid_shape) for dynamic shapes", "pypto-reshape.md")
        return None
    if code == "assemble":
        src = shape_of(op.operands[0]) if op.operands else None
        if is_dynamic(src):
            return (f"{ASSEMBLE_SOURCE}: the source's shape {_text(src)} is known only at run time; "
                    "assemble a static-shaped pypto.view of it (valid_shape= for the extent)", "pypto-assemble.md")
        return None
    if code in GM_OPS:
        return None
    # gather_in_ub's first operand is the GM tensor its (static-shaped) param view reads from
    operands = op.operands[1:] if code == "gather_in_ub" else op.operands
    for i, x in enumerate(operands):
        for y in (x if isinstance(x, tuple) else (x,)):
            if isinstance(y, (ir.Value, ir.TensorRef)):
                shape = shape_of(y)
                if is_dynamic(shape):
                    name = f"@{y.name}" if isinstance(y, ir.TensorRef) else f"%{y.name}"
                    return (f"{code}: input operand {name} of shape {_text(shape)}: {DYNAMIC_OPERAND}",
                            f"pypto-{code}.md")
    return None


def declared_shapes(program: ir.Program) -> Callable:
    """``shape_of`` for ``refusal`` over a whole program: parameters, locals and op results."""
    named = {p.name: p.type.shape for p in program.params if p.kind == "tensor"}
    named.update({loc.name: loc.type.shape for loc in program.locals})
    values = {}
    for block in ir.blocks(program):
        for op in block.ops:
            for r, t in zip(op.results, op.types):
                if t is not None:
                    values[r] = t.shape

    def shape_of(x):
        if isinstance(x, ir.TensorRef):
            return named.get(x.name)
        if isinstance(x, ir.Value):
            return values.get(x.name)
        return None
    return shape_of


def first_refusal(program: ir.Program) -> Optional[tuple]:
    """``(message, page, span)`` of the first op (in program order) pypto refuses, or None."""
    shape_of = declared_shapes(program)
    for block in ir.blocks(program):
        for op in block.ops:
            found = refusal(op, shape_of)
            if found is not None:
                return found + (op.span,)
    return None
