"""The host runtime header pypto_ast/emit/host/kernel_operator.h.

Each test compiles a small C++ program (Ascend C style, ascendc.md §5.3) with
``g++ -std=c++17 -O2 -Wall -Werror -I pypto_ast/emit/host``, runs it, and checks either the
numbers it prints or the loud HardwareFault it must die with.
"""

import hashlib
import math
import os
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

CXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(
    CXX is None, reason="g++ not on PATH: the host runtime header tests compile C++"
)

HOST_DIR = Path(__file__).resolve().parents[2] / "pypto_ast" / "emit" / "host"
FLAGS = ["-std=c++17", "-O2", "-pthread", "-Wall", "-Werror", f"-I{HOST_DIR}"]

PRELUDE = r"""
#include "kernel_operator.h"
#include "pypto_host_fault.h"
#include <cstdio>
#include <vector>
using namespace AscendC;
"""

# main() for fault programs: run `kernel` on one block; a HardwareFault exits 3 with its message.
FAULT_MAIN = r"""
int main()
{
    try {
        pypto_host::Launch(1, kernel);
    } catch (const pypto_host::HardwareFault& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 3;
    }
    std::printf("NO FAULT\n");
    return 0;
}
"""


def compile_program(src: str, out: Path) -> Path:
    """A test program linked with the host runtime's prebuilt objects (from the build cache).

    Executables are kept next to the build cache under a content key (the program text, the
    flags, the compiler and the runtime's own key), so a warm run compiles nothing."""
    from pypto_ast import knobs
    from pypto_ast.emit import build
    from pypto_ast.emit.host_runtime import runtime, runtime_objects

    text = PRELUDE + src
    key = hashlib.sha256("\0".join([text, *FLAGS, build._find_compiler(CXX), runtime().digest()]).encode()).hexdigest()
    kept = Path(knobs.cache_dir) / "test-programs" / key
    if kept.is_file():
        shutil.copyfile(kept, out)
        out.chmod(0o755)
        return out
    cpp = out.with_suffix(".cpp")
    cpp.write_text(text)
    proc = subprocess.run(
        [CXX, *FLAGS, str(cpp), *map(str, runtime_objects()), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"compile failed:\n{proc.stderr}"
    kept.parent.mkdir(parents=True, exist_ok=True)
    tmp = kept.with_name(f"{key}.{os.getpid()}.tmp")
    shutil.copyfile(out, tmp)
    os.replace(tmp, kept)  # atomic: concurrent workers agree
    return out


def run(exe: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(exe)], capture_output=True, text=True, timeout=60, check=False
    )


def build_and_run(tmp_path: Path, name: str, src: str) -> subprocess.CompletedProcess:
    return run(compile_program(src, tmp_path / name))


def half_bits(x: float) -> int:
    """IEEE binary16 bits of x, round-to-nearest-even (Python's struct 'e')."""
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


# ------------------------------------------------------------------------------------------
# Canonical kernels
# ------------------------------------------------------------------------------------------

AXPY = r"""
constexpr int32_t kBufs = 2;
template <typename T>
class AxpyKernel {
public:
    __aicore__ inline void Init(TPipe* p, GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perCore, uint32_t tile, float a)
    {
        pipe = p; this->tile = tile; this->a = a; tiles = perCore / tile;
        uint64_t base = static_cast<uint64_t>(perCore) * GetBlockIdx();
        xg.SetGlobalBuffer((__gm__ T*)x + base, perCore);
        yg.SetGlobalBuffer((__gm__ T*)y + base, perCore);
        zg.SetGlobalBuffer((__gm__ T*)z + base, perCore);
        pipe->InitBuffer(qx, kBufs, tile * sizeof(T));
        pipe->InitBuffer(qy, kBufs, tile * sizeof(T));
        pipe->InitBuffer(qz, kBufs, tile * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tiles; ++i) { CopyIn(i); Compute(); CopyOut(i); }
    }
private:
    __aicore__ inline void CopyIn(uint32_t i)
    {
        LocalTensor<T> xl = qx.AllocTensor<T>(), yl = qy.AllocTensor<T>();
        DataCopy(xl, xg[i * tile], tile);
        DataCopy(yl, yg[i * tile], tile);
        qx.EnQue(xl); qy.EnQue(yl);
    }
    __aicore__ inline void Compute()
    {
        LocalTensor<T> xl = qx.DeQue<T>(), yl = qy.DeQue<T>();
        LocalTensor<T> zl = qz.AllocTensor<T>();
        AscendC::Muls(zl, xl, static_cast<T>(a), tile);
        AscendC::Add(zl, zl, yl, tile);
        qz.EnQue(zl);
        qx.FreeTensor(xl); qy.FreeTensor(yl);
    }
    __aicore__ inline void CopyOut(uint32_t i)
    {
        LocalTensor<T> zl = qz.DeQue<T>();
        DataCopy(zg[i * tile], zl, tile);
        qz.FreeTensor(zl);
    }
    TPipe* pipe;
    TQue<TPosition::VECIN, 1> qx, qy;
    TQue<TPosition::VECOUT, 1> qz;
    GlobalTensor<T> xg, yg, zg;
    uint32_t tile, tiles; float a;
};

extern "C" __global__ __aicore__ void axpy_f32(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perCore, uint32_t tile, float a)
{
    TPipe pipe;
    AxpyKernel<float> op;
    op.Init(&pipe, x, y, z, perCore, tile, a);
    op.Process();
}

int main()
{
    const uint32_t blocks = 4, perCore = 512, tile = 128, n = blocks * perCore;
    std::vector<float> x(n), y(n), z(n, -1.0f);
    for (uint32_t i = 0; i < n; ++i) { x[i] = 0.5f * i; y[i] = 3.0f - i; }
    pypto_host::Launch(blocks, axpy_f32, (GM_ADDR)x.data(), (GM_ADDR)y.data(), (GM_ADDR)z.data(), perCore, tile, 2.0f);
    for (uint32_t i = 0; i < n; ++i) std::printf("%.9g\n", z[i]);
    const auto& t = pypto_host::Traffic();
    std::printf("traffic %llu %llu %llu %llu\n", (unsigned long long)t.gmToUbBytes, (unsigned long long)t.ubToGmBytes,
                (unsigned long long)t.gmToUbCalls, (unsigned long long)t.ubToGmCalls);
    return 0;
}
"""


def test_axpy_double_buffered_multicore(tmp_path):
    proc = build_and_run(tmp_path, "axpy", AXPY)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    n = 4 * 512
    values = [float(v) for v in lines[:n]]
    assert values == [2.0 * (0.5 * i) + (3.0 - i) for i in range(n)]
    # each of 4 cores: 4 tiles x (2 inputs in, 1 output out) x 128 floats x 4 B
    assert lines[n] == f"traffic {n * 4 * 2} {n * 4} {4 * 4 * 2} {4 * 4}"


EXP_CAST = r"""
// y_half = Cast(Exp(x_float), CAST_RINT): double-buffered, TBuf scratch for the float result.
class ExpCastKernel {
public:
    __aicore__ inline void Init(TPipe* p, GM_ADDR x, GM_ADDR y, uint32_t perCore, uint32_t tile)
    {
        this->tile = tile; tiles = perCore / tile;
        const uint64_t base = static_cast<uint64_t>(perCore) * GetBlockIdx();
        xg.SetGlobalBuffer((__gm__ float*)x + base, perCore);
        yg.SetGlobalBuffer((__gm__ half*)y + base, perCore);
        p->InitBuffer(qx, 2, tile * sizeof(float));
        p->InitBuffer(qy, 2, tile * sizeof(half));
        p->InitBuffer(tmp, tile * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tiles; ++i) {
            LocalTensor<float> xl = qx.AllocTensor<float>();
            AscendC::DataCopy(xl, xg[i * tile], tile);
            qx.EnQue(xl);
            LocalTensor<float> xin = qx.DeQue<float>();
            LocalTensor<float> e = tmp.Get<float>();
            LocalTensor<half> yl = qy.AllocTensor<half>();
            AscendC::Exp(e, xin, tile);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Cast(yl, e, RoundMode::CAST_RINT, tile);
            qy.EnQue(yl);
            qx.FreeTensor(xin);
            LocalTensor<half> yo = qy.DeQue<half>();
            AscendC::DataCopy(yg[i * tile], yo, tile);
            qy.FreeTensor(yo);
        }
    }
private:
    TQue<QuePosition::VECIN, 1> qx;
    TQue<QuePosition::VECOUT, 1> qy;
    TBuf<QuePosition::VECCALC> tmp;
    GlobalTensor<float> xg;
    GlobalTensor<half> yg;
    uint32_t tile, tiles;
};

extern "C" __global__ __aicore__ void exp_cast(GM_ADDR x, GM_ADDR y, uint32_t perCore, uint32_t tile)
{
    TPipe pipe;
    ExpCastKernel op;
    op.Init(&pipe, x, y, perCore, tile);
    op.Process();
}

int main()
{
    const uint32_t blocks = 2, perCore = 256, tile = 64, n = blocks * perCore;
    std::vector<float> x(n);
    std::vector<half> y(n);
    for (uint32_t i = 0; i < n; ++i) x[i] = -8.0f + 0.03125f * i;
    pypto_host::Launch(blocks, exp_cast, (GM_ADDR)x.data(), (GM_ADDR)y.data(), perCore, tile);
    for (uint32_t i = 0; i < n; ++i) std::printf("%u\n", (unsigned)y[i].Bits());
    return 0;
}
"""


def test_exp_then_cast_to_half(tmp_path):
    proc = build_and_run(tmp_path, "expcast", EXP_CAST)
    assert proc.returncode == 0, proc.stderr
    got = [int(v) for v in proc.stdout.split()]
    want = [half_bits(f32(math.exp(f32(-8.0 + 0.03125 * i)))) for i in range(512)]
    assert got == want


HALF_CONVERT = r"""
int main()
{
    // float -> half (RNE) for a spread of values, then half -> float round trip.
    const float vals[] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 5.9604645e-08f,
                          2.9802322e-08f, 2.9802326e-08f, 6.1035156e-05f, 0.1f, 1.0009765625f, 1.00048828125f,
                          1.00146484375f, 3.14159265f, -1e6f, 1e-5f, 2049.0f, 2051.0f};
    for (float v : vals) {
        half h = v;
        std::printf("%u %.9g\n", (unsigned)h.Bits(), (double)static_cast<float>(h));
    }
    half a = 1.5f, b = 2.25f;
    std::printf("%g %g %g %g\n", (double)(float)(a + b), (double)(float)(a * b), (double)(float)(b - a), (double)(float)(a / b));
    return 0;
}
"""

HALF_VALUES = [
    0.0,
    -0.0,
    1.0,
    -2.5,
    65504.0,
    65519.99,
    65520.0,
    1e-8,
    5.9604645e-08,
    2.9802322e-08,
    2.9802326e-08,
    6.1035156e-05,
    0.1,
    1.0009765625,
    1.00048828125,
    1.00146484375,
    3.14159265,
    -1e6,
    1e-5,
    2049.0,
    2051.0,
]


def test_half_conversion_is_ieee_round_to_nearest_even(tmp_path):
    proc = build_and_run(tmp_path, "half", HALF_CONVERT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().split("\n")
    for v, line in zip(HALF_VALUES, lines):
        bits, back = line.split()
        want = half_bits(f32(v))
        assert int(bits) == want, (v, hex(int(bits)), hex(want))
        unpacked = struct.unpack("<e", struct.pack("<H", want))[0]
        assert f32(float(back)) == unpacked or (
            math.isinf(unpacked) and math.isinf(float(back))
        )
    assert lines[-1].split() == ["3.75", "3.375", "0.75", "0.666504"]


CAST_MODES = (
    r"""
// Cast float -> int32 / half / float under every documented RoundMode.
void kernel()
{
    TPipe pipe;
    TBuf<QuePosition::VECCALC> b0, b1, b2, b3;
    pipe.InitBuffer(b0, 64 * 4);
    pipe.InitBuffer(b1, 64 * 4);
    pipe.InitBuffer(b2, 64 * 2);
    pipe.InitBuffer(b3, 64 * 4);
    LocalTensor<float> src = b0.Get<float>();
    LocalTensor<int32_t> di = b1.Get<int32_t>();
    LocalTensor<half> dh = b2.Get<half>();
    LocalTensor<float> df = b3.Get<float>();
    const float vals[8] = {2.5f, -2.5f, 3.5f, -0.4f, 1.7f, -1.7f, 1.0009765625f + 1.0f / 4096.0f, 1.00048828125f};
    for (int i = 0; i < 8; ++i) src.SetValue(i, vals[i]);
    const RoundMode modes[] = {RoundMode::CAST_RINT, RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL,
                               RoundMode::CAST_ROUND, RoundMode::CAST_TRUNC};
    for (RoundMode m : modes) {
        AscendC::Cast(di, src, m, 8);
        AscendC::Cast(df, src, m, 8);
        for (int i = 0; i < 8; ++i) std::printf("%d %g ", (int)di.GetValue(i), (double)df.GetValue(i));
        std::printf("\n");
    }
    const RoundMode hmodes[] = {RoundMode::CAST_NONE, RoundMode::CAST_RINT, RoundMode::CAST_TRUNC,
                                RoundMode::CAST_CEIL, RoundMode::CAST_ODD};
    for (RoundMode m : hmodes) {
        AscendC::Cast(dh, src, m, 8);
        for (int i = 0; i < 8; ++i) std::printf("%u ", (unsigned)dh.GetValue(i).Bits());
        std::printf("\n");
    }
    AscendC::Cast(df, dh, RoundMode::CAST_NONE, 8);  // half -> float is exact
    for (int i = 0; i < 8; ++i) std::printf("%.9g ", (double)df.GetValue(i));
    std::printf("\n");
}
"""
    + FAULT_MAIN
)


def test_cast_round_modes(tmp_path):
    proc = build_and_run(tmp_path, "cast", CAST_MODES)
    assert proc.returncode == 0, proc.stderr
    rows = [r.split() for r in proc.stdout.strip().split("\n")]
    ints = {
        "RINT": [2, -2, 4, 0, 2, -2, 1, 1],
        "FLOOR": [2, -3, 3, -1, 1, -2, 1, 1],
        "CEIL": [3, -2, 4, 0, 2, -1, 2, 2],
        "ROUND": [3, -3, 4, 0, 2, -2, 1, 1],
        "TRUNC": [2, -2, 3, 0, 1, -1, 1, 1],
    }
    for row, want in zip(rows[:5], ints.values()):
        assert [int(v) for v in row[0::2]] == want
        assert [float(v) for v in row[1::2]] == [
            float(w) for w in want
        ]  # float -> float: integral rounding
    one, ulp = 0x3C00, 1  # 1.0 in half; spacing at 1.0 is 2^-10
    x6 = 0x3C01  # 1.0009765625 exactly
    # value 6 = 1.0009765625 + 2^-12 (between 0x3C01 and 0x3C02); value 7 = 1 + 2^-11 (a tie)
    none, rint, trunc, ceil, odd = ([int(v) for v in r] for r in rows[5:10])
    assert none[:6] == [
        half_bits(v) for v in (2.5, -2.5, 3.5, f32(-0.4), f32(1.7), f32(-1.7))
    ]
    assert (none[6], none[7]) == (x6, one)  # nearest / tie to even
    assert (rint[6], rint[7]) == (x6, one)
    assert (trunc[6], trunc[7]) == (x6, one)
    assert (ceil[6], ceil[7]) == (x6 + ulp, one + ulp)
    assert (odd[6], odd[7]) == (x6, one + ulp)  # round to odd: inexact -> odd LSB
    assert rows[10][:3] == ["2.5", "-2.5", "3.5"]


PAD_TAIL = r"""
// z = x + y over n elements where n is not a multiple of 8: full tiles with DataCopy, the ragged
// tail with DataCopyPad (ascendc.md §7.2 recipe), count-form Add over the valid count.
extern "C" __global__ __aicore__ void add_ragged(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t n, uint32_t tile)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> qx, qy;
    TQue<QuePosition::VECOUT, 2> qz;
    pipe.InitBuffer(qx, 2, tile * sizeof(float));
    pipe.InitBuffer(qy, 2, tile * sizeof(float));
    pipe.InitBuffer(qz, 2, tile * sizeof(float));
    GlobalTensor<float> xg, yg, zg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
    zg.SetGlobalBuffer((__gm__ float*)z, n);
    for (uint32_t off = 0; off < n; off += tile) {
        const uint32_t len = n - off < tile ? n - off : tile;
        LocalTensor<float> xl = qx.AllocTensor<float>(), yl = qy.AllocTensor<float>();
        if (len == tile) {
            AscendC::DataCopy(xl, xg[off], len);
            AscendC::DataCopy(yl, yg[off], len);
        } else {
            const uint32_t padded = (len + 7) / 8 * 8;
            DataCopyExtParams in{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> pad{true, 0, static_cast<uint8_t>(padded - len), 0.0f};
            AscendC::DataCopyPad(xl, xg[off], in, pad);
            AscendC::DataCopyPad(yl, yg[off], in, pad);
            std::printf("pad %g %g\n", (double)xl.GetValue(padded - 1), (double)xl.GetValue(len - 1));
        }
        qx.EnQue(xl); qy.EnQue(yl);
        LocalTensor<float> a = qx.DeQue<float>(), b = qy.DeQue<float>();
        LocalTensor<float> c = qz.AllocTensor<float>();
        AscendC::Add(c, a, b, static_cast<int32_t>(len));
        qz.EnQue(c);
        qx.FreeTensor(a); qy.FreeTensor(b);
        LocalTensor<float> o = qz.DeQue<float>();
        if (len == tile) {
            AscendC::DataCopy(zg[off], o, len);
        } else {
            DataCopyExtParams out{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
            AscendC::DataCopyPad(zg[off], o, out);
        }
        qz.FreeTensor(o);
    }
}

int main()
{
    const uint32_t n = 1000 + 3, tile = 256;
    std::vector<float> x(n), y(n), z(n + 8, -7.0f);
    for (uint32_t i = 0; i < n; ++i) { x[i] = i; y[i] = 2.0f * i; }
    pypto_host::Launch(1, add_ragged, (GM_ADDR)x.data(), (GM_ADDR)y.data(), (GM_ADDR)z.data(), n, tile);
    bool ok = true;
    for (uint32_t i = 0; i < n; ++i) ok = ok && z[i] == 3.0f * i;
    for (uint32_t i = n; i < n + 8; ++i) ok = ok && z[i] == -7.0f;  // nothing written past n
    const auto& t = pypto_host::Traffic();
    std::printf("%s %llu %llu\n", ok ? "OK" : "BAD", (unsigned long long)t.gmToUbBytes, (unsigned long long)t.ubToGmBytes);
    return 0;
}
"""


def test_ragged_tail_with_datacopypad(tmp_path):
    proc = build_and_run(tmp_path, "pad", PAD_TAIL)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().split("\n")
    assert (
        lines[0] == "pad 0 1002"
    )  # right padding = paddingValue, last valid element intact
    assert lines[1] == f"OK {1003 * 4 * 2} {1003 * 4}"


PAD_STRIDED = (
    r"""
// 3 rows x 5 halves out of a GM matrix with ld = 7; each row padded to 16 halves in UB.
void kernel()
{
    std::vector<half> gm(3 * 7), out(3 * 7, half(-1.0f));
    for (int i = 0; i < 21; ++i) gm[i] = half(static_cast<float>(i));
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 3 * 32);
    GlobalTensor<half> g, o;
    g.SetGlobalBuffer((__gm__ half*)gm.data(), 21);
    o.SetGlobalBuffer((__gm__ half*)out.data(), 21);
    LocalTensor<half> t = q.AllocTensor<half>();
    DataCopyExtParams in{3, 5 * sizeof(half), 2 * sizeof(half), 0, 0};
    DataCopyPadExtParams<half> pad{true, 0, 3, half(9.0f)};
    AscendC::DataCopyPad(t, g, in, pad);
    for (int i = 0; i < 48; ++i) std::printf("%g ", (double)(float)t.GetValue(i));
    std::printf("\n");
    DataCopyExtParams back{3, 5 * sizeof(half), 0, 2 * sizeof(half), 0};
    AscendC::DataCopyPad(o, t, back);
    for (int i = 0; i < 21; ++i) std::printf("%g ", (double)(float)out[i]);
    std::printf("\n");
    q.FreeTensor(t);
}
"""
    + FAULT_MAIN
)


def test_datacopypad_strided_rows(tmp_path):
    proc = build_and_run(tmp_path, "padrows", PAD_STRIDED)
    assert proc.returncode == 0, proc.stderr
    ub, out = (
        list(map(float, line.split())) for line in proc.stdout.strip().split("\n")[:2]
    )
    for r in range(3):
        row = ub[16 * r : 16 * r + 16]
        assert row[:5] == [7.0 * r + c for c in range(5)]
        assert row[5:8] == [9.0, 9.0, 9.0]
    want = [-1.0] * 21
    for r in range(3):
        for c in range(5):
            want[7 * r + c] = 7.0 * r + c
    assert out == want


VEC_OPS = (
    r"""
void kernel()
{
    TPipe pipe;
    TBuf<> ba, bb, bc, bm, bw;
    pipe.InitBuffer(ba, 64 * 4);
    pipe.InitBuffer(bb, 64 * 4);
    pipe.InitBuffer(bc, 64 * 4);
    pipe.InitBuffer(bm, 32);
    pipe.InitBuffer(bw, 64 * 4);
    LocalTensor<float> a = ba.Get<float>(), b = bb.Get<float>(), c = bc.Get<float>(), w = bw.Get<float>();
    LocalTensor<uint8_t> m = bm.Get<uint8_t>();
    for (int i = 0; i < 64; ++i) { a.SetValue(i, static_cast<float>(i) - 20.0f); b.SetValue(i, 4.0f); }
    auto dump = [&](const char* tag, int n) {
        std::printf("%s", tag);
        for (int i = 0; i < n; ++i) std::printf(" %.9g", (double)c.GetValue(i));
        std::printf("\n");
    };
    AscendC::Sub(c, a, b, 4); dump("sub", 4);
    AscendC::Mul(c, a, b, 4); dump("mul", 4);
    AscendC::Div(c, a, b, 4); dump("div", 4);
    AscendC::Max(c, a, b, 4); dump("max", 4);
    AscendC::Min(c, a, b, 4); dump("min", 4);
    AscendC::Adds(c, a, 0.5f, 4); dump("adds", 4);
    AscendC::Maxs(c, a, -19.0f, 4); dump("maxs", 4);
    AscendC::Mins(c, a, -19.0f, 4); dump("mins", 4);
    AscendC::Abs(c, a, 4); dump("abs", 4);
    AscendC::Relu(c, a[16], 8); dump("relu", 8);
    AscendC::Sqrt(c, b, 2); dump("sqrt", 2);
    AscendC::Rsqrt(c, b, 2); dump("rsqrt", 2);
    AscendC::Reciprocal(c, b, 2); dump("recip", 2);
    AscendC::Ln(c, b, 1); dump("ln", 1);
    AscendC::Duplicate(c, 7.0f, 3); dump("dup", 3);
    AscendC::Compare(m, a, b, CMPMODE::LT, 64);
    std::printf("cmp");
    for (int i = 0; i < 8; ++i) std::printf(" %u", (unsigned)m.GetValue(i));
    std::printf("\n");
    AscendC::Select(c, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);
    std::printf("sel %g %g %g\n", (double)c.GetValue(0), (double)c.GetValue(23), (double)c.GetValue(24));
    AscendC::Select(c, m, a, 100.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
    std::printf("sels %g %g\n", (double)c.GetValue(23), (double)c.GetValue(24));
    AscendC::CompareScalar(m, a, 0.0f, CMPMODE::GE, 64);
    std::printf("cmps %u %u %u\n", (unsigned)m.GetValue(2), (unsigned)m.GetValue(3), (unsigned)m.GetValue(7));
    AscendC::ReduceSum(c, a, w, 64); dump("rsum", 1);
    AscendC::ReduceMax(c, a, w, 64, true);
    std::printf("rmax %g %u\n", (double)c.GetValue(0), (unsigned)c.ReinterpretCast<uint32_t>().GetValue(1));
    AscendC::ReduceMin(c, a, w, 50, true);
    std::printf("rmin %g %u\n", (double)c.GetValue(0), (unsigned)c.ReinterpretCast<uint32_t>().GetValue(1));
}
"""
    + FAULT_MAIN
)


def test_vector_ops_compare_select_reduce(tmp_path):
    proc = build_and_run(tmp_path, "vec", VEC_OPS)
    assert proc.returncode == 0, proc.stderr
    got = {
        line.split()[0]: line.split()[1:] for line in proc.stdout.strip().split("\n")
    }
    a = [i - 20.0 for i in range(64)]

    def fl(key):
        return [float(v) for v in got[key]]

    assert fl("sub") == [x - 4 for x in a[:4]]
    assert fl("mul") == [x * 4 for x in a[:4]]
    assert fl("div") == [x / 4 for x in a[:4]]
    assert fl("max") == [4.0] * 4 and fl("min") == a[:4]
    assert fl("adds") == [x + 0.5 for x in a[:4]]
    assert fl("maxs") == [-19.0, -19.0, -18.0, -17.0] and fl("mins") == [
        -20.0,
        -19.0,
        -19.0,
        -19.0,
    ]
    assert fl("abs") == [20.0, 19.0, 18.0, 17.0]
    assert fl("relu") == [0, 0, 0, 0, 0, 1, 2, 3]
    assert (
        fl("sqrt") == [2.0, 2.0]
        and fl("rsqrt") == [0.5, 0.5]
        and fl("recip") == [0.25, 0.25]
    )
    assert [f32(v) for v in fl("ln")] == [f32(math.log(4.0))]
    assert fl("dup") == [7.0] * 3
    bits = [1 if x < 4 else 0 for x in a]
    assert [int(v) for v in got["cmp"]] == [
        sum(bits[8 * k + j] << j for j in range(8)) for k in range(8)
    ]
    assert fl("sel") == [-20.0, 3.0, 4.0]
    assert fl("sels") == [3.0, 100.0]
    assert [int(v) for v in got["cmps"]] == [0xF0, 0xFF, 0xFF]
    assert fl("rsum") == [sum(a)]
    assert got["rmax"] == ["43", "63"] and got["rmin"] == ["-20", "0"]


SOFTMAX_ROWS = (
    r"""
// ascendc.md §8 row softmax on an [8, 16] float tile, call forms verbatim.
void kernel()
{
    const uint32_t rows = 8, cols = 16;
    TPipe pipe;
    TBuf<> bx, bmax, bmaxB, bsum, bsumB;
    pipe.InitBuffer(bx, rows * cols * 4);
    pipe.InitBuffer(bmax, 32);
    pipe.InitBuffer(bmaxB, rows * 32);
    pipe.InitBuffer(bsum, 32);
    pipe.InitBuffer(bsumB, rows * 32);
    LocalTensor<float> x = bx.Get<float>(), rmax = bmax.Get<float>(), rmaxB = bmaxB.Get<float>();
    LocalTensor<float> rsum = bsum.Get<float>(), rsumB = bsumB.Get<float>();
    for (uint32_t i = 0; i < rows * cols; ++i) x.SetValue(i, static_cast<float>((i * 7) % 13) * 0.25f - static_cast<float>(i / cols));
    const uint8_t rs = static_cast<uint8_t>(cols * sizeof(float) / 32);   // row stride in blocks
    WholeReduceMax(rmax, x, cols, rows, 1, 1, rs, ReduceOrder::ORDER_ONLY_VALUE);
    Brcb(rmaxB, rmax, (rows + 7) / 8, {1, 8});
    Sub(x, x, rmaxB, cols, rows, {1, 1, 0, rs, rs, 1});
    Exp(x, x, rows * cols);
    WholeReduceSum(rsum, x, cols, rows, 1, 1, rs);
    Brcb(rsumB, rsum, (rows + 7) / 8, {1, 8});
    Div(x, x, rsumB, cols, rows, {1, 1, 0, rs, rs, 1});
    for (uint32_t i = 0; i < rows * cols; ++i) std::printf("%.9g\n", (double)x.GetValue(i));
    WholeReduceMax(rmax, x, cols, 1, 1, 1, rs);   // value + index of row 0
    std::printf("argmax %u\n", (unsigned)rmax.ReinterpretCast<uint32_t>().GetValue(1));
}
"""
    + FAULT_MAIN
)


def test_row_softmax_mask_repeat_forms(tmp_path):
    proc = build_and_run(tmp_path, "softmax", SOFTMAX_ROWS)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().split("\n")
    got = [float(v) for v in lines[:128]]
    x = [((i * 7) % 13) * 0.25 - (i // 16) for i in range(128)]
    for r in range(8):
        row = x[16 * r : 16 * r + 16]
        e = [math.exp(v - max(row)) for v in row]
        for c in range(16):
            assert got[16 * r + c] == pytest.approx(e[c] / sum(e), rel=1e-6)
    assert lines[128] == f"argmax {max(range(16), key=lambda c: x[c])}"


def test_uncaught_fault_aborts_loudly(tmp_path):
    src = r"""
int main()
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    q.DeQue<float>();
    return 0;
}
"""
    proc = build_and_run(tmp_path, "uncaught", src)
    assert proc.returncode != 0
    assert "pypto_host::HardwareFault: DeQue: queue is empty" in proc.stderr


def test_an_assemble_region_check_without_a_valid_extent_faults_with_a_message(tmp_path):
    """The control program passes no valid extent when it knows none (the region is the value's
    whole shape); an out-of-bounds region then faults naming it (it dereferenced the null valid)."""
    src = r"""
int main()
{
    const int64_t o[3] = {2, 0, 0}, s[3] = {2, 4, 8}, e[3] = {3, 4, 8};
    pypto_host::CheckRegion(pypto_host::Region::Assemble, "@out", 3, o, s, nullptr, e);
    return 0;
}
"""
    proc = build_and_run(tmp_path, "region_null_valid", src)
    assert proc.returncode != 0
    assert "assemble: region offsets [2, 0, 0] + valid [2, 4, 8] is out of bounds of @out [3, 4, 8]" in proc.stderr


# ------------------------------------------------------------------------------------------
# Enforcement: one program per rule; each must exit 3 with the expected message.
# ------------------------------------------------------------------------------------------

GM16 = r"""
    alignas(64) static float gx[256];
    alignas(64) static float gz[256];
    GlobalTensor<float> xg, zg;
    xg.SetGlobalBuffer((__gm__ float*)gx, 64);
    zg.SetGlobalBuffer((__gm__ float*)gz, 64);
"""

VIOLATIONS = {
    "ub_overflow": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> qa; TQue<QuePosition::VECOUT, 1> qb;
        pipe.InitBuffer(qa, 2, 64 * 1024);
        pipe.InitBuffer(qb, 2, 32 * 1024 + 32);""",
        "TPipe::InitBuffer(que): UB overflow: 131072 B already allocated + 65600 B requested = 196672 B > UB size 196608 B",
    ),
    "tbuf_overflow": (
        """TPipe pipe; TBuf<QuePosition::VECCALC> a, b;
        pipe.InitBuffer(a, 196608 - 32); pipe.InitBuffer(b, 64);""",
        "UB overflow",
    ),
    "initbuffer_not_32": (
        "TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 2, 100);",
        "TPipe::InitBuffer(que): buffer length 100 bytes is not a positive multiple of 32 bytes",
    ),
    "datacopy_len_not_32": (
        GM16 + "TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);"
        "LocalTensor<float> t = q.AllocTensor<float>(); AscendC::DataCopy(t, xg, 12);",
        "DataCopy(GM->UB): length 12 x 4 B = 48 bytes is not a multiple of 32 bytes; the device silently rounds it down to 32",
    ),
    "datacopy_ub_misaligned": (
        GM16 + "TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);"
        "LocalTensor<float> t = q.AllocTensor<float>(); AscendC::DataCopy(t[3], xg, 8);",
        "DataCopy(GM->UB): dst UB address 12 is not 32-byte aligned",
    ),
    "datacopy_out_ub_misaligned": (
        GM16 + "TPipe pipe; TQue<QuePosition::VECOUT, 1> q; pipe.InitBuffer(q, 1, 256);"
        "LocalTensor<float> t = q.AllocTensor<float>(); AscendC::DataCopy(zg, t[4], 8);",
        "DataCopy(UB->GM): src UB address 16 is not 32-byte aligned",
    ),
    "datacopy_gm_misaligned_element": (
        """alignas(64) static uint8_t raw[512];
        GlobalTensor<float> g; g.SetGlobalBuffer((__gm__ float*)(raw + 2), 64);
        TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> t = q.AllocTensor<float>(); AscendC::DataCopy(t, g, 8);""",
        "is not 4-byte aligned (DataCopy needs element alignment",
    ),
    "datacopy_gm_misaligned_strict": (
        GM16
        + """pypto_host::SetStrictGmAlignment(true);
        TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> t = q.AllocTensor<float>(); AscendC::DataCopy(t, xg[4], 8);""",
        "is not 32-byte aligned (strict 32-byte GM mode)",
    ),
    "gm_read_out_of_bounds": (
        GM16 + "TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);"
        "LocalTensor<float> t = q.AllocTensor<float>(); AscendC::DataCopy(t, xg[8], 64);",
        "DataCopy(GM->UB): GM access out of bounds: bytes [32, 288) of a buffer of 256 bytes (64 elements)",
    ),
    "gm_write_out_of_bounds": (
        GM16 + "TPipe pipe; TQue<QuePosition::VECOUT, 1> q; pipe.InitBuffer(q, 1, 256);"
        "LocalTensor<float> t = q.AllocTensor<float>(); AscendC::Duplicate(t, 1.0f, 64);"
        "AscendC::DataCopy(zg[56], t, 16);",
        "DataCopy(UB->GM): GM access out of bounds: bytes [224, 288)",
    ),
    "gm_scalar_out_of_bounds": (
        GM16 + "zg.SetValue(64, 1.0f);",
        "GlobalTensor::SetValue: GM access out of bounds: bytes [256, 260)",
    ),
    "datacopypad_gm_out_of_bounds": (
        GM16
        + """TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopyExtParams p{3, 20 * sizeof(float), 4 * sizeof(float), 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        AscendC::DataCopyPad(t, xg, p, pad);""",
        "DataCopyPad(GM->UB): GM access out of bounds: bytes [0, 272)",
    ),
    "deque_empty": (
        "TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 2, 256); q.DeQue<float>();",
        "DeQue: queue is empty (no EnQue before this DeQue)",
    ),
    "alloc_beyond_buffers": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 2, 256);
        LocalTensor<float> a = q.AllocTensor<float>(); LocalTensor<float> b = q.AllocTensor<float>();
        LocalTensor<float> c = q.AllocTensor<float>();""",
        "AllocTensor: all 2 buffer(s) of TQue<VECIN, depth 1> with 2 buffer(s) of 256 B are in use",
    ),
    "enque_beyond_depth": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 2, 256);
        LocalTensor<float> a = q.AllocTensor<float>(); LocalTensor<float> b = q.AllocTensor<float>();
        q.EnQue(a); q.EnQue(b);""",
        "EnQue: queue already holds 1 tensor(s) = its depth; DeQue first",
    ),
    "free_foreign_tensor": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> q; TQue<QuePosition::VECOUT, 1> r;
        pipe.InitBuffer(q, 1, 256); pipe.InitBuffer(r, 1, 256);
        LocalTensor<float> a = q.AllocTensor<float>(); r.FreeTensor(a);""",
        "FreeTensor: tensor was not allocated from this queue (TQue<VECOUT",
    ),
    "free_tbuf_tensor": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> q; TBuf<> b;
        pipe.InitBuffer(q, 1, 256); pipe.InitBuffer(b, 256);
        LocalTensor<float> a = b.Get<float>(); q.FreeTensor(a);""",
        "FreeTensor: tensor was not allocated from this queue",
    ),
    "double_free": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> a = q.AllocTensor<float>(); LocalTensor<float> b = a;
        q.FreeTensor(a); q.FreeTensor(b);""",
        "FreeTensor: tensor was already freed (double FreeTensor)",
    ),
    "use_after_free": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> a = q.AllocTensor<float>(); LocalTensor<float> keep = a;
        q.FreeTensor(a); AscendC::Duplicate(keep, 0.0f, 64);""",
        "Duplicate: LocalTensor used after FreeTensor",
    ),
    "use_while_enqueued": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> a = q.AllocTensor<float>(); q.EnQue(a); AscendC::Exp(a, a, 64);""",
        "Exp: LocalTensor used while it is enqueued (EnQue'd but not DeQue'd)",
    ),
    "vector_count_exceeds_size": (
        """TPipe pipe; TBuf<> x, y; pipe.InitBuffer(x, 256); pipe.InitBuffer(y, 512);
        LocalTensor<float> a = x.Get<float>(), b = y.Get<float>();
        AscendC::Add(b, b, a, 128);""",
        "Add: count 128 exceeds the src1 tensor's size of 64 elements",
    ),
    "vector_count_exceeds_subview": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 256);
        LocalTensor<float> a = x.Get<float>();
        AscendC::Muls(a[8], a[8], 2.0f, 64);""",
        "Muls: count 64 exceeds the dst tensor's size of 56 elements",
    ),
    "vector_misaligned_operand": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 256);
        LocalTensor<float> a = x.Get<float>();
        AscendC::Abs(a[1], a[1], 8);""",
        "Abs: dst UB address 4 is not 32-byte aligned",
    ),
    "vector_partial_overlap": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 512);
        LocalTensor<float> a = x.Get<float>();
        AscendC::Adds(a[8], a, 1.0f, 64);""",
        "partially overlaps a source",
    ),
    "vector_dtype": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 256);
        LocalTensor<int32_t> a = x.Get<int32_t>();
        AscendC::Exp(a, a, 8);""",
        "Exp: dtype int32_t is not supported on A2 (allowed: half float",
    ),
    "vector_partial_overlap_half": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 512);
        LocalTensor<half> a = x.Get<half>();
        AscendC::Add(a, a, a[16], 64);""",
        "Add: dst UB [0, 128) partially overlaps a source [32, 160)",
    ),
    "vector_partial_overlap_src1_float": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 512);
        LocalTensor<float> a = x.Get<float>();
        AscendC::Div(a[8], a[8], a, 64);""",
        "Div: dst UB [32, 288) partially overlaps a source [0, 256)",
    ),
    "vector_dtype_div_int": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 256);
        LocalTensor<int32_t> a = x.Get<int32_t>();
        AscendC::Div(a, a, a, 8);""",
        "Div: dtype int32_t is not supported on A2 (allowed: half float",
    ),
    "vector_negative_count_half": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 256);
        LocalTensor<half> a = x.Get<half>();
        AscendC::Exp(a, a, -1);""",
        "Exp: negative count -1",
    ),
    "vector_count_exceeds_half": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 256);
        LocalTensor<half> a = x.Get<half>();
        AscendC::Sqrt(a, a, 129);""",
        "Sqrt: count 129 exceeds the dst tensor's size of 128 elements",
    ),
    "scalar_op_misaligned_half": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 256);
        LocalTensor<half> a = x.Get<half>();
        AscendC::Maxs(a, a[2], half(1.0f), 8);""",
        "Maxs: src UB address 4 is not 32-byte aligned",
    ),
    "reducemax_count_exceeds": (
        """TPipe pipe; TBuf<> x, w; pipe.InitBuffer(x, 256); pipe.InitBuffer(w, 256);
        LocalTensor<float> a = x.Get<float>(), b = w.Get<float>();
        AscendC::ReduceMax(a, a, b, 65, true);""",
        "ReduceMax: count 65 exceeds the src tensor's size of 64 elements",
    ),
    "duplicate_count_exceeds": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 256);
        LocalTensor<float> a = x.Get<float>();
        AscendC::Duplicate(a[8], 1.0f, 57);""",
        "Duplicate: count 57 exceeds the dst tensor's size of 56 elements",
    ),
    "cast_bad_mode": (
        """TPipe pipe; TBuf<> x, y; pipe.InitBuffer(x, 256); pipe.InitBuffer(y, 256);
        LocalTensor<float> a = x.Get<float>(); LocalTensor<int32_t> b = y.Get<int32_t>();
        AscendC::Cast(b, a, RoundMode::CAST_NONE, 8);""",
        "Cast: float -> int32_t with RoundMode::CAST_NONE is not an allowed mode on A2",
    ),
    "cast_unsupported_pair": (
        """TPipe pipe; TBuf<> x, y; pipe.InitBuffer(x, 256); pipe.InitBuffer(y, 256);
        LocalTensor<half> a = x.Get<half>(); LocalTensor<bfloat16_t> b = y.Get<bfloat16_t>();
        AscendC::Cast(b, a, RoundMode::CAST_RINT, 8);""",
        "Cast: half -> bfloat16_t with RoundMode::CAST_RINT is not a supported conversion on A2",
    ),
    "compare_not_256_bytes": (
        """TPipe pipe; TBuf<> x, m; pipe.InitBuffer(x, 256); pipe.InitBuffer(m, 32);
        LocalTensor<float> a = x.Get<float>(); LocalTensor<uint8_t> bits = m.Get<uint8_t>();
        AscendC::Compare(bits, a, a, CMPMODE::LT, 32);""",
        "Compare: count 32 x 4 B is not a multiple of 256 bytes",
    ),
    "reducemax_small_work": (
        """TPipe pipe; TBuf<> x, w; pipe.InitBuffer(x, 2048); pipe.InitBuffer(w, 32);
        LocalTensor<float> a = x.Get<float>(), wk = w.Get<float>();
        AscendC::ReduceMax(a, a, wk, 512);""",
        "ReduceMax: work tensor has 8 elements, needs at least 16",
    ),
    "mask_too_wide": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 1024);
        LocalTensor<float> a = x.Get<float>();
        AscendC::Add(a, a, a, 65, 1, {1, 1, 1, 8, 8, 8});""",
        "Add: contiguous mask 65 outside [1, 64] for 4-byte elements",
    ),
    "repeat_beyond_tensor": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 1024);
        LocalTensor<float> a = x.Get<float>();
        AscendC::Muls(a, a, 2.0f, 64, 5, {1, 1, 8, 8});""",
        "Muls: mask/repeat access at byte 1024 of the dst tensor, which has only 256 elements",
    ),
    "queue_buffers_per_position": (
        """TPipe pipe; TQue<QuePosition::VECIN, 1> a, b, c;
        pipe.InitBuffer(a, 4, 256); pipe.InitBuffer(b, 4, 256); pipe.InitBuffer(c, 1, 256);""",
        "9 queue buffers on one TPosition; at most 8",
    ),
    "two_pipes": (
        "TPipe p1; TPipe p2;",
        "a second TPipe was constructed while one is alive",
    ),
    "local_getvalue_out_of_range": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 64);
        LocalTensor<float> a = x.Get<float>(); a.GetValue(16);""",
        "LocalTensor::GetValue(16): index out of range for a LocalTensor of 16 elements",
    ),
    # the bitwise ops of §6.2 exist on int16 / uint16 only (other widths go through ReinterpretCast)
    "and_on_int32": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 1024);
        LocalTensor<int32_t> a = x.Get<int32_t>();
        AscendC::And(a, a, a, 64);""",
        "And: dtype int32_t is not supported on A2 (allowed: int16_t uint16_t; §6.2)",
    ),
    "shift_past_the_width": (
        """TPipe pipe; TBuf<> x; pipe.InitBuffer(x, 1024);
        LocalTensor<int16_t> a = x.Get<int16_t>();
        AscendC::ShiftLeft(a, a, static_cast<int16_t>(17), 128);""",
        "ShiftLeft: shift amount 17 outside [0, 16] for int16_t",
    ),
    "ascendc_assert": (
        """const int32_t zero = 0;
        ascendc_assert(zero != 0, "divisor %d at row %d", zero, 3);""",
        "ascendc_assert(zero != 0) failed: divisor 0 at row 3",
    ),
}


@pytest.fixture(scope="module")
def violation_exes(tmp_path_factory):
    d = tmp_path_factory.mktemp("violations")

    def build(item):
        name, (body, _) = item
        src = "void kernel()\n{\n" + body + "\n}\n" + FAULT_MAIN
        # unused locals are part of the scenario (AllocTensor results kept alive)
        src = '#pragma GCC diagnostic ignored "-Wunused-variable"\n' + src
        src = '#pragma GCC diagnostic ignored "-Wunused-but-set-variable"\n' + src
        return name, compile_program(src, d / name)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(pool.map(build, VIOLATIONS.items()))


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_violation_faults_loudly(violation_exes, name):
    proc = run(violation_exes[name])
    expected = VIOLATIONS[name][1]
    assert proc.returncode == 3, (
        f"expected a HardwareFault, got rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    )
    assert "NO FAULT" not in proc.stdout
    assert proc.stderr.startswith("pypto_host::HardwareFault: ")
    assert expected in proc.stderr, proc.stderr


def test_no_false_faults_at_the_limits(tmp_path):
    """Exactly 192 KiB of UB, 8 VECIN buffers, counts equal to the tensor size: all legal."""
    src = (
        r"""
