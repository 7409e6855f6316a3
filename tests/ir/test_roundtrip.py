"""Property: the text form is lossless and stable for every valid Program."""

from hypothesis import given
from irgen import exprs, programs, values

from pypto_ast import ir
from pypto_ast.ir.parser import parse_program
from pypto_ast.ir.printer import print_program


@given(programs)
def test_print_parse_roundtrip(program):
    text = print_program(program)
    parsed = parse_program(text)
    assert parsed == program
    assert print_program(parsed) == text
    # Without spans the text is still stable (the nodes come back with span=None).
    bare = print_program(program, spans=False)
    assert print_program(parse_program(bare), spans=False) == bare


@given(exprs, values)
def test_exprs_and_values_roundtrip_as_operands_and_attrs(e, v):
    op = ir.Op(("r",), "f", (e, v), (("k", e), ("v", v)))
    program = ir.Program("p", (), (ir.Block("b0", (op,)),))
    assert parse_program(print_program(program)) == program
