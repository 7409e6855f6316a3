"""Negative and edge cases of the host backend: it must say what is wrong, loudly and located,
or compute the right numbers -- never silently wrong ones.

(a) a vector tile whose double-buffered UB footprint is over the SoC budget: the UB-budget
    diagnostic naming the tile shape, at the op's file:line:col with a caret
    (``pypto-transpile FILE --build --backend host`` exits 1, writes nothing);
(b) unaligned tails -- 13 and 100 columns (rows not a multiple of 32 bytes: the DataCopyPad
    path) and row counts that are not a multiple of the tile rows -- run and equal torch;
(c) views reaching past a tensor: with static offsets the lowering gives a located
    diagnostic; with offsets from a scalar parameter / loop index the host model faults
    (``pypto_host::HardwareFault`` ... out of bounds, via KernelErrors);
(d) hand-edited emitted sources run through ``host_backend.run_host(..., files=edited)``
    raise ``HostRunError`` with the model's fault text.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pypto_ast import knobs, live, pipeline
from pypto_ast.emit.host_backend import HostRunError, run_host
from pypto_ast.runner import run_and_compare

pytestmark = pytest.mark.skipif(
    shutil.which(knobs.cxx) is None,
    reason=f"C++ compiler {knobs.cxx!r} not on PATH (set PYPTO_AST_CXX): the host build needs one",
)

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def _load(path: Path):
    with contextlib.redirect_stdout(io.StringIO()):
        module = live.load_module(str(path))
        return module, live.find_kernel(module)


# -- (a) the UB budget --------------------------------------------------------------------
BIG_TILE = '''
import pypto
import torch
F32 = pypto.DT_FP32


@pypto.frontend.jit
def big_tile(x: pypto.Tensor((128, 1024), F32), y: pypto.Tensor((128, 1024), F32),
             out: pypto.Tensor((128, 1024), F32)):
    pypto.set_vec_tile_shapes(64, 1024)
    out[:] = pypto.exp(x) + y


def example_inputs():
    return {"x": torch.zeros(128, 1024), "y": torch.zeros(128, 1024), "out": torch.zeros(128, 1024)}


def reference(x, y, out):
    return {"out": torch.exp(x) + y}
'''
BIG_LINE = 10  # the line of `out[:] = pypto.exp(x) + y` in BIG_TILE


def _transpile(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "pypto_ast.cli.transpile", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def test_ub_budget_overflow_names_the_tile_at_the_op(tmp_path):
    _write(tmp_path, "big.py", BIG_TILE)
    proc = _transpile(tmp_path, "big.py", "--build", "--backend", "host", "-o", "gen")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text
    assert "UB budget" in text and "[64, 1024]" in text, text
    assert "184 KiB" in text and "ascend910b" in text, text
    assert re.search(rf"big\.py:{BIG_LINE}:\d+", text), text
    assert re.search(r"^\s*\d*\s*\|\s*\^+", text, re.M), f"no caret line:\n{text}"
    assert "set_vec_tile_shapes(" in text, text  # the fix: a smaller tile
    assert not (tmp_path / "gen").exists()


SINGLE_BUFFER_TILE = '''
import pypto
import torch
F32 = pypto.DT_FP32


@pypto.frontend.jit
def wide_add(x: pypto.Tensor((48, 512), F32), y: pypto.Tensor((48, 512), F32), out: pypto.Tensor((48, 512), F32)):
    pypto.set_vec_tile_shapes(24, 512)
    out[:] = x + y * 2.0


def example_inputs():
    g = torch.Generator().manual_seed(5)
    return {"x": torch.randn(48, 512, generator=g), "y": torch.randn(48, 512, generator=g),
            "out": torch.zeros(48, 512)}


def reference(x, y, out):
    return {"out": x + y * 2.0}
'''


def test_a_tile_that_fits_ub_only_single_buffered_keeps_its_shape_and_runs(tmp_path):
    """pypto's rule is that a subgraph's live tiles fit UB (pypto-dsl.md, tile shapes): a [24, 512]
    fp32 tile of two inputs and an output needs 288 KiB double-buffered, 144 KiB single-buffered.
    The kernel keeps the tile the user set, with single queue buffers, and computes the same."""
    module, kernel = _load(_write(tmp_path, "wide.py", SINGLE_BUFFER_TILE))
    program = pipeline.lower(kernel, module.example_inputs())
    files = pipeline.emit(program, "ascendc")
    [info] = json.loads(files["manifest.json"])["kernels"]
    assert info["buffers"] == 1 and info["tile"] == [24, 512] and info["ub_bytes"] <= 184 * 1024, info
    assert "InitBuffer(q0, 1," in files[info["file"]]
    for backend in ("interp", "host"):
        lines: list[str] = []
        assert run_and_compare(module, kernel, module.example_inputs(), backend=backend, echo=lines.append) == 0, lines


def test_a_tile_over_ub_even_single_buffered_is_refused_saying_so(tmp_path):
    module, kernel = _load(_write(tmp_path, "big.py", BIG_TILE))
    with pytest.raises(pipeline.KernelErrors, match="even single-buffered"):
        pipeline.emit(pipeline.lower(kernel, module.example_inputs()), "ascendc")


def test_ub_budget_overflow_is_kernel_errors_with_a_span(tmp_path):
    module, kernel = _load(_write(tmp_path, "big.py", BIG_TILE))
    program = pipeline.lower(kernel, module.example_inputs())
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.emit(program, "ascendc")
    [(message, span)] = [f for f in info.value.findings if "UB budget" in f[0]][:1]
    assert "[64, 1024]" in message and span is not None and span.line == BIG_LINE
    # a SoC with the same UB says the same; the interpreter has no UB and runs it
    with pytest.raises(pipeline.KernelErrors, match="UB budget"):
        pipeline.emit(program, "ascendc", soc="ascend910_93")
    lines: list[str] = []
    assert run_and_compare(module, kernel, module.example_inputs(), backend="interp", echo=lines.append) == 0


def test_a_tile_that_fits_emits(tmp_path):
    _write(tmp_path, "fits.py", BIG_TILE.replace("set_vec_tile_shapes(64, 1024)", "set_vec_tile_shapes(4, 1024)"))
    proc = _transpile(tmp_path, "fits.py", "--emit", "ascendc", "-o", "gen")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "gen" / "manifest.json").is_file()


# -- (b) unaligned tails ------------------------------------------------------------------
TAILS = '''
import pypto
DT = pypto.DT_{DT}
F32 = pypto.DT_FP32


@pypto.frontend.jit
def tails(x: pypto.Tensor(({R}, {C}), DT), y: pypto.Tensor(({R}, {C}), DT),
          out: pypto.Tensor(({R}, {C}), DT), red: pypto.Tensor(({R}, 1), F32),
          soft: pypto.Tensor(({R}, {C}), F32)):
    pypto.set_vec_tile_shapes({T}, {C})
    out[:] = pypto.exp(-pypto.abs(x)) * y + 0.5
    w = {W}
    m = pypto.amax(w, -1, keepdim=True)
    red[:] = pypto.sum(w, -1, keepdim=True)
    e = pypto.exp(w - m)
    soft[:] = e / pypto.sum(e, -1, keepdim=True)
'''


@pytest.mark.parametrize("dtype,rows,cols,tile", [
    ("fp32", 37, 13, 8),   # 52-byte rows, 37 = 4 * 8 + 5
    ("fp16", 37, 13, 8),   # 26-byte rows
    ("fp32", 50, 100, 16),  # 400-byte rows, 50 = 3 * 16 + 2
    ("fp16", 19, 100, 32),  # 200-byte rows, fewer rows than one tile
])
def test_unaligned_tails_equal_torch(tmp_path, dtype, rows, cols, tile):
    source = TAILS.format(DT=dtype.upper(), R=rows, C=cols, T=tile, W="x" if dtype == "fp32" else "pypto.cast(x, F32)")
    _, kernel = _load(_write(tmp_path, f"tails_{dtype}_{rows}x{cols}.py", source))
    tdt = {"fp32": torch.float32, "fp16": torch.float16}[dtype]
    g = torch.Generator().manual_seed(rows * 1000 + cols)
    x = (torch.rand(rows, cols, generator=g) * 4 - 2).to(tdt)
    y = (torch.rand(rows, cols, generator=g) * 4 - 2).to(tdt)
    nan = float("nan")  # elements the kernel fails to write stay NaN and fail the comparison
    inputs = {"x": x.clone(), "y": y.clone(), "out": torch.full((rows, cols), nan, dtype=tdt),
              "red": torch.full((rows, 1), nan), "soft": torch.full((rows, cols), nan)}
    program = pipeline.lower(kernel, inputs)
    stats: dict = {}
    pipeline.run(program, inputs, "host", stats=stats)
    w = x.float()
    e = torch.exp(w - w.amax(-1, keepdim=True))
    want = {"out": torch.exp(-x.abs()) * y + 0.5, "red": w.sum(-1, keepdim=True),
            "soft": e / e.sum(-1, keepdim=True)}
    for name, expected in want.items():
        rtol, atol = (2e-3, 2e-3) if expected.dtype == torch.float16 else (1e-5, 1e-5 * cols)
        torch.testing.assert_close(inputs[name], expected, rtol=rtol, atol=atol,
                                   msg=lambda m, name=name: f"{name}: {m}")
    # ragged rows are padded in UB, not on the bus: every tensor still moves exactly once
    assert stats["gm_to_ub_bytes"] + stats["ub_to_gm_bytes"] == stats["min_bytes"], stats


# -- (c) views past the end of a tensor ----------------------------------------------------
OOB_DYNAMIC = '''
import pypto
import torch
F32 = pypto.DT_FP32


@pypto.frontend.jit
def oob(x: pypto.Tensor(({XR}, 64), F32), out: pypto.Tensor(({OR}, 64), F32), n: int):
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(n, name="blk", idx_name="i"):
        a = pypto.view(x, [16, 64], [i * 16 + {SHIFT}, 0])
        pypto.assemble(a + 1.0, [i * 16, 0], out)


def example_inputs():
    return {{"x": torch.ones({XR}, 64), "out": torch.zeros({OR}, 64), "n": {N}}}


def reference(x, out, n):
    return {{"out": x[:{OR}] + 1.0}}
'''

OOB_STATIC = '''
import pypto
import torch
F32 = pypto.DT_FP32


@pypto.frontend.jit
def oob_static(x: pypto.Tensor((64, 64), F32), out: pypto.Tensor((64, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    a = pypto.view(x, [16, 64], [56, 0])
    pypto.assemble(a + 1.0, [0, 0], out)


def example_inputs():
    return {"x": torch.ones(64, 64), "out": torch.zeros(64, 64)}


def reference(x, out):
    return {"out": x + 1.0}
'''


def test_static_view_past_the_end_is_a_located_diagnostic(tmp_path):
    module, kernel = _load(_write(tmp_path, "oob_static.py", OOB_STATIC))
    with pytest.raises(pipeline.KernelErrors) as info:
        run_and_compare(module, kernel, module.example_inputs(), backend="host", echo=lambda _: None)
    message, span = info.value.findings[0]
    assert "outside" in message or "out of bounds" in message, message
    assert span is not None and span.line == 9, (message, span)


@pytest.mark.parametrize("what,x_rows,out_rows,shift,n", [
    ("read past the end", 64, 64, 0, 5),     # the 5th block reads rows [64, 80) of a 64-row x
    ("unaligned read", 64, 64, 8, 4),        # the last block reads rows [56, 72)
    ("write past the end", 80, 64, 0, 5),    # the 5th block writes rows [64, 80) of a 64-row out
])
def test_dynamic_view_past_the_end_faults_loudly(tmp_path, what, x_rows, out_rows, shift, n):
    source = OOB_DYNAMIC.format(XR=x_rows, OR=out_rows, SHIFT=shift, N=n)
    module, kernel = _load(_write(tmp_path, "oob.py", source))
    inputs = module.example_inputs()
    with pytest.raises(pipeline.KernelErrors) as info:
        run_and_compare(module, kernel, inputs, backend="host", echo=lambda _: None)
    message = info.value.message
    assert "HardwareFault" in message and "out of bounds" in message, f"{what}: {message}"
    assert info.value.path and Path(info.value.path).name == "oob.py"


def test_dynamic_view_in_bounds_runs(tmp_path):
    """The same kernel with n in bounds matches: the faults above are about the bounds only."""
    module, kernel = _load(_write(tmp_path, "oob.py", OOB_DYNAMIC.format(XR=64, OR=64, SHIFT=0, N=4)))
    assert run_and_compare(module, kernel, module.example_inputs(), backend="host", echo=lambda _: None) == 0


VALID_EXTENT = '''
import pypto
import torch
F32 = pypto.DT_FP32


@pypto.frontend.jit
def rows(x: pypto.Tensor((64, 64), F32), out: pypto.Tensor((64, 64), F32), n: int):
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(4, name="blk", idx_name="i"):
        blk = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[n - i * 16, 64])
        pypto.assemble(blk + 1.0, [i * 16, 0], out)


def example_inputs():
    return {{"x": torch.ones(64, 64), "out": torch.zeros(64, 64), "n": {N}}}


def reference(x, out, n):
    return {{"out": x + 1.0}}
'''


def _fault_of(tmp_path, source: str, backend: str):
    """The one finding of running the module's example through ``backend``: (message, span)."""
    module, kernel = _load(_write(tmp_path, f"fault_{backend}.py", source))
    with pytest.raises(pipeline.KernelErrors) as info:
        run_and_compare(module, kernel, module.example_inputs(), backend=backend, echo=lambda _: None)
    assert info.value.code == "PTO111", info.value.message
    [(message, span)] = info.value.findings
    return message, span


