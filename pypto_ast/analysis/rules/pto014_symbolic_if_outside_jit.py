"""PTO014 symbolic-if-outside-jit."""

from __future__ import annotations

import ast

from ...diagnostics import Applicability, Edit, Fix
from ...frontend.values import ApiRef
from ..rule import Case, LintContext, Rule

_KERNEL = (
    "@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), b: pypto.Tensor((32, 32), pypto.DT_FP32),\n"
    "      c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 16)\n"
    "    for i in pypto.loop(4, name='L', idx_name='i'):\n"
    "        plain(i, a, b, c)\n"
)


def _helper(test: str) -> str:
    return (
        "import pypto\n\ndef plain(i, a, b, c):\n"
        f"    if {test}:\n        c[:] = a + b\n    else:\n        c[:] = a - b\n\n" + _KERNEL
    )


_LEGACY = (
    "import pypto\nimport torch\n\n"
    "x = pypto.from_torch(torch.ones(32, 32), 'x')\ny = pypto.from_torch(torch.zeros(32, 32), 'y')\n"
    "with pypto.function('legacy', x, y):\n"
    "    for i in pypto.loop(4):\n"
    "        if {test}:\n            y[:] = x + 1.0\n"
)


class SymbolicIfOutsideJit(Rule):
    """
    ## What it does
    Reports a Python ``if`` statement or conditional expression (``a if t else b``)
    whose test is a symbolic scalar (a loop index, a value read from a tensor, a dynamic
    dimension...) in code that pypto *executes* instead of parsing: a plain, undecorated
    helper called from a kernel, or the body of a legacy ``with pypto.function(...)``.

    Inside ``@pypto.frontend.jit`` / ``@pypto.frontend.function`` bodies a bare
    ``if sym:`` is fine (the parser turns it into a cond); ``if pypto.cond(...)`` is not
    reported here.

    ## Why is this bad?
    Outside parsed bodies ``if`` is plain Python: it calls ``bool()`` on the
    ``SymbolicScalar`` and pypto 0.2.0 raises ``ValueError: Not concrete value`` while the
    graph is built. Only ``if pypto.cond(expr):`` records a runtime branch there.

    ## Example
    ```python
    def plain(i, a, b, c):          # called from a jit loop with its index
        if i == 0:
            c[:] = a + b
        else:
            c[:] = a - b
    ```

    ## Use instead
    ```python
    def plain(i, a, b, c):
        if pypto.cond(i == 0):
            c[:] = a + b
        else:
            c[:] = a - b
    ```
    For a conditional expression use ``pypto.min`` / ``pypto.max`` or an
    ``if pypto.cond(...):`` statement.

    ## Fix safety
    For an ``if`` statement the test is wrapped in ``pypto.cond(...)`` (spelled with the
    module's own alias of ``pypto``); the fix is safe, it is exactly the form the PyPTO
    docs prescribe. No fix is offered when the module has no name bound to ``pypto``, when
    the test uses ``and`` / ``or`` / ``not`` / ``in`` / ``is`` or a chained comparison
    (those call ``bool()`` themselves and would still fail inside ``pypto.cond``), or for
    a conditional expression.

    ## References
    PyPTO docs: api/controlflow/pypto-cond.md, tutorials/development/conditions.md;
    `pypto-0.2-behaviour.md` "Other behaviours" (case l17_plain_helper_if).
    """

    code = "PTO014"
    name = "symbolic-if-outside-jit"
    summary = "a Python `if` on a symbolic value in a plain helper or legacy pypto.function body"
    fix_availability = "sometimes"
    VALID = [
        # l17 control: pypto.cond in the helper
        _helper("pypto.cond(i == 0)"),
        # inside a jit body a bare symbolic `if` is parsed into a cond
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n    for i in pypto.loop(4, name='L', idx_name='i'):\n"
        "        if i == 0:\n            c[:] = a + 1.0\n        else:\n            c[:] = a - 1.0\n",
        # a frontend.function helper is parsed too
        "import pypto as pto\n\n@pto.frontend.function\n"
        "def helper(i: int, a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
        "    if i == 0:\n        c[:] = a + 1.0\n\n@pto.frontend.jit\n"
        "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
        "    pto.set_vec_tile_shapes(16, 16)\n    for i in pto.loop(4, name='L', idx_name='i'):\n"
        "        helper(i, a, c)\n",
        # static tests in a helper: a Python bool argument and a static shape
        "import pypto\n\ndef plain(a, c, use_add):\n"
        "    if use_add and a.shape[0] == 32:\n        c[:] = a + 1.0\n    else:\n        c[:] = a - 1.0\n"
        "    scale = 2.0 if use_add else 0.5\n    c[:] = c * scale\n\n"
        "@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n    for i in pypto.loop(4, name='L', idx_name='i'):\n"
        "        plain(a, c, True)\n",
        # a helper never called from a kernel
        "import pypto\n\ndef plain(i, a, c):\n    if i == 0:\n        c[:] = a + 1.0\n",
        # the test's value is unknown to the linter
        "import pypto\nfrom cfg import mode\n\ndef plain(a, c):\n    if mode():\n        c[:] = a + 1.0\n\n"
        "@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n    plain(a, c)\n",
        # legacy body with pypto.cond
        _LEGACY.format(test="pypto.cond(i == 0)"),
    ]
    INVALID = [
        # l17
        Case(_helper("i == 0"), line=4, col=5, fixed=_helper("pypto.cond(i == 0)")),
        # an alias: the fix spells it the module's way
        Case(
            _helper("i < 2").replace("import pypto\n", "import pypto as pto\n").replace("pypto.", "pto."),
            line=4, col=5,
            fixed=_helper("pto.cond(i < 2)").replace("import pypto\n", "import pypto as pto\n").replace("pypto.", "pto."),
        ),
        # legacy pypto.function body
        Case(_LEGACY.format(test="i == 0"), line=8, col=9, fixed=_LEGACY.format(test="pypto.cond(i == 0)")),
        # an elif after a cond, on a loop flag
        Case(
            "import pypto\n\ndef edge(i, a, c):\n"
            "    if pypto.cond(pypto.is_loop_begin(i)):\n        c[:] = a + 1.0\n"
            "    elif pypto.is_loop_end(i):\n        c[:] = a - 1.0\n\n"
            "@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n    for i in pypto.loop(4, name='L', idx_name='i'):\n"
            "        edge(i, a, c)\n",
            line=6, col=5,
            fixed="import pypto\n\ndef edge(i, a, c):\n"
            "    if pypto.cond(pypto.is_loop_begin(i)):\n        c[:] = a + 1.0\n"
            "    elif pypto.cond(pypto.is_loop_end(i)):\n        c[:] = a - 1.0\n\n"
            "@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n    for i in pypto.loop(4, name='L', idx_name='i'):\n"
            "        edge(i, a, c)\n",
        ),
        # a value read from a tensor; no module alias of pypto is bound: no fix
        Case(
            "from pypto.frontend import jit\nfrom pypto import Tensor, DT_FP32, DT_INT32, loop\n\n"
            "def skip_empty(n, a, c):\n    if n > 0:\n        c[:] = a * 2.0\n\n@jit\n"
            "def k(a: Tensor((32, 32), DT_FP32), lens: Tensor((4,), DT_INT32), c: Tensor((32, 32), DT_FP32)):\n"
            "    for b in loop(4, name='B', idx_name='b'):\n        skip_empty(lens[b], a, c)\n",
            line=5, col=5,
        ),
        # the helper imports pypto itself
        Case(
            "from pypto.frontend import jit\nfrom pypto import Tensor, DT_FP32, loop\n\n"
            "def halve_first(i, a, c):\n    import pypto as pt\n    if i == 0:\n        c[:] = a * 0.5\n\n@jit\n"
            "def k(a: Tensor((32, 32), DT_FP32), c: Tensor((32, 32), DT_FP32)):\n"
            "    for i in loop(4, name='L', idx_name='i'):\n        halve_first(i, a, c)\n",
            line=6, col=5,
            fixed="from pypto.frontend import jit\nfrom pypto import Tensor, DT_FP32, loop\n\n"
            "def halve_first(i, a, c):\n    import pypto as pt\n    if pt.cond(i == 0):\n        c[:] = a * 0.5\n\n@jit\n"
            "def k(a: Tensor((32, 32), DT_FP32), c: Tensor((32, 32), DT_FP32)):\n"
            "    for i in loop(4, name='L', idx_name='i'):\n        halve_first(i, a, c)\n",
        ),
        # `and` would still call bool(): reported, no fix
        Case(_helper("i > 0 and i < 3"), line=4, col=5),
        # conditional expression: no fix
        Case(
            "import pypto\n\ndef pick(i, a, b):\n    return a if i == 0 else b\n\n"
            "@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), b: pypto.Tensor((32, 32), pypto.DT_FP32),\n"
            "      c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n    for i in pypto.loop(4, name='L', idx_name='i'):\n"
            "        c[:] = pick(i, a, b) * 2.0\n",
            line=4, col=12,
        ),
    ]

    def check(self, ctx: LintContext):
        parents = None
        seen: set = set()
        for kernel in ctx.model.kernels:
            for branch in kernel.branches:
                if branch.kind not in ("if", "ifexp") or not branch.symbolic:
                    continue
                if branch.context not in ("helper", "legacy") or id(branch.node) in seen:
                    continue
                seen.add(id(branch.node))
                if parents is None:
                    parents = {id(c): p for p in ast.walk(ctx.source.tree) for c in ast.iter_child_nodes(p)}
                yield self._diagnostic(ctx, branch, _enclosing_function(branch.node, parents))

    def _diagnostic(self, ctx, branch, func):
        node = branch.node
        test_text = ctx.source.segment(node.test)
        if branch.context == "legacy":
            where = "inside a legacy `with pypto.function(...)` body, which runs as plain Python"
        else:
            name = f" `{func.name}`" if func is not None else ""
            where = f"in the plain helper{name}, which pypto executes as Python instead of parsing"
        fix = None
        if branch.kind == "ifexp":
            message = (
                f"conditional expression on the symbolic value `{test_text}` {where}: "
                "it raises `ValueError: Not concrete value`"
            )
            help_text = "use `pypto.min` / `pypto.max`, or an `if pypto.cond(...):` statement"
            span = ctx.span(node)
        else:
            keyword = "elif" if _is_elif(ctx, node) else "if"
            message = (
                f"`{keyword} {test_text}:` on a symbolic value {where}: it raises `ValueError: Not concrete value`"
            )
            span = ctx.source.header_span(node)
            alias = _cond_spelling(ctx, func, node.lineno)
            if alias is not None and _wrappable(node.test):
                start = ctx.source.pos(node.test.lineno, node.test.col_offset)
                end = ctx.source.pos(node.test.end_lineno, node.test.end_col_offset)
                fix = Fix(
                    f"wrap the test in `{alias}(...)`",
                    Applicability.SAFE,
                    (Edit(start, start, f"{alias}("), Edit(end, end, ")")),
                )
                help_text = None
            elif not _wrappable(node.test):
                help_text = (
                    "write the branch as `if pypto.cond(...):`; `and`/`or`/`not`/`in`/`is` and chained comparisons "
                    "call bool() themselves, so split them into nested `if pypto.cond(...):` statements"
                )
            else:
                help_text = f"write `if pypto.cond({test_text}):` (import pypto to spell it)"
        return self.diagnostic(span, message, help=help_text, fix=fix)


