"""Runs of fp32 count-form elementwise calls, given a one-pass form for the host.

The host runtime runs each Ascend C vector call as one loop over UB, so a chain of nine
elementwise ops reads and writes its tile nine times: on the CPU most of its time (issue 21).
The NPU has no fused elementwise API, and the Ascend C must stay what a CANN build compiles, so
the calls stay as they are; a run of two or more consecutive fp32 count-form calls of one count
is wrapped so that the host may take ``pypto_host::FuseF32`` instead (host/pypto_host_fuse.h),
which computes the same ops group by group in registers and stores what the calls would have
left in UB.  CANN's headers do not define ``PYPTO_HOST_FUSE``, so there only the calls remain.
Adjacent row loops of such calls are merged first, and a whole-tile call right after a row loop
joins it as the same call on row r (both valid Ascend C on either side), so that a row's ops form
one run.  docs/design.md §34.

The pass reads the emitted lines of a kernel's Compute body, not the IR: what it fuses is what
the calls say, operand for operand.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

BINARY = ("Add", "Sub", "Mul", "Div", "Max", "Min")
SCALAR = ("Adds", "Muls", "Maxs", "Mins")
UNARY = ("Exp", "Abs", "Sqrt", "Relu", "Reciprocal")
CASTS = {("bf16", "fp32", "CAST_NONE"): "Widen", ("fp32", "bf16", "CAST_RINT"): "Round"}  # (from, to, mode)
MAX_SLOTS = 8    # pypto_host::fuse::kSlots
MAX_SCALARS = 8  # pypto_host::fuse::kScalars
# operands of each call: (tensor sources, scalars) after its dst
_ARITY = {**{a: (2, 0) for a in BINARY}, **{a: (1, 1) for a in SCALAR}, **{a: (1, 0) for a in UNARY},
          "Duplicate": (0, 1)}
_CALL = re.compile(r"^( +)AscendC::(\w+)\((.*)\);( *//.*)?$")
_ROWS = re.compile(r"^        for \(uint32_t r = 0; r < \w+; \+\+r\) \{$")
_ROW_COUNT = re.compile(r"^        for \(uint32_t r = 0; r < (\d+)u?; \+\+r\) \{$")
_ROW_VIEW = re.compile(r"^(\w+)\[r \* (\d+)\]$")  # row r of a named local tensor
_SCALAR_DECL = re.compile(r"^ +const float s = [^;]*;( *//.*)?$")


@dataclass(frozen=True)
class Step:
    """One count-form call: ``api(dst, *srcs[, scalar], n)``, operands as their C++ expressions."""

    api: str
    dst: str
    srcs: tuple
    scalar: Optional[str]
    n: int


def split_args(text: str) -> list:
    """The top-level comma-separated arguments of a call (brackets nest)."""
    args, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:k].strip())
            start = k + 1
    args.append(text[start:].strip())
    return args


def parse_call(line: str, f32: set, bf16: frozenset = frozenset()) -> Optional[Step]:
    """The step a line is, when it is one fp32 count-form call of the fused set or a bf16 <-> fp32
    Cast (``f32`` / ``bf16``: the local tensors known to be of that dtype; scratch views say
    ``<float>`` / ``<bfloat16_t>`` themselves)."""
    m = _CALL.match(line)
    if m is None:
        return None
    api, args = m.group(2), split_args(m.group(3))
    if not args or not re.fullmatch(r"\d+", args[-1]):
        return None
    n = int(args[-1])
    if api == "Cast" and len(args) == 4:
        mode = args[2].rsplit("::", 1)[-1]
        kinds = tuple("fp32" if _is_f32(x, f32) else "bf16" if _is_bf16(x, bf16) else None for x in args[1::-1])
        cast = CASTS.get((*kinds, mode))
        return Step(cast, args[0], (args[1],), None, n) if cast else None
    shape = _ARITY.get(api)
    if shape is None or len(args) != 2 + shape[0] + shape[1]:
        return None
    tensors = args[:1 + shape[0]]
    if not all(_is_f32(t, f32) for t in tensors):
        return None
    scalar = args[1 + shape[0]] if shape[1] else None
    return Step(api, tensors[0], tuple(tensors[1:]), scalar, n)


def _is_f32(ref: str, f32: set) -> bool:
    return _is_of(ref, f32, "float")


def _is_bf16(ref: str, bf16: frozenset) -> bool:
    return _is_of(ref, bf16, "bfloat16_t")


def _is_of(ref: str, names, ctype: str) -> bool:
    base = re.sub(r"\[[^\[\]]*\]$", "", ref)  # a row view x[r * C] is x's dtype
    return base in names or bool(re.fullmatch(rf"\w+\.(Get|GetWithOffset)<{ctype}>\([^()]*\)", base))


def fuse_body(lines: list, f32: set, bf16: frozenset = frozenset()) -> list:
    """A Compute body with its adjacent row loops of fusable calls merged and every run of two
    or more fusable calls wrapped (top level and inside row loops)."""
    return _wrap_runs(_merge_rows(lines, f32), f32, bf16)


def _row_loop(lines: list, k: int):
    """(end, body) of the simple row loop starting at lines[k] (a body of 12-space lines and
    #line directives, no nested block), else None."""
    if not _ROWS.match(lines[k]):
        return None
    body = []
    for j in range(k + 1, len(lines)):
        ln = lines[j]
        if ln == "        }":
            return j + 1, body
        if not (ln.startswith("#line") or (ln.startswith("            ") and not ln.startswith("             ")
                                            and not ln.rstrip().endswith(("{", "}")))):
            return None
        body.append(ln)
    return None


def _merge_rows(lines: list, f32: set) -> list:
    """Merge a row loop with the ones right after it (nothing but #line between) that have the
    same header and whose bodies are fusable calls only (no scalar read: so no vector-to-scalar
    wait is skipped).  Row r of each merged loop reads row r of the earlier ones or whole rows
    they do not write, so running them row by row is the loops' result (on the NPU too)."""
    out, k = [], 0
    while k < len(lines):
        loop = _row_loop(lines, k)
        if loop is None or not _fusable_body(loop[1], f32, allow_scalar=True):
            out.append(lines[k])
            k += 1
            continue
        header, (end, body) = lines[k], loop
        while True:
            j = end
            between = []
            while j < len(lines) and lines[j].startswith("#line"):
                between.append(lines[j])
                j += 1
            nxt = _row_loop(lines, j) if j < len(lines) else None
            if nxt is None or lines[j] != header or not _fusable_body(nxt[1], f32, allow_scalar=False):
                break
            body += between + nxt[1]
            end = nxt[0]
        body, end = _join_tile_calls(header, body, lines, end, f32)
        out += [header, *body, "        }"]
        k = end
    return out


def _join_tile_calls(header: str, body: list, lines: list, k: int, f32: set) -> tuple:
    """(body, end): the row loop's body with the whole-tile calls at lines[k:] that follow it
    (nothing but #line between) joined as the same call on row r, and where they end.

    A count-form call over the R x C tile after a loop of R rows whose calls all write row r
    (``X[r * C]``, count C) equals that call on row r at the end of iteration r when its operands
    are named tiles the loop already takes row by row: element i reads element i, so row r reads
    what iteration r left and no later iteration touches row r.  Its destination must not be read
    whole by the loop (a broadcast row, the per-row scalars' buffer), which the names rule out:
    those are TBuf views or other locals, never a row view of the loop.  Softmax's ``Exp`` after
    its ``x - max`` loop is the case: one run of Adds and Exp per row (design §34)."""
    m = _ROW_COUNT.match(header)
    if m is None:
        return body, k
    rows = int(m.group(1))
    calls = [ln for ln in body if not ln.startswith("#line")]
    if calls and _SCALAR_DECL.match(calls[0]):
        calls = calls[1:]
    steps = [parse_call(ln, f32) for ln in calls]
    if not steps or any(st is None for st in steps):
        return body, k
    width = steps[0].n
    rowwise: set = set()  # names the loop takes as row r
    for st in steps:
        views = [_ROW_VIEW.match(x) for x in (st.dst, *st.srcs)]
        if st.n != width or views[0] is None or int(views[0].group(2)) != width:
            return body, k  # a call that writes more (or other) than row r
        rowwise |= {v.group(1) for v in views if v is not None and int(v.group(2)) == width}
    body = list(body)
    while True:
        j, between = k, []
        while j < len(lines) and lines[j].startswith("#line"):
            between.append(lines[j])
            j += 1
        if j >= len(lines):
            break
        step = parse_call(lines[j], f32)
        if (step is None or step.n != rows * width or _indent(lines[j]) != 8
                or not all(x in rowwise for x in (step.dst, *step.srcs))):
            break
        call = _CALL.match(lines[j])
        args = split_args(call.group(3))
        tensors = 1 + len(step.srcs)
        args = [f"{x}[r * {width}]" for x in args[:tensors]] + args[tensors:-1] + [str(width)]
        body += between + [f"            AscendC::{step.api}({', '.join(args)});{call.group(4) or ''}"]
        k = j + 1
    return body, k


def _fusable_body(body: list, f32: set, allow_scalar: bool) -> bool:
    calls = [ln for ln in body if not ln.startswith("#line")]
    if allow_scalar and calls and _SCALAR_DECL.match(calls[0]):
        calls = calls[1:]
    return bool(calls) and all(parse_call(ln, f32) is not None for ln in calls)


def _wrap_runs(lines: list, f32: set, bf16: frozenset) -> list:
    out: list = []
    run: list = []  # (line, step or None for a #line directive)

    def flush():
        steps = [s for _, s in run if s is not None]
        if len(steps) >= 2:
            out.extend(wrap(steps, [ln for ln, _ in run]))
        else:
            out.extend(ln for ln, _ in run)
        run.clear()

    for ln in lines:
        if ln.startswith("#line") and run:
            run.append((ln, None))
            continue
        step = parse_call(ln, f32, bf16)
        if step is not None and run and not _fits([s for _, s in run if s is not None] + [step], run[0][0], ln):
            flush()
        if step is None:
            flush()
            out.append(ln)
        else:
            run.append((ln, step))
    flush()
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fits(steps: list, first: str, line: str) -> bool:
    if _indent(first) != _indent(line) or steps[-1].n != steps[0].n:
        return False
    slots = {x for s in steps for x in (s.dst, *s.srcs)}
    return len(slots) <= MAX_SLOTS and sum(s.scalar is not None for s in steps) <= MAX_SCALARS


def wrap(steps: list, lines: list) -> list:
    """The calls in a block the host may replace by one ``FuseF32`` pass (which of its slots are
    bf16 it takes from their types)."""
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
        a = srcs[0] if srcs else 0
        api = "Dup" if s.api == "Duplicate" else s.api
        terms.append(f"pypto_host::fuse::Step<pypto_host::fuse::{api}, {d}, {a}, {b}>")
    first = next(ln for ln in lines if not ln.startswith("#"))
    pad = " " * _indent(first)
    head = (f"{pad}if (!pypto_host::FuseF32<{loads:#x}u, {stores:#x}u, pypto_host::fuse::Steps<{', '.join(terms)}>>"
            f"({steps[0].n}, {{{', '.join(scalars)}}}, {', '.join(slots)}))  // {len(steps)} ops in one pass on the host")
    lead = lines[:1] if lines and lines[0].startswith("#line") else []  # the fused call is the first op's line
    body = [ln if ln.startswith("#") else "    " + ln for ln in lines[len(lead):]]
    return [*lead, "#if defined(PYPTO_HOST_FUSE)", head, "#endif", f"{pad}{{", *body, f"{pad}}}"]
