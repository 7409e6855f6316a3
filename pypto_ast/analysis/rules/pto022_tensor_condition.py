"""PTO022 tensor-condition."""

from __future__ import annotations

import ast

from ...diagnostics import Applicability, Edit, Fix
from ...frontend import api
from ..rule import Case, LintContext, Rule, Valid
from ._local import in_file, old_parser

_HEAD = (
    "import pypto\n\n@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), b: pypto.Tensor((32, 32), pypto.DT_FP32),\n"
    "      c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 32)\n"
)  # the body continues on line 7
_LOOP = "    for i in pypto.loop(4, name='L', idx_name='i'):\n"


class TensorCondition(Rule):
    """
    ## What it does
    Reports two kinds of condition pypto cannot take:

    * a tensor used as a truth value: the test of an ``if`` or of a conditional expression
      (``if a > b:``, ``x if t else y``), an operand of ``and`` / ``or`` that Python tests, the
      operand of ``not``, the argument of ``pypto.cond`` -- anywhere in a kernel or a helper it
      calls;
    * an explicit ``pypto.cond(...)`` as the test of an ``if`` inside a ``pypto.frontend.jit``
      kernel or a ``pypto.frontend.function`` helper, whose bodies pypto *parses*.

    A symbolic scalar (a loop index, ``pypto.is_loop_begin(i)``, a value read with ``t[i, j]``)
    is a fine test; so is a build-time Python value (``a.shape[0] == 32``, ``w is not None``).
    ``pypto.cond`` is left alone in plain helpers and legacy ``with pypto.function`` bodies (it is
    required there, see PTO014) and in ``@pypto_ast.jit`` kernels (pypto-ast's convention accepts
    it). With ``--target head`` the explicit ``pypto.cond`` is reported only in kernels declared
    ``new_ir=False``: the repository's ``frontend.jit`` defaults to a new front end
    (``new_ir=True``) whose official tests write ``if pypto.cond(...)`` in jit bodies.

    ## Why is this bad?
    A comparison of tensors is an element-wise op whose result is a tensor, not one value. In a
    parsed body pypto's parser wants a symbolic scalar or a bool as an ``if`` test: 0.2.0 fails
    with the misleading ``F21004 op [CMP]tile shape not set`` (the real cause, ``Test condition
    must be a symbolic scalar or boolean, but got Tensor``, is only in the log). Everywhere else
    Python decides: a pypto ``Tensor`` has no ``__bool__``, so it is always true -- the ``if`` in a
    helper always takes its first branch, ``t and u`` is ``u``, ``not t`` is ``False`` -- with no
    error at all; ``pypto.cond(t)`` raises ``ValueError: Invalid value type``.
    In a parsed body the parser already turns a symbolic ``if`` test into a ``pypto.cond``; an
    explicit one hands it a ``RecordIfBranch`` object and the parser raises
    ``TypeError: Test condition must be a symbolic scalar or boolean, but got RecordIfBranch``
    (0.2.0, and the repository's AST parser).

    ## Example
    ```python
    for i in pypto.loop(4, name="L", idx_name="i"):
        if pypto.cond(pypto.is_loop_begin(i)):
            c[:] = a + b
        if a > b:
            c[:] = a
    ```

    ## Use instead
    ```python
    for i in pypto.loop(4, name="L", idx_name="i"):
        if pypto.is_loop_begin(i):
            c[:] = a + b
        c[:] = pypto.where(a > b, a, b)   # element-wise choice
    ```

    ## Fix safety
    ``if pypto.cond(expr):`` in a parsed body becomes ``if expr:``; the fix is safe: it is the
    test the parser builds from ``if expr:`` itself, so the kernel lowers to the same program
    (proven before the fix is applied). A tensor test gets no fix: reducing it (``pypto.where``,
    a value read with ``t[i, j]``) is the author's choice.

    ## References
    PyPTO docs: api/controlflow/pypto-cond.md; pypto 0.2.0 ``frontend/parser/parser.py``
    ``_visit_if``, ``_controller.py`` ``cond``, ``tensor.py`` (no ``__bool__``);
    `pypto-dsl.md` §2.1 (`if test:` row), §9.3, §15; `pypto-0.2-behaviour.md` "Other behaviours"
    (explicit `pypto.cond` in `frontend.jit`; `if a > b:` on tensors).
    """

    code = "PTO022"
    name = "tensor-condition"
    summary = "a tensor tested as a truth value, or an explicit pypto.cond as an if test in a frontend.jit body"
    fix_availability = "sometimes"
    VALID = [
        # --target head: the new front end (new_ir=True, the default there) takes an explicit pypto.cond
        Valid(_HEAD + _LOOP + "        if pypto.cond(i == 0):\n            c[:] = a + b\n", settings={"target": "head"}),
        _HEAD + _LOOP + "        if pypto.is_loop_begin(i):\n            c[:] = a + b\n        else:\n"
        "            c[:] = a - b\n",
        _HEAD + _LOOP + "        if i == 0:\n            c[:] = a + b\n",
        _HEAD + "    c[:] = pypto.where(a > b, a, b)\n",
        # a build-time test
        _HEAD + "    if a.shape[0] == 32 and b.shape[1] == 32:\n        c[:] = a + b\n",
        # pypto.cond is required in plain helpers (PTO014) and accepted by pypto_ast.jit
        "import pypto\n\ndef edge(i, a, c):\n    if pypto.cond(pypto.is_loop_end(i)):\n        c[:] = a * 2.0\n\n"
        "@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 32)\n" + _LOOP + "        edge(i, a, c)\n",
        "import pypto\nimport pypto_ast\n\n@pypto_ast.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        + _LOOP + "        if pypto.cond(i == 0):\n            c[:] = a + 1.0\n",
        # `w is not None` on an optional tensor is decided at build time
        "import pypto\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32), w=None):\n"
        "    pypto.set_vec_tile_shapes(16, 32)\n    if w is not None:\n        c[:] = a * w\n    else:\n"
        "        c[:] = a * 1.0\n",
    ]
    INVALID = [
        # a tensor test in a plain helper: always true, silently
        Case(
            "import pypto\n\ndef pick(a, b, c):\n    if a > b:\n        c[:] = a\n    else:\n        c[:] = b\n\n"
            "@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), b: pypto.Tensor((32, 32), pypto.DT_FP32),\n"
            "      c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 32)\n    pick(a, b, c)\n",
            line=4, col=8,
        ),
        # --target head, a kernel on the AST parser
        Case(
            (_HEAD + _LOOP + "        if pypto.cond(i == 0):\n            c[:] = a + b\n").replace(
                "@pypto.frontend.jit\n", "@pypto.frontend.jit(new_ir=False)\n"),
            line=8, col=12, settings={"target": "head"},
            fixed=(_HEAD + _LOOP + "        if i == 0:\n            c[:] = a + b\n").replace(
                "@pypto.frontend.jit\n", "@pypto.frontend.jit(new_ir=False)\n"),
        ),
        Case(
            _HEAD + _LOOP + "        if pypto.cond(pypto.is_loop_begin(i)):\n            c[:] = a + b\n",
            line=8, col=12,
            fixed=_HEAD + _LOOP + "        if pypto.is_loop_begin(i):\n            c[:] = a + b\n",
        ),
        # an elif, with an alias
        Case(
            (_HEAD + _LOOP + "        if i == 0:\n            c[:] = a + b\n        elif pto.cond(i == 3):\n"
             "            c[:] = a - b\n").replace("import pypto\n", "import pypto\nimport pypto as pto\n"),
            line=11, col=14,
            fixed=(_HEAD + _LOOP + "        if i == 0:\n            c[:] = a + b\n        elif i == 3:\n"
                   "            c[:] = a - b\n").replace("import pypto\n", "import pypto\nimport pypto as pto\n"),
        ),
        # in a frontend.function helper (parsed too)
        Case(
            "import pypto\n\n@pypto.frontend.function\n"
            "def tail(i: int, a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    if pypto.cond(i > 2):\n        c[:] = a * 0.5\n",
            line=5, col=8,
            fixed="import pypto\n\n@pypto.frontend.function\n"
            "def tail(i: int, a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    if i > 2:\n        c[:] = a * 0.5\n",
        ),
        # tensors as truth values: no fix
        Case(_HEAD + "    if a > b:\n        c[:] = a\n", line=7, col=8),
        Case(_HEAD + "    c[:] = a if a > 0.0 else b\n", line=7, col=17),
        Case(_HEAD + "    m = a > b\n    if not m:\n        c[:] = b\n", line=8, col=12),
        Case(_HEAD + _LOOP + "        if i > 0 and a:\n            c[:] = a\n", line=8, col=22),
        # in a plain helper, with pypto.cond around the tensor
        Case(
            "import pypto\n\ndef pick(a, b, c):\n    if pypto.cond(a > b):\n        c[:] = a\n\n"
            "@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), b: pypto.Tensor((32, 32), pypto.DT_FP32),\n"
            "      c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 32)\n    pick(a, b, c)\n",
            line=4, col=19,
        ),
    ]

    def check(self, ctx: LintContext):
        seen: set = set()
        scope = ctx.model.scope
        for kernel in ctx.model.kernels:
            func = kernel.node if isinstance(kernel.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            returning = func is not None and scope.decorator_qualname(func) in api.RETURNING_DECORATORS
            # the repository's frontend.jit defaults to new_ir=True, a front end with its own `if`
            ast_parser = func is None or returning or old_parser(ctx, func)
            for node, how, context in kernel.tensor_tests:
                if how == "explicit-cond" or not in_file(ctx, node):
                    continue
                if how in ("if", "ifexp") and (isinstance(node, ast.BoolOp) or
                                               isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
                    continue  # its operand is reported
                key = (node.lineno, node.col_offset)
                if key not in seen:
                    seen.add(key)
                    yield self._tensor_test(ctx, node, how, context, returning, ast_parser)
            if returning or not ast_parser:
                continue
            for node, how, _context in kernel.tensor_tests:
                if how != "explicit-cond" or not in_file(ctx, node):
                    continue
                key = (node.lineno, node.col_offset)
                if key not in seen:
                    seen.add(key)
                    yield self._explicit_cond(ctx, node)

    def _tensor_test(self, ctx, node, how, context, returning, ast_parser):
        text = ctx.source.segment(node)
        where = {
            "if": "as the test of an `if`", "cond": "as the test of `pypto.cond(...)`",
            "ifexp": "as the test of a conditional expression", "and": "as an operand of `and`",
            "or": "as an operand of `or`", "not": "as the operand of `not`",
        }[how]
        head = f"`{text}` is a tensor, used {where}: a tensor has no single truth value"
        parsed = context in ("jit", "function")
        if how == "cond":
            why = "; pypto.cond raises `ValueError: Invalid value type`"
        elif how == "if" and parsed and returning:
            why = "; pypto-ast refuses it when it lowers the kernel"
        elif how == "if" and parsed and ast_parser:
            why = ("; pypto's parser wants a symbolic scalar or a bool: 0.2.0 fails with the misleading "
                   "`F21004 op [CMP]tile shape not set` (the log has \"Test condition must be a symbolic scalar or "
                   "boolean, but got Tensor\")")
        elif how == "if" and parsed:
            why = ""
        else:
            consequence = {
                "if": "the `if` always runs its first branch", "ifexp": "the expression always takes its first value",
                "and": "`x and y` is always `y`", "or": "`x or y` is always `x`", "not": "`not t` is always False",
            }[how]
            why = f"; Python takes any pypto Tensor as true, so {consequence}, silently"
        return self.diagnostic(
            ctx.span(node), head + why,
            help="choose element-wise with `pypto.where(cond, a, b)` (`pypto.logical_and` / `logical_not` "
            "combine masks), or test a scalar read from a tensor (`t[i, j]` of an INT32 tensor)",
        )

    def _explicit_cond(self, ctx, stmt):
        call = stmt.test
        keyword = "elif" if ctx.source.line_text(stmt.lineno)[stmt.col_offset:].startswith("elif") else "if"
        fix = None
        help_text = None
        if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords and \
                not isinstance(call.args[0], (ast.Starred, ast.NamedExpr)):
            inner = ctx.source.segment(call.args[0])
            start = ctx.source.pos(call.lineno, call.col_offset)
            end = ctx.source.pos(call.end_lineno, call.end_col_offset)
            if "\n" not in inner:
                fix = Fix(f"drop the wrapper: `{keyword} {inner}:`", Applicability.SAFE, (Edit(start, end, inner),))
        if fix is None:
            help_text = "drop the `pypto.cond(...)` wrapper: the parser makes the cond itself"
        return self.diagnostic(
            ctx.span(call),
            f"explicit `{ctx.source.segment(call)}` as an `{keyword}` test in a body pypto parses: the parser makes "
            "the cond itself, and pypto 0.2.0 raises `TypeError: Test condition must be a symbolic scalar or boolean, "
            "but got RecordIfBranch`",
            help=help_text,
            fix=fix,
        )


RULE = TensorCondition
