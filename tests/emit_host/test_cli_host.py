"""``pypto-transpile`` with the host backend: --emit ascendc -o DIR, --build, --run --backend host,
the UB budget check (emit/soc.py) and --soc."""

import json

import pytest
from click.testing import CliRunner

from cli.transpile import main
from pypto_ast import knobs
from pypto_ast.emit import soc
from support import needs_cxx  # noqa: E402


CHAIN = '''
import pypto
import torch
F32 = pypto.DT_FP32

@pypto.frontend.jit
def chain(x: pypto.Tensor((64, 256), F32), y: pypto.Tensor((64, 256), F32),
          out: pypto.Tensor((64, 256), F32)):
    pypto.set_vec_tile_shapes(TILE_ROWS, 256)
    a = x + y
    b = OP(a * 0.5)
    out[:] = b - y

def example_inputs():
    g = torch.Generator().manual_seed(0)
    return {"x": torch.randn(64, 256, generator=g), "y": torch.randn(64, 256, generator=g),
            "out": torch.zeros(64, 256)}

def reference(x, y, out):
    return {"out": TORCH_OP((x + y) * 0.5) - y}
'''


def _kernel(tmp_path, name="chain.py", tile_rows=16, op="pypto.exp", torch_op="torch.exp"):
    path = tmp_path / name
    path.write_text(CHAIN.replace("TILE_ROWS", str(tile_rows)).replace("TORCH_OP", torch_op).replace("OP", op))
    return path


def _invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    # click >= 8.2 keeps stderr apart; older versions mix it into output
    err = getattr(result, "stderr", "") if getattr(result, "stderr_bytes", None) is not None else ""
    return result.exit_code, result.output, err


