"""Layout ops and names the emitter met in real code: ``unsqueeze`` (a view of the same data,
strided and partially valid values included), legacy kernels named by any string (``"MATMUL#2"``),
and a ``valid_shape`` whose rank is not the view's (pypto raises FeError: a located diagnostic)."""

from __future__ import annotations

import pytest
import torch

from pypto_ast import live, pipeline
from support import needs_cxx, write

UNSQUEEZE = '''
import pypto

F32 = pypto.DT_FP32


@pypto.frontend.jit
def lead(x: pypto.Tensor((8, 64), F32), out: pypto.Tensor((1, 8, 64), F32)):
    pypto.set_vec_tile_shapes(1, 4, 64)
    out[:] = pypto.unsqueeze(x, 0) * 2.0 + 1.0


@pypto.frontend.jit
def middle(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((4, 1, 32), F32)):
    pypto.set_vec_tile_shapes(4, 1, 32)
    part = pypto.view(x, [4, 32], [2, 16])  # a strided view: rows 64 apart
    out[:] = pypto.exp(pypto.unsqueeze(part, 1))


@pypto.frontend.jit
def last(x: pypto.Tensor((4, 16), F32), out: pypto.Tensor((4, 16, 1), F32)):
    pypto.set_vec_tile_shapes(4, 16, 1)
    out[:] = pypto.unsqueeze(x, 2) - 0.5
'''

SHAPES = {"lead": ((8, 64), (1, 8, 64)), "middle": ((16, 64), (4, 1, 32)), "last": ((4, 16), (4, 16, 1))}
EXPECT = {"lead": lambda x: x.unsqueeze(0) * 2.0 + 1.0, "middle": lambda x: torch.exp(x[2:6, 16:48].unsqueeze(1)),
          "last": lambda x: x.unsqueeze(2) - 0.5}


@needs_cxx
@pytest.mark.parametrize("kernel", sorted(SHAPES))
def test_unsqueeze_on_both_backends(tmp_path, kernel):
    module = live.load_module(str(write(tmp_path / "unsq.py", UNSQUEEZE)))
    x_shape, out_shape = SHAPES[kernel]
    x = torch.randn(x_shape)
    for backend in ("interp", "host"):
        out = torch.full(out_shape, float("nan"))
        inputs = {"x": x, "out": out}
        pipeline.run(pipeline.lower(getattr(module, kernel), inputs), inputs, backend)
        torch.testing.assert_close(out, EXPECT[kernel](x), msg=lambda m: f"{backend}: {m}")


LEGACY = '''
import pypto

x = pypto.tensor([16, 32], pypto.DT_FP32, "x")
y = pypto.tensor([16, 32], pypto.DT_FP32, "y")
with pypto.function("ADD#2", x, y):
    pypto.set_vec_tile_shapes(16, 32)
    y[:] = x + 1.0
'''


@needs_cxx
def test_a_legacy_kernel_named_by_any_string_builds(tmp_path):
    path = write(tmp_path / "legacy_named.py", LEGACY)
    program = pipeline.lower_file(str(path))
    files = pipeline.emit(program, "ascendc")
    kernels = [name for name in files if name.endswith(".cpp") and name != "control.cpp"]
    assert kernels and all(name[:-4].isidentifier() for name in kernels), kernels
    assert pipeline.build_host(program).exists()


BAD_VALID = '''
import pypto


@pypto.frontend.jit
def k(x: pypto.Tensor((4, 8), pypto.DT_FP32), y: pypto.Tensor((4, 8), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    y[:] = pypto.view(x, [4, 8], [0, 0], valid_shape=[4])
'''


def test_a_valid_shape_of_another_rank_is_refused_at_the_view(tmp_path):
    path = write(tmp_path / "bad_valid.py", BAD_VALID)
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(path))
    assert info.value.code == "PTO106"
    message, span = info.value.findings[0]
    assert "valid_shape [4] must have the rank of the view's shape [4, 8]" in message
    assert span.line == 7


DYNAMIC_COLS = '''
import pypto

F16 = pypto.DT_FP16


@pypto.frontend.jit
def add_blocks(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], F16),
               y: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], F16),
               out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], F16)):
    pypto.set_vec_tile_shapes(8, 32)
    rows, cols = x.shape[0], x.shape[1]
    for m in pypto.loop((rows + 7) // 8):
        for n in pypto.loop((cols + 31) // 32):
            vm = pypto.min(8, rows - m * 8)
            vn = pypto.min(32, cols - n * 32)
            a = pypto.view(x, [8, 32], [m * 8, n * 32], valid_shape=[vm, vn])
            b = pypto.view(y, [8, 32], [m * 8, n * 32], valid_shape=[vm, vn])
            pypto.assemble(a * 2.0 + b, [m * 8, n * 32], out)
'''


