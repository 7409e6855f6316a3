"""The text form of the IR: deterministic, lossless, and read back by ``parser.py``.

The text is an API (tests pin it, ``--emit ir`` prints it, IR files can be fed back in),
so every field of every node is written and nothing process-dependent is. Example::

    program add_one(@x: tensor<64x64xfp32>, @out: tensor<64x64xfp32> out, n: scalar = 4) paths=1 {
      attr source = "add_one.py"
      local @t: tensor<32x32xfp32>
      loop loop_idx_0 = 0 to 1 step 1 name=default_loop_1 kind=implicit unroll=1 submit_before_loop=false {
        block b0 {
          %0 = view(@x) {offsets = [$0, n], shape = [64, 64]} : tensor<64x64xfp32>  loc(7:14-7:22)
          %1 = add(%0, $1.0) : tensor<64x64xfp32> tile [32, 64]                     loc(7:14-7:22)
          assemble(%1, @out) {offsets = [0, 0]}                                     loc(7:4-7:22)
        }
        if loop_idx_0 == 0 {                                                        loc(8:4-8:20)
          return %1
        } else {
          block b1 {
          }
        }
      }
    }

Grammar (one statement per line; ``#`` starts a comment; ``?`` optional, ``*`` repeated)::

    program  := 'program' NAME '(' param,* ')' 'paths=' INT '{' attr* local* stmt* '}'   # INT: signed
    param    := '@' NAME ':' ('tensor' | type) 'out'? ('=' value)?        # kind == "tensor"
              | VAR ':' NAME type? 'out'? ('=' value)?                    # any other kind
    attr     := 'attr' NAME '=' value                 # Program.attrs, sorted by key
    local    := 'local' '@' NAME ':' type
    stmt     := loop | if | block | return
    loop     := 'loop' VAR '=' expr 'to' expr 'step' expr 'name=' NAME 'kind=' NAME
                'unroll=' INT 'submit_before_loop=' BOOL '{' loc? stmt* '}'
    if       := 'if' expr '{' loc? stmt* '}' ('else' '{' stmt* '}')?   # else only if non-empty
    block    := 'block' NAME '{' op* '}'
    return   := 'return' value,*
    op       := (SSA,* '=')? NAME '(' value,* ')' ('{' (NAME '=' value),* '}')?
                (':' type,*)? ('tile' value)? ('cube_tile' value)? loc?
    loc      := 'loc(' INT ':' INT '-' INT ':' INT ')'   # Span line:col-end_line:end_col
    type     := 'tensor<' (DIM 'x')* DTYPE '>'       # every dim a non-negative int Const
              | 'tensor<' '[' expr,* ']' ',' NAME '>'   # anything else
    value    := '%' NAME | '@' NAME | STRING | 'none' | '[' value,* ']' | literal | expr
    literal  := '-'? (INT | FLOAT | 'inf' | 'nan') | 'true' | 'false'   # '-' glued to the digits
    expr     := Python-like precedence: or < and < not < (== != < <= > >=, not chained)
                < (+ -) < (* / // %) < unary - < atom
    atom     := literal | '$' literal | VAR | 'min(' expr ',' expr ')' | 'max(' ... ')'
              | '@' NAME '[' expr,* ']' | '@' NAME '.shape[' INT ']' | '(' expr ')'

Conventions that keep the text unambiguous:

- In ``value`` positions (operands, attr values, ``tile``, ``cube_tile``, param values,
  ``return``) a plain literal is a Python scalar and a *top-level* ``Const`` is written
  ``$1``; inside expressions (and in types, bounds, conditions) literals are ``Const``.
  Tuples are ``[a, b]``; a literal followed by an operator starts an expression.
- Floats use ``repr`` (``0.1``, ``1e-30``, ``-0.0``, ``inf``, ``nan``) so they round-trip
  and never look like ints; ``Const(-1)`` is ``-1`` while ``UnExpr("-", Const(1))`` is
  ``-(1)``; binary operators are always surrounded by spaces.
- ``%`` names and ``@`` names are bare when they match ``[A-Za-z0-9_]+``; other names
  (ops, blocks, loops, kinds, keys, dtypes) when they are ASCII identifiers; a scalar
  name (VAR) when it is an identifier and not one of ``RESERVED``. Otherwise a name is a
  JSON string: ``%"a b"``, ``"pypto.add"(...)``, and ``$"min"`` for a Var.
- ``attrs`` are printed sorted by key; an empty ``{}``, ``:`` list or ``else`` is omitted.
- ``loc(...)`` ends the first line of its node, starting at 0-based column ``LOC_COLUMN``
  when the line is shorter (else after one space); ``spans=False`` leaves it out (the
  text then parses to nodes with ``span=None``).
"""

from __future__ import annotations

import json
import numbers
import re

from . import nodes as ir

RESERVED = frozenset({"true", "false", "none", "inf", "nan", "and", "or", "not", "min", "max", "to", "step"})
LOC_COLUMN = 80
INDENT = "  "

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SIGIL_NAME = re.compile(r"[A-Za-z0-9_]+\Z")

