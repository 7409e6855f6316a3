"""PTO025 dynamic-whole-tensor."""

from __future__ import annotations

from ...frontend.values import Sym, Tensor
from ..rule import Case, LintContext, Rule

_HEAD = "import pypto\nF32 = pypto.DT_FP32\n\n@pypto.frontend.jit\n"
# ops that only rename or re-describe a tensor (no tile computation over it)
_LAYOUT = {"reshape", "view", "assemble", "clone", "move"}


def _dynamic_axes(t) -> list:
    if not isinstance(t, Tensor) or t.shape is None:
        return []
    return [axis for axis, d in enumerate(t.shape) if isinstance(d, Sym) and "dynamic_dim" in d.kinds]


def _whole_param(t) -> bool:
    """A kernel parameter itself (not a view, slice or result computed from it)."""
    return isinstance(t, Tensor) and t.origin == "param" and getattr(t, "base", None) is None


class DynamicWholeTensor(Rule):
    """
    ## What it does
    Reports a vector op applied to a whole kernel parameter that has a ``pypto.DYNAMIC`` (or
    ``pypto.DYN`` / ``frontend.dynamic``) dimension, rather than to fixed-size views of it in a
    ``pypto.loop``. A parameter first overwritten whole with a fixed-size value
    (``a[:] = pypto.view(a, [129, 128], [0, 0])``) is left alone: pypto takes the moved value's shape.

    ## Why is this bad?
    pypto 0.2.0 sizes the op's tensors from the dynamic dim's placeholder and refuses them when
    the graph is built: `The shape size of tensor must less than or equal to INT32_MAX
    (2,147,483,647)`, a message that names neither the dim nor the line; the repository's later
    version refuses them too, with `Dynamic shape tensors are not allowed as operation operands`
    (CheckTensorDynamicShape; its own interface tests expect it), although its DYNAMIC page shows
    whole-tensor use. The same tensors processed as 16-row slices in a ``pypto.loop`` work.

    ## Example
    ```python
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), o: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        o[:] = x + 1.0
    ```

    ## Use instead
    ```python
        n = x.shape[0]
        for i in pypto.loop((n + 15) // 16, name="rows", idx_name="i"):
            blk = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[pypto.min(16, n - i * 16), 64])
            pypto.assemble(blk + 1.0, [i * 16, 0], o)
    ```

    ## Fix safety
    No fix is offered: the loop and the block size are the author's choice.

    ## References
    `pypto-0.2-behaviour.md` (dsl/dyn: whole tensor vs loop); `pypto-dsl.md` §shapes.
    """

    code = "PTO025"
    name = "dynamic-whole-tensor"
    summary = "a vector op over a whole tensor with a DYNAMIC dim, not over fixed-size views in a loop"
    VALID = [
        _HEAD + "def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), o: pypto.Tensor([pypto.DYNAMIC, 64], F32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n    n = x.shape[0]\n"
        "    for i in pypto.loop(n // 16, name='L', idx_name='i'):\n"
        "        o[i * 16:(i + 1) * 16, :] = x[i * 16:(i + 1) * 16, :] + 1.0\n",
        _HEAD + "def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), o: pypto.Tensor([pypto.DYNAMIC, 64], F32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n    n = x.shape[0]\n"
        "    for i in pypto.loop((n + 15) // 16, name='L', idx_name='i'):\n"
        "        blk = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[pypto.min(16, n - i * 16), 64])\n"
        "        pypto.assemble(blk * 2.0, [i * 16, 0], o)\n",
        # static dims: a whole-tensor op is fine
        _HEAD + "def k(x: pypto.Tensor([48, 64], F32), o: pypto.Tensor([48, 64], F32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n    o[:] = x + 1.0\n",
        # a reshape only re-describes the tensor
        _HEAD + "def k(x: pypto.Tensor([pypto.DYNAMIC, 4, 16], F32), o: pypto.Tensor([pypto.DYNAMIC, 64], F32)):\n"
        "    x2 = pypto.reshape(x, [x.shape[0], 64], inplace=True)\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n    n = x.shape[0]\n"
        "    for i in pypto.loop(n // 16, name='L', idx_name='i'):\n"
        "        o[i * 16:(i + 1) * 16, :] = x2[i * 16:(i + 1) * 16, :] * 2.0\n",
        # overwritten whole with a fixed-size view first: the op sees that shape
        _HEAD + "def k(a: pypto.Tensor([pypto.DYN, 128], F32), out: pypto.Tensor([pypto.DYN, 128], F32)):\n"
        "    pypto.set_vec_tile_shapes(64, 128)\n    a[:] = pypto.view(a, [128, 128], [0, 0])\n"
        "    pypto.assemble(a * 2.0, [0, 0], out)\n",
    ]
    INVALID = [
        Case(_HEAD + "def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), o: pypto.Tensor([pypto.DYNAMIC, 64], F32)):\n"
             "    pypto.set_vec_tile_shapes(16, 64)\n    o[:] = x + 1.0\n", line=7, col=12),
        # inside a loop the op is still over the whole tensor
        Case("import pypto as pto\n\n@pto.frontend.jit\n"
             "def k(x: pto.Tensor([pto.DYNAMIC, 128], pto.DT_FP16), y: pto.Tensor([pto.DYNAMIC, 128], pto.DT_FP16)):\n"
             "    pto.set_vec_tile_shapes(32, 128)\n"
             "    for _ in pto.loop(1, name='once', idx_name='u'):\n"
             "        y.move(pto.exp(x))\n", line=7, col=16),
        # the repository's later version refuses it as well
        Case(_HEAD + "def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), o: pypto.Tensor([pypto.DYNAMIC, 64], F32)):\n"
             "    pypto.set_vec_tile_shapes(16, 64)\n    o[:] = x + 1.0\n", line=7, col=12, settings={"target": "head"}),
    ]

    def check(self, ctx: LintContext):
        said = ("pypto 0.2.0 refuses it when the graph is built (`The shape size of tensor must less than or "
                "equal to INT32_MAX`)") if ctx.settings.target == "0.2.0" else (
                "pypto refuses it when the graph is built (`Dynamic shape tensors are not allowed as operation "
                "operands`)")
        seen: set = set()
        for kernel in ctx.model.kernels:
            if kernel.kind not in ("jit", "function", "pypto.jit"):
                continue
            moved = {id(m.target.root()) for m in kernel.moves if isinstance(m.target, Tensor)}
            for op in kernel.ops:
                if not op.vector or op.op in _LAYOUT or id(op.node) in seen:
                    continue
                whole = [t for t in op.inputs if _whole_param(t) and _dynamic_axes(t) and id(t) not in moved]
                if not whole:
                    continue
                seen.add(id(op.node))
                t = whole[0]
                axes = ", ".join(str(a) for a in _dynamic_axes(t))
                yield self.diagnostic(
                    ctx.span(op.node),
                    f"`{op.op}` runs over the whole of `{t.name}`, whose axis {axes} is DYNAMIC: {said}",
                    help="process the tensor in fixed-size views inside a `pypto.loop` over the dynamic dim "
                    "(`pypto.view(x, [16, ...], [i * 16, ...], valid_shape=[...])`)",
                )


RULE = DynamicWholeTensor