void kernel()
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> a, b, c, d;
    TBuf<> t;
    pipe.InitBuffer(a, 2, 16 * 1024);
    pipe.InitBuffer(b, 2, 16 * 1024);
    pipe.InitBuffer(c, 2, 16 * 1024);
    pipe.InitBuffer(d, 2, 16 * 1024);
    pipe.InitBuffer(t, 64 * 1024);
    std::printf("used %u\n", pipe.HostUbUsed());
    LocalTensor<float> x = t.Get<float>();
    AscendC::Duplicate(x, 1.0f, static_cast<int32_t>(x.GetSize()));
    LocalTensor<float> p = a.AllocTensor<float>(), q = a.AllocTensor<float>();
    AscendC::Add(p, x, x, static_cast<int32_t>(p.GetSize()));
    a.EnQue(p); a.EnQue(q);  // depth 2
    LocalTensor<float> r = a.DeQue<float>();
    std::printf("%g %u\n", (double)r.GetValue(4095), r.GetSize());
    a.FreeTensor(r);
    LocalTensor<float> s = a.DeQue<float>();
    a.FreeTensor(s);
    LocalTensor<float> u = a.AllocTensor<float>();  // a freed buffer is reusable
    a.FreeTensor(u);
    AscendC::SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::PipeBarrier<PIPE_ALL>();
}
"""
        + FAULT_MAIN
    )
    proc = build_and_run(tmp_path, "limits", src)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["used 196608", "2 4096"]


# ------------------------------------------------------------------------------------------
# Launch on several threads (PYPTO_AST_HOST_THREADS / SetHostThreads)
# ------------------------------------------------------------------------------------------

THREADED = r"""
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

