"""Tiny helpers to write IR programs by hand in the interpreter tests."""

from __future__ import annotations

import torch

from pypto_ast.ir import (
    BinExpr, Block, Branch, Const, LocalTensor, Loop, Op, Param, Program, Read, Return, ShapeOf,
    Span, TensorRef, TensorType, UnExpr, Value, Var,
)

__all__ = [
    "BinExpr", "Block", "Branch", "C", "LocalTensor", "Loop", "Op", "Param", "Program", "Read",
    "Return", "ShapeOf", "Span", "T", "TensorType", "UnExpr", "V", "Var", "assemble", "block",
    "local", "op", "prog", "scalar", "tensor", "view", "TORCH", "ref_round",
]

TORCH = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
         "int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
         "uint8": torch.uint8, "bool": torch.bool}
TORCH.update(uint16=torch.uint16, uint32=torch.uint32)  # the bitwise ops' unsigned widths


def C(v):
    return Const(v)


def V(name):
    return Value(name)


def T(name):
    return TensorRef(name)


def _expr(x):
    return Const(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x


def _attr(v):
    if isinstance(v, (list, tuple)):
        return tuple(_attr(x) for x in v)
    return v


def op(result, opcode, *operands, types=(), span=None, **attrs):
    results = () if result is None else ((result,) if isinstance(result, str) else tuple(result))
    return Op(results=results, opcode=opcode, operands=tuple(operands),
              attrs=tuple(sorted((k, _attr(v)) for k, v in attrs.items())), types=tuple(types),
              span=span)


def view(result, src, shape, offsets, valid_shape=None, span=None):
    attrs = {"shape": tuple(_expr(d) for d in shape), "offsets": tuple(_expr(o) for o in offsets)}
    if valid_shape is not None:
        attrs["valid_shape"] = tuple(_expr(d) for d in valid_shape)
    return op(result, "view", src, span=span, **attrs)


def assemble(value, target, offsets, span=None):
    return op(None, "assemble", V(value), T(target),
              offsets=tuple(_expr(o) for o in offsets), span=span)


def block(*ops, name="b0"):
    return Block(name, tuple(ops))


def tensor(name, shape, dtype, out=False):
    return Param(name, "tensor", TensorType(tuple(_expr(d) for d in shape), dtype), is_output=out)


def scalar(name, value=None):
    return Param(name, "scalar", value=value)


def local(name, shape, dtype):
    return LocalTensor(name, TensorType(tuple(_expr(d) for d in shape), dtype))


def prog(params, *body, locals=()):
    return Program("k", tuple(params), tuple(body), tuple(locals))


def ref_round(fn, dtype, *tensors):
    """The reference rule for elementwise ops: compute in fp32 for fp16/bf16, round once."""
    td = TORCH[dtype]
    if dtype in ("fp16", "bf16"):
        return fn(*[t.float() for t in tensors]).to(td)
    return fn(*tensors)
