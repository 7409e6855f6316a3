"""Lowering kernels to the control/compute IR: structure, path counts, diagnostics."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import live, pipeline  # noqa: E402
from pypto_ast import ir  # noqa: E402

HEAD = "import pypto\n\n"


def load(tmp_path, body: str, name="k.py"):
    path = tmp_path / name
    path.write_text(HEAD + textwrap.dedent(body))
    module = live.load_module(str(path))
    return module, live.find_kernel(module)


def lower(tmp_path, body, inputs=None, **kw):
    module, kernel = load(tmp_path, body)
    if inputs is None and hasattr(module, "example_inputs"):
        inputs = module.example_inputs()
    return pipeline.lower(kernel, inputs or {}, **kw)


def loops(program):
    return [n for n in ir.walk(program.body) if isinstance(n, ir.Loop)]


COND_LOOP = """
@pypto.frontend.jit
def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 32)
    for i in pypto.loop({trip}, name="L", idx_name="i", unroll_list={unroll}):
        if {test}:
            c[:] = a + 1.0
        else:
            c[:] = a - 1.0
"""


@pytest.mark.parametrize("trip,unroll,test,body_paths", [
    (20, "[4]", "i == 0", [16]),                      # every unrolled copy's cond is its own: 2**4
    (23, "[1, 2, 4]", "i == 0", [16, 4, 2]),          # 16 + 4 + 2 = 22 (pypto 0.2.0 also compiled 22)
    (20, "[4]", "pypto.is_loop_begin(i)", [2]),       # folds to False in copies 1..3
    (20, "[1]", "i == 0", [2]),
])
def test_paths_per_unrolled_body(tmp_path, trip, unroll, test, body_paths):
    program = lower(tmp_path, COND_LOOP.format(trip=trip, unroll=unroll, test=test))
    explicit = [l for l in loops(program) if l.kind == "loop"]
    assert [_paths(loop.body) for loop in explicit] == body_paths
    assert program.paths == sum(body_paths) + 1  # + the implicit loop(1) body


def test_unroll_segments_follow_pypto(tmp_path):
    program = lower(tmp_path, COND_LOOP.format(trip=20, unroll="[8, 2, 1]", test="True"))
    segs = [(l.start, l.stop, l.step, l.unroll) for l in loops(program) if l.kind == "loop"]
    assert segs == [
        (ir.Const(0), ir.Const(16), ir.Const(8), 8),
        (ir.Const(16), ir.Const(20), ir.Const(2), 2),
    ]  # the factor-1 segment is empty: 20 - 16 is divisible by 2


def test_implicit_loop1_wraps_the_body(tmp_path):
    program = lower(tmp_path, """
        @pypto.frontend.jit
        def k(a: pypto.Tensor((8, 8), pypto.DT_FP32), c: pypto.Tensor((8, 8), pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 8)
            t = a + 1.0
            for _ in pypto.loop(1):
                u = t * 2.0
            for _ in pypto.loop(1):
                c[:] = u + a
        """)
    top = program.body[0]
    assert isinstance(top, ir.Loop) and top.kind == "implicit" and top.name == "default_loop_1"
    kinds = [type(n).__name__ for n in top.body]
    assert kinds == ["Block", "Loop", "Loop"]  # not merged unless asked
    merged = lower(tmp_path, """
        @pypto.frontend.jit
        def k(a: pypto.Tensor((8, 8), pypto.DT_FP32), c: pypto.Tensor((8, 8), pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 8)
            t = a + 1.0
            for _ in pypto.loop(1):
                u = t * 2.0
            for _ in pypto.loop(1):
                c[:] = u + a
        """, merge_loop1=True)
    assert [type(n).__name__ for n in merged.body[0].body] == ["Block"]
    assert len(merged.body[0].body[0].ops) == 4


def test_dynamic_dims_stay_symbolic(tmp_path):
    program = lower(tmp_path, """
        @pypto.frontend.jit
        def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16, 64)
            n = x.shape[0]
            for i in pypto.loop((n + 15) // 16, name="rows", idx_name="i"):
                blk = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[pypto.min(16, n - i * 16), 64])
                pypto.assemble(pypto.exp(blk), [i * 16, 0], y)
        """, {"x": torch.zeros(40, 64), "y": torch.zeros(40, 64)})
    rows = [l for l in loops(program) if l.kind == "loop"][0]
    assert isinstance(rows.stop, ir.BinExpr) and ir.ShapeOf("x", 0) in _atoms(rows.stop)
    assert program.params[0].type.shape[0] == ir.ShapeOf("x", 0)


def _paths(region) -> int:
    """Control paths through a region: branches follow each other (the arms join again), and
    each one splits every path that reaches it."""
    n = 1
    for node in region:
        if isinstance(node, ir.Branch):
            n *= _paths(node.then) + _paths(node.orelse)
    return n


def _atoms(expr):
    if isinstance(expr, ir.BinExpr):
        return _atoms(expr.a) | _atoms(expr.b)
    return {expr}


@pytest.mark.parametrize("body,message,line", [
    ("    while True:\n        pass\n", "`while` is not supported", 6),
    ("    try:\n        c[:] = a\n    except Exception:\n        pass\n", "`try` is not supported", 6),
    ("    for i in pypto.loop(4):\n        break\n", "`break` inside a pypto loop", 7),
    ("    for i in pypto.loop(4):\n        for j in pypto.loop(2, idx_name='loop_idx_1'):\n            c[:] = a\n",
     "nested loops reuse idx_name", 7),
    ("    n = a[0, 0]\n", "scalar reads need an int32 tensor", 6),
    ("    for i in pypto.loop(4):\n        for r in range(i):\n            c[:] = a\n", "where Python needs a concrete", 7),
    ("    c[:] = pypto.cast(a, pypto.DT_FP16)\n", "pypto does not cast implicitly", 6),
    ("    if a > c:\n        c[:] = a\n", "a tensor has no truth value", 6),
])
def test_unsupported_constructs_are_located(tmp_path, body, message, line):
    source = ("@pypto.frontend.jit\ndef k(a: pypto.Tensor((8, 8), pypto.DT_FP32), "
              "c: pypto.Tensor((8, 8), pypto.DT_FP32)):\n    pypto.set_vec_tile_shapes(8, 8)\n" + body)
    with pytest.raises(pipeline.KernelErrors) as info:
        lower(tmp_path, source, {"a": torch.zeros(8, 8), "c": torch.zeros(8, 8)})
    (msg, span), *_ = info.value.findings
    assert message in msg
    assert span is not None and span.line == line


def test_wrong_shape_at_call_names_the_parameter(tmp_path):
    with pytest.raises(pipeline.KernelErrors) as info:
        lower(tmp_path, """
            @pypto.frontend.jit
            def k(a: pypto.Tensor((8, 8), pypto.DT_FP32), c: pypto.Tensor((8, 8), pypto.DT_FP32)):
                c[:] = a + 1.0
            """, {"a": torch.zeros(4, 8), "c": torch.zeros(8, 8)})
    msg, span = info.value.findings[0]
    assert "declared [8, 8]" in msg and span.line == 5


def test_calling_a_kernel_runs_it_on_the_interpreter(tmp_path):
    module, kernel = load(tmp_path, """
        @pypto.frontend.jit
        def k(a: pypto.Tensor((16, 32), pypto.DT_FP32), c: pypto.Tensor((16, 32), pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16, 32)
            for i in pypto.loop(2, idx_name="i"):
                blk = a[i * 8:(i + 1) * 8, :]
                c[i * 8:(i + 1) * 8, :] = pypto.exp(blk) * 2.0
        """)
    a, c = torch.randn(16, 32), torch.zeros(16, 32)
    assert kernel(a, c) is None
    torch.testing.assert_close(c, torch.exp(a) * 2.0)


def test_return_convention_with_pypto_ast_jit(tmp_path):
    path = tmp_path / "r.py"
    path.write_text("import pypto\nimport pypto_ast\n\n@pypto_ast.jit\n"
                    "def k(a: pypto.Tensor((8, 16), pypto.DT_FP32)):\n"
                    "    pypto.set_vec_tile_shapes(8, 16)\n    return pypto.amax(a, -1, keepdim=True), a * 3.0\n")
    module = live.load_module(str(path))
    a = torch.randn(8, 16)
    m, t = live.find_kernel(module)(a)
    torch.testing.assert_close(m, a.amax(-1, keepdim=True))
    torch.testing.assert_close(t, a * 3.0)
