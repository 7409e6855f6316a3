#!/usr/bin/env python3
"""Regenerate ``pypto_ast/frontend/signatures.py``: the parameter lists of pypto's Python functions.

    python scripts/pypto_signatures.py --repo /work/scratch/pypto          # rewrite the table
    python scripts/pypto_signatures.py --repo /work/scratch/pypto --check  # exit 1 if it is stale

Maintainer tool; tests and CI never run it.  Neither pypto is imported: the installed 0.2.0
wheel's sources (located with ``importlib.util.find_spec``, which runs nothing) and the
repository checkout's ``python/pypto`` are both read with ``ast`` by the static package reader
of ``scripts/pypto_surface.py``, so a name resolves to the ``def`` the interpreter would bind.

Recorded: every public function a pypto module ends up holding (as ``surface.py`` lists them) (``pypto.add`` as well as
``pypto.op.math.add``), and the methods of the classes ``pypto`` itself holds
(``pypto.Tensor.view``; ``self``/``cls`` dropped).  A function is left out when its parameters
are not what a caller binds against: any decorator other than the pass-through wrappers pypto
uses (``op_wrapper``, ``source_location``: ``functools.wraps`` around ``*args, **kwargs``), an
``@overload`` family, a property, or a name defined twice in one class body.  What is left out
is simply not checked.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import pypto_surface as surface_reader  # noqa: E402  (the sibling maintainer script)

ROOT = HERE.parent
OUT = ROOT / "pypto_ast" / "frontend" / "signatures.py"
PASS_THROUGH = {"op_wrapper", "source_location"}
BINDERS = {"staticmethod": 0, "classmethod": 1}  # decorator -> leading parameters the call binds


def decorator_name(node: ast.expr) -> str:
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else "?"


def signature(fn: ast.FunctionDef, method: bool) -> tuple | None:
    """(params, required, posonly, varargs, kwonly, kwonly_required, varkw), or None if unreliable."""
    drop = 1 if method else 0
    for dec in fn.decorator_list:
        name = decorator_name(dec)
        if name in BINDERS and method:
            drop = BINDERS[name]
        elif name not in PASS_THROUGH:
            return None
    a = fn.args
    positional = [p.arg for p in a.posonlyargs + a.args]
    required = len(positional) - len(a.defaults)
    if len(positional) < drop:
        return None
    params = tuple(positional[drop:])
    required = max(0, required - drop)
    posonly = max(0, len(a.posonlyargs) - drop)
    kwonly = tuple(p.arg for p in a.kwonlyargs)
    kwonly_required = tuple(p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None)
    return (params, required, posonly, a.vararg is not None, kwonly, kwonly_required, a.kwarg is not None)


def functions_of(package: surface_reader.StaticPackage) -> dict[str, tuple]:
    """Qualified name -> signature for one package tree."""
    package.model()  # loads every module the package's imports reach
    found: dict[str, tuple] = {}
    for modname, mod in sorted(package.mods.items()):
        private = not all(surface_reader.public(part) for part in modname.split("."))
        if private or modname in surface_reader.OPAQUE_MODULES or mod.tree is None:
            continue
        for attr, bound in sorted(mod.ns.items()):
            if not surface_reader.public(attr) or bound[0] != "def":
                continue
            kind, node = bound[1], bound[3]
            if kind == "function":
                if _overloaded(bound[2], attr):
                    continue
                sig = signature(node, method=False)
                if sig is not None:
                    found[f"{modname}.{attr}"] = sig
            elif kind == "class" and modname == package.top:
                found.update(_methods(f"{modname}.{attr}", node))
    return found


def public_only(found: dict[str, tuple]) -> dict[str, tuple]:
    """Keep the names of pypto's public surface (``surface.py``: what a module defines or exports,
    not what it merely imports)."""
    sys.path.insert(0, str(ROOT))
    from pypto_ast.frontend.surface import NAMES

    return {q: sig for q, sig in found.items() if NAMES.get(q, ("",))[0] in ("function", "member")}


def _overloaded(home: surface_reader.Mod, name: str) -> bool:
    defs = [s for s in home.tree.body if isinstance(s, ast.FunctionDef) and s.name == name]
    return len(defs) > 1 or any(decorator_name(d) == "overload" for s in defs for d in s.decorator_list)


def _methods(qual: str, cls: ast.ClassDef) -> dict[str, tuple]:
    defs: dict[str, list] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and surface_reader.public(stmt.name):
            defs.setdefault(stmt.name, []).append(stmt)
    out = {}
    for name, nodes in defs.items():
        if len(nodes) == 1:
            sig = signature(nodes[0], method=True)
            if sig is not None:
                out[f"{qual}.{name}"] = sig
    return out


HEADER = '''"""The parameter lists of pypto's Python functions: the {v020} wheel and the repository at {head}.

Generated by scripts/pypto_signatures.py; do not edit by hand.  Each entry maps a qualified name
to {{version: signature}}, the version "both" when the two agree.  A signature is
(params, required, posonly, varargs, kwonly, kwonly_required, varkw): the positional parameter
names in order (``self`` dropped for methods), how many of them have no default, how many are
positional-only, whether ``*args`` exists, the keyword-only names, those without a default, and
whether ``**kwargs`` exists.  A function whose decorators reshape its parameters is absent.
"""
V020 = "{v020}"
HEAD = "{head}"
SIGNATURES = {{
'''


def render(old: dict[str, tuple], new: dict[str, tuple], head: str) -> str:
    lines = [HEADER.format(v020=surface_reader.V020, head=head)]
    for qual in sorted(set(old) | set(new)):
        a, b = old.get(qual), new.get(qual)
        if a == b:
            entry = {"both": a}
        else:
            entry = {k: v for k, v in (("0.2.0", a), ("head", b)) if v is not None}
        lines.append(f"    {qual!r}: {entry!r},\n")
    lines.append("}\n")
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="the pypto repository checkout (read, never imported)")
    ap.add_argument("--head-label", help=f"label of the checkout (default: git short hash, else {surface_reader.DEFAULT_HEAD})")
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed table differs")
    args = ap.parse_args(argv)
    spec = importlib.util.find_spec("pypto")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the pypto 0.2.0 wheel is not installed in this interpreter")
    wheel = Path(list(spec.submodule_search_locations)[0])
    old = public_only(functions_of(surface_reader.StaticPackage(wheel)))
    new = public_only(functions_of(surface_reader.StaticPackage(args.repo / "python" / "pypto")))
    text = render(old, new, surface_reader.head_label(args.repo, args.head_label))
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} is stale; rerun without --check", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(set(old) | set(new))} names: {len(old)} in 0.2.0, {len(new)} at head)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