@pytest.mark.parametrize("n,fault", [
    (64, "view of @x: valid_shape [64, 64] exceeds shape [16, 64]"),  # n - i * 16 without pypto.min
    (8, "view valid_shape has a negative extent: (-8, 64)"),  # the second block: 8 - 16
])
def test_a_valid_extent_outside_its_view_faults_on_both_backends_at_the_view(tmp_path, n, fault):
    """The host clamped such an extent (pypto_min) and said ok; it faults as the interpreter does."""
    source = VALID_EXTENT.format(N=n)
    line = source.lstrip("\n").splitlines().index(
        "        blk = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[n - i * 16, 64])") + 1
    for backend in ("interp", "host"):
        message, span = _fault_of(tmp_path, source, backend)
        assert message.startswith(f"{backend} backend: ") and fault in message, message
        assert span is not None and (span.line, span.col) == (line, 14), (backend, span)


ONE_ROW = '''
import pypto
F32 = pypto.DT_FP32


@pypto.frontend.jit
def first_rows(x: pypto.Tensor((1, 64), F32), out: pypto.Tensor((1, 64), F32), n: int):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(1, name="blk", idx_name="i"):
        a = pypto.view(x, [1, 64], [0, 0], valid_shape=[n + i, 64])
        out[:] = a + x
'''


