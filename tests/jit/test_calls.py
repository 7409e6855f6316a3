"""What ``@pypto_ast.jit`` accepts and how its in-memory cache behaves: in-place outputs and
return values, the annotation forms of ``pypto.frontend.jit`` (``pypto.Tensor(...)``,
``pypto.Tensor[[...], dt]``, STATIC and DYNAMIC dims), ``int``/``float`` build-time scalars with
defaults and keywords, kernels defined inside functions, warm calls that skip lowering, and
invalidation by a source edit or a rebound global."""

from __future__ import annotations

import logging
import os

import pytest

torch = pytest.importorskip("torch")

from jit_support import BACKENDS, needs_cxx  # noqa: E402

import pypto_ast  # noqa: E402
from pypto_ast import knobs  # noqa: E402

KERNELS = '''
import pypto
import pypto_ast

F32 = pypto.DT_FP32
F16 = pypto.DT_FP16
ROWS, COLS = 32, 64
SCALE = 2.0


@pypto_ast.jit
def add(x: pypto.Tensor((ROWS, COLS), F32), y: pypto.Tensor((ROWS, COLS), F32), out: pypto.Tensor((ROWS, COLS), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x + y


@pypto_ast.jit
def gated(x: pypto.Tensor((ROWS, COLS), F32), gate: pypto.Tensor((ROWS, COLS), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    return x * pypto.sigmoid(gate) + 1.0


@pypto_ast.jit
def pair(x: pypto.Tensor((ROWS, COLS), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    return x + 1.0, pypto.exp(x)


@pypto_ast.jit
def linear_and_max(a: pypto.Tensor((32, 64), F16), w: pypto.Tensor((64, 32), F16)):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 64)
    y = pypto.cast(pypto.matmul(a, w, pypto.DT_FP32), F16)
    return y, pypto.amax(a, -1, keepdim=True)


@pypto_ast.jit
def bracket_static(x: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_FP32],
                   y: pypto.Tensor([pypto.STATIC, pypto.STATIC], F32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = pypto.exp(x) + 1.0


@pypto_ast.jit
def silu_rows(x: pypto.Tensor([pypto.DYNAMIC, 128], F32), y: pypto.Tensor([pypto.DYNAMIC, 128], F32)):
    pypto.set_vec_tile_shapes(16, 128)
    n = x.shape[0]
    for i in pypto.loop((n + 16 - 1) // 16, name="row_blocks", idx_name="i"):
        valid = pypto.min(16, n - i * 16)
        blk = pypto.view(x, [16, 128], [i * 16, 0], valid_shape=[valid, 128])
        pypto.assemble(blk * pypto.sigmoid(blk), [i * 16, 0], y)


@pypto_ast.jit
def branches(x: pypto.Tensor((16, 64), F32), y: pypto.Tensor((16, 64), F32), mode: int = 0, scale: float = 1.0):
    pypto.set_vec_tile_shapes(16, 64)
    acc = x * scale
    if mode == 0:
        y[:] = acc
    else:
        y[:] = pypto.exp(acc)


@pypto_ast.jit
def scaled(x: pypto.Tensor((ROWS, COLS), F32), y: pypto.Tensor((ROWS, COLS), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = x * SCALE


def make_scaled(scale, rows):
    @pypto_ast.jit
    def inner(x: pypto.Tensor((rows, 64), F32), y: pypto.Tensor((rows, 64), F32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x * scale + 1.0

    return inner
'''


@pytest.fixture
def kernels(module):
    return module(KERNELS)


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    monkeypatch.setattr(knobs, "backend", request.param)  # the kernels name no backend: the knob decides
    return request.param


def test_in_place_output(kernels, backend):
    x, y, out = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    assert kernels.add(x, y, out) is None
    assert torch.allclose(out, x + y)
    assert kernels.add.last_backend == backend


def test_return_value(kernels, backend):
    x, gate = torch.randn(32, 64), torch.randn(32, 64)
    got = kernels.gated(x, gate)
    assert torch.allclose(got, x * torch.sigmoid(gate) + 1.0, atol=1e-5)
    again = kernels.gated(x, gate)  # warm: a fresh result tensor, not the previous one
    assert again is not got and torch.equal(again, got)


