"""The launch ABI of a host library: which tensors, scalars and returned values ``pypto_run``
takes, in which order, of which dtypes and dims.

The emitter writes its digest into the control program (``pypto_layout()``), and whoever
launches a library prepared from a layout kept elsewhere (``@pypto_ast.jit``'s disk index
keeps it next to the library) checks the two agree first: a layout handed to ``pypto_run``
that was made for another program would pass it the wrong pointers.  Standard library only
(the jit's index path imports it).
"""

from __future__ import annotations

import hashlib
import json

MANIFEST_KEYS = ("program", "buffers", "scalars", "returns", "sites")
"""The parts of ``manifest.json`` a launch needs (``sites``: where a fault is reported)."""


def param_layout(program) -> list:
    """Each parameter's name, kind, output flag, dtype and declared dims (None: DYNAMIC)."""
    return [{"name": p.name, "kind": p.kind, "is_output": bool(p.is_output),
             "dtype": p.type.dtype if p.kind == "tensor" else None,
             "dims": [_static_dim(d) for d in p.type.shape] if p.kind == "tensor" else None}
            for p in program.params]


def layout_digest(manifest: dict, params: list) -> str:
    """sha256 over the launch parts of ``manifest`` and ``params`` (``param_layout``)."""
    blob = {"manifest": {k: manifest[k] for k in MANIFEST_KEYS if k in manifest}, "params": params}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _static_dim(d):
    v = getattr(d, "value", d)
    return v if isinstance(v, int) else None
