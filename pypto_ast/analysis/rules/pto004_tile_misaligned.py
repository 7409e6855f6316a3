"""PTO004 tile-misaligned."""

from __future__ import annotations

from math import gcd

from ...frontend import api
from ..rule import Case, LintContext, Rule, Valid

BLOCK = 32  # bytes: UB blocks and the cube's ND rows are 32-byte aligned


def _elements(size: int) -> int:
    """Elements of a dtype of ``size`` bytes in one 32-byte block (the alignment step)."""
    return BLOCK // gcd(BLOCK, size)


def _lcm(a: int, b: int) -> int:
    return a * b // gcd(a, b)


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def _reduces_last_axis(op, rank: int) -> bool:
    """Whether a reduction's ``dim`` is the last axis (the only case pypto 0.2.0 checks)."""
    axes = op.axis if isinstance(op.axis, (list, tuple)) else [op.axis]
    return any(isinstance(a, int) and not isinstance(a, bool) and a % rank == rank - 1 for a in axes)


def _splits_rows(tensor, last: int) -> bool:
    """Whether a tile of last dim ``last`` cuts the tensor's rows (a known last dim longer than it)."""
    shape = tensor.shape
    row = shape[-1] if shape else None
    return isinstance(row, int) and row > last


def _dtypes_text(items) -> str:
    return ", ".join(f"{dt.name} ({value * dt.size} B)" for dt, value in items)


