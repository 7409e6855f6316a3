"""Wrong calls and wrong kernels: a wrong argument count, dtype, shape, rank, device or kind is a
``TypeError``/``ValueError`` naming the parameter, raised before anything runs (the output's
bytes are unchanged), on the first call and on warm calls; lint errors in the kernel's lines are
one ``pypto_ast.KernelError`` rendered like the CLI, lint warnings are warnings; front-end
errors are KernelErrors too; the npu backend says it cannot run here."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from jit_support import BACKENDS, MANY_TILES  # noqa: E402

import pypto_ast  # noqa: E402
from pypto_ast import knobs  # noqa: E402

KERNELS = '''
import pypto
import pypto_ast

F32 = pypto.DT_FP32


@pypto_ast.jit
def add(x: pypto.Tensor((16, 64), F32), y: pypto.Tensor((16, 64), F32), out: pypto.Tensor((16, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x + y


@pypto_ast.jit
def rows(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32), k: int = 2):
    pypto.set_vec_tile_shapes(16, 64)
    n = x.shape[0]
    for i in pypto.loop((n + 15) // 16, name="rows", idx_name="i"):
        valid = pypto.min(16, n - i * 16)
        blk = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[valid, 64])
        pypto.assemble(blk * float(k), [i * 16, 0], out)
'''

LINT_ERROR = '''
import pypto
import pypto_ast

F32 = pypto.DT_FP32


@pypto.frontend.jit
def rebinds(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((16, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out = x + 1.0


@pypto_ast.jit
def misspelt(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((16, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.exq(x)


@pypto_ast.jit
def fine(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((16, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.exp(x)
'''


@pytest.fixture
def kernels(module):
    return module(KERNELS)


def _args():
    return torch.randn(16, 64), torch.randn(16, 64), torch.full((16, 64), 7.0)


WRONG = {
    "too few": (lambda x, y, out: ((x, y), {}), TypeError, "missing a required argument: 'out'"),
    "too many": (lambda x, y, out: ((x, y, out, out), {}), TypeError, "too many positional arguments"),
    "unknown keyword": (lambda x, y, out: ((x, y, out), {"outt": out}), TypeError, "outt"),
    "dtype": (lambda x, y, out: ((x.half(), y, out), {}), TypeError, "`x`.*fp32.*fp16"),
    "output dtype": (lambda x, y, out: ((x, y, out.double()), {}), TypeError, "`out`"),
    "shape": (lambda x, y, out: ((x, torch.randn(16, 32), out), {}), ValueError, "`y`.*\\[16, 64\\]"),
    "rank": (lambda x, y, out: ((x, y.reshape(16, 64, 1), out), {}), ValueError, "`y`.*rank 2"),
    "not a tensor": (lambda x, y, out: ((x, 3.0, out), {}), TypeError, "`y`.*torch.Tensor"),
    # an int where a tensor is: not a one-dimensional shape (that is --shape x=5 only)
    "a number": (lambda x, y, out: ((5, y, out), {}), TypeError, r"^add\(\): argument `x` must be a tensor "
                                                                 r"\(a torch.Tensor: .*\), got int 5$"),
    "device": (lambda x, y, out: ((x, torch.empty(16, 64, device="meta"), out), {}), ValueError, "`y`.*meta"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("warm", [False, True], ids=["first-call", "warm"])
@pytest.mark.parametrize("case", list(WRONG))
def test_wrong_arguments_are_rejected_with_outputs_untouched(kernels, backend, warm, case):
    kernel = pypto_ast.jit(kernels.add.func, backend=backend)
    x, y, out = _args()
    if warm:
        kernel(x, y, torch.zeros(16, 64))
    make, error, match = WRONG[case]
    args, kwargs = make(x, y, out)
    before = out.clone()
    with pytest.raises(error, match=match) as info:
        kernel(*args, **kwargs)
    assert "add" in str(info.value)  # the kernel is named too
    assert torch.equal(out.view(torch.uint8), before.view(torch.uint8)), "the output was written"
    kernel(x, y, out)  # the kernel still works afterwards
    assert torch.allclose(out, x + y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_dims_accept_any_length_but_check_the_static_ones(kernels, backend):
    kernel = pypto_ast.jit(kernels.rows.func, backend=backend)
    for n in (16, 40, 3):
        x, out = torch.randn(n, 64), torch.zeros(n, 64)
        kernel(x, out)
        assert torch.allclose(out, x * 2.0)
    out = torch.full((8, 32), 7.0)
    with pytest.raises(ValueError, match="`x`"):
        kernel(torch.randn(8, 32), out)
    assert (out == 7.0).all()
    assert kernel.cache_stats["specialisations"] == 1


def test_npu_backend_says_it_cannot_run_here(kernels):
    kernel = pypto_ast.jit(kernels.add.func, backend="npu")
    x, y, out = _args()
    with pytest.raises(pypto_ast.BackendUnavailable, match="the npu backend needs CANN and an NPU, not available here: .*CANN toolkit"):
        kernel(x, y, out)
    assert (out == 7.0).all()
    assert isinstance(pypto_ast.BackendUnavailable("x"), RuntimeError)


def test_npu_from_the_knob(kernels, monkeypatch):
    monkeypatch.setattr(knobs, "backend", "npu")
    with pytest.raises(RuntimeError, match="not available here"):
        kernels.add(*_args())


def test_lint_errors_are_one_kernel_error_rendered_like_the_cli(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths shown relative to the working directory, as pypto-lint shows them
    mod = module(LINT_ERROR, "bad.py")
    x, out = torch.randn(16, 64), torch.full((16, 64), 7.0)
    with pytest.raises(pypto_ast.KernelError) as info:
        pypto_ast.jit(mod.rebinds.func)(x, out)
    err = info.value
    assert err.codes == ("PTO001",)  # only the kernel's own lines: misspelt's PTO028 is not reported here
    text = str(err)
    assert "error[PTO001]" in text and "--> bad.py:10:5" in text
    assert "10 |     out = x + 1.0" in text and "^^^^" in text
    assert isinstance(err, pypto_ast.pipeline.KernelErrors)  # still a pipeline error for older callers
    with pytest.raises(pypto_ast.KernelError, match="exq") as info:
        mod.misspelt(x, out)
    # the linter (PTO028) finds the unknown name before the front end would (PTO101), in the same words
    assert info.value.codes == ("PTO028",) and "bad.py:16:14" in str(info.value) and "did you mean" in str(info.value)
    assert (out == 7.0).all()
    mod.fine(x, out)  # another kernel of the same file: its own lines are clean
    assert torch.allclose(out, x.exp(), rtol=1e-5, atol=1e-5)


def test_front_end_errors_are_kernel_errors(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mod = module(LINT_ERROR, "bad.py")
    kernel = pypto_ast.jit(mod.misspelt.func, lint=False)  # past the linter: the front end refuses it
    with pytest.raises(pypto_ast.KernelError) as info:
        kernel(torch.randn(16, 64), torch.zeros(16, 64))
    assert info.value.codes[0].startswith("PTO10") and "bad.py:16:" in str(info.value)


def test_lint_warnings_are_warned_once(module):
    # PTO013 (a warning): the body creates more tile operations than the subgraph budget
    mod = module(MANY_TILES.replace("BACKEND", "interp"), "tiles.py")
    x, y = torch.randn(256, 512), torch.zeros(256, 512)
    with pytest.warns(pypto_ast.KernelWarning, match="PTO013"):
        mod.many_tiles(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mod.many_tiles(x, y)  # warm: no second warning


def test_a_device_fault_is_a_kernel_error(module):
    # an interpreter run-time error (here: a view out of the tensor's bounds) comes back located
    mod = module('''
    import pypto
    import pypto_ast


    @pypto_ast.jit(backend="interp", lint=False)
    def overreads(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), y: pypto.Tensor((16, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        blk = pypto.view(x, [16, 64], [8, 0])
        y[:] = blk + 1.0
    ''', "fault.py")
    with pytest.raises(pypto_ast.KernelError, match="interp backend") as info:
        mod.overreads(torch.randn(16, 64), torch.zeros(16, 64))
    assert info.value.codes == ("PTO111",)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fault_is_located_at_the_op_on_both_backends(module, tmp_path, monkeypatch, backend):
    # the host model's faults carry the op's span too (they pointed at line 1, the `import pypto`)
    monkeypatch.chdir(tmp_path)
    mod = module(f'''
    import pypto
    import pypto_ast


    @pypto_ast.jit(backend="{backend}", lint=False)
    def overreads(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), y: pypto.Tensor((16, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        blk = pypto.view(x, [16, 64], [8, 0])
        y[:] = blk + 1.0
    ''', "fault.py")
    for warm in (False, True):  # the first call, and a call of the loaded specialisation
        x = torch.randn(16, 64) if warm else torch.randn(20, 64)  # rows [8, 24) of 20, then of 16
        if warm:
            mod.overreads(torch.randn(24, 64), torch.zeros(16, 64))
        with pytest.raises(pypto_ast.KernelError) as info:
            mod.overreads(x, torch.zeros(16, 64))
        text = str(info.value)
        assert info.value.codes == ("PTO111",) and f"{backend} backend" in text, text
        assert f"view of @x: offsets [8, 0] + shape [16, 64] is out of bounds of [{x.shape[0]}, 64]" in text, text
        assert "--> fault.py:8:11" in text and "8 |     blk = pypto.view(x, [16, 64], [8, 0])" in text, text
