"""The kernels of a module and how each is read: found anywhere in the file, named, bound to
its parameters' shapes, evaluated (for lint facts, or into a Program).

Kernels are functions decorated ``pypto.frontend.jit`` / ``pypto.jit`` / ``pypto_ast.jit`` or
``pypto.frontend.function`` -- at module level or inside functions and classes, as the official
tests define them -- and legacy ``with pypto.function(name, *tensors):`` bodies.  Code around a
nested kernel (the test function holding it) is evaluated statically as host code, for the names
the kernel reads from it and for the kernel's calls, whose ``torch.randn(shape, dtype=...)``
arguments give the shapes the annotations leave to the call.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from .. import ir
from ..diagnostics import format_count
from ..source import child_statements
from . import api, livevalues
from .builder import Builder
from .errors import FrontendError
from .evaluator import Evaluator, Frame, annotation_from_call
from .facts import Kernel, LoopFact
from .scope import ModuleScope
from .values import (
    UNKNOWN, ApiRef, DType, FuncRef, Marker, Instance, OptionsVal, Record, Sym, Tensor, TensorAnnotation, TorchSpec,
)


@dataclass
class KernelDef:
    """One kernel of a module: what ``--list`` prints and ``--kernel`` accepts."""

    name: str  # qualified by the functions and classes around it: ``test_add.kernel``
    kind: str  # "jit" | "pypto.jit" | "function" | "legacy"
    node: ast.AST  # the FunctionDef, or the With of a legacy body
    owners: tuple = ()  # enclosing FunctionDef / ClassDef nodes, outermost first
    line: int = 0

    @property
    def owner(self) -> Optional[ast.AST]:
        for node in reversed(self.owners):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return None


@dataclass
class Given:
    """What a lowering knows about the call: shapes/dtypes/values by parameter name, and where
    they came from (for messages)."""

    tensors: dict = field(default_factory=dict)  # name -> (shape tuple, ir dtype or None)
    scalars: dict = field(default_factory=dict)  # name -> build-time value
    origin: str = ""
    closure: Optional[object] = None  # the Frame a kernel factory's call made the kernel in
    # names given as `--shape NAME=N`: for a tensor parameter N is a one-dimensional shape; any
    # other number where a tensor parameter is (a call's argument) is a wrong argument
    sizes: set = field(default_factory=set)


# =============================================================================================
# discovery
# =============================================================================================
def discover(scope: ModuleScope) -> list:
    """Every kernel of the module, in source order, with unique names."""
    found: list = []

    def visit(node, owners):
        for child in child_statements(node):  # kernels are statements: expressions are not walked
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kind = scope.decorator_kind(child) if child.decorator_list else None
                if kind is not None:
                    found.append(KernelDef(_qualify(owners, child.name), kind, child, tuple(owners), child.lineno))
                visit(child, owners + [child])
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, owners + [child])
                continue
            if isinstance(child, ast.With):
                call = scope.legacy_call(child)
                if call is not None:
                    label = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) and \
                        isinstance(call.args[0].value, str) else f"with_L{child.lineno}"
                    found.append(KernelDef(_qualify(owners, _ident(label)), "legacy", child, tuple(owners), child.lineno))
            visit(child, owners)

    visit(scope.source.tree, [])
    seen: dict = {}
    for k in found:
        n = seen.get(k.name, 0)
        seen[k.name] = n + 1
        if n:
            k.name = f"{k.name}#{n + 1}"
    return found


def _qualify(owners, name: str) -> str:
    return ".".join([o.name for o in owners] + [name])


def _ident(label: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in label) or "legacy"


def choose(kernels: list, name: Optional[str], path: Optional[str]) -> KernelDef:
    if name is not None:
        for k in kernels:
            if k.name == name or (k.name.rsplit(".", 1)[-1] == name and
                                  sum(1 for j in kernels if j.name.rsplit(".", 1)[-1] == name) == 1):
                return k
        listed = ", ".join(k.name for k in kernels) or "none"
        raise FrontendError("PTO107", f"no kernel named {name!r} in this file (found: {listed})")
    runnable = [k for k in kernels if k.kind != "function"] or kernels
    if len(runnable) != 1:
        listed = ", ".join(k.name for k in runnable) or "none"
        raise FrontendError("PTO107", f"expected exactly one kernel, found {len(runnable)} ({listed}): choose one with "
                                      "--kernel NAME (pypto-transpile FILE --list shows them)")
    return runnable[0]


# =============================================================================================
# host code around a kernel
# =============================================================================================
class _Stop(Exception):
    pass


class HostContext:
    """The names a nested kernel (or a legacy body) sees, from a static run of the functions
    around it up to its definition."""

    def __init__(self, scope: ModuleScope):
        self.scope = scope

    def env_at(self, kdef: KernelDef, given: Optional[Given] = None) -> Optional[Frame]:
        """The frame of the innermost function around ``kdef`` as it is when ``kdef`` is reached
        (``given``: the call's arguments of that function, for legacy bodies run by --run)."""
        owner = kdef.owner
        if owner is None:
            return None
        ev = Evaluator(self.scope)
        env = self.parameters(owner)
        for name, (shape, dtype) in (given.tensors.items() if given is not None else ()):
            if name in env:
                env[name] = TorchSpec(tuple(shape), dtype, param=name)
        for name, value in (given.scalars.items() if given is not None else ()):
            if name in env:
                env[name] = value
        frame = Frame(owner, "host", self.scope, self.scope.source, env=env)
        captured: dict = {}
        target = kdef.node

        def stop_at(block):
            for stmt in block:
                if stmt is target:
                    captured["frame"] = frame
                    raise _Stop()
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _contains(stmt, target):
                    captured["frame"] = frame
                    raise _Stop()
                if _contains(stmt, target) and isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                    # run what leads to it in order: the statement's own header, then its body
                    for body in _bodies(stmt):
                        if any(_contains(s, target) for s in body):
                            ev.exec_block([s for s in body[:_index_of(body, target)]])
                            stop_at(body[_index_of(body, target):])
                    captured["frame"] = frame
                    raise _Stop()
                ev.exec_block([stmt])

        ev.frames.append(frame)
        try:
            stop_at(owner.body)
        except _Stop:
            pass
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001 - host code we cannot read leaves its names unknown
            pass
        return captured.get("frame", frame)

    def parameters(self, func: ast.FunctionDef) -> dict:
        """Host parameters: pytest's first parametrize case, then defaults, else unknown."""
        env: dict = {}
        args = func.args
        positional = args.posonlyargs + args.args
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
        for a in positional + args.kwonlyargs:
            env[a.arg] = self.scope.evaluate(defaults[a.arg]) if a.arg in defaults else UNKNOWN
        for deco in func.decorator_list:
            if isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute) and deco.func.attr == "parametrize" \
                    and len(deco.args) >= 2:
                names = self.scope.evaluate(deco.args[0])
                cases = self.scope.evaluate(deco.args[1])
                if isinstance(names, str) and isinstance(cases, (list, tuple)) and cases:
                    keys = [n.strip() for n in names.split(",") if n.strip()]
                    first = cases[0]
                    values = list(first) if len(keys) > 1 and isinstance(first, (list, tuple)) else [first]
                    for key, value in zip(keys, values):
                        env[key] = value
        return env


