"""On-chip memory sizes per SoC (ascendc.md §1.2) and the emit-time UB budget check.

The emitter (``ascendc.emit_program``) picks each block's row tile and reports its buffer plan
in ``manifest.json`` (``shape``, ``tile_rows``, ``ub_bytes`` = both buffers of every
double-buffered queue plus the temp slots).  :func:`check_plan` reads that manifest and turns a
plan that cannot fit the SoC's UB — or a vector tile the kernel asked for that cannot, which
the emitter would otherwise shrink silently — into a located diagnostic naming the tile shape
to change.
"""

from __future__ import annotations

import math
from typing import Optional

from ..socs import DEFAULT_SOC, KIB, SOCS, Soc, get_soc  # noqa: F401  (re-exported)


def _kib(n: int) -> str:
    return f"{n / KIB:.1f} KiB" if n % KIB else f"{n // KIB} KiB"


def _requested_tile(program, block_name: str, at=None):
    """The vector tile shape the kernel set for this block's ops, and its op's span: the op at
    ``at`` (``[line, col]``, the op whose tile the kernel ran in) if given, else the first."""
    if program is None:
        return None, None
    from .. import ir
    from .axes import OwnTile

    for block in ir.blocks(program):
        if block.name != block_name:
            continue
        tiled = [op for op in block.ops if op.tile is not None and not isinstance(op.tile, OwnTile)]
        for op in tiled:  # the kernel's, not the emitter's
            if at is None or (op.span is not None and [op.span.line, op.span.col] == list(at)):
                return tuple(op.tile), op.span
        if tiled:
            return tuple(tiled[0].tile), tiled[0].span
        return None, (block.ops[0].span if block.ops else None)
    return None, None


def _fewer_rows(tile: list, fit: int) -> list:
    """``tile`` with its leading axes shrunk, outermost first, until their product (the rows of
    the kernel's 2-D view) is at most ``fit``."""
    tile = list(tile)
    for i in range(len(tile) - 1):
        inner = math.prod(tile[i + 1:-1])
        tile[i] = max(1, min(tile[i], fit // inner)) if inner <= fit else 1
    return tile


def check_plan(manifest: dict, soc: Soc | str | None = None, program=None) -> list:
    """Return findings ``[(message, ir.Span or None)]`` for blocks whose UB plan does not fit
    ``soc``'s UB budget (double-buffered where that fits, else single-buffered, else -- where the
    tile fits pypto's own UB -- run as sub-tiles of fewer rows, ``tile_requested`` in the
    manifest: what is left is a tile no plan fits).  ``program`` (the lowered Program) supplies the tile shape
    the kernel asked for and its source location."""
    soc = soc if isinstance(soc, Soc) else get_soc(soc)
    budget = soc.ub_budget
    findings = []
    for k in manifest.get("kernels", []):
        if k.get("kind", "vector") != "vector":
            continue
        rows, cols = k["shape"]
        tile_rows, planned = int(k["tile_rows"]), int(k["ub_bytes"])
        if planned <= budget:
            continue
        tcols = k.get("tile", [tile_rows, cols])[1]
        per_row = planned // max(1, tile_rows)  # the plan is linear in the row tile
        set_tile, span = _requested_tile(program, k["block"], k.get("vec_tile_at"))
        tile = k.get("vec_tile") or set_tile  # the tile this kernel ran in (clipped to its extents)
        fit = budget // per_row if per_row else 0
        shape = list(tile) if tile else [tile_rows, tcols]
        what = f"vector tile {shape}" if tile else f"row tile [{tile_rows}, {tcols}]"
        rows = math.prod(shape[:-1]) if tile else tile_rows
        if 1 <= fit < min(rows, tile_rows):  # fewer rows help
            fewer = _fewer_rows(shape, fit) if tile else [fit, tcols]
            hint = (f"use at most {fit} rows per tile ({'x'.join(map(str, shape[:-1]))} now), e.g. "
                    f"pypto.set_vec_tile_shapes({', '.join(map(str, fewer))})")
        else:  # not rows: a row (or what every tile holds whatever its rows) is over UB
            hint = f"even {min(rows, tile_rows)} row(s) of {tcols} elements need {_kib(planned)}: split the last dimension"
        live = int(k.get("pypto_live_bytes", 0))
        if live > soc.ub:  # no plan fits it, pypto's neither
            hint += (f" (pypto refuses this tile too: its live tiles need at least {_kib(live)}, "
                     f"'Alloc tensor ... exceeds MEM_UB size [{soc.ub}]')")
        findings.append((
            f"UB budget: kernel {k['kernel']} of block {k['block']} with {what} needs {_kib(planned)} of UB "
            f"{'even single-buffered' if k.get('buffers') == 1 else 'with double buffering'} ({_kib(per_row)} per "
            f"row of {tcols}), over the {_kib(budget)} per AIV of {soc.name} "
            f"({_kib(soc.ub)} UB minus {_kib(soc.ub_reserved)} reserved); change the tile shape {shape}: {hint}",
            span))
    return findings
