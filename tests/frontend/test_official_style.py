"""Kernels written the way the official PyPTO tests and examples write them, lowered from their
source by ``pipeline.lower_file`` (never executed) and run on the torch interpreter and, for
some, the host backend (emitted Ascend C built with g++), against a torch reference computed
here.

The official style: ``@pypto.frontend.jit`` kernels nested in ``def test_...():`` functions
decorated with ``@pypto.options(...)`` (and pytest's own decorators), shapes from module
constants or from the ``torch.rand(shape, dtype=...)`` tensors the test passes, legacy
``with pypto.function(name, *tensors):`` bodies over ``pypto.tensor(shape, dtype, name)``,
constants imported from modules beside the kernel, and per-batch lengths read from a tensor
for ``valid_shape`` views.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import ir, pipeline  # noqa: E402
from support import BACKENDS, line_of, write  # noqa: E402


def signature(program) -> list:
    """(name, kind, shape, dtype, is_output) of every parameter; static dims as ints."""
    out = []
    for p in program.params:
        if p.kind != "tensor":
            out.append((p.name, p.kind, p.value))
            continue
        shape = tuple(d.value if isinstance(d, ir.Const) else d for d in p.type.shape)
        out.append((p.name, p.kind, shape, p.type.dtype, p.is_output))
    return out


def ops_of(program, opcode=None) -> list:
    found = [op for node in ir.walk(program.body) if isinstance(node, ir.Block) for op in node.ops]
    return [op for op in found if opcode is None or op.opcode == opcode]


def run(program, inputs: dict, backend: str) -> None:
    """Both backends write the outputs into the caller's tensors and return None here."""
    assert pipeline.run(program, inputs, backend) is None


def close(actual, expected, backend):
    # the host backend computes in C++ float; exp/div may differ in the last bits
    tol = {} if backend == "interp" else {"rtol": 1e-5, "atol": 1e-5}
    torch.testing.assert_close(actual, expected, **tol)


# =============================================================================================
# 2a. jit kernels nested in test functions
# =============================================================================================
NESTED = '''
    import functools

    import pytest
    import torch

    import pypto

    ROWS, COLS = 32, 64
    DTYPE = pypto.DT_FP32


    def on_device(func):
        """A test-side decorator the kernel knows nothing about."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        return wrapper


    @pypto.options(pass_options={"enable_slice": True})
    def test_add_mul_module_constants():
        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
        def add_mul_kernel(
            a: pypto.Tensor((ROWS, COLS), DTYPE),
            b: pypto.Tensor((ROWS, COLS), DTYPE),
            out: pypto.Tensor((ROWS, COLS), DTYPE),
        ):
            pypto.set_vec_tile_shapes(16, COLS)
            out[:] = (a + b) * a

        a = torch.rand((ROWS, COLS), dtype=torch.float32)
        b = torch.rand((ROWS, COLS), dtype=torch.float32)
        out = torch.empty((ROWS, COLS), dtype=torch.float32)
        add_mul_kernel(a, b, out)


    @on_device
    @pypto.options(name="softmax_scope", vec_tile_shapes=[4, 32])
    @pytest.mark.parametrize("rows, cols", [(16, 128), (64, 256)])
    def test_softmax_shapes_from_the_call(rows, cols):
        scale = 0.5

        @pypto.frontend.jit
        def softmax_kernel(
            x: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
            y: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
        ):
            pypto.set_vec_tile_shapes(8, cols)
            z = x * scale
            row_max = pypto.amax(z, -1, keepdim=True)
            e = pypto.exp(z - row_max)
            y[:] = e / pypto.sum(e, -1, keepdim=True)

        x = torch.rand((rows, cols), dtype=torch.float32)
        y = torch.zeros((rows, cols), dtype=torch.float32)
        softmax_kernel(x, y)


    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def int_add(
        a: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_INT32],
        b: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_INT32],
        result: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_INT32],
    ):
        pypto.set_vec_tile_shapes(32, 32)
        for _ in pypto.loop(1, name="s0", idx_name="k"):
            result.move(a + b)


    def test_int_add_module_kernel():
        tiling = 32
        n, m = tiling * 1, tiling * 2
        shape = (n, m)
        a_data = torch.full((n, m), 2, dtype=torch.int32)
        b_data = torch.ones((n, m), dtype=torch.int32)
        result = torch.zeros(shape, dtype=torch.int32)
        int_add(a_data, b_data, result)


    if __name__ == "__main__":
        test_add_mul_module_constants()
        test_int_add_module_kernel()
'''


