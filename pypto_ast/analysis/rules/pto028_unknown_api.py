"""PTO028 unknown-api."""

from __future__ import annotations

from ..rule import Case, LintContext, Rule


class UnknownApi(Rule):
    """
    ## What it does
    Reports a ``pypto.X`` name, read in a kernel (or a helper it calls), that neither pypto 0.2.0
    nor the repository's later version defines, with the closest names pypto has ("did you mean").
    It is the transpiler's PTO101, in the same words, found by the linter.

    ## Why is this bad?
    pypto builds the graph by running the kernel's Python, so a misspelt op is an
    ``AttributeError`` only when that line is traced: on the device run, after the data is set
    up, or never on a path the test does not take.

    ## Example
    ```python
    y[:] = pypto.exq(x)
    ```

    ## Use instead
    ```python
    y[:] = pypto.exp(x)
    ```

    ## Fix safety
    No fix: two suggestions can both be plausible (`eq`, `exp`), and either changes what is computed.

    ## References
    `surface.py` (every public name of pypto 0.2.0 and of hicann/pypto@883e7df).
    """

    code = "PTO028"
    name = "unknown-api"
    summary = "a pypto.X name that no pypto release defines"
    VALID = [
        "import pypto\n@pypto.frontend.jit\ndef k(x: pypto.Tensor((8, 8), pypto.DT_FP32), "
        "y: pypto.Tensor((8, 8), pypto.DT_FP32)):\n    pypto.set_vec_tile_shapes(8, 8)\n    y[:] = pypto.exp(x)\n",
        # feature detection outside kernels is the script's business
        "import pypto\nHAS = hasattr(pypto, 'exq')\n",
        "import pypto\ntry:\n    f = pypto.exq\nexcept AttributeError:\n    f = None\n",
    ]
    INVALID = [
        # in a parameter's annotation (the module fails to import: AttributeError)
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor([64, 128], pypto.DT_BFLOAT16), y: pypto.Tensor([64, 128], pypto.DT_BF16)):\n"
            "    pypto.set_vec_tile_shapes(16, 128)\n    y[:] = x + 1.0\n",
            line=4, col=34,
        ),
        Case("import pypto\n@pypto.frontend.jit\ndef k(x: pypto.Tensor((8, 8), pypto.DT_FP32), "
             "y: pypto.Tensor((8, 8), pypto.DT_FP32)):\n    pypto.set_vec_tile_shapes(8, 8)\n    y[:] = pypto.exq(x)\n",
             line=5, col=12),
        Case("import pypto as pto\n\ndef act(t):\n    return pto.sigmod(t)\n\n@pto.frontend.jit\n"
             "def k(x: pto.Tensor((8, 8), pto.DT_FP32), y: pto.Tensor((8, 8), pto.DT_FP32)):\n"
             "    pto.set_vec_tile_shapes(8, 8)\n    y[:] = act(x)\n", line=4, col=12),
    ]

    def check(self, ctx: LintContext):
        seen = set()
        for kernel in ctx.model.kernels:
            for message, node in kernel.unknown_names:
                key = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
                if key in seen:
                    continue
                seen.add(key)
                yield self.diagnostic(ctx.span(node), message,
                                      help="use a name pypto has (pypto-ast's docs/ops.md lists the ops)")


RULE = UnknownApi