@needs_cxx
@pytest.mark.parametrize("shape", [(8, 32), (13, 50), (3, 100), (17, 7)])
def test_a_dynamic_last_dimension_is_read_through_static_views(tmp_path, shape):
    """Row strides known only at the call (a DYNAMIC last dim): each launch passes them in the
    tiling, the same library serves every width."""
    module = live.load_module(str(write(tmp_path / "dyncols.py", DYNAMIC_COLS)))
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(shape, generator=g).half(), torch.randn(shape, generator=g).half()
    for backend in ("interp", "host"):
        out = torch.full(shape, float("nan"), dtype=torch.float16)
        inputs = {"x": x, "y": y, "out": out}
        program = pipeline.lower(module.add_blocks, inputs)
        if backend == "host":
            files = pipeline.emit(program, "ascendc")
            kernel = next(t for n, t in files.items() if n.endswith("_k1.cpp"))
            assert "(per launch)" in kernel and "ld0 = " in kernel
        pipeline.run(program, inputs, backend)
        torch.testing.assert_close(out, (x * 2.0 + y), rtol=1e-3, atol=1e-3, msg=lambda m: f"{backend}: {m}")


UNREAD_ATTR = """program k(@x: tensor<8x64xfp32>, @out: tensor<8x64xfp32> out) paths=1 {
  loop i = 0 to 1 step 1 name=l kind=implicit unroll=1 submit_before_loop=false {
    block b0 {
      %0 = exp(%x_in) {base = 2} : tensor<8x64xfp32> tile [8, 64] loc(5:4-5:20)
      assemble(%0, @out) {offsets = [0, 0]} loc(6:4-6:10)
    }
  }
}
""".replace("%x_in", "@x")


def test_an_attribute_the_emitter_does_not_read_is_refused_not_ignored():
    """round(x, decimals=1) was once emitted as round(x): an op's attribute the emitter has no
    code for stops it at PTO109 naming it (vector.HONOURED_ATTRS)."""
    from pypto_ast.ir.parser import parse_program

    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.emit(parse_program(UNREAD_ATTR), "ascendc")
    assert info.value.code == "PTO109"
    assert "op 'exp' with base=2" in info.value.findings[0][0]


FULL_VALID = '''
import pypto

F32 = pypto.DT_FP32


@pypto.frontend.jit
def partial_fill(x: pypto.Tensor((8, 32), F32), out: pypto.Tensor((8, 32), F32)):
    pypto.set_vec_tile_shapes(8, 32)
    t = pypto.full([8, 32], 2.0, F32, valid_shape=[5, 20])
    out[:] = t + x
'''


@needs_cxx
def test_full_with_a_valid_shape_writes_only_its_valid_region(tmp_path):
    module = live.load_module(str(write(tmp_path / "full_valid.py", FULL_VALID)))
    x = torch.randn(8, 32)
    want = torch.full((8, 32), -7.0)
    want[:5, :20] = x[:5, :20] + 2.0
    for backend in ("interp", "host"):
        out = torch.full((8, 32), -7.0)
        inputs = {"x": x, "out": out}
        pipeline.run(pipeline.lower(module.partial_fill, inputs), inputs, backend)
        torch.testing.assert_close(out, want, msg=lambda m: f"{backend}: {m}")


BATCHED_TAIL = '''
import pypto

F32 = pypto.DT_FP32


@pypto.frontend.jit
def attention_scores(q: pypto.Tensor([pypto.DYNAMIC, 2, 16, 32], F32), k: pypto.Tensor([pypto.DYNAMIC, 2, 16, 32], F32),
                     v: pypto.Tensor([pypto.DYNAMIC, 2, 16, 32], F32), out: pypto.Tensor([pypto.DYNAMIC, 2, 16, 32], F32)):
    pypto.set_vec_tile_shapes(1, 2, 16, 32)
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    b = q.shape[0]
    for i in pypto.loop((b + 1) // 2):
        vb = pypto.min(2, b - i * 2)
        qb = pypto.view(q, [2, 2, 16, 32], [i * 2, 0, 0, 0], valid_shape=[vb, 2, 16, 32])
        kb = pypto.view(k, [2, 2, 16, 32], [i * 2, 0, 0, 0], valid_shape=[vb, 2, 16, 32])
        vv = pypto.view(v, [2, 2, 16, 32], [i * 2, 0, 0, 0], valid_shape=[vb, 2, 16, 32])
        scores = pypto.matmul(qb, pypto.transpose(kb, 2, 3), out_dtype=F32) * 0.125
        pypto.assemble(pypto.matmul(scores, vv, out_dtype=F32), [i * 2, 0, 0, 0], out)
'''


@needs_cxx
@pytest.mark.parametrize("batch", [1, 3, 4])
def test_batched_transpose_and_matmul_of_a_ragged_tail(tmp_path, batch):
    """The last block of a loop over a DYNAMIC batch holds fewer matrices than the view: the
    transpose and the cube kernels process the valid ones only (reading past them would read
    past the tensor), and the results carry that valid extent."""
    module = live.load_module(str(write(tmp_path / "batched.py", BATCHED_TAIL)))
    g = torch.Generator().manual_seed(batch)
    q, k, v = (torch.randn(batch, 2, 16, 32, generator=g) for _ in range(3))
    want = torch.matmul(torch.matmul(q, k.transpose(2, 3)) * 0.125, v)
    for backend in ("interp", "host"):
        out = torch.full((batch, 2, 16, 32), float("nan"))
        inputs = {"q": q, "k": k, "v": v, "out": out}
        pipeline.run(pipeline.lower(module.attention_scores, inputs), inputs, backend)
        torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-4, msg=lambda m: f"{backend}: {m}")
