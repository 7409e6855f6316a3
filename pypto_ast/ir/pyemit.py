"""Explicit PyPTO 0.2.0 source from a Program (``pypto-transpile --emit python``).

The output is what the kernel *means* to PyPTO, written so nothing is implicit: every op
is one ``pypto.<op>(...)`` call on named values, every loop an explicit ``pypto.loop``
whose body already holds its unrolled copies, every branch a plain ``if`` (the 0.2.0
frontend makes a symbolic ``if`` a cond itself and rejects ``pypto.cond`` there), and
tile shapes are set right before the op that needs a different one. The text is accepted
by the official 0.2.0 frontend and lowers again through our own pipeline to the same
program, so it doubles as a readable dump and as a reproducer.

Two things are deliberately not spelled out literally:

- the implicit ``loop(1)``: ``pypto.frontend.jit`` already wraps the body in
  ``pypto.loop(1, name="default_loop_1")`` whose index is ``loop_idx_0``; writing that
  loop out nests a second loop with the same ``idx_name`` (0.2.0: F21007, then SIGSEGV),
  so it appears as a comment and its body at function level;
- writes: an ``assemble`` that covers its whole target at offset 0 is written ``t[:] = v``
  (pypto's ``move``); other writes are ``pypto.assemble(v, offsets, t)``.
"""

from __future__ import annotations

import json
import keyword
import math
import re

from . import nodes as ir

INDENT = "    "
_WORD = re.compile(r"\w+\Z", re.ASCII)
_IDENT = re.compile(r"[A-Za-z_]\w*\Z", re.ASCII)

# Python precedence of the scalar operators (loosest first); atoms bind tightest.
_PREC = {"==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6}
_NEG, _ATOM = 7, 9

# Attributes passed positionally, in this order, right after the tensor operands.
_POSITIONAL = {
    "view": ("shape", "offsets"), "reshape": ("shape",), "expand_clone": ("shape",), "unsqueeze": ("dim",),
    "concat": ("dim",), "sum": ("dim",), "amax": ("dim",), "amin": ("dim",), "prod": ("dim",),
    "softmax": ("dim",), "cumsum": ("dim",), "matmul": ("out_dtype",), "cast": ("dtype", "mode"),
    "pad": ("pad",),
}
# Keyword attributes in the order of pypto's signatures (the rest follow, sorted).
_KEYWORD_ORDER = ("min", "max", "dim", "correction", "keepdim", "a_trans", "b_trans", "satmode", "valid_shape")
_ENUMS = {"dtype": "", "out_dtype": "", "mode": "pypto.CastMode.", "satmode": "pypto.SaturationMode."}


class EmitError(Exception):
    """The program holds something that has no PyPTO spelling."""


def emit_python(program: ir.Program) -> str:
    """The kernel as explicit PyPTO 0.2.0 source (deterministic; ends with a newline)."""
    return _Emitter(program).run()


# ---------------------------------------------------------------------------------------
# Scalars and operands.


def dtype_text(dtype: str) -> str:
    return "pypto.DT_" + dtype.upper()


def literal(v) -> str:
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, float):
        return f'float("{v}")' if math.isinf(v) or math.isnan(v) else float.__repr__(v)
    if isinstance(v, str):
        return json.dumps(v)  # double quotes, ASCII only, and valid Python
    if isinstance(v, (list, tuple)):
        items = ", ".join(literal(x) for x in v)
        if isinstance(v, list):
            return f"[{items}]"
        return f"({items},)" if len(v) == 1 else f"({items})"
    raise EmitError(f"no Python literal for {v!r}")


def _prec(e) -> int:
    if isinstance(e, ir.BinExpr) and e.op in _PREC:
        return _PREC[e.op]
    if isinstance(e, ir.UnExpr):
        return _PREC["=="] if e.op == "not" else _NEG
    if isinstance(e, ir.Const) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool) \
            and (e.value < 0 or str(e.value).startswith("-")):
        return _NEG
    return _ATOM


