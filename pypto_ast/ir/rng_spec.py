"""The constants and argument rules of pypto's ``uniform`` / ``normal`` generator (the
generator itself: ir/random.py; its kernel: emit/random.py).  No torch here: the front end
checks the arguments with it."""

from __future__ import annotations

import math

M32 = 0xFFFFFFFF
PHILOX_M = (0xD2511F53, 0xCD9E8D57)  # the round multipliers of words 0 and 2
PHILOX_W = (0x9E3779B9, 0xBB67AE85)  # the key's increments per round
ROUNDS = 10
MANTISSA = {"fp32": 23, "fp16": 10, "bf16": 7}  # the uniform's bits per dtype
EPSILON = 1e-7  # the smallest u0 ln sees (pypto's)
# ln m = 2 atanh(s), s = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2)): |s| <= 0.1716
LN_COEFFS = tuple(2.0 / (2 * k + 1) for k in range(6))  # s * (c0 + z (c1 + z (...))), z = s^2
LN2 = math.log(2.0)
# sin y and cos y on [0, pi/2): Taylor to y^13 and y^14 (errors below 1e-9)
SIN_COEFFS = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(7))
COS_COEFFS = tuple((-1) ** k / math.factorial(2 * k) for k in range(8))
HALF_PI = math.pi / 2


def check_args(key, counter, alg) -> str | None:
    """pypto's rules for the arguments (op pages pypto-uniform.md / pypto-normal.md), or None."""
    if not (isinstance(key, (list, tuple)) and len(key) == 1):
        return "key must be a list of one integer"
    if not (isinstance(counter, (list, tuple)) and len(counter) == 2):
        return "counter must be a list of two integers"
    if not (isinstance(alg, (list, tuple)) and len(alg) == 1 and alg[0] in (1, 3)):
        return "alg must be [1] (Philox) or [3] (auto_select: Philox)"
    if not all(isinstance(v, int) and 0 <= v < 2 ** 64 for v in (key[0], counter[1])):
        return "key and counter are unsigned 64-bit integers"
    return None