class TileMisaligned(Rule):
    """
    ## What it does
    Checks the tile shapes set by ``pypto.set_vec_tile_shapes`` and
    ``pypto.set_cube_tile_shapes`` against the dtypes of the ops that use them:

    - vector tiles: the last tile dim used by an op, times the element size of each input
      and output dtype of that op, must be a multiple of 32 bytes
      (``tile[-1] * sizeof(dtype) % 32 == 0``). Reported for a reduction over the last axis
      (pypto 0.2.0 raises; ``--target head`` follows the repository's later version, which
      dropped that check), and for any other op when the tile cuts the tensor's rows off the
      32-byte grid (a tile covering whole rows, as in small unit tests, is left alone: no
      version checks it and no block is split; ``strict-alignment = true`` reports those too).
      Ops whose tiled tensor (the result, or the input of a reduction) has another rank than
      the tile are left to PTO003, and BOOL masks of comparisons are left out (0.2.0 compiles
      ``where(a > b, a, b)`` on FP32 with a 16-wide tile). The dtype read is that of the tensor the
      tile is laid over: the reduced input of a reduction (0.2.0's check), otherwise the op's
      *result* (the UB tile the op writes; the repository's tile-shape verifier reads the output
      operand), never another input: ``exp2`` of int8 with an ``[8, 8]`` tile writes 8 fp32 = 32 B
      per row and is aligned, as the official on-board tests run it;
    - cube tiles ``m = [mL0, mL1]``, ``k = [kL0, kL1]``, ``n = [nL0, nL1]``: each of the six
      values times the matmul input dtype size must be 32-byte aligned, and at least 16
      elements for FP16/BF16/FP32 inputs (32 for 1-byte inputs).

    It reports once per set call, at the call, and is silent when the tile or the dtype
    is unknown.

    ## Why is this bad?
    The vector unit moves and computes whole 32-byte blocks. For a reduction pypto 0.2.0
    raises at trace time (`FC1001 Reduce op: the tileShape of last axis need to 32Byte
    align!`); for elementwise ops 0.2.0 accepts the tile without a word, although the
    ``set_vec_tile_shapes`` constraints require the alignment for every operand. Cube tiles:
    0.2.0 rejects a kL0 or nL0 that is not a multiple of 16 elements when it creates the
    matmul (`FC4001 kL0(8) and nL0(8) must be aligned to 16 elements`); the other values are
    documented constraints of ``set_cube_tile_shapes`` (DT_FP32 inputs need 16 elements).

    ## Example
    ```python
    pypto.set_vec_tile_shapes(4, 4)          # 4 * 4 B = 16 B
    out[:] = pypto.sum(x_fp32, -1, keepdim=True)
    ```

    ## Use instead
    ```python
    pypto.set_vec_tile_shapes(4, 8)          # 8 * 4 B = 32 B
    out[:] = pypto.sum(x_fp32, -1, keepdim=True)
    ```

    ## Fix safety
    No fix is offered: a different tile changes the schedule, the number of tiles and the
    UB footprint; the rule suggests the nearest aligned value instead.

    ## References
    PyPTO FAQ: tileshape-32byte-alignment; `pypto.set_vec_tile_shapes` and
    `pypto.set_cube_tile_shapes` API pages; `pypto-0.2-behaviour.md` pitfall 6.
    """

    code = "PTO004"
    name = "tile-misaligned"
    summary = "the last tile dim (or a cube tile value) is not 32-byte aligned for the dtype it is used with"
    fix_availability = "none"
    VALID = [
        # fp32: 8 * 4 B = 32 B
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 1), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(4, 8)\n"
        "    out[:] = pypto.sum(x, -1, keepdim=True)\n",
        # fp16: 16 * 2 B = 32 B
        "import pypto as pto\n\n@pto.frontend.jit\n"
        "def k(a: pto.Tensor((32, 64), pto.DT_FP16), out: pto.Tensor((32, 64), pto.DT_FP16)):\n"
        "    pto.set_vec_tile_shapes(8, 16)\n"
        "    out[:] = a + a\n",
        # dtype unknown (pypto.Tensor() annotations): silent
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor(), out: pypto.Tensor()):\n"
        "    pypto.set_vec_tile_shapes(4, 4)\n"
        "    out[:] = pypto.exp(a)\n",
        # tile set at module level: no set call inside the kernel to check against ops
        "import pypto\n\npypto.set_vec_tile_shapes(4, 7)\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    out[:] = a * 2.0\n",
        # a misaligned tile that no op uses (reset before any op)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(4, 7)\n"
        "    pypto.set_vec_tile_shapes(4, 16)\n"
        "    out[:] = a - 1.0\n",
        # keepdim=False: the reduction is tiled by the 2-D tile (64 * 4 B), the 1-D op by the reset one
        "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
        "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64,), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(4, 64)\n"
        "    s = pypto.amax(x, -1)\n"
        "    pypto.set_vec_tile_shapes(64)\n"
        "    out[:] = s + 1.0\n",
        # a reduction over another axis than the last (a column of row sums): 0.2.0 does not check it
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor((512, 1), pypto.DT_FP32), out: pypto.Tensor((1, 1), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(512, 1)\n"
        "    out[:] = pypto.sum(x, dim=0, keepdim=True)\n",
        # the middle axis of a 3-D reduction (a 170-element last dim is not the reduced one)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor((1, 96, 170), pypto.DT_FP32), out: pypto.Tensor((1, 1, 170), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(1, 96, 170)\n"
        "    out[:] = pypto.sum(x, dim=1, keepdim=True)\n",
        # the FAQ's reduction under --target head: the repository's later version dropped FC1001 (5da9f5d)
        Valid("import pypto\n\n@pypto.frontend.jit\n"
              "def k(x: pypto.Tensor((4, 4), pypto.DT_FP32), out: pypto.Tensor((4, 1), pypto.DT_FP32)):\n"
              "    pypto.set_vec_tile_shapes(4, 4)\n"
              "    out[:] = pypto.sum(x, -1, keepdim=True)\n", settings={"target": "head"}),
        # a tile covering whole short rows: nothing raises, no block is split (unit-test sizes)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((8, 8), pypto.DT_FP16), out: pypto.Tensor((8, 8), pypto.DT_FP16)):\n"
        "    pypto.set_vec_tile_shapes(8, 8)\n"
        "    out[:] = pypto.sigmoid(a)\n",
        # a real transpose(0, 1) whose tile covers the rows
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((4, 4), pypto.DT_FP32), out: pypto.Tensor((4, 4), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(4, 4)\n"
        "    out[:] = pypto.transpose(a, 0, 1)\n",
        # a helper sets an aligned tile
        "import pypto\n\ndef rows(n):\n    pypto.set_vec_tile_shapes(n, 32)\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), out: pypto.Tensor((64, 64), pypto.DT_FP16)):\n"
        "    rows(4)\n"
        "    out[:] = pypto.relu(a)\n",
        # a 3-D tile on a 2-D op: a rank question, not an alignment one
        "from pypto import frontend\nimport pypto\n\n@frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(1, 32, 5)\n"
        "    out[:] = a + a\n",
        # the BOOL mask of a comparison is not checked (16 B here); fp32 operands are aligned
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), b: pypto.Tensor((32, 32), pypto.DT_FP32),\n"
        "      c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n"
        "    c[:] = pypto.where(a > b, a, b)\n",
        # near miss: fp16 input cast to fp32 with 8 columns: the result's rows are 8 * 4 B = 32 B
        "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 8)\n"
        "    out[:] = pypto.cast(a, pypto.DT_FP32)\n",
        # near miss: exp2 of int8 (8 B a row) writes fp32 (32 B a row), the tile cutting 64-wide rows
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_INT8), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(8, 8)\n"
        "    out[:] = pypto.exp2(a)\n",
        # cube tiles: fp16, all multiples of 16 elements
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((128, 256), pypto.DT_FP16), b: pypto.Tensor((256, 128), pypto.DT_FP16),\n"
        "      c: pypto.Tensor((128, 128), pypto.DT_FP32)):\n"
        "    pypto.set_cube_tile_shapes([64, 128], [64, 256], [128, 128])\n"
        "    c[:] = pypto.matmul(a, b, pypto.DT_FP32)\n",
        # cube tiles set from unknown values
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((128, 256), pypto.DT_FP16), b: pypto.Tensor((256, 128), pypto.DT_FP16),\n"
        "      c: pypto.Tensor((128, 128), pypto.DT_FP32), m: list):\n"
        "    pypto.set_cube_tile_shapes(m, [64, 256], [128, 128])\n"
        "    c[:] = pypto.matmul(a, b, pypto.DT_FP32)\n",
    ]
    INVALID = [
        # the same reduction under the default target (0.2.0): FC1001 even when the tile covers the row
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor((4, 4), pypto.DT_FP32), out: pypto.Tensor((4, 1), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(4, 4)\n"
            "    out[:] = pypto.sum(x, -1, keepdim=True)\n",
            line=5, col=5,
        ),
        # strict-alignment: a tile covering whole short rows is reported too
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((8, 8), pypto.DT_FP16), out: pypto.Tensor((8, 8), pypto.DT_FP16)):\n"
            "    pypto.set_vec_tile_shapes(8, 8)\n"
            "    out[:] = pypto.sigmoid(a)\n",
            line=5, col=5, settings={"strict_alignment": True},
        ),
        # FAQ case: fp32 reduction with last tile dim 4 (16 B)
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 1), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(4, 4)\n"
            "    out[:] = pypto.sum(x, -1, keepdim=True)\n",
            line=5, col=5,
        ),
        # elementwise fp32, 12 * 4 B = 48 B, inside a loop; `import pypto as pto`
        Case(
            "import pypto as pto\n\n@pto.frontend.jit()\n"
            "def k(a: pto.Tensor((64, 64), pto.DT_FP32), out: pto.Tensor((64, 64), pto.DT_FP32)):\n"
            "    for i in pto.loop(1, name='L', idx_name='i'):\n"
            "        pto.set_vec_tile_shapes(8, 12)\n"
            "        out[:] = pto.exp(a)\n",
            line=6, col=9,
        ),
        # fp32 input cast to fp16: the result's 8 elements are 16 B (the input's 32 B do not count)
        Case(
            "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP16)):\n"
            "    pypto.set_vec_tile_shapes(16, 8)\n"
            "    out[:] = pypto.cast(a, pypto.DT_FP16)\n",
            line=6, col=5,
        ),
        # int16 elementwise: the result is int16, 8 elements are 16 B, and the tile cuts 64-wide rows
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((64,), pypto.DT_INT16), out: pypto.Tensor((64,), pypto.DT_INT16)):\n"
            "    pypto.set_vec_tile_shapes(8)\n"
            "    out[:] = pypto.bitwise_not(a)\n",
            line=5, col=5,
        ),
        # the set call sits in a plain helper: reported there
        Case(
            "from pypto import frontend\nimport pypto\n\ndef tiles():\n    pypto.set_vec_tile_shapes(2, 10)\n\n"
            "@frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    tiles()\n"
            "    out[:] = a * a\n",
            line=5, col=5,
        ),
        # cube tiles for fp16: kL0 = nL0 = 8 elements (16 B)
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), b: pypto.Tensor((64, 64), pypto.DT_FP16),\n"
            "      c: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_cube_tile_shapes([16, 16], [8, 8], [8, 8])\n"
            "    c[:] = pypto.matmul(a, b, pypto.DT_FP32)\n",
            line=6, col=5,
        ),
        # cube tiles for fp32 inputs need 16 elements: mL0 = 8 is 32 B but only 8 elements
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(a: pto.Tensor((64, 64), pto.DT_FP32), b: pto.Tensor((64, 64), pto.DT_FP32),\n"
            "      c: pto.Tensor((64, 64), pto.DT_FP32)):\n"
            "    pto.set_cube_tile_shapes([8, 32], [32, 64], [32, 64])\n"
            "    c[:] = a @ b\n",
            line=6, col=5,
        ),
    ]

    def check(self, ctx: LintContext):
        # one report per set call and value: a helper's call traced by several kernels merges
        groups: dict = {}
        for kernel in ctx.model.kernels:
            for fact in kernel.tile_sets:
                if isinstance(fact.dims, tuple):
                    groups.setdefault((fact.node, fact.kind, fact.dims), []).extend(fact.uses)
        for (node, kind, dims), uses in groups.items():
            if not uses:
                continue
            check = self._check_vec if kind == "vec" else self._check_cube
            diag = check(ctx, node, dims, uses)
            if diag is not None:
                yield diag

    # -- vector tiles ------------------------------------------------------------------------
    def _check_vec(self, ctx, node, tile, uses):
        last = tile[-1] if tile else None
        if not isinstance(last, int) or last <= 0:
            return None
        bad: dict = {}  # dtypes the last dim is misaligned for (ordered set)
        reduce = False
        checks_reduce = ctx.settings.target == "0.2.0"  # the repository's later version dropped FC1001
        for op in uses:
            tiled = op.inputs[0] if op.op in api.REDUCE and op.inputs else op.out
            if tiled is None or tiled.rank != len(tile):
                continue  # unknown, or a tile of another rank (PTO003; extra leading dims)
            enforced = checks_reduce and op.op in api.REDUCE and _reduces_last_axis(op, tiled.rank)
            if not enforced and not ctx.settings.strict_alignment and not _splits_rows(tiled, last):
                continue  # nothing raises, and the tile covers whole rows: no block is split
            # which dtype: the tensor the tile is laid over -- the reduced input of a reduction (what
            # 0.2.0's FC1001 reads), else the op's result (the UB tile the op writes, what the
            # repository's tile-shape verifier reads: the output operand); not the other inputs
            checked = [op.inputs[0]] if op.op in api.REDUCE and op.inputs else [op.out] if op.out is not None else []
            for t in checked:
                dt = t.dtype
                if dt is not None and dt.size and dt != api.BOOL and last * dt.size % BLOCK:
                    bad[dt] = None
                    reduce = reduce or enforced
        if not bad:
            return None
        step = 1
        for dt in bad:
            step = _lcm(step, _elements(dt.size))
        aligned = _round_up(last, step)
        effect = (
            "pypto 0.2.0 raises `FC1001 Reduce op: the tileShape of last axis need to 32Byte align!` "
            "when it traces the reduction"
            if reduce else
            "pypto does not check it here, but `set_vec_tile_shapes` requires "
            "`tile[-1] * sizeof(dtype) % 32 == 0`: the tile splits each row off the 32-byte grid"
        )
        setter = ctx.source.segment(node.func) or "pypto.set_vec_tile_shapes"
        fixed = list(tile[:-1]) + [aligned]
        if all(isinstance(d, int) for d in fixed):
            help = f"round it up to a multiple of {step} elements: `{setter}({', '.join(map(str, fixed))})`"
        else:
            help = f"round the last dim up to a multiple of {step} elements: {aligned}"
        return self.diagnostic(
            ctx.span(node),
            f"last dim of vector tile {self._tile_text(tile)} is not 32-byte aligned: {last} elements of "
            f"{_dtypes_text((dt, last) for dt in bad)}; {effect}",
            help=help,
        )

    # -- cube tiles --------------------------------------------------------------------------
    def _check_cube(self, ctx, node, dims, uses):
        if len(dims) != 3:
            return None
        dtypes: dict = {}
        for op in uses:
            for t in op.inputs[:2]:
                if t.dtype is not None and t.dtype.size:
                    dtypes[t.dtype] = None
        if not dtypes:
            return None
        step = 1
        for dt in dtypes:
            step = _lcm(step, max(16, _elements(dt.size)))
        bad, suggestion = [], []
        for axis, pair in zip("mkn", dims):
            if not isinstance(pair, tuple) or len(pair) != 2:
                return None  # malformed: PTO005's concern
            fixed = []
            for level, value in zip(("L0", "L1"), pair):
                if not isinstance(value, int) or value <= 0:
                    return None
                if value % step:
                    bad.append((f"{axis}{level}", value))
                    fixed.append(_round_up(value, step))
                else:
                    fixed.append(value)
            suggestion.append(fixed)
        if not bad:
            return None
        names = ", ".join(dt.name for dt in dtypes)
        values = ", ".join(
            f"{name}={value} ({', '.join(f'{value * dt.size} B' for dt in dtypes)})" for name, value in bad
        )
        checked = [name for name, value in bad if name in ("kL0", "nL0") and value % 16]
        effect = (
            f"pypto 0.2.0 rejects {' and '.join(checked)} when it creates the matmul "
            "(`FC4001 ... must be aligned to 16 elements`)"
            if checked else "a documented `set_cube_tile_shapes` constraint"
        )
        setter = ctx.source.segment(node.func) or "pypto.set_cube_tile_shapes"
        args = ", ".join(f"[{a}, {b}]" for a, b in suggestion)
        return self.diagnostic(
            ctx.span(node),
            f"cube tile values not aligned for {names} inputs (need multiples of {step} elements, "
            f"32-byte aligned): {values}; {effect}",
            help=f"round up to multiples of {step}: `{setter}({args})`",
        )

    @staticmethod
    def _tile_text(tile) -> str:
        return "[" + ", ".join("?" if d is None else str(d) for d in tile) + "]"


RULE = TileMisaligned
