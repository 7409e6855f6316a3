"""PTO013 subgraph-too-large."""

from __future__ import annotations

from typing import Optional

from ...frontend import api
from ...diagnostics import Severity, format_count
from ...frontend.facts import OpFact
from ..rule import Case, LintContext, Rule, Valid

TOP = 3  # contributors named in the message


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _vector_tiles(op: OpFact) -> Optional[int]:
    """prod(ceil(dim / tile)) over the tiled tensor (the input of a reduction, else the output)."""
    tile = op.vec_tile
    if not isinstance(tile, tuple):
        return None
    tensor = op.inputs[0] if op.op in api.REDUCE and op.inputs else op.out
    shape = tensor.shape if tensor is not None else None
    if shape is None or len(tile) < len(shape):
        return None  # unknown, or a rank mismatch (PTO003): no count
    count = 1
    for dim, size in zip(shape, tile):  # tile dims beyond the rank are ignored
        if not isinstance(dim, int) or not isinstance(size, int) or dim < 0 or size <= 0:
            return None
        count *= _ceil_div(dim, size)
    return count


def _matmul_tiles(op: OpFact) -> Optional[int]:
    """ceil(M/mL0) * ceil(N/nL0) * ceil(K/kL0), times the batch dims of a 3-D/4-D matmul."""
    cube = op.cube_tile
    if not isinstance(cube, tuple) or len(cube) != 3:
        return None
    l0 = []
    for pair in cube:
        if not isinstance(pair, tuple) or len(pair) != 2 or not isinstance(pair[0], int) or pair[0] <= 0:
            return None
        l0.append(pair[0])
    m_l0, k_l0, n_l0 = l0
    out = op.out.shape if op.out is not None else None
    a = op.inputs[0].shape if op.inputs else None
    if out is None or a is None or len(out) < 2 or len(a) < 2:
        return None
    dims = list(out) + list(a[-2:])
    if not all(isinstance(d, int) and d > 0 for d in dims):
        return None
    m, n = out[-2], out[-1]
    if (a[-2] * a[-1]) % m:
        return None
    k = a[-2] * a[-1] // m  # a is (M, K) or, transposed, (K, M)
    batch = 1
    for d in out[:-2]:
        batch *= d
    return batch * _ceil_div(m, m_l0) * _ceil_div(n, n_l0) * _ceil_div(k, k_l0)


