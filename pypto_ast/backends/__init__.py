"""Where a lowered program runs: one small interface, one module per backend.

``prepare(name, program, names, inputs, ...)`` does the once-per-specialisation work (emit, build,
load, lay out the arguments) and returns a :class:`Prepared`, whose ``launch(values)`` runs the
program on the call's values (in the kernel's parameter order ``names``) and returns what it returns.
``@pypto_ast.jit`` (and so the drop-in) keeps a ``Prepared`` per specialisation; ``pipeline.run``
(``--run``) prepares and launches once.  A new backend is one new module here with a ``prepare``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

NAMES = ("interp", "host", "npu")


@dataclass
class Prepared:
    """A program made ready to launch on one backend."""

    backend: str
    launch: Callable[[Sequence[Any]], Any]
    faults: tuple  # the exception types a launch raises for a fault of the kernel (located, PTO111)
    layout: Optional[dict] = None  # host/npu: the launch ABI (emit/host_backend.launch_layout)
    library: Optional[str] = None  # host/npu: the shared library's path


def prepare(name: str, program, names: Sequence[str], inputs: dict, *, soc: Optional[str] = None,
            source_path: Optional[str] = None, progress=None) -> Prepared:
    if name not in NAMES:
        raise ValueError(f"unknown backend {name!r} (available: {', '.join(NAMES)})")
    module = importlib.import_module(f"{__name__}.{name}")
    return module.prepare(program, names, inputs, soc=soc, source_path=source_path, progress=progress)