@pytest.fixture
def nested(tmp_path) -> Path:
    return write(tmp_path / "test_official_nested.py", NESTED)


def test_nested_kernels_are_listed_under_their_test_functions(nested):
    kernels = pipeline.list_kernels(pipeline.read_source(str(nested)))
    assert [(k.name, k.kind, k.line) for k in kernels] == [
        ("test_add_mul_module_constants.add_mul_kernel", "jit", line_of(nested, "def add_mul_kernel(")),
        ("test_softmax_shapes_from_the_call.softmax_kernel", "jit", line_of(nested, "def softmax_kernel(")),
        ("int_add", "jit", line_of(nested, "def int_add(")),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_kernel_with_module_constant_shapes(nested, backend):
    program = pipeline.lower_file(str(nested), "add_mul_kernel")
    assert signature(program) == [
        ("a", "tensor", (32, 64), "fp32", False),
        ("b", "tensor", (32, 64), "fp32", False),
        ("out", "tensor", (32, 64), "fp32", True),
    ]
    assert {op.tile for op in ops_of(program) if op.opcode in ("add", "mul")} == {(16, 64)}
    g = torch.Generator().manual_seed(1)
    a, b = torch.rand(32, 64, generator=g), torch.rand(32, 64, generator=g)
    out = torch.full((32, 64), float("nan"))
    run(program, {"a": a, "b": b, "out": out}, backend)
    close(out, (a + b) * a, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_kernel_shapes_from_the_first_parametrize_case(nested, backend):
    """Decorators on the test function (an unknown one, pypto.options, parametrize) do not hide
    the kernel; its STATIC dims come from the test's torch.rand((rows, cols), dtype=...) call,
    with pytest's first case, and it reads `scale` from the test function's locals."""
    program = pipeline.lower_file(str(nested), "test_softmax_shapes_from_the_call.softmax_kernel")
    assert signature(program) == [
        ("x", "tensor", (16, 128), "fp32", False),
        ("y", "tensor", (16, 128), "fp32", True),
    ]
    # the kernel's own set_vec_tile_shapes wins over the test function's options scope
    assert {op.tile for op in ops_of(program) if op.opcode in ("exp", "amax", "sum")} == {(8, 128)}
    x = torch.randn(16, 128, generator=torch.Generator().manual_seed(2)) * 3.0
    y = torch.zeros(16, 128)
    run(program, {"x": x, "y": y}, backend)
    close(y, torch.softmax(x * 0.5, dim=-1), backend)


def test_nested_kernel_shape_option_overrides_the_call(nested):
    shapes = {"x": ((64, 128), None), "y": ((64, 128), None)}  # what --shape x=64x128 --shape y=64x128 passes
    program = pipeline.lower_file(str(nested), "softmax_kernel", shapes=shapes)
    assert [s[2] for s in signature(program)] == [(64, 128), (64, 128)]
    x, y = torch.randn(64, 128), torch.zeros(64, 128)
    run(program, {"x": x, "y": y}, "interp")
    torch.testing.assert_close(y, torch.softmax(x * 0.5, dim=-1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_kernel_with_static_dims_from_a_test_function_call(nested, backend):
    program = pipeline.lower_file(str(nested), "int_add")
    assert signature(program) == [
        ("a", "tensor", (32, 64), "int32", False),
        ("b", "tensor", (32, 64), "int32", False),
        ("result", "tensor", (32, 64), "int32", True),
    ]
    a = torch.randint(-100, 100, (32, 64), dtype=torch.int32, generator=torch.Generator().manual_seed(3))
    b = torch.randint(-100, 100, (32, 64), dtype=torch.int32, generator=torch.Generator().manual_seed(4))
    result = torch.zeros(32, 64, dtype=torch.int32)
    run(program, {"a": a, "b": b, "result": result}, backend)
    assert torch.equal(result, a + b)


OPTIONS_TILE = '''
    import torch

    import pypto

    ROWS, COLS = 32, 64


    @pypto.options(name="opt_scope", vec_tile_shapes=[16, COLS])
    def test_tile_from_the_options_scope():
        @pypto.frontend.jit
        def sigmoid_kernel(
            x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
            y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
        ):
            y[:] = pypto.sigmoid(x)

        x = torch.rand((ROWS, COLS), dtype=torch.float32)
        y = torch.empty((ROWS, COLS), dtype=torch.float32)
        sigmoid_kernel(x, y)
'''


def test_kernel_in_an_options_scoped_test_lowers_and_runs(tmp_path):
    program = pipeline.lower_file(str(write(tmp_path / "test_opts.py", OPTIONS_TILE)))
    x, y = torch.randn(32, 64), torch.zeros(32, 64)
    run(program, {"x": x, "y": y}, "interp")
    torch.testing.assert_close(y, torch.sigmoid(x))


def test_kernel_inherits_the_tile_shape_of_the_options_scope(tmp_path):
    program = pipeline.lower_file(str(write(tmp_path / "test_opts.py", OPTIONS_TILE)))
    (sigmoid,) = ops_of(program, "sigmoid")
    assert sigmoid.tile == (16, 64)


# the official examples pick the run mode at import time; every constant after it must stay known
RUN_MODE_HEADERS = {
    "if-statement": '''
        import sys

        import pypto


        def _run_mode_from_argv(default="npu"):
            for arg in sys.argv:
                if arg.startswith("--run_mode="):
                    return arg.split("=", 1)[1]
            return default


        run_mode = pypto.RunMode.NPU
        if _run_mode_from_argv("npu") == "sim":
            run_mode = pypto.RunMode.SIM
    ''',
    "env-if-else": '''
        import os

        import pypto

        if os.environ.get("PYPTO_RUN_MODE") == "sim":
            run_mode = pypto.RunMode.SIM
        else:
            run_mode = pypto.RunMode.NPU
    ''',
    "conditional-expression": '''
        import os

        import pypto

        run_mode = pypto.RunMode.SIM if os.environ.get("PYPTO_RUN_MODE") == "sim" else pypto.RunMode.NPU
    ''',
}

AFTER_RUN_MODE = '''
    SHAPE = (32, 64)


    @pypto.frontend.jit(runtime_options={"run_mode": run_mode})
    def add_one(x: pypto.Tensor(SHAPE, pypto.DT_FP32), y: pypto.Tensor(SHAPE, pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x + 1.0
'''


def test_constants_before_an_undecidable_module_level_branch_stay_known(tmp_path):
    path = write(tmp_path / "mode_first.py", '''
        import os

        import pypto

        SHAPE = (32, 64)

        if os.environ.get("PYPTO_RUN_MODE") == "sim":
            run_mode = pypto.RunMode.SIM
        else:
            run_mode = pypto.RunMode.NPU


        @pypto.frontend.jit(runtime_options={"run_mode": run_mode})
        def add_one(x: pypto.Tensor(SHAPE, pypto.DT_FP32), y: pypto.Tensor(SHAPE, pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16, 64)
            y[:] = x + 1.0
        ''')
    assert [s[2] for s in signature(pipeline.lower_file(str(path)))] == [(32, 64), (32, 64)]


@pytest.mark.parametrize("header", list(RUN_MODE_HEADERS))
def test_constants_after_an_undecidable_module_level_branch_stay_known(tmp_path, header):
    """Regression (fixed in 25167f6, "a module's names survive a module-level if"): the branch
    merge used to replace the frame's env dict, detaching ModuleScope.env, so SHAPE below was
    unknown and the kernel failed with a misleading PTO104."""
    source = textwrap.dedent(RUN_MODE_HEADERS[header]).lstrip("\n") + textwrap.dedent(AFTER_RUN_MODE)
    path = tmp_path / "mode_from_argv.py"
    path.write_text(source)
    program = pipeline.lower_file(str(path))
    assert [s[2] for s in signature(program)] == [(32, 64), (32, 64)]


CALL_EXPRESSIONS = {
    "scaled-rand": "torch.rand((32, 64), dtype=torch.float32) * 200 - 100",  # official test_softmax style
    "ones-times-two": "torch.ones((32, 64), dtype=torch.float32) * 2",  # official test_multi_jit_scope style
    "tensor-literal": "torch.tensor([[1.0] * 64] * 32, dtype=torch.float32)",
    "conversions": "torch.rand(32, 64).to(torch.float32).contiguous()",
}


def _static_dims_kernel(tmp_path, expr):
    return write(tmp_path / "test_call_expr.py", f'''
        import torch

        import pypto


        def test_relu():
            @pypto.frontend.jit
            def relu_kernel(
                x: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
                y: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
            ):
                pypto.set_vec_tile_shapes(16, 64)
                y[:] = pypto.relu(x)

            x = {expr}
            y = torch.zeros((32, 64), dtype=torch.float32)
            relu_kernel(x, y)
        ''')


@pytest.mark.parametrize("expr", list(CALL_EXPRESSIONS.values()), ids=list(CALL_EXPRESSIONS))
def test_call_site_shape_through_torch_expressions(tmp_path, expr):
    """Regression (fixed in 25167f6, frontend/torchhost.py): arithmetic on the test's torch
    tensors, torch.tensor(literal) and conversions keep the argument's static shape."""
    path = _static_dims_kernel(tmp_path, expr)
    program = pipeline.lower_file(str(path))
    assert [s[2] for s in signature(program)] == [(32, 64), (32, 64)]
    x, y = torch.randn(32, 64), torch.zeros(32, 64)
    run(program, {"x": x, "y": y}, "interp")
    torch.testing.assert_close(y, torch.relu(x))


FACTORY = '''
    import torch

    import pypto


    def make_stack_kernel(a_shape, b_shape, dim):
        if dim == 0:
            out_shape = (a_shape[0] + b_shape[0], a_shape[1])
        else:
            out_shape = (a_shape[0], a_shape[1] + b_shape[1])

        @pypto.frontend.jit
        def stack_kernel(
            a: pypto.Tensor(a_shape, pypto.DT_FP32),
            b: pypto.Tensor(b_shape, pypto.DT_FP32),
            out: pypto.Tensor(out_shape, pypto.DT_FP32),
        ):
            tiles = [8] * len(a.shape)
            pypto.set_vec_tile_shapes(*tiles)
            out[:] = pypto.concat([a, b], dim=dim)

        return stack_kernel


    def test_stack_rows():
        a = torch.ones((16, 32), dtype=torch.float32)
        b = torch.zeros((8, 32), dtype=torch.float32)
        out = torch.empty((24, 32), dtype=torch.float32)
        {call}
'''

FACTORY_CALLS = {
    "same-name": "stack_kernel = make_stack_kernel(a.shape, b.shape, 0)\n        stack_kernel(a, b, out)",
    "direct": "make_stack_kernel(a.shape, b.shape, 0)(a, b, out)",  # the official examples' form
    "other-name": "kernel = make_stack_kernel(a.shape, b.shape, 0)\n        kernel(a, b, out)",
}


def _factory(tmp_path, form):
    return write(tmp_path / "test_factory.py", FACTORY.replace("{call}", FACTORY_CALLS[form]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_from_a_factory_bound_to_its_own_name(tmp_path, backend):
    program = pipeline.lower_file(str(_factory(tmp_path, "same-name")))
    assert [s[2] for s in signature(program)] == [(16, 32), (8, 32), (24, 32)]
    a, b, out = torch.randn(16, 32), torch.randn(8, 32), torch.zeros(24, 32)
    run(program, {"a": a, "b": b, "out": out}, backend)
    close(out, torch.cat([a, b], dim=0), backend)


@pytest.mark.parametrize("form", ["direct", "other-name"])
def test_kernel_from_a_factory_called_as_the_official_examples_do(tmp_path, form):
    program = pipeline.lower_file(str(_factory(tmp_path, form)))
    assert [s[2] for s in signature(program)] == [(16, 32), (8, 32), (24, 32)]


# =============================================================================================
# 2b. legacy bodies: with pypto.function(name, *tensors)
# =============================================================================================
LEGACY = '''
    import pypto

    ROWS, COLS = 64, 128


    def build_mul_add(rows=ROWS, cols=COLS):
        a = pypto.tensor([rows, cols], pypto.DT_FP32, "a_in")
        b = pypto.tensor([rows, cols], pypto.DT_FP32, "b_in")
        c = pypto.tensor([rows, cols], pypto.DT_FP32, "c_out")
        with pypto.function("LEGACY_MUL_ADD", a, b, c):
            for _ in pypto.loop(1, name="l", idx_name="i"):
                pypto.set_vec_tile_shapes(32, cols)
                c.move(a * b + 1.0)


    @pypto.options(pass_options={"enable_slice": True})
    def test_legacy_row_blocks():
        x_shape = [64, 64]
        dtype = pypto.DT_FP32
        x = pypto.tensor(x_shape, dtype)
        res = pypto.tensor(x_shape, dtype)
        with pypto.function("LEGACY_ROW_BLOCKS", x, res):
            pypto.set_vec_tile_shapes(16, 64)
            for blk in pypto.loop(x_shape[0] // 16, name="LOOP_L0", idx_name="b_idx"):
                part = pypto.view(x, [16, 64], [blk * 16, 0])
                pypto.assemble(pypto.exp(part) - 1.0, [blk * 16, 0], res)
'''


@pytest.fixture
def legacy(tmp_path) -> Path:
    return write(tmp_path / "legacy_bodies.py", LEGACY)


def test_legacy_bodies_are_listed(legacy):
    kernels = pipeline.list_kernels(pipeline.read_source(str(legacy)))
    assert [(k.name, k.kind, k.line) for k in kernels] == [
        ("build_mul_add.LEGACY_MUL_ADD", "legacy", line_of(legacy, 'with pypto.function("LEGACY_MUL_ADD"')),
        ("test_legacy_row_blocks.LEGACY_ROW_BLOCKS", "legacy", line_of(legacy, 'with pypto.function("LEGACY_ROW')),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_legacy_body_with_named_tensors(legacy, backend):
    program = pipeline.lower_file(str(legacy), "LEGACY_MUL_ADD")
    assert program.name == "LEGACY_MUL_ADD"
    # the parameters are the tensors passed to pypto.function, named by pypto.tensor's name
    assert signature(program) == [
        ("a_in", "tensor", (64, 128), "fp32", False),
        ("b_in", "tensor", (64, 128), "fp32", False),
        ("c_out", "tensor", (64, 128), "fp32", True),
    ]
    loops = [n for n in ir.walk(program.body) if isinstance(n, ir.Loop) and n.kind == "loop"]
    assert [(lp.name, lp.var) for lp in loops] == [("l", "i")]
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(64, 128, generator=g), torch.randn(64, 128, generator=g)
    c = torch.zeros(64, 128)
    run(program, {"a_in": a, "b_in": b, "c_out": c}, backend)
    close(c, a * b + 1.0, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_legacy_body_in_a_test_function_with_unnamed_tensors(legacy, backend):
    program = pipeline.lower_file(str(legacy), "test_legacy_row_blocks.LEGACY_ROW_BLOCKS")
    assert signature(program) == [
        ("x", "tensor", (64, 64), "fp32", False),
        ("res", "tensor", (64, 64), "fp32", True),
    ]
    (loop,) = [n for n in ir.walk(program.body) if isinstance(n, ir.Loop) and n.kind == "loop"]
    assert (loop.name, loop.stop) == ("LOOP_L0", ir.Const(4))
    x, res = torch.randn(64, 64), torch.zeros(64, 64)
    run(program, {"x": x, "res": res}, backend)
    close(res, torch.exp(x) - 1.0, backend)


def test_legacy_body_shapes_from_the_builder_call(tmp_path):
    path = write(tmp_path / "legacy_call.py", '''
        import pypto


        def build(rows, cols):
            a = pypto.tensor([rows, cols], pypto.DT_FP32, "a")
            b = pypto.tensor([rows, cols], pypto.DT_FP32, "b")
            with pypto.function("LEGACY_EXP", a, b):
                for _ in pypto.loop(1, name="l", idx_name="i"):
                    pypto.set_vec_tile_shapes(32, cols)
                    b.move(pypto.exp(a))


        def test_legacy_exp():
            build(64, 128)
        ''')
    program = pipeline.lower_file(str(path))
    assert [s[2] for s in signature(program)] == [(64, 128), (64, 128)]


def test_legacy_body_scalars_given_like_shape_options(tmp_path):
    """What ``--shape rows=64 --shape cols=128`` does for the builder's parameters."""
    path = write(tmp_path / "legacy_call.py", '''
        import pypto


        def build(rows, cols):
            a = pypto.tensor([rows, cols], pypto.DT_FP32, "a")
            b = pypto.tensor([rows, cols], pypto.DT_FP32, "b")
            with pypto.function("LEGACY_EXP", a, b):
                for _ in pypto.loop(1, name="l", idx_name="i"):
                    pypto.set_vec_tile_shapes(32, cols)
                    b.move(pypto.exp(a))
        ''')
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(path))
    assert info.value.code == "PTO104" and "`a`" in info.value.findings[0][0]
    program = pipeline.lower_file(str(path), shapes={"rows": 64, "cols": 128})
    assert [s[2] for s in signature(program)] == [(64, 128), (64, 128)]
    a, b = torch.randn(64, 128), torch.zeros(64, 128)
    run(program, {"a": a, "b": b}, "interp")
    torch.testing.assert_close(b, torch.exp(a))


# =============================================================================================
# 2c. constants from modules beside the kernel
# =============================================================================================
SIBLING_KERNEL = '''
    import pypto

    from my_consts import ROWS, COLS
    import my_tiles


    @pypto.frontend.jit
    def scaled_exp(
        x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
        y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    ):
        pypto.set_vec_tile_shapes(*my_tiles.VEC_TILE)
        y[:] = pypto.exp(x * my_tiles.SCALE)
'''


@pytest.fixture
def siblings(tmp_path) -> Path:
    write(tmp_path / "my_consts.py", '''
        """Shapes shared by the kernels (constants only)."""
        ROWS, COLS = 48, 64
        ''')
    write(tmp_path / "my_tiles.py", '''
        from my_consts import COLS

        VEC_TILE = (16, COLS)
        SCALE = 0.5
        ''')
    return write(tmp_path / "sibling_kernel.py", SIBLING_KERNEL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sibling_constants_resolve(siblings, backend):
    program = pipeline.lower_file(str(siblings))
    assert signature(program) == [
        ("x", "tensor", (48, 64), "fp32", False),
        ("y", "tensor", (48, 64), "fp32", True),
    ]
    assert {op.tile for op in ops_of(program) if op.opcode in ("mul", "exp")} == {(16, 64)}
    x, y = torch.randn(48, 64), torch.zeros(48, 64)
    run(program, {"x": x, "y": y}, backend)
    close(y, torch.exp(x * 0.5), backend)


def test_sibling_module_is_read_not_imported(siblings):
    """A sibling with NPU-only imports and side effects still gives its constants."""
    (siblings.parent / "my_consts.py").write_text(
        "import os\nimport torch_npu  # noqa: F401\n"
        "open(os.path.join(os.path.dirname(__file__), 'MARKER'), 'w').close()\nROWS, COLS = 48, 64\n")
    program = pipeline.lower_file(str(siblings))
    assert [s[2] for s in signature(program)] == [(48, 64), (48, 64)]
    assert not (siblings.parent / "MARKER").exists()


def test_sibling_package_imports(tmp_path):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "__init__.py").write_text("")
    (tmp_path / "cfg" / "tiles.py").write_text("BLOCK = 16\nROWS, COLS = 32, 64\n")
    path = write(tmp_path / "pkg_kernel.py", '''
        import pypto

        from cfg.tiles import BLOCK
        from cfg import tiles
        import cfg.tiles as tl


        @pypto.frontend.jit
        def k(x: pypto.Tensor([tiles.ROWS, tl.COLS], pypto.DT_FP32),
              y: pypto.Tensor([tiles.ROWS, tl.COLS], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(BLOCK, tiles.COLS)
            y[:] = x * float(tl.BLOCK)
        ''')
    program = pipeline.lower_file(str(path))
    assert [s[2] for s in signature(program)] == [(32, 64), (32, 64)]
    x, y = torch.randn(32, 64), torch.zeros(32, 64)
    run(program, {"x": x, "y": y}, "interp")
    torch.testing.assert_close(y, x * 16.0)


@pytest.mark.parametrize("missing", ["my_consts.py", "my_tiles.py"])
def test_missing_sibling_gives_a_located_error(siblings, missing):
    (siblings.parent / missing).unlink()
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(siblings))
    err = info.value
    assert err.code.startswith("PTO1") and err.path == str(siblings)
    (message, span), *_ = err.findings
    assert span is not None
    needle = "x: pypto.Tensor([ROWS" if missing == "my_consts.py" else "set_vec_tile_shapes(*my_tiles"
    assert span.line == line_of(siblings, needle), message


def test_missing_sibling_error_names_the_module_or_the_constant(siblings):
    (siblings.parent / "my_consts.py").unlink()
    (siblings.parent / "my_tiles.py").unlink()
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(siblings))
    message = info.value.findings[0][0]
    assert "my_consts" in message or "ROWS" in message, message


# =============================================================================================
# 2d. the FAQ's valid_shape example: per-batch lengths read from a tensor
# =============================================================================================
VARLEN = '''
    import pypto

    B, S, H = 4, 32, 64


    @pypto.frontend.jit
    def add_one_varlen(
        input: pypto.Tensor([B, S, H], pypto.DT_FP32),
        act_seqs: pypto.Tensor([B], pypto.DT_INT32),
        out: pypto.Tensor([B, S, H], pypto.DT_FP32),
    ):
        pypto.set_vec_tile_shapes(1, 16, H)
        for b_idx in pypto.loop(B, name="b_loop", idx_name="b"):
            cur_seq = act_seqs[b_idx]
            a0 = pypto.view(input, [1, S, H], [b_idx, 0, 0], valid_shape=[1, cur_seq, H])
            a1 = a0 + 1.0
            out[b_idx:, :, :] = a1
'''
B, S, H = 4, 32, 64


@pytest.fixture
def varlen(tmp_path):
    return pipeline.lower_file(str(write(tmp_path / "varlen_faq.py", VARLEN)))


def test_valid_shape_example_lowers_with_the_length_read_from_the_tensor(varlen):
    assert signature(varlen) == [
        ("input", "tensor", (4, 32, 64), "fp32", False),
        ("act_seqs", "tensor", (4,), "int32", False),
        ("out", "tensor", (4, 32, 64), "fp32", True),
    ]
    (loop,) = [n for n in ir.walk(varlen.body) if isinstance(n, ir.Loop) and n.kind == "loop"]
    assert (loop.name, loop.var, loop.stop) == ("b_loop", "b", ir.Const(4))
    (view,) = ops_of(varlen, "view")
    assert view.attr("shape") == (1, 32, 64) and view.attr("offsets")[0] == ir.Var("b")
    valid = view.attr("valid_shape")
    assert valid[0] == 1 and valid[2] == 64
    assert isinstance(valid[1], ir.Read) and valid[1].tensor == "act_seqs"  # act_seqs[b], read at run time
    (assemble,) = ops_of(varlen, "assemble")
    assert assemble.attr("offsets")[0] == ir.Var("b")  # out[b_idx:, :, :] assembles at [b, 0, 0]


@pytest.mark.parametrize("lengths", [[32, 5, 17, 1], [0, 32, 3, 16]], ids=["ragged", "with-empty"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_valid_shape_example_computes_the_valid_rows(varlen, backend, lengths):
    # What pypto leaves in out[b, cur_seq:] is not specified by the pypto docs we have
    # (reference §6/§7.2 only say valid_shape is "the real data extent inside the block"), so
    # `out` starts as zeros and only rows < cur_seq are compared with pypto's result,
    # input + 1.0; the padded rows are only required not to crash the run.  pypto-ast's own
    # convention for them is checked separately below.
    g = torch.Generator().manual_seed(6)
    inp = torch.randn(B, S, H, generator=g)
    act_seqs = torch.tensor(lengths, dtype=torch.int32)
    out = torch.zeros(B, S, H)
    run(varlen, {"input": inp, "act_seqs": act_seqs, "out": out}, backend)
    for b, n in enumerate(lengths):
        close(out[b, :n], inp[b, :n] + 1.0, backend)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_valid_shape_padding_rows_keep_the_callers_values(varlen, backend):
    """pypto-ast's documented convention (ir/interp.py: assemble writes the value's *valid*
    data; examples/clean_varlen_valid_shape.py's reference): rows past cur_seq are untouched."""
    lengths = [32, 5, 17, 1]
    inp = torch.randn(B, S, H)
    out = torch.full((B, S, H), -7.0)
    run(varlen, {"input": inp, "act_seqs": torch.tensor(lengths, dtype=torch.int32), "out": out}, backend)
    expected = torch.full((B, S, H), -7.0)
    for b, n in enumerate(lengths):
        expected[b, :n] = inp[b, :n] + 1.0
    close(out, expected, backend)


# =============================================================================================
# 2e. x.shape[i], STATIC / DYNAMIC dims, helpers, static Python loops, comprehensions, concat
# =============================================================================================
SHAPES_AND_HELPERS = '''
    import torch

    import pypto

    BLOCK = 16
    COLS = 64
    F32 = pypto.DT_FP32


    def _shifted_square(t, shift):
        """Plain helper: Python runs it while tracing, so it may return a tensor."""
        u = t - shift
        return u * u


    @pypto.frontend.function
    def _axpb(src: pypto.Tensor([BLOCK, COLS], F32), dst: pypto.Tensor([BLOCK, COLS], F32), alpha: float,
              beta: float):
        dst[:] = src * alpha + beta


    def test_dynamic_rows():
        @pypto.frontend.jit
        def dyn_kernel(
            x: pypto.Tensor([pypto.DYNAMIC, COLS], F32),
            y: pypto.Tensor([pypto.DYNAMIC, COLS], F32),
        ):
            pypto.set_vec_tile_shapes(BLOCK, COLS)
            rows = x.shape[0]
            cols = x.shape[1]
            for i in pypto.loop((rows + BLOCK - 1) // BLOCK, name="row_loop", idx_name="i"):
                valid = pypto.min(BLOCK, rows - i * BLOCK)
                blk = pypto.view(x, [BLOCK, cols], [i * BLOCK, 0], valid_shape=[valid, cols])
                pypto.assemble(_shifted_square(blk, 0.5), [i * BLOCK, 0], y)

        x = torch.rand((40, COLS), dtype=torch.float32)
        y = torch.zeros((40, COLS), dtype=torch.float32)
        dyn_kernel(x, y)


    def test_static_blocks():
        @pypto.frontend.jit
        def blocks_kernel(
            x: pypto.Tensor([pypto.STATIC, pypto.STATIC], F32),
            y: pypto.Tensor([pypto.STATIC, pypto.STATIC], F32),
            head: pypto.Tensor([BLOCK, COLS], F32),
        ):
            pypto.set_vec_tile_shapes(BLOCK, COLS)
            n_blocks = x.shape[0] // BLOCK
            parts = [pypto.view(x, [BLOCK, x.shape[1]], [k * BLOCK, 0]) for k in range(n_blocks)]
            y[:] = pypto.concat([pypto.exp(p) for p in reversed(parts)], dim=0)
            for k in range(n_blocks):
                if k == 0:
                    _axpb(parts[k], head, 2.0, -1.0)

        x = torch.rand((64, COLS), dtype=torch.float32)
        y = torch.zeros((64, COLS), dtype=torch.float32)
        head = torch.zeros((BLOCK, COLS), dtype=torch.float32)
        blocks_kernel(x, y, head)
'''


@pytest.fixture
def shapes_file(tmp_path) -> Path:
    return write(tmp_path / "test_shapes_helpers.py", SHAPES_AND_HELPERS)


def test_dynamic_dims_stay_symbolic(shapes_file):
    program = pipeline.lower_file(str(shapes_file), "dyn_kernel")
    x, y = program.params
    assert x.type.shape == (ir.ShapeOf("x", 0), ir.Const(64))
    assert y.type.shape == (ir.ShapeOf("y", 0), ir.Const(64)) and y.is_output
    (loop,) = [n for n in ir.walk(program.body) if isinstance(n, ir.Loop) and n.kind == "loop"]
    assert loop.name == "row_loop" and ir.ShapeOf("x", 0) in _atoms(loop.stop)
    # the plain helper's ops are inlined (located in the helper), with the kernel's tile shape
    assert [op.opcode for op in ops_of(program)] == ["view", "sub", "mul", "assemble"]
    assert {op.tile for op in ops_of(program) if op.opcode in ("sub", "mul")} == {(16, 64)}
    helper_line = line_of(shapes_file, "u = t - shift")
    assert ops_of(program, "sub")[0].span.line == helper_line


@pytest.mark.parametrize("rows", [40, 33, 16, 1])
@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_rows_run_for_any_row_count(shapes_file, backend, rows):
    program = pipeline.lower_file(str(shapes_file), "dyn_kernel")
    x = torch.rand(rows, 64, generator=torch.Generator().manual_seed(rows))
    y = torch.full((rows, 64), float("nan"))
    run(program, {"x": x, "y": y}, backend)
    close(y, (x - 0.5) ** 2, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_dims_comprehension_concat_and_function_helper(shapes_file, backend):
    program = pipeline.lower_file(str(shapes_file), "blocks_kernel")
    assert signature(program) == [
        ("x", "tensor", (64, 64), "fp32", False),
        ("y", "tensor", (64, 64), "fp32", True),
        ("head", "tensor", (16, 64), "fp32", True),
    ]
    views = ops_of(program, "view")
    assert [v.attr("offsets")[0] for v in views][:4] == [0, 16, 32, 48]  # one view per static block
    (concat,) = ops_of(program, "concat")
    assert concat.attr("dim") == 0 and concat.types[0].shape == (ir.Const(64), ir.Const(64))
    assert len(ops_of(program, "exp")) == 4
    x = torch.rand(64, 64, generator=torch.Generator().manual_seed(7))
    y, head = torch.zeros(64, 64), torch.zeros(16, 64)
    run(program, {"x": x, "y": y, "head": head}, backend)
    close(y, torch.cat([torch.exp(x[k * 16:(k + 1) * 16]) for k in reversed(range(4))], dim=0), backend)
    close(head, x[:16] * 2.0 - 1.0, backend)


def test_frontend_function_helper_lowers_on_its_own(shapes_file):
    """A @pypto.frontend.function helper is a kernel of its own for --kernel (its scalar
    parameters then need values, like --shape alpha=2.0)."""
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(shapes_file), "_axpb")
    assert info.value.code == "PTO104" and "`alpha`" in info.value.findings[0][0]
    program = pipeline.lower_file(str(shapes_file), "_axpb", shapes={"alpha": 3.0, "beta": 0.5})
    src, dst = torch.randn(16, 64), torch.zeros(16, 64)
    run(program, {"src": src, "dst": dst, "alpha": 3.0, "beta": 0.5}, "interp")
    torch.testing.assert_close(dst, src * 3.0 + 0.5)


def _atoms(expr) -> set:
    if isinstance(expr, ir.BinExpr):
        return _atoms(expr.a) | _atoms(expr.b)
    return {expr}
