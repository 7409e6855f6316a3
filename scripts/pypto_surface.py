#!/usr/bin/env python3
"""Regenerate ``pypto_ast/frontend/surface.py``: every public name of the ``pypto`` package.

    python scripts/pypto_surface.py --repo /work/scratch/pypto          # rewrite the table
    python scripts/pypto_surface.py --repo /work/scratch/pypto --check  # exit 1 if it is stale

Maintainer tool; tests and CI never run it.  Two sources are merged:

* the installed wheel (must be pypto 0.2.0): imported in a child process whose working
  directory and HOME are fresh temporary directories (importing pypto writes ``.pypto/`` and
  ``ascend/`` folders and may print), and walked through its attributes;
* the repository checkout (``--repo``, labelled ``--head-label``): never imported.  The files
  under ``python/pypto/`` are read with ``ast`` and the package's import statements are played
  back in order, the way the interpreter would run them, to learn which names each module
  ends up with.  The compiled extension ``pypto_impl`` is read from its ``.pyi`` stubs when
  the checkout has them; a name the stubs do not declare (or a native module without stubs)
  is kept by name only, with kind "native".

Both sources are reduced to the same model -- for each pypto module, its public attributes
with a description; for each class, its public members -- and then flattened into qualified
names by one walk with one set of rules (``flatten``):

* public means "does not start with an underscore";
* a module attribute is kept when its value belongs to pypto: a submodule of the package, a
  function or class whose ``__module__`` starts with ``pypto``, a value whose type is a pypto
  type (dtypes, enum members, the ``platform`` object), or a value assigned at module level
  in a pypto source file (plain constants, type aliases).  Names merely imported from the
  standard library, typing, torch, numpy ... are dropped, and so are modules outside pypto;
* a package (``pypto``, ``pypto.frontend``, ``pypto.op``, ...) shows everything it holds, star
  imports included; a plain module shows only what it defines or assigns itself, its own
  submodules, and what its ``__all__`` exports -- the pypto names it merely imports
  (``pypto.op.math`` importing ``Tensor``) are its implementation, not its surface;
* the walk enters a submodule reached under its own name (``pypto.frontend.parser``) and any
  submodule ``pypto`` itself holds under another name (``pypto.math`` is ``pypto.op.math``,
  ``pypto.distributed`` is ``pypto.op.distributed``).  It lists but does not enter the
  extension module ``pypto.pypto_impl`` (several hundred internal bindings), nor a module
  re-exported deeper down under another name (``pypto.frontend.parser.error`` on HEAD is
  ``pypto.error``);
* a class's members -- its public attributes and those of its pypto-defined bases (pybind
  classes count as pypto-defined), plus annotated fields; for pybind enums without the
  generic ``name``/``value`` -- are listed where the class sits directly in ``pypto``
  (``pypto.Tensor.add``, ``pypto.tensor.add``) and at its defining path
  (``pypto.config.ConfigScope.*``); other re-exports list the class only;
* ``DT_*`` module constants are kind "dtype", as are the ``DT_*`` members of an enum.

``--self-test`` runs the static reader over the installed wheel's own sources (and its
``pypto_impl.pyi``) and diffs the result against the import walk: a check that the reader
still follows the package the way the interpreter does.  At the time of writing the only
differences are two enum sentinels the 0.2.0 stub omits (``CachePolicy.MAX_NUM``,
``TileOpFormat.TILEOP_FORMAT_NUM``).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "pypto_ast" / "frontend" / "surface.py"
V020 = "0.2.0"
DEFAULT_HEAD = "883e7df"

KINDS = ("module", "function", "class", "enum", "member", "constant", "dtype", "native")
ENUM_BASES = {"enum.Enum", "enum.IntEnum", "enum.Flag", "enum.IntFlag", "enum.StrEnum"}
PYBIND_ENUM_GENERIC = {"name", "value"}
# modules whose contents are not walked even though they belong to the package
OPAQUE_MODULES = {"pypto.pypto_impl"}
# a pypto submodule with one of these names and no source is the compiled extension
NATIVE_MODULE_NAMES = {"pypto_impl", "_C", "_impl"}
LINE_BUDGET = 4000


def public(name: str) -> bool:
    return not name.startswith("_")


def in_pypto(modname: object) -> bool:
    return isinstance(modname, str) and (modname == "pypto" or modname.startswith("pypto."))


# --------------------------------------------------------------------------------------------
# The shared model and the walk that turns it into qualified names.
#
# model = {"modules": {modname: {"package": bool, "attrs": {attr: desc}}},
#          "classes": {canonical: {member: kind}}}
# desc  = {"kind": k, "own": bool} with, for kind "module", "target": the module's __name__,
#         and for kind "class"/"enum", "canonical": "<defining module>.<qualname>".  "own" says
#         the module itself defines the name (def, class, assignment, its own submodule) or
#         exports it in ``__all__``, rather than merely importing it.
# --------------------------------------------------------------------------------------------


def member_kind(cls_kind: str, name: str) -> str:
    return "dtype" if cls_kind == "enum" and name.startswith("DT_") else "member"


def flatten(model: dict) -> dict[str, str]:
    modules, classes = model["modules"], model["classes"]
    out = {"pypto": "module"}

    def walk(modname: str, path: str) -> None:
        entry = modules[modname]
        for attr, desc in sorted(entry["attrs"].items()):
            if not (entry["package"] or desc["own"]):
                continue  # a plain module's imports are its implementation, not its surface
            qual, kind = f"{path}.{attr}", desc["kind"]
            out[qual] = kind
            if kind == "module":
                target = desc["target"]
                if target in OPAQUE_MODULES or target not in modules:
                    continue
                if target == qual or (path == "pypto" and target != "pypto"):
                    walk(target, qual)
            elif kind in ("class", "enum"):
                canonical = desc["canonical"]
                if qual == canonical or path == "pypto":
                    for member, mkind in sorted(classes.get(canonical, {}).items()):
                        out[f"{qual}.{member}"] = mkind

    walk("pypto", "pypto")
    return out


def module_desc_kind(attr: str, kind: str) -> str:
    """The dtype constants are told by name on both sides (the static side cannot see types)."""
    if attr.startswith("DT_") and kind in ("constant", "native"):
        return "dtype"
    return kind


# --------------------------------------------------------------------------------------------
# Source helpers used by both sides.
# --------------------------------------------------------------------------------------------


def toplevel_statements(body: list[ast.stmt]):
    """Module-level statements in order, entering if/try/with blocks (not ``if TYPE_CHECKING``)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            test = stmt.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                yield from toplevel_statements(stmt.orelse)
                continue
            yield from toplevel_statements(stmt.body)
            yield from toplevel_statements(stmt.orelse)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            yield from toplevel_statements(stmt.body)
            for handler in stmt.handlers:
                yield from toplevel_statements(handler.body)
            yield from toplevel_statements(stmt.orelse)
            yield from toplevel_statements(stmt.finalbody)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from toplevel_statements(stmt.body)
        else:
            yield stmt


