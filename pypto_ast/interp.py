"""Static abstract interpretation of kernel bodies, in program order, the way PyPTO traces them.

It tracks what can be known without running anything: tensor shapes and dtypes through the
op families, the tile shapes in effect at each op, the loop tree, symbolic scalars, which
parameters are written, and which locals have a producer. Plain helpers called from a kernel
are interpreted in the caller's context. Anything it cannot know becomes ``UNKNOWN``.
"""

from __future__ import annotations

import ast
import builtins
import operator
from typing import Any, Optional

from .frontend import api
from . import shapes
from .facts import (
    AccessFact, BranchFact, Kernel, LoopFact, OpFact, PrintFact, RebindFact, TileSetFact, ViewFact,
)
from .settings import Settings
from .source import SourceFile
from .values import (
    UNKNOWN, ApiRef, BranchVal, Const, DType, FuncRef, LoopIter, Marker, Sym, TensorAnnotation,
    TensorVal, TupleVal, as_dims, int_value,
)

MAX_INLINE_DEPTH = 8
MAX_STATIC_UNROLL = 16
_BUILTINS = set(dir(builtins))
_FOLD = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.Div: operator.truediv, ast.Pow: operator.pow,
}
_CMP = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}


class Method:
    """``tensor.name`` before it is called."""

    __slots__ = ("obj", "name", "node")

    def __init__(self, obj, name, node):
        self.obj, self.name, self.node = obj, name, node


class RangeVal:
    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def items(self) -> Optional[list]:
        vals = [int_value(v) for v in (self.start, self.stop, self.step)]
        if None in vals or vals[2] == 0:
            return None
        return list(range(*vals))


class OptionsVal:
    __slots__ = ("vec", "cube", "node")

    def __init__(self, vec, cube, node):
        self.vec, self.cube, self.node = vec, cube, node


class Frame:
    def __init__(self, func, context: str, env: Optional[dict] = None):
        self.func = func
        self.context = context  # "jit" | "function" | "helper" | "legacy" | "host"
        self.env: dict = env if env is not None else {}
        self.bindings: dict = {}  # kernel frame only: name -> "param" | RebindFact | "local"
        self.returns: list = []


class _Evaluator:
    """Expression evaluation shared by the module scope (host) and kernel interpretation."""

    def __init__(self, source: SourceFile):
        self.source = source

    # hooks overridden by the kernel interpreter
    def lookup(self, name: str) -> Any:
        raise NotImplementedError

    def on_name_load(self, name: str, node: ast.Name) -> None:
        pass

    def call(self, node: ast.Call, func, args, kwargs) -> Any:
        return UNKNOWN

    def tensor_binop(self, node, op_name, left, right, left_node, right_node) -> Any:
        return UNKNOWN

    def subscript(self, node: ast.Subscript, base, key) -> Any:
        return UNKNOWN

    def sym_used(self, value, how: str) -> None:
        pass

    # ---------------------------------------------------------------------------------
    def eval(self, node: Optional[ast.AST]) -> Any:
        if node is None:
            return Const(None)
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child)
            return UNKNOWN
        return method(node)

    def eval_Constant(self, node):
        return Const(node.value)

    def eval_Name(self, node):
        self.on_name_load(node.id, node)
        return self.lookup(node.id)

    def eval_Attribute(self, node):
        base = self.eval(node.value)
        return self.attribute(base, node.attr, node)

    def attribute(self, base, attr: str, node):
        if isinstance(base, ApiRef):
            qual = base.qualname + "." + attr
            if qual in api.MARKERS:
                return Marker(api.MARKERS[qual])
            dt = api.dtype(qual)
            if dt is not None:
                return dt
            return ApiRef(qual)
        if isinstance(base, TensorVal):
            if attr == "shape":
                if base.shape is None:
                    return UNKNOWN
                return TupleVal(tuple(_dim_value(d) for d in base.shape))
            if attr == "dtype":
                return base.dtype if base.dtype is not None else UNKNOWN
            if attr == "dim":
                return Const(base.rank) if base.rank is not None else UNKNOWN
            return Method(base, attr, node)
        if isinstance(base, Sym) and attr in ("min", "max"):
            return Method(base, attr, node)
        return UNKNOWN

    def eval_Tuple(self, node):
        return TupleVal(tuple(self.eval(e) for e in node.elts))

    eval_List = eval_Tuple

    def eval_Call(self, node):
        func = self.eval(node.func)
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.eval(arg.value)
                if isinstance(inner, TupleVal):
                    args.extend(inner.items)
                else:
                    args.append(UNKNOWN)
            else:
                args.append(self.eval(arg))
        kwargs = {}
        for kw in node.keywords:
            value = self.eval(kw.value)
            if kw.arg is not None:
                kwargs[kw.arg] = value
        return self.call(node, func, args, kwargs)

    def eval_BinOp(self, node):
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(left, TensorVal) or isinstance(right, TensorVal):
            name = api.BINOP_NAMES.get(type(node.op).__name__)
            if name is None:
                return UNKNOWN
            return self.tensor_binop(node, name, left, right, node.left, node.right)
        if isinstance(left, Const) and isinstance(right, Const):
            fold = _FOLD.get(type(node.op))
            try:
                return Const(fold(left.value, right.value)) if fold else UNKNOWN
            except Exception:
                return UNKNOWN
        if isinstance(left, TupleVal) and isinstance(node.op, ast.Add) and isinstance(right, TupleVal):
            return TupleVal(left.items + right.items)
        if isinstance(left, TupleVal) and isinstance(node.op, ast.Mult) and int_value(right) is not None:
            n = int_value(right)
            return TupleVal(left.items * n) if 0 <= n <= 64 else UNKNOWN
        if isinstance(left, Sym) or isinstance(right, Sym):
            return _sym_combine(left, right, self.source.segment(node))
        return UNKNOWN

    def eval_UnaryOp(self, node):
        value = self.eval(node.operand)
        if isinstance(value, Const):
            try:
                if isinstance(node.op, ast.USub):
                    return Const(-value.value)
                if isinstance(node.op, ast.UAdd):
                    return Const(+value.value)
                if isinstance(node.op, ast.Not):
                    return Const(not value.value)
                if isinstance(node.op, ast.Invert):
                    return Const(~value.value)
            except Exception:
                return UNKNOWN
        if isinstance(value, Sym):
            return Sym(self.source.segment(node), value.kinds, value.reads, value.indices)
        if isinstance(value, TensorVal) and isinstance(node.op, ast.USub):
            return self.tensor_binop(node, "neg", value, None, node.operand, None)
        return UNKNOWN

    def eval_Compare(self, node):
        values = [self.eval(node.left)] + [self.eval(c) for c in node.comparators]
        if any(isinstance(v, TensorVal) for v in values):
            name = api.CMPOP_NAMES.get(type(node.ops[0]).__name__)
            if name is None or len(node.ops) != 1:
                return UNKNOWN
            return self.tensor_binop(node, name, values[0], values[1], node.left, node.comparators[0])
        if all(isinstance(v, Const) for v in values):
            try:
                result = True
                for op, a, b in zip(node.ops, values, values[1:]):
                    fn = _CMP.get(type(op))
                    if fn is None:
                        if isinstance(op, (ast.Is, ast.IsNot)):
                            fn = operator.is_ if isinstance(op, ast.Is) else operator.is_not
                        else:
                            return UNKNOWN
                    result = result and fn(a.value, b.value)
                return Const(bool(result))
            except Exception:
                return UNKNOWN
        syms = [v for v in values if isinstance(v, Sym)]
        if syms:
            for s in syms:
                self.sym_used(s, "extent")
            return _sym_combine(syms[0], syms[-1], self.source.segment(node))
        return UNKNOWN

    def eval_BoolOp(self, node):
        values = [self.eval(v) for v in node.values]
        if all(isinstance(v, Const) for v in values):
            result = values[0].value
            for v in values[1:]:
                result = (result and v.value) if isinstance(node.op, ast.And) else (result or v.value)
            return Const(result)
        syms = [v for v in values if isinstance(v, Sym)]
        if syms:
            out = syms[0]
            for s in syms[1:]:
                out = out.combine(s, self.source.segment(node))
            return out
        return UNKNOWN

    def eval_Subscript(self, node):
        base = self.eval(node.value)
        key = self.eval(node.slice)
        return self.subscript(node, base, key)

    def eval_Slice(self, node):
        return SliceVal(self.eval(node.lower) if node.lower else None,
                        self.eval(node.upper) if node.upper else None,
                        self.eval(node.step) if node.step else None)

    def eval_IfExp(self, node):
        test = self.eval(node.test)
        if isinstance(test, Const):
            return self.eval(node.body if test.value else node.orelse)
        a, b = self.eval(node.body), self.eval(node.orelse)
        return merge_values(a, b)

    def eval_NamedExpr(self, node):
        value = self.eval(node.value)
        self.bind_name(node.target.id, value, node)
        return value

    def bind_name(self, name, value, node) -> None:
        pass

    def eval_JoinedStr(self, node):
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                self.eval(v.value)
        return UNKNOWN

    def eval_Lambda(self, node):
        return UNKNOWN

    def eval_ListComp(self, node):
        return UNKNOWN

    eval_SetComp = eval_DictComp = eval_GeneratorExp = eval_ListComp

    def eval_Starred(self, node):
        return UNKNOWN


