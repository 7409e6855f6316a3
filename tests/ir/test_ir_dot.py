"""The graphviz view: well-formed DOT, every block drawn, branch edges labelled."""

import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from irgen import programs, sample_program

from pypto_ast import ir
from pypto_ast.ir.dot import op_line, program_to_dot


def outside_strings(dot: str) -> str:
    """The DOT text with every quoted string and HTML-like label emptied."""
    dot = re.sub(r"<<table.*?</table>>", "<>", dot)
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', dot)


def check_structure(dot: str, program: ir.Program) -> None:
    bare = outside_strings(dot)
    depth = 0
    for ch in bare:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    assert dot.startswith("digraph ") and dot.endswith("}\n")
    defined = set(re.findall(r"^\s*(n\d+) \[", bare, re.MULTILINE))
    for src, dst in re.findall(r"^\s*(n\d+) -> (n\d+)", bare, re.MULTILINE):
        assert src in defined and dst in defined
    tables = re.findall(r"shape=plain, label=<<table", dot)
    assert len(tables) == len(ir.blocks(program))


def test_sample_program():
    program = sample_program()
    dot = program_to_dot(program)
    check_structure(dot, program)
    for block in ir.blocks(program):
        assert f"<tr><td><b>{block.name}</b></td></tr>" in dot
    assert '<td align="left">%2 = matmul : 16xn fp32</td>' in dot
    assert 'label="true: @lens[b] < -1 and not i == 0"' in dot
    assert 'label="false: @lens[b] < -1 and not i == 0"' in dot
    assert 'subgraph cluster_2 {' in dot and 'label="loop rows (loop, unroll=2, submit_before_loop)"' in dot
    assert "style=dashed" in dot
    assert dot == program_to_dot(sample_program())


def test_block_text_is_escaped():
    op = ir.Op(("a|b",), "f{x}", (), (), (ir.TensorType((ir.Const(4),), 'fp"<&>'),))
    program = ir.Program('k"1', (), (ir.Block("b<0>\x00", (op,)),))
    dot = program_to_dot(program)
    check_structure(dot, program)
    assert "<b>&quot;b&lt;0&gt;\\\\u0000&quot;</b>" in dot
    assert "%&quot;a|b&quot; = &quot;f{x}&quot; : 4 fp&quot;&lt;&amp;&gt;" in dot
    dims = (ir.ShapeOf("x", 0), ir.BinExpr("+", ir.Var("n"), ir.Const(1)))
    scalar = ir.Op(("s",), "sum", (), (), (ir.TensorType((), "fp32"), ir.TensorType(dims, "bf16")))
    assert op_line(scalar) == "%s = sum : fp32, @x.shape[0]x(n + 1) bf16"
    assert dot.startswith('digraph "k\\"1" {')


@given(programs)
def test_random_programs(program):
    check_structure(program_to_dot(program), program)


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not on PATH (apt install graphviz): this test renders the DOT text with it")
@settings(max_examples=15)
@given(programs)
def test_graphviz_accepts_it(program):
    for dot in (program_to_dot(sample_program()), program_to_dot(program)):
        run = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60, check=False)
        assert run.returncode == 0 and not run.stderr, run.stderr.decode()


def test_empty_else_arm_goes_back_to_the_loop_header():
    C = ir.Const
    branch = ir.Branch(ir.Var("c"), (ir.Block("b", ()),), ())
    program = ir.Program("p", (), (ir.Loop("i", C(0), C(4), C(1), (branch,)),))
    dot = program_to_dot(program)
    check_structure(dot, program)
    assert 'n2 -> n1 [style=dashed, label="false: c"];' in dot
    assert 'n3 -> n1 [style=dashed, label="next"];' in dot
    assert 'n1 -> n4 [label="exit"];' in dot
