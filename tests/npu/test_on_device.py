"""On a machine with an NPU and CANN (``pytest -m npu``): the real toolchain builds the examples for the
installed SoC.  Elsewhere these skip, naming what the doctor found missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto_ast import doctor, pipeline

ROOT = Path(__file__).resolve().parents[2]
_CHECKS = doctor.run_checks()
_MISSING = [c.name for c in _CHECKS if "npu" in c.needed_by and c.status != "ok"]
pytestmark = [pytest.mark.npu,
              pytest.mark.skipif(bool(_MISSING), reason="needs an NPU with CANN (`pypto-transpile doctor --backend "
                                                        f"npu`: missing {', '.join(_MISSING)})")]


@pytest.mark.parametrize("example", ["clean_row_softmax.py", "clean_accumulate_blocks.py"])
def test_real_toolchain_builds_the_example(tmp_path, example):
    program = pipeline.lower_file(str(ROOT / "examples" / example))
    library = pipeline.build_npu(program, out_dir=str(tmp_path))
    assert library.is_file() and library.stat().st_size > 0
    assert (tmp_path / "control_npu.cpp").is_file()
