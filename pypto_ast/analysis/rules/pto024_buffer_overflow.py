"""PTO024 buffer-overflow."""

from __future__ import annotations

from typing import Optional

from ...diagnostics import Note
from ...frontend import api
from ...frontend.facts import OpFact
from ...socs import get_soc
from ..rule import Case, LintContext, Rule

_HEAD = "import pypto\n\n@pypto.frontend.jit\n"


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n % 1024 else f"{n // 1024} KiB"


def _tile_bytes(tensor, tile) -> Optional[int]:
    """Bytes of one tile of ``tensor``: the tile's leading dims over the tensor's rank, each
    clipped to the tensor's extent (a tile bigger than the tensor holds the tensor)."""
    if tensor is None or tensor.shape is None or tensor.dtype is None or not tensor.dtype.size:
        return None
    if len(tile) < len(tensor.shape):
        return None  # a rank mismatch: PTO003's business
    count = 1
    for dim, size in zip(tensor.shape, tile):
        if not isinstance(size, int) or size <= 0:
            return None
        count *= min(size, dim) if isinstance(dim, int) and dim > 0 else size
    return count * tensor.dtype.size


def _vector_need(op: OpFact) -> Optional[tuple]:
    """(bytes, what): a lower bound of the UB one vector op needs with the tile in effect: its
    tensor inputs are live together, and its result may reuse one of them, so the larger of
    the inputs' tiles summed and the result's tile."""
    tile = op.vec_tile
    if not isinstance(tile, tuple):
        return None
    ins = []
    seen: set = set()
    for t in op.inputs:
        if getattr(t, "ident", id(t)) in seen:
            continue
        seen.add(getattr(t, "ident", id(t)))
        b = _tile_bytes(t, tile)
        if b is None:
            return None
        ins.append(b)
    out = _tile_bytes(op.out, tile) if op.out is not None and op.op not in api.REDUCE else 0
    if out is None:
        return None
    total_in = sum(ins)
    if total_in >= out:
        what = f"{len(ins)} input tile{'s' if len(ins) != 1 else ''} of {' + '.join(_kib(b) for b in ins)}"
        return total_in, what
    return out, f"the result tile of {_kib(out)}"


