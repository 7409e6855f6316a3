"""NeoX-style rotary embedding recorded with the pypto.function context manager.

The first row block holds the BOS/sink tokens, which are copied through unrotated.
"""

import torch

import pypto

SEQ = 256
HEAD_DIM = 128
ROW_BLK = 32


def build_rope_graph(seq, dim, blk):
    half = dim // 2
    x = pypto.tensor([seq, dim], pypto.DT_FP32, "x")
    cos = pypto.tensor([seq, dim], pypto.DT_FP32, "cos")
    sin = pypto.tensor([seq, dim], pypto.DT_FP32, "sin")
    out = pypto.tensor([seq, dim], pypto.DT_FP32, "out")

    with pypto.function("ROPE_NEOX", x, cos, sin, out):
        for s in pypto.loop(seq // blk, name="rope_rows", idx_name="s"):
            pypto.set_vec_tile_shapes(blk, dim)
            row0 = s * blk
            xb = pypto.view(x, [blk, dim], [row0, 0])
            if s == 0:
                pypto.assemble(pypto.clone(xb), [row0, 0], out)
            else:
                lo = pypto.view(x, [blk, half], [row0, 0])
                hi = pypto.view(x, [blk, half], [row0, half])
                rot = pypto.concat([hi * -1.0, lo], dim=-1)
                c = pypto.view(cos, [blk, dim], [row0, 0])
                sn = pypto.view(sin, [blk, dim], [row0, 0])
                pypto.assemble(xb * c + rot * sn, [row0, 0], out)
    return x, cos, sin, out


def rope_tables(seq, dim, base=10000.0):
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    ang = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def launch_rope(x_t, cos_t, sin_t, out_t):
    build_rope_graph(SEQ, HEAD_DIM, ROW_BLK)
    pypto.runtime._device_init()
    args = [
        pypto.from_torch(x_t, "x"),
        pypto.from_torch(cos_t, "cos"),
        pypto.from_torch(sin_t, "sin"),
        pypto.from_torch(out_t, "out"),
    ]
    pypto.runtime._device_run_once_data_from_host(*args)
    pypto.runtime._device_fini()


def main():
    cos_t, sin_t = rope_tables(SEQ, HEAD_DIM)
    x_t = torch.randn(SEQ, HEAD_DIM, dtype=torch.float32).npu()
    out_t = torch.zeros(SEQ, HEAD_DIM, dtype=torch.float32).npu()
    launch_rope(x_t, cos_t.npu(), sin_t.npu(), out_t)
    half = HEAD_DIM // 2
    x_c = x_t.cpu()
    rot = torch.cat([-x_c[:, half:], x_c[:, :half]], dim=-1)
    expect = x_c * cos_t + rot * sin_t
    expect[:ROW_BLK] = x_c[:ROW_BLK]
    print("max err", (out_t.cpu() - expect).abs().max().item())


if __name__ == "__main__":
    main()
