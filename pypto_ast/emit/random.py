"""The ``uniform`` / ``normal`` kernel: pypto's Philox-4x32-10 on the A2 vector unit, the numbers
of ir/random.py bit for bit (docs/semantics.md "Random numbers").

A2 has no random-number API (nor a 32x32 -> 64-bit multiply), so the kernel composes it from
integer vector ops: the high word of ``a * M`` from four 16 x 16-bit products (``Muls`` on int32
lanes, wrapping) and logical ``ShiftRight``/``ShiftLeft`` on uint32 views; XOR as
``(a | b) & ~(a & b)`` on uint16 views (``And``/``Or``/``Not`` are 16-bit on A2).  One lane is
one counter (a group of four results); a chunk of ``G`` groups is made at a time, split over
cores.  The words land in UB in the order ``[w0 | w2 | w1 | w3]``, so ``normal``'s radius words
and angle words are contiguous halves, and one ``Gather`` puts each chunk's results in element
order.  ``uniform`` masks a word's low mantissa bits and scales them (exact); ``normal`` is the
fixed fp32 composition of ir/random.py, step for step.
"""

from __future__ import annotations

import math

from ..ir import rng_spec as spec
from .errors import unsupported

G = 128  # groups (counters) per chunk: 4G results
MAX_CORES = 40
CTYPE = {"fp32": "float", "fp16": "half", "bf16": "bfloat16_t"}
ES = {"fp32": 4, "fp16": 2, "bf16": 2}
# UB regions of 4G 32-bit lanes each
REGIONS = ("W", "O", "OFF", "AH", "AL", "P0", "P1", "P2", "P3", "T", "X", "HI0", "HI1", "LO0", "K", "XO", "XA",
           "A", "B", "S", "Z", "F")  # F last: Gather reads it by offsets, so its view must end with the buffer


def _f32(v: float) -> str:
    """A float literal that is exactly the fp32 value of ``v`` (as the interpreter rounds it)."""
    import struct

    x = struct.unpack("<f", struct.pack("<f", v))[0]
    return f"{x!r}f" if math.isfinite(x) else unsupported(f"constant {v}")


def _i32(v: int) -> str:
    v &= 0xFFFFFFFF
    return f"static_cast<int32_t>({v}u)" if v >= 2 ** 31 else f"{v}"


