"""A fused segment whose plan does not fit UB, in no tiling, becomes consecutive kernels.

The planner fuses a block's vector ops as long as their shapes join (design.md section 6); the
UB they need is only known once the segment is planned.  pypto itself splits a chain into
subgraphs whose live tiles fit UB, passing values between them through GM; so does this: a
segment that fits no tile plan (``SegmentEmitter.plan``: whole rows, sub-tiles of fewer rows,
column tiles) is cut after its longest prefix of ops that fits, each value the prefix computes
and the rest reads passing through a GM workspace of its own (written once, read once), and
the rest is cut again if it still does not fit (design.md section 26).  Every op computes what it
computed fused: the values cross GM in their own dtype, unchanged.

A cut is refused where it would change what a kernel reads: the rest reading a tensor the
prefix writes (fused, every read came before the writes), a carried bool mask (its GM form is
bytes), or more than ``MAX_LOADS`` inputs.
"""

from __future__ import annotations

from .. import ir
from . import gm
from .errors import EmitError
from .gm import GVal
from .vector import Load, Segment, SegmentEmitter, Store

MAX_LOADS = 8  # one VECIN queue buffer per input (ascendc.md section 5.1)


def fitting(seg: Segment, new_ws, vext: dict, source: str, budget: int) -> list:
    """``seg`` as a list of segments that each fit ``budget`` where a cut allows it (else the
    rest as it is: ``soc.check_plan`` reports it).  ``new_ws(dtype, shape)`` makes a GM
    workspace, ``vext`` holds each value's valid extent (rows, cols)."""
    if any(r.gval.vg is not None for r in seg.loads + seg.stores):  # valid rows per level: not carried over a cut
        return [seg]
    pieces, rest = [], seg
    while not _fits(rest, source, budget) and len(rest.ops) > 1 and not rest.single_core:
        for k in range(len(rest.ops) - 1, 0, -1):
            parts = _split(rest, k, new_ws, vext)
            if parts is not None and _fits(parts[0], source, budget):
                pieces.append(parts[0])
                rest = parts[1]
                break
        else:
            break
    if not pieces:
        return [seg]
    pieces.append(rest)
    for j, piece in enumerate(pieces):
        piece.name, piece.label = f"{seg.name}_{j + 1}", f"{seg.label} (part {j + 1} of {len(pieces)})"
    return pieces


def _fits(seg: Segment, source: str, budget: int) -> bool:
    try:
        return SegmentEmitter(seg, source, False, budget).plan().ub_bytes <= budget
    except EmitError:
        return False


def _split(seg: Segment, k: int, new_ws, vext: dict):
    """(head, rest) of ``seg`` cut before its ``k``-th op, or None where the cut is refused."""
    head_ops, rest_ops = seg.ops[:k], seg.ops[k:]
    made = {r for op in head_ops for r in op.results}
    carried = []
    for op in rest_ops:
        for x in op.operands:
            if isinstance(x, ir.Value) and x.name in made and x.name not in carried:
                carried.append(x.name)
    if any(seg.dtype[name] == "bool" for name in carried):
        return None
    head, rest = _empty(seg, head_ops), _empty(seg, rest_ops)
    loaded = {ld.key: ld for ld in seg.loads}
    for part, ops in ((head, head_ops), (rest, rest_ops)):
        used = {x.name for op in ops for x in op.operands if isinstance(x, ir.Value)}
        used |= {st.key for st in seg.stores if _stored_by(st.key, head, rest, rest_ops) is part}
        for key, ld in loaded.items():
            if key in used:
                _add_load(part, seg, key, ld.gval)
    for st in seg.stores:
        part = _stored_by(st.key, head, rest, rest_ops)
        part.stores.append(Store(st.key, st.gval))
        part.written.add(st.gval.buf.name)
    user_written = set(head.written)  # the tensors the head writes, before its workspaces
    for name in carried:  # through a workspace of its own: stored by the head, read by the rest
        rows, cols = seg.shape2[name]
        vr, vc = vext[name]
        g = GVal(new_ws(seg.dtype[name], (rows, cols)), gm.C(0), rows, cols, cols, vr, vc, seg.dtype[name], (rows, cols))
        head.stores.append(Store(name, g))
        head.written.add(g.buf.name)
        _add_load(rest, seg, name, g)
    if rest.read & user_written or len(rest.loads) > MAX_LOADS:
        return None
    return head, rest


def _stored_by(key: str, head: Segment, rest: Segment, rest_ops: list) -> Segment:
    """The part that stores ``key``: the rest where it computes ``key``, else the head (a loaded
    value is stored by the head, which loads it)."""
    return rest if any(key in op.results for op in rest_ops) else head


def _empty(seg: Segment, ops: list) -> Segment:
    part = Segment(name=seg.name, label=seg.label, shape=seg.shape, ops=list(ops), tile_rows=seg.tile_rows,
                   tile_cols=seg.tile_cols, tile_own=seg.tile_own, tile_set=seg.tile_set, tile_span=seg.tile_span,
                   span=next((op.span for op in ops if op.span is not None), seg.span))
    for op in ops:
        for r in op.results:
            part.shape2[r], part.dtype[r] = seg.shape2[r], seg.dtype[r]
    return part


def _add_load(part: Segment, seg: Segment, key: str, g: GVal):
    part.loads.append(Load(key, g))
    part.read.add(g.buf.name)
    part.shape2[key], part.dtype[key] = seg.shape2[key], seg.dtype[key]
