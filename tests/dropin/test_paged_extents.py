"""Extents in paged-attention kernels, as the models write them, through the drop-in on both
backends (kernels of our own in the models' style: config objects, helpers, bf16).

* matmul over valid extents: pypto's K is a's valid K (cube_operation_impl: the K loop and
  every partial view take ``kValidShape`` from a).  A probability row valid over the token's
  length times the whole assembled kv block reads the kv rows under that length only; a's valid
  K beyond b's would read b past its valid data: an error on both backends.
* a view without ``valid_shape`` on an axis whose extent the call gives (``pypto.STATIC``,
  ``...``): pypto checks no bound there and clips the block's valid extent to the tensor
  (GetViewValidShape: ``min(max(extent - offset, 0), size)``), so a block table viewed at the
  largest context's width reads the table's real columns.  An extent written in the kernel
  keeps PTO106, and so does an offset at or past the extent.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin  # noqa: E402
from support import BACKENDS, needs_cxx, write  # noqa: E402

_names = itertools.count()

ATTENTION = """
from dataclasses import dataclass

import pypto


@dataclass
class DecodeTiles:
    heads: int      # query rows of one token
    blk: int        # tokens per kv block
    nblk: int       # blocks gathered per token
    cube: list
    vec: list


def gather_blocks(kv, table, t, tiles, d):
    span = tiles.blk * tiles.nblk
    kvs = pypto.tensor([span, d], kv.dtype, "kvs")
    for j in range(tiles.nblk):
        blk_id = table[t, j].max(0)
        kvs[j * tiles.blk:(j + 1) * tiles.blk, :] = pypto.view(kv, [tiles.blk, d], [blk_id * tiles.blk, 0])
    return kvs


def probs(scores, length, tiles, scale):
    span = tiles.blk * tiles.nblk
    s = pypto.view(scores, [tiles.heads, span], [0, 0], valid_shape=[tiles.heads, length])
    s = pypto.mul(s, scale)
    m = pypto.amax(s, dim=-1, keepdim=True)
    e = pypto.exp(pypto.sub(s, m))
    return pypto.div(e, pypto.sum(e, dim=-1, keepdim=True))


@pypto.frontend.jit
def paged_decode(q: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
                 kv: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
                 table: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_INT32),
                 lens: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32),
                 out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
                 tiles):
    d = q.shape[1]
    for t in pypto.loop(lens.shape[0], name="tok", idx_name="t"):
        pypto.set_vec_tile_shapes(tiles.vec[0], tiles.vec[1])
        kvs = gather_blocks(kv, table, t, tiles, d)
        qi = pypto.view(q, [tiles.heads, d], [t * tiles.heads, 0])
        pypto.set_cube_tile_shapes(tiles.cube[0], tiles.cube[1], tiles.cube[2])
        scores = pypto.matmul(qi, kvs, pypto.DT_FP32, a_trans=False, b_trans=True)
        p = pypto.cast(probs(scores, lens[t] - SHORT, tiles, d ** -0.5), pypto.DT_BF16)
        PV
        pypto.assemble(o, [t * tiles.heads, 0], out)
