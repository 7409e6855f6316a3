"""Indexing, sorting and scans (argmax/argmin, argsort, topk, gather, scatter, scatter_update,
one_hot, cumsum, cumprod) against plain torch, with the rules docs/semantics.md writes where torch
leaves a choice (ties, NaN, the order repeated scatter positions combine in)."""

from __future__ import annotations

import pytest
import torch
from irbuild import TORCH, T, V, assemble, block, op, prog, tensor, view

from pypto_ast.ir.interp import InterpError, run_program

NAN, INF = float("nan"), float("inf")


def run(opcode, inputs: dict, out_shape, out_dtype, *extra, **attrs):
    """``out = opcode(@inputs..., *extra)``; ``inputs`` maps names to (tensor, dtype)."""
    out = torch.zeros(out_shape, dtype=TORCH[out_dtype])
    params = [tensor(n, tuple(t.shape), d) for n, (t, d) in inputs.items()]
    p = prog(params + [tensor("out", out_shape, out_dtype, out=True)],
             block(op("r", opcode, *[T(n) for n in inputs], *extra, **attrs), assemble("r", "out", (0,) * len(out_shape))))
    run_program(p, {**{n: t for n, (t, _) in inputs.items()}, "out": out})
    return out


def _rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(dtype)


def _with_specials(x: torch.Tensor) -> torch.Tensor:
    """Ties, signed zeros, infinities and NaNs in every row."""
    x = x.clone()
    x[:, 1] = x[:, 5]
    x[:, 2], x[:, 3] = -0.0, 0.0
    x[:, 4], x[:, 6] = INF, -INF
    x[1:, 7] = NAN
    x[2, 0] = NAN
    return x


