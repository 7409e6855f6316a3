"""Where pypto's cast saturates (the cast op page, pypto-dsl.md §7.2): read by the interpreter and
by the emitter, so both backends take one answer (docs/semantics.md, "Casts").  No torch here."""

from __future__ import annotations

from typing import Any

__all__ = ["WRAP_BY_DEFAULT", "saturates"]

# satmode left out: wrap (two's complement) for these pairs, clamp for every other one
WRAP_BY_DEFAULT = frozenset({("fp16", "uint8"), ("fp16", "int8"), ("fp16", "int16"), ("fp32", "int16"),
                             ("int64", "int32"), ("int32", "int16")})


def saturates(pair: tuple, satmode: Any) -> bool:
    """Does a cast of ``pair`` ((source dtype, target dtype)) with the ``satmode`` attribute
    (None, a bool, or a SaturationMode spelling) clamp?  ValueError for an unknown spelling."""
    if satmode is None:
        return pair not in WRAP_BY_DEFAULT
    if isinstance(satmode, (bool, int)):
        return bool(satmode)
    name = str(satmode).rsplit(".", 1)[-1].upper()
    if name in ("ON", "SATURATION_ON", "TRUE"):
        return True
    if name in ("OFF", "SATURATION_OFF", "FALSE"):
        return False
    raise ValueError(f"unknown satmode {satmode!r}")