def test_return_tuple(kernels, backend):
    x = torch.randn(32, 64)
    a, b = kernels.pair(x)
    assert torch.allclose(a, x + 1.0) and torch.allclose(b, x.exp(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("run_on", BACKENDS)
def test_return_tuple_fp16_matmul(kernels, run_on):
    kernel = pypto_ast.jit(kernels.linear_and_max.func, backend=run_on)
    g = torch.Generator().manual_seed(34)
    a, w = torch.randn(32, 64, generator=g).half(), torch.randn(64, 32, generator=g).half()
    y, m = kernel(a, w)
    assert torch.allclose(y.float(), (a.float() @ w.float()).half().float(), rtol=2e-3, atol=2e-3)
    assert torch.equal(m, a.amax(-1, keepdim=True))


def test_static_dims_specialise_per_shape(kernels, backend):
    for shape in ((16, 64), (32, 128), (16, 64)):
        x, y = torch.randn(*shape), torch.zeros(*shape)
        kernels.bracket_static(x, y)
        assert torch.allclose(y, x.exp() + 1.0, rtol=1e-5, atol=1e-5)
    assert kernels.bracket_static.cache_stats["lowered"] == 2  # the third call is the first shape again


def test_dynamic_dims_share_one_specialisation(kernels, backend):
    for rows in (40, 17, 64, 1):
        x, y = torch.randn(rows, 128), torch.zeros(rows, 128)
        kernels.silu_rows(x, y)
        assert torch.allclose(y, torch.nn.functional.silu(x), atol=1e-5), rows
    stats = kernels.silu_rows.cache_stats
    assert stats["lowered"] == 1 and stats["specialisations"] == 1, stats


def test_scalars_defaults_and_keywords(kernels, backend):
    x, y = torch.randn(16, 64), torch.zeros(16, 64)
    kernels.branches(x, y)
    assert torch.allclose(y, x)
    kernels.branches(x, y, mode=1, scale=0.5)
    assert torch.allclose(y, (x * 0.5).exp(), rtol=1e-5, atol=1e-5)
    kernels.branches(x, y, 1, 0.5)  # positional: the same specialisation as the keywords
    kernels.branches(x, y, scale=0.5, mode=1)
    assert kernels.branches.cache_stats["specialisations"] == 2
    kernels.branches(x, y, 0, 3.0)  # a scalar is a build-time constant: a new specialisation
    assert torch.allclose(y, x * 3.0)
    assert kernels.branches.cache_stats["specialisations"] == 3


def test_warm_calls_do_not_lower_again(kernels, backend):
    x, y, out = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    for _ in range(5):
        kernels.add(x, y, out)
    stats = kernels.add.cache_stats
    assert stats["lowered"] + stats["index_hits"] == 1 and stats["specialisations"] == 1, stats


def test_kernel_defined_in_a_function_reads_its_closure(kernels, backend):
    double, triple = kernels.make_scaled(2.0, 32), kernels.make_scaled(3.0, 16)
    x = torch.randn(32, 64)
    y = torch.zeros(32, 64)
    double(x, y)
    assert torch.allclose(y, x * 2.0 + 1.0)
    y16 = torch.zeros(16, 64)
    triple(x[:16].clone(), y16)
    assert torch.allclose(y16, x[:16] * 3.0 + 1.0)


def test_kernel_defined_in_the_test(tmp_path, backend):
    import pypto  # the kernel module's own pypto (the official one when installed, else pypto_ast.lang)

    if not hasattr(pypto, "Tensor"):
        pytest.skip("no pypto with Tensor annotations importable here")
    shift = 0.25

    @pypto_ast.jit
    def shifted(x: pypto.Tensor((16, 64), pypto.DT_FP32), y: pypto.Tensor((16, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x + shift

    x, y = torch.randn(16, 64), torch.zeros(16, 64)
    shifted(x, y)
    assert torch.allclose(y, x + 0.25)


def test_non_contiguous_arguments_are_copied(kernels, backend):
    x = torch.randn(64, 32).t()  # (32, 64), not contiguous
    y = torch.randn(32, 64)
    base = torch.zeros(64, 32)
    out = base.t()  # a non-contiguous output: written back into `base`
    kernels.add(x, y, out)
    assert torch.allclose(out, x + y)
    assert torch.allclose(base, (x + y).t())


def test_rebinding_a_global_lowers_again(kernels, backend):
    x, y = torch.randn(32, 64), torch.zeros(32, 64)
    kernels.scaled(x, y)
    assert torch.allclose(y, x * 2.0)
    kernels.scaled.__wrapped__.__globals__["SCALE"] = 5.0
    kernels.scaled(x, y)
    assert torch.allclose(y, x * 5.0)
    assert kernels.scaled.cache_stats["lowered"] + kernels.scaled.cache_stats["index_hits"] == 2


def test_editing_the_source_invalidates(tmp_path, module, backend):
    source = '''
    import pypto
    import pypto_ast


    @pypto_ast.jit
    def bump(x: pypto.Tensor((16, 64), pypto.DT_FP32), y: pypto.Tensor((16, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x + 1.0
    '''
    mod = module(source, "editable.py")
    x, y = torch.randn(16, 64), torch.zeros(16, 64)
    mod.bump(x, y)
    assert torch.allclose(y, x + 1.0)
    path = tmp_path / "editable.py"
    text = path.read_text()
    # a line above the kernel moves it: it is found by name; the edit changes the file's size
    path.write_text(text.replace("import pypto_ast\n", "import pypto_ast\n\nOFFSET = 1  # added\n")
                        .replace("x + 1.0", "x * 4.0 - 2.5"))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a later mtime even on coarse clocks
    mod.bump(x, y)
    assert torch.allclose(y, x * 4.0 - 2.5)
    mod.bump(x, y)
    assert mod.bump.cache_stats["lowered"] == 2


def test_auto_picks_host_with_a_compiler_and_interp_without(kernels, monkeypatch, caplog):
    kernel = pypto_ast.jit(kernels.add.func, backend="auto")
    x, y, out = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    import sys

    jit_module = sys.modules["pypto_ast.jit"]
    with caplog.at_level(logging.DEBUG, logger="pypto_ast"):
        kernel(x, y, out)
    have = jit_module._have_compiler()
    assert kernel.last_backend == ("host" if have else "interp")
    assert any(f"runs on the {kernel.last_backend} backend" in r.getMessage() for r in caplog.records)
    monkeypatch.setattr(knobs, "cxx", "no-such-compiler-pypto-ast")
    out.zero_()
    kernel(x, y, out)
    assert kernel.last_backend == "interp" and torch.allclose(out, x + y)


@needs_cxx
def test_host_and_interp_agree_on_one_kernel(kernels):
    host = pypto_ast.jit(kernels.silu_rows.func, backend="host")
    interp = pypto_ast.jit(kernels.silu_rows.func, backend="interp")
    x = torch.randn(37, 128)
    a, b = torch.zeros(37, 128), torch.zeros(37, 128)
    host(x, a)
    interp(x, b)
    assert torch.allclose(a, b, atol=1e-6)
    assert (host.last_backend, interp.last_backend) == ("host", "interp")


def test_the_decorator_forms(kernels):
    f = kernels.add.func
    assert isinstance(pypto_ast.jit(f), pypto_ast.jit.JitKernel)
    assert pypto_ast.jit(backend="interp")(f).options == {"backend": "interp"}
    k = pypto_ast.jit(runtime_options={"run_mode": 1}, pass_options={}, codegen_options={}, host_options={})(f)
    assert k.options["runtime_options"] == {"run_mode": 1}
    with pytest.raises(TypeError, match="unknown option"):
        pypto_ast.jit(backnd="host")(f)
    with pytest.raises(ValueError, match="backend"):
        pypto_ast.jit(backend="gpu")(f)
    # the constructor the drop-in uses
    direct = pypto_ast.jit.JitKernel(f, {"backend": "interp", "runtime_options": {"run_mode": 1}})
    x, y, out = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    direct(x, y, out=out)
    assert torch.allclose(out, x + y)
