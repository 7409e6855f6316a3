"""Helpers shared by rules PTO018/PTO024-PTO027 (not a rule: the registry loads only ``_MODULES``)."""

from __future__ import annotations

import ast


def in_file(ctx, node) -> bool:
    """Whether ``node`` is part of the file being linted. A helper imported from a sibling module
    (``from rope_impl import rope_3d``) is traced with the kernel, but its nodes' positions are
    in the other file: a span built from them would point at an unrelated line of this one."""
    ids = getattr(ctx, "_pto_local_ids", None)
    if ids is None:
        ids = {id(n) for n in ast.walk(ctx.source.tree)}
        ctx._pto_local_ids = ids
    return id(node) in ids


def old_parser(ctx, func) -> bool:
    """Whether pypto's AST parser (``frontend/parser/parser.py``) reads the jit kernel ``func``: always
    in 0.2.0; in the repository's later version only with ``new_ir=False`` (its ``frontend.jit``
    defaults to ``new_ir=True``, a different front end, ``pil_parser.py``, with a larger Python subset)."""
    if ctx.settings.target != "head":
        return True
    for deco in getattr(func, "decorator_list", ()):
        if isinstance(deco, ast.Call):
            for kw in deco.keywords:
                if kw.arg == "new_ir":
                    return isinstance(kw.value, ast.Constant) and kw.value.value is False
    return False
