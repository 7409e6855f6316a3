"""PTO018 tile-rank-excess."""

from __future__ import annotations

from ...diagnostics import Note
from ...frontend import api
from ..rule import Case, LintContext, Rule
from ._local import in_file
from .pto003_tile_rank_mismatch import _shape_text, _tile_text


def _tiled(op):
    """The tensor the vector tile is laid over: a reduction's input (its tile keeps the input's
    rank when ``keepdim=False`` drops a dim), else the op's result (as PTO003 and PTO004 read it)."""
    if op.op in api.REDUCE and op.inputs:
        return op.inputs[0]
    return op.out


def _clip(value, dim):
    return min(value, dim) if isinstance(dim, int) and dim > 0 else value


def _differs(tile, shape) -> bool:
    """Whether the leading dims pypto uses tile the tensor differently from the trailing ones the
    author most likely meant: certainly differs on some dim (both tile values known, each clipped
    to a known extent). ``(128, 128, 128)`` on a 2-D op, or ``(1, 1, 64, 64)`` on ``(1, 1, 4096)``,
    tile the same either way and are left alone."""
    rank = len(shape)
    lead, trail = tile[:rank], tile[len(tile) - rank:]
    for a, b, d in zip(lead, trail, shape):
        if isinstance(a, int) and isinstance(b, int) and _clip(a, d) != _clip(b, d):
            return True
    return False


