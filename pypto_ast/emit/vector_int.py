"""Integer, bitwise and logical vector ops, composed from what the A2 vector unit has.

A2 (ascendc.md §6.2-6.4) offers And / Or / Not on 16-bit lanes, shifts by a scalar, integer
add / sub / mul / max / min (int16, int32), compares on half / float (int32: EQ only), Select on
half / float and Cast -- no integer division, no xor, no shift by a tensor of amounts, no compare
or select on the other integer types.  ``IntegerOps`` (a part of ``SegmentEmitter``) composes
pypto's integer family from those, so the emitted kernel computes on an NPU what it computes on
the host; docs/semantics.md ("Integers and bits") states the results and docs/design.md
("Integer ops on A2") why each composition is exact:

* bitwise ops on any integer width: And / Or / Not on a ``ReinterpretCast<uint16_t>()`` view;
  xor is ``(a | b) & ~(a & b)``;
* shifts by a tensor: the amount's four bits, each selecting ``x << 2^k`` (or ``>>``) by masks;
* integer division (``remainder``, ``floor_div``, ``ceil_div``) in float: int16 in one exact step,
  int32 with two quotient estimates and one correction; a zero divisor stops the kernel
  (``ascendc_assert`` on the valid elements);
* ``gcd``: torch's Euclid loop, a fixed 48 rounds of an exact truncating remainder;
* bool values live in UB as bit masks (Compare's output): logical ops are mask ops, and a bool
  tensor read from GM is turned into a mask (``MASK_OF_BYTES``).
"""

from __future__ import annotations

import math

from .. import ir
from .errors import unsupported

# element types beyond fp32 / fp16 / int32 / bool (vector.py's CTYPE and ES take them in)
INT_CTYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t", "uint32": "uint32_t"}
INT_SIZES = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "uint32": 4}
INT_RANGE = {"int8": (-2 ** 7, 2 ** 7 - 1), "uint8": (0, 2 ** 8 - 1), "int16": (-2 ** 15, 2 ** 15 - 1),
             "uint16": (0, 2 ** 16 - 1), "int32": (-2 ** 31, 2 ** 31 - 1), "uint32": (0, 2 ** 32 - 1)}
_SIZE = dict(INT_SIZES, int32=4, fp32=4, fp16=2, bool=1)

MASK_OF_BYTES = "mask_of_bytes"  # internal: a bool tile read from GM (one byte each) -> a bit mask
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
SHIFTS = ("bitwise_left_shift", "bitwise_right_shift")
DIVISION = ("remainder", "fmod", "floor_div", "ceil_div")
LOGICAL = ("logical_not", "logical_and", "signbit", "copysign", "isfinite")
INTEGER_OPS = BITWISE + SHIFTS + DIVISION + LOGICAL + ("gcd", MASK_OF_BYTES)
GCD_ROUNDS = 48  # Euclid on |values| < 2^31 takes at most 46 steps (consecutive Fibonacci numbers)


def int_literal(v, dt: str, span=None) -> str:
    """A C++ literal of integer type ``dt``; a value the type cannot hold is refused."""
    if float(v) != int(v):
        unsupported(f"non-integer scalar {v} on {dt}", span)
    v = int(v)
    lo, hi = INT_RANGE[dt]
    if not lo <= v <= hi:
        unsupported(f"the scalar {v} on {dt} (outside [{lo}, {hi}])", span)
    ct = INT_CTYPES.get(dt, "int32_t")
    text = f"{v + 1} - 1" if v == lo and lo < 0 else f"{v}{'u' if dt == 'uint32' else ''}"  # -2^31 is not a literal
    return f"static_cast<{ct}>({text})"


def _u16(ref: str, dt: str) -> str:
    """The 16-bit lane view And / Or / Not take (A2 has them on int16 / uint16 only)."""
    return ref if dt in ("int16", "uint16") else f"{ref}.ReinterpretCast<uint16_t>()"


def _f32(v: float) -> str:
    from .vector import lit  # vector.py imports this module: taken at call time

    return lit(v, "fp32")


def _select(dst, mask, a, b, n) -> str:
    """dst = mask ? a : b, a and b tensors."""
    return f"AscendC::Select({dst}, {mask}, {a}, {b}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});"


def _select_scalar(dst, mask, a, s, n) -> str:
    """dst = mask ? a : s, s a scalar literal."""
    return f"AscendC::Select({dst}, {mask}, {a}, {s}, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});"


