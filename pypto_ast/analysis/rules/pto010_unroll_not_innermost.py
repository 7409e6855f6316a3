"""PTO010 unroll-not-innermost."""

from __future__ import annotations

from ...diagnostics import Note, format_count
from ..rule import Case, LintContext, Rule

_HEAD = (
    "import pypto\n\nS = (32, 32)\n\n@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor(S, pypto.DT_FP32), b: pypto.Tensor(S, pypto.DT_FP32),\n"
    "      c: pypto.Tensor(S, pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 16)\n"
)  # the body continues on line 9


class UnrollNotInnermost(Rule):
    """
    ## What it does
    Reports a ``pypto.loop`` with an ``unroll_list`` factor above 1, or a
    ``pypto.loop_unroll``, whose body contains another ``pypto.loop`` /
    ``pypto.loop_unroll`` -- directly, deeper, or inside a helper the body calls.

    ## Why is this bad?
    The PyPTO docs allow unrolling only the innermost loop. pypto 0.2.0 does not check
    it: unrolling an outer loop is accepted silently, the whole body *including the inner
    loop* is duplicated once per unrolled copy (``TENSOR_outer_Unroll2`` with the inner
    loop emitted twice), which multiplies control flow and compiled graphs without the
    benefit unrolling is meant to give (merging small compute blocks of one loop level).

    ## Example
    ```python
    for i in pypto.loop(4, name="outer", idx_name="i", unroll_list=[2]):
        for j in pypto.loop(2, name="inner", idx_name="j"):
            c[:] = a + b
    ```

    ## Use instead
    ```python
    for i in pypto.loop(4, name="outer", idx_name="i"):
        for j in pypto.loop(2, name="inner", idx_name="j", unroll_list=[1, 2]):
            c[:] = a + b
    ```

    ## Fix safety
    No fix is offered: moving an unroll changes which loop is traced several times.

    ## References
    PyPTO docs: api/controlflow/pypto-loop.md, -loop_unroll.md; PyPTO FAQ loop-principle;
    `pypto-0.2-behaviour.md` loop semantics (case l02_unroll_outer_loop).
    """

    code = "PTO010"
    name = "unroll-not-innermost"
    summary = "unroll_list / loop_unroll on a loop that contains another pypto loop"
    VALID = [
        # unroll on the innermost loop
        _HEAD + "    for i in pypto.loop(4, name='outer', idx_name='i'):\n"
        "        for j in pypto.loop(4, name='inner', idx_name='j', unroll_list=[1, 2, 4]):\n            c[:] = a + b\n",
        # unroll_list=[1] does not unroll
        _HEAD + "    for i in pypto.loop(4, name='outer', idx_name='i', unroll_list=[1]):\n"
        "        for j in pypto.loop(2, name='inner', idx_name='j'):\n            c[:] = a + b\n",
        # a static Python for inside the unrolled loop is not a pypto loop
        _HEAD + "    for i in pypto.loop(4, name='L', idx_name='i', unroll_list=[2]):\n"
        "        for r in range(2):\n            c[:] = c + a\n",
        # loop_unroll on the innermost loop; sibling loop after it
        _HEAD + "    for i in pypto.loop(2, name='outer', idx_name='i'):\n"
        "        for j, f in pypto.loop_unroll(0, 8, 1, name='inner', idx_name='j', unroll_list=[4, 2]):\n"
        "            c[:] = a + b\n"
        "    for m in pypto.loop(2, name='tail', idx_name='m'):\n        c[:] = c * 2.0\n",
        # the helper holding a loop is called after the unrolled loop, not inside it
        "import pypto as pto\n\ndef tail(a, c):\n    for t in pto.loop(2, name='T', idx_name='t'):\n        c[:] = c + a\n\n"
        "@pto.frontend.jit\n"
        "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
        "    pto.set_vec_tile_shapes(16, 16)\n"
        "    for i in pto.loop(4, name='L', idx_name='i', unroll_list=[1, 4]):\n        c[:] = a + 1.0\n"
        "    tail(a, c)\n",
        # factors not known statically
        "import pypto\nfrom cfg import FACTORS\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n"
        "    for i in pypto.loop(4, name='L', idx_name='i', unroll_list=FACTORS):\n"
        "        for j in pypto.loop(2, name='M', idx_name='j'):\n            c[:] = a + 1.0\n",
    ]
    INVALID = [
        # l02
        Case(
            _HEAD + "    for i in pypto.loop(4, name='outer', idx_name='i', unroll_list=[2]):\n"
            "        for j in pypto.loop(2, name='inner', idx_name='j'):\n            c[:] = a + b\n",
            line=9, col=5,
        ),
        # loop_unroll around a loop, with an alias
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(16, 16)\n"
            "    for i, f in pto.loop_unroll(0, 8, 1, name='U', idx_name='i', unroll_list=[4, 2]):\n"
            "        for j in pto.loop(2, name='inner', idx_name='j'):\n            c[:] = a + 1.0\n",
            line=6, col=5,
        ),
        # the inner loop is two levels down, under a static for
        Case(
            _HEAD + "    for i in pypto.loop(8, name='outer', idx_name='i', unroll_list=[1, 2, 4]):\n"
            "        for r in range(2):\n"
            "            for j in pypto.loop(2, name='inner', idx_name='j'):\n                c[:] = a + b\n",
            line=9, col=5,
        ),
        # the inner loop is in a helper the unrolled body calls
        Case(
            "import pypto\nfrom pypto.frontend import jit\n\n"
            "def per_row(a, c):\n    for r in pypto.loop(2, name='R', idx_name='r'):\n        c[:] = a * 2.0\n\n"
            "@jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n"
            "    for i in pypto.loop(4, name='L', idx_name='i', unroll_list=[2]):\n        per_row(a, c)\n",
            line=11, col=5,
        ),
    ]

    def check(self, ctx: LintContext):
        seen: set = set()
        for kernel in ctx.model.kernels:
            for loop in kernel.loops:
                if not loop.explicit or id(loop.node) in seen or not _unrolls(loop):
                    continue
                inner = _first_inner_loop(loop)
                if inner is None:
                    continue
                seen.add(id(loop.node))
                yield self._diagnostic(ctx, loop, inner)

    def _diagnostic(self, ctx, loop, inner):
        if loop.kind == "loop_unroll":
            what = "`pypto.loop_unroll`"
        else:
            factors = ", ".join(format_count(f) for f in loop.unroll)
            what = f"`unroll_list=[{factors}]`"
        notes = ()
        if inner.node is not None:
            notes = (Note("the inner loop is here", ctx.source.header_span(inner.node)),)
        if loop.kind == "loop_unroll":
            effect = "its body, inner loop included, is traced and compiled once per factor"
        else:
            effect = "pypto 0.2.0 silently duplicates the whole body, inner loop included"
        return self.diagnostic(
            ctx.source.header_span(loop.node),
            f"{what} on a loop that contains another pypto loop: only the innermost loop may be unrolled; "
            f"{effect}",
            help="unroll the innermost loop instead (e.g. `unroll_list=[1, 2, 4]` on it)",
            notes=notes,
        )


def _unrolls(loop) -> bool:
    if loop.kind == "loop_unroll":
        return not (loop.unroll_known and all(f <= 1 for f in loop.unroll))
    return loop.unroll_known and any(f > 1 for f in loop.unroll)


def _first_inner_loop(loop):
    stack = list(reversed(loop.children))
    while stack:
        child = stack.pop()
        if child.explicit:
            return child
        stack.extend(reversed(child.children))
    return None


RULE = UnrollNotInnermost