@pytest.mark.parametrize("n", [0, 1])
def test_a_one_row_value_keeps_its_valid_rows(tmp_path, n):
    """[1, 64] with 0 valid rows inside a [1, 64] kernel: nothing to store (the host took the
    operand for a row broadcast, stored its unread UB and wrote NaN over the output)."""
    _, kernel = _load(_write(tmp_path, "one_row.py", ONE_ROW))
    x = torch.randn(1, 64)
    outs = {}
    for backend in ("interp", "host"):
        inputs = {"x": x.clone(), "out": torch.full((1, 64), 7.0), "n": n}
        pipeline.run(pipeline.lower(kernel, inputs), inputs, backend)
        outs[backend] = inputs["out"]
    torch.testing.assert_close(outs["host"], outs["interp"])
    torch.testing.assert_close(outs["host"], x * 2 if n else torch.full((1, 64), 7.0))


COLUMN_WRAP = '''
import pypto
import torch
F32 = pypto.DT_FP32


@pypto.frontend.jit
def halves(x: pypto.Tensor((64, 64), F32), out: pypto.Tensor((32, 32), F32)):
    pypto.set_vec_tile_shapes(16, 32)
    for j in pypto.loop(2, name="half", idx_name="j"):
        a = pypto.view(x, [32, 32], [0, j * 48])
        pypto.assemble(a + 1.0, [0, 0], out)


def example_inputs():
    return {"x": torch.ones(64, 64), "out": torch.zeros(32, 32)}


def reference(x, out):
    return {"out": x[:32, 32:] + 1.0}
'''