class _Code:
    """Lines of the kernel body with the region names as int32 / uint32 / uint16 / float views."""

    def __init__(self):
        self.L: list = []

    def __call__(self, line: str):
        self.L.append("        " + line)

    def mulhi(self, dst: str, a: str, m: int, n: int):
        """dst = high word of a * m (uint32 lanes) from 16-bit halves."""
        mh, ml = m >> 16, m & 0xFFFF
        w = self
        w(f"AscendC::ShiftRight(u{'AH'}, u{a}, 16u, {n});")
        w(f"AscendC::ShiftLeft(uAL, u{a}, 16u, {n});")
        w(f"AscendC::ShiftRight(uAL, uAL, 16u, {n});")
        w(f"AscendC::Muls(iP0, iAL, {ml}, {n});")
        w(f"AscendC::Muls(iP1, iAL, {mh}, {n});")
        w(f"AscendC::Muls(iP2, iAH, {ml}, {n});")
        w(f"AscendC::Muls(iP3, iAH, {mh}, {n});")
        w(f"AscendC::ShiftRight(uT, uP0, 16u, {n});")
        for p in ("P1", "P2"):  # the carry out of the low word: (p0 >> 16) + low halves of p1, p2
            w(f"AscendC::ShiftLeft(uX, u{p}, 16u, {n});")
            w(f"AscendC::ShiftRight(uX, uX, 16u, {n});")
            w(f"AscendC::Add(iT, iT, iX, {n});")
        w(f"AscendC::ShiftRight(uT, uT, 16u, {n});")
        w(f"AscendC::ShiftRight(uX, uP1, 16u, {n});")
        w(f"AscendC::Add(i{dst}, iP3, iX, {n});")
        w(f"AscendC::ShiftRight(uX, uP2, 16u, {n});")
        w(f"AscendC::Add(i{dst}, i{dst}, iX, {n});")
        w(f"AscendC::Add(i{dst}, i{dst}, iT, {n});")

    def xor(self, dst: str, a: str, b: str, n: int):
        """dst = a ^ b on 2n uint16 halves."""
        self(f"AscendC::Or(hXO, h{a}, h{b}, {2 * n});")
        self(f"AscendC::And(hXA, h{a}, h{b}, {2 * n});")
        self(f"AscendC::Not(hXA, hXA, {2 * n});")
        self(f"AscendC::And(h{dst}, hXO, hXA, {2 * n});")

    def low_bits(self, dst: str, src: str, bits: int, n: int):
        self(f"AscendC::ShiftLeft(u{dst}, u{src}, {32 - bits}u, {n});")
        self(f"AscendC::ShiftRight(u{dst}, u{dst}, {32 - bits}u, {n});")

    def poly(self, dst: str, z: str, coeffs, n: int):
        """dst = c0 + z (c1 + z (...)): Muls, then Adds and Mul per coefficient (ir/random.py _poly)."""
        self(f"AscendC::Muls(f{dst}, f{z}, {_f32(coeffs[-1])}, {n});")
        for c in reversed(coeffs[1:-1]):
            self(f"AscendC::Adds(f{dst}, f{dst}, {_f32(c)}, {n});")
            self(f"AscendC::Mul(f{dst}, f{dst}, f{z}, {n});")
        self(f"AscendC::Adds(f{dst}, f{dst}, {_f32(coeffs[0])}, {n});")


def _philox(w: _Code, key: int, counter: int):
    """The four words of the chunk's counters into W: [w0 | w2 | w1 | w3], G lanes each."""
    c = {0: "C0", 2: "C2", 1: "C1", 3: "C3"}
    w("AscendC::CreateVecIndex(iC0, static_cast<int32_t>(chunk * %du), %d);" % (G, G))
    w(f"AscendC::Duplicate(iC1, 0, {G});  // groups < 2^32: the counter's second word stays 0")
    w(f"AscendC::Duplicate(iC2, {_i32(counter)}, {G});")
    w(f"AscendC::Duplicate(iC3, {_i32(counter >> 32)}, {G});")
    w(f"uint32_t k0 = {key & spec.M32}u, k1 = {(key >> 32) & spec.M32}u;")
    w(f"for (int32_t round = 0; round < {spec.ROUNDS}; ++round) {{")
    body = _Code()
    body.mulhi("HI0", c[0], spec.PHILOX_M[0], G)
    body.mulhi("HI1", c[2], spec.PHILOX_M[1], G)
    body(f"AscendC::Muls(iLO0, iC0, {_i32(spec.PHILOX_M[0])}, {G});")
    body(f"AscendC::Duplicate(iK, static_cast<int32_t>(k0), {G});")
    body.xor("C0", "HI1", "C1", G)
    body.xor("C0", "C0", "K", G)
    body(f"AscendC::Muls(iC1, iC2, {_i32(spec.PHILOX_M[1])}, {G});")
    body(f"AscendC::Duplicate(iK, static_cast<int32_t>(k1), {G});")
    body.xor("C2", "HI0", "C3", G)
    body.xor("C2", "C2", "K", G)
    body(f"AscendC::Adds(iC3, iLO0, 0, {G});")
    body(f"k0 += {spec.PHILOX_W[0]}u;")
    body(f"k1 += {spec.PHILOX_W[1]}u;")
    w.L += ["    " + x for x in body.L] + ["        }"]


