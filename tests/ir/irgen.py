"""Hypothesis strategies for random valid IR Programs (reusable by any IR test).

Values are chosen to stress the text form: names that need quoting or collide with
keywords, floats that only ``repr`` keeps (0.1, 1e-30, -0.0, inf), negative ints, bools
next to ints, strings with quotes and escapes, ``Const`` next to plain Python scalars.
NaN is left out because ``Const(nan) != Const(nan)``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from pypto_ast import ir

IDENTS = ["x", "out", "t", "b0", "loop_idx_0", "i", "n", "acc", "_", "fp32"]
ODD_NAMES = ["", "0", "1a", "a b", 'say "hi"', "back\\slash", "line\nbreak", "é", "x.y",
             "min", "max", "and", "not", "true", "none", "inf", "to", "step", "tensor", "loc", "tile"]
DTYPES = ["fp32", "fp16", "bf16", "int32", "bool", "x", "x64", "fp 8", "8"]
FLOATS = [0.1, 1e-30, -0.0, 0.0, 1.0, -2.5, 1e16, 123456789.125, 5e-324, float("inf"), float("-inf")]

names = st.one_of(st.sampled_from(IDENTS), st.sampled_from(ODD_NAMES), st.text(max_size=4))
ints = st.one_of(st.integers(-5, 70), st.integers(-(2**70), 2**70))
floats = st.one_of(st.sampled_from(FLOATS), st.floats(allow_nan=False))
scalars = st.one_of(ints, floats, st.booleans())


def _small_tuples(elements, max_size=3):
    return st.lists(elements, max_size=max_size).map(tuple)


expr_leaves = st.one_of(
    st.builds(ir.Const, scalars),
    st.builds(ir.Var, names),
    st.builds(ir.ShapeOf, names, st.integers(-2, 4)),
)


def _extend_expr(children):
    return st.one_of(
        st.builds(ir.BinExpr, st.sampled_from(ir.BIN_OPS), children, children),
        st.builds(ir.UnExpr, st.sampled_from(ir.UN_OPS), children),
        st.builds(ir.Read, names, _small_tuples(children, 2)),
    )


exprs = st.recursive(expr_leaves, _extend_expr, max_leaves=8)

value_leaves = st.one_of(
    scalars,
    st.text(max_size=6),
    st.sampled_from(['"', '\\"', "a,b", "[1]", "$1", "# not a comment"]),
    st.none(),
    st.builds(ir.Value, names),
    st.builds(ir.TensorRef, names),
    exprs,
)
values = st.recursive(value_leaves, lambda children: _small_tuples(children), max_leaves=6)

tensor_types = st.builds(
    ir.TensorType,
    _small_tuples(st.one_of(st.builds(ir.Const, st.integers(0, 4096)), exprs), 3),
    st.sampled_from(DTYPES) | names,
)
_line, _col = st.integers(0, 999), st.integers(0, 120)
spans = st.none() | st.builds(ir.Span, _line, _col, _line, _col)
attrs = st.dictionaries(names, values, max_size=3).map(lambda d: tuple(sorted(d.items(), key=lambda kv: kv[0])))
opcodes = st.sampled_from(["add", "view", "assemble", "matmul", "max", "not", "loop", "pypto.add"]) | names

ops = st.builds(
    ir.Op,
    results=_small_tuples(names, 2),
    opcode=opcodes,
    operands=_small_tuples(values),
    attrs=attrs,
    types=_small_tuples(tensor_types, 2),
    tile=st.none() | _small_tuples(st.integers(1, 512)),
    cube_tile=st.none() | _small_tuples(_small_tuples(st.integers(1, 512), 2), 3),
    span=spans,
)
blocks = st.builds(ir.Block, names, _small_tuples(ops, 4))
returns = st.builds(ir.Return, _small_tuples(st.builds(ir.Value, names) | values, 2))


def regions(depth: int = 3):
    """A region whose loops and branches nest at most ``depth`` deep."""
    if depth <= 0:
        return _small_tuples(st.one_of(blocks, returns))
    inner = regions(depth - 1)
    loop = st.builds(
        ir.Loop,
        var=names, start=exprs, stop=exprs, step=exprs, body=inner, name=names,
        kind=st.sampled_from(["loop", "loop_unroll", "implicit"]) | names,
        unroll=st.integers(-1, 8), submit_before_loop=st.booleans(), span=spans,
    )
    branch = st.builds(ir.Branch, exprs, inner, inner, spans)
    return _small_tuples(st.one_of(blocks, returns, loop, branch))


params = st.builds(
    ir.Param,
    name=names,
    kind=st.sampled_from(["tensor", "scalar"]) | names,
    type=st.none() | tensor_types,
    is_output=st.booleans(),
    value=values,
)

programs = st.builds(
    ir.Program,
    name=names,
    params=_small_tuples(params, 4),
    body=regions(3),
    locals=_small_tuples(st.builds(ir.LocalTensor, names, tensor_types), 2),
    paths=st.integers(0, 10**6),
    attrs=attrs,
)


def _f32(*dims) -> ir.TensorType:
    return ir.TensorType(tuple(ir.Const(d) for d in dims), "fp32")


def sample_program() -> ir.Program:
    """A small hand-written program with every node kind and every Expr kind."""
    C, V, Bin = ir.Const, ir.Var, ir.BinExpr
    i, b, n = V("i"), V("b"), V("n")
    rows = ir.ShapeOf("x", 0)
    row0 = Bin("*", i, C(16))
    view = ir.Op(
        ("0",), "view", (ir.TensorRef("x"),),
        (("offsets", (row0, C(0))), ("shape", (16, 64)),
         ("valid_shape", (Bin("min", C(16), Bin("-", rows, row0)), 64))),
        (_f32(16, 64),), tile=(16, 64), span=ir.Span(9, 12, 9, 40))
    scaled = ir.Op(("1",), "mul", (ir.Value("0"), C(0.1)), (), (_f32(16, 64),), tile=(16, 64),
                   span=ir.Span(10, 12, 10, 19))
    mm = ir.Op(("2",), "matmul", (ir.Value("1"), ir.TensorRef("w")), (("out_dtype", "fp32"), ("trans_b", True)),
               (ir.TensorType((C(16), n), "fp32"),), cube_tile=((16, 16), (64, 64), (32, 32)),
               span=ir.Span(11, 12, 11, 30))
    store = ir.Op((), "assemble", (ir.Value("2"), ir.TensorRef("out")), (("offsets", (row0, 0)),),
                  span=ir.Span(12, 8, 12, 30))
    exp = ir.Op(("3",), "exp", (ir.Value("2"),), (), (_f32(16, 32),), span=ir.Span(14, 12, 14, 25))
    fill = ir.Op(("4",), "full", (), (("value", -0.0),), (_f32(16, 32),))
    cond = Bin("and", Bin("<", ir.Read("lens", (b,)), C(-1)), ir.UnExpr("not", Bin("==", i, C(0))))
    branch = ir.Branch(cond, (ir.Block("b1", (exp,)),), (ir.Block("b2", (fill,)),), ir.Span(13, 8, 13, 20))
    n_blocks = Bin("//", Bin("+", rows, C(15)), C(16))
    inner = ir.Loop("i", C(0), n_blocks, C(1), (ir.Block("b0", (view, scaled, mm, store)), branch),
                    name="rows", kind="loop", unroll=2, submit_before_loop=True, span=ir.Span(8, 4, 15, 0))
    outer = ir.Loop("loop_idx_0", C(0), C(1), C(1), (inner, ir.Return((ir.Value("2"),))),
                    name="default_loop_1", kind="implicit", span=ir.Span(7, 0, 15, 0))
    params = (
        ir.Param("x", "tensor", ir.TensorType((rows, C(64)), "fp32")),
        ir.Param("w", "tensor", ir.TensorType((C(64), n), "fp32")),
        ir.Param("lens", "tensor", ir.TensorType((C(4),), "int32")),
        ir.Param("out", "tensor", ir.TensorType((rows, n), "fp32"), is_output=True),
        ir.Param("n", "scalar", value=32),
        ir.Param("b", "scalar", value=ir.UnExpr("-", C(1))),
    )
    return ir.Program("tiled_mm", params, (outer,), (ir.LocalTensor("acc", _f32(16, 32)),), paths=2,
                      attrs=(("source", "tiled_mm.py"),))