class _Names:
    """Python names (SSA values get a prefix no other name in the program uses) and the
    types an op's spelling depends on."""

    def __init__(self, program: ir.Program):
        self.shapes = {p.name: p.type.shape for p in program.params if p.kind == "tensor" and p.type}
        self.shapes.update({loc.name: loc.type.shape for loc in program.locals})
        self.types = {r: t for b in ir.blocks(program) for op in b.ops for r, t in zip(op.results, op.types)}
        self.tensors = {p.name: p.name for p in program.params if p.kind == "tensor"}
        self.scalars = {p.name: p.name for p in program.params if p.kind != "tensor"}
        taken = set(self.tensors) | set(self.scalars) | {"pypto"}
        for loc in program.locals:
            self.tensors[loc.name] = self._fresh(loc.name, taken)
        for node in ir.walk(program.body):
            if isinstance(node, ir.Loop) and node.kind != "implicit" and node.var not in self.scalars:
                self.scalars[node.var] = self._fresh(node.var, taken)
        ssa = {r for b in ir.blocks(program) for op in b.ops for r in op.results}
        self.prefix = next(p for p in ("v", "v_", "ssa_", "ssa__") if not {self._ssa(p, s) for s in ssa} & taken)

    @staticmethod
    def _fresh(name: str, taken: set) -> str:
        base = name
        if not _IDENT.match(name) or keyword.iskeyword(name):
            base = "_" + re.sub(r"\W", "_", name, flags=re.ASCII)
        out, n = base, 1
        while out in taken:
            out, n = f"{base}_{n}", n + 1
        taken.add(out)
        return out

    @staticmethod
    def _ssa(prefix: str, name: str) -> str:
        return prefix + (name if _WORD.match(name) else "x" + name.encode().hex())

    def value(self, name: str) -> str:
        return self._ssa(self.prefix, name)

    def tensor(self, name: str) -> str:
        if name not in self.tensors:
            raise EmitError(f"@{name} is neither a parameter nor a local tensor")
        return self.tensors[name]

    def scalar(self, name: str) -> str:
        return self.scalars.get(name, name)


def expr(e, names: _Names) -> str:
    """An ``Expr`` as a Python expression over pypto SymbolicScalars."""
    if isinstance(e, ir.Const):
        return literal(e.value)
    if isinstance(e, ir.Var):
        return names.scalar(e.name)
    if isinstance(e, ir.ShapeOf):
        return f"{names.tensor(e.tensor)}.shape[{e.axis}]"
    if isinstance(e, ir.Read):
        return f"{names.tensor(e.tensor)}[{', '.join(expr(i, names) for i in e.index)}]"
    if isinstance(e, ir.UnExpr):
        if e.op == "not":  # SymbolicScalar has no truth value: compare with 0 instead
            return f"{_wrap(e.a, names, _prec(e.a) <= _PREC['=='])} == 0"
        return "-" + _wrap(e.a, names, _prec(e.a) <= _NEG)
    if isinstance(e, ir.BinExpr):
        if e.op in ("min", "max"):
            return f"pypto.{e.op}({expr(e.a, names)}, {expr(e.b, names)})"
        if e.op in ("and", "or"):  # truth values as 0/1: and = min, or = max
            a, b = (ir.BinExpr("!=", x, ir.Const(0)) for x in (e.a, e.b))
            return f"pypto.{'min' if e.op == 'and' else 'max'}({expr(a, names)}, {expr(b, names)})"
        p = _PREC[e.op]
        chain = p == _PREC["=="]  # Python chains comparisons: parenthesise nested ones
        left = _wrap(e.a, names, _prec(e.a) < p or (chain and _prec(e.a) == p))
        return f"{left} {e.op} {_wrap(e.b, names, _prec(e.b) <= p)}"
    raise EmitError(f"not a scalar expression: {e!r}")


def _wrap(e, names, parens: bool) -> str:
    return f"({expr(e, names)})" if parens else expr(e, names)


def operand(v, names: _Names) -> str:
    if isinstance(v, ir.Value):
        return names.value(v.name)
    if isinstance(v, ir.TensorRef):
        return names.tensor(v.name)
    if isinstance(v, tuple):
        return "[" + ", ".join(operand(x, names) for x in v) + "]"
    if isinstance(v, (ir.Const, ir.Var, ir.ShapeOf, ir.Read, ir.BinExpr, ir.UnExpr)):
        return expr(v, names)
    return literal(v)


def attr(key: str, v, names: _Names) -> str:
    if key in _ENUMS and isinstance(v, str):
        return dtype_text(v) if key in ("dtype", "out_dtype") else _ENUMS[key] + v
    return operand(v, names)


# ---------------------------------------------------------------------------------------
# Ops.


