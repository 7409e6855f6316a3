"""A vector tile pypto accepts (its live tiles fit the 192 KiB UB) but the emitted plan does not
(queues, scratch, the 8 KiB reserve): each tile runs as sub-tiles of fewer rows, and the numbers
are those of the tile as asked (interp = host = torch).  A tile no plan fits stays refused."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import knobs, live, pipeline  # noqa: E402
from pypto_ast.emit import soc  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which(knobs.cxx) is None, reason=f"C++ compiler {knobs.cxx!r} not on PATH")


def _load(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        module = live.load_module(str(path))
        return module, live.find_kernel(module)


def _both(kernel, inputs: dict, outs):
    program = pipeline.lower(kernel, {k: v.clone() for k, v in inputs.items()})
    got = {}
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        pipeline.run(program, args, backend)
        got[backend] = {o: args[o] for o in outs}
    return program, got


def _vector_kernels(program):
    files = pipeline.emit(program, "ascendc")
    return [k for k in json.loads(files["manifest.json"])["kernels"] if k.get("kind", "vector") == "vector"]


FOUR_D = '''
import pypto


@pypto.frontend.jit
def add4d(a: pypto.Tensor((4, 16, 32, 256), pypto.DT_FP32), b: pypto.Tensor((4, 16, 32, 256), pypto.DT_FP32),
          out: pypto.Tensor((4, 16, 32, 256), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 4, 8, 256)
    out.move(pypto.add(a, b))
'''


def test_a_4d_tile_of_64_kib_per_operand_runs_as_sub_tiles(tmp_path):
    """[2, 4, 8, 256] fp32 is 64 rows of 1 KiB, 64 KiB a tile: a and b are live at once (the sum
    may take a's buffer), 128 KiB, within pypto's UB; the emitted plan needs more."""
    _, kernel = _load(tmp_path, "add4d", FOUR_D)
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(4, 16, 32, 256, generator=g), torch.randn(4, 16, 32, 256, generator=g)
    program, got = _both(kernel, {"a": a, "b": b, "out": torch.full_like(a, float("nan"))}, ["out"])
    for backend in ("interp", "host"):
        assert torch.equal(got[backend]["out"], a + b), backend
    [info] = _vector_kernels(program)
    assert info["tile_requested"] == [64, 256] and info["tile_rows"] < 64
    assert info["ub_bytes"] <= soc.get_soc().ub_budget
    assert info["pypto_live_bytes"] == 2 * 64 * 256 * 4


ROW_SOFTMAX = '''
import pypto


@pypto.frontend.jit
def wide_rows(x: pypto.Tensor((96, 512), pypto.DT_FP32), y: pypto.Tensor((96, 512), pypto.DT_FP32),
              out: pypto.Tensor((96, 512), pypto.DT_FP32), top: pypto.Tensor((96, 1), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(48, 512)
    m = pypto.amax(x, -1, keepdim=True)
    e = pypto.exp(x - m)
    out[:] = e / pypto.sum(e, -1, keepdim=True) + y
    top[:] = m
'''


def test_row_reductions_and_broadcasts_are_exact_across_sub_tiles(tmp_path):
    """Rows stay whole in a sub-tile, so reductions along them are as with the whole tile."""
    _, kernel = _load(tmp_path, "wide_rows", ROW_SOFTMAX)
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(96, 512, generator=g) * 4, torch.randn(96, 512, generator=g)
    inputs = {"x": x, "y": y, "out": torch.full((96, 512), float("nan")), "top": torch.full((96, 1), float("nan"))}
    program, got = _both(kernel, inputs, ["out", "top"])
    assert torch.equal(got["interp"]["top"], got["host"]["top"])
    assert torch.equal(got["host"]["top"], x.amax(-1, keepdim=True))
    torch.testing.assert_close(got["host"]["out"], got["interp"]["out"], rtol=2e-6, atol=1e-6)
    torch.testing.assert_close(got["host"]["out"], torch.softmax(x, -1) + y, rtol=1e-5, atol=1e-6)
    [info] = _vector_kernels(program)
    assert info["tile_requested"] == [48, 512] and 1 <= info["tile_rows"] < 48, info


def test_a_tile_over_pypto_ub_is_still_refused_saying_pypto_refuses_it(tmp_path):
    """[128, 512] fp32 is 256 KiB a tile: over the whole UB before any plan of ours."""
    _, kernel = _load(tmp_path, "big", FOUR_D.replace("(4, 16, 32, 256)", "(2, 128, 512)")
                      .replace("set_vec_tile_shapes(2, 4, 8, 256)", "set_vec_tile_shapes(1, 128, 512)"))
    z = torch.zeros(2, 128, 512)
    program = pipeline.lower(kernel, {"a": z, "b": z, "out": z.clone()})
    with pytest.raises(pipeline.KernelErrors, match=r"pypto refuses this tile too.*MEM_UB size \[196608\]"):
        pipeline.emit(program, "ascendc")


OVER_TOKENS = '''
import pypto


@pypto.frontend.jit
def over_tokens(x: pypto.Tensor((64, 32, 512), pypto.DT_FP32), out: pypto.Tensor((1, 32, 512), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes({tile})
    out[:] = pypto.sum(x, dim=0, keepdim=True)
'''


@pytest.mark.parametrize("tile,refused", [("8, 16384", True), ("32, 1, 512", False)])
def test_only_the_kernels_own_tile_is_judged_by_pypto_s_ub(tmp_path, tile, refused):
    """A sum over the tokens of [64, 32, 512] is the emitter's column reduction of [64, 16384] in
    its own tile [8, 16384] (512 KiB a tile: pypto would refuse it if a kernel set it).  With the
    kernel's [32, 1, 512] (64 KiB) it runs; the same reduction of the 2-D value with a tile of
    [8, 16384] set by the kernel is refused saying pypto refuses it too."""
    text = OVER_TOKENS.format(tile=tile)
    if refused:  # the kernel's own 2-D form, the tile the emitter would pick set by the kernel
        text = text.replace("(64, 32, 512)", "(64, 16384)").replace("(1, 32, 512)", "(1, 16384)")
    _, kernel = _load(tmp_path, "tokens", text)
    x = torch.randn((64, 16384) if refused else (64, 32, 512), generator=torch.Generator().manual_seed(4))
    inputs = {"x": x, "out": torch.full((1,) + tuple(x.shape[1:]), float("nan"))}
    if refused:
        program = pipeline.lower(kernel, inputs)
        with pytest.raises(pipeline.KernelErrors, match=r"pypto refuses this tile too"):
            pipeline.emit(program, "ascendc")
        return
    program, got = _both(kernel, inputs, ["out"])
    [info] = [k for k in _vector_kernels(program) if k["shape"] == [64, 16384]]
    assert info["tile"][1] < 16384 and info["num_blocks"] > 1, info  # column tiles, over the cores
    for backend, res in got.items():
        torch.testing.assert_close(res["out"], x.sum(0, keepdim=True), rtol=1e-5, atol=1e-5, msg=lambda m: f"{backend}: {m}")