def _enclosing_function(node, parents):
    current = parents.get(id(node))
    while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
        current = parents.get(id(current))
    return current


def _is_elif(ctx, node: ast.If) -> bool:
    return ctx.source.line_text(node.lineno)[node.col_offset:].startswith("elif")


def _wrappable(test: ast.AST) -> bool:
    """The test computes one symbolic value without calling bool() on a symbol itself."""
    for sub in ast.walk(test):
        if isinstance(sub, (ast.BoolOp, ast.IfExp, ast.Lambda)):
            return False
        if isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.Not):
            return False
        if isinstance(sub, ast.Compare) and (
            len(sub.ops) > 1 or any(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in sub.ops)
        ):
            return False
    return True


def _cond_spelling(ctx, func, line: int) -> str | None:
    """``<alias>.cond`` for a module-level name bound to the ``pypto`` module (or a bare ``cond``)."""
    shadowed = _bound_names(func) if func is not None else set()
    env = ctx.model.scope.env
    modules = sorted(n for n, v in env.items() if v == ApiRef("pypto") and n not in shadowed)
    modules += sorted(_local_pypto_aliases(func, line)) if func is not None else []
    if modules:
        return ("pypto" if "pypto" in modules else modules[0]) + ".cond"
    conds = sorted(n for n, v in env.items() if v == ApiRef("pypto.cond") and n not in shadowed)
    return conds[0] if conds else None


def _local_pypto_aliases(func, line: int) -> set:
    """Names a function binds to the pypto module itself (``import pypto`` / ``import pypto as pt``)."""
    names = set()
    for sub in ast.walk(func):
        if isinstance(sub, ast.Import) and sub.lineno < line:
            names |= {a.asname or a.name for a in sub.names if a.name == "pypto"}
    return names


def _bound_names(func) -> set:
    args = func.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for sub in ast.walk(func):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
    return names


RULE = SymbolicIfOutsideJit
