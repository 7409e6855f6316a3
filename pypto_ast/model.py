"""The kernel model of one module: kernels found from source (never executed), module
constants, and the facts of a static interpretation of every kernel body.

Discovery resolves decorators and ``with pypto.function(...)`` by qualified name through
the module's imports, so ``import pypto as pto`` / ``from pypto.frontend import jit`` all work.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from .frontend import api
from .facts import Kernel, LoopFact
from .interp import Interpreter, ModuleScope
from .settings import Settings
from .source import SourceFile
from .values import ApiRef, FuncRef, TensorAnnotation, TensorVal


@dataclass
class ModuleModel:
    source: SourceFile
    scope: ModuleScope
    kernels: list = field(default_factory=list)
    functions: dict = field(default_factory=dict)  # name -> FunctionDef (module level)
    host_tile_set: bool = False  # set_*_tile_shapes outside any kernel (global config scope)

    def kernel_of(self, node: ast.AST) -> Optional[Kernel]:
        for kernel in self.kernels:
            if kernel.node is node:
                return kernel
        return None


def decorator_kind(scope: ModuleScope, func: ast.FunctionDef) -> Optional[str]:
    for deco in func.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        value = scope.evaluate_static(target)
        if isinstance(value, ApiRef) and value.qualname in api.KERNEL_DECORATORS:
            return api.KERNEL_DECORATORS[value.qualname]
    return None


def build_model(source: SourceFile, settings: Settings) -> ModuleModel:
    scope = ModuleScope(source)
    scope.run_module()
    model = ModuleModel(source, scope, functions=dict(scope.functions))
    model.host_tile_set = scope.host_tile_set
    # Decorated kernels: module-level functions and methods/functions nested anywhere.
    for func in _all_functions(source.tree):
        kind = decorator_kind(scope, func)
        if kind is None:
            continue
        interp = Interpreter(scope, settings)
        kernel = interp.run_function_kernel(func, kind)
        model.kernels.append(kernel)
    # Legacy ``with pypto.function(name, *tensors):`` bodies, at module level or in host functions.
    for with_node, owner in _legacy_withs(scope, source.tree):
        interp = Interpreter(scope, settings)
        model.kernels.append(interp.run_legacy_kernel(with_node, owner))
    return model


def _all_functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            yield node


def _legacy_withs(scope: ModuleScope, tree: ast.Module):
    """(With node, enclosing FunctionDef or None) for each ``with pypto.function(...)``."""
    stack = [(tree, None)]
    while stack:
        node, owner = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, child))
                continue
            if isinstance(child, ast.With):
                for item in child.items:
                    call = item.context_expr
                    if isinstance(call, ast.Call):
                        value = scope.evaluate_static(call.func)
                        if isinstance(value, ApiRef) and value.qualname == api.LEGACY_FUNCTION:
                            yield child, owner
                            break
            if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                stack.append((child, owner))


__all__ = ["ModuleModel", "build_model", "Kernel", "LoopFact", "TensorAnnotation", "TensorVal", "FuncRef"]