std::mutex g_idsMutex;
std::set<std::thread::id> g_ids;

// Block b: z[b-th slice] = x[slice] * (b + 1) + b, tile by tile; GetValue on GM counts too.
extern "C" __global__ __aicore__ void scale_blocks(GM_ADDR x, GM_ADDR z, uint32_t perCore, uint32_t tile)
{
    {
        std::lock_guard<std::mutex> lock(g_idsMutex);
        g_ids.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let the other threads start
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qi;
    TQue<TPosition::VECOUT, 1> qo;
    pipe.InitBuffer(qi, 2, tile * sizeof(float));
    pipe.InitBuffer(qo, 2, tile * sizeof(float));
    GlobalTensor<float> xg, zg;
    const uint64_t base = static_cast<uint64_t>(perCore) * GetBlockIdx();
    xg.SetGlobalBuffer((__gm__ float*)x + base, perCore);
    zg.SetGlobalBuffer((__gm__ float*)z + base, perCore);
    const float b = static_cast<float>(GetBlockIdx());
    (void)xg.GetValue(0);
    for (uint32_t i = 0; i < perCore / tile; ++i) {
        LocalTensor<float> in = qi.AllocTensor<float>();
        DataCopy(in, xg[i * tile], tile);
        qi.EnQue(in);
        LocalTensor<float> a = qi.DeQue<float>();
        LocalTensor<float> o = qo.AllocTensor<float>();
        Muls(o, a, b + 1.0f, tile);
        Adds(o, o, b, tile);
        Exp(o, o, tile);
        qo.EnQue(o);
        qi.FreeTensor(a);
        LocalTensor<float> out = qo.DeQue<float>();
        DataCopy(zg[i * tile], out, tile);
        qo.FreeTensor(out);
    }
}

int main(int argc, char** argv)
{
    const int threads = std::atoi(argv[1]);
    if (threads >= 0) pypto_host::SetHostThreads(threads);  // -1: PYPTO_AST_HOST_THREADS decides
    const uint32_t blocks = 37, perCore = 512, tile = 128;
    std::vector<float> x(blocks * perCore), z(blocks * perCore, -1.0f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 97) - 48) / 32.0f;
    try {
        pypto_host::Launch(blocks, scale_blocks, (GM_ADDR)x.data(), (GM_ADDR)z.data(), perCore, tile);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 4;
    }
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the output bytes
    const uint8_t* p = reinterpret_cast<const uint8_t*>(z.data());
    for (size_t i = 0; i < z.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
    const auto& t = pypto_host::Traffic();
    std::printf("hash %016llx\n", (unsigned long long)h);
    std::printf("traffic %llu %llu %llu %llu %llu\n", (unsigned long long)t.gmToUbBytes,
                (unsigned long long)t.ubToGmBytes, (unsigned long long)t.gmToUbCalls,
                (unsigned long long)t.ubToGmCalls, (unsigned long long)t.gmScalarBytes);
    std::fprintf(stderr, "threads used %zu\n", g_ids.size());
    return 0;
}
"""


def _run_with(exe: Path, arg: str, env_threads=None) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYPTO_AST_HOST_THREADS"}
    if env_threads is not None:
        env["PYPTO_AST_HOST_THREADS"] = env_threads
    return subprocess.run([str(exe), arg], capture_output=True, text=True, timeout=60,
                          check=False, env=env)


def test_launch_on_threads_matches_one_thread(tmp_path):
    exe = compile_program(THREADED, tmp_path / "threaded")
    one = _run_with(exe, "1")
    assert one.returncode == 0, one.stderr
    assert "threads used 1" in one.stderr
    blocks, per_core = 37, 512
    # every block's tiles and its one GetValue, summed over the blocks
    assert one.stdout.split("\n")[1] == (
        f"traffic {blocks * per_core * 4} {blocks * per_core * 4} {blocks * 4} {blocks * 4} {blocks * 4}"
    )
    for arg, env in (("4", None), ("2", None), ("0", None), ("-1", "3"), ("-1", None)):
        many = _run_with(exe, arg, env)
        assert many.returncode == 0, many.stderr
        assert many.stdout == one.stdout, (arg, env)
    assert "threads used 4" in _run_with(exe, "4").stderr
    assert "threads used 3" in _run_with(exe, "-1", "3").stderr


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity"), reason="needs Linux CPU affinity")
def test_auto_threads_follow_the_cpu_affinity(tmp_path):
    """0 = one thread per core the process may use (taskset / cpusets), not per core of the machine."""
    import os

    exe = compile_program(THREADED, tmp_path / "threaded")
    one = _run_with(exe, "1")

    def pinned(cores):
        return subprocess.run([str(exe), "0"], capture_output=True, text=True, timeout=60, check=False,
                              env={k: v for k, v in os.environ.items() if k != "PYPTO_AST_HOST_THREADS"},
                              preexec_fn=lambda: os.sched_setaffinity(0, cores))

    allowed = sorted(os.sched_getaffinity(0))
    single = pinned({allowed[0]})
    assert single.returncode == 0, single.stderr
    assert "threads used 1" in single.stderr
    assert single.stdout == one.stdout
    if len(allowed) >= 2:
        two = pinned(set(allowed[:2]))
        assert "threads used 2" in two.stderr
        assert two.stdout == one.stdout


def test_bad_thread_count_variable_is_an_error(tmp_path):
    exe = compile_program(THREADED, tmp_path / "threaded")
    proc = _run_with(exe, "-1", "lots")
    assert proc.returncode == 4
    assert "PYPTO_AST_HOST_THREADS=lots: expected a thread count >= 0" in proc.stderr


THREADED_FAULT = r"""
#include <chrono>
#include <cstdlib>
#include <thread>

// Blocks 5 and 11 fault with different messages; block 11 (and 12+) get there first in time.
extern "C" __global__ __aicore__ void faulty(GM_ADDR x)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    GlobalTensor<float> xg;
    xg.SetGlobalBuffer((__gm__ float*)x, 64);
    const int64_t b = GetBlockIdx();
    if (b < 8) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (b == 5) {
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopy(t, xg[40], 64);  // 24 elements too far
    }
    if (b == 11) q.DeQue<float>();
}

