"""The IR text form: pinned output for a small program and every Expr/value spelling."""

import pytest
from irgen import sample_program

from pypto_ast import ir
from pypto_ast.ir.parser import parse_expr, parse_program
from pypto_ast.ir.printer import (
    LOC_COLUMN,
    expr,
    print_program,
    tensor_type,
    value,
)

C, V = ir.Const, ir.Var
a, b, c = V("a"), V("b"), V("c")


def add_one() -> ir.Program:
    t64 = ir.TensorType((C(64), C(64)), "fp32")
    loc = ir.Span(7, 14, 7, 22)
    ops = (
        ir.Op(("0",), "view", (ir.TensorRef("x"),), (("offsets", (0, 0)), ("shape", (64, 64))), (t64,), span=loc),
        ir.Op(("1",), "add", (ir.Value("0"), C(1.0)), (), (t64,), tile=(32, 64), span=loc),
        ir.Op((), "assemble", (ir.Value("1"), ir.TensorRef("out")), (("offsets", (C(0), C(0))),),
              span=ir.Span(7, 4, 7, 22)),
    )
    loop = ir.Loop("loop_idx_0", C(0), C(1), C(1), (ir.Block("b0", ops),), name="default_loop_1", kind="implicit")
    params = (ir.Param("x", "tensor", t64), ir.Param("out", "tensor", t64, is_output=True),
              ir.Param("n", "scalar", value=4))
    return ir.Program("add_one", params, (loop,), (ir.LocalTensor("t", ir.TensorType((C(32), C(32)), "fp32")),))


GOLDEN = """\
program add_one(@x: tensor<64x64xfp32>, @out: tensor<64x64xfp32> out, n: scalar = 4) paths=1 {
  local @t: tensor<32x32xfp32>
  loop loop_idx_0 = 0 to 1 step 1 name=default_loop_1 kind=implicit unroll=1 submit_before_loop=false {
    block b0 {
      %0 = view(@x) {offsets = [0, 0], shape = [64, 64]} : tensor<64x64xfp32>   loc(7:14-7:22)
      %1 = add(%0, $1.0) : tensor<64x64xfp32> tile [32, 64]                     loc(7:14-7:22)
      assemble(%1, @out) {offsets = [$0, $0]}                                   loc(7:4-7:22)
    }
  }
}
"""


def test_golden_text():
    assert print_program(add_one()) == GOLDEN
    assert parse_program(GOLDEN) == add_one()


def test_spans_false_drops_every_loc():
    text = print_program(add_one(), spans=False)
    assert "loc(" not in text
    assert text == "\n".join(line.split("  loc(")[0].rstrip() for line in GOLDEN.splitlines()) + "\n"


def test_loc_is_aligned_to_a_column():
    seen = 0
    for line in print_program(sample_program()).splitlines():
        at = line.find("loc(")
        if at < 0:
            continue
        code = line[:at].rstrip()
        assert at == (LOC_COLUMN if len(code) < LOC_COLUMN else len(code) + 1), line
        seen += len(code) < LOC_COLUMN
    assert seen >= 3


def test_sample_program_has_every_field():
    text = print_program(sample_program())
    for piece in ["paths=2", 'attr source = "tiled_mm.py"', "local @acc: tensor<16x32xfp32>",
                  "name=rows kind=loop unroll=2 submit_before_loop=true", "kind=implicit",
                  "tile [16, 64]", "cube_tile [[16, 16], [64, 64], [32, 32]]", "} else {",
                  "if @lens[b] < -1 and not i == 0 {", "return %2", "b: scalar = -(1)",
                  "@out: tensor<[@x.shape[0], n], fp32> out", "loc(8:4-15:0)", "{value = -0.0}"]:
        assert piece in text, piece
    assert parse_program(text) == sample_program()


EXPRS = [
    (C(1), "1"), (C(-7), "-7"), (C(1.0), "1.0"), (C(True), "true"), (C(False), "false"),
    (C(-0.0), "-0.0"), (C(0.1), "0.1"), (C(1e-30), "1e-30"), (C(1e16), "1e+16"),
    (C(float("inf")), "inf"), (C(float("-inf")), "-inf"), (C(2**70), str(2**70)),
    (V("i"), "i"), (V("min"), '$"min"'), (V("a b"), '$"a b"'), (V("to"), '$"to"'),
    (ir.ShapeOf("x", 0), "@x.shape[0]"), (ir.ShapeOf("a b", -1), '@"a b".shape[-1]'),
    (ir.Read("lens", (V("b"),)), "@lens[b]"), (ir.Read("t", ()), "@t[]"), (ir.Read("t2", (a, C(0))), "@t2[a, 0]"),
    (ir.BinExpr("*", ir.BinExpr("+", a, b), c), "(a + b) * c"),
    (ir.BinExpr("+", a, ir.BinExpr("*", b, c)), "a + b * c"),
    (ir.BinExpr("-", ir.BinExpr("-", a, b), c), "a - b - c"),
    (ir.BinExpr("-", a, ir.BinExpr("-", b, c)), "a - (b - c)"),
    (ir.BinExpr("//", ir.BinExpr("%", a, b), c), "a % b // c"),
    (ir.BinExpr("/", a, ir.BinExpr("*", b, c)), "a / (b * c)"),
    (ir.BinExpr("min", a, ir.BinExpr("+", b, C(1))), "min(a, b + 1)"),
    (ir.BinExpr("max", ir.BinExpr("min", a, b), c), "max(min(a, b), c)"),
    (ir.BinExpr("<", ir.BinExpr("<", a, b), c), "(a < b) < c"),
    (ir.BinExpr("==", a, ir.BinExpr("!=", b, c)), "a == (b != c)"),
    (ir.BinExpr("<=", ir.BinExpr("+", a, b), c), "a + b <= c"),
    (ir.BinExpr("or", a, ir.BinExpr("and", b, c)), "a or b and c"),
    (ir.BinExpr("and", ir.BinExpr("or", a, b), c), "(a or b) and c"),
    (ir.BinExpr("and", a, ir.BinExpr("and", b, c)), "a and (b and c)"),
    (ir.UnExpr("not", ir.BinExpr("==", a, b)), "not a == b"),
    (ir.BinExpr("==", ir.UnExpr("not", a), b), "(not a) == b"),
    (ir.UnExpr("not", ir.BinExpr("and", a, b)), "not (a and b)"),
    (ir.BinExpr("and", ir.UnExpr("not", a), b), "not a and b"),
    (ir.UnExpr("not", ir.UnExpr("not", a)), "not not a"),
    (ir.UnExpr("-", C(1)), "-(1)"), (ir.UnExpr("-", C(-1)), "-(-1)"), (ir.UnExpr("-", C(0.5)), "-(0.5)"),
    (ir.UnExpr("-", C(True)), "-true"), (ir.UnExpr("-", a), "-a"), (ir.UnExpr("-", ir.UnExpr("-", a)), "--a"),
    (ir.UnExpr("-", ir.BinExpr("+", a, b)), "-(a + b)"),
    (ir.BinExpr("*", ir.UnExpr("-", a), b), "-a * b"),
    (ir.BinExpr("-", a, C(-1)), "a - -1"),
    (ir.BinExpr("*", C(-1), a), "-1 * a"),
    (ir.BinExpr("+", ir.UnExpr("not", a), b), "(not a) + b"),
]