class SubgraphTooLarge(Rule):
    """
    ## What it does
    Estimates, for each loop body of a kernel (each ``pypto.loop`` / ``loop_unroll`` body
    and the kernel body outside any loop), how many tile operations pypto generates, and
    reports the loop when the estimate exceeds the budget (default 18000, configurable as
    ``subgraph-budget`` in ``[tool.pypto-lint]``).

    For each op directly in the body (ops of nested pypto loops count for those loops):

    - vector op: ``prod(ceil(dim / tile_dim))`` over the output dims (the input dims for a
      reduction) with the vector tile in effect; tile dims beyond the tensor's rank are
      ignored, as pypto uses the leading ones;
    - matmul: ``ceil(M / mL0) * ceil(N / nL0) * ceil(K / kL0)`` from the cube tile (times the
      batch dims of a 3-D/4-D matmul);

    times ``1 + the number of tensor inputs``, times the static repetitions of the op
    (Python ``for`` over a range, ``unroll_list`` copies). Ops whose shapes or tiles are
    not known statically are left out rather than guessed, so the estimate is a lower bound.

    ## Why is this bad?
    This is the tiling guide's count rule: keep
    ``(tensor elems / tile elems) * (1 + inputs) < 18000``. Every tile of every op becomes
    code and expression-table entries of the compiled subgraph; past that size the online
    unrolling blows up compile time and, on device builds, the AI core function overflows
    its 32 KiB stack frame (`stack frame size exceeds limit (32768)`, PyPTO FAQ
    stack-overflow-compilation). The SIM mode never compiles AI core code, so the failure
    only appears on the NPU. The FAQ's remedy ``pass_options={"cycle_upper_bound": ...}``
    does not exist in pypto 0.2.0 (`TypeError: set_pass_options() got an unexpected
    keyword argument 'cycle_upper_bound'`); the fix is in the kernel.

    ## Example
    ```python
    @pypto.frontend.jit
    def kernel(a: pypto.Tensor((4096, 4096), pypto.DT_FP32),
               out: pypto.Tensor((4096, 4096), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)          # 32768 tiles x (1 + 1 input)
        out[:] = a * 2.0
    ```

    ## Use instead
    Process the tensor in blocks with a ``pypto.loop`` so one body handles a slice, and/or
    use bigger tiles (within the 192 KiB UB):
    ```python
        pypto.set_vec_tile_shapes(32, 512)
        for i in pypto.loop(16, name="rows", idx_name="i"):
            out[i * 256:(i + 1) * 256, :] = a[i * 256:(i + 1) * 256, :] * 2.0
    ```
    For a matmul, use bigger L0 tiles or split K across cores (``enable_split_k=True``, or
    an explicit loop over K blocks).

    ## Fix safety
    No fix is offered: restructuring loops and tiles changes the schedule.

    ## References
    PyPTO tiling tutorial (count rule); PyPTO FAQ: stack-overflow-compilation;
    `pypto-0.2-behaviour.md` pitfall 7.
    """

    code = "PTO013"
    name = "subgraph-too-large"
    summary = "a loop body creates more tile operations than the subgraph budget (32 KiB stack-frame risk)"
    severity = Severity.WARNING
    VALID = [
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(8, 64)\n"
        "    out[:] = a + a\n",
        # unknown shapes: nothing is counted
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor(), out: pypto.Tensor()):\n"
        "    pypto.set_vec_tile_shapes(1, 8)\n"
        "    out[:] = a + a\n",
        # tile set at module level: unknown inside the kernel, so nothing is counted
        "import pypto as pto\n\npto.set_vec_tile_shapes(1, 8)\n\n@pto.frontend.jit\n"
        "def k(a: pto.Tensor((4096, 4096), pto.DT_FP32), out: pto.Tensor((4096, 4096), pto.DT_FP32)):\n"
        "    out[:] = a * 2.0\n",
        # a big tensor processed by blocks: each body handles a 256-row slice (64 tiles x 2)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((4096, 4096), pypto.DT_FP32), out: pypto.Tensor((4096, 4096), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 512)\n"
        "    for i in pypto.loop(16, name='rows', idx_name='i'):\n"
        "        out[i * 256:(i + 1) * 256, :] = a[i * 256:(i + 1) * 256, :] * 2.0\n",
        # dynamic rows: the count cannot be known
        "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
        "def k(a: pypto.Tensor([pypto.DYNAMIC, 4096], pypto.DT_FP32),\n"
        "      out: pypto.Tensor([pypto.DYNAMIC, 4096], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(1, 8)\n"
        "    out[:] = a + a\n",
        # a helper sets big tiles; keepdim=False reduction followed by a reset 1-D tile
        "import pypto\n\ndef tiles():\n    pypto.set_vec_tile_shapes(64, 1024)\n\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor((1024, 1024), pypto.DT_FP32), out: pypto.Tensor((1024,), pypto.DT_FP32)):\n"
        "    tiles()\n"
        "    s = pypto.sum(x, -1)\n"
        "    pypto.set_vec_tile_shapes(1024)\n"
        "    out[:] = s * 0.5\n",
        # a tile of the wrong rank is PTO003's concern: not counted here
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((4096, 4096), pypto.DT_FP32), out: pypto.Tensor((4096, 4096), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(8)\n"
        "    out[:] = a + a\n",
        # over the default budget, but the project raised it
        Valid(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((4096, 4096), pypto.DT_FP32), out: pypto.Tensor((4096, 4096), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(8, 64)\n"
            "    out[:] = a * 2.0\n",
            settings={"subgraph_budget": 100000},
        ),
        # matmul with big L0 tiles: 2 * 2 * 4 tiles x 3
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((256, 1024), pypto.DT_FP16), b: pypto.Tensor((1024, 256), pypto.DT_FP16),\n"
        "      c: pypto.Tensor((256, 256), pypto.DT_FP32)):\n"
        "    pypto.set_cube_tile_shapes([128, 128], [256, 256], [128, 128])\n"
        "    c[:] = pypto.matmul(a, b, pypto.DT_FP32)\n",
    ]
    INVALID = [
        # 512 * 64 tiles x (1 + 1): reported at the kernel's def line
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((4096, 4096), pypto.DT_FP32), out: pypto.Tensor((4096, 4096), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(8, 64)\n"
            "    out[:] = a * 2.0\n",
            line=4, col=1,
        ),
        # a loop body over a small budget; `import pypto as pto`
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(a: pto.Tensor((64, 64), pto.DT_FP32), b: pto.Tensor((64, 64), pto.DT_FP32),\n"
            "      out: pto.Tensor((64, 64), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(8, 16)\n"
            "    for i in pto.loop(4, name='L', idx_name='i'):\n"
            "        t = pto.exp(a)\n"
            "        out[:] = t + b\n",
            line=7, col=5,
            settings={"subgraph_budget": 100},
        ),
        # matmul with 16-element L0 tiles on 1024^3: 64^3 tiles x 3
        Case(
            "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
            "def k(a: pypto.Tensor((1024, 1024), pypto.DT_FP16), b: pypto.Tensor((1024, 1024), pypto.DT_FP16),\n"
            "      c: pypto.Tensor((1024, 1024), pypto.DT_FP32)):\n"
            "    pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])\n"
            "    for i in pypto.loop(1, name='mm', idx_name='i'):\n"
            "        c[:] = pypto.matmul(a, b, pypto.DT_FP32)\n",
            line=8, col=5,
        ),
        # unroll_list copies multiply the body: 4 * (16 tiles x 3) * 2 ops
        Case(
            "from pypto import frontend\nimport pypto\n\n@frontend.jit\n"
            "def k(a: pypto.Tensor((64, 64), pypto.DT_FP32), b: pypto.Tensor((64, 64), pypto.DT_FP32),\n"
            "      out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n"
            "    for i in pypto.loop(8, name='L', idx_name='i', unroll_list=[4]):\n"
            "        out[:] = pypto.maximum(a, b) - b\n",
            line=8, col=5,
            settings={"subgraph_budget": 300},
        ),
        # legacy `with pypto.function` body: reported at the with header
        Case(
            "import pypto\n\nx = pypto.tensor([2048, 2048], pypto.DT_FP32, 'x')\n"
            "y = pypto.tensor([2048, 2048], pypto.DT_FP32, 'y')\n"
            "pypto.set_vec_tile_shapes(8, 8)\n"
            "with pypto.function('k', x, y):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n"
            "    y[:] = pypto.abs(x)\n",
            line=6, col=1,
        ),
    ]

    def check(self, ctx: LintContext):
        budget = ctx.settings.subgraph_budget
        for kernel in ctx.model.kernels:
            for loop in kernel.loops:
                counted = []
                for op in loop.ops:
                    tiles = _matmul_tiles(op) if op.op in api.MATMUL else _vector_tiles(op) if op.vector else None
                    if tiles is None:
                        continue
                    counted.append((tiles * (1 + len(op.inputs)) * max(op.multiplier, 1), op))
                total = sum(c for c, _ in counted)
                if total <= budget:
                    continue
                yield self._report(ctx, kernel, loop, total, budget, counted)

    def _report(self, ctx, kernel, loop, total, budget, counted):
        if loop.node is None:
            span = ctx.source.header_span(kernel.node)
            where = f"the body of kernel `{kernel.name}` outside any pypto loop"
        else:
            span = ctx.source.header_span(loop.node)
            where = f"loop `{loop.idx_name}` body" if loop.idx_name else "this loop body"
        merged: dict = {}
        for count, op in counted:  # an op traced several times (helpers, static for) counts once per trace
            key = (op.op, op.node.lineno)
            merged[key] = merged.get(key, 0) + count
        top = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0][1]))[:TOP]
        parts = ", ".join(f"`{name}` at line {line} ({format_count(count)})" for (name, line), count in top)
        matmul = any(op.op in api.MATMUL for _, op in counted)
        help = (
            "use bigger tiles, or split the work into a `pypto.loop` over blocks so each body handles a slice"
        )
        if matmul:
            help += "; for matmul use bigger L0 tiles or split K (`enable_split_k=True` or a loop over K blocks)"
        return self.diagnostic(
            span,
            f"{where} creates about {format_count(total)} tile operations (budget {format_count(budget)}); "
            f"biggest: {parts}; past the "
            "budget the compiled subgraph risks the 32 KiB AI core stack-frame limit on device builds",
            help=help,
        )


RULE = SubgraphTooLarge
