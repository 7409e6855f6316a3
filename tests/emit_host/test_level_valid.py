"""A view valid to a run-time extent along a middle axis (issue 18): Kimi's block attention reads
``[tile, l_max, d]`` of a ``[bt, l, d]`` tensor with ``valid_shape=[tile, l, d]``, ``l`` a DYNAMIC
dim of the call, so each of the ``tile`` levels of ``l_max`` rows holds ``l`` valid rows: not a
row prefix of the block.  The interpreter runs the whole form (an RMS norm over the last axis,
its store, the models' batched matmuls over the valid ``l``); the emitter does not carry a count
of valid rows per level yet, so the host stops at the op reading the view with a PTO109 that
names the op, the dtype and the form."""

from __future__ import annotations

import pytest
import torch

from pypto_ast import live, pipeline
from support import line_of, write

BLOCKS = '''
import pypto


class BlockCfg:
    def __init__(self, tile, l_max):
        self.tile, self.l_max = tile, l_max


CFG = BlockCfg({tile}, {l_max})


def _rms(v, d):
    vf = pypto.cast(v, pypto.DT_FP32)
    ms = pypto.sum(pypto.mul(vf, vf), dim=-1, keepdim=True)
    return vf, pypto.sqrt(pypto.add(pypto.div(ms, d), 1e-6))


@pypto.frontend.jit
def mix_blocks(v_flat: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
               q: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC]),
               rms_out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
               h_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC])):
    bt, l, d = v_flat.shape
    for i in pypto.loop(0, bt, CFG.tile, name="T", idx_name="i"):
        v = pypto.view(v_flat, [CFG.tile, CFG.l_max, d], [i, 0, 0], valid_shape=[CFG.tile, l, d])
        pypto.set_vec_tile_shapes(1, CFG.l_max, d)
        vf, rms = _rms(v, d)
        pypto.assemble(rms, [i, 0, 0], rms_out)
        k = pypto.div(vf, rms)
        pypto.set_cube_tile_shapes([CFG.l_max, CFG.l_max], [64, 64], [16, 16])
        logits = pypto.reshape(pypto.matmul(q, k, pypto.DT_FP32, b_trans=True), [CFG.tile, CFG.l_max],
                               valid_shape=[CFG.tile, l])
        pypto.set_vec_tile_shapes(4, CFG.l_max)
        alpha = pypto.reshape(pypto.softmax(logits, dim=-1), [CFG.tile, 1, CFG.l_max], valid_shape=[CFG.tile, 1, l])
        pypto.set_cube_tile_shapes([1, 1], [64, 64], [64, 64])
        pypto.assemble(pypto.matmul(alpha, vf, v_flat.dtype), [i, 0, 0], h_out)
'''


def _case(bt, l, d, seed):
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(bt, l, d, generator=g).bfloat16()
    v.view(-1)[3] = -0.0
    q = torch.randn(1, 1, d, generator=g) / d ** 0.5
    vf = v.float()
    rms = (vf.pow(2).sum(-1, keepdim=True) / d + 1e-6).sqrt()
    alpha = torch.softmax((q * (vf / rms)).sum(-1), -1)
    h = (alpha.unsqueeze(1) @ vf).bfloat16()
    args = {"v_flat": v, "q": q, "rms_out": torch.zeros(bt, l, 1), "h_out": torch.zeros(bt, 1, d).bfloat16()}
    return args, rms, h


@pytest.mark.parametrize("bt,l,l_max", [(8, 5, 8), (12, 8, 8), (4, 1, 16)])
def test_the_interpreter_runs_the_blocks_valid_to_a_runtime_extent(tmp_path, bt, l, l_max):
    module = live.load_module(str(write(tmp_path / "blocks.py", BLOCKS.format(tile=4, l_max=l_max))))
    args, rms, h = _case(bt, l, 64, bt + l)
    pipeline.run(pipeline.lower(module.mix_blocks, args), args, "interp")
    torch.testing.assert_close(args["rms_out"], rms, rtol=1e-6, atol=0)
    torch.testing.assert_close(args["h_out"].float(), h.float(), rtol=1e-2, atol=1e-2)


def test_the_emitter_names_the_op_dtype_and_form_it_does_not_carry(tmp_path):
    path = write(tmp_path / "blocks.py", BLOCKS.format(tile=4, l_max=8))
    module = live.load_module(str(path))
    args, _, _ = _case(8, 5, 64, 0)
    with pytest.raises(pipeline.KernelErrors) as caught:
        pipeline.emit(pipeline.lower(module.mix_blocks, args), "ascendc")
    (message, span), = [(f[0], f[1]) for f in caught.value.findings]
    assert caught.value.code == "PTO109"
    assert message.startswith("op 'cast' reading the view of bf16 @v_flat: valid_shape [4, @v_flat.shape[1], 64] "
                              "of a [4, 8, 64] block that is not a row prefix (axis 1 valid to a run-time extent "
                              "under the 4 indices of axis 0: a count of valid rows per level of 8 rows"), message
    assert span.line == line_of(path, "v = pypto.view(")