def target_names(target: ast.expr):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def assigned_names(tree: ast.Module) -> set[str]:
    """Names a module binds by assignment (not by import/def/class) at module level."""
    names: set[str] = set()
    for stmt in toplevel_statements(tree.body):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                names.update(target_names(target))
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
            names.update(target_names(stmt.target))
    return names


def class_body_names(node: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for stmt in toplevel_statements(node.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                names.update(target_names(target))
        elif isinstance(stmt, ast.AnnAssign):
            names.update(target_names(stmt.target))
    return {n for n in names if public(n)}


# --------------------------------------------------------------------------------------------
# Side 1: the installed wheel, imported (runs in the child process).
# --------------------------------------------------------------------------------------------


def runtime_model() -> dict:
    import enum
    import importlib.metadata
    import inspect
    import types

    version = importlib.metadata.version("pypto")
    import pypto  # the child's cwd and HOME are temporary directories

    dist_dir = Path(str(importlib.metadata.distribution("pypto").locate_file("pypto"))).resolve()
    if Path(pypto.__file__).resolve().parent != dist_dir:
        raise SystemExit(f"imported {pypto.__file__}, not the installed wheel under {dist_dir}")

    # names each loaded pypto module assigns at module level, read from its source
    assigned: dict[str, set[str]] = {}
    for name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if in_pypto(name) and path and path.endswith(".py"):
            try:
                assigned[name] = assigned_names(ast.parse(Path(path).read_text(encoding="utf-8")))
            except (OSError, SyntaxError, UnicodeDecodeError):
                assigned[name] = set()

    def assigned_in_pypto(attr: str, value: object) -> bool:
        for modname, names in assigned.items():
            mod = sys.modules.get(modname)
            if attr in names and mod is not None and getattr(mod, attr, object()) is value:
                return True
        return False

    def is_pybind_enum(cls: type) -> bool:
        return "__members__" in cls.__dict__ and not issubclass(cls, enum.Enum)

    classes: dict[str, dict[str, str]] = {}

    def class_desc(cls: type) -> dict:
        kind = "enum" if issubclass(cls, enum.Enum) or is_pybind_enum(cls) else "class"
        canonical = f"{cls.__module__}.{cls.__qualname__}"
        if canonical not in classes:
            members: set[str] = set()
            for klass in cls.__mro__:
                if not in_pypto(getattr(klass, "__module__", None)):
                    continue
                own = {k for k in klass.__dict__ if public(k)}
                own |= {k for k in klass.__dict__.get("__annotations__", {}) if public(k)}
                if is_pybind_enum(klass):
                    own -= PYBIND_ENUM_GENERIC
                members |= own
            classes[canonical] = {m: member_kind(kind, m) for m in members}
        return {"kind": kind, "canonical": canonical}

    def describe(attr: str, value: object) -> dict | None:
        if isinstance(value, types.ModuleType):
            return {"kind": "module", "target": value.__name__} if in_pypto(value.__name__) else None
        if isinstance(value, type):
            return class_desc(value) if in_pypto(value.__module__) else None
        if inspect.isroutine(value) or (callable(value) and hasattr(value, "__wrapped__")):
            return {"kind": "function"} if in_pypto(getattr(value, "__module__", None)) else None
        if in_pypto(type(value).__module__) or assigned_in_pypto(attr, value):
            return {"kind": module_desc_kind(attr, "constant")}
        return None

    def owns(mod: types.ModuleType, attr: str, value: object, desc: dict) -> bool:
        if desc["kind"] == "module":
            return desc["target"] == f"{mod.__name__}.{attr}"
        if attr in (getattr(mod, "__all__", None) or ()):
            return True
        if isinstance(value, type) or desc["kind"] == "function":
            if getattr(value, "__module__", None) == mod.__name__:
                return True
        return attr in assigned.get(mod.__name__, ())

    modules: dict[str, dict] = {}
    todo = [sys.modules["pypto"]]
    while todo:
        mod = todo.pop()
        if mod.__name__ in modules:
            continue
        table: dict[str, dict] = {}
        modules[mod.__name__] = {"package": hasattr(mod, "__path__"), "attrs": table}
        if mod.__name__ in OPAQUE_MODULES:
            continue
        for attr in sorted(dir(mod)):
            if not public(attr):
                continue
            try:
                value = getattr(mod, attr)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails is not a name we can use
                continue
            desc = describe(attr, value)
            if desc is None:
                continue
            desc["own"] = owns(mod, attr, value, desc)
            table[attr] = desc
            if desc["kind"] == "module":
                todo.append(value)
    return {"version": version, "package_dir": str(dist_dir), "modules": modules, "classes": classes}


def load_installed(python: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="pypto-surface-") as tmp:
        home, work = Path(tmp, "home"), Path(tmp, "work")
        home.mkdir()
        work.mkdir()
        out = Path(tmp, "model.json")
        env = dict(os.environ, HOME=str(home))
        proc = subprocess.run(
            [python, str(Path(__file__).resolve()), "--child-dump", str(out)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0 or not out.exists():
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            raise SystemExit(f"importing the installed pypto failed (exit {proc.returncode})")
        return json.loads(out.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# Side 2: the repository checkout, read statically.
# --------------------------------------------------------------------------------------------


class Mod:
    def __init__(self, name: str, file: Path | None, is_pkg: bool, native: bool):
        self.name, self.file, self.is_pkg, self.native = name, file, is_pkg, native
        self.ns: dict[str, tuple] = {}
        self.own: set[str] = set()  # names bound by def, class or assignment (not by import)
        self.all: list[str] | None = None
        self.tree: ast.Module | None = None


# bindings:  ("module", modname) | ("def", kind, Mod, ClassDef|FunctionDef)
#            | ("const",) | ("native", qualname) | ("ext", dotted origin)
CONST = ("const",)


class StaticPackage:
    def __init__(self, src: Path, top: str = "pypto"):
        self.src, self.top = src, top
        self.mods: dict[str, Mod] = {}
        self.extra_members: dict[int, set[str]] = {}  # id(ClassDef) -> names set by Cls.x = ...
        self.notes: list[str] = []

    # ---- locating and running modules -------------------------------------------------------

    def locate(self, name: str) -> tuple[Path | None, bool, bool] | None:
        rel = name.split(".")[1:]
        base = self.src.joinpath(*rel) if rel else self.src
        for file, is_pkg, native in (
            (base / "__init__.py", True, False),
            (base.with_suffix(".py") if rel else None, False, False),
            (base / "__init__.pyi", True, True),
            (base.with_suffix(".pyi") if rel else None, False, True),
        ):
            if file is not None and file.is_file():
                return file, is_pkg, native
        if any(mod.native for mod in self.ancestors(name)):
            return None, False, True  # a submodule of the extension, without stubs
        if name.rsplit(".", 1)[-1] in NATIVE_MODULE_NAMES:
            return None, True, True  # the compiled extension, without stubs in this checkout
        return None

    def ancestors(self, name: str):
        parts = name.split(".")
        for i in range(1, len(parts)):
            mod = self.mods.get(".".join(parts[:i]))
            if mod is not None:
                yield mod

    def load(self, name: str, quiet: bool = False) -> Mod | None:
        if name in self.mods:
            return self.mods[name]
        parent_name = name.rpartition(".")[0]
        if parent_name and self.load(parent_name, quiet) is None:
            return None
        found = self.locate(name)
        if found is None:
            if not quiet:
                self.notes.append(f"import of {name}: no such module in the checkout")
            return None
        file, is_pkg, native = found
        mod = self.mods[name] = Mod(name, file, is_pkg, native)
        if file is not None:
            mod.tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
            self.run(mod)
        if parent_name:
            self.mods[parent_name].ns[name.rpartition(".")[2]] = ("module", name)
        return mod

    @staticmethod
    def bind(mod: Mod, name: str, value: tuple, own: bool) -> None:
        mod.ns[name] = value
        if own:
            mod.own.add(name)
        else:
            mod.own.discard(name)

    def run(self, mod: Mod) -> None:
        for stmt in toplevel_statements(mod.tree.body):
            if isinstance(stmt, ast.Import):
                self.do_import(mod, stmt)
            elif isinstance(stmt, ast.ImportFrom):
                self.do_import_from(mod, stmt)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.bind(mod, stmt.name, ("def", "function", mod, stmt), True)
            elif isinstance(stmt, ast.ClassDef):
                self.bind(mod, stmt.name, ("def", self.class_kind(mod, stmt), mod, stmt), True)
            elif isinstance(stmt, ast.Assign):
                value = self.eval(mod, stmt.value)
                for target in stmt.targets:
                    self.assign(mod, target, value, stmt.value)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self.assign(mod, stmt.target, self.eval(mod, stmt.value), stmt.value)
            elif isinstance(stmt, ast.AugAssign):
                if isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__":
                    mod.all = (mod.all or []) + (self.str_list(mod, stmt.value) or [])
                else:
                    for name in target_names(stmt.target):
                        self.bind(mod, name, mod.ns.get(name, CONST), True)
            elif isinstance(stmt, ast.Delete):
                for target in stmt.targets:
                    for name in target_names(target):
                        mod.ns.pop(name, None)
                        mod.own.discard(name)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                self.do_call(mod, stmt.value)

    def assign(self, mod: Mod, target: ast.expr, value: tuple, node: ast.expr) -> None:
        if isinstance(target, ast.Name):
            if target.id == "__all__":
                names = self.str_list(mod, node)
                if names is None:
                    self.notes.append(f"{mod.name}.__all__ is not a literal; using public names")
                mod.all = names
            self.bind(mod, target.id, value, True)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for name in target_names(target):
                self.bind(mod, name, CONST, True)
        elif isinstance(target, ast.Attribute) and public(target.attr):
            owner = self.eval(mod, target.value)
            if owner[0] == "def" and owner[1] in ("class", "enum"):
                self.extra_members.setdefault(id(owner[3]), set()).add(target.attr)

    def do_call(self, mod: Mod, call: ast.Call) -> None:
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "__all__"
            and func.attr in ("extend", "append")
            and call.args
        ):
            arg = call.args[0]
            extra = self.str_list(mod, arg) if func.attr == "extend" else self.str_list(
                mod, ast.List(elts=[arg], ctx=ast.Load())
            )
            mod.all = (mod.all or []) + (extra or [])
        elif isinstance(func, ast.Name) and func.id == "setattr" and len(call.args) == 3:
            owner, attr = self.eval(mod, call.args[0]), call.args[1]
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str) and public(attr.value):
                if owner[0] == "def" and owner[1] in ("class", "enum"):
                    self.extra_members.setdefault(id(owner[3]), set()).add(attr.value)

    def str_list(self, mod: Mod, node: ast.expr) -> list[str] | None:
        if isinstance(node, (ast.List, ast.Tuple)):
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                return [e.value for e in node.elts]
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.str_list(mod, node.left), self.str_list(mod, node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.Attribute) and node.attr == "__all__":
            owner = self.eval(mod, node.value)
            if owner[0] == "module" and owner[1] in self.mods:
                other = self.mods[owner[1]]
                return list(other.all) if other.all is not None else self.public_names(other)
        return None

    # ---- imports ------------------------------------------------------------------------------

    def do_import(self, mod: Mod, stmt: ast.Import) -> None:
        for alias in stmt.names:
            full = alias.name
            first = full.split(".")[0]
            if not in_pypto(full):
                self.bind(mod, alias.asname or first, ("ext", full if alias.asname else first), False)
                continue
            parts = full.split(".")
            for i in range(1, len(parts) + 1):
                self.load(".".join(parts[:i]), quiet=mod.native)
            if alias.asname:
                value = ("module", full) if full in self.mods else ("native", full)
                self.bind(mod, alias.asname, value, False)
            else:
                self.bind(mod, first, ("module", first), False)

    def resolve_from(self, mod: Mod, stmt: ast.ImportFrom) -> str:
        if not stmt.level:
            return stmt.module or ""
        package = mod.name if mod.is_pkg else mod.name.rpartition(".")[0]
        for _ in range(stmt.level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{stmt.module}" if stmt.module else package

    def do_import_from(self, mod: Mod, stmt: ast.ImportFrom) -> None:
        base = self.resolve_from(mod, stmt)
        if not in_pypto(base):
            for alias in stmt.names:
                if alias.name != "*":
                    self.bind(mod, alias.asname or alias.name, ("ext", f"{base}.{alias.name}"), False)
            return
        source = self.load(base, quiet=mod.native)
        for alias in stmt.names:
            if alias.name == "*":
                if source is None:
                    self.notes.append(f"{mod.name}: 'from {base} import *' from an unknown module")
                    continue
                names = source.all if source.all is not None else self.public_names(source)
                for name in names:
                    bound = self.attribute(source, name)
                    if bound is None:
                        self.notes.append(f"{base}.__all__ names {name!r}, which it does not define")
                        continue
                    self.bind(mod, name, bound, False)
                continue
            bound = self.attribute(source, alias.name) if source is not None else None
            if bound is None and (source is None or not source.native or self.has_file(f"{base}.{alias.name}")):
                sub = self.load(f"{base}.{alias.name}", quiet=True)
                bound = ("module", sub.name) if sub is not None else None
            if bound is None:
                if not (mod.native or (source is not None and source.native)):
                    self.notes.append(f"{mod.name}: 'from {base} import {alias.name}' not found; kept as native")
                bound = ("native", f"{base}.{alias.name}")
            self.bind(mod, alias.asname or alias.name, bound, False)

    def public_names(self, mod: Mod) -> list[str]:
        return sorted(n for n in mod.ns if public(n))

    def has_file(self, name: str) -> bool:
        found = self.locate(name)
        return found is not None and found[0] is not None

    def attribute(self, mod: Mod, name: str) -> tuple | None:
        """What ``mod.name`` is after the module ran; None when it has no such attribute."""
        if name in mod.ns:
            return mod.ns[name]
        if mod.native:
            sub = f"{mod.name}.{name}"
            if self.has_file(sub):
                loaded = self.load(sub, quiet=True)
                return ("module", loaded.name) if loaded else None
            return ("native", sub)
        return None

    # ---- expressions --------------------------------------------------------------------------

    def eval(self, mod: Mod, node: ast.expr) -> tuple:
        if isinstance(node, ast.Name):
            return mod.ns.get(node.id, CONST)
        if isinstance(node, ast.Attribute):
            owner = self.eval(mod, node.value)
            if owner[0] == "module":
                target = self.mods.get(owner[1])
                if target is None:
                    return CONST
                bound = self.attribute(target, node.attr)
                return bound if bound is not None else CONST
            if owner[0] == "native":
                return ("native", f"{owner[1]}.{node.attr}")
            if owner[0] == "ext":
                return ("ext", f"{owner[1]}.{node.attr}")
            return CONST
        return CONST

    def class_kind(self, mod: Mod, node: ast.ClassDef) -> str:
        for base in node.bases:
            bound = self.eval(mod, base)
            if bound[0] == "ext" and bound[1] in ENUM_BASES:
                return "enum"
            if bound[0] == "def" and bound[1] == "enum":
                return "enum"
        return "class"

    def class_members(self, mod: Mod, node: ast.ClassDef, seen: set[int] | None = None) -> set[str]:
        seen = seen if seen is not None else set()
        if id(node) in seen:
            return set()
        seen.add(id(node))
        names = class_body_names(node) | self.extra_members.get(id(node), set())
        for base in node.bases:
            bound = self.eval(mod, base)
            if bound[0] == "def" and bound[1] in ("class", "enum"):
                names |= self.class_members(bound[2], bound[3], seen)
        return names

    # ---- the model ----------------------------------------------------------------------------

    def describe(self, attr: str, bound: tuple, classes: dict) -> dict | None:
        tag = bound[0]
        if tag == "module":
            return {"kind": "module", "target": bound[1]} if in_pypto(bound[1]) else None
        if tag == "def":
            kind, home, node = bound[1], bound[2], bound[3]
            if kind == "function":
                return {"kind": "function"}
            canonical = f"{home.name}.{node.name}"
            if canonical not in classes:
                classes[canonical] = {m: member_kind(kind, m) for m in self.class_members(home, node)}
            return {"kind": kind, "canonical": canonical}
        if tag == "const":
            return {"kind": module_desc_kind(attr, "constant")}
        if tag == "native":
            return {"kind": module_desc_kind(attr, "native")}
        return None  # "ext": imported from outside pypto

    def model(self) -> dict:
        if self.load(self.top) is None:
            raise SystemExit(f"no {self.top} package under {self.src}")
        modules: dict[str, dict] = {}
        classes: dict[str, dict[str, str]] = {}
        for name, mod in sorted(self.mods.items()):
            table: dict[str, dict] = {}
            modules[name] = {"package": mod.is_pkg, "attrs": table}
            if name in OPAQUE_MODULES:
                continue
            for attr, bound in sorted(mod.ns.items()):
                if not public(attr):
                    continue
                desc = self.describe(attr, bound, classes)
                if desc is None:
                    continue
                if desc["kind"] == "module":
                    desc["own"] = desc["target"] == f"{name}.{attr}"
                else:
                    desc["own"] = attr in mod.own or attr in (mod.all or ())
                table[attr] = desc
        return {"modules": modules, "classes": classes}


# --------------------------------------------------------------------------------------------
# Merging and rendering.
# --------------------------------------------------------------------------------------------

HEADER = '''"""Every public name of the pypto package, by qualified name: the {v020} wheel and the repository at {head}.

Generated by scripts/pypto_surface.py; do not edit by hand.  Kinds: "module" a submodule,
"function" a function (Python or native), "class"/"enum" a class or an enumeration, "member"
a method, property, enum member or class attribute (written Class.name), "dtype" a DT_* data
type (also as DataType.DT_*), "constant" any other module-level value, "native" a name HEAD
imports from the compiled extension that its stubs do not describe.  "where" says which
version has the name: "both", "{v020}" (the wheel only) or "head" (the repository only).
"""
'''


def merge(old: dict[str, str], new: dict[str, str]) -> tuple[dict[str, tuple[str, str]], list]:
    names: dict[str, tuple[str, str]] = {}
    conflicts = []
    for qual in sorted(set(old) | set(new)):
        if qual in old and qual in new:
            kind = old[qual]
            if new[qual] != kind and new[qual] != "native":
                conflicts.append((qual, old[qual], new[qual]))
            names[qual] = (kind, "both")
        elif qual in old:
            names[qual] = (old[qual], V020)
        else:
            names[qual] = (new[qual], "head")
    return names, conflicts


def render(names: dict[str, tuple[str, str]], head: str) -> str:
    lines = [HEADER.format(v020=V020, head=head)]
    lines.append(f'V020 = "{V020}"\n')
    lines.append(f'HEAD = "{head}"\n')
    lines.append(
        '# qualified name -> (kind, where): kind is "module" | "function" | "class" | "enum" | "member"'
        ' | "constant" | "dtype" | "native";\n'
    )
    lines.append(f'# where is "both" | "{V020}" | "head"\n')
    lines.append("NAMES = {\n")
    for qual in sorted(names):
        kind, where = names[qual]
        assert kind in KINDS, (qual, kind)
        lines.append(f'    "{qual}": ("{kind}", "{where}"),\n')
    lines.append("}\n")
    return "".join(lines)


def head_label(repo: Path, given: str | None) -> str:
    """--head-label, else the checkout's git short hash, else DEFAULT_HEAD (a plain extract)."""
    if given:
        return given
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short=7", "HEAD"],
            capture_output=True, text=True, check=False,
        )
    except OSError:
        proc = None
    if proc is not None and proc.returncode == 0 and proc.stdout.strip():
        return proc.stdout.strip()
    return DEFAULT_HEAD


def summary(names: dict[str, tuple[str, str]], conflicts: list, notes: list[str]) -> str:
    by_where: dict[str, list[str]] = {}
    by_kind: dict[str, int] = {}
    for qual, (kind, where) in names.items():
        by_where.setdefault(where, []).append(qual)
        by_kind[kind] = by_kind.get(kind, 0) + 1
    lines = [f"{len(names)} names: " + ", ".join(f"{w} {len(q)}" for w, q in sorted(by_where.items()))]
    lines.append("kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())))
    for qual, old, new in conflicts:
        lines.append(f"kind differs for {qual}: {V020} {old}, head {new} (kept {old})")
    for note in sorted(set(notes)):
        lines.append(f"note: {note}")
    return "\n".join(lines)


def self_test(installed: dict) -> int:
    reader = StaticPackage(Path(installed["package_dir"]))
    imported, read = flatten(installed), flatten(reader.model())
    diffs = [f"import only: {q}" for q in sorted(set(imported) - set(read))]
    diffs += [f"static only: {q}" for q in sorted(set(read) - set(imported))]
    diffs += [
        f"kind: {q} import {imported[q]}, static {read[q]}"
        for q in sorted(set(imported) & set(read))
        if imported[q] != read[q]
    ]
    print(f"import walk {len(imported)} names, static reader {len(read)} names, {len(diffs)} differences")
    for line in diffs + [f"note: {n}" for n in sorted(set(reader.notes))]:
        print("  " + line)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, help="the pypto repository checkout (read, never imported)")
    ap.add_argument("--head-label", help=f"label of the checkout (default: git short hash, else {DEFAULT_HEAD})")
    ap.add_argument("--python", default=sys.executable, help="interpreter with the pypto 0.2.0 wheel")
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed table differs")
    ap.add_argument("-v", "--verbose", action="store_true", help="print counts and notes")
    ap.add_argument(
        "--self-test", action="store_true",
        help="read the installed wheel statically and diff against importing it; write nothing",
    )
    ap.add_argument("--child-dump", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child_dump:
        args.child_dump.write_text(json.dumps(runtime_model(), sort_keys=True), encoding="utf-8")
        return 0
    installed = load_installed(args.python)
    if installed["version"] != V020:
        raise SystemExit(f"the installed pypto is {installed['version']}, not {V020}")
    if args.self_test:
        return self_test(installed)
    if args.repo is None:
        ap.error("--repo is required")
    src = args.repo / "python" / "pypto"
    package = StaticPackage(src)
    old, new = flatten(installed), flatten(package.model())
    names, conflicts = merge(old, new)
    text = render(names, head_label(args.repo, args.head_label))
    if text.count("\n") > LINE_BUDGET:
        print(f"warning: {text.count(chr(10))} lines, over the {LINE_BUDGET}-line budget", file=sys.stderr)
    if args.verbose:
        print(summary(names, conflicts, package.notes))

    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else None
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is stale; rerun without --check", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(names)} names)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