def op_call(op: ir.Op, names: _Names) -> str:
    """The statement for one op (without the tile-shape calls it needs)."""
    args = [operand(v, names) for v in op.operands]
    attrs = dict(op.attrs)
    if op.opcode == "assemble":
        if _covers(op, names):
            return f"{args[1]}[:] = {args[0]}"
        return f"pypto.assemble({args[0]}, {operand(attrs['offsets'], names)}, {args[1]})"
    if op.opcode == "store_scalar":
        return f"{args[1]}[{', '.join(operand(i, names) for i in attrs['index'])}] = {args[0]}"
    extend = []
    if op.opcode == "matmul" and len(args) == 3:
        extend = [f'extend_params={{"bias_tensor": {args.pop()}}}']
    if op.opcode == "transpose":
        args += [str(d) for d in attrs.pop("dims")]
    elif op.opcode == "full":  # full(size, fill_value, dtype, *, valid_shape)
        args = [operand(attrs.pop("shape"), names)] + args + [dtype_text(attrs.pop("dtype"))]
    elif op.opcode in ("quantize", "dequantize"):  # (input, scale, otype, axis, zero_points=None)
        args = args[:2] + [attr("dtype", attrs.pop("dtype"), names), attr("axis", attrs.pop("axis"), names)] + args[2:]
    elif op.opcode in ("zeros", "ones"):
        args = [operand(attrs.pop("shape"), names)]
    elif op.opcode == "arange":  # the dtype follows from the bounds' Python types
        args = [literal(attrs.pop(k)) for k in ("start", "stop", "step")]
        attrs.pop("dtype", None)
    for key in _POSITIONAL.get(op.opcode, ()):
        if key in attrs:
            args.append(attr(key, attrs.pop(key), names))
    order = sorted(attrs, key=lambda k: (_KEYWORD_ORDER.index(k) if k in _KEYWORD_ORDER else len(_KEYWORD_ORDER), k))
    kwargs = [f"{k}={attr(k, attrs[k], names)}" for k in order] + extend
    call = f"pypto.{op.opcode}({', '.join(args + kwargs)})"
    if not op.results:
        return call
    return ", ".join(names.value(r) for r in op.results) + " = " + call


def _covers(op: ir.Op, names: _Names) -> bool:
    """True when an assemble writes its whole target (pypto's ``t[:] = v``, a move)."""
    value, target = op.operands
    shape = names.shapes.get(target.name)
    vtype = names.types.get(value.name) if isinstance(value, ir.Value) else None
    offsets = op.attr("offsets", ())
    return (shape is not None and vtype is not None and vtype.shape == shape
            and all(type(o) is int and o == 0 for o in offsets))


# ---------------------------------------------------------------------------------------
# Tile shapes: set right before an op whose tile differs from the one in effect.


class _Tiles:
    """The vec/cube tile in effect while emitting, ``None`` when not known at this point.

    PyPTO traces a loop body once per control path and its tile setters are plain global
    state, so a body that sets a tile may start from whatever the previous path left:
    such a body starts (and the code after it continues) from "unknown". Branch arms
    start from the state before the branch.
    """

    def __init__(self, program: ir.Program):
        self.state = [None, None]  # vec, cube
        # A batched matmul also needs a vec tile, which the IR does not record on it: it
        # inherits the last one set, or the kernel's first one when none was set yet.
        self.first_vec = next((op.tile for op in _ops(program.body) if op.tile is not None), None)
        self.any_vec = False

    def lines(self, op: ir.Op) -> list:
        out = []
        vec, cube = op.tile, op.cube_tile
        if vec is None and not self.any_vec and op.opcode == "matmul" and op.types and len(op.types[0].shape) > 2:
            vec = self.first_vec
        if cube is not None and self.state[1] != cube:
            out.append(_setter("cube", cube))
        if vec is not None and self.state[0] != vec:
            out.append(_setter("vec", vec))
        self._now(vec, cube)
        return out

    def _now(self, vec, cube) -> None:
        self.state = [vec if vec is not None else self.state[0], cube if cube is not None else self.state[1]]
        self.any_vec = self.any_vec or vec is not None

    def hoist(self, region) -> list:
        """Setter lines that make ``region`` need no setter inside, when every op in it
        needs the same tile (per kind); the state is then that tile."""
        wanted = [{_need(op)[i] for op in _ops(region)} - {None} for i in (0, 1)]
        vec, cube = (w.pop() if len(w) == 1 and self.state[i] not in w else None for i, w in enumerate(wanted))
        self._now(vec, cube)
        return ([_setter("cube", cube)] if cube else []) + ([_setter("vec", vec)] if vec else [])

    def stable_over(self, region) -> list:
        """Per kind, whether every op in ``region`` needs exactly the tile now in effect."""
        return [all(_need(op)[i] in (None, self.state[i]) for op in _ops(region)) for i in (0, 1)]


def _need(op: ir.Op) -> tuple:
    return op.tile, op.cube_tile


def _ops(region) -> list:
    return [op for n in ir.walk(region) if isinstance(n, ir.Block) for op in n.ops]


def _setter(kind: str, tile) -> str:
    if kind == "cube":
        return "pypto.set_cube_tile_shapes(" + ", ".join(str(list(p)) for p in tile) + ")"
    return "pypto.set_vec_tile_shapes(" + ", ".join(str(d) for d in tile) + ")"


# ---------------------------------------------------------------------------------------
# Statements.


