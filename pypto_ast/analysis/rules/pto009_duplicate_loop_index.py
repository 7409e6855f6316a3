"""PTO009 duplicate-loop-index."""

from __future__ import annotations

import ast

from ...diagnostics import Note
from ..rule import Case, LintContext, Rule

_HEAD = (
    "import pypto\n\nS = (32, 32)\n\n@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor(S, pypto.DT_FP32), b: pypto.Tensor(S, pypto.DT_FP32),\n"
    "      c: pypto.Tensor(S, pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 16)\n"
)  # the body continues on line 9


class DuplicateLoopIndex(Rule):
    """
    ## What it does
    Reports a ``pypto.loop`` / ``pypto.loop_unroll`` nested inside another one that
    reuses its index name: the same explicit ``idx_name=`` (also when the inner loop sits
    in a helper called from the outer loop's body), or the same loop variable in one
    function (``for i in pypto.loop(...)`` inside ``for i in pypto.loop(...)``).

    Sibling (sequential) loops may reuse both ``name`` and ``idx_name``; they are not
    reported.

    ## Why is this bad?
    Nested loops must have distinct index symbols. pypto 0.2.0 logs
    ``Errcode: F21007! Forbid duplicate name of loop idx. It names i`` and then the
    process dies with SIGSEGV -- no Python exception, no traceback pointing at the loop.
    A reused loop *variable* does not crash, but it shadows the outer index: after the
    inner loop, ``i`` in the outer body is the inner index.

    ## Example
    ```python
    for i in pypto.loop(2, name="outer", idx_name="i"):
        for j in pypto.loop(2, name="inner", idx_name="i"):
            c[:] = a + b
    ```

    ## Use instead
    ```python
    for i in pypto.loop(2, name="outer", idx_name="i"):
        for j in pypto.loop(2, name="inner", idx_name="j"):
            c[:] = a + b
    ```

    ## Fix safety
    No fix is offered: renaming an index may clash with other names the author uses.

    ## References
    PyPTO docs: api/controlflow/pypto-loop.md; PyPTO FAQ loop-principle; `pypto-0.2-behaviour.md`
    loop semantics (cases l01_nested_same_idx_name, l20_sibling_loops_same_names).
    """

    code = "PTO009"
    name = "duplicate-loop-index"
    summary = "nested pypto loops reuse an index name; pypto 0.2.0 logs F21007 and segfaults"
    VALID = [
        # l20: sibling loops may reuse name and idx_name
        _HEAD + "    for i in pypto.loop(2, name='L', idx_name='i'):\n        c[:] = a + b\n"
        "    for i in pypto.loop(2, name='L', idx_name='i'):\n        c[:] = c * 2.0\n",
        # l21: nested loops with default names
        _HEAD + "    for i in pypto.loop(2):\n        for j in pypto.loop(2):\n            c[:] = a + b\n",
        # distinct idx_names
        _HEAD + "    for i in pypto.loop(2, name='outer', idx_name='i'):\n"
        "        for j in pypto.loop(2, name='inner', idx_name='j'):\n            c[:] = a + b\n",
        # a helper's loop reuses the name, but the helper is called outside the loop
        "import pypto as pto\n\ndef twice(a, c):\n    for i in pto.loop(2, name='h', idx_name='i'):\n        c[:] = a * 2.0\n\n"
        "@pto.frontend.jit\n"
        "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
        "    pto.set_vec_tile_shapes(16, 16)\n    twice(a, c)\n"
        "    for i in pto.loop(2, name='L', idx_name='i'):\n        c[:] = c + a\n",
        # same loop variable in a helper (another Python scope), no idx_name: default names differ
        "import pypto\n\ndef body(a, c):\n    for i in pypto.loop(2):\n        c[:] = a + 1.0\n\n"
        "@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n    for i in pypto.loop(2):\n        body(a, c)\n",
        # a static Python for around a pypto loop with the same variable is not a pypto index
        _HEAD + "    for i in range(2):\n        for j in pypto.loop(2, idx_name='i'):\n            c[:] = a + b\n",
        # `_` reused by nested loops with their own idx_names (the official tests' legacy form): never read
        _HEAD + "    for _ in pypto.loop(1, name='b0', idx_name='bidx'):\n"
        "        for _ in pypto.loop(1, name='s0', idx_name='sidx'):\n            c[:] = a + b\n",
        # the same variable, unused after the inner loop starts
        _HEAD + "    for i in pypto.loop(2, name='o', idx_name='i'):\n        c[i:, :] = a[i:, :] + 1.0\n"
        "        for i in pypto.loop(2, name='n', idx_name='j'):\n            c[:] = a + b\n",
        # loop_unroll with the same factor name in sibling loops
        _HEAD + "    for i, f in pypto.loop_unroll(0, 4, 1, name='A', idx_name='i', unroll_list=[2]):\n"
        "        c[:] = a + b\n"
        "    for i, f in pypto.loop_unroll(0, 4, 1, name='B', idx_name='i', unroll_list=[2]):\n"
        "        c[:] = c + b\n",
    ]
    INVALID = [
        # l01
        Case(
            _HEAD + "    for i in pypto.loop(2, name='outer', idx_name='i'):\n"
            "        for j in pypto.loop(2, name='inner', idx_name='i'):\n            c[:] = a + b\n",
            line=10, col=9,
        ),
        # the same loop variable in one function
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(16, 16)\n    for i in pto.loop(2):\n"
            "        for i in pto.loop(2):\n            c[i:, :] = a[i:, :] + 1.0\n",
            line=7, col=9,
        ),
        # across a helper called inside the loop
        Case(
            "import pypto\nfrom pypto.frontend import jit\n\n"
            "def rows(a, c):\n    for r in pypto.loop(2, name='rows', idx_name='k'):\n        c[:] = a * 2.0\n\n"
            "@jit\n"
            "def kern(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n"
            "    for k in pypto.loop(4, name='outer', idx_name='k'):\n        rows(a, c)\n",
            line=5, col=5,
        ),
        # three deep: the innermost reuses the outermost idx_name
        Case(
            "from pypto import frontend\nimport pypto\n\n@frontend.jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n"
            "    for b in pypto.loop(2, name='B', idx_name='b'):\n"
            "        for h in pypto.loop(2, name='H', idx_name='h'):\n"
            "            for s in pypto.loop_unroll(0, 4, 1, name='S', idx_name='b', unroll_list=[1]):\n"
            "                c[:] = a + 1.0\n",
            line=9, col=13,
        ),
    ]

    def check(self, ctx: LintContext):
        seen: set = set()
        for kernel in ctx.model.kernels:
            for loop in kernel.loops:
                if not loop.explicit or id(loop.node) in seen:
                    continue
                for outer in loop.pypto_ancestors():
                    why = _clash(loop, outer)
                    if why:
                        seen.add(id(loop.node))
                        yield self._diagnostic(ctx, loop, outer, *why)
                        break

    def _diagnostic(self, ctx, loop, outer, kind, name):
        notes = ()
        if outer.node is not None:
            notes = (Note(f"the enclosing loop uses `{name}` here", ctx.source.header_span(outer.node)),)
        if kind == "idx_name":
            message = (
                f"nested loop reuses `idx_name='{name}'` of an enclosing loop: pypto 0.2.0 logs "
                "F21007 (Forbid duplicate name of loop idx) and then segfaults"
            )
            help_text = "give each nested loop its own `idx_name`"
        else:
            message = (
                f"nested loop reuses the loop variable `{name}` of an enclosing loop: the inner index "
                "shadows the outer one for the rest of the outer body"
            )
            help_text = "name the inner loop variable (and its `idx_name`) differently"
        return self.diagnostic(ctx.source.header_span(loop.node), message, help=help_text, notes=notes)


def _clash(inner, outer):
    if inner.idx_name is not None and inner.idx_name == outer.idx_name:
        return "idx_name", inner.idx_name
    if inner.function is outer.function and inner.targets[:1] and inner.targets[:1] == outer.targets[:1] \
            and _read_from(outer.node, inner.targets[0], inner.node):
        return "target", inner.targets[0]
    return None


def _read_from(outer_node, name: str, inner_node) -> bool:
    """Whether the outer body reads ``name`` from the inner loop's header on, where it means the
    inner index: a variable never read there (``_``, an unused index) shadows nothing that matters."""
    if outer_node is None or inner_node is None:
        return True
    start = (inner_node.lineno, inner_node.col_offset)
    for node in ast.walk(outer_node):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                and (node.lineno, node.col_offset) >= start:
            return True
    return False


RULE = DuplicateLoopIndex
