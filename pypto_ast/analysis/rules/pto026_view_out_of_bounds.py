"""PTO026 view-out-of-bounds."""

from __future__ import annotations

from ..rule import Case, LintContext, Rule
from ._local import in_file

_HEAD = "import pypto\n\n@pypto.frontend.jit\n"


class ViewOutOfBounds(Rule):
    """
    ## What it does
    Reports a ``pypto.view``, a slice ``x[a:b]`` or an assemble (``pypto.assemble``,
    ``out.assemble``, ``out[a:b] = v``) whose static extent, at its static offset, passes the
    end of its tensor (or starts before it) on some axis. Views and slices are the front end's
    PTO106 in the transpiler's words (`pypto.view: axis 0 covers [48, 80) outside the tensor's
    extent 64`); assembles are checked with the part's valid shape, so a tail block written with
    ``valid_shape=`` that fits is left alone.

    Silent when an offset, an extent or the tensor's dim is not known at build time (a loop
    index, a DYNAMIC dim), when the view passes ``valid_shape=``, and on axes whose extent the
    call gives (``pypto.STATIC`` / ``...`` annotations: the extent in the file is one call's,
    and pypto clips a view of such an axis to it).

    ## Why is this bad?
    pypto 0.2.0 accepts the view without a word: the block reads (or an assemble writes) memory
    past the tensor, another tensor's data or nothing mapped, and the result is wrong without
    an error. ``pypto-transpile`` refuses the view (PTO106).

    ## Example
    ```python
    half = pypto.view(x, [32, 64], [48, 0])     # x is (64, 64): rows 48..80
    ```

    ## Use instead
    ```python
    half = pypto.view(x, [32, 64], [32, 0])
    # or a partial tail block:
    tail = pypto.view(x, [32, 64], [48, 0], valid_shape=[16, 64])
    ```

    ## Fix safety
    No fix: whether the offset or the extent is wrong is the author's call.

    ## References
    `pypto.view` API page (offsets + shape within the input; valid_shape for partial blocks);
    pypto's GetViewValidShape; `pypto-dsl.md` views.
    """

    code = "PTO026"
    name = "view-out-of-bounds"
    summary = "a view, slice or assemble whose static extent passes the end of its tensor"
    VALID = [
        _HEAD + "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    out[:] = pypto.view(x, [32, 64], [32, 0]) + 1.0\n",
        # a tail block with valid_shape
        _HEAD + "def k(x: pypto.Tensor((40, 64), pypto.DT_FP32), out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    out[:] = pypto.view(x, [32, 64], [32, 0], valid_shape=[8, 64]) + 1.0\n",
        # the offset is a loop index: not static
        _HEAD + "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n"
        "    for i in pypto.loop(4, name='L', idx_name='i'):\n"
        "        blk = pypto.view(x, [16, 64], [i * 16, 0])\n"
        "        out[i * 16:(i + 1) * 16, :] = blk + 1.0\n",
        # a DYNAMIC dim: its extent is not known in the file
        _HEAD + "def k(x: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32), out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    out[:] = pypto.view(x, [32, 64], [4096, 0]) + 1.0\n",
        # slices within the tensor, negative starts counted from the end
        _HEAD + "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((16, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n"
        "    out[:] = x[-16:, :] * 2.0\n",
        # an assemble of a partial block (valid 8 rows) at the tail
        _HEAD + "def k(x: pypto.Tensor((40, 64), pypto.DT_FP32), out: pypto.Tensor((40, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    blk = pypto.view(x, [32, 64], [32, 0], valid_shape=[8, 64])\n"
        "    pypto.assemble(blk + 1.0, [32, 0], out)\n",
    ]
    INVALID = [
        Case(
            _HEAD + "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(32, 64)\n"
            "    out[:] = pypto.view(x, [32, 64], [48, 0]) + 1.0\n",
            line=6, col=14,
        ),
        # a slice past the end; `import pypto as pto`, in a loop
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(x: pto.Tensor((64, 64), pto.DT_FP32), out: pto.Tensor((96, 64), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(32, 64)\n"
            "    for _ in pto.loop(1, name='L', idx_name='i'):\n"
            "        out[:] = x[0:96, :] + 1.0\n",
            line=7, col=18,
        ),
        # an assemble past the end of the output
        Case(
            _HEAD + "def k(x: pypto.Tensor((32, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(32, 64)\n"
            "    out.assemble(x * 2.0, [48, 0])\n",
            line=6, col=5,
        ),
        # a helper's view, under a static Python for
        Case(
            "import pypto\n\ndef block(t, r):\n    return pypto.view(t, [16, 64], [r, 0])\n\n"
            "@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((16, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 64)\n"
            "    for r in [0, 56]:\n"
            "        out[:] = block(x, r) + 1.0\n",
            line=4, col=12,
        ),
    ]

    def check(self, ctx: LintContext):
        seen = set()
        for kernel in ctx.model.kernels:
            # a whole write of a larger value (`out[:] = v`) is PTO027's shape mismatch, not an assemble past the end
            shaped = {id(node) for kind, _, node in kernel.op_errors if kind == "shape"}
            for kind, message, node in kernel.op_errors:
                if kind != "bounds" or node is None or id(node) in shaped or not in_file(ctx, node):
                    continue
                key = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0), message)
                if key in seen:
                    continue
                seen.add(key)
                yield self.diagnostic(
                    ctx.span(node), message,
                    help="keep offset + extent within the tensor on every axis, or give the view "
                         "`valid_shape=` for a partial block",
                )


RULE = ViewOutOfBounds
