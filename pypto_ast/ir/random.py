"""``uniform`` and ``normal``: pypto's counter-based generator, defined here once for both
backends (docs/semantics.md "Random numbers").

The bits are Philox-4x32-10 as TensorFlow and pypto's op pages have it: key ``[lo, hi]`` of the
64-bit ``key[0]``, counter ``[0, 0, lo, hi]`` of ``counter[1]`` (pypto hardcodes the first word
to 0) plus the group number ``g``; group ``g``'s four words are elements ``4g .. 4g + 3`` of the
row-major result.  ``uniform`` keeps a word's low mantissa bits: ``(w & 0x7FFFFF) * 2^-23`` for
fp32, ``(w & 0x3FF) * 2^-10`` fp16, ``(w & 0x7F) * 2^-7`` bf16 (pypto's ``1.m - 1``: exact).
``normal`` is Box-Muller on the fp32 uniforms of the pairs ``(w0, w1)`` and ``(w2, w3)``:
elements ``4g .. 4g + 3`` are ``r sin t, r cos t`` of the first pair and of the second, with
``r = sqrt(-2 ln max(u0, 1e-7))`` and ``t = 2 pi u1``.  ln, sin and cos are the fixed fp32
compositions below, every step one IEEE fp32 operation (the A2 vector unit's Adds, Muls, Div,
Sqrt, Cast, Select), so the interpreter (torch, op by op) and the emitted kernel (emit/random.py)
give the same bits; fp16 and bf16 round the fp32 result once.
"""

from __future__ import annotations

import math

import torch

from .rng_spec import (COS_COEFFS, EPSILON, HALF_PI, LN2, LN_COEFFS, M32, MANTISSA, PHILOX_M, PHILOX_W, ROUNDS,
                       SIN_COEFFS)


def _mulhilo(a: torch.Tensor, m: int):
    """(low, high) 32-bit words of ``a * m`` for int64 lanes holding uint32 values."""
    ah, al = a >> 16, a & 0xFFFF
    pl, ph = al * m, ah * m  # < 2^48 each
    return (pl + (ph << 16)) & M32, (ph + (pl >> 16)) >> 16


def philox(key: int, counter: int, groups: int) -> torch.Tensor:
    """The four words of groups ``0 .. groups-1``: int64 ``[groups, 4]`` holding uint32 values."""
    g = torch.arange(groups, dtype=torch.int64)
    c = [g & M32, g >> 32, torch.full_like(g, counter & M32), torch.full_like(g, (counter >> 32) & M32)]
    k0, k1 = key & M32, (key >> 32) & M32
    for _ in range(ROUNDS):
        lo0, hi0 = _mulhilo(c[0], PHILOX_M[0])
        lo1, hi1 = _mulhilo(c[2], PHILOX_M[1])
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
        k0, k1 = (k0 + PHILOX_W[0]) & M32, (k1 + PHILOX_W[1]) & M32
    return torch.stack(c, dim=1)


def _f(v: float) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.float32)


def _poly(z: torch.Tensor, coeffs) -> torch.Tensor:
    """``c0 + z (c1 + z (... + z c[-1]))``, one fp32 rounding per step (Muls, Adds, Mul)."""
    p = z * _f(coeffs[-1])
    for c in reversed(coeffs[1:-1]):
        p = (p + _f(c)) * z
    return p + _f(coeffs[0])


def ln(u: torch.Tensor) -> torch.Tensor:
    """ln of positive normal fp32 ``u``: u = 2^e m by the bits, m folded into [sqrt(1/2), sqrt(2))."""
    bits = u.view(torch.int32).to(torch.int64)
    e = ((bits >> 23) - 127).to(torch.float32)
    m = ((bits & 0x7FFFFF) + 0x3F800000).to(torch.int32).view(torch.float32)
    big = m > _f(math.sqrt(2.0))
    m = torch.where(big, m * _f(0.5), m)
    e = torch.where(big, e + _f(1.0), e)
    s = (m + _f(-1.0)) / (m + _f(1.0))
    return e * _f(LN2) + _poly(s * s, LN_COEFFS) * s


def sincos_turn(k: torch.Tensor):
    """sin and cos of 2 pi k / 2^23 for int64 ``k`` in [0, 2^23): the quadrant from k's top two
    bits, y = (k mod 2^21) 2^-21 pi/2 in [0, pi/2) by Taylor polynomials."""
    b0, b1 = ((k >> 21) & 1).to(torch.float32), (k >> 22).to(torch.float32)
    y = (k & 0x1FFFFF).to(torch.float32) * _f(2.0 ** -21) * _f(HALF_PI)
    z = y * y
    sa, ca = _poly(z, SIN_COEFFS) * y, _poly(z, COS_COEFFS)
    odd = b0 > _f(0.5)
    s1, s0 = b1 * _f(-2.0) + _f(1.0), b0 * _f(-2.0) + _f(1.0)
    return torch.where(odd, ca, sa) * s1, torch.where(odd, sa, ca) * s1 * s0


def box_muller(w0: torch.Tensor, w1: torch.Tensor):
    """(r sin t, r cos t) of the words w0 (the radius) and w1 (the angle), fp32."""
    u = (w0 & 0x7FFFFF).to(torch.float32) * _f(2.0 ** -23)
    u = torch.maximum(u, _f(EPSILON))
    r = torch.sqrt((ln(u) * _f(-2.0)).double()).float()  # IEEE sqrt, correctly rounded
    s, c = sincos_turn(w1 & 0x7FFFFF)
    return r * s, r * c


def generate(kind: str, shape: tuple, dtype: str, key: int, counter: int) -> torch.Tensor:
    """The ``uniform`` or ``normal`` tensor of ``shape`` in ``dtype`` (fp32, fp16, bf16)."""
    n = math.prod(shape)
    w = philox(key, counter, -(-n // 4))
    if kind == "uniform":
        bits = MANTISSA[dtype]
        out = (w & ((1 << bits) - 1)).to(torch.float32) * _f(2.0 ** -bits)
    else:
        s01, c01 = box_muller(w[:, 0], w[:, 1])
        s23, c23 = box_muller(w[:, 2], w[:, 3])
        out = torch.stack([s01, c01, s23, c23], dim=1)
    torch_dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    return out.reshape(-1)[:n].to(torch_dtype).reshape(shape)