int main(int argc, char** argv)
{
    pypto_host::SetHostThreads(std::atoi(argv[1]));
    alignas(64) static float gx[64];
    try {
        pypto_host::Launch(16, faulty, (GM_ADDR)gx);
    } catch (const pypto_host::HardwareFault& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 3;
    }
    std::printf("NO FAULT\n");
    return 0;
}
"""


def test_fault_in_one_block_of_a_threaded_launch(tmp_path):
    exe = compile_program(THREADED_FAULT, tmp_path / "threaded_fault")
    want = ("pypto_host::HardwareFault: DataCopy(GM->UB): GM access out of bounds: bytes [160, 416) "
            "of a buffer of 256 bytes")
    for arg in ("1", "4", "4", "4", "16"):
        proc = run_args(exe, arg)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert proc.stderr.startswith(want), (arg, proc.stderr)


def run_args(exe: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, check=False)


# ------------------------------------------------------------------------------------------
# Fast paths: same numbers as the exact definitions
# ------------------------------------------------------------------------------------------

HALF_OPS = r"""
// For every half bit pattern a and a partner b, print the bits of a+b a-b a*b a/b max min sqrt(a).
void kernel()
{
    TPipe pipe;
    TBuf<> ba, bb, bd;
    const uint32_t n = 8192;
    pipe.InitBuffer(ba, n * 2);
    pipe.InitBuffer(bb, n * 2);
    pipe.InitBuffer(bd, n * 2);
    LocalTensor<half> a = ba.Get<half>(), b = bb.Get<half>(), d = bd.Get<half>();
    for (uint32_t base = 0; base < 65536; base += n) {
        for (uint32_t i = 0; i < n; ++i) {
            a.SetValue(i, half::FromBits(static_cast<uint16_t>(base + i)));
            b.SetValue(i, half::FromBits(static_cast<uint16_t>(((base + i) * 7919u + 13u) & 0xFFFFu)));
        }
        for (int op = 0; op < 7; ++op) {
            switch (op) {
            case 0: Add(d, a, b, n); break;
            case 1: Sub(d, a, b, n); break;
            case 2: Mul(d, a, b, n); break;
            case 3: Div(d, a, b, n); break;
            case 4: Max(d, a, b, n); break;
            case 5: Min(d, a, b, n); break;
            case 6: Sqrt(d, a, n); break;
            }
            for (uint32_t i = 0; i < n; ++i) std::printf("%u\n", (unsigned)d.GetValue(i).Bits());
        }
    }
}
""" + FAULT_MAIN


def _half(bits: int) -> float:
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def _half_result(v: float) -> int:
    return 0x7E00 if math.isnan(v) else half_bits(v)


def _div(x: float, y: float) -> float:
    if y != 0:
        return x / y
    if x == 0 or math.isnan(x):
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


def _maximum(x: float, y: float) -> float:
    """IEEE 754-2019 maximum: NaN propagates, -0 < +0."""
    if math.isnan(x) or math.isnan(y):
        return math.nan
    return (y if math.copysign(1, x) < 0 else x) if x == y else max(x, y)


def _minimum(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y):
        return math.nan
    return (x if math.copysign(1, x) < 0 else y) if x == y else min(x, y)


def test_half_fast_path_is_exactly_rounded(tmp_path):
    proc = build_and_run(tmp_path, "halfops", HALF_OPS)
    assert proc.returncode == 0, proc.stderr
    got = [int(v) for v in proc.stdout.split() if v.isdigit()]
    n, k = 8192, 0
    ops = [
        lambda x, y: x + y if not (math.isinf(x) and math.isinf(y) and x != y) else math.nan,
        lambda x, y: x - y if not (math.isinf(x) and math.isinf(y) and x == y) else math.nan,
        lambda x, y: math.nan if (x == 0 and math.isinf(y)) or (y == 0 and math.isinf(x)) else x * y,
        _div,
        _maximum,
        _minimum,
        lambda x, y: math.nan if x < 0 else (x if x == 0 or math.isinf(x) or math.isnan(x) else math.sqrt(x)),
    ]
    bad = []
    for base in range(0, 65536, n):
        a = [_half(base + i) for i in range(n)]
        b = [_half(((base + i) * 7919 + 13) & 0xFFFF) for i in range(n)]
        for op in ops:
            for i in range(n):
                want = _half_result(op(a[i], b[i]))
                if got[k] != want and len(bad) < 5:
                    bad.append((ops.index(op), hex(base + i), got[k], want))
                k += 1
    assert k == len(got)
    assert not bad


BF16_CAST = r"""
// Cast float -> bfloat16_t (CAST_RINT) and bfloat16_t -> float (CAST_NONE), the vectorised paths,
// against the double route the generic Cast takes (bfloat16_t(double) = fp::Encode(fp::RoundTo),
// fp::Bf16ToDouble), bit for bit.  Words (float bit patterns) come from stdin, or else: every
// high half with the low halves at and around its rounding tie, and every bf16 pattern widened.
// Ragged counts and a view at an offset reach the vector loops' tails.  Prints "bad N ...".
#include <cstring>
#include <iostream>
static std::vector<uint32_t> g_words;
static uint32_t FloatBits(float f) { uint32_t b; std::memcpy(&b, &f, 4); return b; }
static float BitsFloat(uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }
void kernel()
{
    TPipe pipe;
    TBuf<> bf, bh, bg;
    const uint32_t cap = 4128, step = 4093;  // odd: every chunk ends in a loop tail
    pipe.InitBuffer(bf, cap * 4);
    pipe.InitBuffer(bh, cap * 2);
    pipe.InitBuffer(bg, cap * 4);
    LocalTensor<float> f = bf.Get<float>()[8], g = bg.Get<float>();
    LocalTensor<bfloat16_t> h = bh.Get<bfloat16_t>()[16];
    LocalTensor<uint32_t> fu = f.ReinterpretCast<uint32_t>(), gu = g.ReinterpretCast<uint32_t>();
    unsigned long bad = 0, checked = 0;
    auto miss = [&](const char* what, uint32_t in, uint32_t got, uint32_t want) {
        if (bad++ < 5) std::printf("%s %08x: %08x, want %08x\n", what, in, got, want);
    };
    for (size_t at = 0; at < g_words.size(); at += step) {
        const uint32_t m = static_cast<uint32_t>(std::min<size_t>(step, g_words.size() - at));
        for (uint32_t i = 0; i < m; ++i) fu.SetValue(i, g_words[at + i]);
        Cast(h, f, RoundMode::CAST_RINT, m);
        Cast(g, h, RoundMode::CAST_NONE, m);
        for (uint32_t i = 0; i < m; ++i) {
            const uint32_t w = g_words[at + i], b = h.GetValue(i).Bits();
            const uint32_t want = bfloat16_t(static_cast<double>(BitsFloat(w))).Bits();
            if (b != want) miss("rint", w, b, want);
            const uint32_t wide = FloatBits(static_cast<float>(pypto_host::fp::Bf16ToDouble(static_cast<uint16_t>(b))));
            if (gu.GetValue(i) != wide) miss("widen", b, gu.GetValue(i), wide);
            ++checked;
        }
    }
    std::printf("bad %lu of %lu\n", bad, checked);
}
int main(int argc, char** argv)
{
    if (argc > 1) {
        uint32_t w;
        while (std::cin >> std::hex >> w) g_words.push_back(w);
    } else {
        for (uint32_t hi = 0; hi < 65536; ++hi) {
            for (uint32_t lo : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu, (hi * 2654435761u) >> 16})
                g_words.push_back(hi << 16 | lo);
        }
    }
    try {
        pypto_host::Launch(1, kernel);
    } catch (const pypto_host::HardwareFault& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 3;
    }
    return 0;
}
"""


def test_bf16_casts_match_the_double_route_exhaustively(tmp_path):
    """Every bf16 widened, and every float high half rounded with the low halves at its tie (ties
    to even and odd, just below and above), at 0 and at the top (NaNs whose high half reads as an
    inf, overflow to inf), subnormals and zeros of both signs among them."""
    proc = build_and_run(tmp_path, "bf16cast", BF16_CAST)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(f"bad 0 of {65536 * 7}"), proc.stdout


_F32_EDGES = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00008000, 0x00018000, 0x7F7FFFFF,
              0x7F7F8000, 0xFF7F7FFF, 0x7F800000, 0xFF800000, 0x7F800001, 0xFF800001, 0x7FC00000,
              0xFFFFFFFF, 0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 2 ** 32 - 1), st.sampled_from(_F32_EDGES),
                          st.floats(width=32).map(lambda v: struct.unpack("<I", struct.pack("<f", v))[0])),
                min_size=1, max_size=600))
def test_bf16_casts_match_the_double_route_on_drawn_floats(bf16_cast_exe, words):
    proc = subprocess.run([str(bf16_cast_exe), "stdin"], input=" ".join(f"{w:x}" for w in words),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(f"bad 0 of {len(words)}"), proc.stdout


@pytest.fixture(scope="module")
def bf16_cast_exe(tmp_path_factory):
    return compile_program(BF16_CAST, tmp_path_factory.mktemp("bf16cast") / "bf16cast")


FLOAT_REDUCE = r"""
void kernel()
{
    TPipe pipe;
    TBuf<> bs, bd, bw;
    pipe.InitBuffer(bs, 4096);
    pipe.InitBuffer(bd, 32);
    pipe.InitBuffer(bw, 4096);
    LocalTensor<float> s = bs.Get<float>(), d = bd.Get<float>(), w = bw.Get<float>();
    auto show = [&](const char* what) {
        std::printf("%s %08x %u\n", what, (unsigned)d.ReinterpretCast<uint32_t>().GetValue(0),
                    (unsigned)d.ReinterpretCast<uint32_t>().GetValue(1));
    };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float v1[] = {-0.0f, 0.0f, 3.0f, nan, 3.0f, -5.0f, 0.0f};
    for (uint32_t i = 0; i < 7; ++i) s.SetValue(i, v1[i]);
    ReduceMax(d, s, w, 7, true); show("max1");
    ReduceMin(d, s, w, 7, true); show("min1");
    ReduceMax(d, s, w, 2, true); show("max_zeros");
    ReduceMin(d, s, w, 2, true); show("min_zeros");
    s.SetValue(3, 1.0f);
    ReduceMax(d, s, w, 7, true); show("max2");
    ReduceMin(d, s, w, 7, true); show("min2");
    s.SetValue(0, nan);
    ReduceMax(d, s, w, 7, true); show("max_nan_first");
    for (uint32_t i = 0; i < 1000; ++i) s.SetValue(i, static_cast<float>((i * 37u) % 101u) * 0.37f - 17.0f);
    s.SetValue(777, 1000.0f);
    s.SetValue(900, 1000.0f);
    s.SetValue(901, -1000.0f);
    ReduceMax(d, s, w, 1000, true); show("max_long");
    ReduceMin(d, s, w, 1000, true); show("min_long");
    ReduceSum(d, s, w, 1000); show("sum_long");
    ReduceSum(d, s, w, 64); show("sum_64");
    // the value-only ReduceMax/Min (a vectorised scan of its own) against the value of the indexed
    // form: zeros of both signs, a NaN past the first 16 lanes, every length of the loop's tail
    for (uint32_t i = 0; i < 1000; ++i) s.SetValue(i, (i % 7 == 3) ? -0.0f : (i % 11 == 5) ? 0.0f : -1.0f - i);
    auto same = [&](const char* what, uint32_t n) {
        LocalTensor<uint32_t> u = d.ReinterpretCast<uint32_t>();
        for (int isMax = 0; isMax < 2; ++isMax) {
            if (isMax) ReduceMax(d, s, w, n, true); else ReduceMin(d, s, w, n, true);
            const uint32_t want = u.GetValue(0);
            if (isMax) ReduceMax(d, s, w, n, false); else ReduceMin(d, s, w, n, false);
            if (u.GetValue(0) != want) std::printf("%s %u %d %08x %08x\n", what, n, isMax, (unsigned)u.GetValue(0), (unsigned)want);
        }
    };
    for (uint32_t n = 1; n <= 40; ++n) same("value_only", n);
    same("value_only", 1000);
    s.SetValue(37, nan);
    s.SetValue(900, -nan);
    for (uint32_t n = 30; n <= 60; ++n) same("value_only_nan", n);
    same("value_only_nan", 1000);
    s.SetValue(37, std::numeric_limits<float>::infinity());
    s.SetValue(900, -std::numeric_limits<float>::infinity());
    same("value_only_inf", 1000);
}
""" + FAULT_MAIN


def test_float_reductions_fast_paths(tmp_path):
    import numpy as np

    src = "#include <limits>\n" + FLOAT_REDUCE
    proc = build_and_run(tmp_path, "freduce", src)
    assert proc.returncode == 0, proc.stderr
    assert "value_only" not in proc.stdout, proc.stdout
    got = {line.split()[0]: (int(line.split()[1], 16), int(line.split()[2])) for line in proc.stdout.split("\n") if line and line != "NO FAULT"}

    def bits(v):
        return struct.unpack("<I", struct.pack("<f", v))[0]

    # a NaN anywhere gives NaN at its index, as Max/Min folded over the row would (NaN propagates)
    assert got["max1"][1] == 3 and (got["max1"][0] & 0x7FFFFFFF) > 0x7F800000
    assert got["min1"][1] == 3 and (got["min1"][0] & 0x7FFFFFFF) > 0x7F800000
    assert got["max_zeros"] == (0x00000000, 1)  # -0 < +0
    assert got["min_zeros"] == (0x80000000, 0)
    assert got["max2"] == (bits(3.0), 2)  # the first of two equal extremes
    assert got["min2"] == (bits(-5.0), 5)
    assert got["max_nan_first"][1] == 0 and (got["max_nan_first"][0] & 0x7FFFFFFF) > 0x7F800000
    assert got["max_long"] == (bits(1000.0), 777)
    assert got["min_long"] == (bits(-1000.0), 901)

    x = (np.array([((i * 37) % 101) for i in range(1000)], dtype=np.float32) * np.float32(0.37)) - np.float32(17.0)
    x[777] = x[900] = 1000.0
    x[901] = -1000.0

    def tree(v):  # TreeSum: halves (n + 1) // 2, in float32
        if len(v) == 1:
            return v[0]
        h = (len(v) + 1) // 2
        return np.float32(tree(v[:h]) + tree(v[h:]))

    acc = None
    for i in range(0, 1000, 64):
        part = tree(x[i:i + 64])
        acc = part if acc is None else np.float32(acc + part)
    assert got["sum_long"][0] == bits(float(acc))
    assert got["sum_64"][0] == bits(float(tree(x[:64])))


FLOAT_EXP = r"""
void kernel()
{
    TPipe pipe;
    TBuf<> bx;
    const uint32_t n = 4096;
    pipe.InitBuffer(bx, n * 4);
    LocalTensor<float> x = bx.Get<float>();
    for (uint32_t i = 0; i < n; ++i) x.SetValue(i, -110.0f + 0.05f * static_cast<float>(i));
    x.SetValue(0, std::numeric_limits<float>::quiet_NaN());
    x.SetValue(1, std::numeric_limits<float>::infinity());
    x.SetValue(2, -std::numeric_limits<float>::infinity());
    x.SetValue(3, 88.72f);
    x.SetValue(4, 88.73f);
    x.SetValue(5, -87.5f);
    x.SetValue(6, -0.0f);
    for (uint32_t i = 0; i < n; ++i) std::printf("%a ", (double)x.GetValue(i));
    std::printf("\n");
    Exp(x, x, n);
    for (uint32_t i = 0; i < n; ++i) std::printf("%a ", (double)x.GetValue(i));
    std::printf("\n");
}
""" + FAULT_MAIN


def test_float_exp_within_one_ulp(tmp_path):
    proc = build_and_run(tmp_path, "fexp", "#include <limits>\n" + FLOAT_EXP)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().split("\n")[:2]
    xs, ys = ([float(v) if v.lstrip("-") in ("nan", "inf") else float.fromhex(v) for v in line.split()]
              for line in lines)
    for x, y in zip(xs, ys):
        if math.isnan(x):
            assert math.isnan(y)
            continue
        want = math.exp(x) if x < 709 else math.inf
        if want > 3.4028234663852886e38:  # beyond FLT_MAX (rounds to inf)
            assert y == math.inf or want < 3.4028235677973366e38, (x, y)
            continue
        ulp = 2.0 ** (max(math.frexp(want)[1] - 24, -149)) if want else 2.0 ** -149
        assert abs(y - want) <= ulp, (x.hex(), y, want)


CAST_FAST = r"""
// Every half -> float (CAST_NONE), and a spread of float bit patterns -> half (CAST_RINT).
void kernel()
{
    TPipe pipe;
    TBuf<> bh, bf;
    const uint32_t n = 8192;
    pipe.InitBuffer(bh, n * 2);
    pipe.InitBuffer(bf, n * 4);
    LocalTensor<half> h = bh.Get<half>();
    LocalTensor<float> f = bf.Get<float>();
    for (uint32_t base = 0; base < 65536; base += n) {
        for (uint32_t i = 0; i < n; ++i) h.SetValue(i, half::FromBits(static_cast<uint16_t>(base + i)));
        Cast(f, h, RoundMode::CAST_NONE, n);
        for (uint32_t i = 0; i < n; ++i) std::printf("%u\n", (unsigned)f.ReinterpretCast<uint32_t>().GetValue(i));
    }
    for (uint32_t round = 0; round < 8; ++round) {
        for (uint32_t i = 0; i < n; ++i) {
            f.ReinterpretCast<uint32_t>().SetValue(i, (round * n + i) * 65521u + (round * n + i) % 7u);
        }
        Cast(h, f, RoundMode::CAST_RINT, n);
        for (uint32_t i = 0; i < n; ++i) std::printf("%u\n", (unsigned)h.GetValue(i).Bits());
    }
}
""" + FAULT_MAIN


def test_cast_float_half_fast_paths_are_exact(tmp_path):
    proc = build_and_run(tmp_path, "castfast", CAST_FAST)
    assert proc.returncode == 0, proc.stderr
    got = [int(v) for v in proc.stdout.split() if v.isdigit()]
    assert len(got) == 65536 + 8 * 8192
    for bits in range(65536):
        v = _half(bits)
        want = 0x7FC00000 if math.isnan(v) else struct.unpack("<I", struct.pack("<f", v))[0]
        assert got[bits] == want, hex(bits)
    for j in range(8 * 8192):
        fbits = (j * 65521 + j % 7) & 0xFFFFFFFF
        v = struct.unpack("<f", struct.pack("<I", fbits))[0]
        assert got[65536 + j] == _half_result(v), hex(fbits)


FLOAT_ALIAS = r"""
// Float binary/unary ops with dst = src0, dst = src1, dst = src0 = src1, and disjoint dst.
void kernel()
{
    TPipe pipe;
    TBuf<> ba, bb, bd;
    const uint32_t n = 1000;
    pipe.InitBuffer(ba, 4000);
    pipe.InitBuffer(bb, 4000);
    pipe.InitBuffer(bd, 4000);
    LocalTensor<float> a = ba.Get<float>(), b = bb.Get<float>(), d = bd.Get<float>();
    auto reset = [&]() {
        for (uint32_t i = 0; i < n; ++i) {
            a.SetValue(i, static_cast<float>(i) * 0.25f - 100.0f);
            b.SetValue(i, static_cast<float>(i % 13) + 0.5f);
        }
    };
    auto show = [&](const LocalTensor<float>& t) {
        for (uint32_t i = 0; i < n; i += 37) std::printf("%a ", (double)t.GetValue(i));
        std::printf("\n");
    };
    reset(); Sub(d, a, b, n); show(d);     // disjoint
    reset(); Sub(a, a, b, n); show(a);     // dst = src0
    reset(); Sub(b, a, b, n); show(b);     // dst = src1
    reset(); Mul(a, a, a, n); show(a);     // all the same
    reset(); Sqrt(d, b, n); show(d);       // unary, disjoint
    reset(); Sqrt(b, b, n); show(b);       // unary, in place
}
""" + FAULT_MAIN


def test_float_fast_path_aliasing_cases(tmp_path):
    import numpy as np

    proc = build_and_run(tmp_path, "falias", FLOAT_ALIAS)
    assert proc.returncode == 0, proc.stderr
    rows = [[float.fromhex(v) for v in line.split()] for line in proc.stdout.strip().split("\n")[:6]]
    i = np.arange(1000)
    a = i.astype(np.float32) * np.float32(0.25) - np.float32(100.0)
    b = (i % 13).astype(np.float32) + np.float32(0.5)
    sub, mul, sq = a - b, a * a, np.sqrt(b)
    want = [sub, sub, sub, mul, sq, sq]
    for got, w in zip(rows, want):
        assert got == [float(v) for v in w[::37]]


BITWISE = r"""
int main()
{
    TPipe pipe;
    TBuf<> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<int16_t> a = buf.GetWithOffset<int16_t>(128, 0), b = buf.GetWithOffset<int16_t>(128, 256),
                         d = buf.GetWithOffset<int16_t>(128, 512);
    const int16_t xs[4] = {-32768, -5, 300, 32767}, ys[4] = {-1, 3, 255, 1};
    for (uint32_t i = 0; i < 128; ++i) { a.SetValue(i, xs[i % 4]); b.SetValue(i, ys[i % 4]); }
    AscendC::And(d, a, b, 128); std::printf("and %d %d %d %d\n", d.GetValue(0), d.GetValue(1), d.GetValue(2), d.GetValue(3));
    AscendC::Or(d, a, b, 128); std::printf("or %d %d %d %d\n", d.GetValue(0), d.GetValue(1), d.GetValue(2), d.GetValue(3));
    AscendC::Not(d, a, 128); std::printf("not %d %d %d %d\n", d.GetValue(0), d.GetValue(1), d.GetValue(2), d.GetValue(3));
    AscendC::ShiftLeft(d, a, static_cast<int16_t>(3), 128);
    std::printf("shl %d %d %d %d\n", d.GetValue(0), d.GetValue(1), d.GetValue(2), d.GetValue(3));
    AscendC::ShiftRight(d, a, static_cast<int16_t>(3), 128);
    std::printf("shr %d %d %d %d\n", d.GetValue(0), d.GetValue(1), d.GetValue(2), d.GetValue(3));
    LocalTensor<uint16_t> u = a.ReinterpretCast<uint16_t>(), v = d.ReinterpretCast<uint16_t>();
    AscendC::ShiftRight(v, u, static_cast<uint16_t>(3), 128);
    std::printf("shr_u16 %d %d %d %d\n", v.GetValue(0), v.GetValue(1), v.GetValue(2), v.GetValue(3));
    LocalTensor<int32_t> w = buf.GetWithOffset<int32_t>(64, 1024), z = buf.GetWithOffset<int32_t>(64, 1280);
    for (uint32_t i = 0; i < 64; ++i) w.SetValue(i, i % 2 ? -7 : 1 << 30);
    AscendC::ShiftRight(z, w, 31, 64); std::printf("shr32 %d %d\n", z.GetValue(0), z.GetValue(1));
    AscendC::ShiftLeft(z, w, 1, 64); std::printf("shl32 %d %d\n", z.GetValue(0), z.GetValue(1));
    return 0;
}
"""


def test_bitwise_ops_and_shifts(tmp_path):
    """And / Or / Not on 16-bit lanes; ShiftLeft wraps, ShiftRight is arithmetic on int16 / int32
    and logical on uint16 (§6.2), as the integer ops composed from them assume."""
    proc = build_and_run(tmp_path, "bitwise", BITWISE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:8] == [
        "and -32768 3 44 1", "or -1 -5 511 32767", "not 32767 4 -301 -32768", "shl 0 -40 2400 -8",
        "shr -4096 -1 37 4095", "shr_u16 4096 8191 37 4095", "shr32 0 -1", "shl32 -2147483648 -14"], proc.stdout


WIDEN_ALL = r"""
#include <cinttypes>
#include <cstring>