@pytest.mark.parametrize("source,fault,line", [
    # the second half's columns [48, 80) of a 64-column x: the host read on into the next row
    (COLUMN_WRAP, "view of @x: offsets [0, 48] + shape [32, 32] is out of bounds of [64, 64]", 10),
    (OOB_DYNAMIC.format(XR=80, OR=64, SHIFT=0, N=5),
     "assemble: region offsets [64, 0] + valid [16, 64] is out of bounds of @out [64, 64]", 11),
], ids=["columns past the row", "rows past the end"])
def test_a_region_past_its_tensor_faults_like_the_interpreter(tmp_path, source, fault, line):
    for backend in ("interp", "host"):
        message, span = _fault_of(tmp_path, source, backend)
        assert fault in message, message
        assert span is not None and span.line == line, (backend, span)


@pytest.mark.parametrize("what,x_rows,out_rows,line", [("read past the end", 64, 64, 10),
                                                      ("write past the end", 80, 64, 11)])
def test_a_host_fault_points_at_the_op(tmp_path, what, x_rows, out_rows, line):
    """pypto-transpile --run --backend host: the caret under the view or the assemble, not line 1."""
    path = _write(tmp_path, "oob.py", OOB_DYNAMIC.format(XR=x_rows, OR=out_rows, SHIFT=0, N=5))
    proc = _transpile(tmp_path, "oob.py", "--run", "--backend", "host")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "error[PTO111] host backend: pypto_host::HardwareFault" in text, text
    assert f"--> oob.py:{line}:" in text, f"{what}: {text}"
    source_line = path.read_text().splitlines()[line - 1]
    assert f"{line} | {source_line}" in text and re.search(r"^\s*\|\s+\^{10,}", text, re.M), text


