"""The static front end: reads a kernel module's source -- never executes it -- and evaluates
what pypto evaluates at build time.  The linter's rules (``analyze``) and the lowering to IR
(``lower``) read this one evaluation.

    read(source)                -> ModuleScope   the module's names (scope.py)
    kernels(scope)              -> [KernelDef]   every kernel of the file (kernels.py)
    analyze(source, settings)   -> ModuleModel   lint facts of every kernel
    lower(scope, name, given)   -> ir.Program    one kernel, its shapes given or found
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from .errors import CODES, FrontendError
from .kernels import Given, KernelDef, KernelReader, call_sites, choose, discover
from .scope import ModuleScope


@dataclass
class ModuleModel:
    """What the lint rules read about one module: its scope and the facts of every kernel."""

    source: object
    scope: ModuleScope
    kernels: list = field(default_factory=list)  # facts.Kernel, in source order
    functions: dict = field(default_factory=dict)  # name -> FunctionDef (module level)
    host_tile_set: bool = False  # set_*_tile_shapes outside any kernel (global config scope)

    def kernel_of(self, node: ast.AST):
        for kernel in self.kernels:
            if kernel.node is node:
                return kernel
        return None


def read(source, *, live: Optional[dict] = None, registry: Optional[dict] = None, world=None) -> ModuleScope:
    """The module's names, evaluated statically (``live``: run-time values that take precedence;
    ``world``: the running program, a ``livevalues.LiveWorld``)."""
    return ModuleScope(source, live=live, registry=registry, world=world).run()


def kernels(scope: ModuleScope) -> list:
    return discover(scope)


def analyze(source, settings=None) -> ModuleModel:
    scope = read(source)
    model = ModuleModel(source, scope, functions=dict(scope.functions), host_tile_set=scope.host_tile_set)
    for kdef in discover(scope):
        model.kernels.append(KernelReader(scope, kdef).facts())
    return model


def lower(scope: ModuleScope, name: Optional[str] = None, given: Optional[Given] = None, *,
          kdef: Optional[KernelDef] = None, use_call_sites: bool = True):
    """Lower one kernel into a Program.  Shapes come from ``given`` (live inputs, --shape) and,
    for what it leaves open, from the module's own calls of the kernel.  Raises FrontendError."""
    if kdef is None:
        kdef = choose(discover(scope), name, getattr(scope.source, "path", None))
    reader = KernelReader(scope, kdef)
    merged = given
    if use_call_sites:
        found = call_sites(scope, kdef)
        if found is not None:
            merged = Given(dict(found.tensors), dict(found.scalars), found.origin, found.closure)
            if given is not None:
                merged.tensors.update(given.tensors)
                merged.scalars.update(given.scalars)
                merged.sizes = set(given.sizes)
                merged.origin = given.origin or found.origin
    try:
        program = reader.program(merged)
    except FrontendError as exc:
        if exc.source is None:
            exc.source = scope.source
        raise
    return program, reader


__all__ = ["CODES", "FrontendError", "Given", "KernelDef", "ModuleModel", "ModuleScope", "analyze", "kernels",
           "lower", "read"]