int main()
{
    for (uint32_t b = 0; b < 65536; ++b) {
        const double h = pypto_host::fp::HalfToDouble(static_cast<uint16_t>(b));
        const double f = pypto_host::fp::Bf16ToDouble(static_cast<uint16_t>(b));
        uint64_t hb, fb;
        std::memcpy(&hb, &h, 8);
        std::memcpy(&fb, &f, 8);
        std::printf("%016" PRIx64 " %016" PRIx64 "\n", hb, fb);
    }
    return 0;
}
"""


def test_half_and_bf16_widen_exactly_for_every_bit_pattern(tmp_path):
    """The bit-level widenings (the cube's operand gathers use them) against numpy's and torch's."""
    import numpy as np
    import torch

    exe = compile_program(WIDEN_ALL, tmp_path / "widen")
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True)
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert len(rows) == 65536
    got_h = np.array([int(a, 16) for a, _ in rows], dtype=np.uint64).view(np.float64)
    got_b = np.array([int(b, 16) for _, b in rows], dtype=np.uint64).view(np.float64)
    bits = np.arange(65536, dtype=np.uint16)
    want_h = bits.view(np.float16).astype(np.float64)
    want_b = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16).double().numpy()
    for got, want in ((got_h, want_h), (got_b, want_b)):
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(got[~nan].view(np.uint64), want[~nan].view(np.uint64))  # signed zeros too