class SliceVal:
    __slots__ = ("lower", "upper", "step")

    def __init__(self, lower, upper, step):
        self.lower, self.upper, self.step = lower, upper, step


def _dim_value(d):
    if isinstance(d, int):
        return Const(d)
    if isinstance(d, Sym):
        return d
    return UNKNOWN


def _sym_combine(a, b, text: str) -> Any:
    if isinstance(a, Sym) and isinstance(b, Sym):
        return a.combine(b, text)
    s = a if isinstance(a, Sym) else b
    return Sym(text, s.kinds, s.reads, s.indices)


def merge_values(a, b):
    """The value of a name after two branches assigned ``a`` and ``b``."""
    if a is b or a == b:
        return a
    if isinstance(a, TensorVal) and isinstance(b, TensorVal):
        shape = a.shape if a.shape == b.shape else None
        dtype = a.dtype if a.dtype == b.dtype else None
        return TensorVal(shape, dtype, "op")
    if isinstance(a, Sym) or isinstance(b, Sym):
        s = a if isinstance(a, Sym) else b
        return Sym(s.text, s.kinds, s.reads, s.indices)
    return UNKNOWN


# ======================================================================================
class ModuleScope(_Evaluator):
    """Module-level names: imports (qualified names), constants, functions. Host code only."""

    def __init__(self, source: SourceFile):
        super().__init__(source)
        self.env: dict = {}
        self.functions: dict = {}
        self.host_tile_set = False

    def lookup(self, name):
        if name in self.env:
            return self.env[name]
        if name in _BUILTINS:
            return ApiRef("builtins." + name)
        return UNKNOWN

    def evaluate_static(self, node):
        try:
            return self.eval(node)
        except RecursionError:
            raise
        except Exception:
            return UNKNOWN

    def run_module(self) -> None:
        self._run_block(self.source.tree.body)
        self.host_tile_set = self._host_sets_tiles()

    def _host_sets_tiles(self) -> bool:
        """Whether host code sets a tile shape: a ``set_*_tile_shapes`` call at module level or
        in a function no kernel calls. It configures pypto's global scope, which kernels traced
        afterwards inherit, so their initial tile shapes are unknown here (not "never set")."""
        from .model import decorator_kind  # local: model imports this module

        setters = {"pypto.set_vec_tile_shapes", "pypto.set_cube_tile_shapes"}
        owners: list = []  # enclosing plain function (None: module level) of each host set call
        from_kernels: set = set()  # names called inside kernel bodies
        calls: dict = {}  # plain function name -> names it calls

        def visit(node, owner, in_kernel):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    kernel = in_kernel or decorator_kind(self, child) is not None
                    visit(child, None if kernel else child, kernel)
                    continue
                inner = in_kernel
                if isinstance(child, ast.With) and any(
                    isinstance(i.context_expr, ast.Call)
                    and getattr(self.evaluate_static(i.context_expr.func), "qualname", None) == api.LEGACY_FUNCTION
                    for i in child.items
                ):
                    inner = True
                if isinstance(child, ast.Call):
                    func = self.evaluate_static(child.func)
                    if not in_kernel and isinstance(func, ApiRef) and func.qualname in setters:
                        owners.append(owner)
                    if isinstance(child.func, ast.Name):
                        if in_kernel:
                            from_kernels.add(child.func.id)
                        elif owner is not None:
                            calls.setdefault(owner.name, set()).add(child.func.id)
                visit(child, owner, inner)

        visit(self.source.tree, None, False)
        if not owners:
            return False
        reached, frontier = set(), set(from_kernels)
        while frontier:
            name = frontier.pop()
            if name not in reached:
                reached.add(name)
                frontier |= calls.get(name, set())
        return any(owner is None or owner.name not in reached for owner in owners)

    def _run_block(self, stmts):
        for stmt in stmts:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        self.env[alias.asname] = ApiRef(_canonical(alias.name))
                    else:
                        top = alias.name.split(".")[0]
                        self.env[top] = ApiRef(_canonical(top))
            elif isinstance(stmt, ast.ImportFrom):
                if stmt.level or not stmt.module:
                    continue
                for alias in stmt.names:
                    if alias.name == "*":
                        continue
                    qual = _canonical(stmt.module + "." + alias.name)
                    value: Any = ApiRef(qual)
                    if qual in api.MARKERS:
                        value = Marker(api.MARKERS[qual])
                    elif api.dtype(qual) is not None:
                        value = api.dtype(qual)
                    self.env[alias.asname or alias.name] = value
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt
                self.env[stmt.name] = FuncRef(stmt, stmt.name)
            elif isinstance(stmt, ast.ClassDef):
                self.env[stmt.name] = UNKNOWN
            elif isinstance(stmt, ast.Assign):
                value = self.evaluate_static(stmt.value)
                for target in stmt.targets:
                    self._assign(target, value)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._assign(stmt.target, self.evaluate_static(stmt.value))
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                self.env[stmt.target.id] = UNKNOWN
            elif isinstance(stmt, ast.If):
                test = self.evaluate_static(stmt.test)
                if isinstance(test, Const):
                    self._run_block(stmt.body if test.value else stmt.orelse)
                else:
                    self._run_block(stmt.body)
                    self._run_block(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                self._run_block(stmt.body)
                for handler in stmt.handlers:
                    self._run_block(handler.body)
                self._run_block(stmt.orelse)
                self._run_block(stmt.finalbody)
            elif isinstance(stmt, (ast.For, ast.While, ast.With)):
                for name in _assigned_names(stmt):
                    self.env[name] = UNKNOWN

    def _assign(self, target, value):
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, TupleVal) and len(value.items) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                self._assign(elt, items[i] if items else UNKNOWN)

    def call(self, node, func, args, kwargs):
        """Host-side calls: only annotation builders and helpers returning them matter."""
        if isinstance(func, ApiRef):
            q = func.qualname
            if q in api.TENSOR_CLASSES:
                return _annotation(args, kwargs)
            if q == "pypto.frontend.dynamic":
                name = args[0].value if args and isinstance(args[0], Const) else "dyn"
                return Sym(str(name), frozenset({"dynamic_dim"}))
            if q == "pypto.from_torch":
                dt = kwargs.get("dtype")
                return TensorVal(None, dt if isinstance(dt, DType) else None, "host")
            if q in ("builtins.tuple", "builtins.list") and args and isinstance(args[0], TupleVal):
                return args[0]
            return UNKNOWN
        if isinstance(func, FuncRef):
            return self._inline_pure(func.node, args)
        return UNKNOWN

    def _inline_pure(self, func: ast.FunctionDef, args) -> Any:
        """``def T(): return pypto.Tensor(S, dt)`` used as an annotation: evaluate the return."""
        body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) == 1 and isinstance(body[0], ast.Return) and not func.args.args:
            return self.evaluate_static(body[0].value)
        return UNKNOWN

    def subscript(self, node, base, key):
        if isinstance(base, ApiRef) and base.qualname in api.TENSOR_CLASSES:
            items = key.items if isinstance(key, TupleVal) else (key,)
            shape = dtype = None
            for item in items:
                if isinstance(item, TupleVal):
                    shape = as_dims(item)
                elif isinstance(item, DType):
                    dtype = item
            return TensorAnnotation(shape, dtype)
        if isinstance(base, TupleVal) and int_value(key) is not None:
            i = int_value(key)
            return base.items[i] if -len(base.items) <= i < len(base.items) else UNKNOWN
        return UNKNOWN


