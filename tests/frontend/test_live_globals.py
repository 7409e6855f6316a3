"""The in-process entry point: a kernel lowered from its source with the live globals of its
module taking precedence over the static reading (values only the running module knows)."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import live, pipeline  # noqa: E402
from pypto_ast.frontend.livevalues import convert, from_live  # noqa: E402

SOURCE = textwrap.dedent('''
    import os
    import pypto

    ROWS = int(os.environ.get("PYPTO_AST_TEST_ROWS", "16"))   # only the running module knows it
    DTYPE = pypto.DT_FP32 if os.environ.get("PYPTO_AST_TEST_HALF") is None else pypto.DT_FP16


    @pypto.frontend.jit
    def scale(x: pypto.Tensor((ROWS, 64), DTYPE), out: pypto.Tensor((ROWS, 64), DTYPE)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x * 2.0
''')


def test_static_reading_alone_cannot_know_the_shape(tmp_path):
    path = tmp_path / "envshape.py"
    path.write_text(SOURCE)
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(path))
    assert info.value.code in ("PTO104", "PTO105", "PTO106")


def test_live_globals_give_the_shape_and_the_kernel_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_AST_TEST_ROWS", "24")
    path = tmp_path / "envshape.py"
    path.write_text(SOURCE)
    module = live.load_module(str(path))
    x, out = torch.randn(24, 64), torch.zeros(24, 64)
    program = pipeline.lower(module.scale, {"x": x, "out": out})
    assert "tensor<24x64xfp32>" in pipeline.emit(program, "ir", spans=False)
    pipeline.run(program, {"x": x, "out": out})
    assert torch.equal(out, x * 2.0)


def test_conversion_keeps_data_and_skips_code():
    from pypto_ast import lang
    from pypto_ast.frontend import api

    values = from_live({"N": 4, "SHAPE": (4, [8, 2]), "DT": lang.DT_FP16, "f": len, "mod": torch,
                        "T": torch.zeros(3, 5, dtype=torch.float16), "TD": torch.bfloat16, "__name__": "m"})
    assert values["N"] == 4 and values["SHAPE"] == (4, [8, 2])
    assert values["DT"] is api.DTYPES["DT_FP16"]
    assert values["T"].shape == (3, 5) and values["T"].dtype == "fp16"
    assert values["TD"].qualname == "torch.bfloat16"
    assert "f" not in values and "mod" not in values and "__name__" not in values
    assert convert(object()) is not None
