"""PTO003 tile-rank-mismatch."""

from __future__ import annotations

from ...diagnostics import Note
from ...frontend.values import Sym
from ..rule import Case, LintContext, Rule


def _shape_text(shape) -> str:
    dims = [str(d) if isinstance(d, int) else d.text if isinstance(d, Sym) else "?" for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _within(node, outer) -> bool:
    """Whether ``node`` lies in the source lines of ``outer`` (the kernel's def or with block)."""
    end = getattr(outer, "end_lineno", None)
    return end is not None and outer.lineno <= node.lineno <= end


def _tile_text(tile) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in tile) + "]"


class TileRankMismatch(Rule):
    """
    ## What it does
    Reports a vector op whose result has more dims than the vector tile shape in effect
    (the last ``pypto.set_vec_tile_shapes`` on the path to the op), for example a 1-D tile
    for a 2-D ``add``, or a 2-D reduction with ``keepdim=True`` under a 1-D tile. One report
    per tile setting and output rank, where the fix goes: at the ``set_vec_tile_shapes`` call
    when it and the op are both in the kernel's body (a note names the first op it breaks), at
    that op when either is in a helper or at module level.

    ## Why is this bad?
    PyPTO needs one tile dim per dim of each op's *output*. With fewer, pypto 0.2.0 traces
    the kernel and then fails in the ExpandFunction pass: the Python exception only says
    `Run pass failed.`, and the real reason (`Tile shape size 1 is not matched the output
    shape size 2`) is written to the plog file, far from the line at fault.

    The check is silent when the tile or the output rank is unknown (tiles set at module
    level or through ``*shapes``, ``pypto.Tensor()`` annotations, dynamic reshapes).
    A tile with *more* dims than the output is accepted by 0.2.0 (its leading dims are used)
    and is PTO018's case (tile-rank-excess).

    ## Example
    ```python
    @pypto.frontend.jit
    def kernel(a: pypto.Tensor((64, 64), pypto.DT_FP32),
               out: pypto.Tensor((64, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32)
        out[:] = a + 1.0
    ```

    ## Use instead
    ```python
        pypto.set_vec_tile_shapes(32, 32)
        out[:] = a + 1.0
    ```
    After a reduction with ``keepdim=False`` the result loses a dim while the tile keeps
    its rank: set a tile of the new rank before the next op instead of reusing the old one.

    ## Fix safety
    No fix is offered: the tile sizes of the missing dims decide the schedule and the UB
    footprint, so they are the author's choice.

    ## References
    PyPTO FAQ: tileshape-dimension-mismatch; `pypto.set_vec_tile_shapes` API page;
    `pypto-0.2-behaviour.md` pitfall 4.
    """

    code = "PTO003"
    name = "tile-rank-mismatch"
    summary = "the vector tile shape has fewer dims than the op's output"
    VALID = [
        # matching ranks
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 32)\n"
        "    out[:] = a + 1.0\n",
        # shapes unknown: pypto.Tensor() takes shape and dtype from the call's arguments
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor(), out: pypto.Tensor()):\n"
        "    pypto.set_vec_tile_shapes(32)\n"
        "    out[:] = pypto.exp(a)\n",
        # tile set at module level (global scope), even a 1-D one: unknown inside the kernel
        "import pypto as pto\n\npto.set_vec_tile_shapes(64)\n\n@pto.frontend.jit\n"
        "def k(a: pto.Tensor((64, 64), pto.DT_FP32), out: pto.Tensor((64, 64), pto.DT_FP32)):\n"
        "    out[:] = a * 2.0\n",
        # keepdim=False drops a dim; the tile is reset to the new rank before the next op
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64,), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(8, 64)\n"
        "    s = pypto.sum(x, -1, keepdim=False)\n"
        "    pypto.set_vec_tile_shapes(64)\n"
        "    out[:] = s * 0.5\n",
        # a plain helper sets the tile; it is interpreted in the kernel's context
        "import pypto\n\ndef tiles():\n    pypto.set_vec_tile_shapes(16, 64)\n\n"
        "@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    tiles()\n"
        "    out[:] = pypto.relu(a)\n",
        # more tile dims than output dims: accepted by 0.2.0 (leading dims used)
        "from pypto import frontend\nimport pypto\n\n@frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(1, 32, 32)\n"
        "    out[:] = a + a\n",
        # a tile whose rank is not known statically (*shapes from a parameter)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32), tile: tuple):\n"
        "    pypto.set_vec_tile_shapes(*tile)\n"
        "    out[:] = a + 1.0\n",
        # different tiles on the two sides of a branch: unknown afterwards
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32), wide: bool):\n"
        "    if wide:\n        pypto.set_vec_tile_shapes(64)\n    else:\n        pypto.set_vec_tile_shapes(8, 8)\n"
        "    out[:] = a + 1.0\n",
        # matmul uses the cube tile; the 1-D vector tile only serves the 1-D op
        "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), b: pypto.Tensor((64, 64), pypto.DT_FP16),\n"
        "      v: pypto.Tensor((64,), pypto.DT_FP32), c: pypto.Tensor((64, 64), pypto.DT_FP32),\n"
        "      w: pypto.Tensor((64,), pypto.DT_FP32)):\n"
        "    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])\n"
        "    pypto.set_vec_tile_shapes(64)\n"
        "    c[:] = pypto.matmul(a, b, pypto.DT_FP32)\n"
        "    w[:] = v * 2.0\n",
    ]
    INVALID = [
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(32)\n"
            "    out[:] = a + 1.0\n",
            line=5, col=5,
        ),
        # 2-D tile, 3-D op inside a loop; `import pypto as pto`
        Case(
            "import pypto as pto\n\n@pto.frontend.jit()\n"
            "def k(x: pto.Tensor((4, 64, 64), pto.DT_FP32), y: pto.Tensor((4, 64, 64), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(32, 64)\n"
            "    for i in pto.loop(1, name='L', idx_name='i'):\n"
            "        y[:] = pto.exp(x)\n",
            line=5, col=5,
        ),
        # keepdim=True keeps the rank: a 1-D tile cannot serve a 2-D reduction
        Case(
            "from pypto import frontend\nimport pypto\n\n@frontend.jit\n"
            "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 1), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(64)\n"
            "    out[:] = pypto.sum(x, -1, keepdim=True)\n",
            line=6, col=5,
        ),
        # tile reset to 1-D after a keepdim=False reduction, then a 2-D op under it
        Case(
            "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
            "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32),\n"
            "      r: pypto.Tensor((64,), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(8, 64)\n"
            "    s = pypto.amax(x, 1)\n"
            "    pypto.set_vec_tile_shapes(64)\n"
            "    r[:] = s + 1.0\n"
            "    out[:] = x * 2.0\n",
            line=9, col=5,
        ),
        # the tile comes from a plain helper
        Case(
            "import pypto\n\ndef use_rows():\n    pypto.set_vec_tile_shapes(128)\n\n"
            "@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((16, 128), pypto.DT_FP16), out: pypto.Tensor((16, 128), pypto.DT_FP16)):\n"
            "    use_rows()\n"
            "    out[:] = pypto.maximum(a, a)\n",
            line=9, col=14,
        ),
    ]

    def check(self, ctx: LintContext):
        for kernel in ctx.model.kernels:
            # one report per tile setting and output rank, at the first op it breaks
            groups: dict = {}
            for op in kernel.ops:
                if not op.vector or not isinstance(op.vec_tile, tuple):
                    continue
                rank = op.out.rank if op.out is not None else None
                if rank is None or len(op.vec_tile) >= rank:
                    continue
                key = (id(op.vec_tile_node) if op.vec_tile_node is not None else op.vec_tile, rank)
                groups.setdefault(key, []).append(op)
            for ops in groups.values():
                op, more = ops[0], len(ops) - 1
                rank, tile = op.out.rank, op.vec_tile
                setter = ctx.source.segment(op.vec_tile_node.func) if op.vec_tile_node is not None else ""
                setter = setter or "pypto.set_vec_tile_shapes"
                suggestion = self._suggest(tile, op.out.shape)
                # where the fix goes: the tile setting when it and the op are both in the kernel's own
                # body (the op a note); the op when either is in a helper or at module level (a helper
                # that changes the rank sets its own tile; a shared setting serves other kernels)
                at_setting = op.vec_tile_node is not None and _within(op.vec_tile_node, kernel.node) \
                    and _within(op.node, kernel.node)
                if at_setting:
                    notes = (Note(f"`{op.op}` is the first op under this tile with a {rank}-D result",
                                  ctx.span(op.node)),)
                elif op.vec_tile_node is not None:
                    notes = (Note(f"vector tile shape {_tile_text(tile)} set here", ctx.span(op.vec_tile_node)),)
                else:
                    notes = ()
                yield self.diagnostic(
                    ctx.span(op.vec_tile_node if at_setting else op.node),
                    f"`{op.op}` produces a {rank}-D result {_shape_text(op.out.shape)} but the vector tile "
                    f"{_tile_text(tile)} in effect has {len(tile)} dim{'s' if len(tile) != 1 else ''}; "
                    f"pypto 0.2.0 fails in pass ExpandFunction (`Tile shape size {len(tile)} is not matched "
                    f"the output shape size {rank}`, reported only in the plog)"
                    + (f"; {more} more op{'s' if more != 1 else ''} under this tile too" if more else ""),
                    help=(f"set a {rank}-D tile, e.g. `{setter}({suggestion})`" if at_setting else
                          f"set a {rank}-D tile before this op, e.g. `{setter}({suggestion})`"),
                    notes=notes,
                )

    @staticmethod
    def _suggest(tile, shape) -> str:
        """Keep the given dims as the trailing ones; fill the missing leading dims."""
        missing = len(shape) - len(tile)
        lead = [1] * (missing - 1)
        d = shape[missing - 1]
        lead.append(min(d, 8) if isinstance(d, int) and d > 0 else 1)
        dims = lead + ["?" if t is None else t for t in tile]
        return ", ".join(str(d) for d in dims)


RULE = TileRankMismatch