def _annotation(args, kwargs) -> TensorAnnotation:
    shape = args[0] if args else kwargs.get("shape", Const(None))
    dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
    dims = as_dims(shape) if isinstance(shape, TupleVal) else None
    if dtype is None:
        dtype = api.FP32 if (args or "shape" in kwargs) else None
    return TensorAnnotation(dims, dtype if isinstance(dtype, DType) else None)


def _canonical(qualname: str) -> str:
    for prefix, target in api.PYPTO_ALIASES.items():
        if qualname == prefix or qualname.startswith(prefix + "."):
            return target + qualname[len(prefix):]
    return qualname


def _assigned_names(stmt) -> list:
    names = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
    return names


# ======================================================================================
class Interpreter(_Evaluator):
    """Interprets one kernel (and the helpers it calls) and records its facts."""

    def __init__(self, scope: ModuleScope, settings: Settings):
        super().__init__(scope.source)
        self.scope = scope
        self.settings = settings
        self.kernel: Optional[Kernel] = None
        self.frames: list[Frame] = []
        self.loop: Optional[LoopFact] = None
        initial = UNKNOWN if scope.host_tile_set else None
        self.vec_tile: Any = initial
        self.vec_set: Optional[TileSetFact] = None
        self.cube_tile: Any = initial
        self.cube_set: Optional[TileSetFact] = None
        self.order = 0
        self.multiplier = 1
        self.paths = 1
        self.live_reads: list = []  # (Sym read from a tensor, node) bound in enclosing bodies
        self.read_uses: dict = {}  # tensor-read node id -> set of use kinds
        self.call_stack: list = []

    # -- entry points -----------------------------------------------------------------
    def run_function_kernel(self, func: ast.FunctionDef, kind: str) -> Kernel:
        params: dict = {}
        param_nodes: dict = {}
        frame = Frame(func, "jit" if kind in ("jit", "pypto.jit") else "function")
        all_args = func.args.posonlyargs + func.args.args + func.args.kwonlyargs
        for arg in all_args:
            ann = self.scope.evaluate_static(arg.annotation) if arg.annotation is not None else None
            if isinstance(ann, ApiRef) and ann.qualname in api.TENSOR_CLASSES:
                ann = TensorAnnotation(None, None)  # bare class: rejected by pypto, still a tensor intent
            if isinstance(ann, TensorAnnotation):
                value: Any = TensorVal(ann.shape, ann.dtype, "param", arg.arg)
                params[arg.arg] = value
            else:
                params[arg.arg] = None
                value = UNKNOWN
            param_nodes[arg.arg] = arg
            frame.env[arg.arg] = value
            frame.bindings[arg.arg] = "param"
        has_return = any(
            isinstance(n, ast.Return) and n.value is not None for n in _walk_function_body(func)
        )
        if kind == "function" and not self.scope.host_tile_set:
            # inlined into callers: the caller's tile shapes are in effect, unknown here
            self.vec_tile = self.cube_tile = UNKNOWN
        root = LoopFact(None, "implicit", function=func, is_loop1=True, trip=1)
        self.kernel = Kernel(func.name, func, kind, params, param_nodes, has_return, root)
        self.kernel.loops.append(root)
        self.loop = root
        self.frames.append(frame)
        self._apply_decorator_options(func)
        self.exec_block(func.body)
        root.body_paths = self.paths
        self.kernel.read_uses = self.read_uses
        return self.kernel

    def run_legacy_kernel(self, node: ast.With, owner) -> Kernel:
        call = next(i.context_expr for i in node.items if isinstance(i.context_expr, ast.Call))
        name_val = self.scope.evaluate_static(call.args[0]) if call.args else UNKNOWN
        name = name_val.value if isinstance(name_val, Const) and isinstance(name_val.value, str) else "legacy"
        frame = Frame(owner, "legacy")
        params: dict = {}
        param_nodes: dict = {}
        for arg in call.args[1:]:
            if isinstance(arg, ast.Name):
                known = self.scope.env.get(arg.id)
                # module-level ``x = pypto.tensor(shape, dtype)`` evaluates to a TensorAnnotation
                typed = isinstance(known, (TensorVal, TensorAnnotation))
                tensor = TensorVal(known.shape if typed else None,
                                   known.dtype if typed else None, "param", arg.id)
                params[arg.id] = tensor
                param_nodes[arg.id] = arg
                frame.env[arg.id] = tensor
                frame.bindings[arg.id] = "param"
        root = LoopFact(None, "implicit", function=owner, is_loop1=True, trip=1)
        self.kernel = Kernel(str(name), node, "legacy", params, param_nodes, False, root)
        self.kernel.loops.append(root)
        self.loop = root
        self.frames.append(frame)
        self.exec_block(node.body)
        root.body_paths = self.paths
        self.kernel.read_uses = self.read_uses
        return self.kernel

    def _apply_decorator_options(self, func):
        for deco in func.decorator_list:
            value = self.scope.evaluate_static(deco)
            if isinstance(deco, ast.Call):
                value = self.eval(deco)
            if isinstance(value, OptionsVal):
                self._enter_options(value)

    # -- environment ------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def lookup(self, name):
        env = self.frame.env
        if name in env:
            return env[name]
        return self.scope.lookup(name)

    def next_order(self) -> int:
        self.order += 1
        return self.order

    def pypto_loops(self) -> tuple:
        loops = []
        loop = self.loop
        while loop is not None:
            if loop.explicit:
                loops.append(loop)
            loop = loop.parent
        return tuple(reversed(loops))

    def in_pypto_loop(self) -> bool:
        return bool(self.pypto_loops())

    def on_name_load(self, name, node):
        if len(self.frames) != 1:
            return
        binding = self.frame.bindings.get(name)
        if binding == "param":
            self.kernel.param_reads.append((name, self.next_order(), self.pypto_loops()))
        elif isinstance(binding, RebindFact):
            binding.read_after = True

    def bind_name(self, name, value, node, stmt=None, aug=False, simple=False):
        frame = self.frame
        if len(self.frames) == 1 and stmt is not None:
            binding = frame.bindings.get(name)
            if binding == "param" or isinstance(binding, RebindFact) and binding.param == name:
                fact = RebindFact(stmt, node, name, aug, simple, value, self.next_order(), self.pypto_loops())
                self.kernel.rebinds.append(fact)
                frame.bindings[name] = fact
            else:
                frame.bindings[name] = "local"
        elif len(self.frames) == 1:
            frame.bindings[name] = "local"
        frame.env[name] = value
        if isinstance(value, Sym) and "tensor_read" in value.kinds:
            self.live_reads.append((value, node))

    def assign(self, target, value, stmt, simple=False):
        if isinstance(target, ast.Name):
            self.bind_name(target.id, value, target, stmt, simple=simple)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = None
            if isinstance(value, TupleVal) and len(value.items) == len(target.elts):
                items = value.items
            for i, elt in enumerate(target.elts):
                self.assign(elt, items[i] if items else UNKNOWN, stmt)
        elif isinstance(target, ast.Subscript):
            self.store_subscript(target, value, stmt)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, stmt)
        else:
            self.eval(target.value) if isinstance(target, ast.Attribute) else None

    def store_subscript(self, target: ast.Subscript, value, stmt):
        base = self.eval_no_read(target.value)
        key = self.eval(target.slice)
        value_node = getattr(stmt, "value", None)
        if isinstance(value, TensorVal):
            self.read(value, value_node or target)
        elif isinstance(value, Sym):
            self.sym_used(value, "operand")
        if isinstance(base, TensorVal):
            self.write(base, target)
        self.sym_used(key, "offset")

    def eval_no_read(self, node):
        """Evaluate a write target's base: a name load there is not a read of the parameter."""
        if isinstance(node, ast.Name):
            if len(self.frames) == 1 and self.frame.bindings.get(node.id) == "param":
                self.kernel.outputs.add(node.id)
            return self.lookup(node.id)
        return self.eval(node)

    # -- tensor accesses -----------------------------------------------------------------
    def read(self, tensor: TensorVal, node) -> None:
        root = tensor.root()
        if root.origin == "local":
            self.kernel.accesses.append(AccessFact(node, root, False, self.next_order(), self.pypto_loops()))

    def write(self, tensor: TensorVal, node) -> None:
        root = tensor.root()
        if root.origin == "local":
            self.kernel.accesses.append(AccessFact(node, root, True, self.next_order(), self.pypto_loops()))
        elif root.origin == "param":
            for name, value in self.kernel.params.items():
                if value is root:
                    self.kernel.outputs.add(name)

    def sym_used(self, value, how):
        if isinstance(value, Sym):
            for read in value.reads:
                self.read_uses.setdefault(read, set()).add(how)
        elif isinstance(value, TupleVal):
            for item in value.items:
                self.sym_used(item, how)
        elif isinstance(value, SliceVal):
            self.sym_used(value.lower, how)
            self.sym_used(value.upper, how)

    # -- statements -------------------------------------------------------------------
    def exec_block(self, stmts) -> None:
        for stmt in stmts:
            method = getattr(self, "exec_" + type(stmt).__name__, None)
            if method is not None:
                method(stmt)
            else:
                for child in ast.iter_child_nodes(stmt):
                    if isinstance(child, ast.expr):
                        self.eval(child)

    def exec_Expr(self, stmt):
        self.eval(stmt.value)

    def exec_Assign(self, stmt):
        value = self.eval(stmt.value)
        simple = len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        for target in stmt.targets:
            self.assign(target, value, stmt, simple=simple)

    def exec_AnnAssign(self, stmt):
        if stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value), stmt)

    def exec_AugAssign(self, stmt):
        target = stmt.target
        if isinstance(target, ast.Name):
            current = self.eval(target)
            rhs = self.eval(stmt.value)
            value = self._augmented(stmt, current, rhs)
            self.bind_name(target.id, value, target, stmt, aug=True)
        elif isinstance(target, ast.Subscript):
            current = self.eval(target)
            rhs = self.eval(stmt.value)
            value = self._augmented(stmt, current, rhs)
            self.store_subscript(target, value, stmt)
        else:
            self.eval(stmt.value)

    def _augmented(self, stmt, current, rhs):
        if isinstance(current, TensorVal) or isinstance(rhs, TensorVal):
            name = api.BINOP_NAMES.get(type(stmt.op).__name__)
            if name:
                return self.tensor_binop(stmt, name, current, rhs, stmt.target, stmt.value)
            return UNKNOWN
        fold = _FOLD.get(type(stmt.op))
        if isinstance(current, Const) and isinstance(rhs, Const) and fold:
            try:
                return Const(fold(current.value, rhs.value))
            except Exception:
                return UNKNOWN
        if isinstance(current, Sym) or isinstance(rhs, Sym):
            return _sym_combine(current, rhs, self.source.segment(stmt))
        return UNKNOWN

    def exec_Return(self, stmt):
        value = self.eval(stmt.value) if stmt.value is not None else Const(None)
        self.frame.returns.append(value)

    def exec_Delete(self, stmt):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                self.frame.env.pop(target.id, None)

    def exec_FunctionDef(self, stmt):
        self.frame.env[stmt.name] = FuncRef(stmt, stmt.name)

    exec_AsyncFunctionDef = exec_FunctionDef

    def exec_ClassDef(self, stmt):
        self.frame.env[stmt.name] = UNKNOWN

    def exec_Import(self, stmt):
        for alias in stmt.names:
            top = alias.asname or alias.name.split(".")[0]
            self.frame.env[top] = ApiRef(_canonical(alias.name if alias.asname else top))

    def exec_ImportFrom(self, stmt):
        if stmt.level or not stmt.module:
            return
        for alias in stmt.names:
            if alias.name != "*":
                qual = _canonical(stmt.module + "." + alias.name)
                self.frame.env[alias.asname or alias.name] = api.dtype(qual) or ApiRef(qual)

    def exec_If(self, stmt):
        test = self.eval(stmt.test)
        if isinstance(test, Const):
            self.exec_block(stmt.body if test.value else stmt.orelse)
            return
        symbolic = isinstance(test, (Sym, BranchVal))
        kind = "cond" if isinstance(test, BranchVal) else "if"
        inner = test.test if isinstance(test, BranchVal) else test
        flag = isinstance(inner, Sym) and inner.kinds == frozenset({"loop_flag"})
        if symbolic:
            self._branch_fact(stmt, kind, flag)
        self._two_ways(lambda: self.exec_block(stmt.body), lambda: self.exec_block(stmt.orelse),
                       symbolic and not flag)

    def eval_IfExp(self, node):
        test = self.eval(node.test)
        if isinstance(test, Const):
            return self.eval(node.body if test.value else node.orelse)
        symbolic = isinstance(test, Sym)
        if symbolic:
            self._branch_fact(node, "ifexp", test.kinds == frozenset({"loop_flag"}))
        out = []
        self._two_ways(lambda: out.append(self.eval(node.body)), lambda: out.append(self.eval(node.orelse)),
                       symbolic and test.kinds != frozenset({"loop_flag"}))
        return merge_values(out[0], out[1])

    def _branch_fact(self, node, kind, flag):
        fact = BranchFact(node, kind, True, flag, self.loop, self.frame.context)
        self.kernel.branches.append(fact)
        self.loop.branches.append(fact)
        if flag:
            self.loop.flag_branches += 1

    def _two_ways(self, first, second, counts_paths: bool):
        """Run both sides of a branch from the same state, then merge what they bound."""
        env_before = dict(self.frame.env)
        tiles_before = (self.vec_tile, self.vec_set, self.cube_tile, self.cube_set)
        paths_before = self.paths
        self.paths = 1
        first()
        env_a, tiles_a, paths_a = dict(self.frame.env), (self.vec_tile, self.vec_set, self.cube_tile, self.cube_set), self.paths
        self.frame.env = dict(env_before)
        self.vec_tile, self.vec_set, self.cube_tile, self.cube_set = tiles_before
        self.paths = 1
        second()
        env_b, paths_b = self.frame.env, self.paths
        merged = {}
        for name in set(env_a) | set(env_b):
            if name in env_a and name in env_b:
                merged[name] = merge_values(env_a[name], env_b[name])
            else:
                merged[name] = env_a.get(name, env_b.get(name))
        self.frame.env = merged
        if tiles_a[0] != self.vec_tile:
            self.vec_tile, self.vec_set = UNKNOWN, None
        if tiles_a[2] != self.cube_tile:
            self.cube_tile, self.cube_set = UNKNOWN, None
        if counts_paths:
            self.paths = paths_before * (paths_a + paths_b)
        else:
            self.paths = paths_before * max(paths_a, paths_b)

    def exec_For(self, stmt):
        iterable = self.eval(stmt.iter)
        if isinstance(iterable, LoopIter):
            self.pypto_loop(stmt, iterable)
            return
        items = None
        if isinstance(iterable, RangeVal):
            items = iterable.items()
            items = [Const(v) for v in items] if items is not None else None
        elif isinstance(iterable, TupleVal):
            items = list(iterable.items)
        if items is not None and len(items) <= MAX_STATIC_UNROLL:
            for item in items:
                self.assign(stmt.target, item, None)
                self.exec_block(stmt.body)
        else:
            count = len(items) if items is not None else 1
            self.assign(stmt.target, UNKNOWN, None)
            saved = self.multiplier
            self.multiplier *= max(count, 1)
            self.exec_block(stmt.body)
            self.multiplier = saved
        self.exec_block(stmt.orelse)

    def exec_While(self, stmt):
        self.eval(stmt.test)
        self.exec_block(stmt.body)
        self.exec_block(stmt.orelse)

    def exec_With(self, stmt):
        saved = None
        for item in stmt.items:
            value = self.eval(item.context_expr)
            if isinstance(value, OptionsVal):
                saved = (self.vec_tile, self.vec_set, self.cube_tile, self.cube_set)
                self._enter_options(value)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, UNKNOWN, None)
        self.exec_block(stmt.body)
        if saved is not None:
            self.vec_tile, self.vec_set, self.cube_tile, self.cube_set = saved

    def exec_Try(self, stmt):
        self.exec_block(stmt.body)
        for handler in stmt.handlers:
            self.exec_block(handler.body)
        self.exec_block(stmt.orelse)
        self.exec_block(stmt.finalbody)

    # -- loops ------------------------------------------------------------------------
    def pypto_loop(self, stmt: ast.For, it: LoopIter):
        call = it.call
        args = [self.eval(a) for a in call.args]
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        kwv = {name: self.eval(node) for name, node in kw.items()}
        for value in args + list(kwv.values()):
            self.sym_used(value, "extent")
        start, stop, step = Const(0), UNKNOWN, Const(1)
        if len(args) == 1:
            stop = args[0]
        elif len(args) >= 2:
            start, stop = args[0], args[1]
            if len(args) >= 3:
                step = args[2]
        unroll: tuple = ()
        unroll_known = True
        if "unroll_list" in kwv:
            ul = kwv["unroll_list"]
            if isinstance(ul, TupleVal) and all(int_value(v) is not None for v in ul.items):
                unroll = tuple(int_value(v) for v in ul.items)
            else:
                unroll_known = False
        factors = unroll
        if it.kind == "loop_unroll":
            factors = tuple(sorted(set(unroll) | {1}, reverse=True))
        idx = kwv.get("idx_name")
        idx_name = idx.value if isinstance(idx, Const) and isinstance(idx.value, str) else None
        a, b, s = int_value(start), int_value(stop), int_value(step)
        trip = len(range(a, b, s)) if None not in (a, b, s) and s != 0 else None
        submit = kwv.get("submit_before_loop")
        submit_flag = isinstance(submit, Const) and bool(submit.value)
        fact = LoopFact(
            stmt, it.kind, parent=self.loop, function=self.frame.func, unroll=factors,
            unroll_known=unroll_known, idx_name=idx_name, targets=tuple(_target_names(stmt.target)),
            trip=trip, submit_before_loop=submit_flag,
        )
        fact.is_loop1 = (
            it.kind == "loop" and (a, b, s) == (0, 1, 1) and not unroll and unroll_known and not submit_flag
        )
        self.kernel.loops.append(fact)
        self.loop.children.append(fact)
        # bind the loop variables
        index = Sym(idx_name or _first_name(stmt.target) or "idx", frozenset({"loop_index"}),
                    frozenset(), frozenset({id(fact)}))
        if it.kind == "loop_unroll" and isinstance(stmt.target, (ast.Tuple, ast.List)) and len(stmt.target.elts) == 2:
            self.assign(stmt.target.elts[0], index, None)
            self.assign(stmt.target.elts[1], UNKNOWN, None)  # the factor: a build-time int per trace
        else:
            self.assign(stmt.target, index, None)
        saved = (self.loop, self.vec_tile, self.vec_set, self.cube_tile, self.cube_set,
                 self.multiplier, self.paths, len(self.live_reads))
        self.loop = fact
        self.paths = 1
        if it.kind == "loop" and unroll:
            self.multiplier = max(unroll)  # one compute block per traced copy
        else:
            self.multiplier = 1
        self.exec_block(stmt.body)
        fact.body_paths = self.paths
        vec_after, cube_after = self.vec_tile, self.cube_tile
        (self.loop, self.vec_tile, self.vec_set, self.cube_tile, self.cube_set,
         self.multiplier, self.paths, n_live) = saved
        del self.live_reads[n_live:]
        if vec_after != self.vec_tile:
            self.vec_tile, self.vec_set = UNKNOWN, None
        if cube_after != self.cube_tile:
            self.cube_tile, self.cube_set = UNKNOWN, None

    # -- calls ----------------------------------------------------------------------------
    def call(self, node, func, args, kwargs):
        if isinstance(func, ApiRef):
            q = func.qualname
            if q.startswith("pypto."):
                return self.pypto_call(node, q[len("pypto."):], args, kwargs)
            if q.startswith("builtins."):
                return self.builtin_call(node, q[len("builtins."):], args, kwargs)
            self._escape(args, kwargs, node)
            return UNKNOWN
        if isinstance(func, Method):
            return self.method_call(node, func, args, kwargs)
        if isinstance(func, FuncRef):
            return self.inline(node, func.node, args, kwargs)
        self._escape(args, kwargs, node)
        return UNKNOWN

    def _escape(self, args, kwargs, node):
        """A tensor handed to code we cannot see may be written there: count it as written."""
        for value in list(args) + list(kwargs.values()):
            if isinstance(value, TensorVal):
                self.write(value, node)

    def builtin_call(self, node, name, args, kwargs):
        if name == "print":
            if self.in_pypto_loop():
                self.kernel.prints.append(PrintFact(node, self.loop))
            return Const(None)
        if name == "range":
            if len(args) == 1:
                return RangeVal(Const(0), args[0], Const(1))
            if len(args) >= 2:
                return RangeVal(args[0], args[1], args[2] if len(args) > 2 else Const(1))
            return UNKNOWN
        if name == "len" and args:
            if isinstance(args[0], TupleVal):
                return Const(len(args[0].items))
            if isinstance(args[0], TensorVal) and args[0].shape:
                return _dim_value(args[0].shape[0])
            return UNKNOWN
        if name in ("min", "max") and args:
            items = args[0].items if len(args) == 1 and isinstance(args[0], TupleVal) else args
            if all(isinstance(v, Const) for v in items):
                try:
                    return Const((min if name == "min" else max)(v.value for v in items))
                except Exception:
                    return UNKNOWN
            syms = [v for v in items if isinstance(v, Sym)]
            return Sym(self.source.segment(node), *_merge_sym_parts(syms)) if syms else UNKNOWN
        if name in ("int", "float", "bool", "abs") and len(args) == 1 and isinstance(args[0], Const):
            try:
                return Const(getattr(builtins, name)(args[0].value))
            except Exception:
                return UNKNOWN
        if name in ("tuple", "list") and args and isinstance(args[0], TupleVal):
            return args[0]
        return UNKNOWN

    def pypto_call(self, node, name, args, kwargs):
        if name in ("loop", "loop_unroll"):
            return LoopIter(node, name)
        if name == "cond":
            return BranchVal(args[0] if args else UNKNOWN)
        if name in ("is_loop_begin", "is_loop_end"):
            return Sym(self.source.segment(node), frozenset({"loop_flag"}))
        if name == "set_vec_tile_shapes":
            return self.set_vec_tiles(node, args)
        if name == "set_cube_tile_shapes":
            return self.set_cube_tiles(node, args, kwargs)
        if name == "options" or name == "experimental.options":
            return OptionsVal(kwargs.get("vec_tile_shapes"), kwargs.get("cube_tile_shapes"), node)
        if name in ("Tensor", "tensor"):
            ann = _annotation(args, kwargs)
            local = TensorVal(ann.shape, ann.dtype or api.FP32, "local", _local_name(args, kwargs))
            self.kernel.local_decls[local.ident] = node
            return local
        if name == "from_torch":
            dt = kwargs.get("dtype")
            return TensorVal(None, dt if isinstance(dt, DType) else None, "host")
        if name in ("min", "max"):
            return self.builtin_call(node, name, args, kwargs)
        if name == "frontend.dynamic":
            return Sym(str(args[0].value) if args and isinstance(args[0], Const) else "dyn",
                       frozenset({"dynamic_dim"}))
        if name == "Element":
            return args[1] if len(args) > 1 else UNKNOWN
        if name == "view":
            return self.view(node, args, kwargs)
        if name == "assemble":
            return self.assemble(node, args, kwargs)
        if name in api.ALL_OPS:
            return self.op(node, name, args, kwargs, list(node.args))
        if name.startswith("frontend.") or name.startswith("set_") or name.startswith("get_"):
            return UNKNOWN
        self._escape(args, kwargs, node)
        return UNKNOWN

    def method_call(self, node, method: Method, args, kwargs):
        obj, name = method.obj, method.name
        if isinstance(obj, Sym):
            return Sym(self.source.segment(node), *_merge_sym_parts([obj] + [a for a in args if isinstance(a, Sym)]))
        if name == "move":
            if args and isinstance(args[0], TensorVal):
                self.read(args[0], node.args[0])
            self.write(obj, node.func)
            return Const(None)
        if name == "assemble":
            return self.assemble(node, list(args[:1]) + list(args[1:2]) + [obj], kwargs, receiver=True)
        if name in api.WRITE_METHODS:
            self.write(obj, node.func)
            return obj
        if name == "view":
            return self.view(node, [obj] + list(args), kwargs)
        if name in api.ALL_OPS:
            return self.op(node, name, [obj] + list(args), kwargs, [node.func.value] + list(node.args))
        return UNKNOWN

    def inline(self, node, func: ast.FunctionDef, args, kwargs):
        if func in self.call_stack or len(self.call_stack) >= MAX_INLINE_DEPTH or self.kernel is None:
            self._escape(args, kwargs, node)
            return UNKNOWN
        from .model import decorator_kind  # local: model imports this module

        kind = decorator_kind(self.scope, func)
        if kind in ("jit", "pypto.jit"):
            return UNKNOWN  # calling a jit kernel from a kernel is unsupported; not our concern here
        frame = Frame(func, "function" if kind == "function" else "helper")
        params = func.args.posonlyargs + func.args.args
        defaults = func.args.defaults
        first_default = len(params) - len(defaults)
        for i, param in enumerate(params):
            if i < len(args):
                value = args[i]
            elif param.arg in kwargs:
                value = kwargs[param.arg]
            elif i >= first_default:
                value = self.scope.evaluate_static(defaults[i - first_default])
            else:
                value = UNKNOWN
            frame.env[param.arg] = value
        for param, default in zip(func.args.kwonlyargs, func.args.kw_defaults):
            frame.env[param.arg] = kwargs.get(param.arg, self.scope.evaluate_static(default) if default else UNKNOWN)
        if func.args.vararg:
            frame.env[func.args.vararg.arg] = TupleVal(tuple(args[len(params):]))
        if func.args.kwarg:
            frame.env[func.args.kwarg.arg] = UNKNOWN
        self.call_stack.append(func)
        self.frames.append(frame)
        try:
            self.exec_block(func.body)
        finally:
            self.frames.pop()
            self.call_stack.pop()
        if not frame.returns:
            return Const(None)
        result = frame.returns[0]
        for other in frame.returns[1:]:
            result = merge_values(result, other)
        return result

    # -- tile shapes ------------------------------------------------------------------------
    def set_vec_tiles(self, node, args):
        if len(args) == 1 and isinstance(args[0], TupleVal):
            args = list(args[0].items)
        dims: Any = tuple(int_value(a) for a in args)
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        if (starred and any(a is UNKNOWN for a in args)) or (
            len(args) == 1 and not isinstance(args[0], (Const, Sym))
        ):
            dims = UNKNOWN  # ``*shapes`` / one opaque value (a list?): even the rank is unknown
        fact = TileSetFact(node, "vec", dims, self.loop)
        self.kernel.tile_sets.append(fact)
        self.vec_tile, self.vec_set = dims, fact
        return Const(None)

    def set_cube_tiles(self, node, args, kwargs):
        parts = list(args[:3])
        for i, key in enumerate(("m", "k", "n")):
            if len(parts) <= i and key in kwargs:
                parts.append(kwargs[key])
        dims = []
        for part in parts:
            if isinstance(part, TupleVal):
                dims.append(tuple(int_value(v) for v in part.items))
            else:
                dims.append(None)
        value = tuple(dims) if len(dims) == 3 else UNKNOWN
        fact = TileSetFact(node, "cube", value, self.loop)
        self.kernel.tile_sets.append(fact)
        self.cube_tile, self.cube_set = value, fact
        return Const(None)

    def _enter_options(self, opts: OptionsVal):
        if isinstance(opts.vec, TupleVal):
            self.vec_tile, self.vec_set = tuple(int_value(v) for v in opts.vec.items), None
        elif opts.vec is not None:
            self.vec_tile, self.vec_set = UNKNOWN, None
        if opts.cube is not None:
            self.cube_tile, self.cube_set = UNKNOWN, None

    # -- ops --------------------------------------------------------------------------------
    def op(self, node, name, args, kwargs, arg_nodes):
        inputs = []
        for i, value in enumerate(args):
            where = arg_nodes[i] if i < len(arg_nodes) else node
            if isinstance(value, TensorVal):
                inputs.append(value)
                self.read(value, where)
            elif isinstance(value, TupleVal):
                for item in value.items:
                    if isinstance(item, TensorVal):
                        inputs.append(item)
                        self.read(item, where)
            elif isinstance(value, Sym):
                self.sym_used(value, "operand")
        for key, value in kwargs.items():
            if isinstance(value, TensorVal):
                inputs.append(value)
                self.read(value, node)
        out = shapes.infer(name, args, kwargs)
        if name == "reshape" and isinstance(kwargs.get("inplace"), Const) and kwargs["inplace"].value:
            self.loop.has_inplace_reshape = True
        self.record_op(node, name, out, inputs)
        return out

    def record_op(self, node, name, out, inputs):
        vector = name in api.VECTOR_OPS
        matmul = name in api.MATMUL
        if not (vector or matmul):
            return
        result = out.items[0] if isinstance(out, TupleVal) and out.items else out
        fact = OpFact(
            node, name, result if isinstance(result, TensorVal) else None, tuple(inputs), self.loop,
            self.vec_tile, self.vec_set.node if self.vec_set else None,
            self.cube_tile, self.cube_set.node if self.cube_set else None,
            vector, self.multiplier,
        )
        self.kernel.ops.append(fact)
        self.loop.ops.append(fact)
        if vector and self.vec_set is not None:
            self.vec_set.uses.append(fact)
        if matmul and self.cube_set is not None:
            self.cube_set.uses.append(fact)

    def tensor_binop(self, node, op_name, left, right, left_node, right_node):
        args = [left] if right is None else [left, right]
        nodes = [left_node] if right is None else [left_node, right_node]
        if op_name == "matmul":
            kwargs = {}
            if isinstance(right, TensorVal) and right.dtype is not None:
                kwargs["out_dtype"] = api.DTYPES["DT_INT32"] if right.dtype.name == "DT_INT8" else right.dtype
            return self.op(node, "matmul", args, kwargs, nodes)
        return self.op(node, op_name, args, {}, nodes)

    def view(self, node, args, kwargs):
        base = args[0] if args else UNKNOWN
        shape = args[1] if len(args) > 1 else kwargs.get("shape")
        offsets = args[2] if len(args) > 2 else kwargs.get("offsets")
        has_valid = "valid_shape" in kwargs
        if has_valid:
            self.sym_used(kwargs["valid_shape"], "valid_shape")
        if offsets is not None:
            self.sym_used(offsets, "offset")
        dims = as_dims(shape) if isinstance(shape, TupleVal) else None
        self._view_fact(node, shape, offsets, has_valid, slicing=False)
        if not isinstance(base, TensorVal):
            return UNKNOWN
        dtype = kwargs.get("dtype")
        if dims is None and isinstance(kwargs.get("dtype"), DType):
            dims = base.shape
        return TensorVal(dims, dtype if isinstance(dtype, DType) else base.dtype, "view", base=base)

    def _view_fact(self, node, shape, offsets, has_valid, slicing):
        if self.kernel is None:
            return
        shape_reads = _reads_in(shape)
        index_ids = _indices_in(offsets)
        live = None
        for sym, read_node in reversed(self.live_reads):
            if sym.indices & index_ids:
                live = (sym, read_node)
                break
        fact = ViewFact(node, has_valid, bool(shape_reads), live is not None,
                        live[1] if live else None, slicing, self.loop)
        fact.read_ids = frozenset(live[0].reads) if live else frozenset()
        fact.shape_read_ids = shape_reads
        self.kernel.views.append(fact)

    def assemble(self, node, args, kwargs, receiver=False):
        """pypto.assemble(part, offsets, out) / pypto.assemble([(part, off), ...], out)."""
        target = None
        parts = []
        if args and isinstance(args[0], TupleVal) and len(args) >= 2 and not receiver:
            target = args[1]
            for item in args[0].items:
                if isinstance(item, TupleVal) and item.items:
                    parts.append(item.items[0])
        else:
            parts = args[:1]
            target = args[2] if len(args) > 2 else kwargs.get("out")
            if len(args) > 1:
                self.sym_used(args[1], "offset")
        arg_nodes = list(node.args)
        for i, part in enumerate(parts):
            if isinstance(part, TensorVal):
                self.read(part, arg_nodes[0] if arg_nodes else node)
        if isinstance(target, TensorVal):
            self.write(target, node)
            if not receiver and len(node.args) >= 2:
                last = node.args[-1]
                if isinstance(last, ast.Name):
                    self.eval_no_read(last)
        return Const(None)

    def subscript(self, node, base, key):
        if isinstance(base, TensorVal):
            items = key.items if isinstance(key, TupleVal) else (key,)
            if all(isinstance(i, (Const, Sym)) and not isinstance(getattr(i, "value", 0), type(Ellipsis)) for i in items) \
                    and not any(isinstance(i, SliceVal) for i in items):
                # element read: a symbolic scalar whose value comes from tensor data
                self.read(base, node)
                indices = frozenset().union(*[i.indices for i in items if isinstance(i, Sym)])
                for i in items:
                    self.sym_used(i, "offset")
                return Sym(self.source.segment(node), frozenset({"tensor_read"}), frozenset({id(node)}), indices)
            shape, offsets = shapes.slice_shape(base.shape, items)
            # extent of each slice: tensor reads in the stop that the start does not cancel
            extents = TupleVal(tuple(Sym("", frozenset(), _reads_in(i.upper) - _reads_in(i.lower))
                                     for i in items if isinstance(i, SliceVal)))
            self.sym_used(offsets, "offset")
            self._view_fact(node, extents, offsets, False, slicing=True)
            if shape is None and base.shape is not None and all(isinstance(i, SliceVal) and i.lower is None and i.upper is None for i in items):
                shape = base.shape
            return TensorVal(shape, base.dtype, "view", base=base)
        if isinstance(base, TupleVal):
            i = int_value(key)
            if i is not None and -len(base.items) <= i < len(base.items):
                return base.items[i]
            if isinstance(key, SliceVal):
                lo, hi = int_value(key.lower) if key.lower else None, int_value(key.upper) if key.upper else None
                if (key.lower is None or lo is not None) and (key.upper is None or hi is not None):
                    return TupleVal(base.items[lo:hi])
            return UNKNOWN
        if isinstance(base, ApiRef) and base.qualname in api.TENSOR_CLASSES:
            return self.scope.subscript(node, base, key)
        return UNKNOWN


