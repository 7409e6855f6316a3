"""The static cost model (pypto_ast/ir/costmodel.py, design §33) on IR text: tasks from the tile
grid, cores by kind, cycles that grow with the work, stages through GM, read-after-write waits,
and the text forms pypto-transpile --emit cost / swimlane print."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pypto_ast import pipeline
from pypto_ast.ir import costmodel
from pypto_ast.ir.parser import parse_program


def add_program(rows: int, cols: int, tile=(64, 64), extra_ops: int = 0, dtype: str = "fp32") -> str:
    ops = [f"      %0 = add(@a, @b) : tensor<{rows}x{cols}x{dtype}> tile [{tile[0]}, {tile[1]}]"]
    for i in range(extra_ops):
        ops.append(f"      %{i + 1} = exp(%{i}) : tensor<{rows}x{cols}x{dtype}> tile [{tile[0]}, {tile[1]}]")
    ops.append(f"      assemble(%{extra_ops}, @c) {{offsets = [0, 0]}}")
    body = "\n".join(ops)
    t = f"tensor<{rows}x{cols}x{dtype}>"
    return f"""program add(@a: {t}, @b: {t}, @c: {t} out) paths=1 {{
  loop loop_idx_0 = 0 to 1 step 1 name=default_loop_1 kind=implicit unroll=1 submit_before_loop=false {{
    block b0 {{
{body}
    }}
  }}
}}
"""


def estimate(text: str, **kwargs) -> costmodel.Estimate:
    return costmodel.estimate(parse_program(text), **kwargs)


SOFTMAX = """program softmax(@x: tensor<8x32x256xfp32>, @y: tensor<8x32x256xfp32> out) paths=1 {
  loop i = 0 to 8 step 1 name=loop_1 kind=loop unroll=1 submit_before_loop=false {
    block b0 {
      %0 = view(@x) {offsets = [i, 0, 0], shape = [1, 32, 256]} : tensor<1x32x256xfp32>
      %1 = amax(%0) {dim = 2, keepdim = true} : tensor<1x32x1xfp32> tile [1, 4, 64]
      %2 = sub(%0, %1) : tensor<1x32x256xfp32> tile [1, 4, 64]
      %3 = exp(%2) : tensor<1x32x256xfp32> tile [1, 4, 64]
      %4 = sum(%3) {dim = 2, keepdim = true} : tensor<1x32x1xfp32> tile [1, 4, 64]
      %5 = div(%3, %4) : tensor<1x32x256xfp32> tile [1, 4, 64]
      assemble(%5, @y) {offsets = [i, 0, 0]}
    }
  }
}
"""

MIXED = """program mix(@a: tensor<128x128xfp16>, @b: tensor<128x128xfp16>, @c: tensor<128x128xfp32> out) paths=1 {
  loop loop_idx_0 = 0 to 1 step 1 name=default_loop_1 kind=implicit unroll=1 submit_before_loop=false {
    block b0 {
      %0 = matmul(@a, @b) {a_trans = false, b_trans = false, out_dtype = "fp32"} : tensor<128x128xfp32> cube_tile [[64, 64], [64, 64], [64, 64]]
      %1 = exp(%0) : tensor<128x128xfp32> tile [64, 64]
      assemble(%1, @c) {offsets = [0, 0]}
    }
  }
}
"""


def test_a_vector_block_splits_into_its_tile_grid_on_vector_cores():
    est = estimate(add_program(128, 128))
    assert est.n_tasks == {"AIC": 0, "AIV": 4}
    assert {t.lane[0] for t in est.tasks} == {"AIV"} and len({t.lane for t in est.tasks}) == 4
    assert est.bytes == {"in": 2 * 128 * 128 * 4, "out": 128 * 128 * 4}
    assert all(t.copy_in > 0 and t.compute > 0 and t.copy_out > 0 for t in est.tasks)


def test_a_reduction_keeps_its_row_in_one_task():
    est = estimate(SOFTMAX)
    # 32 rows in 4-row tiles per iteration; the 256 columns (4 tiles of 64) stay in one task
    assert est.n_tasks["AIV"] == 8 * 8 and est.blocks["b0"]["instances"] == 8
    # the iterations read @x and write @y: independent, so they spread over the vector cores
    assert len(est.lanes_used["AIV"]) == est.soc.vector_cores


def test_more_data_costs_more_cycles():
    small, large = estimate(add_program(64, 64)), estimate(add_program(4096, 1024))
    assert large.total_cycles > small.total_cycles
    assert large.busy["MTE_IN"] > small.busy["MTE_IN"] and large.busy["VECTOR"] > small.busy["VECTOR"]
    # the tasks outnumber the cores: they queue
    assert large.n_tasks["AIV"] == 64 * 16 and large.total_cycles > 10 * small.total_cycles


def test_more_ops_cost_more_cycles_and_expensive_ops_more_than_cheap_ones():
    one, three = estimate(add_program(256, 256)), estimate(add_program(256, 256, extra_ops=2))
    assert three.total_cycles > one.total_cycles and three.busy["VECTOR"] > one.busy["VECTOR"]
    assert three.bytes == one.bytes  # the extra ops stay in UB
    exp = estimate(add_program(256, 256).replace("add(@a, @b)", "div(@a, @b)"))
    assert exp.busy["VECTOR"] > one.busy["VECTOR"]


def test_a_matmul_runs_on_cube_cores_and_the_vector_stage_after_it_waits():
    est = estimate(MIXED)
    cube = [t for t in est.tasks if t.lane[0] == "AIC"]
    vector = [t for t in est.tasks if t.lane[0] == "AIV"]
    assert len(cube) == 4 and len(vector) == 4  # [128, 128] in [64, 64] tiles, both stages
    assert min(t.start for t in vector) >= max(t.end for t in cube)
    # the matmul result goes through GM: written by the cube stage, read by the vector stage
    assert all(t.bytes_out == 64 * 64 * 4 for t in cube) and all(t.bytes_in == 64 * 64 * 4 for t in vector)
    assert est.busy["CUBE"] > 0
    events = costmodel.trace(est)["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"AIC_0", "AIV_0"} <= names
    assert {e["name"] for e in events if e["ph"] == "X" and e["cat"] != "task"} == {"copy-in", "cube", "vector",
                                                                                    "copy-out"}


def test_cube_cycles_follow_the_fractal_depth_of_the_dtype():
    fp16 = estimate(MIXED)
    fp32 = estimate(MIXED.replace("fp16", "fp32"))
    assert fp32.busy["CUBE"] == pytest.approx(2 * fp16.busy["CUBE"])  # 8 fp32 per 32 B row of a fractal, 16 fp16


def test_a_block_reading_what_an_earlier_one_wrote_waits_for_it():
    text = """program two(@x: tensor<64x64xfp32>, @t: tensor<64x64xfp32> out, @y: tensor<64x64xfp32> out) paths=1 {
  loop loop_idx_0 = 0 to 1 step 1 name=default_loop_1 kind=implicit unroll=1 submit_before_loop=false {
    block b0 {
      %0 = exp(@x) : tensor<64x64xfp32> tile [64, 64]
      assemble(%0, @t) {offsets = [0, 0]}
    }
    block b1 {
      %1 = exp(@SRC) : tensor<64x64xfp32> tile [64, 64]
      assemble(%1, @y) {offsets = [0, 0]}
    }
  }
}
"""
    dependent = estimate(text.replace("@SRC", "@t"))
    independent = estimate(text.replace("@SRC", "@x"))
    first, second = sorted(dependent.tasks, key=lambda t: t.start)
    assert second.start >= first.end  # on another core, but after @t is written
    a, b = independent.tasks
    assert a.start == b.start == 0.0  # two free cores, nothing to wait for
    assert dependent.total_cycles > independent.total_cycles


def test_a_value_another_block_reads_goes_through_gm_and_is_waited_for():
    text = """program two(@x: tensor<64x64xfp32>, @y: tensor<64x64xfp32> out) paths=1 {
  loop loop_idx_0 = 0 to 1 step 1 name=default_loop_1 kind=implicit unroll=1 submit_before_loop=false {
    block b0 {
      %0 = exp(@x) : tensor<64x64xfp32> tile [64, 64]
    }
    block b1 {
      %1 = add(%0, %0) : tensor<64x64xfp32> tile [64, 64]
      assemble(%1, @y) {offsets = [0, 0]}
    }
  }
}
"""
    first, second = sorted(estimate(text).tasks, key=lambda t: t.start)
    assert (first.block, second.block) == ("b0", "b1")
    assert first.bytes_out == 64 * 64 * 4 and second.bytes_in == 64 * 64 * 4
    assert second.start >= first.end


def test_shapes_and_scalars_of_the_call_drive_the_loops():
    text = """program rows(@x: tensor<640x64xfp32>, @y: tensor<640x64xfp32> out, n: scalar = 2) paths=1 {
  loop i = 0 to @x.shape[0] // 64 step 1 name=loop_1 kind=loop unroll=1 submit_before_loop=false {
    block b0 {
      %0 = view(@x) {offsets = [i * 64, 0], shape = [64, 64]} : tensor<64x64xfp32>
      %1 = exp(%0) : tensor<64x64xfp32> tile [64, 64]
      assemble(%1, @y) {offsets = [i * 64, 0]}
    }
  }
}
"""
    program = parse_program(text)
    assert costmodel.estimate(program).n_tasks["AIV"] == 10  # the declared shapes
    assert costmodel.estimate(program, {"x": (128, 64), "y": (128, 64)}).n_tasks["AIV"] == 2  # the call's
    scaled = parse_program(text.replace("to @x.shape[0] // 64", "to n"))
    assert costmodel.estimate(scaled).n_tasks["AIV"] == 2  # the value it was specialised for
    assert costmodel.estimate(scaled, scalars={"n": 5}).n_tasks["AIV"] == 5


def test_a_loop_bound_read_from_data_needs_the_data():
    text = """program lens(@n: tensor<1xint32>, @x: tensor<256x64xfp32>, @y: tensor<256x64xfp32> out) paths=1 {
  loop i = 0 to @n[0] step 1 name=loop_1 kind=loop unroll=1 submit_before_loop=false {
    block b0 {
      %0 = view(@x) {offsets = [i * 64, 0], shape = [64, 64]} : tensor<64x64xfp32>
      assemble(%0, @y) {offsets = [i * 64, 0]}
    }
  }
}
"""
    program = parse_program(text)
    with pytest.raises(costmodel.CostError, match="read from @n"):
        costmodel.estimate(program)
    est = costmodel.estimate(program, read=lambda tensor, index: {("n", (0,)): 3}[(tensor, index)])
    assert est.n_tasks["AIV"] == 3 and est.bytes == {"in": 3 * 64 * 64 * 4, "out": 3 * 64 * 64 * 4}


def test_the_text_forms():
    program = parse_program(SOFTMAX)
    report = pipeline.emit(program, "cost")
    est = costmodel.estimate(program)
    assert f"{int(est.total_cycles + 0.999)}" in [line.split(":")[1].strip() for line in report.splitlines()
                                                  if line.startswith("Total Cycles")]
    data = json.loads(pipeline.emit(program, "swimlane"))
    assert data["otherData"]["total_cycles"] == int(est.total_cycles + 0.999)
    assert data["otherData"]["total_us"] == pytest.approx(est.total_cycles / est.soc.clock_mhz, abs=1e-3)
    tasks = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] == "task"]
    assert len(tasks) == 64
    with pytest.raises(pipeline.PipelineError, match="unknown SoC"):
        pipeline.emit(program, "cost", soc="ascend310")


def test_a_dynamic_dim_takes_its_extent_from_the_shapes_given():
    program = parse_program("""program rows(@x: tensor<[@x.shape[0], 64], fp32>, @y: tensor<[@y.shape[0], 64], fp32> out) paths=1 {
  loop i = 0 to (@x.shape[0] + 15) // 16 step 1 name=row_blocks kind=loop unroll=1 submit_before_loop=false {
    block b0 {
      %0 = view(@x) {offsets = [i * 16, 0], shape = [16, 64], valid_shape = [min(16, @x.shape[0] - i * 16), 64]} : tensor<16x64xfp32>
      %1 = exp(%0) : tensor<16x64xfp32> tile [16, 64]
      assemble(%1, @y) {offsets = [i * 16, 0]}
    }
  }
}
""")
    with pytest.raises(pipeline.PipelineError, match=r"the shape of x \(give it with --shape\)"):
        pipeline.emit(program, "cost")
    given = {"x": ((100, 64), None), "y": ((100, 64), None)}  # what --shape x=100x64 gives
    data = json.loads(pipeline.emit(program, "swimlane", shapes=given))
    assert data["otherData"]["tasks"]["AIV"] == 7
    # the last block reads its 4 valid rows only
    assert data["otherData"]["bytes"]["in"] == 100 * 64 * 4


def test_importing_the_cost_model_loads_no_torch():
    code = "import sys, pypto_ast.ir.costmodel; assert 'torch' not in sys.modules and 'numpy' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_transpile_cli_prints_the_estimate_and_its_trace(tmp_path):
    """``pypto-transpile --emit cost`` / ``--emit swimlane``: the report and a Chrome trace whose
    vector lanes carry one task per tile; a bigger tensor costs more cycles."""
    import json
    import re

    from click.testing import CliRunner

    from cli.transpile import main

    def cycles(rows: int) -> tuple:
        path = tmp_path / f"k{rows}.py"
        path.write_text(
            "import pypto\nF32 = pypto.DT_FP32\n\n\n@pypto.frontend.jit\n"
            f"def k(x: pypto.Tensor(({rows}, 256), F32), out: pypto.Tensor(({rows}, 256), F32)):\n"
            "    pypto.set_vec_tile_shapes(8, 256)\n    out[:] = pypto.exp(x) + 1.0\n")
        report = CliRunner().invoke(main, [str(path), "--emit", "cost"], catch_exceptions=False)
        assert report.exit_code == 0, report.output
        trace = CliRunner().invoke(main, [str(path), "--emit", "swimlane"], catch_exceptions=False)
        assert trace.exit_code == 0, trace.output
        events = json.loads(trace.output)["traceEvents"]
        lanes = {e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
        assert lanes and all(name.startswith("AIV_") for name in lanes)
        total = int(re.search(r"Total Cycles\.+:\s+(\d+)", report.output).group(1))
        tasks = int(re.search(r"Total Submit Tasks\.+:\s+(\d+)", report.output).group(1))
        return total, tasks

    small, big = cycles(64), cycles(4096)
    assert small[1] == 64 // 8 and big[1] == 4096 // 8  # one task per [8, 256] tile
    assert big[0] > small[0]
