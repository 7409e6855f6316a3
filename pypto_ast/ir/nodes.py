"""The explicit control/compute IR: how PyPTO runs a kernel, made visible.

A ``Program`` is a control tree (``Loop``, ``Branch``: run by the AI CPU) whose leaves are
``Block``s of SSA tensor ops (run by the AI Cores). Every node is a frozen dataclass with
a deterministic text form (``printer.py``) that ``parser.py`` reads back.

Naming: SSA values are ``%name``; named tensors (kernel parameters and ``pypto.tensor``
locals, i.e. memory) are ``@name``; scalars of the control program (loop indices, scalar
parameters) are plain names inside ``Expr`` trees.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional, Union

# ---------------------------------------------------------------------------------------
# Scalar expressions: symbolic values evaluated by the control program.


@dataclass(frozen=True)
class Const:
    value: Union[int, float, bool]


@dataclass(frozen=True)
class Var:
    """A loop index or a scalar parameter."""

    name: str


@dataclass(frozen=True)
class ShapeOf:
    """A dynamic dimension of a named tensor: ``x.shape[axis]``."""

    tensor: str
    axis: int


@dataclass(frozen=True)
class Read:
    """A scalar read from tensor data (INT32 tensors): ``lens[b]``."""

    tensor: str
    index: tuple  # tuple[Expr, ...]


@dataclass(frozen=True)
class BinExpr:
    op: str  # + - * // % / == != < <= > >= and or min max
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class UnExpr:
    op: str  # - not
    a: "Expr"


Expr = Union[Const, Var, ShapeOf, Read, BinExpr, UnExpr]

BIN_OPS = ("+", "-", "*", "//", "%", "/", "==", "!=", "<", "<=", ">", ">=", "and", "or", "min", "max")
UN_OPS = ("-", "not")

# ---------------------------------------------------------------------------------------
# Types and operands.


@dataclass(frozen=True)
class TensorType:
    shape: tuple  # tuple[Expr, ...] (Const for static dims)
    dtype: str  # "fp32", "fp16", "bf16", "int32", "bool", ... (pypto DT_ name lower-cased, no DT_)


@dataclass(frozen=True)
class Value:
    """Reference to an SSA value: ``%name``."""

    name: str


@dataclass(frozen=True)
class TensorRef:
    """Reference to a named tensor (memory): ``@name``."""

    name: str


# An operand is a Value, a TensorRef, an Expr (scalar), or a tuple of operands (lists).
Operand = Any


@dataclass(frozen=True)
class Span:
    """Where in the kernel source an IR node came from (1-based line, 0-based col)."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Op:
    """One tensor operation.

    ``opcode`` uses pypto's op names (``add``, ``exp``, ``sum``, ``matmul``, ``cast``,
    ``view``, ``reshape``, ``transpose``, ``concat``, ``full``, ...). Two opcodes move
    data between memory and values: ``view`` (operand 0 a TensorRef or Value; attrs
    ``shape``, ``offsets`` and optionally ``valid_shape``) and ``assemble`` (operands
    ``(value, TensorRef)``; attr ``offsets``; no result) which writes a region of a
    named tensor. ``attrs`` is a sorted tuple of ``(key, value)`` pairs whose values are
    ints, floats, bools, strings, Exprs or tuples of those.
    """

    results: tuple  # tuple[str, ...] SSA names defined (no '%')
    opcode: str
    operands: tuple
    attrs: tuple = ()
    types: tuple = ()  # tuple[TensorType, ...], one per result
    tile: Optional[tuple] = None  # vector tile shape in effect (ints)
    cube_tile: Optional[tuple] = None  # ((mL0, mL1), (kL0, kL1), (nL0, nL1))
    span: Optional[Span] = None

    def attr(self, key: str, default: Any = None) -> Any:
        for k, v in self.attrs:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class Block:
    """A compute block: straight-line tensor ops, one AI-core graph."""

    name: str  # "b0", "b1", ... in program order
    ops: tuple  # tuple[Op, ...]


@dataclass(frozen=True)
class Loop:
    """A control loop over ``range(start, stop, step)``. ``step`` is the full stride: with
    ``unroll`` = k > 1 it is k times the source step and ``body`` already holds the k copies
    of the source body, for indices ``var``, ``var + source_step``, ... (pypto.loop); for
    ``kind == "loop_unroll"`` the body was traced once with the factor bound to ``unroll``."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple  # Region: tuple[Loop | Branch | Block | Return, ...]
    name: str = ""
    kind: str = "loop"  # "loop" | "loop_unroll" | "implicit"
    unroll: int = 1
    submit_before_loop: bool = False
    span: Optional[Span] = None


@dataclass(frozen=True)
class Branch:
    cond: Expr
    then: tuple  # Region
    orelse: tuple  # Region
    span: Optional[Span] = None


@dataclass(frozen=True)
class Return:
    """Values returned by a kernel using the return convention (``pypto_ast.jit``)."""

    values: tuple  # tuple[Value, ...]


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "tensor" | "scalar"
    type: Optional[TensorType] = None  # tensors
    is_output: bool = False  # written through [:], move, assemble
    value: Any = None  # scalars: the build-time value the program was specialised for


@dataclass(frozen=True)
class LocalTensor:
    """A ``pypto.tensor(shape, dtype, name)`` declaration: memory with no producer."""

    name: str
    type: TensorType


@dataclass(frozen=True)
class Program:
    name: str
    params: tuple  # tuple[Param, ...]
    body: tuple  # Region
    locals: tuple = ()  # tuple[LocalTensor, ...]
    paths: int = 1  # control paths enumerated (product over conds, as PyPTO compiles them)
    attrs: tuple = field(default=())  # sorted (key, value) pairs, e.g. ("source", "file.py")


Node = Union[Loop, Branch, Block, Return]


def walk(region):
    """Every node of a region, depth first, in program order."""
    for node in region:
        yield node
        if isinstance(node, Loop):
            yield from walk(node.body)
        elif isinstance(node, Branch):
            yield from walk(node.then)
            yield from walk(node.orelse)


def name_blocks(region: tuple, counter=None) -> tuple:
    """Give blocks their program-order names b0, b1, ..."""
    counter = counter if counter is not None else [0]
    out = []
    for node in region:
        if isinstance(node, Block):
            out.append(dataclasses.replace(node, name=f"b{counter[0]}"))
            counter[0] += 1
        elif isinstance(node, Loop):
            out.append(dataclasses.replace(node, body=name_blocks(node.body, counter)))
        elif isinstance(node, Branch):
            then = name_blocks(node.then, counter)
            out.append(dataclasses.replace(node, then=then, orelse=name_blocks(node.orelse, counter)))
        else:
            out.append(node)
    return tuple(out)


def blocks(program: Program):
    return [n for n in walk(program.body) if isinstance(n, Block)]


DTYPE_BYTES = {
    "fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2,
    "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "bool": 1, "double": 8,
}
