"""Read the IR text written by ``printer.py`` back into nodes (grammar in its docstring).

IR files can then be fed back into the pipeline and tests can write programs as text.
The invariant is ``parse_program(print_program(p)) == p``. Hand-written recursive descent
over a small tokenizer: the grammar is tiny and errors should name a line and column.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from . import nodes as ir
from .printer import BINARY_PREC, PREC_CMP, PREC_NOT, RESERVED


class IRSyntaxError(ValueError):
    """Bad IR text; ``line`` and ``col`` are 1-based."""

    def __init__(self, message: str, line: int, col: int):
        super().__init__(f"{line}:{col}: {message}")
        self.message, self.line, self.col = message, line, col


@dataclass(frozen=True)
class Tok:
    kind: str  # NAME INT FLOAT STRING SSA TREF TYPE OP NL EOF
    text: str
    value: Any
    line: int
    col: int
    start: int
    end: int


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIGIL_NAME = re.compile(r"[A-Za-z0-9_]+")
_NUMBER = re.compile(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?")
_COMPACT_TYPE = re.compile(r"tensor<((?:[0-9]+x)*)([A-Za-z_][A-Za-z0-9_]*)>")
_OPS = ("//", "==", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",", ":", "=", ".",
        "<", ">", "+", "-", "*", "/", "%", "$")


def tokenize(text: str) -> list:
    toks: list = []
    i, line, line_start = 0, 1, 0

    def add(kind, tok_text, value, start, end):
        toks.append(Tok(kind, tok_text, value, line, start - line_start + 1, start, end))

    def fail(message, at):
        raise IRSyntaxError(message, line, at - line_start + 1)

    def string_end(at):  # index just past the closing quote
        j = at + 1
        while j < len(text) and text[j] not in '"\n':
            j += 2 if text[j] == "\\" else 1
        if j >= len(text) or text[j] != '"':
            fail("unterminated string", at)
        return j + 1

    def read_string(at, end):
        try:
            return json.loads(text[at:end])
        except ValueError as e:
            fail(f"bad string literal ({e.msg})", at)

    while i < len(text):
        c = text[i]
        if c in " \t\r":
            i += 1
        elif c == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
        elif c == "\n":
            if toks and toks[-1].kind != "NL":
                add("NL", "\n", None, i, i + 1)
            i, line, line_start = i + 1, line + 1, i + 1
        elif c == '"':
            end = string_end(i)
            add("STRING", text[i:end], read_string(i, end), i, end)
            i = end
        elif c in "%@" and i + 1 < len(text) and (text[i + 1] == '"' or _SIGIL_NAME.match(text, i + 1)):
            kind = "SSA" if c == "%" else "TREF"
            if text[i + 1] == '"':
                end = string_end(i + 1)
                val = read_string(i + 1, end)
            else:
                end = _SIGIL_NAME.match(text, i + 1).end()
                val = text[i + 1:end]
            add(kind, text[i:end], val, i, end)
            i = end
        elif "0" <= c <= "9":
            m = _NUMBER.match(text, i)
            is_float = m.group(1) is not None or m.group(2) is not None
            try:
                val = float(m.group()) if is_float else int(m.group())
            except ValueError as e:  # more digits than int() accepts
                fail(str(e), i)
            add("FLOAT" if is_float else "INT", m.group(), val, i, m.end())
            i = m.end()
        elif m := _NAME.match(text, i):
            t = _COMPACT_TYPE.match(text, i) if m.group() == "tensor" else None
            if t:
                try:
                    dims = tuple(ir.Const(int(d)) for d in t.group(1).split("x")[:-1])
                except ValueError as e:  # a dim with more digits than int() accepts
                    fail(str(e), i)
                add("TYPE", t.group(), ir.TensorType(dims, t.group(2)), i, t.end())
                i = t.end()
            else:
                add("NAME", m.group(), m.group(), i, m.end())
                i = m.end()
        else:
            op = next((o for o in _OPS if text.startswith(o, i)), None)
            if op is None:
                fail(f"unexpected character {c!r}", i)
            add("OP", op, op, i, i + len(op))
            i += len(op)
    if toks and toks[-1].kind != "NL":
        add("NL", "", None, i, i)
    add("EOF", "", None, i, i)
    return toks


class _Parser:
    def __init__(self, text: str):
        self.toks = tokenize(text)
        self.i = 0

    # -- token helpers ------------------------------------------------------------------

    def peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Tok:
        tok = self.peek()
        self.i = min(self.i + 1, len(self.toks) - 1)
        return tok

    def at(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind in ("OP", "NAME") and tok.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def error(self, message: str, tok: Tok = None):
        tok = tok or self.peek()
        found = {"NL": "end of line", "EOF": "end of input"}.get(tok.kind, repr(tok.text))
        raise IRSyntaxError(f"{message}, found {found}", tok.line, tok.col)

    def expect(self, text: str) -> Tok:
        if not self.at(text):
            self.error(f"expected {text!r}")
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Tok:
        if self.peek().kind != kind:
            self.error(f"expected {what}")
        return self.next()

    def end_of_line(self) -> None:
        if self.peek().kind != "NL":
            self.error("expected end of line")
        self.next()

    def comma_list(self, close: str, item) -> tuple:
        items = []
        if not self.at(close):
            items.append(item())
            while self.accept(","):
                items.append(item())
        self.expect(close)
        return tuple(items)

    # -- names and literals -------------------------------------------------------------

    def name(self) -> str:
        tok = self.peek()
        if tok.kind not in ("NAME", "STRING"):
            self.error("expected a name")
        return self.next().value

    def var(self) -> str:
        tok = self.peek()
        if tok.kind == "NAME" and tok.text not in RESERVED:
            return self.next().value
        if self.at("$") and self.peek(1).kind == "STRING":
            self.next()
            return self.next().value
        if tok.kind == "NAME":
            self.error(f'reserved word; a scalar with this name is written $"{tok.text}"')
        self.error("expected a scalar name")

    def literal_len(self) -> int:
        """How many tokens a literal at the cursor spans (0: none). ``-1`` is one literal."""
        tok, nxt = self.peek(), self.peek(1)
        if tok.kind in ("INT", "FLOAT") or (tok.kind == "NAME" and tok.text in ("true", "false", "inf", "nan")):
            return 1
        unsigned = nxt.kind in ("INT", "FLOAT") or (nxt.kind == "NAME" and nxt.text in ("inf", "nan"))
        return 2 if self.at("-") and unsigned and tok.end == nxt.start else 0

    def literal(self):
        n = self.literal_len()
        if n == 0:
            self.error("expected a number, true or false")
        negative = n == 2
        if negative:
            self.next()  # the '-' glued to the number
        tok = self.next()
        val = {"true": True, "false": False, "inf": float("inf"), "nan": float("nan")}.get(tok.text, tok.value)
        return -val if negative else val

    def int_literal(self) -> int:
        tok = self.peek()
        val = self.literal()
        if type(val) is not int:
            self.error("expected an integer", tok)
        return val

    def bool_literal(self) -> bool:
        if self.at("true") or self.at("false"):
            return self.next().text == "true"
        self.error("expected true or false")

    # -- expressions --------------------------------------------------------------------

    def expr(self, min_prec: int = 1):
        """Precedence climbing over ``BINARY_PREC``; ``not`` is a prefix, comparisons do not chain."""
        if min_prec <= PREC_NOT and self.at("not"):
            self.next()
            left = ir.UnExpr("not", self.expr(PREC_NOT))
        else:
            left = self.unary()
        last_prec = None
        while True:
            tok = self.peek()
            prec = BINARY_PREC.get(tok.text) if tok.kind in ("OP", "NAME") else None
            if prec is None or prec < min_prec:
                return left
            if prec == PREC_CMP and last_prec == PREC_CMP:
                self.error("comparisons do not chain; add parentheses")
            self.next()
            right = self.expr(prec + 1)
            left, last_prec = ir.BinExpr(tok.text, left, right), prec

    def unary(self):
        if self.at("-") and self.literal_len() != 2:
            self.next()
            return ir.UnExpr("-", self.unary())
        return self.atom()

    def atom(self):
        tok = self.peek()
        if self.literal_len():
            return ir.Const(self.literal())
        if self.at("$"):
            self.next()
            if self.peek().kind == "STRING":
                return ir.Var(self.next().value)
            return ir.Const(self.literal())
        if self.at("min") or self.at("max"):
            self.next()
            self.expect("(")
            a = self.expr()
            self.expect(",")
            b = self.expr()
            self.expect(")")
            return ir.BinExpr(tok.text, a, b)
        if tok.kind == "NAME":
            return ir.Var(self.var())
        if tok.kind == "TREF":
            self.next()
            if self.accept("["):
                return ir.Read(tok.value, self.comma_list("]", self.expr))
            if self.accept("."):
                self.expect("shape")
                self.expect("[")
                axis = self.int_literal()
                self.expect("]")
                return ir.ShapeOf(tok.value, axis)
            self.error("a tensor in an expression needs [index] or .shape[axis]")
        if self.accept("("):
            e = self.expr()
            self.expect(")")
            return e
        self.error("expected an expression")

    # -- values and types ---------------------------------------------------------------

    def value(self):
        tok = self.peek()
        if self.accept("["):
            return self.comma_list("]", self.value)
        if tok.kind == "STRING":
            return self.next().value
        if tok.kind == "SSA":
            return ir.Value(self.next().value)
        if tok.kind == "TREF" and not (self.at("[", 1) or self.at(".", 1)):
            return ir.TensorRef(self.next().value)
        if self.accept("none"):
            return None
        n = self.literal_len()
        if n:
            after = self.peek(n)
            if not (after.kind in ("OP", "NAME") and after.text in BINARY_PREC):
                return self.literal()
        return self.expr()

    def tensor_type(self) -> ir.TensorType:
        tok = self.peek()
        if tok.kind == "TYPE":
            return self.next().value
        if self.at("tensor") and self.at("<", 1):
            self.next()
            self.next()
            if not self.at("["):
                self.error("expected tensor<64x64xfp32> or tensor<[dims], dtype>")
            self.next()
            shape = self.comma_list("]", self.expr)
            self.expect(",")
            dtype = self.name()
            self.expect(">")
            return ir.TensorType(shape, dtype)
        self.error("expected a tensor type")

    def at_type(self) -> bool:
        return self.peek().kind == "TYPE" or (self.at("tensor") and self.at("<", 1))

    def loc(self):
        if not self.accept("loc"):
            return None
        self.expect("(")
        line = self.int_literal()
        self.expect(":")
        col = self.int_literal()
        self.expect("-")
        end_line = self.int_literal()
        self.expect(":")
        end_col = self.int_literal()
        self.expect(")")
        return ir.Span(line, col, end_line, end_col)

    def attr_dict(self) -> tuple:
        def item():
            key = self.name()
            self.expect("=")
            return (key, self.value())

        return tuple(sorted(self.comma_list("}", item), key=lambda kv: kv[0]))

    # -- statements ---------------------------------------------------------------------

    def program(self) -> ir.Program:
        self.expect("program")
        name = self.name()
        self.expect("(")
        params = self.comma_list(")", self.param)
        self.expect("paths")
        self.expect("=")
        paths = self.int_literal()
        self.expect("{")
        self.end_of_line()
        attrs = []
        while self.accept("attr"):
            key = self.name()
            self.expect("=")
            attrs.append((key, self.value()))
            self.end_of_line()
        local_list = []
        while self.accept("local"):
            tref = self.expect_kind("TREF", "a tensor name (@name)")
            self.expect(":")
            local_list.append(ir.LocalTensor(tref.value, self.tensor_type()))
            self.end_of_line()
        body = self.region()
        self.expect("}")
        if self.peek().kind == "NL":
            self.next()
        if self.peek().kind != "EOF":
            self.error("expected end of input after the program")
        return ir.Program(name, params, body, tuple(local_list), paths,
                          tuple(sorted(attrs, key=lambda kv: kv[0])))

    def param(self) -> ir.Param:
        if self.peek().kind == "TREF":
            name, kind = self.next().value, "tensor"
            self.expect(":")
            ptype = self.tensor_type() if self.at_type() else None
            if ptype is None:
                self.expect("tensor")
        else:
            name = self.var()
            self.expect(":")
            kind = self.name()
            ptype = self.tensor_type() if self.at_type() else None
        is_output = self.accept("out")
        val = self.value() if self.accept("=") else None
        return ir.Param(name, kind, ptype, is_output, val)

    def region(self) -> tuple:
        nodes = []
        while not self.at("}"):
            tok = self.peek()
            parse = {"loop": self.loop, "if": self.branch, "block": self.block, "return": self.ret}.get(
                tok.text if tok.kind == "NAME" else None)
            if parse is None:
                self.error("expected loop, if, block, return or '}'")
            self.next()
            nodes.append(parse())
        return tuple(nodes)

    def header_end(self):
        """``{`` then an optional ``loc(...)`` and the end of the line."""
        self.expect("{")
        span = self.loc()
        self.end_of_line()
        return span

    def closing_brace(self) -> None:
        self.expect("}")
        self.end_of_line()

    def loop(self) -> ir.Loop:
        var = self.var()
        self.expect("=")
        start = self.expr()
        self.expect("to")
        stop = self.expr()
        self.expect("step")
        step = self.expr()
        fields = []
        for key, read in (("name", self.name), ("kind", self.name), ("unroll", self.int_literal),
                          ("submit_before_loop", self.bool_literal)):
            self.expect(key)
            self.expect("=")
            fields.append(read())
        span = self.header_end()
        body = self.region()
        self.closing_brace()
        name, kind, unroll, submit = fields
        return ir.Loop(var, start, stop, step, body, name, kind, unroll, submit, span)

    def branch(self) -> ir.Branch:
        cond = self.expr()
        span = self.header_end()
        then = self.region()
        self.expect("}")
        orelse = ()
        if self.accept("else"):
            self.expect("{")
            self.end_of_line()
            orelse = self.region()
            self.expect("}")
        self.end_of_line()
        return ir.Branch(cond, then, orelse, span)

    def block(self) -> ir.Block:
        name = self.name()
        self.expect("{")
        self.end_of_line()
        ops = []
        while not self.at("}"):
            ops.append(self.op())
        self.closing_brace()
        return ir.Block(name, tuple(ops))

    def ret(self) -> ir.Return:
        values = []
        if self.peek().kind != "NL":
            values.append(self.value())
            while self.accept(","):
                values.append(self.value())
        self.end_of_line()
        return ir.Return(tuple(values))

    def op(self) -> ir.Op:
        results = []
        if self.peek().kind == "SSA":
            results.append(self.next().value)
            while self.accept(","):
                results.append(self.expect_kind("SSA", "a result name (%name)").value)
            self.expect("=")
        opcode = self.name()
        self.expect("(")
        operands = self.comma_list(")", self.value)
        attrs = self.attr_dict() if self.accept("{") else ()
        types = []
        if self.accept(":"):
            types.append(self.tensor_type())
            while self.accept(","):
                types.append(self.tensor_type())
        tile = self.value() if self.accept("tile") else None
        cube_tile = self.value() if self.accept("cube_tile") else None
        span = self.loc()
        self.end_of_line()
        return ir.Op(tuple(results), opcode, operands, attrs, tuple(types), tile, cube_tile, span)


def parse_program(text: str) -> ir.Program:
    """The Program written in ``text``; raises ``IRSyntaxError`` with a line and column."""
    return _Parser(text).program()


def parse_expr(text: str):
    """One scalar ``Expr`` written as in the IR text (``i * 16 + 1``, ``@x.shape[0]``)."""
    parser = _Parser(text)
    e = parser.expr()
    if parser.peek().kind == "NL":
        parser.next()
    if parser.peek().kind != "EOF":
        parser.error("expected end of expression")
    return e
