"""Per-expert output scaling for a capacity-padded MoE layout (bf16).

Tokens are laid out expert by expert, `capacity` rows each: x [experts * capacity, hidden].
Each expert's rows are multiplied by that expert's scale row.
"""
from dataclasses import dataclass

import torch

import pypto

BF16 = pypto.DT_BF16


@dataclass(frozen=True)
class MoeLayout:
    experts: int = 8
    capacity: int = 128
    hidden: int = 256
    row_tile: int = 32


LAYOUT = MoeLayout()


def scale_expert_rows(x, scale_row, out, expert, layout):
    """Multiply the capacity rows of one expert by its scale row, one row tile at a time."""
    n_tiles = layout.capacity // layout.row_tile
    for t in pypto.loop(n_tiles, name="capacity_tiles", idx_name="idx"):
        row0 = expert * layout.capacity + t * layout.row_tile
        print("scale_expert_rows: expert", expert, "tile", t, "row", row0)
        xt = pypto.view(x, [layout.row_tile, layout.hidden], [row0, 0])
        pypto.assemble(xt * scale_row, [row0, 0], out)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def moe_expert_scale(
    x: pypto.Tensor([LAYOUT.experts * LAYOUT.capacity, LAYOUT.hidden], BF16),
    expert_scale: pypto.Tensor([LAYOUT.experts, LAYOUT.hidden], BF16),
    out: pypto.Tensor([LAYOUT.experts * LAYOUT.capacity, LAYOUT.hidden], BF16),
):
    pypto.set_vec_tile_shapes(LAYOUT.row_tile, LAYOUT.hidden)
    for e in pypto.loop(LAYOUT.experts, name="experts", idx_name="idx"):
        scale_row = pypto.view(expert_scale, [1, LAYOUT.hidden], [e, 0])
        scale_expert_rows(x, scale_row, out, e, LAYOUT)


def moe_scale_golden(x, expert_scale):
    rows = x.view(LAYOUT.experts, LAYOUT.capacity, LAYOUT.hidden)
    return (rows * expert_scale[:, None, :]).reshape_as(x)


@pypto.options(name="moe_scale", runtime_options={"stitch_function_max_num": 32})
def test_moe_expert_scale():
    x = torch.randn(LAYOUT.experts * LAYOUT.capacity, LAYOUT.hidden, dtype=torch.bfloat16)
    scale = torch.rand(LAYOUT.experts, LAYOUT.hidden, dtype=torch.bfloat16)
    out = torch.zeros_like(x)
    moe_expert_scale(x, scale, out)
    assert moe_scale_golden(x, scale).shape == out.shape
