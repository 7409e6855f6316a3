"""PTO005 tile-shape-invalid."""

from __future__ import annotations

from ...frontend.values import ApiRef
from ..rule import Case, LintContext, Rule, Valid

MAX_VEC_DIMS = {"0.2.0": 4, "head": 5}  # the repository's later version tiles 5-D tensors


def _pypto_prefix(ctx: LintContext) -> str:
    """How this module spells ``pypto.`` (``pto.`` under ``import pypto as pto``)."""
    for name, value in ctx.model.scope.env.items():
        if isinstance(value, ApiRef) and value.qualname == "pypto":
            return name + "."
    return "pypto."


class TileShapeInvalid(Rule):
    """
    ## What it does
    Reports tile shapes pypto cannot use:

    - at a ``pypto.set_vec_tile_shapes`` call: a dim that is 0 or negative, or more than
      4 dims;
    - at a ``pypto.set_cube_tile_shapes`` call: ``m``/``n`` not a list of exactly two
      values ``[L0, L1]``, ``k`` neither ``[kL0, kL1]`` nor ``[kL0, kL1a, kL1b]``, a value that is 0 or negative, ``L0 > L1``, or ``L1 % L0 != 0``;
    - at an op: a vector op created when no vector tile shape was ever set on its path
      (not in the kernel, not in a helper it calls, not at module level), and a
      ``pypto.matmul`` / ``@`` with no cube tile shape set.

    ## Why is this bad?
    pypto 0.2.0 accepts any vector tile in the setter; a 0 dim (or no tile at all) makes
    the next vector op fail at creation with `F21004 op [ADDS]tile shape not set`, a
    message that does not point at the cause (for `if a > b:` on tensors it is even the
    only error shown). Vector ops support at most 4 dims in 0.2.0 (5 in the repository's later
    version, ``--target head``), and so does the tile. A matmul
    with no cube tile fails with `FC4000 Invalid tile values: kL0=0, kL1a=0, ...`; a cube
    list with the wrong length raises `ValueError: m must have exactly 2 elements`; tiles
    that break ``0 < L0 <= L1, L1 % L0 == 0`` are rejected when the matmul is created.

    A tile whose value or presence cannot be known statically (a module-level or host
    setting, a tile from a parameter, a tile set in only one branch) is not reported.

    ## Example
    ```python
    @pypto.frontend.jit
    def kernel(a: pypto.Tensor((64, 64), pypto.DT_FP16),
               b: pypto.Tensor((64, 64), pypto.DT_FP16),
               c: pypto.Tensor((64, 64), pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 32], [64, 64], [64, 64])   # mL0 > mL1
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    ```

    ## Use instead
    ```python
        pypto.set_cube_tile_shapes([32, 64], [64, 64], [64, 64])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    ```

    ## Fix safety
    No fix is offered: the right tile sizes depend on the shapes, the dtypes and the
    buffers, which only the author can weigh.

    ## References
    `pypto.set_vec_tile_shapes` and `pypto.set_cube_tile_shapes` API pages; PyPTO tiling
    tutorial; `pypto-0.2-behaviour.md` "Other behaviours" (tile shape not set, tile with 0,
    matmul without cube tiles, cube list of one element).
    """

    code = "PTO005"
    name = "tile-shape-invalid"
    summary = "a tile shape is missing, has a non-positive dim, too many dims, or inconsistent cube L0/L1 values"
    VALID = [
        # set_options(vec_tile_shapes=, cube_tile_shapes=) sets the same scope as the setters
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor([128, 256], pypto.DT_FP16), w: pypto.Tensor([256, 64], pypto.DT_FP16),\n"
        "      y: pypto.Tensor([128, 64], pypto.DT_FP32)):\n"
        "    pypto.set_options(vec_tile_shapes=[32, 64], cube_tile_shapes=[[32, 64], [128, 256], [64, 64]])\n"
        "    y[:] = pypto.exp(pypto.matmul(x, w, pypto.DT_FP32))\n",
        # a helper under @pypto.options(vec_tile_shapes=...) runs in that scope
        "import pypto\n\n@pypto.options(vec_tile_shapes=[16, 64])\ndef act(x):\n    return pypto.exp(x) * 2.0\n\n"
        "@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor([64, 64], pypto.DT_FP32), y: pypto.Tensor([64, 64], pypto.DT_FP32)):\n"
        "    y[:] = act(x)\n",
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 32)\n"
        "    out[:] = a + 1.0\n",
        # module-level tile: the global scope every kernel inherits
        "import pypto as pto\n\npto.set_vec_tile_shapes(32, 32)\n\n@pto.frontend.jit\n"
        "def k(a: pto.Tensor((64, 64), pto.DT_FP32), out: pto.Tensor((64, 64), pto.DT_FP32)):\n"
        "    out[:] = pto.exp(a)\n",
        # set by the host function that calls the kernel
        "import pypto\nfrom pypto.frontend import jit\n\n@jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    out[:] = a * a\n\n"
        "def main(a, out):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n"
        "    k(a, out)\n",
        # set by a plain helper the kernel calls
        "import pypto\n\ndef configure():\n    pypto.set_vec_tile_shapes(16, 64)\n"
        "    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])\n\n"
        "@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), b: pypto.Tensor((64, 64), pypto.DT_FP16),\n"
        "      c: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    configure()\n"
        "    c[:] = pypto.relu(pypto.matmul(a, b, pypto.DT_FP32))\n",
        # unknown shapes and a tile from a parameter
        "from pypto import frontend\nimport pypto\n\n@frontend.jit\n"
        "def k(a: pypto.Tensor(), out: pypto.Tensor(), tile: tuple):\n"
        "    pypto.set_vec_tile_shapes(*tile)\n"
        "    out[:] = a + 1.0\n",
        # a frontend.function helper: its caller's tile is in effect
        "import pypto\n\n@pypto.frontend.function\n"
        "def act(x: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    return pypto.sigmoid(x)\n\n"
        "@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n"
        "    out[:] = act(a)\n",
        # tile set in one branch only: unknown afterwards, not "never set"
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32), big: bool):\n"
        "    if big:\n        pypto.set_vec_tile_shapes(64, 64)\n"
        "    out[:] = a + 1.0\n",
        # a loop inherits the outer tile; tile reset after a keepdim=False reduction
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64,), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(8, 64)\n"
        "    for i in pypto.loop(1, name='L', idx_name='i'):\n"
        "        s = pypto.sum(x, 1)\n"
        "        pypto.set_vec_tile_shapes(64)\n"
        "        out[:] = s * 0.5\n",
        # 4 dims, cube tiles with L1 a multiple of L0
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((2, 4, 64, 64), pypto.DT_FP32), out: pypto.Tensor((2, 4, 64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(1, 1, 32, 64)\n"
        "    pypto.set_cube_tile_shapes([16, 64], [32, 128], [64, 64], enable_split_k=True)\n"
        "    out[:] = a + a\n",
        # a 5-D tile under --target head (the repository's later version tiles 5-D tensors)
        Valid("import pypto\n\n@pypto.frontend.jit\n"
              "def k(a: pypto.Tensor((2, 2, 4, 16, 64), pypto.DT_FP32), out: pypto.Tensor((2, 2, 4, 16, 64), pypto.DT_FP32)):\n"
              "    pypto.set_vec_tile_shapes(1, 1, 2, 16, 64)\n"
              "    out[:] = a + a\n", settings={"target": "head"}),
        # k with separate L1 tiles for A and B (accepted by 0.2.0 and HEAD)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 128), pypto.DT_FP16), b: pypto.Tensor((128, 64), pypto.DT_FP16),\n"
        "      out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(64, 64)\n"
        "    pypto.set_cube_tile_shapes([64, 64], [64, 128, 128], [64, 64])\n"
        "    out[:] = pypto.matmul(a, b, pypto.DT_FP32)\n",
    ]
    INVALID = [
        # no vector tile at all
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    out[:] = a + 1.0\n",
            line=5, col=14,
        ),
        # the first op runs before the set call
        Case(
            "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    t = pypto.exp(a)\n"
            "    pypto.set_vec_tile_shapes(32, 32)\n"
            "    out[:] = t * 2.0\n",
            line=6, col=9,
        ),
        # matmul with no cube tile; `import pypto as pto`
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(a: pto.Tensor((64, 64), pto.DT_FP16), b: pto.Tensor((64, 64), pto.DT_FP16),\n"
            "      c: pto.Tensor((64, 64), pto.DT_FP16)):\n"
            "    c[:] = a @ b\n",
            line=6, col=12,
        ),
        # a 0 in the vector tile
        Case(
            "from pypto import frontend\nimport pypto\n\n@frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(0, 64)\n"
            "    out[:] = a + 1.0\n",
            line=6, col=5,
        ),
        # five dims
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(1, 1, 1, 32, 32)\n"
            "    out[:] = a + 1.0\n",
            line=5, col=5,
        ),
        # mL0 > mL1
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), b: pypto.Tensor((64, 64), pypto.DT_FP16),\n"
            "      c: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_cube_tile_shapes([64, 32], [64, 64], [64, 64])\n"
            "    c[:] = pypto.matmul(a, b, pypto.DT_FP32)\n",
            line=6, col=5,
        ),
        # one-element list, and kL1 not a multiple of kL0; inside a loop
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(a: pto.Tensor((64, 64), pto.DT_FP16), b: pto.Tensor((64, 64), pto.DT_FP16),\n"
            "      c: pto.Tensor((64, 64), pto.DT_FP32)):\n"
            "    for i in pto.loop(1, name='L', idx_name='i'):\n"
            "        pto.set_cube_tile_shapes([16], [32, 48], [32, 32])\n"
            "        c[:] = pto.matmul(a, b, pto.DT_FP32)\n",
            line=7, col=9,
        ),
        # legacy `with pypto.function` body without any tile
        Case(
            "import pypto\n\nx = pypto.tensor([32, 32], pypto.DT_FP32, 'x')\n"
            "y = pypto.tensor([32, 32], pypto.DT_FP32, 'y')\n"
            "with pypto.function('k', x, y):\n"
            "    for _ in pypto.loop(1, name='L', idx_name='i'):\n"
            "        y[:] = pypto.abs(x)\n",
            line=7, col=16,
        ),
    ]

    def check(self, ctx: LintContext):
        missing: dict = {}  # (kind, op node) -> (first OpFact, [kernel names]); one report per node
        for kernel in ctx.model.kernels:
            for fact in kernel.tile_sets:
                problems = (self._vec_problems(fact.dims, MAX_VEC_DIMS.get(ctx.settings.target, 4))
                            if fact.kind == "vec" else self._cube_problems(fact.dims))
                if problems:
                    what = "vector" if fact.kind == "vec" else "cube"
                    yield self.diagnostic(
                        ctx.span(fact.node),
                        f"invalid {what} tile shape: " + "; ".join(problems),
                        help=self._set_help(fact.kind, ctx.source.segment(fact.node.func)),
                    )
            # pypto stops at the first op without a tile: report that one per kernel
            vec = next((op for op in kernel.ops if op.vector and op.vec_tile is None), None)
            cube = next((op for op in kernel.ops if op.op == "matmul" and op.cube_tile is None), None)
            for kind, op in (("vec", vec), ("cube", cube)):
                if op is not None:
                    missing.setdefault((kind, op.node), (op, []))[1].append(kernel)
        prefix = _pypto_prefix(ctx)
        for (kind, node), (op, kernels) in missing.items():
            yield self._missing(ctx, kind, op, kernels, prefix)

    # -- set calls ---------------------------------------------------------------------------
    @staticmethod
    def _vec_problems(dims, max_dims: int) -> list:
        if not isinstance(dims, tuple):
            return []
        problems = []
        if not dims:
            problems.append("no dims are given (vector ops need one tile dim per output dim)")
        if len(dims) > max_dims:
            problems.append(
                f"{len(dims)} dims, at most {max_dims} are supported" + (
                    " (pypto 0.2.0 accepts more in the setter, but vector ops handle tensors of at most 4 dims; "
                    "the repository's later version takes 5: --target head)" if max_dims == 4 else "")
            )
        zero = [i for i, d in enumerate(dims) if d == 0]
        negative = [i for i, d in enumerate(dims) if isinstance(d, int) and d < 0]
        if zero:
            problems.append(
                f"{_which(zero)} 0: pypto 0.2.0 accepts it here, then the next vector op "
                "fails with `F21004 op [...]tile shape not set`"
            )
        if negative:
            problems.append(
                f"{_which(negative)} negative ({', '.join(str(dims[i]) for i in negative)}); "
                "every tile dim must be > 0"
            )
        return problems

    @staticmethod
    def _cube_problems(dims) -> list:
        if not isinstance(dims, tuple) or len(dims) != 3:
            return []
        problems, relation = [], False
        for axis, pair in zip("mkn", dims):
            if pair is None:
                continue  # not a literal list: unknown
            # k may also be [kL0, kL1a, kL1b] (the L1 tiles of A and B): pypto 0.2.0 and HEAD accept it
            if len(pair) != 2 and not (axis == "k" and len(pair) == 3):
                shape = f"[{axis}L0, {axis}L1]" + (" or [kL0, kL1a, kL1b]" if axis == "k" else "")
                problems.append(
                    f"`{axis}` has {len(pair)} element{'s' if len(pair) != 1 else ''}, it must be "
                    f"{shape} (pypto 0.2.0: `ValueError: {axis} must have exactly 2 elements, "
                    f"got {len(pair)}`)"
                )
                continue
            for l1 in pair[1:]:
                found, bad_relation = _pair_problems(axis, pair[0], l1)
                problems += [p for p in found if p not in problems]
                relation = relation or bad_relation
        if relation:
            problems.append("pypto rejects the matmul (`FC4000 ... Invalid L1/L0 relation`)")
        return problems

    @staticmethod
    def _set_help(kind: str, setter: str) -> str:
        if kind == "vec":
            return f"use 1 to 4 positive dims, one per dim of the ops' outputs, e.g. `{setter}(32, 64)`"
        return f"use `{setter}([mL0, mL1], [kL0, kL1], [nL0, nL1])` with 0 < L0 <= L1 and L1 % L0 == 0"

    # -- ops without a tile --------------------------------------------------------------------
    def _missing(self, ctx, kind, op, kernels, prefix):
        outside = [k.name for k in kernels if not _inside(op.node, k.node)]
        via = f" (reached from kernel {', '.join(f'`{n}`' for n in outside)})" if outside else ""
        if kind == "vec":
            rank = op.out.rank if op.out is not None else None
            dims = f"<{rank} dims>" if rank else "..."
            return self.diagnostic(
                ctx.span(op.node),
                f"`{op.op}` is created with no vector tile shape set{via}; pypto 0.2.0 raises "
                "`F21004 op [...]tile shape not set` here",
                help=f"call `{prefix}set_vec_tile_shapes({dims})` before the first vector op "
                "(in the kernel, a helper it calls, or at module level)",
            )
        return self.diagnostic(
            ctx.span(op.node),
            f"matmul with no cube tile shape set{via}; pypto 0.2.0 raises `FC4000 Invalid tile values: "
            "kL0=0, kL1a=0, kL1b=0, mL0=0, mL1=0, nL0=0, nL1=0`",
            help=f"call `{prefix}set_cube_tile_shapes([mL0, mL1], [kL0, kL1], [nL0, nL1])` before the matmul",
        )