REDUCE_PATHS = (
    r"""
#include <cinttypes>
#include <cstring>
#include <random>

static float Special(std::mt19937& g)
{
    const float pool[] = {0.0f, -0.0f, 1.0f, -1.0f, 3.5f, -3.5f, 1e-40f, -1e-40f, 1e30f, -1e30f,
                          __builtin_inff(), -__builtin_inff(), __builtin_nanf("")};
    return pool[g() % 13];
}

void kernel()
{
    TPipe pipe;
    TBuf<> bs, bd, bw;
    pipe.InitBuffer(bs, 4096 * 4);
    pipe.InitBuffer(bd, 64 * 4);
    pipe.InitBuffer(bw, 4096 * 4);
    LocalTensor<float> s = bs.Get<float>(), d = bd.Get<float>(), w = bw.Get<float>();
    std::mt19937 g(7);
    for (int trial = 0; trial < 400; ++trial) {
        const int n = 1 + static_cast<int>(g() % 2000);
        const int nanOdds = trial % 4 == 0 ? 3 : 100000;
        for (int i = 0; i < n; ++i) {
            float v = (g() % 5 == 0) ? Special(g) : std::uniform_real_distribution<float>(-8, 8)(g);
            if (v != v && g() % nanOdds) v = 2.0f;  // NaNs in a quarter of the trials
            // rows whose extreme is a zero of either sign (the float pass hands those to the keys')
            if (trial % 5 == 1 && v > 0) v = -v;
            if (trial % 5 == 2 && v < 0) v = -v;
            s.SetValue(i, v);
        }
        for (int kind = 0; kind < 2; ++kind) {
            uint32_t plain, indexed;
            if (kind == 0) { ReduceMax(d, s, w, n, false); plain = d.ReinterpretCast<uint32_t>().GetValue(0);
                             ReduceMax(d, s, w, n, true); indexed = d.ReinterpretCast<uint32_t>().GetValue(0); }
            else { ReduceMin(d, s, w, n, false); plain = d.ReinterpretCast<uint32_t>().GetValue(0);
                   ReduceMin(d, s, w, n, true); indexed = d.ReinterpretCast<uint32_t>().GetValue(0); }
            if (plain != indexed) std::printf("MISMATCH trial %d kind %d: %08x vs %08x\n", trial, kind, plain, indexed);
        }
        // ReduceSum: a binary tree per 64-element repeat, the repeats added in order, from +0
        ReduceSum(d, s, w, n);
        float acc = 0.0f;
        for (int r = 0; r * 64 < n; ++r) {
            float v[64];
            const int m = n - r * 64 < 64 ? n - r * 64 : 64;
            for (int i = 0; i < m; ++i) v[i] = s.GetValue(r * 64 + i);
            std::function<float(int, int)> tree = [&](int lo, int len) -> float {
                if (len == 1) return v[lo];
                const int h = (len + 1) / 2;
                return len - h == 0 ? tree(lo, h) : tree(lo, h) + tree(lo + h, len - h);
            };
            const float part = tree(0, m);
            acc = r == 0 ? part : acc + part;
        }
        acc = acc + 0.0f;
        const float got = d.GetValue(0);
        uint32_t gb, wb;
        std::memcpy(&gb, &got, 4);
        std::memcpy(&wb, &acc, 4);
        if (gb != wb && !(got != got && acc != acc)) std::printf("SUM MISMATCH trial %d n %d\n", trial, n);
    }
    std::printf("done\n");
}
"""
    + FAULT_MAIN
)


