"""A module's names, evaluated statically: imports, constants, functions, annotations.

The module body is evaluated in program order (``Evaluator`` in the "module" context) over
build-time values; nothing is imported or run.  Imports resolve by qualified name: pypto under any
import form, ``math`` to its constants, the user's own modules found on disk beside the file
(parsed and evaluated the same way, lazily, on first use of a name), anything else to an opaque
``ApiRef`` -- so ``import torch_npu``, ``from test_base import BaseTest`` or a module-level
``torch.library`` registration never matter to a kernel that does not use them.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import os
from typing import Any, Optional

from . import api
from ..source import child_statements
from .evaluator import Evaluator, Frame
from .values import UNKNOWN, ApiRef, FuncRef, LazyImport, Marker, UserModule

MAX_MODULE_BYTES = 2_000_000  # a user module bigger than this is not read for its constants
SEARCH_PARENTS = 3  # directories above the file where ``import sibling`` may be found


class ModuleScope:
    """The names of one module, read statically.  ``registry`` shares the modules already read."""

    def __init__(self, source, *, registry: Optional[dict] = None, live: Optional[dict] = None, world=None):
        self.source = source
        self.path = os.path.abspath(source.path) if source.path and not source.path.startswith("<") else None
        self.registry = registry if registry is not None else {}
        if self.path:
            self.registry.setdefault(self.path, self)
        self.env: dict = {"__name__": _module_name(source.path), "__file__": source.path}
        self.functions: dict = {}
        self.world = world  # livevalues.LiveWorld: lowering in-process (records the live values read)
        if live is None and world is not None:
            live = world.converted(self.path)
        self.live = live or {}  # names whose run-time values take precedence (the in-process decorator)
        self.host_tile_set = False
        self._done = False
        self._bound: Optional[set] = None

    # -- evaluation ---------------------------------------------------------------------------
    def run(self) -> "ModuleScope":
        """Evaluate the module body once."""
        if self._done:
            return self
        self._done = True
        ev = Evaluator(self)
        ev.frames.append(Frame(None, "module", self, self.source, env=self.env))
        with self.world.paused() if self.world is not None else contextlib.nullcontext():
            try:
                ev.exec_block(self.source.tree.body)
            except RecursionError:
                raise
            except Exception:  # noqa: BLE001 - a statement we cannot read leaves its names unknown
                pass
        self.env.update(self.live)  # what the module really computed wins over the static reading
        for node in self.source.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
        self.host_tile_set = self._host_sets_tiles()
        return self

    def lookup(self, name: str) -> Any:
        if name in self.live:
            self.note_live(name)
            return self.live[name]
        value = self.env.get(name, _MISSING)
        if value is _MISSING:
            return ApiRef("builtins." + name) if name in _BUILTINS else UNKNOWN
        if isinstance(value, LazyImport):
            value = value.resolve()
            self.env[name] = value
        return value

    def note_live(self, name: str) -> None:
        """A kernel read the live global ``name`` of this module (in-process lowering only)."""
        if self.world is not None and name in self.live:
            self.world.note(self.path, name)

    def evaluate(self, node: ast.AST) -> Any:
        """The value of an expression at module level (decorators, annotations, defaults)."""
        ev = Evaluator(self)
        ev.frames.append(Frame(None, "module", self, self.source, env=self.env))
        try:
            return ev.eval(node)
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001
            return UNKNOWN

    evaluate_static = evaluate  # the name rules use

    def binds(self, name: str) -> bool:
        """Whether anything in the module could bind ``name`` (False: Python would raise NameError)."""
        if name in self.live or name in self.env or name in _BUILTINS:
            return True
        if self._bound is None:
            self._bound = _names_bound(self.source.tree)
        return "*" in self._bound or name in self._bound

    def may_inline(self, func: FuncRef) -> bool:
        """Module-level code may call small, loop-free functions (``SHAPE = make_shape(4)``); a
        ``main()`` or a test is never run to evaluate the module."""
        node = func.node
        if isinstance(node, ast.Lambda):
            return True
        if len(node.body) > 20:
            return False
        return not any(isinstance(n, (ast.For, ast.While, ast.With, ast.Try)) for n in ast.walk(node))

    # -- decorators ---------------------------------------------------------------------------
    def decorator_kind(self, func) -> Optional[str]:
        qualname = self.decorator_qualname(func)
        return api.KERNEL_DECORATORS[qualname] if qualname is not None else None

    def decorator_qualname(self, func) -> Optional[str]:
        """The kernel decorator on ``func`` (``pypto.frontend.jit``, ``pypto_ast.jit``, ...), or None."""
        node = func.node if isinstance(func, FuncRef) else func
        scope = func.scope if isinstance(func, FuncRef) and func.scope is not None else self
        for deco in getattr(node, "decorator_list", ()):
            target = deco.func if isinstance(deco, ast.Call) else deco
            value = scope.evaluate(target)
            if isinstance(value, ApiRef) and value.qualname in api.KERNEL_DECORATORS:
                return value.qualname
        return None

    # -- imports ------------------------------------------------------------------------------
    def import_value(self, dotted: str) -> Any:
        """The value ``import dotted`` binds (for ``import a.b``: ``a``)."""
        qual = canonical(dotted)
        if qual.split(".")[0] in ("pypto", "math", "torch", "numpy", "builtins", "pypto_ast"):
            return ApiRef(qual)
        found = self._find_module(dotted)
        if found is not None:
            return LazyModule(self, found)
        return ApiRef(qual)

    def import_from(self, stmt: ast.ImportFrom, name: str) -> Any:
        module = stmt.module or ""
        if not stmt.level:
            qual = canonical(f"{module}.{name}" if module else name)
            if qual.startswith("pypto.") or qual == "pypto":
                if qual in api.MARKERS:
                    return Marker(api.MARKERS[qual])
                return api.dtype(qual) or ApiRef(qual)
            if module.split(".")[0] in ("math", "torch", "numpy", "pypto_ast", "os", "sys", "typing"):
                if module == "math":
                    from .pyvalues import math_value

                    value = math_value(name)
                    return value if value is not UNKNOWN else ApiRef(qual)
                return ApiRef(qual)
        path = self._find_module(module, stmt.level, name)
        if path is None:
            return ApiRef(canonical(f"{module}.{name}" if module else name))
        if path.endswith(os.sep + name + ".py") or path.endswith(os.sep + os.path.join(name, "__init__.py")):
            return LazyModule(self, path)  # ``from pkg import submodule``
        return LazyImport(lambda: self.load(path), name)

    def _find_module(self, dotted: str, level: int = 0, name: str = "") -> Optional[str]:
        """The file of a user module beside this one (``level``: relative import dots)."""
        if not self.path:
            return None
        here = os.path.dirname(self.path)
        parts = [p for p in dotted.split(".") if p] if dotted else []
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            bases = [here]
            for _ in range(SEARCH_PARENTS):
                here = os.path.dirname(here)
                bases.append(here)
        for base in bases:
            target = os.path.join(base, *parts) if parts else base
            for candidate in (target + ".py", os.path.join(target, "__init__.py")):
                if os.path.isfile(candidate) and os.path.abspath(candidate) != self.path:
                    if name and os.path.isdir(target) and os.path.isfile(os.path.join(target, name + ".py")):
                        return os.path.abspath(os.path.join(target, name + ".py"))
                    return os.path.abspath(candidate)
            if name and parts == [] and os.path.isfile(os.path.join(target, name + ".py")):
                return os.path.abspath(os.path.join(target, name + ".py"))
        return None

    def load(self, path: str) -> Optional["ModuleScope"]:
        """The scope of the user module at ``path``, read once (None when it cannot be read)."""
        if path in self.registry:
            scope = self.registry[path]
            return scope if isinstance(scope, ModuleScope) else None
        self.registry[path] = None  # a cycle reads the half-done scope as unknown
        from ..source import SourceError, SourceFile, decode

        try:
            if os.path.getsize(path) > MAX_MODULE_BYTES:
                return None
            with open(path, "rb") as handle:
                text, _ = decode(handle.read())
            source = SourceFile.parse(text, path)
        except (OSError, SourceError):
            return None
        scope = ModuleScope(source, registry=self.registry, world=self.world)
        self.registry[path] = scope
        scope.run()
        return scope

    # -- host code that sets tile shapes --------------------------------------------------------
    def _host_sets_tiles(self) -> bool:
        """Whether host code sets a tile shape: a ``set_*_tile_shapes`` call at module level or in a
        function no kernel calls. It configures pypto's global scope, which kernels traced
        afterwards inherit, so their initial tile shapes are unknown here (not "never set")."""
        if "_tile_shapes" not in self.source.text:  # a setter is only ever called by that name
            return False
        owners = self._setter_owners()
        if not owners:
            return False
        if any(owner is None for owner in owners):
            return True
        reached = self._reached_from_kernels()
        return any(owner.name not in reached for owner in owners)

    def legacy_call(self, node) -> Optional[ast.Call]:
        """The ``pypto.function(...)`` call of a legacy ``with`` body, or None for any other node."""
        if not isinstance(node, ast.With):
            return None
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call):
                value = self.evaluate(call.func)
                if isinstance(value, ApiRef) and value.qualname == api.LEGACY_FUNCTION:
                    return call
        return None

    def _setter_owners(self) -> list:
        """The host function (None: module level) of every tile-shape setter call outside kernels;
        only the statements on a line that names a setter are walked."""
        setters = {"pypto.set_vec_tile_shapes", "pypto.set_cube_tile_shapes"}
        marked = [n for n, line in enumerate(self.source.lines, 1) if "_tile_shapes" in line]
        owners: list = []

        def mentions_setter(stmt) -> bool:
            i = bisect.bisect_left(marked, stmt.lineno)
            return i < len(marked) and marked[i] <= (stmt.end_lineno or stmt.lineno)

        def visit(node, owner):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt) and not mentions_setter(child):
                    continue
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if self.decorator_kind(child) is None:  # a kernel's own setters are its business
                        visit(child, child)
                    continue
                if self.legacy_call(child) is not None:
                    continue
                if isinstance(child, ast.Call) and _may_be_setter(child.func):
                    func = self.evaluate(child.func)
                    if isinstance(func, ApiRef) and func.qualname in setters:
                        owners.append(owner)
                visit(child, owner)

        visit(self.source.tree, None)
        return owners

    def _reached_from_kernels(self) -> set:
        """Names of the functions kernels call, directly or through host functions (by name)."""
        kernels: list = []
        host: dict = {}  # name -> the non-kernel functions of that name

        def scan(node):
            for child in child_statements(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if self.decorator_kind(child) is not None:
                        kernels.append(child)
                        continue
                    host.setdefault(child.name, []).append(child)
                elif self.legacy_call(child) is not None:
                    kernels.append(child)
                    continue
                scan(child)

        def called(node, whole: bool) -> set:
            """Bare names called in ``node``; a host function's nested functions and kernels are
            their own callers (``whole`` False), a kernel's are the kernel's."""
            names, todo = set(), [node]
            while todo:
                current = todo.pop()
                for child in ast.iter_child_nodes(current):
                    if not whole and (isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                                      or self.legacy_call(child) is not None):
                        continue
                    if isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                        names.add(child.func.id)
                    todo.append(child)
            return names

        scan(self.source.tree)
        frontier: set = set()
        for kernel in kernels:
            frontier |= called(kernel, True)
        reached: set = set()
        while frontier:
            name = frontier.pop()
            if name in reached:
                continue
            reached.add(name)
            for func in host.get(name, ()):
                frontier |= called(func, False)
        return reached


class LazyModule(UserModule):
    """``import helpers`` of a user module: read on first attribute access."""

    __slots__ = ("owner", "path", "_scope")

    def __init__(self, owner: ModuleScope, path: str):
        self.owner, self.path, self._scope = owner, path, None

    @property
    def scope(self):
        if self._scope is None:
            self._scope = self.owner.load(self.path) or False
        return self._scope or None


def _may_be_setter(node) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name in ("set_vec_tile_shapes", "set_cube_tile_shapes")


def canonical(qualname: str) -> str:
    for prefix, target in api.PYPTO_ALIASES.items():
        if qualname == prefix or qualname.startswith(prefix + "."):
            return target + qualname[len(prefix):]
    return qualname


def _module_name(path: Optional[str]) -> str:
    if not path or path.startswith("<"):
        return "__pypto_kernel__"
    return os.path.splitext(os.path.basename(path))[0]


_MISSING = object()
def _names_bound(tree: ast.AST) -> set:
    """Every name any statement of ``tree`` binds, at any depth ("*" for a star import)."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return bound


_BUILTINS = frozenset(__import__("builtins").__dict__)