def _align(n: int, to: int) -> int:
    return -(-n // to) * to


def _mkn(op: OpFact) -> Optional[tuple]:
    """(M, K, N) of a matmul from its result and left operand, when static."""
    out = op.out.shape if op.out is not None else None
    a = op.inputs[0].shape if op.inputs else None
    if out is None or a is None or len(out) < 2 or len(a) < 2:
        return None
    m, n = out[-2], out[-1]
    if not all(isinstance(d, int) and d > 0 for d in (m, n, a[-1], a[-2])):
        return None
    k = a[-1] if a[-2] == m else a[-2]  # a is (M, K) or, transposed, (K, M)
    return m, k, n


def _cube_overflows(op: OpFact, soc) -> list:
    """The cube buffers a matmul's tiles overflow: (name, bytes, capacity) (pypto-dsl.md §10.2)."""
    cube = op.cube_tile
    if not isinstance(cube, tuple) or len(cube) != 3 or not op.inputs:
        return []
    a = op.inputs[0]
    b = op.inputs[1] if len(op.inputs) > 1 else a
    if a.dtype is None or not a.dtype.size or b.dtype is None or not b.dtype.size:
        return []
    m, k, n = cube
    if not all(isinstance(x, tuple) and len(x) >= 2 and all(isinstance(v, int) and v > 0 for v in x) for x in (m, k, n)):
        return []
    unit = 32 if a.dtype.size == 1 else 16
    sa, sb = a.dtype.size, b.dtype.size
    ml0, ml1 = m[0], m[1]
    kl0, kl1a = k[0], k[1]
    kl1b = k[2] if len(k) > 2 else k[1]
    nl0, nl1 = n[0], n[1]
    # a tile past the matrix holds the matrix: clip to M, K, N where the shapes are known
    dims = _mkn(op)
    if dims is None:
        return []  # the tiles may be clipped to a smaller matrix: nothing certain
    mm, kk, nn = dims
    ml0, ml1, nl0, nl1 = min(ml0, mm), min(ml1, mm), min(nl0, nn), min(nl1, nn)
    kl0, kl1a, kl1b = min(kl0, kk), min(kl1a, kk), min(kl1b, kk)
    found = []
    checks = (
        ("L0A", _align(ml0, unit) * _align(kl0, unit) * sa, soc.l0a),
        ("L0B", _align(nl0, unit) * _align(kl0, unit) * sb, soc.l0b),
        ("L0C", _align(ml0, 16) * _align(nl0, 16) * 4, soc.l0c),
        ("L1", _align(ml1, unit) * _align(kl1a, unit) * sa + _align(nl1, unit) * _align(kl1b, unit) * sb, soc.l1),
    )
    for name, need, cap in checks:
        if need > cap:
            found.append((name, need, cap))
    return found


class BufferOverflow(Rule):
    """
    ## What it does
    Checks the tile shapes in effect at each op against the SoC's on-chip memories (Atlas A2 by
    default; ``soc = "ascend910_93"`` in ``[tool.pypto-lint]`` for A3, the same sizes):

    - a vector op: its tensor inputs' tiles must be in UB together (192 KiB), and its result's
      tile at least (it may reuse an input's buffer). Each tile is the tile shape clipped to the
      tensor's extent, times the tensor's element size. This is a lower bound of what pypto's
      plan needs, so a report is certain to fail;
    - a matmul (``set_cube_tile_shapes(m, k, n)``): ``align(mL0)·align(kL0)·sizeof(A)`` within
      L0A (64 KiB), ``align(nL0)·align(kL0)·sizeof(B)`` within L0B (64 KiB),
      ``align(mL0)·align(nL0)·4`` within L0C (128 KiB, the fp32/int32 accumulator) and the two L1
      tiles within L1 (512 KiB); ``align`` rounds up to 16 elements (32 for 1-byte inputs), and
      a tile value past the matrix's M, K or N counts as that extent.

    Unknown shapes (a matmul's M, K, N included: its tiles may be clipped), dtypes or tiles are
    left alone. The 32-byte alignment of the values is
    PTO004's, their relations (``L0 <= L1``) PTO005's.

    ## Why is this bad?
    pypto 0.2.0 accepts the tiles when the op is created and fails deep in a pass, at compile
    time, with an allocation error (`Alloc tensor [..] size [1048576] exceeds MEM_UB size
    [196608]`, `Alloc tensor size [131072] exceeds MEM_L0B size [65536]` for 256³ cube tiles):
    after the whole graph was built, with a message that names no line of the kernel.

    ## Example
    ```python
    pypto.set_vec_tile_shapes(256, 1024)      # one fp32 tile is 1 MiB
    y[:] = x * 2.0
    ```

    ## Use instead
    ```python
    pypto.set_vec_tile_shapes(32, 1024)       # 128 KiB
    ```

    ## Fix safety
    No fix is offered: the tile shape is the author's schedule.

    ## References
    `pypto-dsl.md` §10.1 (capacity), §10.2 (cube space), §10.4 (hardware numbers); ascendc.md §1.2.
    """

    code = "PTO024"
    name = "buffer-overflow"
    summary = "a tile shape whose buffers cannot fit the SoC's UB, L0A/L0B/L0C or L1"
    VALID = [
        _HEAD + "def k(x: pypto.Tensor([1024, 1024], pypto.DT_FP32), y: pypto.Tensor([1024, 1024], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 1024)\n    y[:] = x * 2.0\n",
        # a big tile over a small tensor holds the tensor only
        _HEAD + "def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), y: pypto.Tensor([8, 64], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(1024, 1024)\n    y[:] = x + x\n",
        # two inputs of 64 KiB and a result reusing one: 128 KiB
        _HEAD + "def k(a: pypto.Tensor([512, 128], pypto.DT_FP32), b: pypto.Tensor([512, 128], pypto.DT_FP32),\n"
        "      y: pypto.Tensor([512, 128], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(128, 128)\n    y[:] = a + b\n",
        # cube tiles of the matmul guide
        _HEAD + "def k(a: pypto.Tensor([512, 512], pypto.DT_FP16), b: pypto.Tensor([512, 512], pypto.DT_FP16),\n"
        "      y: pypto.Tensor([512, 512], pypto.DT_FP32)):\n"
        "    pypto.set_cube_tile_shapes([128, 128], [64, 256], [128, 128])\n"
        "    y[:] = pypto.matmul(a, b, pypto.DT_FP32)\n",
        # L1 tiles past a small matrix hold the matrix only
        _HEAD + "def k(a: pypto.Tensor([64, 512], pypto.DT_BF16), b: pypto.Tensor([512, 64], pypto.DT_BF16),\n"
        "      y: pypto.Tensor([64, 64], pypto.DT_BF16)):\n"
        "    pypto.set_cube_tile_shapes([128, 512], [256, 512], [64, 64])\n"
        "    y[:] = pypto.matmul(a, b, pypto.DT_BF16)\n",
        # unknown shapes: nothing to check
        _HEAD + "def k(x: pypto.Tensor(), y: pypto.Tensor()):\n"
        "    pypto.set_vec_tile_shapes(4096, 4096)\n    y[:] = x * 2.0\n",
    ]
    INVALID = [
        # the 0.2.0 case: one fp32 tile of 256 x 1024 is 1 MiB
        Case(_HEAD + "def k(x: pypto.Tensor([1024, 1024], pypto.DT_FP32), y: pypto.Tensor([1024, 1024], pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(256, 1024)\n    y[:] = x * 2.0\n", line=5, col=5),
        # two inputs of 128 KiB each: 256 KiB live together
        Case(_HEAD + "def k(a: pypto.Tensor([512, 256], pypto.DT_FP32), b: pypto.Tensor([512, 256], pypto.DT_FP32),\n"
             "      y: pypto.Tensor([512, 256], pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(128, 256)\n    y[:] = a + b\n", line=6, col=5),
        # 256^3 fp16 cube tiles: L0A and L0B 128 KiB each, L0C 256 KiB
        Case(_HEAD + "def k(a: pypto.Tensor([512, 512], pypto.DT_FP16), b: pypto.Tensor([512, 512], pypto.DT_FP16),\n"
             "      y: pypto.Tensor([512, 512], pypto.DT_FP32)):\n"
             "    pypto.set_cube_tile_shapes([256, 256], [256, 256], [256, 256])\n"
             "    y[:] = pypto.matmul(a, b, pypto.DT_FP32)\n", line=6, col=5),
        # inside a loop, through an alias
        Case("import pypto as pto\n\n@pto.frontend.jit\n"
             "def k(x: pto.Tensor([4096, 2048], pto.DT_FP16), y: pto.Tensor([4096, 2048], pto.DT_FP16)):\n"
             "    for i in pto.loop(16, name='rows', idx_name='i'):\n"
             "        pto.set_vec_tile_shapes(256, 2048)\n"
             "        blk = pto.view(x, [256, 2048], [i * 256, 0])\n"
             "        pto.assemble(pto.exp(blk), [i * 256, 0], y)\n", line=6, col=9),
    ]

    def check(self, ctx: LintContext):
        try:
            soc = get_soc(getattr(ctx.settings, "soc", None))
        except KeyError:
            soc = get_soc()
        reported: set = set()
        for kernel in ctx.model.kernels:
            for op in kernel.ops:
                if op.op in api.MATMUL:
                    for name, need, cap in _cube_overflows(op, soc):
                        key = (id(op.cube_tile_node or op.node), name)
                        if key in reported:
                            continue
                        reported.add(key)
                        yield self._report(ctx, op, op.cube_tile_node,
                                           f"cube tiles need {_kib(need)} of {name} for this `{op.op}` "
                                           f"({soc.name} has {_kib(cap)})",
                                           "use smaller L0/L1 tiles (pypto-dsl.md §10.2 gives each buffer's formula)")
                elif op.vector:
                    got = _vector_need(op)
                    if got is None or got[0] <= soc.ub:
                        continue
                    key = (id(op.vec_tile_node or op.node), "UB")
                    if key in reported:
                        continue
                    reported.add(key)
                    need, what = got
                    yield self._report(ctx, op, op.vec_tile_node,
                                       f"vector tile {list(op.vec_tile)} needs at least {_kib(need)} of UB for this "
                                       f"`{op.op}` ({what}); {soc.name}'s UB is {_kib(soc.ub)}",
                                       "use a smaller tile: the tiles an op reads must fit in UB together")

    def _report(self, ctx, op, set_node, message, help_text):
        node = set_node if set_node is not None else op.node
        notes = (Note(f"the `{op.op}` is here", ctx.span(op.node)),) if set_node is not None else ()
        return self.diagnostic(ctx.span(node), message + ": pypto fails at compile time with an "
                               "allocation error", help=help_text, notes=notes)


RULE = BufferOverflow