@pytest.mark.parametrize("opcode", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("dim,keepdim", [(-1, False), (1, True), (0, True), (0, False)])
def test_argmax_and_argmin_are_torchs(opcode, dtype, dim, keepdim):
    """The first index of the extreme, a NaN counting as the extreme (its first index), -0 = +0:
    what torch.argmax / argmin return."""
    x = _with_specials(_rand((4, 12), 1, TORCH[dtype]))
    want = getattr(torch, opcode)(x, dim=dim, keepdim=keepdim).to(torch.int32)
    got = run(opcode, {"x": (x, dtype)}, tuple(want.shape), "int32", dim=dim, keepdim=keepdim)
    assert torch.equal(got, want), (got, want)


def test_argmax_ties_and_zeros_give_the_first_index():
    x = torch.tensor([[-0.0, 0.0, 0.0], [2.0, 2.0, 1.0], [NAN, 3.0, NAN]])
    got = run("argmax", {"x": (x, "fp32")}, (3,), "int32", dim=1, keepdim=False)
    assert got.tolist() == [0, 0, 0]
    got = run("argmin", {"x": (-x, "fp32")}, (3,), "int32", dim=1, keepdim=False)
    assert got.tolist() == [0, 0, 0]


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("descending", [False, True])
def test_argsort_is_torchs_stable_sort(dtype, descending):
    """Stable: equal values (and -0 / +0) keep their order; NaN sorts above +inf (last ascending,
    first descending)."""
    x = _with_specials(_rand((3, 40), 2, TORCH[dtype]))
    x[:, 20:30] = x[:, 10:20]
    want = torch.argsort(x, dim=-1, descending=descending, stable=True).to(torch.int32)
    got = run("argsort", {"x": (x, dtype)}, (3, 40), "int32", dim=1, descending=descending)
    assert torch.equal(got, want)
    assert got[1, -1 if not descending else 0] == 7  # the NaN


def test_argsort_along_the_first_dim():
    x = _with_specials(_rand((6, 9), 3))
    want = torch.argsort(x, dim=0, stable=True).to(torch.int32)
    assert torch.equal(run("argsort", {"x": (x, "fp32")}, (6, 9), "int32", dim=0, descending=False), want)


@pytest.mark.parametrize("largest", [True, False])
def test_topk_is_the_head_of_the_stable_sort(largest):
    """topk's values are torch's; its indices are the first k of the stable sort (torch.topk
    leaves the order of ties open)."""
    x = _with_specials(_rand((3, 33), 4))
    x[:, 20:25] = 5.0
    k = 9
    want_v, want_i = torch.sort(x, dim=-1, descending=largest, stable=True)
    values = run("topk", {"x": (x, "fp32")}, (3, k), "fp32", dim=1, k=k, largest=largest)
    indices = run("topk_indices", {"x": (x, "fp32")}, (3, k), "int32", dim=1, k=k, largest=largest)
    torch.testing.assert_close(values, want_v[:, :k], equal_nan=True)
    torch.testing.assert_close(values, torch.topk(x, k, dim=-1, largest=largest).values, equal_nan=True)
    assert torch.equal(indices, want_i[:, :k].to(torch.int32))


def test_topk_needs_k_within_the_valid_extent():
    x = _rand((2, 16), 5)
    p = prog([tensor("x", (2, 16), "fp32"), tensor("out", (2, 4), "fp32", out=True)],
             block(view("v", T("x"), (2, 16), (0, 0), valid_shape=(2, 3)),
                   op("r", "topk", V("v"), dim=1, k=4, largest=True), assemble("r", "out", (0, 0))))
    with pytest.raises(InterpError, match=r"k = 4 is outside \[1, 3\]"):
        run_program(p, {"x": x, "out": torch.zeros(2, 4)})


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_is_torchs(index_dtype, dim):
    x = torch.arange(15, dtype=torch.int32).reshape(3, 5)
    g = torch.Generator().manual_seed(6)
    n = x.shape[dim]
    index = torch.randint(0, n, (3, 4), generator=g).to(TORCH[index_dtype])
    want = torch.gather(x, dim, index.long())
    got = run("gather", {"x": (x, "int32"), "i": (index, index_dtype)}, (3, 4), "int32", dim=dim)
    assert torch.equal(got, want)


def test_gather_of_a_3d_tensor_and_fp16():
    x = _rand((2, 3, 6), 7, torch.float16)
    index = torch.tensor([[[0, 3], [2, 1], [5, 5]], [[1, 2], [0, 3], [2, 0]]])
    for dim in (0, 1, 2):
        idx = index % x.shape[dim]
        got = run("gather", {"x": (x, "fp16"), "i": (idx, "int64")}, (2, 3, 2), "fp16", dim=dim)
        assert torch.equal(got, torch.gather(x, dim, idx))


@pytest.mark.parametrize("bad", [-1, 3])
def test_gather_refuses_an_index_outside_the_axis(bad):
    x = torch.zeros(3, 5, dtype=torch.int32)
    index = torch.zeros(2, 5, dtype=torch.int32)
    index[1, 2] = bad
    with pytest.raises(InterpError, match=r"gather: an index along dim 0 is outside \[0, 3\)"):
        run("gather", {"x": (x, "int32"), "i": (index, "int32")}, (2, 5), "int32", dim=0)


def test_scatter_with_a_scalar_and_with_a_tensor_is_torchs():
    x = _rand((3, 5), 8)
    index = torch.tensor([[1, 2, 0, 1, 2], [0, 1, 2, 2, 0]])  # no position written twice
    got = run("scatter", {"x": (x, "fp32"), "i": (index, "int64")}, (3, 5), "fp32", 0.5, dim=0)
    assert torch.equal(got, torch.scatter(x, 0, index, 0.5))
    src = _rand((2, 5), 9)
    got = run("scatter", {"x": (x, "fp32"), "i": (index, "int64"), "s": (src, "fp32")}, (3, 5), "fp32", dim=0)
    assert torch.equal(got, torch.scatter(x, 0, index, src))


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_combines_repeated_positions_in_order_along_dim(reduce):
    """Repeated positions combine one after the other along dim (torch's CPU loop order too)."""
    x = _rand((4, 6), 10)
    g = torch.Generator().manual_seed(11)
    index = torch.randint(0, 4, (5, 6), generator=g, dtype=torch.int32)
    src = _rand((5, 6), 12)
    got = run("scatter", {"x": (x, "fp32"), "i": (index, "int32"), "s": (src, "fp32")}, (4, 6), "fp32",
              dim=0, reduce=reduce)
    want = x.clone()
    for i in range(5):
        for j in range(6):
            r = int(index[i, j])
            want[r, j] = want[r, j] + src[i, j] if reduce == "add" else want[r, j] * src[i, j]
    assert torch.equal(got, want)
    torch_reduce = "sum" if reduce == "add" else "prod"
    torch.testing.assert_close(got, torch.scatter_reduce(x, 0, index.long(), src, torch_reduce))


def test_scatter_keeps_the_last_write_along_dim_and_wraps_integers():
    x = torch.zeros(2, 3, dtype=torch.int8)
    index = torch.tensor([[0, 1, 0], [0, 1, 1]])
    src = torch.tensor([[127, 5, 1], [9, 6, 2]], dtype=torch.int8)
    got = run("scatter", {"x": (x, "int8"), "i": (index, "int64"), "s": (src, "int8")}, (2, 3), "int8", dim=0)
    assert got.tolist() == [[9, 0, 1], [0, 6, 2]]
    got = run("scatter", {"x": (x + 1, "int8"), "i": (index, "int64"), "s": (src, "int8")}, (2, 3), "int8",
              dim=0, reduce="add")
    assert got.tolist() == [[-119, 1, 2], [1, 12, 3]]


def test_scatter_refuses_an_index_outside_the_axis():
    with pytest.raises(InterpError, match=r"scatter: an index along dim 1 is outside \[0, 5\)"):
        run("scatter", {"x": (torch.zeros(3, 5), "fp32"), "i": (torch.full((3, 2), 5), "int64")}, (3, 5), "fp32",
            1.0, dim=1)


def test_scatter_update_2d_and_4d_follow_the_op_page():
    x = torch.zeros(8, 3, dtype=torch.int32)
    index = torch.tensor([[1, 2], [4, 5]])
    src = torch.arange(1, 13, dtype=torch.int32).reshape(4, 3)
    got = run("scatter_update", {"x": (x, "int32"), "i": (index, "int64"), "s": (src, "int32")}, (8, 3), "int32",
              dim=-2)
    want = x.clone()
    want[[1, 2, 4, 5]] = src
    assert torch.equal(got, want)
    x4 = torch.zeros(2, 6, 1, 3, dtype=torch.int32)
    index = torch.tensor([[1, 8], [4, 10]])
    src4 = torch.arange(1, 13, dtype=torch.int32).reshape(2, 2, 1, 3)
    got = run("scatter_update", {"x": (x4, "int32"), "i": (index, "int64"), "s": (src4, "int32")}, (2, 6, 1, 3),
              "int32", dim=-2)
    assert got[0, 1, 0].tolist() == [1, 2, 3] and got[1, 2, 0].tolist() == [4, 5, 6]
    assert got[0, 4, 0].tolist() == [7, 8, 9] and got[1, 4, 0].tolist() == [10, 11, 12]
    assert int(got.count_nonzero()) == 12


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_one_hot_is_torchs_and_int64(dtype):
    x = torch.tensor([[0, 2, 4], [1, 1, 3]]).to(TORCH[dtype])
    got = run("one_hot", {"x": (x, dtype)}, (2, 3, 5), "int64", num_classes=5)
    assert torch.equal(got, torch.nn.functional.one_hot(x.long(), 5))


@pytest.mark.parametrize("bad", [-1, 5])
def test_one_hot_refuses_a_class_outside_num_classes(bad):
    x = torch.tensor([0, bad, 1], dtype=torch.int32)
    with pytest.raises(InterpError, match=r"one_hot: a class value is outside \[0, 5\)"):
        run("one_hot", {"x": (x, "int32")}, (3, 5), "int64", num_classes=5)


def _sequential(x: torch.Tensor, dim: int, mul: bool) -> torch.Tensor:
    """The documented scan: fp32 partial results, one element after the other."""
    data = x.float().movedim(dim, 0)
    out = torch.empty_like(data)
    acc = data[0].clone()
    out[0] = acc
    for i in range(1, data.shape[0]):
        acc = acc * data[i] if mul else acc + data[i]
        out[i] = acc
    return out.movedim(0, dim).to(x.dtype)


@pytest.mark.parametrize("opcode", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("dim", [0, 1])
def test_float_scans_accumulate_in_fp32_in_order(opcode, dtype, dim):
    """cumsum / cumprod of floats: fp32 partial results in order (what Add / Mul along the axis
    compute), close to torch's scans, which accumulate in double."""
    x = (_rand((24, 10), 13) * (0.3 if opcode == "cumprod" else 1.0) + (1.0 if opcode == "cumprod" else 0.0))
    x = x.to(TORCH[dtype])
    got = run(opcode, {"x": (x, dtype)}, (24, 10), dtype, dim=dim)
    assert torch.equal(got, _sequential(x, dim, opcode == "cumprod"))
    want = getattr(torch, opcode)(x.double(), dim=dim).to(x.dtype)
    torch.testing.assert_close(got, want, rtol=1e-5 if dtype == "fp32" else 1e-2, atol=1e-5)


def test_cumsum_in_fp32_is_not_a_double_accumulation():
    """1 + 1e-8 + 1e-8 + ... stays 1 in fp32 (torch's CPU cumsum, in double, reaches 1.00001)."""
    x = torch.full((1, 1001), 1e-8)
    x[0, 0] = 1.0
    got = run("cumsum", {"x": (x, "fp32")}, (1, 1001), "fp32", dim=1)
    assert got[0, -1].item() == 1.0


def test_cumsum_of_integers_is_exact_int64():
    x = torch.full((3, 4), 2 ** 31 - 1, dtype=torch.int32)
    got = run("cumsum", {"x": (x, "int32")}, (3, 4), "int64", dim=0)
    assert torch.equal(got, torch.cumsum(x.long(), 0))