class IntegerOps:
    """The integer family of ``SegmentEmitter`` (mixed in): scratch counts and emission."""

    # -- planning ------------------------------------------------------------------------
    def integer_scratch(self, op) -> int:
        """Scratch slots of one op of the family (the plan's ``_op_scratch``)."""
        return self._int_plan(op)[1]

    def integer_whole_rows(self, op) -> bool:
        """An integer division by a tensor checks each row's valid columns for a zero divisor:
        its kernel takes whole rows (no column tiles)."""
        return op.opcode in DIVISION and self._int_plan(op)[0] in ("int16_mod", "int32_div") and \
            isinstance(op.operands[1], ir.Value)

    def _int_plan(self, op) -> tuple:
        """(variant, scratch slots) of ``op``: which composition it takes, and its UB need."""
        code = op.opcode
        dt = self.s.dtype[op.results[0]]
        src = [self.s.dtype[x.name] for x in op.operands if isinstance(x, ir.Value)]
        sdt = src[0] if src else dt
        scalar = any(not isinstance(x, ir.Value) for x in op.operands)
        if code == MASK_OF_BYTES:
            return "mask", 1
        if code in ("bitwise_and", "bitwise_or"):
            return "bits", int(scalar)
        if code == "bitwise_xor":
            return "xor", 1 + int(scalar)
        if code == "bitwise_not":
            return "not", 0
        if code in SHIFTS:
            return ("shift_scalar", 0) if scalar else ("shift_tensor", 6)
        if code in ("remainder", "fmod") and dt in ("fp32", "fp16"):
            return "float_mod", 14 if dt == "fp16" else 11 + int(scalar)
        if code == "remainder" and dt == "int16":
            return "int16_mod", 4
        if code in ("remainder", "floor_div", "ceil_div") and dt == "int32":
            return "int32_div", 7 + int(scalar)
        if code == "gcd" and dt == "int32":
            return "gcd", 11
        if code == "copysign":
            return "copysign", 2
        if code == "signbit":
            return "signbit", 2
        if code == "isfinite":
            return "isfinite", 1
        if code == "logical_not":
            return "not_mask", 1
        if code == "logical_and":
            return "and_mask", 4
        unsupported(f"op '{code}' on dtype {sdt}", op.span)

    # -- emission ------------------------------------------------------------------------
    def integer_op(self, i: int, op, ops: list, res: str, dt: str, dst: str, n: int, cm: str) -> list:
        """The lines of one op of the family (``ops``: ("t", key) / ("s", number) per operand)."""
        variant, _ = self._int_plan(op)
        for x in ops:
            if x[0] == "t" and self.kind(x[1]) != self.kind(res):
                unsupported(f"'{op.opcode}' of a broadcast operand", op.span)
        if self.kind(res) == "R" and variant not in ("bits", "xor", "not", "shift_scalar"):
            unsupported(f"'{op.opcode}' on a per-row value", op.span)
        lines = getattr(self, "_emit_" + variant)(i, op, ops, res, dt, dst, n)
        lines[0] += cm
        return ["        " + x for x in lines]

    def _int_scratch_ref(self, i: int, j: int, dt: str) -> str:
        return self.scratch_ref(i, j, dt)

    def _int_lanes(self, key: str) -> int:
        """Elements of ``key``'s tile as laid out in UB (its rows times its row stride)."""
        rows = self.tr if self.kind(key) in ("F", "R") else 1
        return rows * self.stride(key, self.s.dtype[key])

    def _int_count(self, key: str, dt: str) -> int:
        """Count covering ``key``'s tile in elements of ``dt``, in 256-byte steps (§6.1, §6.4)."""
        es = _SIZE[dt]
        return -(-self._int_lanes(key) * es // 256) * 256 // es

    def _int_mask_count(self, key: str) -> int:
        """Count of a bit mask of ``key``'s tile (vector.py's count of a bool value)."""
        return self.count(key)

    def _int_tile_of(self, i, j: int, x: tuple, dt: str, n: int, lines: list) -> str:
        """The UB tensor of operand ``x``: its own, or a scratch slot ``j`` filled with the scalar."""
        if x[0] == "t":
            return self.ref(x[1])
        scr = self._int_scratch_ref(i, j, dt)
        lines.append(f"AscendC::Duplicate({scr}, {self._int_lit(x[1], dt)}, {n});")
        return scr

    @staticmethod
    def _int_lit(v, dt: str) -> str:
        from .vector import lit

        return lit(v, dt)

    # -- bool tiles read from GM ---------------------------------------------------------
    def _emit_mask(self, i, op, ops, res, dt, dst, n):
        m = self._int_count(res, "fp16")
        h = self._int_scratch_ref(i, 0, "fp16")
        return [f"AscendC::Cast({h}, {self.ref(ops[0][1])}, AscendC::RoundMode::CAST_NONE, {m});  // bytes -> half",
                f"AscendC::CompareScalar({dst}, {h}, {self._int_lit(0, 'fp16')}, AscendC::CMPMODE::NE, {m});  // != 0"]

    # -- bitwise -------------------------------------------------------------------------
    def _int_bit_count(self, res: str, dt: str, n: int) -> int:
        return n // 16 if dt == "bool" else n * _SIZE[dt] // 2

    def _int_bit_scalar(self, i, j, v, dt: str, count16: int, lines: list) -> str:
        """A scalar as a tile of 16-bit lanes (1-byte types: the byte twice; A2 has no 1-byte Duplicate)."""
        scr = self._int_scratch_ref(i, j, dt)
        if _SIZE[dt] == 1:
            int_literal(v, dt, None)
            lines.append(f"AscendC::Duplicate({_u16(scr, dt)}, static_cast<uint16_t>({(int(v) & 0xFF) * 0x101}), {count16});")
        else:
            lines.append(f"AscendC::Duplicate({scr}, {self._int_lit(v, dt)}, {count16 * 2 // _SIZE[dt]});")
        return scr

    def _int_bit_operands(self, i, op, ops, dt, count16, lines):
        x = self.ref(ops[0][1]) if ops[0][0] == "t" else None
        if x is None:
            unsupported(f"'{op.opcode}' of a scalar and a tensor (the scalar first)", op.span)
        y = self.ref(ops[1][1]) if ops[1][0] == "t" else self._int_bit_scalar(i, 0, ops[1][1], dt, count16, lines)
        return x, y

    def _emit_bits(self, i, op, ops, res, dt, dst, n):
        c = self._int_bit_count(res, dt, n)
        lines: list = []
        x, y = self._int_bit_operands(i, op, ops, dt, c, lines)
        fn = "And" if op.opcode == "bitwise_and" else "Or"
        return lines + [f"AscendC::{fn}({_u16(dst, dt)}, {_u16(x, dt)}, {_u16(y, dt)}, {c});"]

    def _emit_xor(self, i, op, ops, res, dt, dst, n):
        c = self._int_bit_count(res, dt, n)
        lines: list = []
        x, y = self._int_bit_operands(i, op, ops, dt, c, lines)
        t = _u16(self._int_scratch_ref(i, len(lines), dt), dt)
        x, y, d = _u16(x, dt), _u16(y, dt), _u16(dst, dt)
        return lines + [f"AscendC::And({t}, {x}, {y}, {c});  // a ^ b = (a | b) & ~(a & b)",
                        f"AscendC::Not({t}, {t}, {c});", f"AscendC::Or({d}, {x}, {y}, {c});",
                        f"AscendC::And({d}, {d}, {t}, {c});"]

    def _emit_not(self, i, op, ops, res, dt, dst, n):
        c = self._int_bit_count(res, dt, n)
        return [f"AscendC::Not({_u16(dst, dt)}, {_u16(self.ref(ops[0][1]), dt)}, {c});"]

    # -- shifts (int16: the op pages' A2 dtype) --------------------------------------------
    def _int_shift_dtype(self, op, dt):
        if dt != "int16":
            unsupported(f"'{op.opcode}' on dtype {dt}", op.span)

    def _emit_shift_scalar(self, i, op, ops, res, dt, dst, n):
        """x << k, x >> k for a known k (torch: a left shift by k outside [0, 15] is 0, a right
        shift fills with the sign)."""
        self._int_shift_dtype(op, dt)
        if ops[0][0] != "t":
            unsupported(f"'{op.opcode}' of two scalars", op.span)
        k, x = int(ops[1][1]), self.ref(ops[0][1])
        if op.opcode == "bitwise_left_shift":
            if not 0 <= k <= 15:
                return [f"AscendC::Duplicate({dst}, {self._int_lit(0, dt)}, {n});  // shifted out"]
            return [f"AscendC::ShiftLeft({dst}, {x}, {self._int_lit(k, dt)}, {n});"]
        return [f"AscendC::ShiftRight({dst}, {x}, {self._int_lit(k if 0 <= k <= 15 else 15, dt)}, {n});"]

    def _emit_shift_tensor(self, i, op, ops, res, dt, dst, n):
        """x << b, x >> b per element: A2 shifts by a scalar only, so each bit k of the amount
        selects x << 2^k (>> 2^k) through a mask of all ones; an amount outside [0, 15] gives 0
        (left) or 15 (right: the sign), as torch."""
        self._int_shift_dtype(op, dt)
        if ops[1][0] != "t":
            unsupported(f"'{op.opcode}' with a scalar amount", op.span)
        left = op.opcode == "bitwise_left_shift"
        x = self.ref(ops[0][1]) if ops[0][0] == "t" else None
        if x is None:
            unsupported(f"'{op.opcode}' of a scalar", op.span)
        b = self.ref(ops[1][1])
        c, inv, s, t, u, acc = (self._int_scratch_ref(i, j, dt) for j in range(6))
        L = [f"AscendC::Duplicate({c}, {self._int_lit(-16, dt)}, {n});  // shift by a tensor: bits of the amount",
             f"AscendC::And({inv}, {b}, {c}, {n});", f"AscendC::Muls({t}, {inv}, {self._int_lit(-1, dt)}, {n});",
             f"AscendC::Or({inv}, {inv}, {t}, {n});",
             f"AscendC::ShiftRight({inv}, {inv}, {self._int_lit(15, dt)}, {n});  // -1 where the amount is outside [0, 15]"]
        if not left:
            L.append(f"AscendC::Or({s}, {b}, {inv}, {n});  // ... which shifts by 15")
        else:
            s = b
        L.append(f"AscendC::Duplicate({c}, {self._int_lit(1, dt)}, {n});")
        fn = "ShiftLeft" if left else "ShiftRight"
        src = x
        for k in range(4):
            last = k == 3 and not left
            L += ([f"AscendC::ShiftRight({t}, {s}, {self._int_lit(k, dt)}, {n});"] if k else []) + [
                f"AscendC::And({t}, {t if k else s}, {c}, {n});",
                f"AscendC::Muls({t}, {t}, {self._int_lit(-1, dt)}, {n});  // all ones where bit {k} is set",
                f"AscendC::{fn}({u}, {src}, {self._int_lit(1 << k, dt)}, {n});",
                f"AscendC::And({u}, {u}, {t}, {n});", f"AscendC::Not({t}, {t}, {n});",
                f"AscendC::And({acc}, {src}, {t}, {n});",
                f"AscendC::Or({dst if last else acc}, {acc}, {u}, {n});"]
            src = acc
        if left:
            L += [f"AscendC::Not({inv}, {inv}, {n});", f"AscendC::And({dst}, {acc}, {inv}, {n});  // out of range: 0"]
        return L

    # -- division ------------------------------------------------------------------------
    def _int_valid_rows(self, key: str) -> str:
        """C++ count of the rows of ``key`` that hold data in this tile (its loads' valid rows)."""
        for ld in self.s.loads:
            if ld.key == key:
                return f"PyptoRows(vr{ld.field}, r0, nr)" if ld.kind in ("F", "R") else "1u"
        for op in self.s.ops:
            if op.results[0] == key:
                parts = [self._int_valid_rows(x.name) for x in op.operands if isinstance(x, ir.Value)
                         and self.kind(x.name) in ("F", "R")]
                e = "nr"
                for p in dict.fromkeys(parts):
                    e = p if e == "nr" else f"PyptoMin({e}, {p})"
                return e
        return "nr"

    def _int_check_nonzero(self, i, op, key: str, yf: str, t: str, u: str, m: int) -> list:
        """Stop the kernel when a valid element of the divisor ``key`` (as float in ``yf``) is 0:
        pypto's integer division by 0 is chip-defined, torch's an error (docs/semantics.md)."""
        rows, cols = self._int_valid_rows(key), self.vc[key]
        where = f"line {op.span.line}, col {op.span.col + 1}: " if op.span is not None else ""
        stride = self.cpad if self.kind(key) in ("F", "C") else 8
        L = [f"AscendC::Abs({t}, {yf}, {m});",
             f"if ({cols} > 0) {{",
             f"    for (uint32_t r = 0; r < {rows}; ++r) AscendC::ReduceMin({u}[r * 8], {t}[r * {stride}], "
             f"work.Get<float>(), {cols});",
             "}", "AscendC::SetFlag<AscendC::HardEvent::V_S>(0);", "AscendC::WaitFlag<AscendC::HardEvent::V_S>(0);",
             f"for (uint32_t r = 0; {cols} > 0 && r < {rows}; ++r) {{",
             f'    ascendc_assert({u}.GetValue(r * 8) != 0.0f, "{where}pypto.{op.opcode}: integer division by zero");',
             "}", "AscendC::SetFlag<AscendC::HardEvent::S_V>(0);", "AscendC::WaitFlag<AscendC::HardEvent::S_V>(0);"]
        return L

    def _int_check_divisor(self, op, ops):
        if ops[0][0] != "t":
            unsupported(f"'{op.opcode}' of two scalars", op.span)
        if ops[1][0] == "s" and float(ops[1][1]) == 0.0 and self.s.dtype[op.results[0]] not in ("fp32", "fp16"):
            unsupported(f"'{op.opcode}' by the scalar 0 (an integer division by zero)", op.span)

    def _emit_float_mod(self, i, op, ops, res, dt, dst, n):
        """fmod(x, y) = x - q y with q = trunc(fl(x / y)), q y taken exactly as hi + lo (Dekker's
        product of q and y split in 12-bit halves by masking their low significand bits), so
        r = (x - hi) - lo is exact while |q| < 2^24 (x - hi by Sterbenz; the exact r fits).  Then the
        IEEE / torch rules: a quotient rounded up past an integer leaves r of the other sign than
        x (r += sign(x) |y|), a zero has the sign of x, |y| = inf gives x, |x| = inf NaN;
        remainder adds y where r != 0 and r, y differ in sign (torch)."""
        self._int_check_divisor(op, ops)
        fp16 = dt == "fp16"
        m = self._int_count(res, "fp32")
        L: list = []
        r, t, k, mask, q, qh, ql, yh, yl, lo = (self._int_scratch_ref(i, j, "bool" if j == 3 else "fp32")
                                                for j in range(10))
        mk = self._int_scratch_ref(i, 10, "int32")
        if fp16:  # widened: every fp16 op computes in fp32 and rounds once
            x, y, out = (self._int_scratch_ref(i, j, "fp32") for j in range(11, 14))
            L.append(f"AscendC::Cast({x}, {self.ref(ops[0][1])}, AscendC::RoundMode::CAST_NONE, {m});  // in fp32")
            if ops[1][0] == "t":
                L.append(f"AscendC::Cast({y}, {self.ref(ops[1][1])}, AscendC::RoundMode::CAST_NONE, {m});")
            else:
                L.append(f"AscendC::Duplicate({y}, {_f32(self._int_in_fp16(ops[1][1]))}, {m});")
        else:
            x = self.ref(ops[0][1])
            y = self._int_tile_of(i, 11, ops[1], "fp32", m, L)
            out = dst
        hi, c16 = k, 2 * m
        L += [f"AscendC::Div({q}, {x}, {y}, {m});", f"AscendC::Cast({q}, {q}, AscendC::RoundMode::CAST_TRUNC, {m});",
              f"AscendC::Duplicate({mk}, {self._int_lit(-4096, 'int32')}, {m});  // the high 12 significand bits",
              f"AscendC::And({_u16(qh, 'fp32')}, {_u16(q, 'fp32')}, {_u16(mk, 'int32')}, {c16});",
              f"AscendC::Sub({ql}, {q}, {qh}, {m});",
              f"AscendC::And({_u16(yh, 'fp32')}, {_u16(y, 'fp32')}, {_u16(mk, 'int32')}, {c16});",
              f"AscendC::Sub({yl}, {y}, {yh}, {m});",
              f"AscendC::Mul({hi}, {q}, {y}, {m});  // q y = hi + lo (Dekker)",
              f"AscendC::Mul({lo}, {qh}, {yh}, {m});", f"AscendC::Sub({lo}, {lo}, {hi}, {m});",
              f"AscendC::Mul({t}, {qh}, {yl}, {m});", f"AscendC::Add({lo}, {lo}, {t}, {m});",
              f"AscendC::Mul({t}, {ql}, {yh}, {m});", f"AscendC::Add({lo}, {lo}, {t}, {m});",
              f"AscendC::Mul({t}, {ql}, {yl}, {m});", f"AscendC::Add({lo}, {lo}, {t}, {m});",
              f"AscendC::Sub({r}, {x}, {hi}, {m});", f"AscendC::Sub({r}, {r}, {lo}, {m});  // x - q y, exact"]
        one, zero, inf = _f32(1.0), _f32(0.0), _f32(math.inf)
        L += [f"AscendC::Duplicate({k}, {one}, {m});",
              f"AscendC::CompareScalar({mask}, {x}, {zero}, AscendC::CMPMODE::LT, {m});",
              f"AscendC::Muls({t}, {k}, {_f32(-1.0)}, {m});", _select(k, mask, t, k, m) + "  // sign(x) as +-1",
              f"AscendC::Abs({t}, {y}, {m});", f"AscendC::Mul({t}, {t}, {k}, {m});",
              f"AscendC::Mul({k}, {r}, {k}, {m});",
              f"AscendC::CompareScalar({mask}, {k}, {zero}, AscendC::CMPMODE::LT, {m});  // r against the sign of x",
              _select_scalar(t, mask, t, zero, m), f"AscendC::Add({r}, {r}, {t}, {m});",
              f"AscendC::Abs({t}, {y}, {m});",
              f"AscendC::CompareScalar({mask}, {t}, {inf}, AscendC::CMPMODE::EQ, {m});",
              _select(r, mask, x, r, m) + "  // |y| = inf: x",
              f"AscendC::Abs({t}, {x}, {m});",
              f"AscendC::CompareScalar({mask}, {t}, {inf}, AscendC::CMPMODE::NE, {m});",
              _select_scalar(r, mask, r, _f32(math.nan), m) + "  // |x| = inf: NaN",
              f"AscendC::CompareScalar({mask}, {r}, {zero}, AscendC::CMPMODE::EQ, {m});",
              f"AscendC::Muls({t}, {x}, {zero}, {m});"]
        if op.opcode == "fmod":
            L.append(_select(out, mask, t, r, m) + "  // a zero has the sign of x")
        else:
            L += [_select(r, mask, t, r, m) + "  // a zero has the sign of x",
                  f"AscendC::Duplicate({k}, {one}, {m});",
                  f"AscendC::CompareScalar({mask}, {y}, {zero}, AscendC::CMPMODE::LT, {m});",
                  f"AscendC::Muls({t}, {k}, {_f32(-1.0)}, {m});", _select(k, mask, t, k, m),
                  f"AscendC::Mul({k}, {r}, {k}, {m});",
                  f"AscendC::CompareScalar({mask}, {k}, {zero}, AscendC::CMPMODE::LT, {m});  // r and y: other signs",
                  f"AscendC::Add({t}, {r}, {y}, {m});", _select(out, mask, t, r, m) + "  // remainder: + y"]
        if fp16:
            L.append(f"AscendC::Cast({dst}, {out}, AscendC::RoundMode::CAST_RINT, {m});  // rounded to fp16 once")
        return L

    @staticmethod
    def _int_in_fp16(v) -> float:
        from .vector import _in_dtype

        return _in_dtype(v, "fp16")

    def _emit_int16_mod(self, i, op, ops, res, dt, dst, n):
        """int16 remainder in float, exact: |x|, |y| <= 2^15, so x / y is never within its rounding
        error (2^-9 / |y|) of an integer it is not (1 / |y| away), floor(fl(x / y)) is the floor
        of x / y, and x - q y is exact (below 2^17)."""
        self._int_check_divisor(op, ops)
        m = self._int_count(res, "fp32")
        xf, yf, t, u = (self._int_scratch_ref(i, j, "fp32") for j in range(4))
        L = [f"AscendC::Cast({xf}, {self.ref(ops[0][1])}, AscendC::RoundMode::CAST_NONE, {m});  // exact in float"]
        if ops[1][0] == "t":
            L.append(f"AscendC::Cast({yf}, {self.ref(ops[1][1])}, AscendC::RoundMode::CAST_NONE, {m});")
            L += self._int_check_nonzero(i, op, ops[1][1], yf, t, u, m)
        else:
            int_literal(ops[1][1], dt, op.span)
            L.append(f"AscendC::Duplicate({yf}, {_f32(int(ops[1][1]))}, {m});")
        return L + [f"AscendC::Div({t}, {xf}, {yf}, {m});",
                    f"AscendC::Cast({t}, {t}, AscendC::RoundMode::CAST_FLOOR, {m});",
                    f"AscendC::Mul({t}, {t}, {yf}, {m});", f"AscendC::Sub({t}, {xf}, {t}, {m});  // x - floor(x / y) * y",
                    f"AscendC::Cast({dst}, {t}, AscendC::RoundMode::CAST_RINT, {m});"]

    def _int_trunc_step(self, q: str, r: str, p: str, y: str, bf: str, t: str, n: int, first: str = None) -> list:
        """One quotient estimate of the int32 division r / y: q = trunc(fl(r) / fl(y)), r -= q y."""
        return [f"AscendC::Cast({t}, {first or r}, AscendC::RoundMode::CAST_RINT, {n});",
                f"AscendC::Div({t}, {t}, {bf}, {n});", f"AscendC::Cast({t}, {t}, AscendC::RoundMode::CAST_TRUNC, {n});",
                f"AscendC::Cast({q}, {t}, AscendC::RoundMode::CAST_TRUNC, {n});",
                f"AscendC::Mul({p}, {q}, {y}, {n});", f"AscendC::Sub({r}, {first or r}, {p}, {n});"]

    def _emit_int32_div(self, i, op, ops, res, dt, dst, n):
        """int32 floor division and its remainder (ceil_div: ceiling), exact for every int32: the
        first quotient estimate in float is off by at most 3 * 2^-24 |x / y| + 1, which leaves
        |r| <= 384 + |y|; the second leaves |r| < |y| (checked against torch on 9M pairs and every
        extreme); the result is then one step away where r != 0 and r, y have opposite signs
        (ceil_div: the same sign), told by the sign of r * y in float (integers: no underflow).
        Products wrap as torch's do (INT_MIN // -1 is INT_MIN)."""
        self._int_check_divisor(op, ops)
        bf, t, q, p, r, mask, one = (self._int_scratch_ref(i, j, ("fp32", "fp32", "int32", "int32", "int32", "bool", "fp32")[j])
                                     for j in range(7))
        x = self.ref(ops[0][1])
        L: list = []
        y = self._int_tile_of(i, 7, ops[1], "int32", n, L)
        L.append(f"AscendC::Cast({bf}, {y}, AscendC::RoundMode::CAST_RINT, {n});")
        if ops[1][0] == "t":
            L += self._int_check_nonzero(i, op, ops[1][1], bf, t, self._int_scratch_ref(i, 6, "fp32"), n)
        q1 = self._int_scratch_ref(i, 3, "int32")
        L += self._int_trunc_step(q, r, p, y, bf, t, n, first=x)
        L += self._int_trunc_step(q1, r, p, y, bf, t, n)[:4]
        if op.opcode != "remainder":
            L.append(f"AscendC::Add({q}, {q}, {q1}, {n});")
        ceil = op.opcode == "ceil_div"
        L += [f"AscendC::Mul({p}, {q1}, {y}, {n});", f"AscendC::Sub({r}, {r}, {p}, {n});  // |r| < |y| now",
              f"AscendC::Cast({t}, {r}, AscendC::RoundMode::CAST_RINT, {n});", f"AscendC::Mul({t}, {t}, {bf}, {n});",
              f"AscendC::CompareScalar({mask}, {t}, {_f32(0.0)}, AscendC::CMPMODE::{'GT' if ceil else 'LT'}, {n});",
              f"AscendC::Duplicate({one}, {_f32(1.0)}, {n});", _select_scalar(t, mask, one, _f32(0.0), n),
              f"AscendC::Cast({p}, {t}, AscendC::RoundMode::CAST_RINT, {n});  // 1: one step to the "
              + ("ceiling" if ceil else "floor")]
        if op.opcode == "remainder":
            L += [f"AscendC::Mul({p}, {p}, {y}, {n});", f"AscendC::Add({dst}, {r}, {p}, {n});"]
        else:
            L.append(f"AscendC::{'Add' if ceil else 'Sub'}({dst}, {q}, {p}, {n});")
        return L

    def _emit_gcd(self, i, op, ops, res, dt, dst, n):
        """torch's gcd: a, b = |a|, |b| (wrapping: |INT_MIN| is INT_MIN), then while a != 0:
        a, b = b % a, a (C's truncating %), the result b -- GCD_ROUNDS rounds on every lane, a lane
        whose a is 0 keeping its values.  The % is the exact int32 division of ``_int_int32_div``
        with the remainder moved to the sign of the dividend."""
        if ops[0][0] != "t":
            unsupported("'gcd' of two scalars", op.span)
        a_, b_, d, r, nz, w = (self._int_scratch_ref(i, j, "int32") for j in range(6))
        t, df, t2 = (self._int_scratch_ref(i, j, "fp32") for j in range(6, 9))
        mask, one = self._int_scratch_ref(i, 9, "bool"), self._int_scratch_ref(i, 10, "fp32")
        m1 = self._int_lit(-1, "int32")
        L = [f"AscendC::Muls({w}, {self.ref(ops[0][1])}, {m1}, {n});", f"AscendC::Max({a_}, {self.ref(ops[0][1])}, {w}, {n});"]
        if ops[1][0] == "t":
            L += [f"AscendC::Muls({w}, {self.ref(ops[1][1])}, {m1}, {n});", f"AscendC::Max({b_}, {self.ref(ops[1][1])}, {w}, {n});"]
        else:
            v = int(ops[1][1])
            int_literal(v, "int32", op.span)
            L.append(f"AscendC::Duplicate({b_}, {self._int_lit(-v if v != -2 ** 31 and v < 0 else v, 'int32')}, {n});")
        z = _f32(0.0)
        body = [f"AscendC::CompareScalar({mask}, {a_}, {self._int_lit(0, 'int32')}, AscendC::CMPMODE::EQ, {n});",
                _select_scalar(t, mask, one, z, n), f"AscendC::Cast({nz}, {t}, AscendC::RoundMode::CAST_RINT, {n});",
                f"AscendC::Add({d}, {a_}, {nz}, {n});  // the divisor: a, 1 where a = 0",
                f"AscendC::Muls({nz}, {nz}, {m1}, {n});", f"AscendC::Adds({nz}, {nz}, {self._int_lit(1, 'int32')}, {n});",
                f"AscendC::Cast({df}, {d}, AscendC::RoundMode::CAST_RINT, {n});"]
        body += self._int_trunc_step(r, r, w, d, df, t, n, first=b_)[:4]
        body += [f"AscendC::Mul({w}, {r}, {d}, {n});", f"AscendC::Sub({r}, {b_}, {w}, {n});"]
        body += self._int_trunc_step(w, r, w, d, df, t, n)
        body += [f"AscendC::Cast({t}, {r}, AscendC::RoundMode::CAST_RINT, {n});  // r to the sign of b (C's %)",
                 f"AscendC::Cast({t2}, {b_}, AscendC::RoundMode::CAST_RINT, {n});", f"AscendC::Mul({t2}, {t}, {t2}, {n});",
                 f"AscendC::CompareScalar({mask}, {t2}, {z}, AscendC::CMPMODE::LT, {n});", _select_scalar(t2, mask, one, z, n),
                 f"AscendC::Mul({t}, {t}, {df}, {n});", f"AscendC::CompareScalar({mask}, {t}, {z}, AscendC::CMPMODE::GT, {n});",
                 f"AscendC::Muls({t}, {t2}, {_f32(-1.0)}, {n});", _select(t2, mask, t, t2, n),
                 f"AscendC::Cast({w}, {t2}, AscendC::RoundMode::CAST_RINT, {n});", f"AscendC::Mul({w}, {w}, {d}, {n});",
                 f"AscendC::Add({r}, {r}, {w}, {n});",
                 f"AscendC::Sub({w}, {a_}, {b_}, {n});  // b = a, a = r where a != 0",
                 f"AscendC::Mul({w}, {w}, {nz}, {n});", f"AscendC::Add({b_}, {b_}, {w}, {n});",
                 f"AscendC::Mul({a_}, {r}, {nz}, {n});"]
        L += [f"AscendC::Duplicate({one}, {_f32(1.0)}, {n});",
              f"for (int32_t round = 0; round < {GCD_ROUNDS}; ++round) {{  // Euclid's steps, on every lane"]
        L += ["    " + x for x in body] + ["}", f"AscendC::DataCopy({dst}, {b_}, {n});"]
        return L

    # -- signs and logic -----------------------------------------------------------------
    def _emit_copysign(self, i, op, ops, res, dt, dst, n):
        """|x| with the sign bit of y (torch: bits, so copysign(x, -0.0) and NaN signs count)."""
        if dt not in ("fp32", "fp16"):
            unsupported(f"'copysign' on dtype {dt}", op.span)
        it = "int32" if dt == "fp32" else "uint16"  # a lane of the masks' Duplicate
        c, t = self._int_scratch_ref(i, 0, it), self._int_scratch_ref(i, 1, it)
        c16 = n * _SIZE[dt] // 2
        x, d = _u16(self.ref(ops[0][1]), dt), _u16(dst, dt)
        cu, tu = _u16(c, it), _u16(t, it)
        low, sign = (2 ** 31 - 1, -2 ** 31) if dt == "fp32" else (2 ** 15 - 1, 2 ** 15)
        L = [f"AscendC::Duplicate({c}, {self._int_lit(low, it)}, {n});  // copysign: the bits of |x|",
             f"AscendC::And({tu}, {x}, {cu}, {c16});"]
        if ops[1][0] == "s":
            if math.copysign(1.0, float(ops[1][1])) > 0:
                return L + [f"AscendC::Or({d}, {tu}, {tu}, {c16});"]
            return L + [f"AscendC::Duplicate({c}, {self._int_lit(sign, it)}, {n});", f"AscendC::Or({d}, {tu}, {cu}, {c16});"]
        return L + [f"AscendC::Duplicate({c}, {self._int_lit(sign, it)}, {n});  // the sign bit of y",
                    f"AscendC::And({cu}, {_u16(self.ref(ops[1][1]), dt)}, {cu}, {c16});",
                    f"AscendC::Or({d}, {tu}, {cu}, {c16});"]

    def _int_as_half(self, i, j: int, key: str, lines: list) -> str:
        """A 1- or 2-byte integer tile as half (the compares' type; exact for the zero / sign tests)."""
        sdt = self.s.dtype[key]
        h = self._int_scratch_ref(i, j, "fp16")
        x = self.ref(key)
        if sdt == "uint16":
            x = f"{x}.ReinterpretCast<int16_t>()"
        lines.append(f"AscendC::Cast({h}, {x}, AscendC::RoundMode::CAST_NONE, {self._int_count(key, 'fp16')});")
        return h

    def _int_truth(self, i, j: int, key: str, want_zero: bool, mask: str, lines: list) -> str:
        """``mask`` = (``key`` == 0) when ``want_zero``, else (``key`` != 0): C's truth of any dtype."""
        sdt = self.s.dtype[key]
        mode = "EQ" if want_zero else "NE"
        if sdt == "bool":
            if want_zero:
                lines.append(f"AscendC::Not({_u16(mask, 'bool')}, {_u16(self.ref(key), 'bool')}, {self._int_mask_count(key) // 16});")
                return mask
            return self.ref(key)
        if sdt in ("fp32", "fp16"):
            x, cnt, zero = self.ref(key), self.count(key), self._int_lit(0, sdt)
        elif sdt in ("int32", "uint32"):  # int32 compares: EQ only
            x = self.ref(key) if sdt == "int32" else f"{self.ref(key)}.ReinterpretCast<int32_t>()"
            lines.append(f"AscendC::CompareScalar({mask}, {x}, {self._int_lit(0, 'int32')}, AscendC::CMPMODE::EQ, "
                         f"{self.count(key)});")
            if not want_zero:
                lines.append(f"AscendC::Not({_u16(mask, 'bool')}, {_u16(mask, 'bool')}, {self._int_mask_count(key) // 16});")
            return mask
        else:
            x, cnt, zero = self._int_as_half(i, j, key, lines), self._int_count(key, "fp16"), self._int_lit(0, "fp16")
        lines.append(f"AscendC::CompareScalar({mask}, {x}, {zero}, AscendC::CMPMODE::{mode}, {cnt});")
        return mask

    def _emit_not_mask(self, i, op, ops, res, dt, dst, n):
        L: list = []
        self._int_truth(i, 0, ops[0][1], True, dst, L)
        L[0] += "  // logical_not: x == 0"
        return L

    def _emit_and_mask(self, i, op, ops, res, dt, dst, n):
        """logical_and: each operand's truth as a mask (any dtype, pypto allows mixing), then And."""
        L: list = []
        masks = []
        for j, x in enumerate(ops):
            if x[0] == "s":
                if float(x[1]) == 0.0:
                    return [f"AscendC::Duplicate({_u16(dst, 'bool')}, static_cast<uint16_t>(0), {n // 16});  // and 0"]
                continue
            masks.append(self._int_truth(i, j, x[1], False, self._int_scratch_ref(i, 2 + j, "bool"), L))
        if len(masks) == 1:
            return L + [f"AscendC::Or({_u16(dst, 'bool')}, {_u16(masks[0], 'bool')}, {_u16(masks[0], 'bool')}, {n // 16});"]
        return L + [f"AscendC::And({_u16(dst, 'bool')}, {_u16(masks[0], 'bool')}, {_u16(masks[1], 'bool')}, {n // 16});"]

    def _emit_isfinite(self, i, op, ops, res, dt, dst, n):
        """isfinite: ``x - x`` is +0 exactly when x is finite (inf - inf and NaN give NaN), so one
        Sub and a compare with 0 decide it in the value's own type; integers are always finite."""
        key = ops[0][1]
        sdt = self.s.dtype[key]
        if sdt in ("fp32", "fp16"):
            x, t, c = self.ref(key), self._int_scratch_ref(i, 0, sdt), self.count(key)
            return [f"AscendC::Sub({t}, {x}, {x}, {c});  // isfinite: x - x == 0",
                    f"AscendC::CompareScalar({dst}, {t}, {self._int_lit(0, sdt)}, AscendC::CMPMODE::EQ, {c});"]
        if sdt in INT_RANGE:
            return [f"AscendC::Duplicate({_u16(dst, 'bool')}, static_cast<uint16_t>(0xFFFF), {n // 16});  // isfinite: "
                    "an integer is finite"]
        unsupported(f"'isfinite' on dtype {sdt}", op.span)

    def _emit_signbit(self, i, op, ops, res, dt, dst, n):
        """The sign bit: 32-bit lanes shifted right by 31 (arithmetic: -1 or 0) and compared to -1
        (int32's one compare, EQ); 16-bit lanes by 15, then in half (exact for -1 / 0); int8 in
        half.  NaN and -0 count by their bit, as torch."""
        key = ops[0][1]
        sdt = self.s.dtype[key]
        x = self.ref(key)
        if sdt in ("fp32", "int32"):
            t = self._int_scratch_ref(i, 0, "int32")
            x = x if sdt == "int32" else f"{x}.ReinterpretCast<int32_t>()"
            return [f"AscendC::ShiftRight({t}, {x}, {self._int_lit(31, 'int32')}, {self.count(key)});",
                    f"AscendC::CompareScalar({dst}, {t}, {self._int_lit(-1, 'int32')}, AscendC::CMPMODE::EQ, "
                    f"{self.count(key)});"]
        if sdt in ("fp16", "int16"):
            t, h = self._int_scratch_ref(i, 0, "int16"), self._int_scratch_ref(i, 1, "fp16")
            x = x if sdt == "int16" else f"{x}.ReinterpretCast<int16_t>()"
            c = self._int_count(key, "fp16")
            return [f"AscendC::ShiftRight({t}, {x}, {self._int_lit(15, 'int16')}, {c});",
                    f"AscendC::Cast({h}, {t}, AscendC::RoundMode::CAST_NONE, {c});",
                    f"AscendC::CompareScalar({dst}, {h}, {self._int_lit(0, 'fp16')}, AscendC::CMPMODE::LT, {c});"]
        if sdt == "int8":
            L: list = []
            h = self._int_as_half(i, 0, key, L)
            return L + [f"AscendC::CompareScalar({dst}, {h}, {self._int_lit(0, 'fp16')}, AscendC::CMPMODE::LT, "
                        f"{self._int_count(key, 'fp16')});"]
        unsupported(f"'signbit' on dtype {sdt}", op.span)