def _box_muller(w: _Code):
    """W's radius words (first half) and angle words (second half) -> F = [r sin t | r cos t]."""
    h = 2 * G
    # u = max(mantissa * 2^-23, eps); ln u by the bits (ir/random.py ln)
    w.low_bits("A", "W", 23, h)
    w(f"AscendC::Cast(fB, iA, AscendC::RoundMode::CAST_NONE, {h});")
    w(f"AscendC::Muls(fB, fB, {_f32(2.0 ** -23)}, {h});")
    w(f"AscendC::Maxs(fB, fB, {_f32(spec.EPSILON)}, {h});")
    w(f"AscendC::ShiftRight(uA, uB, 23u, {h});")
    w(f"AscendC::Adds(iA, iA, -127, {h});")
    w(f"AscendC::Cast(fS, iA, AscendC::RoundMode::CAST_NONE, {h});  // e")
    w.low_bits("Z", "B", 23, h)
    w(f"AscendC::Adds(iZ, iZ, {0x3F800000}, {h});  // m in [1, 2)")
    w(f"AscendC::CompareScalar(mask, fZ, {_f32(math.sqrt(2.0))}, AscendC::CMPMODE::GT, {h});")
    w(f"AscendC::Muls(fA, fZ, {_f32(0.5)}, {h});")
    w(f"AscendC::Select(fZ, mask, fA, fZ, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {h});")
    w(f"AscendC::Adds(fA, fS, {_f32(1.0)}, {h});")
    w(f"AscendC::Select(fS, mask, fA, fS, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {h});")
    w(f"AscendC::Adds(fA, fZ, {_f32(-1.0)}, {h});")
    w(f"AscendC::Adds(fB, fZ, {_f32(1.0)}, {h});")
    w(f"AscendC::Div(fA, fA, fB, {h});  // s = (m - 1) / (m + 1)")
    w(f"AscendC::Mul(fZ, fA, fA, {h});")
    w.poly("B", "Z", spec.LN_COEFFS, h)
    w(f"AscendC::Mul(fB, fB, fA, {h});")
    w(f"AscendC::Muls(fS, fS, {_f32(spec.LN2)}, {h});")
    w(f"AscendC::Add(fS, fS, fB, {h});  // ln u")
    w(f"AscendC::Muls(fS, fS, {_f32(-2.0)}, {h});")
    w(f"AscendC::Sqrt(fT, fS, {h});  // r")
    # the angle: k = mantissa of the word; quadrant bits 22, 21; y = (k mod 2^21) 2^-21 pi/2
    w(f"AscendC::ShiftLeft(uA, uW[{h}], 9u, {h});  // the mantissa k at the top")
    w(f"AscendC::ShiftRight(uB, uA, 31u, {h});")
    w(f"AscendC::Cast(fHI1, iB, AscendC::RoundMode::CAST_NONE, {h});  // b1: bit 22")
    w(f"AscendC::ShiftLeft(uB, uA, 1u, {h});")
    w(f"AscendC::ShiftRight(uB, uB, 31u, {h});")
    w(f"AscendC::Cast(fHI0, iB, AscendC::RoundMode::CAST_NONE, {h});  // b0: bit 21")
    w(f"AscendC::ShiftLeft(uA, uA, 2u, {h});")
    w(f"AscendC::ShiftRight(uA, uA, 11u, {h});  // k mod 2^21")
    w(f"AscendC::Cast(fA, iA, AscendC::RoundMode::CAST_NONE, {h});")
    w(f"AscendC::Muls(fA, fA, {_f32(2.0 ** -21)}, {h});")
    w(f"AscendC::Muls(fA, fA, {_f32(spec.HALF_PI)}, {h});  // y")
    w(f"AscendC::Mul(fZ, fA, fA, {h});")
    w.poly("B", "Z", spec.SIN_COEFFS, h)
    w(f"AscendC::Mul(fB, fB, fA, {h});  // sin y")
    w.poly("S", "Z", spec.COS_COEFFS, h)  # cos y
    w(f"AscendC::CompareScalar(mask, fHI0, {_f32(0.5)}, AscendC::CMPMODE::GT, {h});  // odd quadrant")
    w(f"AscendC::Muls(fHI1, fHI1, {_f32(-2.0)}, {h});")
    w(f"AscendC::Adds(fHI1, fHI1, {_f32(1.0)}, {h});  // s1")
    w(f"AscendC::Muls(fHI0, fHI0, {_f32(-2.0)}, {h});")
    w(f"AscendC::Adds(fHI0, fHI0, {_f32(1.0)}, {h});  // s0")
    w(f"AscendC::Select(fF, mask, fS, fB, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {h});")
    w(f"AscendC::Mul(fF, fF, fHI1, {h});  // sin t")
    w(f"AscendC::Select(fF[{h}], mask, fB, fS, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {h});")
    w(f"AscendC::Mul(fF[{h}], fF[{h}], fHI1, {h});")
    w(f"AscendC::Mul(fF[{h}], fF[{h}], fHI0, {h});  // cos t")
    w(f"AscendC::Mul(fF, fT, fF, {h});")
    w(f"AscendC::Mul(fF[{h}], fT, fF[{h}], {h});")


