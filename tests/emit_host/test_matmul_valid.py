"""Matmul on the cube path where the control program decides the extents, and the interpreter
and the host agreeing on how a float matmul accumulates.

* A batch chunked with ``pypto.view(..., valid_shape=[(n - off).min(chunk), ...])``: the last
  chunk's valid rows (m) come from the control program, so do a K split's valid k; the cube
  kernel reads them from its tiling (``MatmulSpec.valid_mnk``) and writes the valid rows only.
* fp16/bf16 inputs with K longer than the cube tile's kL0: both backends sum each kL0 step
  exactly and round the accumulator to fp32 once per step (docs/semantics.md, matmul), so the
  two agree bit for bit, not only within a tolerance.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import knobs, live, pipeline  # noqa: E402
from pypto_ast.emit.cube import MatmulSpec, emit_matmul_kernel  # noqa: E402

needs_cxx = pytest.mark.skipif(shutil.which(knobs.cxx) is None, reason=f"C++ compiler {knobs.cxx!r} not on PATH")


def _kernel(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        module = live.load_module(str(path))
        return module, live.find_kernel(module)


def _run_both(module, kernel, inputs: dict, out: str):
    """{backend: the output tensor} with the same inputs (outputs are written in place)."""
    program = pipeline.lower(kernel, {k: v.clone() for k, v in inputs.items()})
    got = {}
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        pipeline.run(program, args, backend)
        got[backend] = args[out]
    return got, program


# -- a batch in chunks: the last chunk's valid rows ----------------------------------------
CHUNKED = '''
import pypto

B, H, I, CHUNK = 40, 64, 96, 16


@pypto.frontend.jit
def chunked_proj(x: pypto.Tensor((B, H), pypto.DT_BF16), w: pypto.Tensor((H, I), pypto.DT_BF16),
                 out: pypto.Tensor((B, I), pypto.DT_BF16)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    pypto.set_vec_tile_shapes(16, 32)
    for i in pypto.loop(0, (B + CHUNK - 1) // CHUNK, 1, name="rows", idx_name="i"):
        off = i * CHUNK
        part = pypto.view(x, [CHUNK, H], [off, 0], valid_shape=[(B - off).min(CHUNK), H])
        y = pypto.matmul(part, w, pypto.DT_BF16)
        pypto.assemble(y, [off, 0], out)
'''


@needs_cxx
def test_chunked_rows_take_the_valid_m_from_the_control_program(tmp_path):
    module, kernel = _kernel(tmp_path, "chunked", CHUNKED)
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(40, 64, generator=g) / 4).to(torch.bfloat16)
    w = (torch.randn(64, 96, generator=g) / 4).to(torch.bfloat16)
    inputs = {"x": x, "w": w, "out": torch.full((40, 96), float("nan"), dtype=torch.bfloat16)}
    got, program = _run_both(module, kernel, inputs, "out")
    assert torch.equal(got["interp"], got["host"])
    # every row written (the last chunk has 8 valid rows of 16), and the values are the product
    assert not torch.isnan(got["host"].float()).any()
    torch.testing.assert_close(got["host"].float(), (x.double() @ w.double()).float(), rtol=8e-3, atol=8e-3)
    files = pipeline.emit(program, "ascendc")
    cubes = [k for k in json.loads(files["manifest.json"])["kernels"] if k.get("kind") == "cube"]
    [cube] = cubes
    src = files[cube["file"]]
    assert "const uint32_t vM = static_cast<uint32_t>(tilingGm.GetValue(3));" in src  # after off_a, off_b, off_c
    assert "if (m0 >= vM || n0 >= vN) continue;" in src


# -- K in steps whose last one is short: the valid k ----------------------------------------
K_STEPS = '''
import pypto

M, K, N, KB = 32, 100, 48, 64


@pypto.frontend.jit
def k_steps(a: pypto.Tensor((M, K), pypto.DT_FP16), b: pypto.Tensor((K, N), pypto.DT_FP16),
            c: pypto.Tensor((M, N), pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [16, 16])
    pypto.set_vec_tile_shapes(32, 48)
    for k in pypto.loop(0, (K + KB - 1) // KB, 1, name="kblk", idx_name="k"):
        k0 = k * KB
        kv = (K - k0).min(KB)
        part = pypto.matmul(pypto.view(a, [M, KB], [0, k0], valid_shape=[M, kv]),
                            pypto.view(b, [KB, N], [k0, 0], valid_shape=[kv, N]), pypto.DT_FP32)
        if k == 0:
            c[:] = part
        else:
            c[:] = c + part
'''


@needs_cxx
def test_a_short_last_k_step_reads_only_the_valid_k(tmp_path):
    """The second step has 36 valid k of 64: the 28 columns past them (inside a's and b's GM
    rows, here huge values) must not reach c."""
    module, kernel = _kernel(tmp_path, "k_steps", K_STEPS)
    g = torch.Generator().manual_seed(4)
    a = torch.randn(32, 100, generator=g).to(torch.float16)
    b = torch.randn(100, 48, generator=g).to(torch.float16)
    inputs = {"a": a, "b": b, "c": torch.full((32, 48), float("nan"))}
    got, _ = _run_both(module, kernel, inputs, "c")
    assert torch.equal(got["interp"], got["host"])
    torch.testing.assert_close(got["host"], (a.double() @ b.double()).float(), rtol=1e-5, atol=1e-4)


# -- interpreter and host accumulate alike ---------------------------------------------------
LONG_K = '''
import pypto

M, K, N = 16, 512, 64


@pypto.frontend.jit
def long_k(a: pypto.Tensor((M, K), pypto.DT_BF16), b: pypto.Tensor((K, N), pypto.DT_BF16),
           c: pypto.Tensor((M, N), pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [KL0, KL0], [32, 32])
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)
'''


def _steps_model(a, b, kl0: int):
    """The accumulation rule written out: each kl0 step exact, the fp32 accumulator rounded per step."""
    acc = None
    for k0 in range(0, a.shape[1], kl0):
        step = a[:, k0:k0 + kl0].double() @ b[k0:k0 + kl0].double()
        acc = (step if acc is None else acc.double() + step).float()
    return acc


@needs_cxx
@pytest.mark.parametrize("kl0", [32, 128])
def test_bf16_matmul_over_several_k_steps_is_bit_identical_on_both_backends(tmp_path, kl0):
    module, kernel = _kernel(tmp_path, f"long_k{kl0}", LONG_K.replace("KL0", str(kl0)))
    g = torch.Generator().manual_seed(kl0)
    # magnitudes spread over 2**-6..2**6: fp32 sums of the products round differently by order
    a = (torch.randn(16, 512, generator=g) * torch.exp2(torch.randint(-6, 7, (16, 512), generator=g))).to(torch.bfloat16)
    b = torch.randn(512, 64, generator=g).to(torch.bfloat16)
    inputs = {"a": a, "b": b, "c": torch.zeros(16, 64)}
    got, _ = _run_both(module, kernel, inputs, "c")  # the fp32 accumulator itself: every rounding shows
    assert torch.equal(got["interp"], got["host"])
    assert torch.equal(got["host"], _steps_model(a, b, kl0))


def test_valid_mnk_kernel_reads_three_extents_and_checks_them():
    src, info = emit_matmul_kernel(MatmulSpec(kernel="mm_v", a_dtype="fp16", b_dtype="fp16", c_dtype="fp32",
                                              m=64, n=64, k=64, lda=64, ldb=64, ldc=64, valid_mnk=True))
    assert info["tiling"] == ["off_a", "off_b", "off_c", "valid_m", "valid_n", "valid_k", "valid_kb"]
    for v, whole in (("vM", "kM"), ("vN", "kN"), ("vK", "kK")):
        assert f"ascendc_assert({v} <= {whole}," in src
    assert "ki < (vK + kBaseK - 1) / kBaseK" in src
