"""The host runtime's vector loops give the same bits on every ISA they are compiled for.

The runtime compiles its float loops (runtime/fastfloat.h) once per ISA and picks one at load
time (target_clones: x86-64-v4, AVX2, baseline); only the clone this CPU picks runs in the other
tests.  Here the same loops are built for each ISA alone (PYPTO_HOST_NO_CLONES plus -m flags)
with the runtime's own flags, run over floats spread across every exponent, and their outputs
hashed: the hashes must agree.  Exp (ExpF32, the runtime's float Exp) is a float polynomial of multiplies and adds, so a build
that fused them into FMAs (g++'s default where the ISA has FMA, unless -ffp-contract=off)
gives a different hash on x86-64-v4 and AVX2 with FMA.  The bf16 casts have two bodies (64-byte
vectors for x86-64-v4, a plain loop for the others) and so has Exp (four vectors side by side for
AVX2, a loop for the others): a baseline build with the bodies the baseline does not take is one
more variant, so each pair is compared on every x86-64 CPU.  ReduceSum's 64-element trees have
two bodies too (horizontal adds for AVX2, shuffles for the others): the AVX2 build compares them
on any AVX2 CPU.
"""

import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from pypto_ast.emit.host_runtime import HEADER_DIR, RUNTIME_FLAGS

CXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(CXX is None or platform.machine() not in ("x86_64", "AMD64"),
                                reason="g++ on x86-64 builds the ISA variants")

PROGRAM = r"""
#include "runtime/fastfloat.h"
#include <cstdio>
#include <vector>
using namespace AscendC::detail;

// FNV-1a over the output bytes.
static uint64_t Hash(uint64_t h, const void* p, size_t n)
{
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int main()
{
    // Every 509th float bit pattern (all exponents, both signs, NaNs, infinities, subnormals) and
    // the edges, in calls of uneven lengths so that the vector bodies and the tails both run.
    std::vector<uint32_t> in;
    for (uint64_t w = 0; w < (1ull << 32); w += 509) in.push_back(static_cast<uint32_t>(w));
    for (uint32_t w : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                       0x42B20000u, 0x42B2D4FCu, 0xC2CE8ED0u, 0xC2D00000u, 0x00000001u, 0x807FFFFFu})
        in.push_back(w);
    const int64_t n = static_cast<int64_t>(in.size());
    std::vector<float> e(in.size());
    std::vector<uint16_t> b(in.size());
    std::vector<uint32_t> wide(65536);
    std::vector<uint16_t> all(65536);
    for (int k = 0; k < 65536; ++k) all[k] = static_cast<uint16_t>(k);
    const uint8_t* src = reinterpret_cast<const uint8_t*>(in.data());
    for (int64_t i = 0, m = 1; i < n; i += m, m = m % 4093 + 37) {
        const int64_t c = m < n - i ? m : n - i;
        ExpF32(reinterpret_cast<uint8_t*>(e.data() + i), src + 4 * i, c);
        CastF32ToBf16(reinterpret_cast<uint8_t*>(b.data() + i), src + 4 * i, c);
    }
    CastBf16ToF32(reinterpret_cast<uint8_t*>(wide.data()), reinterpret_cast<const uint8_t*>(all.data()),
                  static_cast<int64_t>(all.size()));
    // ReduceSum's 64-element trees, over the patterns and over the same mantissas with exponents
    // of 2^-20 .. 2^19 (finite sums that round at every level); a NaN sum hashes as one NaN
    // (payloads are unspecified: docs/semantics.md).
    std::vector<uint32_t> mid(in.size());
    for (size_t i = 0; i < in.size(); ++i) mid[i] = (in[i] & 0x807FFFFFu) | ((107u + (in[i] >> 23) % 40u) << 23);
    const uint32_t reps = static_cast<uint32_t>(in.size() / 64);
    std::vector<float> sums(2 * reps);
    TreeSums64(src, reps, sums.data());
    TreeSums64(reinterpret_cast<const uint8_t*>(mid.data()), reps, sums.data() + reps);
    for (float& x : sums) if (x != x) x = __builtin_nanf("");
    uint64_t h = 1469598103934665603ull;
    h = Hash(h, e.data(), e.size() * 4);
    h = Hash(h, b.data(), b.size() * 2);
    h = Hash(h, wide.data(), wide.size() * 4);
    h = Hash(h, sums.data(), sums.size() * 4);
    std::printf("%zu values, hash %016llx\n", in.size(), static_cast<unsigned long long>(h));
    return 0;
}
"""


def _cpu_flags() -> set:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _isas() -> dict:
    """The ISA builds this CPU can run: the baseline always, AVX2 (with FMA: the contraction risk)
    and x86-64-v4 where the CPU has them."""
    flags = _cpu_flags()
    # The bf16 casts have a 64-byte-vector body (x86-64-v4's) and a loop (the other ISAs'), Exp a
    # four-vector body (AVX2's) and a loop (the others'): a baseline build with the bodies the
    # baseline does not take compares them on any x86-64 CPU.
    out = {"baseline": [], "baseline, the other ISAs' bodies": ["-DPYPTO_HOST_BF16_WIDE", "-DPYPTO_HOST_EXP4"]}
    if {"avx2", "fma"} <= flags:
        out["avx2+fma"] = ["-mavx2", "-mfma"]
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"} <= flags:
        out["x86-64-v4"] = ["-march=x86-64-v4"]
    return out


def test_vector_loops_give_the_same_bits_on_every_isa(tmp_path):
    isas = _isas()
    src = tmp_path / "isa.cpp"
    src.write_text(PROGRAM)
    hashes = {}
    for name, flags in isas.items():
        exe = tmp_path / f"isa_{len(hashes)}"
        subprocess.run([CXX, "-std=c++17", "-Wall", "-Werror", *RUNTIME_FLAGS, "-DPYPTO_HOST_NO_CLONES", *flags,
                        f"-I{HEADER_DIR}", str(src), "-o", str(exe)], check=True, capture_output=True, text=True)
        proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, check=True)
        hashes[name] = proc.stdout.strip()
    assert len(set(hashes.values())) == 1, hashes

