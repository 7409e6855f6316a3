"""Reading IR text: hand-written input, and errors that point at a line and column."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from irgen import sample_program

from pypto_ast import ir
from pypto_ast.ir.parser import (
    IRSyntaxError,
    parse_expr,
    parse_program,
    tokenize,
)
from pypto_ast.ir.printer import print_program

HAND_WRITTEN = """
# comments and blank lines are allowed; spacing is free
program   k(@x: tensor<8xfp32>, @y: tensor<[n], fp16> out, n: scalar) paths=1 {

  attr z = 1
  attr a = "first"
  loop i = 0 to n // 8 step 1 name=l kind=loop unroll=1 submit_before_loop=false {   # trailing comment
    if i < 1 {
      block b0 {
        %0 = view(@x) {shape = [8], offsets = [i * 8]} : tensor<8xfp32>
        assemble(%0, @y) {offsets = [0]}   loc(3:4-3:20)
      }
    }
  }
}
"""


def test_hand_written_text():
    p = parse_program(HAND_WRITTEN)
    assert [x.name for x in p.params] == ["x", "y", "n"]
    assert p.params[1].type == ir.TensorType((ir.Var("n"),), "fp16") and p.params[1].is_output
    assert p.params[2] == ir.Param("n", "scalar")
    assert p.attrs == (("a", "first"), ("z", 1))  # sorted on the way in
    loop = p.body[0]
    assert loop.stop == ir.BinExpr("//", ir.Var("n"), ir.Const(8)) and loop.span is None
    branch = loop.body[0]
    assert branch.orelse == () and branch.cond == ir.BinExpr("<", ir.Var("i"), ir.Const(1))
    view, store = branch.then[0].ops
    assert view.attrs == (("offsets", (ir.BinExpr("*", ir.Var("i"), ir.Const(8)),)), ("shape", (8,)))
    assert store.results == () and store.span == ir.Span(3, 4, 3, 20)
    assert parse_program(print_program(p)) == p


def test_every_node_kind_roundtrips():
    kinds = {type(n).__name__ for n in ir.walk(sample_program().body)}
    assert kinds == {"Loop", "Branch", "Block", "Return"}
    assert parse_program(print_program(sample_program())) == sample_program()


def test_negative_literal_versus_negation():
    assert parse_expr("-1") == ir.Const(-1)
    assert parse_expr("-(1)") == ir.UnExpr("-", ir.Const(1))
    assert parse_expr("- 1") == ir.UnExpr("-", ir.Const(1))
    assert parse_expr("a - 1") == ir.BinExpr("-", ir.Var("a"), ir.Const(1))
    assert parse_expr("a - -1") == ir.BinExpr("-", ir.Var("a"), ir.Const(-1))
    assert parse_expr("-0.0").value.hex() == (-0.0).hex()
    assert parse_expr("-inf") == ir.Const(float("-inf"))


def test_plain_literal_versus_const_in_values():
    text = "program p() paths=1 {\n  block b {\n    f(1, $1, 1 + a, true, $true, none)\n  }\n}\n"
    op = parse_program(text).body[0].ops[0]
    assert op.operands == (1, ir.Const(1), ir.BinExpr("+", ir.Const(1), ir.Var("a")), True, ir.Const(True), None)
    assert type(op.operands[0]) is int and type(op.operands[3]) is bool


def test_compact_type_token():
    types = [t.value for t in tokenize("tensor<64x64xfp32> tensor<fp16> tensor<4xx64>") if t.kind == "TYPE"]
    got = [(tuple(d.value for d in t.shape), t.dtype) for t in types]
    assert got == [((64, 64), "fp32"), ((), "fp16"), ((4,), "x64")]


P = "program p() paths=1 {\n"
ERRORS = [
    ("", 1, 1, "expected 'program'"),
    ("program p() {\n}\n", 1, 13, "expected 'paths'"),
    (P + "  block b0 {\n    %0 = add(%1, ?)\n  }\n}\n", 3, 18, "unexpected character '?'"),
    (P + '  attr k = "abc\n}\n', 2, 12, "unterminated string"),
    (P + '  attr k = "\\q"\n}\n', 2, 12, "bad string literal"),
    (P + "  if a < b < c {\n  }\n}\n", 2, 12, "comparisons do not chain"),
    (P + "  if none {\n  }\n}\n", 2, 6, 'written $"none"'),
    (P + "  while x {\n  }\n}\n", 2, 3, "expected loop, if, block, return or '}'"),
    (P + "  block b0 { %0 = add() }\n}\n", 2, 14, "expected end of line"),
    (P + "  block b0 {\n    %0 = add() loc(1:2)\n  }\n}\n", 3, 23, "expected '-'"),
    (P + "}\nprogram q() paths=1 {\n}\n", 3, 1, "expected end of input"),
    ("program p(@x: tensor<64x64>) paths=1 {\n}\n", 1, 22, "tensor<64x64xfp32> or tensor<[dims], dtype>"),
    (P + "  loop i = 0 to 4 name=l kind=loop unroll=1 submit_before_loop=false {\n  }\n}\n", 2, 19, "expected 'step'"),
    (P + "  loop i = 0 to 4 step 1 name=l kind=loop unroll=1.0 submit_before_loop=false {\n  }\n}\n", 2, 50,
     "expected an integer"),
    (P + "  block b0 {\n    %0 = add(@x)\n  }\n", 5, 1, "found end of input"),
    (P + "  if @x {\n  }\n}\n", 2, 9, "needs [index] or .shape[axis]"),
    (P + "  block b0 {\n    %0, 1 = add()\n  }\n}\n", 3, 9, "expected a result name"),
]


@pytest.mark.parametrize("text,line,col,fragment", ERRORS, ids=[e[3] for e in ERRORS])
def test_syntax_errors_point_at_line_and_column(text, line, col, fragment):
    with pytest.raises(IRSyntaxError) as info:
        parse_program(text)
    err = info.value
    assert (err.line, err.col) == (line, col), str(err)
    assert fragment in err.message
    assert str(err).startswith(f"{line}:{col}: ")


def test_parse_expr_rejects_trailing_text():
    with pytest.raises(IRSyntaxError, match="1:3: expected end of expression"):
        parse_expr("a b")


PIECES = st.sampled_from(list('%@$#"\\{}[]()<>=:,.-+*/ \n') + ["loc", "tensor<", "1e", "x", "0", "\u0663", "9" * 5000])


@given(st.data())
def test_damaged_text_gives_a_syntax_error_or_a_program(data):
    text = print_program(sample_program())
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 4))
        text = text[:at] + "".join(data.draw(st.lists(PIECES, max_size=3))) + text[at + cut:]
    try:
        program = parse_program(text)
    except IRSyntaxError as e:
        assert e.line >= 1 and e.col >= 1
    else:
        assert parse_program(print_program(program)) == program


def test_a_dim_too_long_for_int_is_a_syntax_error():
    text = print_program(sample_program())
    at = text.index("tensor<") + len("tensor<")
    with pytest.raises(IRSyntaxError, match="digits"):
        parse_program(text[:at] + "9" * 5000 + "x" + text[at:])