def _contains(node: ast.AST, target: ast.AST) -> bool:
    if node is target:
        return True
    return any(n is target for n in ast.walk(node))


def _bodies(stmt) -> list:
    out = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if block:
            out.append(block)
    for handler in getattr(stmt, "handlers", ()):
        out.append(handler.body)
    return out


def _index_of(block, target) -> int:
    for i, stmt in enumerate(block):
        if _contains(stmt, target):
            return i
    return len(block)


def call_sites(scope: ModuleScope, kdef: KernelDef, limit: int = 8) -> Optional[Given]:
    """Shapes from the module's own calls of the kernel, evaluated statically (the first call
    whose tensor arguments all have build-time shapes).  A legacy body is called through the
    function around it; the callers looked at are functions and the ``if __name__ == "__main__"``
    block."""
    target = kdef.node if kdef.kind != "legacy" else kdef.owner
    if not isinstance(target, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    name = target.name
    # who may call it: by its own name, or through a factory around it (``make(...)(x, y)``)
    names = {name} | {o.name for o in kdef.owners if isinstance(o, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and o is not target}
    callers = [f for f in ast.walk(scope.source.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
               and f is not target and not _contains(target, f) and any(_calls(f, n) for n in names)]
    callers.sort(key=lambda f: (0 if kdef.owner is f else 1, f.lineno))
    callers += [stmt for stmt in scope.source.tree.body if _is_main_block(stmt) and any(_calls(stmt, n) for n in names)]
    for caller in callers[:limit]:
        found = _first_call(scope, target, caller, need_tensor=kdef.kind != "legacy")
        if found is not None:
            return found
    return None


def _is_main_block(stmt: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` at module level."""
    test = getattr(stmt, "test", None) if isinstance(stmt, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _calls(func: ast.AST, name: str) -> bool:
    for node in ast.walk(func):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == name or isinstance(f, ast.Attribute) and f.attr == name:
                return True
    return False


def _first_call(scope, target: ast.FunctionDef, func: ast.AST, need_tensor: bool = True) -> Optional[Given]:
    """Run ``func`` (a function, or the ``__main__`` block) statically until it calls ``target``."""
    result: dict = {}

    def hook(ref: FuncRef, args, kwargs, node):
        if ref.node is not target or "given" in result:
            return
        given = given_from_call(target, args, kwargs, need_tensor)
        if given is not None:
            given.closure = ref.closure  # ``make_kernel(shape)(x, y)``: the names the factory bound
            result["given"] = given
            raise _Stop()

    ev = Evaluator(scope, on_kernel_call=hook)
    if isinstance(func, ast.If):  # the __main__ block: module names, on a copy
        frame = Frame(None, "host", scope, scope.source, env=dict(scope.env))
    else:
        host = HostContext(scope)
        owner_frame = None
        owners = [o for o in _owners_of(scope.source.tree, func)
                  if isinstance(o, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if owners:
            owner_frame = host.env_at(KernelDef("", "host", func, tuple(owners), func.lineno))
        frame = Frame(func, "host", scope, scope.source, env=host.parameters(func), closure=owner_frame)
    ev.frames.append(frame)
    try:
        ev.exec_block(func.body)
    except _Stop:
        pass
    except RecursionError:
        raise
    except Exception:  # noqa: BLE001
        pass
    return result.get("given")


def _owners_of(tree, target) -> list:
    path: list = []

    def walk(node, stack):
        for child in ast.iter_child_nodes(node):
            if child is target:
                path.extend(stack)
                return True
            if walk(child, stack + ([child] if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                        ast.ClassDef)) else [])):
                return True
        return False

    walk(tree, [])
    return path


def given_from_call(func: ast.FunctionDef, args, kwargs, need_tensor: bool = True) -> Optional[Given]:
    names = [a.arg for a in func.args.posonlyargs + func.args.args]
    given = Given(origin="the module's own call of the kernel")
    bound = dict(zip(names, args))
    bound.update({k: v for k, v in kwargs.items() if k in names})
    any_tensor = False
    for name, value in bound.items():
        if isinstance(value, TorchSpec):
            given.tensors[name] = (value.shape, value.dtype)
            any_tensor = True
        elif isinstance(value, (int, float, bool, str)) and not isinstance(value, bool) or isinstance(value, bool):
            given.scalars[name] = value
        elif value is UNKNOWN:
            return None
    return given if any_tensor or not need_tensor and bound else None


# =============================================================================================
# evaluating one kernel
# =============================================================================================
class KernelReader:
    """Evaluates one kernel of a module: ``facts()`` for lint, ``program()`` for lowering."""

    def __init__(self, scope: ModuleScope, kdef: KernelDef):
        self.scope, self.kdef = scope, kdef
        self.host = HostContext(scope)

    # -- lint -------------------------------------------------------------------------------
    def facts(self) -> Kernel:
        ev = Evaluator(self.scope, host_tile_set=self.scope.host_tile_set)
        kernel, frame = self._start(ev, given=None)
        try:
            ev.exec_block(self._body())
        except Exception as exc:  # a return at the top of the body ends it
            if type(exc).__name__ != "_Return":
                raise
        kernel.root.body_paths = ev.paths
        kernel.read_uses = ev.read_uses
        return kernel

    # -- lowering ---------------------------------------------------------------------------
    def program(self, given: Optional[Given] = None) -> ir.Program:
        builder = Builder(self._program_name())
        ev = Evaluator(self.scope, building=True, builder=builder)
        if self.scope.host_tile_set:
            ev.vec_tile = self.scope.module_tiles.get("vec") if hasattr(self.scope, "module_tiles") else None
        kernel, frame = self._start(ev, given=given, builder=builder)
        with builder.region() as body:
            try:
                ev.exec_block(self._body())
            except Exception as exc:
                if type(exc).__name__ != "_Return":
                    raise
        from .builder import group

        region = [ir.Loop("loop_idx_0", ir.Const(0), ir.Const(1), ir.Const(1), group(body), "default_loop_1",
                          "implicit")]
        if ev.returned:
            region.append(ir.Return(ev.returned))
        attrs = (("source", os.path.basename(self.scope.source.path)),) if self.scope.source.path else ()
        self.warnings = ev.warnings
        return builder.program(region, attrs)

    # -- common -----------------------------------------------------------------------------
    def _program_name(self) -> str:
        node = self.kdef.node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node.name
        return self.kdef.name.rsplit(".", 1)[-1]

    def _body(self):
        return self.kdef.node.body

    def _start(self, ev: Evaluator, given: Optional[Given], builder: Optional[Builder] = None):
        kdef = self.kdef
        closure = given.closure if given is not None and given.closure is not None else None
        if closure is None:
            closure = self.host.env_at(kdef, given if kdef.kind == "legacy" else None)
        if kdef.kind == "legacy":
            frame, params, param_nodes = self._legacy_params(ev, closure, given, builder)
        else:
            frame, params, param_nodes = self._function_params(ev, closure, given, builder)
        has_return = kdef.kind != "legacy" and any(
            isinstance(n, ast.Return) and n.value is not None for n in _function_statements(kdef.node))
        root = LoopFact(None, "implicit", function=kdef.owner if kdef.kind == "legacy" else kdef.node, is_loop1=True,
                        trip=1)
        kernel = Kernel(self._program_name() if kdef.kind != "legacy" else _legacy_label(kdef), kdef.node,
                        kdef.kind, params, param_nodes, has_return, root)
        kernel.loops.append(root)
        # a pypto name no release has, in an annotation: the import fails (AttributeError)
        kernel.unknown_names.extend(getattr(self, "annotation_unknowns", ()))
        ev.kernel, ev.loop = kernel, root
        ev.frames.append(frame)
        if kdef.kind == "function" and not self.scope.host_tile_set:
            ev.vec_tile = ev.cube_tile = UNKNOWN  # inlined into callers: their tile shapes are in effect
        # @pypto.options on the functions around the kernel scope it too (the official tests' form),
        # then the kernel's own decorators
        scoped = [o for o in kdef.owners if isinstance(o, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if kdef.kind != "legacy":
            scoped.append(kdef.node)
        for func in scoped:
            for deco in func.decorator_list:
                if isinstance(deco, ast.Call):
                    value = ev.eval(deco)
                    if isinstance(value, OptionsVal):
                        ev._enter_options(value)
        return kernel, frame

    def _function_params(self, ev: Evaluator, closure, given: Optional[Given], builder):
        func = self.kdef.node
        context = "jit" if self.kdef.kind in ("jit", "pypto.jit") else "function"
        frame = Frame(func, context, self.scope, self.scope.source, closure=closure)
        frame.allows_return = self.scope.decorator_qualname(func) in api.RETURNING_DECORATORS
        params: dict = {}
        param_nodes: dict = {}
        args = func.args
        if builder is not None:
            if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
                raise FrontendError("PTO100", "*args, **kwargs, keyword-only and positional-only parameters are not "
                                              "supported in kernels", func, self.scope.source)
        annotations = Evaluator(self.scope)
        annotations.unknown_out = self.annotation_unknowns = []
        annotations.frames.append(Frame(None, "module", self.scope, self.scope.source, env=self.scope.env,
                                        closure=closure))
        positional = args.posonlyargs + args.args
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
        for arg in positional + args.kwonlyargs:
            ann = annotations.eval(arg.annotation) if arg.annotation is not None else None
            if builder is not None and annotations.unknown_out:
                message, node = annotations.unknown_out[0]
                raise FrontendError("PTO101", message, node, self.scope.source)
            if isinstance(ann, ApiRef) and ann.qualname in api.TENSOR_CLASSES:
                ann = TensorAnnotation(None, None)  # bare class: rejected by pypto, still a tensor intent
            param_nodes[arg.arg] = arg
            frame.bindings[arg.arg] = "param"
            if isinstance(ann, TensorAnnotation):
                value = self._tensor_param(arg, ann, given, builder)
                params[arg.arg] = value
            else:
                params[arg.arg] = None
                value = self._scalar_param(arg, defaults.get(arg.arg), given, builder, annotations)
            frame.env[arg.arg] = value
        return frame, params, param_nodes

    def _tensor_param(self, arg: ast.arg, ann: TensorAnnotation, given: Optional[Given], builder) -> Tensor:
        name = arg.arg
        if builder is None:
            shape = None
            if ann.shape is not None and Ellipsis not in ann.shape:
                shape = tuple(self._lint_dim(name, axis, d) for axis, d in enumerate(ann.shape))
            return Tensor(shape, ann.dtype, "param", name)
        where = self.scope.source
        actual = given.tensors.get(name) if given is not None else None
        if actual is None and given is not None and name in given.scalars:
            value = given.scalars[name]
            if name not in given.sizes or type(value) is not int:
                raise FrontendError("PTO106", f"argument `{name}` must be a tensor (a torch.Tensor: the kernel "
                                              f"declares `{name}` a pypto.Tensor), got {type(value).__name__}"
                                              + (f" {format_count(value)}" if isinstance(value, (int, float)) else ""),
                                    arg, where)
            actual = ((value,), None)  # --shape x=64: a one-dimensional tensor
        actual_shape, actual_dtype = (actual or (None, None))
        dtype = ann.dtype.ir if ann.dtype is not None else actual_dtype
        if dtype is None:
            raise FrontendError("PTO104", f"tensor parameter `{name}` has no dtype in its annotation and none was "
                                          f"given: add `:fp16` (or another dtype) to its --shape", arg, where)
        if actual_dtype is not None and ann.dtype is not None and actual_dtype != ann.dtype.ir:
            raise FrontendError("PTO106", f"tensor `{name}` is declared {ann.dtype.ir} but the argument is "
                                          f"{actual_dtype}", arg, where)
        dims = ann.shape
        if dims is None:
            if actual_shape is None:
                raise FrontendError("PTO104", f"tensor parameter `{name}` takes its shape at the call and none is "
                                              f"known: give it with --shape {name}=64x128 (or call the kernel in the "
                                              "module with tensors of static shape)", arg, where)
            dims = tuple(actual_shape)
        dims = list(dims)
        if dims and dims[-1] is Ellipsis:
            dims = dims[:-1]
            if actual_shape is None:  # the rank itself is bound at the call: never guessed
                raise FrontendError("PTO104", f"tensor parameter `{name}` takes its rank and trailing dims at the "
                                              f"call (`...` in its annotation) and none is known: give it with "
                                              f"--shape {name}=64x128 (or call the kernel in the module with "
                                              "tensors of static shape)", arg, where)
            dims += [Marker("STATIC")] * (len(actual_shape) - len(dims))
        elif ann.open_rank and actual_shape is not None and len(actual_shape) > len(dims):
            dims += [Marker("STATIC")] * (len(actual_shape) - len(dims))  # pypto: at least the listed rank
        if actual_shape is not None and len(actual_shape) != len(dims):
            least = "at least " if ann.open_rank else ""
            raise FrontendError("PTO106", f"tensor `{name}` is declared with rank {least}{len(dims)} but the argument "
                                          f"has shape {list(actual_shape)}", arg, where)
        shape, bound = [], set()
        if ann.shape is None:  # the whole shape from the call
            bound = set(range(len(dims)))
        for axis, d in enumerate(dims):
            got = actual_shape[axis] if actual_shape is not None else None
            if isinstance(d, int):
                if got is not None and got != d:
                    raise FrontendError("PTO106", f"tensor `{name}` is declared {list(ann.shape)} but the argument "
                                                  f"has shape {list(actual_shape)}", arg, where)
                shape.append(d)
            elif isinstance(d, ApiRef) and got is None:
                module, _, const = d.qualname.rpartition(".")
                raise FrontendError("PTO104", f"tensor `{name}`: dim {axis} is `{const}` from `{module}`, a module "
                                              "pypto-ast did not find beside the file (it reads imported constants "
                                              f"from source, never imports them): put `{module}` on the path next "
                                              f"to the kernel, or give --shape {name}=...", arg, where)
            elif isinstance(d, (Marker, ApiRef)) and (not isinstance(d, Marker) or d.kind == "STATIC") or d is None:
                if got is None:
                    raise FrontendError("PTO104", f"tensor `{name}`: dim {axis} takes its size from the call and "
                                                  f"none is known: give --shape {name}=...", arg, where)
                shape.append(got)
                bound.add(axis)
            elif isinstance(d, (Marker, Sym)):
                shape.append(Sym(ir.ShapeOf(name, axis), frozenset({"dynamic_dim"}), text=f"{name}.shape[{axis}]"))
            else:
                raise FrontendError("PTO106", f"tensor `{name}`: unsupported dim {d!r} in its annotation", arg, where)
        dt = api.DTYPES.get(_DT_BY_IR.get(dtype, ""), ann.dtype)
        tensor = Tensor(tuple(shape), dt, "param", name, ref=ir.TensorRef(name), bound=frozenset(bound))
        builder.params.append(ir.Param(name, "tensor", ir.TensorType(tuple(
            ir.Const(d) if isinstance(d, int) else d.expr for d in shape), dtype)))
        builder.param_names.add(name)
        return tensor

    def _lint_dim(self, name, axis, d):
        if isinstance(d, int):
            return d
        if isinstance(d, Marker) and d.kind == "DYNAMIC":
            return Sym(ir.ShapeOf(name, axis), frozenset({"dynamic_dim"}), text=d.kind)
        if isinstance(d, Sym):
            return Sym(ir.ShapeOf(name, axis), frozenset({"dynamic_dim"}), text=d.text)
        return None  # STATIC (an int known at the call) or unknown

    def _scalar_param(self, arg, default_node, given: Optional[Given], builder, annotations):
        name = arg.arg
        if given is not None and name in given.scalars:
            value = livevalues.argument(given.scalars[name])  # a config object: its fields
        elif default_node is not None:
            value = annotations.eval(default_node)
        else:
            value = UNKNOWN
        if builder is not None:
            if value is UNKNOWN:
                raise FrontendError("PTO104", f"no value for the non-tensor parameter `{name}`: pypto makes it a "
                                              f"build-time constant; give it with --shape {name}=VALUE", arg,
                                    self.scope.source)
            if isinstance(value, Tensor) or isinstance(value, TorchSpec):
                raise FrontendError("PTO106", f"parameter `{name}` receives a tensor but is not annotated with "
                                              "pypto.Tensor(...)", arg, self.scope.source)
            if isinstance(value, (Record, Instance, list, tuple, dict)):
                return value  # a config object or a container: read at build time only, never a run-time scalar
            builder.params.append(ir.Param(name, "scalar", None, False, value))
        return value

    def _legacy_params(self, ev: Evaluator, closure, given: Optional[Given], builder):
        kdef = self.kdef
        call = self.scope.legacy_call(kdef.node)
        frame = Frame(kdef.owner, "legacy", self.scope, self.scope.source, closure=closure)
        params: dict = {}
        param_nodes: dict = {}
        host = Evaluator(self.scope)
        host.frames.append(closure if closure is not None else Frame(None, "module", self.scope, self.scope.source,
                                                                      env=self.scope.env))
        for arg in (call.args[1:] if call is not None else []):
            if not isinstance(arg, ast.Name):
                continue
            known = host.eval(arg)
            shape = dtype = None
            label = arg.id
            if isinstance(known, TensorAnnotation):
                shape, dtype = known.shape, known.dtype or known.object_dtype
                label = known.name or arg.id
            elif isinstance(known, TorchSpec):
                shape, dtype = known.shape, api.DTYPES.get(_DT_BY_IR.get(known.dtype or "", ""))
                label = known.param or label  # named as the call's argument, so a run binds it
            given_here = given.tensors.get(label) or given.tensors.get(arg.id) if given is not None else None
            if given_here is not None:  # --shape for a tensor whose shape the host code computes at run time
                shape = given_here[0]
                dtype = api.DTYPES.get(_DT_BY_IR.get(given_here[1] or "", ""), dtype)
            if shape is not None and any(not isinstance(d, int) for d in shape):
                shape = tuple(self._lint_dim(label, axis, d) for axis, d in enumerate(shape))
            tensor = Tensor(tuple(shape) if shape is not None else None, dtype, "param", arg.id)
            if builder is not None:
                if not tensor.known:
                    raise FrontendError("PTO104", f"the legacy kernel's tensor `{arg.id}` has no build-time shape: "
                                                  f"give it with --shape {label}=64x128:fp32 (or declare it with "
                                                  "pypto.tensor(shape, dtype, name) of static shape)", arg,
                                        self.scope.source)
                tensor.ref = ir.TensorRef(label)
                tensor.name = label
                builder.params.append(ir.Param(label, "tensor", ir.TensorType(tuple(
                    ir.Const(d) if isinstance(d, int) else d.expr for d in tensor.shape), dtype.ir)))
                builder.param_names.add(label)
            params[arg.id] = tensor
            param_nodes[arg.id] = arg
            frame.env[arg.id] = tensor
            frame.bindings[arg.id] = "param"
        return frame, params, param_nodes


_DT_BY_IR = {dt.ir: name for name, dt in api.DTYPES.items()}


def _legacy_label(kdef: KernelDef) -> str:
    return kdef.name.rsplit(".", 1)[-1]


def _function_statements(func):
    """The statements of ``func`` at any depth, without entering nested functions or classes."""
    stack = list(getattr(func, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(child_statements(node))


__all__ = ["Given", "KernelDef", "KernelReader", "call_sites", "choose", "discover", "given_from_call",
           "annotation_from_call", "DType", "Any"]
