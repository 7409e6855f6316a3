"""The torch reference interpreter (``ir/interp.py``): nothing to build; each launch interprets the IR."""

from __future__ import annotations

from . import Prepared


def prepare(program, names, inputs, *, soc=None, source_path=None, progress=None) -> Prepared:
    from ..ir.interp import InterpError, run_program

    names = tuple(names)

    def launch(values):
        return run_program(program, dict(zip(names, values)))

    return Prepared("interp", launch, (InterpError,))
