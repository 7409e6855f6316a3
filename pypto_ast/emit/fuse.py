"""Runs of fp32 count-form elementwise calls, given a one-pass form for the host.

The host runtime runs each Ascend C vector call as one loop over UB, so a chain of nine
elementwise ops reads and writes its tile nine times: on the CPU most of its time (issue 21).
The NPU has no fused elementwise API, and the Ascend C must stay what a CANN build compiles, so
the calls stay as they are; a run of two or more consecutive fp32 count-form calls of one count
is wrapped so that the host may take ``pypto_host::FuseF32`` instead (host/pypto_host_fuse.h),
which computes the same ops group by group in registers and stores what the calls would have
left in UB.  CANN's headers do not define ``PYPTO_HOST_FUSE``, so there only the calls remain.
docs/design.md §33.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

BINARY = ("Add", "Sub", "Mul", "Div", "Max", "Min")
SCALAR = ("Adds", "Muls", "Maxs", "Mins")
UNARY = ("Exp", "Abs", "Sqrt", "Relu", "Reciprocal")
MAX_SLOTS = 6    # pypto_host::fuse::kSlots
MAX_SCALARS = 8  # pypto_host::fuse::kScalars
_CALL = re.compile(r"^        AscendC::(\w+)\((.*)\);")


@dataclass(frozen=True)
class Step:
    """One count-form call: ``api(dst, *srcs[, scalar], n)``, operands as their C++ expressions."""

    api: str
    dst: str
    srcs: tuple
    scalar: Optional[str]
    n: int


def step_of(step: Optional[Step], lines: list) -> Optional[Step]:
    """``step`` when ``lines`` are exactly the one top-level call it describes, else None (the op
    took another form: row loops, a widened bf16 op, a scratch buffer)."""
    if step is None or step.api not in BINARY + SCALAR + UNARY:
        return None
    calls = [ln for ln in lines if not ln.startswith("#")]
    if len(calls) != 1:
        return None
    m = _CALL.match(calls[0])
    if m is None or m.group(1) != step.api or not m.group(2).startswith(step.dst + ", "):
        return None
    return step


class Runs:
    """Collects an op's lines in order, wrapping each run of fusable steps as it closes."""

    def __init__(self, out: list):
        self.out = out
        self.run: list = []  # (pre lines, lines, step)

    def add(self, pre: list, lines: list, step: Optional[Step]) -> None:
        if step is not None and self.run and not self._fits(step):
            self.flush()
        if step is None:
            self.flush()
            self.out.extend(pre + lines)
        else:
            self.run.append((pre, lines, step))

    def _fits(self, step: Step) -> bool:
        steps = [s for _, _, s in self.run] + [step]
        if step.n != steps[0].n:
            return False
        slots = {x for s in steps for x in (s.dst, *s.srcs)}
        return len(slots) <= MAX_SLOTS and sum(s.scalar is not None for s in steps) <= MAX_SCALARS

    def flush(self) -> None:
        run, self.run = self.run, []
        if len(run) < 2:
            for pre, lines, _ in run:
                self.out.extend(pre + lines)
            return
        self.out.extend(wrap([s for _, _, s in run], [ln for pre, lines, _ in run for ln in pre + lines]))


def wrap(steps: list, lines: list) -> list:
    """The calls in a block the host may replace by one ``FuseF32`` pass."""
    slots: list = []

    def slot(x: str) -> int:
        if x not in slots:
            slots.append(x)
        return slots.index(x)

    loads = stores = 0
    written: set = set()
    terms, scalars = [], []
    for s in steps:
        srcs = [slot(x) for x in s.srcs]
        for j in srcs:
            if j not in written:
                loads |= 1 << j
        d = slot(s.dst)
        written.add(d)
        stores |= 1 << d
        if s.scalar is not None:
            scalars.append(f"static_cast<float>({s.scalar})")
            b = len(scalars) - 1
        else:
            b = srcs[1] if len(srcs) > 1 else 0
        terms.append(f"pypto_host::fuse::Step<pypto_host::fuse::{s.api}, {d}, {srcs[0]}, {b}>")
    n = steps[0].n
    head = (f"        if (!pypto_host::FuseF32<{loads:#x}u, {stores:#x}u, pypto_host::fuse::Steps<{', '.join(terms)}>>"
            f"({n}, {{{', '.join(scalars)}}}, {', '.join(slots)}))  // {len(steps)} ops in one pass on the host")
    lead = lines[:1] if lines and lines[0].startswith("#line") else []  # the fused call is the first op's line
    body = [ln if ln.startswith("#") else "    " + ln for ln in lines[len(lead):]]
    return [*lead, "#if defined(PYPTO_HOST_FUSE)", head, "#endif", "        {", *body, "        }"]