def _merge_sym_parts(syms):
    kinds, reads, indices = frozenset(), frozenset(), frozenset()
    for s in syms:
        kinds |= s.kinds
        reads |= s.reads
        indices |= s.indices
    return kinds, reads, indices


def _reads_in(value) -> frozenset:
    if isinstance(value, Sym):
        return value.reads
    if isinstance(value, TupleVal):
        out = frozenset()
        for item in value.items:
            out |= _reads_in(item)
        return out
    return frozenset()


def _indices_in(value) -> frozenset:
    if isinstance(value, Sym):
        return value.indices
    if isinstance(value, SliceVal):
        return _indices_in(value.lower) | _indices_in(value.upper)
    if isinstance(value, TupleVal):
        out = frozenset()
        for item in value.items:
            out |= _indices_in(item)
        return out
    return frozenset()


def _target_names(target) -> list:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _first_name(target) -> Optional[str]:
    names = _target_names(target)
    return names[0] if names else None


def _local_name(args, kwargs) -> str:
    value = args[2] if len(args) > 2 else kwargs.get("name")
    return value.value if isinstance(value, Const) and isinstance(value.value, str) else ""


def _walk_function_body(func: ast.FunctionDef):
    """Nodes of ``func`` without descending into nested functions/classes/lambdas."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)