"""

# a's valid K (the token's length) within b's: the kv rows past the length are not read
PV_WHOLE = "o = pypto.matmul(p, kvs, pypto.DT_BF16)"
# b valid over fewer rows than a's valid K
PV_SHORT_B = ("o = pypto.matmul(p, pypto.view(kvs, [tiles.blk * tiles.nblk, d], [0, 0], "
              "valid_shape=[lens[t] - SHORT - 3, d]), pypto.DT_BF16)")


def _load(tmp_path: Path, source: str, backend: str):
    dropin.install(backend, npu_devices=False)
    path = write(tmp_path / f"paged_{next(_names)}.py", source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def served():
    yield
    dropin.uninstall()


def _attention_inputs(seed: int, tokens: int, heads: int, d: int, blk: int, nblk: int, pool: int):
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(tokens * heads, d, generator=g) / 2).to(torch.bfloat16)
    kv = (torch.randn(pool * blk, d, generator=g) / 2).to(torch.bfloat16)
    table = torch.stack([torch.randperm(pool, generator=g)[:nblk] for _ in range(tokens)]).to(torch.int32)
    lens = torch.randint(1, blk * nblk + 1, (tokens,), generator=g).to(torch.int32)
    lens[0] = blk * nblk  # one token over the whole span, one over a single row
    lens[-1] = 1
    return q, kv, table, lens


def _golden(q, kv, table, lens, heads, blk):
    rows = []
    for t, n in enumerate(lens.tolist()):
        ids = torch.cat([torch.arange(b * blk, (b + 1) * blk) for b in table[t].tolist()])[:n]
        k = kv[ids].float()
        s = q[t * heads:(t + 1) * heads].float() @ k.T * q.shape[1] ** -0.5
        p = torch.softmax(s, dim=-1).to(torch.bfloat16).float()
        rows.append(p @ k)
    return torch.cat(rows)


def _run_attention(tmp_path, backend, pv, inputs, heads, blk, nblk, short=0):
    src = ATTENTION.replace("PV", pv).replace("SHORT", str(short))
    module = _load(tmp_path, src, backend)
    q, kv, table, lens = inputs
    out = torch.full((q.shape[0], q.shape[1]), float("nan"), dtype=torch.bfloat16)
    tiles = module.DecodeTiles(heads=heads, blk=blk, nblk=nblk, cube=[[16, 16], [32, 32], [32, 32]], vec=[16, 64])
    module.paged_decode(q, kv, table, lens + short, out, tiles)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_probabilities_over_the_length_times_the_whole_kv_block(tmp_path, served, backend):
    heads, d, blk, nblk = 16, 64, 16, 4
    inputs = _attention_inputs(5, 4, heads, d, blk, nblk, pool=9)
    out = _run_attention(tmp_path, backend, PV_WHOLE, inputs, heads, blk, nblk)
    assert not torch.isnan(out.float()).any()
    torch.testing.assert_close(out.float(), _golden(*inputs, heads, blk), rtol=1.6e-2, atol=1e-2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_past_the_length_does_not_reach_the_result(tmp_path, served, backend):
    """The kv rows a token's length does not cover hold NaN: K stops at a's valid K."""
    heads, d, blk, nblk = 16, 64, 16, 2
    q, kv, table, lens = _attention_inputs(6, 3, heads, d, blk, nblk, pool=6)
    lens[:] = torch.tensor([17, 5, 1], dtype=torch.int32)
    for t, n in enumerate(lens.tolist()):  # the rows past n of each token's span
        for j, b in enumerate(table[t].tolist()):
            lo = max(n - j * blk, 0)
            if lo < blk and all(b not in table[u].tolist() for u in range(len(lens)) if u != t):
                kv[b * blk + lo:(b + 1) * blk] = float("nan")
    golden = _golden(q, kv, table, lens, heads, blk)
    assert not torch.isnan(golden).any()
    out = _run_attention(tmp_path, backend, PV_WHOLE, (q, kv, table, lens), heads, blk, nblk)
    torch.testing.assert_close(out.float(), golden, rtol=1.6e-2, atol=1e-2)


@needs_cxx
def test_both_backends_give_the_same_bits(tmp_path, served):
    heads, d, blk, nblk = 16, 64, 16, 4
    inputs = _attention_inputs(7, 3, heads, d, blk, nblk, pool=5)
    got = [_run_attention(tmp_path, b, PV_WHOLE, inputs, heads, blk, nblk) for b in ("interp", "host")]
    assert torch.equal(got[0], got[1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_valid_k_beyond_b_is_an_error(tmp_path, served, backend):
    heads, d, blk, nblk = 16, 64, 16, 2
    inputs = _attention_inputs(8, 2, heads, d, blk, nblk, pool=4)
    inputs[3][:] = 20
    with pytest.raises(dropin.KernelError) as info:
        _run_attention(tmp_path, backend, PV_SHORT_B, inputs, heads, blk, nblk, short=0)
    text = str(info.value)
    assert "PTO111" in text and f"{backend} backend" in text, text
    assert "valid K" in text and "exceeds b's" in text, text


# -- a view sized for the largest context on an axis the call gives --------------------------
TABLE = """
import pypto

MAX_CONTEXT = 8192


def table_row(table, b, blk):
    return pypto.view(table, [1, MAX_CONTEXT // blk], [b, 0])


@pypto.frontend.jit
def block_sums(table: pypto.Tensor([pypto.DYNAMIC, AXIS], pypto.DT_INT32),
               out: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32), blk):
    pypto.set_vec_tile_shapes(1, 512)
    for b in pypto.loop(table.shape[0], name="batch", idx_name="b"):
        row = pypto.cast(table_row(table, b, blk), pypto.DT_FP32)
        top = pypto.amax(row, dim=-1, keepdim=True)
        pypto.assemble(pypto.add(pypto.sum(row, dim=-1, keepdim=True), top), [b, 0], out)
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis", ["pypto.STATIC"])
@pytest.mark.parametrize("width", [16, 40])
def test_a_table_view_at_the_largest_width_reads_the_real_columns(tmp_path, served, backend, axis, width):
    module = _load(tmp_path, TABLE.replace("AXIS", axis), backend)
    g = torch.Generator().manual_seed(width)
    table = torch.randint(-50, 1000, (3, width), generator=g).to(torch.int32)
    out = torch.full((3, 1), float("nan"))
    module.block_sums(table, out, 64)  # a row of 128 entries over a table of `width`
    want = table.double().sum(1, keepdim=True) + table.double().amax(1, keepdim=True)
    assert torch.equal(out.double(), want)


def _view_error(tmp_path, backend, source, *args) -> str:
    module = _load(tmp_path, source, backend)
    with pytest.raises(dropin.KernelError) as info:
        module.block_sums(*args)
    return str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_view_past_an_extent_written_in_the_kernel_is_pto106(tmp_path, served, backend):
    text = _view_error(tmp_path, backend, TABLE.replace("AXIS", "16"), torch.zeros(3, 16, dtype=torch.int32),
                       torch.zeros(3, 1), 64)
    assert "PTO106" in text and "axis 1 covers [0, 128) outside the tensor's extent 16" in text, text


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_view_starting_past_a_call_extent_is_pto106(tmp_path, served, backend):
    source = TABLE.replace("AXIS", "pypto.STATIC").replace("[b, 0])", "[b, 16])")
    text = _view_error(tmp_path, backend, source, torch.zeros(3, 16, dtype=torch.int32), torch.zeros(3, 1), 64)
    assert "PTO106" in text and "axis 1 covers [16, 144) outside the tensor's extent 16" in text, text
