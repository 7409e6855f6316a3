"""PTO012 unmerged-loop1."""

from __future__ import annotations

import ast

from ...diagnostics import Applicability, Fix, Note
from ...transforms.merge_loop1 import inline_loop, merge_into_previous
from ..rule import Case, LintContext, Rule

_SIG = (
    "import pypto\n\n@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), b: pypto.Tensor((32, 32), pypto.DT_FP32),\n"
    "      c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(32, 32)\n"
)


class UnmergedLoop1(Rule):
    """
    ## What it does
    Reports consecutive ``loop(1)`` regions that could be one: two adjacent
    ``for _ in pypto.loop(1):`` statements, or tensor work at the top of a kernel (which
    pypto runs in the implicit ``loop(1)`` wrapped around every ``frontend.jit`` body)
    directly followed by an explicit ``pypto.loop(1)``.

    ## Why is this bad?
    pypto 0.2.0 never merges them: each ``loop(1)`` is its own control loop, root function
    and stitch (``t = a + 1``; ``loop(1){u = t + b}``; ``loop(1){c[:] = u * 2}`` compiles to
    three loops and three submissions). Every extra region costs scheduling overhead and
    splits work the compiler could have fused.

    ## Example
    ```python
    for _ in pypto.loop(1, name="s1"):
        t[:] = a + b
    for _ in pypto.loop(1, name="s2"):
        c[:] = t * 2.0
    ```

    ## Use instead
    ```python
    for _ in pypto.loop(1, name="s1"):
        t[:] = a + b
        c[:] = t * 2.0
    ```

    ## Fix safety
    The fix moves the second region's statements into the first (or, for the implicit
    region, un-nests the explicit loop(1)); comments above the removed header, and the
    comment after it, move with them. It is only offered when the merge keeps meaning: both
    loops are plain ``loop(1)`` (no ``unroll_list``, no ``submit_before_loop`` barrier),
    neither holds an in-place ``reshape`` (which the docs ask to keep in a loop(1) of its
    own), the removed loop's index is not used, and merging changes no op's tiles (a setting
    made inside a loop stays in that loop: two regions that each set a vector tile shape are
    kept apart, while a matmul region that sets cube tiles followed by a vector region that
    sets its own vector tiles is reported). Like every safe fix it is applied only when the kernel, lowered
    before and after, runs the same ops with the same tiles (transforms/proof.py);
    otherwise it is reported as unsafe.

    ## References
    PyPTO FAQ: loop-principle; `pypto-0.2-behaviour.md` "implicit loop(1); no merging".
    """

    code = "PTO012"
    name = "unmerged-loop1"
    summary = "consecutive loop(1) regions that could be one control loop"
    fix_availability = "sometimes"
    fix_meaning = "loop1-merge"
    VALID = [
        # the loop(1) after the implicit region scopes its own tile shape
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(s: pypto.Tensor([16, 64], pypto.DT_FP32), m: pypto.Tensor([16, 1], pypto.DT_FP32),\n"
        "      y: pypto.Tensor([16, 64], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n"
        "    peak = pypto.amax(s, -1, keepdim=True)\n"
        "    for _ in pypto.loop(1, name='store_max', idx_name='q'):\n"
        "        pypto.set_vec_tile_shapes(16, 8)\n"
        "        m[:] = peak * 1.0\n"
        "    y[:] = pypto.exp(s - peak)\n",
        _SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n",
        # a barrier loop must stay separate
        _SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n"
        "    for _ in pypto.loop(1, submit_before_loop=True):\n        c[:] = c * 2.0\n",
        # the first region sets its own tile shape: tile settings are scoped to their loop, the
        # second region is kept apart on purpose (the official tests' multi-scope form)
        _SIG + "    for _ in pypto.loop(1, name='s0', idx_name='k'):\n        pypto.set_vec_tile_shapes(16, 16)\n"
        "        c[:] = a + b\n    for _ in pypto.loop(1, name='s0', idx_name='k'):\n        c[:] = c + b\n",
        # the second region sets another tile shape
        _SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n    for _ in pypto.loop(1):\n"
        "        pypto.set_vec_tile_shapes(16, 32)\n        c[:] = c * 2.0\n",
        # the second loop is not a loop(1)
        _SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n    for i in pypto.loop(4):\n        c[:] = c * 2.0\n",
        # only configuration before the loop: no implicit compute region
        _SIG + "    n = 32\n    for _ in pypto.loop(1):\n        c[:] = a + b\n",
        # something between the two loops
        _SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n    c[:] = c + a\n"
        "    for j in pypto.loop(1):\n        c[:] = c * 2.0\n",
        # the second loop uses its index
        _SIG + "    for i in pypto.loop(1):\n        c[:] = a + b\n"
        "    for j in pypto.loop(1):\n        c[:] = pypto.view(a, [32, 32], [j, 0])\n",
        # in-place reshape asks for its own loop(1)
        _SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n"
        "    for _ in pypto.loop(1):\n        r = pypto.reshape(c, [1024], inplace=True)\n",
    ]
    INVALID = [
        Case(
            _SIG + "    for _ in pypto.loop(1, name='s1'):\n        c[:] = a + b\n"
            "    # second stage\n    for _ in pypto.loop(1, name='s2'):\n        c[:] = c * 2.0\n",
            line=10, col=5,
            fixed=_SIG + "    for _ in pypto.loop(1, name='s1'):\n        c[:] = a + b\n"
            "        # second stage\n        c[:] = c * 2.0\n",
        ),
        Case(
            _SIG + "    t = a + 1.0\n    for _ in pypto.loop(1):\n        u = t + b\n        c[:] = u * 2.0\n",
            line=8, col=5,
            fixed=_SIG + "    t = a + 1.0\n    u = t + b\n    c[:] = u * 2.0\n",
        ),
        # three in a row: fixed in two passes
        Case(
            _SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n    for _ in pypto.loop(1):\n"
            "        c[:] = c * 2.0\n    for _ in pypto.loop(0, 1):\n        c[:] = c - a\n",
            line=9,
            fixed=_SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n        c[:] = c * 2.0\n"
            "        c[:] = c - a\n",
        ),
        # a comment on the removed header moves above the statements it described: still safe
        Case(
            _SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n"
            "    for _ in pypto.loop(1):  # stage 2\n        c[:] = c * 2.0\n",
            line=9,
            fixed=_SIG + "    for _ in pypto.loop(1):\n        c[:] = a + b\n        # stage 2\n        c[:] = c * 2.0\n",
        ),
        # a matmul region with its cube tiles, then a vector region with its own vector tiles:
        # no tile kind is shared, merging changes no op's tiles
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor((64, 64), pypto.DT_FP16), w: pypto.Tensor((64, 64), pypto.DT_FP16),\n"
            "      out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    for _ in pypto.loop(1, name='proj'):\n"
            "        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])\n"
            "        h = pypto.matmul(x, w, pypto.DT_FP32)\n"
            "    for _ in pypto.loop(1, name='act'):\n"
            "        pypto.set_vec_tile_shapes(32, 64)\n"
            "        out[:] = pypto.sigmoid(h)\n",
            line=9, col=5,
            fixed="import pypto\n\n@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor((64, 64), pypto.DT_FP16), w: pypto.Tensor((64, 64), pypto.DT_FP16),\n"
            "      out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n"
            "    for _ in pypto.loop(1, name='proj'):\n"
            "        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])\n"
            "        h = pypto.matmul(x, w, pypto.DT_FP32)\n"
            "        pypto.set_vec_tile_shapes(32, 64)\n"
            "        out[:] = pypto.sigmoid(h)\n",
        ),
    ]

    def check(self, ctx: LintContext):
        for kernel in ctx.model.kernels:
            loop1 = {loop.node: loop for loop in kernel.loops if loop.node is not None}
            # a loop changed by one fix is left alone by the others in the same pass:
            # edits computed independently must never touch neighbouring regions
            changed: set = set()
            if kernel.kind != "legacy":
                for diag in self._implicit(ctx, kernel, loop1):
                    changed.add(diag.span.start.line)
                    yield diag
            for body in _bodies(kernel.node):
                for prev, stmt in zip(body, body[1:]):
                    a, b = loop1.get(prev), loop1.get(stmt)
                    if a is None or b is None or not (a.is_loop1 and b.is_loop1):
                        continue
                    if a.has_inplace_reshape or b.has_inplace_reshape:
                        continue
                    if _uses_targets(stmt, exclude=set(a.targets)):
                        continue
                    if _tiles_leak(kernel, a, b):
                        continue  # tile shapes are scoped to their loop: merging changes what the second body sees
                    edit, loses_comment = None, False
                    if prev.lineno not in changed:
                        edit, loses_comment = merge_into_previous(ctx.source.text, prev.lineno, stmt.lineno)
                        changed.add(stmt.lineno)
                    yield self._report(ctx, stmt, edit, loses_comment,
                                       "this loop(1) directly follows another loop(1) and is not merged with it",
                                       Note("the previous loop(1) is here", ctx.source.header_span(prev)))

    def _implicit(self, ctx, kernel, loop1):
        body = kernel.node.body
        first_loop = next((s for s in body if s in loop1), None)
        if first_loop is None or not loop1[first_loop].is_loop1:
            return
        loop = loop1[first_loop]
        if loop.has_inplace_reshape or _uses_targets(first_loop, exclude=set()):
            return
        if _sets_tiles(kernel, loop):
            return  # the loop scopes its own tile shape: inlining it would leak that into what follows
        before = [op for op in kernel.root.ops if op.node.lineno < first_loop.lineno
                  and _in_function_body(op.node, kernel.node)]
        if not before:
            return
        edit, loses_comment = inline_loop(ctx.source.text, first_loop.lineno)
        yield self._report(
            ctx, first_loop, edit, loses_comment,
            "this loop(1) follows tensor work that runs in the kernel's implicit loop(1); "
            "the two regions are not merged",
            Note("the implicit loop(1) region starts here", ctx.span(before[0].node)),
        )

    def _report(self, ctx, stmt, edit, loses_comment, message, note):
        fix = None
        if edit is not None:
            fix = Fix(
                "merge the loop(1) regions",
                Applicability.UNSAFE if loses_comment else Applicability.SAFE,
                (edit,),
            )
        return self.diagnostic(ctx.source.header_span(stmt), message + ": pypto compiles a separate "
                               "control loop and submission for each", fix=fix, notes=(note,))