@pytest.mark.parametrize("e,text", EXPRS, ids=[t for _, t in EXPRS])
def test_expr_spelling_and_reparse(e, text):
    assert expr(e) == text
    assert parse_expr(text) == e
    assert expr(parse_expr(text)) == text


def test_const_is_marked_only_where_plain_python_values_may_stand():
    vals = (C(1), 1, True, C(True), 1.0, C(-1), -1, "s", 'q"uote', None, (), (1,), ((C(2), 3),),
            ir.Value("0"), ir.Value("a b"), ir.TensorRef("x"), ir.BinExpr("+", C(1), a), ir.ShapeOf("x", 1))
    assert ", ".join(value(v) for v in vals) == (
        '$1, 1, true, $true, 1.0, $-1, -1, "s", "q\\"uote", none, [], [1], [[$2, 3]], '
        '%0, %"a b", @x, 1 + a, @x.shape[1]')
    op = ir.Op(("r",), "f", vals)
    program = ir.Program("p", (), (ir.Block("b", (op,)),))
    assert parse_program(print_program(program)) == program


@pytest.mark.parametrize("t,text", [
    (ir.TensorType((C(64), C(8)), "fp32"), "tensor<64x8xfp32>"),
    (ir.TensorType((), "fp16"), "tensor<fp16>"),
    (ir.TensorType((C(4),), "x64"), "tensor<4xx64>"),
    (ir.TensorType((C(-1),), "fp32"), "tensor<[-1], fp32>"),
    (ir.TensorType((C(True),), "fp32"), "tensor<[true], fp32>"),
    (ir.TensorType((C(4),), "fp 8"), 'tensor<[4], "fp 8">'),
    (ir.TensorType((ir.ShapeOf("x", 0), C(64)), "bf16"), "tensor<[@x.shape[0], 64], bf16>"),
])
def test_tensor_type_spelling(t, text):
    assert tensor_type(t) == text


def test_names_are_quoted_only_when_needed():
    op = ir.Op(("0", "a b"), "pypto.add", (), (("key with space", 1), ("max", 2)))
    block = ir.Block("blk 1", (op,))
    program = ir.Program("my kernel", (ir.Param("min", "scalar"), ir.Param("t", "tensor")), (block,))
    text = print_program(program)
    assert text.splitlines() == [
        'program "my kernel"($"min": scalar, @t: tensor) paths=1 {',
        '  block "blk 1" {',
        '    %0, %"a b" = "pypto.add"() {"key with space" = 1, max = 2}',
        "  }",
        "}",
    ]
    assert parse_program(text) == program


def test_attrs_are_printed_sorted():
    op = ir.Op((), "f", (), (("z", 1), ("a", 2)))
    program = ir.Program("p", (), (ir.Block("b", (op,)),), attrs=(("y", "1"), ("b", "2")))
    text = print_program(program)
    assert "{a = 2, z = 1}" in text
    assert text.index("attr b") < text.index("attr y")


def test_printing_is_deterministic():
    assert print_program(sample_program()) == print_program(sample_program())


def test_nan_prints_and_reprints():
    program = ir.Program("p", (), (ir.Branch(ir.BinExpr("!=", a, C(float("nan"))), (), ()),))
    text = print_program(program)
    assert "if a != nan {" in text
    assert print_program(parse_program(text)) == text


@pytest.mark.parametrize("bad", [
    ir.Program("p", (), (ir.Block("b", (ir.Op((), "f", ([1, 2],)),)),)),
    ir.Program("p", (), ("not a node",)),
    ir.Program("p", (), (ir.Branch(ir.BinExpr("**", a, b), (), ()),)),
    ir.Program("p", (), (ir.Branch(ir.BinExpr("+", ir.BinExpr("not", a, b), c), (), ()),)),
    ir.Program("p", (), (ir.Branch(ir.BinExpr("+", a, 1), (), ()),)),
])
def test_unprintable_ir_is_rejected(bad):
    with pytest.raises((TypeError, ValueError)):
        print_program(bad)
