"""A vector tile longer than an axis covers that axis once (pypto clips it to the value's
extent): the models set ``[1, 64, 64, 64]`` on a ``[T, 32, 2, 64]`` value, a tile of 64 rows, not
of 64 * 64 = 4096.  And the UB diagnostic's advice names the kernel's own tile and never more
rows than it has."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import knobs, live, pipeline  # noqa: E402
from pypto_ast.emit import soc  # noqa: E402

needs_cxx = pytest.mark.skipif(shutil.which(knobs.cxx) is None, reason=f"C++ compiler {knobs.cxx!r} not on PATH")

HALVES = '''
import pypto


@pypto.frontend.jit
def halves(x: pypto.Tensor((16, 32, 2, 64), pypto.DT_FP32), scale: pypto.Tensor((16, 32, 2, 64), pypto.DT_FP32),
           out: pypto.Tensor((16, 32, 2, 64), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64, 64, 64)
    y = pypto.mul(x, scale)
    out.move(pypto.add(y, 0.0))
'''


@needs_cxx
def test_a_tile_longer_than_its_axes_runs_in_the_rows_it_covers(tmp_path):
    """Before, the tile was taken as 1 * 64 * 64 rows of 64 (all 1024 rows of the value, 512 KiB of
    queues): PTO110 "pypto refuses this tile too".  Clipped, it is [1, 32, 2, 64]: 64 rows."""
    path = tmp_path / "halves.py"
    path.write_text(HALVES.lstrip("\n"), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        kernel = live.find_kernel(live.load_module(str(path)))
    g = torch.Generator().manual_seed(3)
    x, scale = torch.randn(16, 32, 2, 64, generator=g), torch.randn(16, 32, 2, 64, generator=g)
    inputs = {"x": x, "scale": scale, "out": torch.full_like(x, float("nan"))}
    program = pipeline.lower(kernel, {k: v.clone() for k, v in inputs.items()})
    [info] = [k for k in json.loads(pipeline.emit(program, "ascendc")["manifest.json"])["kernels"]
              if k.get("kind", "vector") == "vector"]
    assert info["vec_tile"] == [1, 32, 2, 64] and info["tile_rows"] == 64
    assert info["ub_bytes"] <= soc.get_soc().ub_budget
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        pipeline.run(program, args, backend)
        assert torch.equal(args["out"], x * scale + 0.0), backend


def _finding(tile_rows: int, ub_bytes: int, vec_tile=None) -> str:
    kernel = {"kernel": "k", "block": "b0", "shape": [8192, 512], "tile_rows": tile_rows, "ub_bytes": ub_bytes,
              "tile": [tile_rows, 512], "buffers": 1, **({"vec_tile": vec_tile} if vec_tile else {})}
    [(message, _)] = soc.check_plan({"kernels": [kernel]}, "ascend910b")
    return message


def test_the_advice_shrinks_the_kernels_own_tile_from_its_outer_axis():
    # [4, 8, 512] fp32 is 32 rows; 18 KiB a row: 10 fit in 184 KiB
    message = _finding(32, 32 * 18 * 1024, [4, 8, 512])
    assert "vector tile [4, 8, 512]" in message
    assert "use at most 10 rows per tile (4x8 now), e.g. pypto.set_vec_tile_shapes(1, 8, 512)" in message


def test_the_advice_never_asks_for_more_rows_than_the_tile_has():
    # the models' message: 4096 rows of 0.5 KiB would fit 368 rows, but the tile has 4
    message = _finding(4096, 4096 * 512 + 512, [4, 4096])
    assert "rows per tile" not in message and "set_vec_tile_shapes" not in message
    assert "split the last dimension" in message