# -- (d) hand-edited emitted sources ---------------------------------------------------------
EDITED = '''
import pypto
F32 = pypto.DT_FP32


@pypto.frontend.jit
def edited(x: pypto.Tensor((64, 128), F32), y: pypto.Tensor((64, 128), F32),
           out: pypto.Tensor((64, 128), F32)):
    pypto.set_vec_tile_shapes(8, 128)
    out[:] = pypto.exp(x) * y + 1.0
'''

# (name, [(pattern, replacement), ...]): the first pattern found in the kernel file is applied,
# so each edit survives the emitter's spelling of the copy (DataCopy or DataCopyPad).
EDITS = {
    # a copy length 64x too long: the UB destination (or the GM source) overflows
    "copy length": [
        (r"(AscendC::DataCopy\(\w+, \w+\[[^\]]*\], )(\w+)\)", r"\g<1>(\g<2>) * 64)"),
        (r"(AscendC::DataCopyPad\(\w+, \w+\[[^\]]*\], AscendC::DataCopy(?:Ext)?Params\{[^,]+, )([^,]+),",
         r"\g<1>(\g<2>) * 64u,"),
    ],
    # a vector op over 64x the elements of its tensors
    "vector count": [(r"(AscendC::(?:Exp|Mul|Adds)\([^;]*, )(\w+)\);", r"\g<1>(\g<2>) * 64);")],
    # AllocTensor from the same double-buffered queue twice more before anything is freed
    "alloc twice": [(r"AscendC::LocalTensor<(\w+)> (\w+) = (\w+)\.AllocTensor<\w+>\(\);",
                     r"\g<0> AscendC::LocalTensor<\1> \2_b = \3.AllocTensor<\1>(); (void)\2_b;"
                     r" AscendC::LocalTensor<\1> \2_c = \3.AllocTensor<\1>(); (void)\2_c;")],
}
FAULTS = {"copy length": r"exceeds|out of bounds", "vector count": r"count \d+ exceeds",
          "alloc twice": r"AllocTensor.*in use"}


@pytest.fixture(scope="module")
def edited_program(tmp_path_factory):
    path = _write(tmp_path_factory.mktemp("edited"), "edited.py", EDITED)
    _, kernel = _load(path)
    return pipeline.lower(kernel)


def _inputs():
    g = torch.Generator().manual_seed(4)
    return {"x": torch.randn(64, 128, generator=g), "y": torch.randn(64, 128, generator=g),
            "out": torch.zeros(64, 128)}


def test_unedited_sources_run(edited_program):
    inputs = _inputs()
    run_host(edited_program, inputs, files=pipeline.emit(edited_program, "ascendc"))
    torch.testing.assert_close(inputs["out"], torch.exp(inputs["x"]) * inputs["y"] + 1.0)


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_hand_edited_source_faults(edited_program, edit, monkeypatch):
    # The edits change the Ascend C calls; a fused run's one-pass host form (emit/fuse.py) is a
    # line of its own that the edit leaves alone, so the calls run as edited with fusion off.
    monkeypatch.setattr(knobs, "host_fuse", False)
    files = pipeline.emit(edited_program, "ascendc")
    kernel_file = json.loads(files["manifest.json"])["kernels"][0]["file"]
    text = files[kernel_file]
    for pattern, replacement in EDITS[edit]:
        edited, count = re.subn(pattern, replacement, text, count=1)
        if count:
            break
    else:
        pytest.fail(f"{edit}: no pattern matches the emitted {kernel_file} any more; update EDITS:\n{text}")
    inputs = _inputs()
    with pytest.raises(HostRunError) as info:
        run_host(edited_program, inputs, files={**files, kernel_file: edited})
    message = str(info.value)
    assert message.startswith("pypto_host::HardwareFault: "), message
    assert re.search(FAULTS[edit], message), f"{edit}: {message}"
    assert info.value.span is not None and info.value.span.line == 9, info.value.span  # the kernel's op