def test_reduce_fast_paths_agree_with_the_reference_forms(tmp_path):
    """ReduceMax/Min without the index (one pass) give the bits the indexed form picks, NaNs and
    signed zeros included; ReduceSum's side-by-side repeats give the bits of the per-repeat tree."""
    proc = build_and_run(tmp_path, "reduce_paths", REDUCE_PATHS.replace("#include <random>", "#include <random>\n#include <functional>"))
    assert proc.returncode == 0, proc.stderr
    assert "MISMATCH" not in proc.stdout, proc.stdout[:2000]
    assert "done" in proc.stdout


# UB -> GM stores into a GM tensor registered larger than the last-level cache take streaming
# stores (runtime/core.cpp, docs/design.md §26); the tensor here is registered at 2^36 floats over
# a small buffer, so every store below streams on any machine.  Each form at GM offsets of 0..7
# floats (the streamed part's head and tail uneven) and lengths around the 64-byte lines; the
# bytes of every store are checked against a plain copy, the bytes around them untouched.
STREAM_STORES = (
    PRELUDE
    + r"""
void kernel()
{
    const int N = 4096;
    std::vector<float> src(N), out(N + 64), want(N + 64);
    for (int i = 0; i < N; ++i) src[i] = static_cast<float>(i) + 0.25f;
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, N * sizeof(float));
    GlobalTensor<float> g, o;
    g.SetGlobalBuffer((__gm__ float*)src.data(), N);
    o.SetGlobalBuffer((__gm__ float*)out.data(), uint64_t(1) << 36);
    LocalTensor<float> t = q.AllocTensor<float>();
    AscendC::DataCopy(t, g, N);
    long bad = 0, cases = 0;
    auto check = [&]() {
        for (int i = 0; i < N + 64; ++i) bad += std::memcmp(&out[i], &want[i], 4) != 0;
        ++cases;
    };
    for (int off = 0; off < 8; ++off) {
        for (int count : {8, 16, 24, 40, 1000, 2048}) {  // DataCopy, count form (multiples of 32 B)
            std::fill(out.begin(), out.end(), -1.0f);
            std::fill(want.begin(), want.end(), -1.0f);
            AscendC::DataCopy(o[off], t, count);
            for (int i = 0; i < count; ++i) want[off + i] = src[i];
            check();
        }
        for (int len : {1, 5, 15, 16, 17, 37, 301}) {  // DataCopyPad: 3 rows of len floats, a GM gap of 3
            std::fill(out.begin(), out.end(), -1.0f);
            std::fill(want.begin(), want.end(), -1.0f);
            AscendC::DataCopyPad(o[off], t, DataCopyExtParams{3, static_cast<uint32_t>(len * 4), 0, 3 * 4, 0});
            const int ub = (len * 4 + 31) / 32 * 8;  // UB rows are 32-byte aligned
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < len; ++c) want[off + r * (len + 3) + c] = src[r * ub + c];
            check();
        }
        std::fill(out.begin(), out.end(), -1.0f);  // DataCopy, DataCopyParams: 4 blocks of 3 x 32 B
        std::fill(want.begin(), want.end(), -1.0f);
        AscendC::DataCopy(o[off], t, DataCopyParams{4, 3, 1, 2});
        for (int b = 0; b < 4; ++b)
            for (int c = 0; c < 24; ++c) want[off + b * 40 + c] = src[b * 32 + c];
        check();
    }
    std::printf("bad %ld of %ld\n", bad, cases);
    q.FreeTensor(t);
}
"""
    + FAULT_MAIN
)