def emit_random_kernel(name: str, kind: str, dtype: str, numel: int, key: int, counter: int, label: str,
                       span=None) -> tuple[str, dict]:
    """Arguments ``(GM_ADDR dst, GM_ADDR tiling)``; tiling = int64 ``[off_dst, n_dst]``.  Writes
    the ``numel`` results of ``kind`` (``uniform`` / ``normal``) contiguously from ``off_dst``."""
    if dtype not in CTYPE:
        unsupported(f"'{kind}' of {dtype}", span)
    ct, es = CTYPE[dtype], ES[dtype]
    n4 = 4 * G
    chunks = -(-numel // n4)
    mask_bytes = 2 * G // 8
    ub = len(REGIONS) * n4 * 4 + max(mask_bytes, 32)
    L = [f"// Generated by pypto-ast from {label}: {kind} {dtype} x {numel}, Philox-4x32-10 (key {key}, "
         f"counter {counter}), {chunks} chunks of {n4}.",
         '#include "kernel_operator.h"', "",
         f'extern "C" __global__ __aicore__ void {name}(GM_ADDR dst, GM_ADDR tiling)', "{",
         "    AscendC::TPipe pipe;",
         "    AscendC::TBuf<AscendC::TPosition::VECCALC> buf, maskBuf;",
         f"    pipe.InitBuffer(buf, {len(REGIONS) * n4 * 4});",
         f"    pipe.InitBuffer(maskBuf, {max(mask_bytes, 32)});",
         "    AscendC::LocalTensor<int32_t> base = buf.Get<int32_t>();",
         "    AscendC::LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();"]
    for k, r in enumerate(REGIONS):
        L += [f"    AscendC::LocalTensor<int32_t> i{r} = base[{k * n4}];",
              f"    AscendC::LocalTensor<uint32_t> u{r} = i{r}.ReinterpretCast<uint32_t>();",
              f"    AscendC::LocalTensor<uint16_t> h{r} = i{r}.ReinterpretCast<uint16_t>();",
              f"    AscendC::LocalTensor<float> f{r} = i{r}.ReinterpretCast<float>();"]
    for j, word in enumerate(("C0", "C2", "C1", "C3")):  # the words' places in W
        L += [f"    AscendC::LocalTensor<int32_t> i{word} = iW[{j * G}];",
              f"    AscendC::LocalTensor<uint32_t> u{word} = i{word}.ReinterpretCast<uint32_t>();",
              f"    AscendC::LocalTensor<uint16_t> h{word} = i{word}.ReinterpretCast<uint16_t>();"]
    L += ["    AscendC::GlobalTensor<%s> gd;" % ct,
          "    const __gm__ int64_t* tl = (__gm__ int64_t*)tiling;",
          f"    gd.SetGlobalBuffer((__gm__ {ct}*)dst, static_cast<uint64_t>(tl[1]));",
          "    // element e of a chunk is word e % 4 of its group e / 4: W's places [0, 2G, G, 3G] + e / 4",
          f"    AscendC::CreateVecIndex(iOFF, 0, {n4});",
          f"    AscendC::ShiftRight(uA, uOFF, 2u, {n4});",
          f"    AscendC::ShiftLeft(uB, uOFF, 31u, {n4});",
          f"    AscendC::ShiftRight(uB, uB, 31u, {n4});",
          f"    AscendC::Muls(iB, iB, {2 * G}, {n4});",
          f"    AscendC::Add(iA, iA, iB, {n4});",
          f"    AscendC::ShiftLeft(uB, uOFF, 30u, {n4});",
          f"    AscendC::ShiftRight(uB, uB, 31u, {n4});",
          f"    AscendC::Muls(iB, iB, {G}, {n4});",
          f"    AscendC::Add(iA, iA, iB, {n4});",
          f"    AscendC::ShiftLeft(uOFF, uA, 2u, {n4});  // bytes",
          f"    for (uint32_t chunk = AscendC::GetBlockIdx(); chunk < {chunks}u; chunk += AscendC::GetBlockNum()) {{"]
    w = _Code()
    _philox(w, key, counter)
    if kind == "uniform":
        bits = spec.MANTISSA[dtype]
        w.low_bits("W", "W", bits, n4)
        w(f"AscendC::Cast(fF, iW, AscendC::RoundMode::CAST_NONE, {n4});")
        w(f"AscendC::Muls(fF, fF, {_f32(2.0 ** -bits)}, {n4});")
    else:
        _box_muller(w)
    w(f"AscendC::Gather(fO, fF, uOFF, 0, {n4});")
    out = "fO"
    if dtype != "fp32":
        L_cast = f"AscendC::LocalTensor<{ct}> o16 = iX.ReinterpretCast<{ct}>();"
        w(L_cast)
        w(f"AscendC::Cast(o16, fO, AscendC::RoundMode::CAST_RINT, {n4});")
        out = "o16"
    w(f"const uint32_t count = {numel}u - chunk * {n4}u < {n4}u ? {numel}u - chunk * {n4}u : {n4}u;")
    w("AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);")
    w("AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);")
    w(f"AscendC::DataCopyPad(gd[static_cast<uint64_t>(tl[0]) + chunk * {n4}u], {out}, "
      f"AscendC::DataCopyExtParams{{1, count * {es}u, 0, 0, 0}});")
    w("AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(0);  // the next chunk overwrites UB")
    w("AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(0);")
    L += w.L + ["    }", "}"]
    info = {"kernel": name, "kind": kind, "file": f"{name}.cpp", "num_blocks": min(chunks, MAX_CORES), "ub_bytes": ub}
    return "\n".join(L) + "\n", info


class RandomLaunch:
    """The launch of one ``uniform`` / ``normal`` kernel: its result region and its arguments."""

    def __init__(self, name: str, kind: str, region, key: int, counter: int, label: str, span):
        self.name, self.kind, self.region, self.key, self.counter = name, kind, region, key, counter
        self.label, self.span = label, span

    @property
    def stores(self) -> list:
        return [self.region]

    def launch(self, planner, scope: set, depth: int):
        g = self.region
        numel = math.prod(g.shape)
        planner._check_extents([g], self.span, (("elements", numel),))
        text, info = emit_random_kernel(self.name, self.kind, g.dtype, numel, self.key, self.counter, self.label,
                                        self.span)
        fields = [planner.cexpr(e, scope, self.span) for e in (g.offset, g.buf.numel)]
        planner._launch_fixed(self.name, text, info, [g], fields, self.label, scope, depth, self.span)