class TileRankExcess(Rule):
    """
    ## What it does
    Reports a vector op whose tiled tensor has fewer dims than the vector tile shape in
    effect (the last ``pypto.set_vec_tile_shapes`` on the path to the op), for example a
    3-D tile ``(1, 32, 32)`` for a 2-D ``add``. The tiled tensor is the op's result, or for a
    reduction its input: the tile of ``pypto.sum(x, -1)`` keeps the rank of ``x`` even when
    ``keepdim=False`` drops a dim from the result, so that common form is not reported.
    PTO003 is the mirror rule (fewer tile dims than the result).

    It is silent when the leading dims tile the tensor the same way as the trailing ones
    would (``(128, 128, 128)`` for a 2-D op; ``(1, 1, 64, 64)`` on a ``(1, 1, 4096)`` result,
    each tile dim clipped to its extent), and when the tile, the rank or the dims compared are
    unknown (tiles set at module level or through ``*shapes``, ``pypto.Tensor()`` annotations,
    dynamic reshapes).

    ## Why is this bad?
    pypto 0.2.0 accepts the tile without a word and uses its *leading* dims: ``(1, 32, 32)``
    on a 64×64 add acts as ``(1, 32)``, 128 tasks and about 3× the cycles instead of 4 tasks
    (``(16, 64, 64)`` acts as ``(16, 64)``). The documentation says the ranks must match; the
    author usually meant the trailing dims. Some kernels share one tile between ops of two
    ranks on purpose (a rope's 3-D transposes and its 2-D casts); they are reported too: the
    release after 0.2.0 is free to check the documented rule, and a tile per rank says what is
    meant. The help shows both readings.

    ## Example
    ```python
    @pypto.frontend.jit
    def kernel(a: pypto.Tensor((64, 64), pypto.DT_FP32),
               out: pypto.Tensor((64, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 32)
        out[:] = a + 1.0
    ```

    ## Use instead
    ```python
        pypto.set_vec_tile_shapes(32, 32)
        out[:] = a + 1.0
    ```
    When one kernel mixes ranks (a 3-D part, then a 2-D part after a reshape), set a tile of
    the new rank before the ops of the other rank.

    ## Fix safety
    No fix is offered: dropping the extra dims changes the schedule and the UB footprint,
    and which dims the author meant is their choice (the help suggests the trailing ones).

    ## References
    `pypto.set_vec_tile_shapes` API page (the tile must have the output's rank);
    `pypto-0.2-behaviour.md` pitfall 4 rev; `pypto-dsl.md` §10.1.
    """

    code = "PTO018"
    name = "tile-rank-excess"
    summary = "the vector tile shape has more dims than the op's output (its leading dims are used)"
    VALID = [
        # matching ranks
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 32)\n"
        "    out[:] = a + 1.0\n",
        # a keepdim=False reduction is tiled over its 2-D input; the 1-D op gets its own tile
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64,), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(8, 64)\n"
        "    s = pypto.sum(x, -1, keepdim=False)\n"
        "    pypto.set_vec_tile_shapes(64)\n"
        "    out[:] = s * 0.5\n",
        # shapes unknown at the kernel (pypto.Tensor() annotations)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor(), out: pypto.Tensor()):\n"
        "    pypto.set_vec_tile_shapes(1, 32, 32)\n"
        "    out[:] = pypto.exp(a)\n",
        # tile set at module level: unknown inside the kernel
        "import pypto as pto\n\npto.set_vec_tile_shapes(1, 8, 64)\n\n@pto.frontend.jit\n"
        "def k(a: pto.Tensor((64, 64), pto.DT_FP32), out: pto.Tensor((64, 64), pto.DT_FP32)):\n"
        "    out[:] = a * 2.0\n",
        # fewer dims is PTO003's case, not this one
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32)\n"
        "    out[:] = a + 1.0\n",
        # matmul uses the cube tile; a 3-D vector tile set for a 3-D op does not apply to it
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), b: pypto.Tensor((64, 64), pypto.DT_FP16),\n"
        "      c: pypto.Tensor((64, 64), pypto.DT_FP32), x: pypto.Tensor((2, 64, 64), pypto.DT_FP32),\n"
        "      y: pypto.Tensor((2, 64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])\n"
        "    pypto.set_vec_tile_shapes(1, 32, 64)\n"
        "    c[:] = pypto.matmul(a, b, pypto.DT_FP32)\n"
        "    y[:] = x + 1.0\n",
        # (128, 128, 128) on a 2-D op: leading and trailing dims are the same tile
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((256, 256), pypto.DT_FP32), out: pypto.Tensor((256, 256), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(128, 128, 128)\n"
        "    out[:] = a + 1.0\n",
        # (1, 1, 64, 64) on a (1, 1, 4096) result: clipped to the extents both read (1, 1, 64)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((1, 1, 4096), pypto.DT_FP32), out: pypto.Tensor((1, 1, 4096), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(1, 1, 64, 64)\n"
        "    out[:] = a.clone()\n",
        # a tile whose rank is not known statically
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32), tile: tuple):\n"
        "    pypto.set_vec_tile_shapes(*tile)\n"
        "    out[:] = a + 1.0\n",
    ]
    INVALID = [
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(1, 32, 32)\n"
            "    out[:] = a + 1.0\n",
            line=6, col=14,
        ),
        # `import pypto as pto`, in a loop, a 4-D tile on a 2-D exp
        Case(
            "import pypto as pto\n\n@pto.frontend.jit()\n"
            "def k(x: pto.Tensor((64, 64), pto.DT_FP32), y: pto.Tensor((64, 64), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(1, 1, 16, 64)\n"
            "    for i in pto.loop(1, name='L', idx_name='i'):\n"
            "        y[:] = pto.exp(x)\n",
            line=7, col=16,
        ),
        # the 2-D tile of a keepdim=False reduction reused for the 1-D op after it
        Case(
            "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
            "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64,), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(8, 64)\n"
            "    s = pypto.amax(x, -1)\n"
            "    out[:] = s * 2.0\n",
            line=8, col=14,
        ),
        # the tile comes from a plain helper
        Case(
            "import pypto\n\ndef tiles():\n    pypto.set_vec_tile_shapes(16, 64, 64)\n\n"
            "@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), out: pypto.Tensor((64, 64), pypto.DT_FP16)):\n"
            "    tiles()\n"
            "    out[:] = pypto.relu(a)\n",
            line=9, col=14,
        ),
    ]

    def check(self, ctx: LintContext):
        for kernel in ctx.model.kernels:
            # one report per tile setting and rank, at the first op it over-tiles
            groups: dict = {}
            for op in kernel.ops:
                if not op.vector or not isinstance(op.vec_tile, tuple) or not in_file(ctx, op.node):
                    continue
                tiled = _tiled(op)
                rank = tiled.rank if tiled is not None else None
                if not rank or len(op.vec_tile) <= rank or not _differs(op.vec_tile, tiled.shape):
                    continue
                key = (id(op.vec_tile_node) if op.vec_tile_node is not None else op.vec_tile, rank)
                groups.setdefault(key, []).append((op, tiled))
            for ops in groups.values():
                (op, tiled), more = ops[0], len(ops) - 1
                rank, tile = tiled.rank, op.vec_tile
                setter = ctx.source.segment(op.vec_tile_node.func) if op.vec_tile_node is not None else ""
                setter = setter or "pypto.set_vec_tile_shapes"
                used = ", ".join("?" if d is None else str(d) for d in tile[:rank])
                meant = ", ".join("?" if d is None else str(d) for d in tile[-rank:])
                what = "input" if tiled is not op.out else "result"
                notes = ()
                if op.vec_tile_node is not None:
                    notes = (Note(f"vector tile shape {_tile_text(tile)} set here", ctx.span(op.vec_tile_node)),)
                yield self.diagnostic(
                    ctx.span(op.node),
                    f"`{op.op}` tiles a {rank}-D {what} {_shape_text(tiled.shape)} but the vector tile "
                    f"{_tile_text(tile)} in effect has {len(tile)} dims; pypto wants one tile dim per dim and 0.2.0 "
                    f"silently tiles it by the leading {rank} ([{used}]), not the trailing ones ([{meant}])"
                    + (f"; {more} more op{'s' if more != 1 else ''} under this tile too" if more else ""),
                    help=f"set a {rank}-D tile before this op: `{setter}({meant})` for the trailing dims, "
                    f"or `{setter}({used})` to keep the tiling 0.2.0 uses now",
                    notes=notes,
                )


RULE = TileRankExcess
