"""The real-headers check, what holds without the devkit (docs/realheaders.md): kernels spell inf
and NaN so that the NPU build of kernel_operator.h (no <cmath>) compiles them, our host header
rejects what the NPU build rejects, and the check's units are the manifest's kernels.
tests/realheaders/test_real_headers.py is the check itself (``pytest -m realheaders``)."""

from __future__ import annotations

import json
import math
import subprocess
import textwrap
from pathlib import Path

import pytest
import torch

from pypto_ast import knobs, live, pipeline
from pypto_ast.emit import realheaders
from pypto_ast.emit.host_runtime import HEADER_DIR
from pypto_ast.ir.interp import run_program

from support import needs_cxx

INFINITIES = '''
import math

import pypto


@pypto.frontend.jit
def col_extremes(x: pypto.Tensor([8, 64], pypto.DT_FP32), hi: pypto.Tensor([1, 64], pypto.DT_FP32),
                 lo: pypto.Tensor([8, 64], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(4, 64)
    hi[:] = pypto.amax(x, 0, keepdim=True)
    lo[:] = pypto.cast(pypto.where(x < 0.0, -math.inf, x), pypto.DT_FP16)
'''


def _program(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return pipeline.lower(live.find_kernel(live.load_module(str(path))))


def test_kernels_spell_inf_as_a_compiler_builtin_not_cmaths_macro(tmp_path):
    units = realheaders.kernel_units(pipeline.emit(_program(tmp_path, "col_extremes", INFINITIES), "ascendc"))
    assert len(units) == 2
    for unit in units:
        for macro in realheaders.DEVICE_LACKS:
            assert macro not in unit.text.replace("__builtin_inff()", ""), (unit.name, macro)
    joined = "\n".join(u.text for u in units)
    assert "static_cast<float>(-__builtin_inff())" in joined  # the column max starts at -inf
    assert "static_cast<float>(__builtin_inff())" in joined  # the fp16 cast's saturation mask


@needs_cxx
def test_the_builtin_spelling_runs_on_the_host_like_the_interpreter(tmp_path):
    program = _program(tmp_path, "col_extremes", INFINITIES)
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
    x[3, 5] = -math.inf
    inputs = {"x": x, "hi": torch.zeros(1, 64), "lo": torch.zeros(8, 64, dtype=torch.float16)}
    oracle = {k: v.clone() for k, v in inputs.items()}
    run_program(program, oracle)
    pipeline.run(program, inputs, "host")
    assert torch.equal(inputs["hi"], oracle["hi"]) and torch.equal(inputs["hi"], x.amax(0, keepdim=True))
    assert torch.equal(inputs["lo"], oracle["lo"])
    assert torch.equal(inputs["lo"], torch.where(x < 0, -math.inf, x).half())


@needs_cxx
@pytest.mark.parametrize("macro", ["INFINITY", "NAN"])
def test_the_host_header_rejects_cmath_macros_as_the_npu_build_does(tmp_path, macro):
    source = tmp_path / "k.cpp"
    source.write_text(f'#include "kernel_operator.h"\nfloat value() {{ return {macro}; }}\n')
    proc = subprocess.run([knobs.cxx, "-std=c++17", "-fsyntax-only", f"-I{HEADER_DIR}", str(source)],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and macro in proc.stderr


def test_each_kernel_of_the_manifest_is_a_unit_on_its_core():
    files = {"manifest.json": json.dumps({"kernels": [{"kind": "vector", "file": "v.cpp"},
                                                      {"kind": "cube", "file": "c.cpp"},
                                                      {"kind": "transpose", "file": "t.cpp"}]}),
             "v.cpp": "v", "c.cpp": "c", "t.cpp": "t", "control.cpp": "host code, never a unit"}
    units = realheaders.kernel_units(files)
    assert [(u.name, u.core, u.text) for u in units] == [("v.cpp", "AIV", "v"), ("c.cpp", "AIC", "c"),
                                                         ("t.cpp", "AIV", "t")]
    assert len({u.key for u in units}) == 3


def test_a_directory_that_is_no_devkit_is_refused(tmp_path):
    with pytest.raises(realheaders.DevkitError, match="not an asc-devkit checkout"):
        realheaders.Checker(tmp_path)
