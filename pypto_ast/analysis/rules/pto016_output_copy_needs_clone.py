"""PTO016 output-copy-needs-clone."""

from __future__ import annotations

import ast

from ...diagnostics import Applicability, Edit, Fix
from ...frontend import api
from ...frontend.values import ApiRef
from ..rule import Case, LintContext, Rule

_HEAD = (
    "import pypto\n\n@pypto.frontend.jit\n"
    "def copy(x: pypto.Tensor((32, 64), pypto.DT_FP32), out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 64)\n"
)  # the body continues on line 6


class OutputCopyNeedsClone(Rule):
    """
    ## What it does
    Reports a whole write of a tensor -- ``out[:] = x`` (every index an empty slice) or
    ``out.move(x)`` -- whose value is a whole kernel input as it was passed (``x``, or a name
    still bound to it, or ``x[:, :]``, which is ``x`` itself), with no operation in between.

    Writes that copy are left alone: ``pypto.assemble(x, offsets, out)``, ``out.assemble(...)``,
    ``out[0:16, :] = x`` and ``out[...] = x`` (all assembles, which copy in 0.2.0), any value an
    op computed (``x + 0.0``, ``pypto.clone(x)``, ``pypto.cast(x, ...)``), and slices and views
    of part of an input (``out[:] = x[0:16, :]``, ``out.move(pypto.view(x, ...))``):
    measured on 0.2.0, a slice is a view op and the graph copies it (COPY_IN, COPY_OUT), and the
    official tests move slices into outputs and check the values on the board. In
    ``@pypto_ast.jit`` kernels the rule is silent: pypto-ast's lowering copies the input there.

    ## Why is this bad?
    ``out[:] = x`` is pypto's *move*: it binds the name ``out`` to ``x``'s producer. An input
    has no producer in the kernel, so pypto 0.2.0 generates no copy at all (0 tasks) and the
    caller's ``out`` keeps whatever it held -- silently. ``out[:] = pypto.clone(x)`` makes the
    copy an op (2 tasks) and the output is written.

    ## Example
    ```python
    @pypto.frontend.jit
    def copy(x: pypto.Tensor((32, 64), pypto.DT_FP32),
             out: pypto.Tensor((32, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = x
    ```

    ## Use instead
    ```python
        out[:] = pypto.clone(x)
    ```

    ## Fix safety
    The value is wrapped in ``pypto.clone(...)`` (spelled with the module's own name for pypto).
    The fix is safe, in the same class as PTO001's (``fix_meaning``): on pypto 0.2.0 it changes
    what the kernel computes -- from an output left unwritten to the copy the line asks for --
    which is the point of the fix, not a side effect; what the line means as Python and under
    pypto-ast (whose lowering already copies) stays the same, and the fix is applied only when
    the kernel lowers to the same program apart from the explicit copy (``output-copy`` in
    ``transforms/proof.py``). No fix is offered when the module binds no name to ``pypto``.

    ## References
    PyPTO FAQ: kernel-output-not-written-back; `pypto-0.2-behaviour.md` pitfall 1 variants
    (`out[:] = x` / `out.move(x)`: 0 tasks; `out[:] = pypto.clone(x)`: 2 tasks); measured for this
    rule on 0.2.0 SIM: `out[:] = x[0:32, :]` and `out[:] = pypto.view(x, ...)` give COPY_IN/COPY_OUT,
    `out[:] = x` and `out[:] = x[:, :]` no copy op at all.
    """

    code = "PTO016"
    name = "output-copy-needs-clone"
    summary = "an input moved into an output with no op in between: pypto 0.2.0 generates no copy"
    fix_availability = "sometimes"
    fix_meaning = "output-copy"
    VALID = [
        _HEAD + "    out[:] = pypto.clone(x)\n",
        _HEAD + "    out[:] = x + 1.0\n",
        _HEAD + "    pypto.assemble(x, [0, 0], out)\n",
        _HEAD + "    out[0:16, :] = x[0:16, :]\n    out[16:32, :] = x[16:32, :]\n",
        _HEAD + "    out[...] = x\n",
        # a slice or a view is an op: 0.2.0 copies it
        _HEAD + "    out.move(pypto.view(x, [32, 64], [0, 0]))\n",
        "import pypto\n\n@pypto.frontend.jit\n"
        "def first_rows(x: pypto.Tensor([64, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n    out[:] = x[0:16, :]\n",
        _HEAD + "    t = x * 2.0\n    out.move(t)\n",
        # the name was rebound to a computed value before the move
        _HEAD + "    x = pypto.cast(x, pypto.DT_FP32)\n    out[:] = x\n",
        # pypto-ast's own jit copies the input
        "import pypto\nimport pypto_ast\n\n@pypto_ast.jit\n"
        "def copy(x: pypto.Tensor((32, 64), pypto.DT_FP32), out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
        "    out[:] = x\n",
        # not a kernel
        "def copy(x, out):\n    out[:] = x\n",
    ]
    INVALID = [
        Case(_HEAD + "    out[:] = x\n", line=6, col=5, fixed=_HEAD + "    out[:] = pypto.clone(x)\n"),
        Case(_HEAD + "    out.move(x)\n", line=6, col=5, fixed=_HEAD + "    out.move(pypto.clone(x))\n"),
        Case(_HEAD + "    out[:, :] = x\n", line=6, col=5, fixed=_HEAD + "    out[:, :] = pypto.clone(x)\n"),
        # a slice of every index empty is the input itself (0.2.0: no copy either)
        Case(_HEAD + "    out[:] = x[:, :]\n", line=6, col=5, fixed=_HEAD + "    out[:] = pypto.clone(x[:, :])\n"),
        # a name still bound to the input
        Case(_HEAD + "    src = x\n    out[:] = src\n", line=7, col=5,
             fixed=_HEAD + "    src = x\n    out[:] = pypto.clone(src)\n"),
        # an alias, in a loop
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def keep(x: pto.Tensor[[16, 64], pto.DT_FP16], out: pto.Tensor[[16, 64], pto.DT_FP16]):\n"
            "    pto.set_vec_tile_shapes(16, 64)\n    for i in pto.loop(1, name='L', idx_name='i'):\n"
            "        out[:] = x\n",
            line=7, col=9,
            fixed="import pypto as pto\n\n@pto.frontend.jit\n"
            "def keep(x: pto.Tensor[[16, 64], pto.DT_FP16], out: pto.Tensor[[16, 64], pto.DT_FP16]):\n"
            "    pto.set_vec_tile_shapes(16, 64)\n    for i in pto.loop(1, name='L', idx_name='i'):\n"
            "        out[:] = pto.clone(x)\n",
        ),
        # a frontend.function helper moving its input parameter
        Case(
            "import pypto\n\n@pypto.frontend.function\n"
            "def passthrough(a: pypto.Tensor((8, 8), pypto.DT_FP32), b: pypto.Tensor((8, 8), pypto.DT_FP32)):\n"
            "    b.move(a)\n",
            line=5, col=5,
            fixed="import pypto\n\n@pypto.frontend.function\n"
            "def passthrough(a: pypto.Tensor((8, 8), pypto.DT_FP32), b: pypto.Tensor((8, 8), pypto.DT_FP32)):\n"
            "    b.move(pypto.clone(a))\n",
        ),
        # from-imports only: no module name to spell pypto.clone with -> reported without a fix
        Case(
            "from pypto import Tensor, DT_FP32\nfrom pypto.frontend import jit\n\n@jit\n"
            "def copy(x: Tensor((8, 8), DT_FP32), y: Tensor((8, 8), DT_FP32)):\n    y.move(x)\n",
            line=6, col=5,
        ),
    ]

    def check(self, ctx: LintContext):
        seen: set = set()
        for kernel in ctx.model.kernels:
            if kernel.kind == "jit" and isinstance(kernel.node, ast.FunctionDef) and \
                    ctx.model.scope.decorator_qualname(kernel.node) in api.RETURNING_DECORATORS:
                continue
            for move in kernel.moves:
                if move.kind != "input" or move.value_node is None:
                    continue
                key = (move.node.lineno, move.node.col_offset)
                if key in seen:
                    continue
                seen.add(key)
                yield self._diagnostic(ctx, move)

    def _diagnostic(self, ctx, move):
        value_text = ctx.source.segment(move.value_node)
        target_text = ctx.source.segment(move.node.func.value if move.method else move.node.value)
        what = "the kernel input"
        root = move.value.root()
        name = f" `{root.name}`" if root.name else ""
        form = f"{target_text}.move({value_text})" if move.method else f"{target_text}[:] = {value_text}"
        message = (f"`{form}` moves {what}{name} into `{target_text}` with no op in between: pypto 0.2.0 "
                   f"generates no copy, so `{target_text}` is never written")
        clone = _clone_spelling(ctx)
        fix = None
        help_text = None
        if clone is not None:
            start = ctx.source.pos(move.value_node.lineno, move.value_node.col_offset)
            end = ctx.source.pos(move.value_node.end_lineno, move.value_node.end_col_offset)
            fix = Fix(f"copy it explicitly: `{clone}({value_text})`", Applicability.SAFE,
                      (Edit(start, start, f"{clone}("), Edit(end, end, ")")))
        else:
            help_text = f"copy it explicitly: `pypto.clone({value_text})` (import pypto to spell it)"
        span = ctx.span(move.node)
        return self.diagnostic(span, message, help=help_text, fix=fix)


def _clone_spelling(ctx) -> str | None:
    """``<alias>.clone`` for a module-level name bound to the pypto module, else a bare ``clone``."""
    env = ctx.model.scope.env
    modules = sorted(n for n, v in env.items() if v == ApiRef("pypto"))
    if modules:
        return ("pypto" if "pypto" in modules else modules[0]) + ".clone"
    clones = sorted(n for n, v in env.items() if v == ApiRef("pypto.clone"))
    return clones[0] if clones else None


RULE = OutputCopyNeedsClone