def _which(indices) -> str:
    """``[0]`` -> "the 1st dim is", ``[0, 2]`` -> "the 1st and 3rd dims are"."""
    names = [f"{i + 1}{'st' if i == 0 else 'nd' if i == 1 else 'rd' if i == 2 else 'th'}" for i in indices]
    text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"the {text} dim{' is' if len(names) == 1 else 's are'}"


def _inside(node, outer) -> bool:
    """Whether ``node`` lies within the source lines of ``outer`` (a kernel's def or with)."""
    end = getattr(outer, "end_lineno", None) or outer.lineno
    return outer.lineno <= node.lineno <= end


def _pair_problems(axis: str, l0, l1) -> tuple:
    """(problems, whether an L0/L1 relation is broken) of one L0 tile against one L1 tile."""
    known = [v for v in (l0, l1) if isinstance(v, int)]
    if any(v <= 0 for v in known):
        return [f"{axis}L0={'?' if l0 is None else l0}, {axis}L1={'?' if l1 is None else l1}: tile values "
                "must be > 0 (pypto 0.2.0: `FC4000 Invalid tile values` when the matmul is created)"], False
    if len(known) == 2 and l0 > l1:
        return [f"{axis}L0={l0} > {axis}L1={l1}: the L0 tile must not exceed the L1 tile"], True
    if len(known) == 2 and l1 % l0:
        return [f"{axis}L1={l1} is not a multiple of {axis}L0={l0}"], True
    return [], False


RULE = TileShapeInvalid