def _sets_tiles(kernel, loop) -> bool:
    """Whether a tile shape is set inside ``loop``'s body (directly, in a nested loop or a helper)."""
    inside = _inside(kernel, loop)
    return any(id(t.loop) in inside for t in kernel.tile_sets)


def _inside(kernel, loop) -> set:
    """ids of ``loop`` and every loop nested in it."""
    inside, todo = set(), [loop]
    while todo:
        current = todo.pop()
        inside.add(id(current))
        todo.extend(child for child in kernel.loops if child.parent is current)
    return inside


def _tiles_leak(kernel, first, second) -> bool:
    """Whether the two regions share a kind of tile (vector, cube) that one of them sets: then the
    setting is scoped on purpose (the official tests' multi-scope form) and merging would put it in
    force over the other region's ops.  A matmul region that sets cube tiles next to a vector region
    that sets vector tiles shares nothing, and merging them changes no op's tiles."""
    regions = (_inside(kernel, first), _inside(kernel, second))
    sets = [{t.kind for t in kernel.tile_sets if id(t.loop) in region} for region in regions]
    uses = [{"vec" if op.vector else "cube" for op in kernel.ops if op.loop is not None and id(op.loop) in region}
            for region in regions]
    return bool(sets[0] & uses[1]) or bool(sets[1] & uses[0])


def _bodies(node):
    """Every statement list inside the kernel body, nested ones included (not nested defs)."""
    stack = [node]
    while stack:
        current = stack.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(current, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
                stack.extend(s for s in block if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        for handler in getattr(current, "handlers", ()):
            stack.append(handler)


def _uses_targets(loop: ast.For, exclude: set) -> bool:
    names = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)} - exclude
    names.discard("_")
    if not names:
        return False
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
               for stmt in loop.body for n in ast.walk(stmt))


def _in_function_body(node, func) -> bool:
    end = getattr(func, "end_lineno", None)
    return end is None or func.lineno <= node.lineno <= end


RULE = UnmergedLoop1
