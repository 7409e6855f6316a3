"""The host runtime's indexing, sorting and scan calls (pypto_host_index.h, runtime/index.cpp):
CreateVecIndex, Gather, Sort + Extract, CumSum and ascendc_assert, each with the semantics its
API page gives on A2 and the faults the device would turn into corruption."""

from __future__ import annotations

import pytest
from test_runtime_header import CXX, FAULT_MAIN, build_and_run

pytestmark = pytest.mark.skipif(CXX is None, reason="g++ not on PATH: the runtime tests compile C++")

KERNEL = r"""
void kernel()
{
    TPipe pipe;
    TBuf<> a, b, c, d, e;
    pipe.InitBuffer(a, 1024); pipe.InitBuffer(b, 1024); pipe.InitBuffer(c, 1024);
    pipe.InitBuffer(d, 1024); pipe.InitBuffer(e, 1024);
%s
}
"""


def run(tmp_path, name: str, body: str):
    return build_and_run(tmp_path, name, KERNEL % body + FAULT_MAIN)


def test_create_vec_index_gather_and_sort(tmp_path):
    proc = run(tmp_path, "sort", r"""
    LocalTensor<float> x = a.Get<float>(), v = d.Get<float>(), sorted = c.Get<float>(), tmp = e.Get<float>();
    LocalTensor<int32_t> iota = b.Get<int32_t>();
    CreateVecIndex(iota, 0, 64);
    const float data[8] = {2.0f, __builtin_nanf(""), -0.0f, 0.0f, __builtin_inff(), 2.0f, -1.0f, __builtin_nanf("")};
    for (int i = 0; i < 64; ++i) x.SetValue(i, i < 8 ? data[i] : -__builtin_inff());
    Sort<float, true>(sorted, x, iota.ReinterpretCast<uint32_t>(), tmp, 2);
    LocalTensor<uint32_t> idx = b.Get<uint32_t>();
    Extract(v, idx, sorted, 2);
    for (int i = 0; i < 8; ++i) std::printf("%u %g\n", (unsigned)idx.GetValue(i), (double)v.GetValue(i));
    // reverse the first 8 values with Gather (byte offsets)
    LocalTensor<int32_t> off = a.Get<int32_t>();
    CreateVecIndex(off, 0, 8);
    Muls(off, off, -4, 8);
    Adds(off, off, 28, 8);
    LocalTensor<float> r = e.Get<float>();
    Gather(r, v, off.ReinterpretCast<uint32_t>(), 0, 8);
    for (int i = 0; i < 8; ++i) std::printf("r %g\n", (double)r.GetValue(i));
""")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    # descending, NaN above +inf (in input order), equal values (2, 2; -0, +0) in input order
    assert [int(x.split()[0]) for x in lines[:8]] == [1, 7, 4, 0, 5, 2, 3, 6]
    assert [x.split()[1] for x in lines[:8]] == ["nan", "nan", "inf", "2", "2", "-0", "0", "-1"]
    assert [x.split()[1] for x in lines[8:16]] == ["-1", "0", "-0", "2", "2", "inf", "nan", "nan"]


def test_cumsum_along_either_axis(tmp_path):
    proc = run(tmp_path, "cumsum", r"""
    LocalTensor<float> x = a.Get<float>(), y = d.Get<float>(), last = c.Get<float>();
    LocalTensor<uint8_t> tmp = e.Get<uint8_t>();
    for (int i = 0; i < 24; ++i) x.SetValue(i, i == 8 ? 1e-8f : 1.0f);
    static constexpr CumSumConfig rows{true, false, true, CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
    CumSum<float, rows>(y, last, x, tmp, CumSumInfo{3, 8});
    for (int i = 0; i < 24; ++i) std::printf("%.9g\n", (double)y.GetValue(i));
    for (int i = 0; i < 3; ++i) std::printf("last %g\n", (double)last.GetValue(i));
    static constexpr CumSumConfig cols{false, false, false, CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
    CumSum<float, cols>(y, last, x, tmp, CumSumInfo{3, 8});
    for (int i = 0; i < 24; ++i) std::printf("c %g\n", (double)y.GetValue(i));
""")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    # row 1 starts at 1e-8 (as a float), and 1e-8 + 1 rounds to 1 in float: one addition at a time
    assert [float(v) for v in lines[:24]] == [float(j + 1) for j in range(8)] + \
        [9.99999994e-09] + [float(j) for j in range(1, 8)] + [float(j + 1) for j in range(8)]
    assert lines[24:27] == ["last 8", "last 7", "last 8"]
    assert [float(v.split()[1]) for v in lines[27:51]] == [1.0] * 8 + [1.0] + [2.0] * 7 + [2.0] + [3.0] * 7


@pytest.mark.parametrize("name, body, message", [
    ("gather_range", """
    LocalTensor<float> x = a.Get<float>(16), y = d.Get<float>();
    LocalTensor<uint32_t> off = b.Get<uint32_t>();
    Duplicate(off.ReinterpretCast<int32_t>(), 64, 8);
    Gather(y, x, off, 0, 8);""", "Gather: element 0 reads byte 64 of a src of 64 bytes"),
    ("gather_dtype", """
    LocalTensor<int8_t> x = a.Get<int8_t>(), y = d.Get<int8_t>();
    LocalTensor<uint32_t> off = b.Get<uint32_t>();
    Gather(y, x, off, 0, 8);""", "Gather: dtype int8_t is not supported on A2"),
    ("sort_tmp", """
    LocalTensor<float> x = a.Get<float>(), s = c.Get<float>(), tmp = e.Get<float>(32);
    LocalTensor<uint32_t> i = b.Get<uint32_t>();
    Sort<float, true>(s, x, i, tmp, 2);""", "Sort: count 128 exceeds the tmp tensor's size of 32"),
    ("cumsum_inner", """
    LocalTensor<float> x = a.Get<float>(), y = d.Get<float>(), l = c.Get<float>();
    LocalTensor<uint8_t> tmp = e.Get<uint8_t>();
    static constexpr CumSumConfig cfg{};
    CumSum<float, cfg>(y, l, x, tmp, CumSumInfo{2, 5});""", "inner * sizeof(T) = 20 is not a multiple of 32"),
    ("assert", """
    const int32_t k = 7;
    ascendc_assert(k < 3, "topk: k = %d is outside [1, %d]", k, 3);""",
     "ascendc_assert(k < 3) failed: topk: k = 7 is outside [1, 3]"),
])
def test_misuse_faults(tmp_path, name, body, message):
    proc = run(tmp_path, name, body)
    assert proc.returncode == 3 and message in proc.stderr, proc.stderr