def test_emit_ascendc_writes_the_files(tmp_path):
    kernel = _kernel(tmp_path)
    out = tmp_path / "gen"
    code, output, _ = _invoke(kernel, "--emit", "ascendc", "-o", out)
    assert code == 0, output
    names = sorted(p.name for p in out.iterdir())
    assert names == ["chain_b0_k1.cpp", "control.cpp", "manifest.json"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["program"] == "chain" and manifest["outputs"] == ["out"]
    assert "pypto_run" in (out / "control.cpp").read_text()
    assert "wrote" in output


def test_emit_ascendc_needs_an_output_directory(tmp_path):
    code, output, err = _invoke(_kernel(tmp_path), "--emit", "ascendc")
    assert code == 2
    assert "-o DIR" in output + err


@needs_cxx
def test_run_host_matches_reference_with_minimal_traffic(tmp_path):
    code, output, _ = _invoke(_kernel(tmp_path), "--run", "--backend", "host")
    assert code == 0, output
    assert "backend: host" in output
    assert "ratio 1.00" in output
    assert "minimum 196608 B" in output
    assert "out: ok" in output


def test_run_interp_prints_no_traffic(tmp_path):
    code, output, _ = _invoke(_kernel(tmp_path), "--run")
    assert code == 0, output
    assert "backend: interp" in output and "GM traffic" not in output


@needs_cxx
def test_build_host_reports_the_library(tmp_path):
    out = tmp_path / "lib"
    code, output, _ = _invoke(_kernel(tmp_path), "--build", "--backend", "host", "-o", out)
    assert code == 0, output
    assert (out / "libchain.so").is_file() and (out / "manifest.json").is_file()
    assert "libchain.so" in output
    code, output, _ = _invoke(_kernel(tmp_path), "--build", "--backend", "host")
    assert code == 0 and "lib.so" in output


def test_build_needs_the_host_backend(tmp_path):
    code, output, err = _invoke(_kernel(tmp_path), "--build")
    assert code == 2 and "--backend host" in output + err


@pytest.mark.parametrize("args", [("--run", "--backend", "host"), ("--emit", "ascendc", "-o", "gen")])
def test_unsupported_op_is_a_located_error(tmp_path, args):
    kernel = tmp_path / "var.py"
    kernel.write_text(VAR)
    args = tuple(str(tmp_path / a) if a == "gen" else a for a in args)
    code, output, err = _invoke(kernel, *args)
    assert code == 1, output
    text = output + err
    assert "op 'var'" in text and "does not support" in text
    assert "var.py:9:14" in text and "^^^^" in text


VAR = '''
import pypto
import torch
F32 = pypto.DT_FP32

@pypto.frontend.jit
def v(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((16, 1), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.var(pypto.view(x, [16, 64], [0, 0], valid_shape=[16, 60]), dim=-1, keepdim=True)

def example_inputs():
    return {"x": torch.ones(16, 64), "out": torch.zeros(16, 1)}

def reference(x, out):
    return {"out": x[:, :60].var(-1, keepdim=True)}
'''


BRANCH = '''
import pypto
import torch
F32 = pypto.DT_FP32

@pypto.frontend.jit
def br(x: pypto.Tensor((64, 256), F32), out: pypto.Tensor((64, 256), F32)):
    pypto.set_vec_tile_shapes(16, 256)
    for k in pypto.loop(2, name="l", idx_name="k"):
        if k == 0:
            out[:] = x + 1.0
        else:
            out[:] = x * 2.0

def example_inputs():
    return {"x": torch.ones(64, 256), "out": torch.zeros(64, 256)}

def reference(x, out):
    return {"out": x * 2.0}
'''


def test_branch_runs_in_the_control_program(tmp_path):
    kernel = tmp_path / "br.py"
    kernel.write_text(BRANCH)
    code, output, err = _invoke(kernel, "--run", "--backend", "host")
    assert code == 0, output + err
    assert "out: ok" in output
    out = tmp_path / "gen"
    code, output, err = _invoke(kernel, "--emit", "ascendc", "-o", out)
    assert code == 0, output + err
    assert "if ((v_k == INT64_C(0)))" in (out / "control.cpp").read_text()


def test_tile_pypto_fits_but_our_plan_does_not_runs_as_sub_tiles(tmp_path):
    """[64, 256] fp32 is 64 KiB a tile: at most two are live at any op (x + y, then y with each
    result), so pypto fits it in its 192 KiB UB; the emitted plan (queues, scratch, the 8 KiB
    reserve) does not, even single-buffered, so each tile runs as sub-tiles of fewer rows."""
    kernel = _kernel(tmp_path, "big.py", tile_rows=64)
    code, output, err = _invoke(kernel, "--run", "--backend", "host")
    assert code == 0 and "out: ok" in output, output + err
    code, output, err = _invoke(kernel, "--emit", "ascendc", "-o", tmp_path / "gen")
    assert code == 0, output + err
    [info] = json.loads((tmp_path / "gen" / "manifest.json").read_text())["kernels"]
    assert info["tile_requested"] == [64, 256] and 1 <= info["tile_rows"] < 64, info
    assert info["ub_bytes"] <= soc.get_soc().ub_budget and info["pypto_live_bytes"] == 2 * 64 * 256 * 4, info


def test_tile_over_budget_still_runs_on_interp(tmp_path):
    code, output, _ = _invoke(_kernel(tmp_path, "big.py", tile_rows=64), "--run")
    assert code == 0, output


@needs_cxx
@pytest.mark.parametrize("name", ["ascend910b", "ascend910_93", "ASCEND910B"])
def test_soc_accepted_values(tmp_path, name):
    code, output, _ = _invoke(_kernel(tmp_path), "--run", "--backend", "host", "--soc", name)
    assert code == 0, output


def test_soc_unknown_is_a_usage_error(tmp_path):
    code, output, err = _invoke(_kernel(tmp_path), "--run", "--backend", "host", "--soc", "ascend310p")
    assert code == 2 and "--soc" in output + err


def test_soc_table_matches_the_reference():
    a2 = soc.get_soc()
    assert a2.name == soc.DEFAULT_SOC == "ascend910b"
    assert (a2.ub, a2.l1, a2.l0a, a2.l0b, a2.l0c) == (192 * 1024, 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024)
    assert a2.ub_budget == 184 * 1024
    with pytest.raises(KeyError):
        soc.get_soc("nope")


def test_check_plan_reads_the_manifest():
    manifest = {"kernels": [{"kernel": "k", "block": "b0", "shape": [64, 256], "tile_rows": 16, "ub_bytes": 16 * 7168}]}
    assert soc.check_plan(manifest) == []
    too_big = {"kernels": [{"kernel": "k", "block": "b0", "shape": [64, 256], "tile_rows": 32, "ub_bytes": 32 * 7168}]}
    [(message, span)] = soc.check_plan(too_big, "ascend910b")
    # 184 KiB / 7 KiB per row = 26 rows
    assert "[32, 256]" in message and "set_vec_tile_shapes(26, 256)" in message and span is None


def test_readme_lists_the_host_commands():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for flag in ("--emit ascendc -o", "--build --backend host", "--run --backend host", "--soc"):
        assert flag in readme, flag


def test_line_directives_are_switchable(tmp_path):
    kernel = _kernel(tmp_path)
    with_lines, without = tmp_path / "a", tmp_path / "b"
    assert _invoke(kernel, "--emit", "ascendc", "-o", with_lines)[0] == 0
    assert _invoke(kernel, "--emit", "ascendc", "-o", without, "--no-spans")[0] == 0
    text = (with_lines / "chain_b0_k1.cpp").read_text()
    assert '#line 11 "chain.py"' in text and "// %" in text  # back to the kernel's Python line; one comment per op
    assert "#line" not in (without / "chain_b0_k1.cpp").read_text()


@needs_cxx
def test_build_progress_goes_to_stderr_and_quiet_silences_it(tmp_path, monkeypatch):
    monkeypatch.setattr(knobs, "always_compile", True)  # a compile every time, cache or not
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stderr apart by itself
    kernel = _kernel(tmp_path, tile_rows=8)
    loud = runner.invoke(main, [str(kernel), "--build", "--backend", "host"], catch_exceptions=False)
    assert loud.exit_code == 0, loud.output
    assert "compiling 2 files (" in loud.stderr and "-O2) ..." in loud.stderr
    assert "compiling" not in loud.stdout and "built chain" in loud.stdout
    quiet = runner.invoke(main, [str(kernel), "--build", "--backend", "host", "-q"], catch_exceptions=False)
    assert quiet.exit_code == 0 and quiet.stderr == "" and "built chain" in quiet.stdout


# Sizes the emitted code cannot hold: the element or byte count of a tensor past int64 (it wrote an
# INT64_C literal g++ truncates), rows or tiles past the kernels' uint32_t loop index (a loop that
# never ends); --emit and --build refuse them at the op, as lowering refuses loop bounds past int64.
HUGE = '''
import pypto
F32 = pypto.DT_FP32


@pypto.frontend.jit
def grow(x: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
    pypto.set_vec_tile_shapes(1, 64)
    out[:] = x + 1.0
'''


@pytest.mark.parametrize("shape,message", [
    ("100000000000x100000000000", "has 1.0e+22 elements (4.0e+22 bytes): more than int64"),
    ("9223372036854775807x2", "shape [9223372036854775807, 2] has 18446744073709551614 elements"),
    ("2305843009213693952x2", "has 4611686018427387904 elements (18446744073709551616 bytes)"),  # the bytes only
    ("4294967296x2", "a kernel of 4294967296 rows: the emitted kernels count rows"),
    ("1073741824x4096", "a kernel of 68719476736 tiles"),  # 2**30 rows of 64 column tiles each
], ids=["elements", "elements-int64-max", "bytes", "rows", "tiles"])
@pytest.mark.parametrize("action", [("--emit", "ascendc"), ("--build", "--backend", "host")], ids=["emit", "build"])
def test_sizes_past_the_emitted_integers_are_refused_at_the_op(tmp_path, shape, message, action):
    kernel = tmp_path / "grow.py"
    kernel.write_text(HUGE)
    out = tmp_path / "gen"
    code, output, err = _invoke(kernel, "--shape", f"x={shape}", "--shape", f"out={shape}", *action, "-o", out)
    text = output + err
    assert code == 1, text
    assert "error[PTO109]" in text and message in text, text
    assert "grow.py:9:14" in text and "^^^^^^^" in text, text  # `x + 1.0`, the op whose kernel it is
    assert not out.exists()


def test_the_largest_sizes_that_fit_still_emit(tmp_path):
    kernel = tmp_path / "grow.py"
    kernel.write_text(HUGE)
    out = tmp_path / "gen"
    code, output, _ = _invoke(kernel, "--shape", "x=2147483647x16", "--shape", "out=2147483647x16",
                              "--emit", "ascendc", "-o", out)
    assert code == 0, output
    control = (out / "control.cpp").read_text()
    assert "INT64_C(34359738352)" in control  # 2**31 - 1 rows of 16: the element count, exact


GATE = '''
import pypto
F32 = pypto.DT_FP32


@pypto.frontend.jit
def gate(lens: pypto.Tensor((4,), pypto.DT_INT32), x: pypto.Tensor((16, 64), F32),
         out: pypto.Tensor((16, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    if lens[0] > 10 ** 30:
        out[:] = x + 1.0
    else:
        out[:] = x * 2.0
'''


def test_a_scalar_past_int64_in_the_control_program_is_refused_at_its_line(tmp_path):
    kernel = tmp_path / "gate.py"
    kernel.write_text(GATE)
    code, output, err = _invoke(kernel, "--emit", "ascendc", "-o", tmp_path / "gen")
    text = output + err
    assert code == 1, text  # it wrote INT64_C(1000000000000000000000000000000), which g++ rejects
    assert "error[PTO109] the integer 1.0e+30 does not fit in int64" in text and "gate.py:10:8" in text, text


NUMBER = '''
import pypto
import torch
F32 = pypto.DT_FP32


@pypto.frontend.jit
def add1(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((16, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x + 1.0


def example_inputs():
    return {"x": 5, "out": torch.zeros(16, 64)}


def reference(x, out):
    return {"out": out + 1.0}
'''


def test_run_with_a_number_where_a_tensor_is_says_it_must_be_a_tensor(tmp_path):
    kernel = tmp_path / "number.py"
    kernel.write_text(NUMBER)
    code, output, err = _invoke(kernel, "--run", "--backend", "interp")
    text = output + err
    assert code == 1, text
    assert "error[PTO106] argument `x` must be a tensor" in text and "got int 5" in text, text
    assert "number.py:8:10" in text and "rank" not in text, text  # at the parameter; not "declared with rank 2"
    # --shape x=16 still gives a tensor parameter a one-dimensional shape
    code, output, err = _invoke(kernel, "--shape", "x=16", "--emit", "ir")
    assert code == 1 and "tensor `x` is declared with rank 2 but the argument has shape [16]" in output + err


@pytest.mark.parametrize("backend", ["interp", pytest.param("host", marks=needs_cxx)])
def test_run_refuses_an_output_that_requires_grad_on_both_backends(tmp_path, backend):
    kernel = tmp_path / "grad.py"
    kernel.write_text(NUMBER.replace('"x": 5, "out": torch.zeros(16, 64)',
                                     '"x": torch.ones(16, 64), "out": torch.zeros(16, 64, requires_grad=True)'))
    code, output, err = _invoke(kernel, "--run", "--backend", backend)
    text = output + err
    assert code == 2, text  # could not run: the host wrote it and said ok, the interpreter faulted in its store
    assert ("add1(): argument `out` is an output but a leaf tensor that requires grad: the kernel writes it in "
            "place, which autograd forbids") in text, text


EMPTY_VIEW = '''
import pypto
F32 = pypto.DT_FP32


@pypto.frontend.jit
def empty(x: pypto.Tensor((4, 64), F32), b: pypto.Tensor((1, 64), F32), out: pypto.Tensor((4, 64), F32)):
    pypto.set_vec_tile_shapes(1, 64)
    a = pypto.view(x, [0, 64], [0, 0])
    c = a + b
    pypto.assemble(c, [0, 0], out)
'''


def test_a_kernel_emitter_error_is_located_at_its_kernel(tmp_path):
    # the vector emitter's own errors carry no span: they are reported at the kernel's first op
    kernel = tmp_path / "empty.py"
    kernel.write_text(EMPTY_VIEW)
    code, output, err = _invoke(kernel, "--emit", "ascendc", "-o", tmp_path / "gen")
    text = output + err
    assert code == 1 and "error[PTO109] value %0 of shape [0, 64] inside a [1, 64] kernel" in text, text
    assert "empty.py:10:9" in text and "10 |     c = a + b" in text, text  # it said empty.py:1:1
