"""The dtypes pypto's op pages allow for the integer, bitwise and logical family (reference
pypto-dsl.md §8.2-8.4 and the repository's op pages, ``docs/zh/api/operation/pypto-<op>.md``, A2
rows): the front end refuses another dtype with a located PTO106 naming the page, and the
interpreter checks the same table.  No torch here (the linter path imports the front end)."""

from __future__ import annotations

__all__ = ["OP_DTYPES", "refusal"]

_FLOATS = frozenset({"fp16", "bf16", "fp32"})
_BITS = frozenset({"int8", "uint8", "int16", "uint16", "int32", "uint32"})

OP_DTYPES: dict = {
    "bitwise_and": _BITS, "bitwise_or": _BITS, "bitwise_xor": _BITS, "bitwise_not": _BITS | {"bool"},
    "bitwise_left_shift": frozenset({"int16"}), "bitwise_right_shift": frozenset({"int16"}),
    "remainder": _FLOATS | {"int16", "int32"}, "fmod": _FLOATS,
    "floor_div": _FLOATS | {"int8", "uint8", "int32"}, "ceil_div": frozenset({"int32"}),
    "gcd": frozenset({"int8", "uint8", "int16", "int32"}), "copysign": _FLOATS,
    "logical_not": _FLOATS | _BITS | {"bool"}, "logical_and": _FLOATS | {"int8", "uint8", "int16", "int32", "bool"},
    "signbit": _FLOATS | {"int8", "int16", "int32", "int64"},
    "sum": frozenset({"fp32", "bf16", "int32", "int16"}),  # no fp16 (pypto-sum.md): accumulate in fp32 first
}


def refusal(op: str, dtype: str):
    """The message refusing ``dtype`` for ``op``, or None when the op page allows it (or the op
    is not in the table)."""
    allowed = OP_DTYPES.get(op)
    if allowed is None or dtype in allowed:
        return None
    return (f"pypto.{op} takes {', '.join(sorted(allowed))}, not {dtype} (op page: pypto-{op}.md)")