# Infix operator precedence, loosest first (shared with the parser). Prefix ``not`` sits
# between ``and`` and the comparisons, prefix ``-`` above ``*``; atoms bind tightest.
BINARY_PREC = {"or": 1, "and": 2, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
               "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6}
PREC_NOT, PREC_CMP, PREC_NEG, PREC_ATOM = 3, 4, 7, 8


# ---------------------------------------------------------------------------------------
# Names and scalars.


def quote(text: str) -> str:
    """A JSON string: ASCII only, so the file is the same bytes everywhere."""
    return json.dumps(text, ensure_ascii=True)


def name(text: str) -> str:
    """An op, block, loop, kind, key or dtype name."""
    _check_str(text, "name")
    return text if _IDENT.match(text) else quote(text)


def sigil_name(sigil: str, text: str) -> str:
    _check_str(text, f"{sigil} name")
    return sigil + (text if _SIGIL_NAME.match(text) else quote(text))


def var_name(text: str) -> str:
    _check_str(text, "scalar name")
    return text if _IDENT.match(text) and text not in RESERVED else "$" + quote(text)


def literal(value) -> str:
    """A bool, int or float as text; floats keep their exact value through ``repr``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return int.__repr__(int(value))
    if isinstance(value, float):
        return float.__repr__(value)
    raise TypeError(f"not a scalar literal: {value!r}")


def _check_str(text, what):
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, got {text!r}")


# ---------------------------------------------------------------------------------------
# Expressions.


def expr_prec(e) -> int:
    if isinstance(e, ir.BinExpr):
        return BINARY_PREC.get(e.op, PREC_ATOM)  # min/max are calls; unknown ops fail in expr()
    if isinstance(e, ir.UnExpr):
        return PREC_NOT if e.op == "not" else PREC_NEG
    return PREC_ATOM  # a negative literal such as -1 is one token to the parser


def expr(e) -> str:
    """An ``Expr`` with the fewest parentheses that still parse back to the same tree."""
    if isinstance(e, ir.Const):
        return literal(e.value)
    if isinstance(e, ir.Var):
        return var_name(e.name)
    if isinstance(e, ir.ShapeOf):
        return f"{sigil_name('@', e.tensor)}.shape[{literal(_int(e.axis, 'ShapeOf.axis'))}]"
    if isinstance(e, ir.Read):
        return f"{sigil_name('@', e.tensor)}[{', '.join(expr(i) for i in _tuple(e.index, 'Read.index'))}]"
    if isinstance(e, ir.BinExpr):
        if e.op in ("min", "max"):
            return f"{e.op}({expr(e.a)}, {expr(e.b)})"
        if e.op not in BINARY_PREC:
            raise ValueError(f"unknown BinExpr op {e.op!r}")
        p = BINARY_PREC[e.op]
        left_strict = p == PREC_CMP  # comparisons do not chain
        a = _wrap(e.a, expr_prec(e.a) < p or (left_strict and expr_prec(e.a) == p))
        b = _wrap(e.b, expr_prec(e.b) <= p)
        return f"{a} {e.op} {b}"
    if isinstance(e, ir.UnExpr):
        if e.op == "not":
            return "not " + _wrap(e.a, expr_prec(e.a) < PREC_NOT)
        if e.op == "-":
            numeric = isinstance(e.a, ir.Const) and not isinstance(e.a.value, bool)
            return "-" + _wrap(e.a, numeric or expr_prec(e.a) < PREC_NEG)
        raise ValueError(f"unknown UnExpr op {e.op!r}")
    raise TypeError(f"not an Expr: {e!r}")


def _wrap(e, parens: bool) -> str:
    return f"({expr(e)})" if parens else expr(e)


def _int(v, what):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {v!r}")
    return v


def _tuple(v, what):
    if not isinstance(v, tuple):
        raise TypeError(f"{what} must be a tuple, got {v!r}")
    return v


EXPR_TYPES = (ir.Const, ir.Var, ir.ShapeOf, ir.Read, ir.BinExpr, ir.UnExpr)


def value(v) -> str:
    """An operand, attribute value, tile, param value or returned value."""
    if isinstance(v, ir.Value):
        return sigil_name("%", v.name)
    if isinstance(v, ir.TensorRef):
        return sigil_name("@", v.name)
    if isinstance(v, ir.Const):
        return "$" + literal(v.value)
    if isinstance(v, EXPR_TYPES):
        return expr(v)
    if v is None:
        return "none"
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, (bool, numbers.Integral, float)):
        return literal(v)
    raise TypeError(f"cannot print {type(v).__name__} {v!r} (IR values are tuples, scalars, str, Exprs, refs)")


def tensor_type(t) -> str:
    if not isinstance(t, ir.TensorType):
        raise TypeError(f"not a TensorType: {t!r}")
    dims = _tuple(t.shape, "TensorType.shape")
    static = all(isinstance(d, ir.Const) and type(d.value) is int and d.value >= 0 for d in dims)
    if static and isinstance(t.dtype, str) and _IDENT.match(t.dtype):
        return "tensor<" + "".join(f"{d.value}x" for d in dims) + t.dtype + ">"
    return f"tensor<[{', '.join(expr(d) for d in dims)}], {name(t.dtype)}>"


def span(s) -> str:
    line, col, end_line, end_col = (literal(_int(x, "Span field")) for x in (s.line, s.col, s.end_line, s.end_col))
    return f"loc({line}:{col}-{end_line}:{end_col})"


def sorted_attrs(attrs) -> list:
    return sorted(_tuple(attrs, "attrs"), key=lambda kv: kv[0])


# ---------------------------------------------------------------------------------------
# Statements.


class _Printer:
    def __init__(self, spans: bool):
        self.spans = spans
        self.lines: list = []

    def emit(self, depth: int, text: str, loc=None) -> None:
        line = INDENT * depth + text
        if loc is not None and self.spans:
            line = line.ljust(LOC_COLUMN - 1) + " " + span(loc)  # loc( at LOC_COLUMN or later
        self.lines.append(line)

    def program(self, p: ir.Program) -> None:
        params = ", ".join(self.param(x) for x in _tuple(p.params, "Program.params"))
        self.emit(0, f"program {name(p.name)}({params}) paths={literal(_int(p.paths, 'paths'))} {{")
        for k, v in sorted_attrs(p.attrs):
            self.emit(1, f"attr {name(k)} = {value(v)}")
        for loc in _tuple(p.locals, "Program.locals"):
            self.emit(1, f"local {sigil_name('@', loc.name)}: {tensor_type(loc.type)}")
        self.region(p.body, 1)
        self.emit(0, "}")

    def param(self, p: ir.Param) -> str:
        if p.kind == "tensor":
            text = f"{sigil_name('@', p.name)}: " + ("tensor" if p.type is None else tensor_type(p.type))
        else:
            text = f"{var_name(p.name)}: {name(p.kind)}"
            if p.type is not None:
                text += " " + tensor_type(p.type)
        if p.is_output:
            text += " out"
        if p.value is not None:
            text += " = " + value(p.value)
        return text

    def region(self, nodes, depth: int) -> None:
        for node in _tuple(nodes, "region"):
            getattr(self, "node_" + type(node).__name__, self.node_unknown)(node, depth)

    def node_unknown(self, node, depth):
        raise TypeError(f"not a region node: {node!r}")

    def node_Loop(self, n: ir.Loop, depth: int) -> None:
        head = (f"loop {var_name(n.var)} = {expr(n.start)} to {expr(n.stop)} step {expr(n.step)}"
                f" name={name(n.name)} kind={name(n.kind)} unroll={literal(_int(n.unroll, 'unroll'))}"
                f" submit_before_loop={literal(bool(n.submit_before_loop))} {{")
        self.emit(depth, head, n.span)
        self.region(n.body, depth + 1)
        self.emit(depth, "}")

    def node_Branch(self, n: ir.Branch, depth: int) -> None:
        self.emit(depth, f"if {expr(n.cond)} {{", n.span)
        self.region(n.then, depth + 1)
        if n.orelse:
            self.emit(depth, "} else {")
            self.region(n.orelse, depth + 1)
        self.emit(depth, "}")

    def node_Block(self, n: ir.Block, depth: int) -> None:
        self.emit(depth, f"block {name(n.name)} {{")
        for op in _tuple(n.ops, "Block.ops"):
            self.emit(depth + 1, op_text(op), op.span)
        self.emit(depth, "}")

    def node_Return(self, n: ir.Return, depth: int) -> None:
        vals = ", ".join(value(v) for v in _tuple(n.values, "Return.values"))
        self.emit(depth, ("return " + vals).rstrip())


def op_text(op: ir.Op) -> str:
    """One op without its location."""
    if not isinstance(op, ir.Op):
        raise TypeError(f"not an Op: {op!r}")
    text = ""
    if op.results:
        text = ", ".join(sigil_name("%", r) for r in _tuple(op.results, "Op.results")) + " = "
    text += f"{name(op.opcode)}({', '.join(value(v) for v in _tuple(op.operands, 'Op.operands'))})"
    if op.attrs:
        text += " {" + ", ".join(f"{name(k)} = {value(v)}" for k, v in sorted_attrs(op.attrs)) + "}"
    if op.types:
        text += " : " + ", ".join(tensor_type(t) for t in _tuple(op.types, "Op.types"))
    if op.tile is not None:
        text += " tile " + value(op.tile)
    if op.cube_tile is not None:
        text += " cube_tile " + value(op.cube_tile)
    return text


def print_program(program: ir.Program, *, spans: bool = True) -> str:
    """The text of ``program`` (ends with a newline); ``spans=False`` drops ``loc(...)``."""
    if not isinstance(program, ir.Program):
        raise TypeError(f"not a Program: {program!r}")
    p = _Printer(spans)
    p.program(program)
    return "\n".join(p.lines) + "\n"