class _Emitter:
    def __init__(self, program: ir.Program):
        self.program = program
        self.names = _Names(program)
        self.tiles = _Tiles(program)
        self.lines: list = []

    def out(self, depth: int, text: str) -> None:
        self.lines.append(INDENT * depth + text)

    def run(self) -> str:
        p = self.program
        if not _IDENT.match(p.name) or keyword.iskeyword(p.name):
            raise EmitError(f"the kernel name {p.name!r} is not a Python identifier")
        source = dict(p.attrs).get("source", "<unknown>")
        self.out(0, f"# Generated by pypto-ast (pypto_ast.ir.pyemit) from {source}.")
        self.out(0, "# Explicit PyPTO 0.2.0: loops expanded, tile shapes set where they change.")
        returns = any(isinstance(node, ir.Return) for node in ir.walk(p.body))
        self.out(0, "import pypto")
        if returns:  # pypto's parser refuses `return`; pypto-ast's own decorator keeps the convention
            self.out(0, "import pypto_ast")
        self.lines += ["", ""]
        self.out(0, "@pypto_ast.jit" if returns else "@pypto.frontend.jit")
        self.out(0, f"def {p.name}(")
        for param in p.params:
            self.out(1, self.param(param) + ",")
        self.out(0, "):")
        for loc in p.locals:
            shape = "[" + ", ".join(expr(d, self.names) for d in loc.type.shape) + "]"
            self.out(1, f"{self.names.tensor(loc.name)} = pypto.tensor({shape}, {dtype_text(loc.type.dtype)}, "
                        f"{literal(loc.name)})")
        start = len(self.lines)
        self.region(p.body, 1)
        if len(self.lines) == start:
            self.out(1, "pass")
        return "\n".join(self.lines) + "\n"

    def param(self, param: ir.Param) -> str:
        if param.kind != "tensor":
            return f"{param.name}={literal(param.value)}"
        dims = ", ".join("pypto.DYNAMIC" if not isinstance(d, ir.Const) else literal(d.value) for d in param.type.shape)
        return f"{param.name}: pypto.Tensor([{dims}], {dtype_text(param.type.dtype)})"

    def region(self, nodes, depth: int) -> None:
        for node in nodes:
            getattr(self, "node_" + type(node).__name__)(node, depth)

    def body(self, nodes, depth: int) -> None:
        start = len(self.lines)
        self.region(nodes, depth)
        if len(self.lines) == start:
            self.out(depth, "pass")

    def node_Block(self, block: ir.Block, depth: int) -> None:
        for op in block.ops:
            for line in self.tiles.lines(op):
                self.out(depth, line)
            self.out(depth, op_call(op, self.names))

    def node_Loop(self, loop: ir.Loop, depth: int) -> None:
        var = self.names.scalar(loop.var)
        if loop.kind == "implicit":
            self.out(depth, f"# implicit (added by pypto.frontend.jit): for {var} in pypto.loop("
                            f"{expr(loop.stop, self.names)}, name={literal(loop.name)}, idx_name={literal(loop.var)}):")
            self.region(loop.body, depth)
            return
        name = f"{loop.name}_LoopUnroll{loop.unroll}" if loop.kind == "loop_unroll" else loop.name
        bounds = ", ".join(expr(e, self.names) for e in (loop.start, loop.stop, loop.step))
        for line in self.tiles.hoist(loop.body):
            self.out(depth, line)
        extra = ", submit_before_loop=True" if loop.submit_before_loop else ""
        self.out(depth, f"for {var} in pypto.loop({bounds}, name={literal(name)}, "
                        f"idx_name={literal(loop.var)}{extra}):")
        before = list(self.tiles.state)
        stable = self.tiles.stable_over(loop.body)
        self.tiles.state = [s if ok else None for s, ok in zip(before, stable)]
        self.body(loop.body, depth + 1)
        self.tiles.state = [s if ok else None for s, ok in zip(before, stable)]

    def node_Branch(self, branch: ir.Branch, depth: int, keyword_: str = "if") -> None:
        if keyword_ == "if":
            for line in self.tiles.hoist((branch,)):
                self.out(depth, line)
        before = list(self.tiles.state)
        self.out(depth, f"{keyword_} {expr(branch.cond, self.names)}:")
        self.body(branch.then, depth + 1)
        after_then, self.tiles.state = self.tiles.state, list(before)
        if len(branch.orelse) == 1 and isinstance(branch.orelse[0], ir.Branch):
            self.node_Branch(branch.orelse[0], depth, "elif")
        elif branch.orelse:
            self.out(depth, "else:")
            self.body(branch.orelse, depth + 1)
        self.tiles.state = [a if a == b else None for a, b in zip(after_then, self.tiles.state)]

    def node_Return(self, ret: ir.Return, depth: int) -> None:
        self.out(depth, "return " + ", ".join(self.names.value(v.name) for v in ret.values))