def test_stores_into_a_tensor_larger_than_the_cache_stream_the_same_bytes(tmp_path):
    proc = build_and_run(tmp_path, "streamstores", STREAM_STORES)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"bad 0 of {8 * (6 + 7 + 1)}", proc.stdout


STREAM_BYTES = (
    PRELUDE
    + r"""
extern "C" uint64_t pypto_host_stream_bytes();
void kernel() { std::printf("stream %llu\n", static_cast<unsigned long long>(pypto_host_stream_bytes())); }
"""
    + FAULT_MAIN
)


def _sysfs_l3_bytes():
    """The L3 that cpu0 shares, as Linux's sysfs (and lscpu) gives it, or None."""
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            if (index / "level").read_text().strip() != "3":
                continue
            size = (index / "size").read_text().strip()
        except OSError:
            return None
        scale = {"K": 1 << 10, "M": 1 << 20}.get(size[-1], 1)
        return int(size.rstrip("KM")) * scale
    return None


def test_stores_stream_from_the_size_of_the_l3_this_cpu_shares(tmp_path):
    """The streaming threshold is the L3 of sysfs, not sysconf's CPUID figure (a virtual machine's
    CPUID may describe the host's whole socket: 256 MiB on a guest with 32 MiB, and no store streamed)."""
    l3 = _sysfs_l3_bytes()
    if l3 is None:
        pytest.skip("this machine's sysfs gives no L3 size for cpu0")
    proc = build_and_run(tmp_path, "streambytes", STREAM_BYTES)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"stream {l3}", proc.stdout
