"""PTO021 unsupported-construct."""

from __future__ import annotations

import ast
import builtins

from ...frontend.values import ApiRef
from ..rule import Case, LintContext, Rule, Valid
from ._local import in_file, old_parser

_SIG = "(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
_JIT = "import pypto\n\n@pypto.frontend.jit\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
# the body continues on line 6

# statements pypto's parser has no visitor for (``Parser.visit``: "<Node> is not supported by the PTO
# parser yet"), with what to write instead
_STATEMENTS = {
    ast.While: ("`while`", "use pypto.loop, or a Python `for` over a build-time range"),
    ast.With: ("`with`", "move the `with` to the host code around the kernel call"),
    ast.AsyncWith: ("`async with`", "move it to the host code"),
    ast.AsyncFor: ("`async for`", "use pypto.loop, or a Python `for` over a build-time range"),
    ast.Try: ("`try`", "check the condition with an `if` on a build-time value, or move it to the host code"),
    ast.Break: ("`break`", "a loop body always runs to its end: narrow the range, or guard the rest with an `if`"),
    ast.Continue: ("`continue`", "a loop body always runs to its end: guard the rest of the body with an `if`"),
    ast.Global: ("`global`", "pass the value as a (non-tensor) parameter"),
    ast.Nonlocal: ("`nonlocal`", "pass the value as a (non-tensor) parameter"),
    ast.Import: ("`import`", "import at module level"),
    ast.ImportFrom: ("`import`", "import at module level"),
    ast.ClassDef: ("a class definition", "define it at module level"),
}
for _name, _what in (("TryStar", "`try`"), ("Match", "`match`")):
    if hasattr(ast, _name):
        _STATEMENTS[getattr(ast, _name)] = (_what, _STATEMENTS[ast.Try][1] if _name == "TryStar" else
                                            "use `if`/`elif` on build-time values")
_PYNAME = {ast.AsyncWith: "AsyncWith", ast.AsyncFor: "AsyncFor", ast.ImportFrom: "ImportFrom",
           ast.ClassDef: "ClassDef"}
_KEYWORD_LEN = {ast.While: 5, ast.With: 4, ast.Try: 3, ast.AsyncWith: 10, ast.AsyncFor: 9}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BUILTINS = frozenset(dir(builtins))
_PARSED = {"pypto.frontend.jit", "pypto.frontend.function", "pypto_ast.jit"}


class UnsupportedConstruct(Rule):
    """
    ## What it does
    Reports Python that pypto rejects, or misreads, when it traces a kernel:

    - in the body of a ``@pypto.frontend.jit`` kernel or a ``@pypto.frontend.function`` helper
      (the code pypto *parses*): ``while``, ``with``, ``try``, ``break``, ``continue``,
      ``global``, ``import``, ``class``, ``match``, ``for ... else``; a comprehension that reads a
      name of the kernel (``[x * s for x in xs]`` reads ``s``); a conditional expression
      ``a if t else b`` on a symbolic value; keyword arguments in a call of a
      ``@pypto.frontend.function`` helper;
    - anywhere pypto runs for the kernel (plain helpers too): ``range()`` of a symbolic scalar,
      a Python list indexed by a symbolic value (a loop index), calling one jit kernel from
      another.

    Plain helpers and legacy ``with pypto.function(...)`` bodies run as Python: statements are
    fine there (their ``if`` on a symbolic value is PTO014). ``@pypto_ast.jit`` kernels follow
    pypto-ast's conventions: ``with pypto.options(...)`` (or another pypto context manager) is
    read there and not reported. ``raise`` is left alone: it guards a configuration the kernel
    refuses, and a ``raise`` pypto reaches stops the build either way. ``--target head`` follows the
    repository's version: its ``frontend.jit`` (and ``pypto.jit``, an alias there) defaults to
    ``new_ir=True``, a new front end (``pil_parser.py``) that reads ``while``, ``with``,
    ``try`` and comprehensions, so only kernels declared with ``new_ir=False`` (the AST parser of
    0.2.0) are checked, and ``frontend.function`` helpers (parsed by their caller's front end) are
    not. The arm an ``if`` with a build-time test (``if DEBUG:`` on a module-level flag) does not
    take is not checked: pypto's parser visits only the taken arm of a bool test, so a ``while``
    there is never refused.

    ## Why is this bad?
    pypto's parser (0.2.0 and hicann/pypto@883e7df alike) has a visitor for assignments,
    expression statements, ``if``, ``for``, ``del``, ``assert``, ``pass`` and ``def`` only: any
    other statement is ``"While is not supported by the PTO parser yet"`` when the kernel is first
    called, ``for ... else`` is ``"For-else clauses are not supported"``. Expressions are
    evaluated with ``eval(code, {}, locals)``, so a comprehension cannot see the kernel's names
    (``NameError``). ``range(i)`` of a ``SymbolicScalar`` is a ``TypeError`` in Python itself; a
    list index must be an int; a conditional expression calls ``bool()`` on the symbol (``Not
    concrete value``); nested-function calls with keywords raise ``NotImplementedError``; a jit
    kernel is no callable inside another (``input type is not currently supported``).

    ## Example
    ```python
    i = 0
    while i < 4:
        y[:] = y + x
        i += 1
    ```

    ## Use instead
    ```python
    for i in range(4):          # unrolled at build time
        y[:] = y + x
    ```

    ## Fix safety
    No fix: each construct needs a different rewrite.

    ## References
    pypto 0.2.0 ``frontend/parser/parser.py`` (``visit``: the statements it has visitors for;
    ``_visit_for``; ``_try_nested_call``), ``frontend/parser/evaluator.py``
    (``_eval_by_python``), the same at hicann/pypto@883e7df; `pypto-dsl.md` §2.1, §2.2 and §9.7;
    pypto-transpile's PTO100 / PTO105, which report the same constructs with these words.
    """

    code = "PTO021"
    name = "unsupported-construct"
    summary = "while/with/try/break/continue and other Python pypto rejects in a kernel"
    VALID = [
        # an arm pypto's parser never visits: the test is a build-time False (a module flag)
        "import pypto\n\nDEBUG = False\n\n@pypto.frontend.jit\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
        "    if DEBUG:\n        i = 0\n        while i < 2:\n            i += 1\n    else:\n        c[:] = a + 1.0\n",
        # a static Python for with an if; del, assert, pass
        _JIT + "    for r in range(2):\n        if r == 0:\n            c[:] = a + 1.0\n        else:\n"
        "            c[:] = c * 2.0\n    assert a.shape[0] == 32\n    t = a + 1.0\n    del t\n    pass\n",
        # a plain helper runs as Python: while / try / break are fine there
        "import pypto\n\ndef twice(a, c):\n    n = 0\n    while True:\n        c[:] = a + 1.0\n        n += 1\n"
        "        if n == 2:\n            break\n    try:\n        pass\n    except ValueError:\n        pass\n\n"
        "@pypto.frontend.jit\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n    twice(a, c)\n",
        # legacy pypto.function body and the test around it
        "import pypto\n\ndef test_legacy():\n    a = pypto.tensor([32, 32], pypto.DT_FP32, 'a')\n"
        "    c = pypto.tensor([32, 32], pypto.DT_FP32, 'c')\n    with pypto.function('F', a, c):\n"
        "        for i in pypto.loop(2, name='L', idx_name='i'):\n            pypto.set_vec_tile_shapes(16, 16)\n"
        "            c.move(a + 1.0)\n",
        # a pypto context manager in a pypto_ast.jit kernel (pypto-ast reads it)
        "import pypto\nimport pypto_ast\n\n@pypto_ast.jit\ndef k" + _SIG +
        "    with pypto.options(vec_tile_shapes=[8, 16]):\n        c[:] = a + 1.0\n",
        # a conditional expression on a build-time value; range() and list indices of ints
        _JIT + "    scale = 2.0 if a.shape[0] == 32 else 1.0\n    sizes = [8, 16]\n"
        "    for r in range(len(sizes)):\n        c[:] = a * scale + sizes[r]\n",
        # positional arguments to a frontend.function helper
        "import pypto\n\n@pypto.frontend.function\n"
        "def add1(x: pypto.Tensor((32, 32), pypto.DT_FP32), y: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    y[:] = x + 1.0\n\n@pypto.frontend.jit\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
        "    add1(a, c)\n",
        # a comprehension over its own names and builtins only; a guard with raise
        _JIT + "    sizes = [n * 2 for n in range(4) if n % 2 == 0]\n    if len(sizes) != 2:\n"
        "        raise ValueError('two sizes')\n    c[:] = a + 1.0\n",
        # --target head: frontend.jit defaults to new_ir=True there, a front end with while, break, ...
        Valid(_JIT + "    i = 0\n    while i < 2:\n        c[:] = c + a\n        i += 1\n", settings={"target": "head"}),
        # the removed pypto.jit under the default target (PTO028's business, not parsed by 0.2.0)
        "import pypto\n\n@pypto.jit\ndef k(a, c):\n    while False:\n        pass\n",
    ]
    INVALID = [
        Case(_JIT + "    i = 0\n    while i < 2:\n        c[:] = c + a\n        i += 1\n", line=7, col=5),
        # the arm a build-time True test takes is parsed
        Case("import pypto\n\nDEBUG = True\n\n@pypto.frontend.jit\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
             "    if DEBUG:\n        try:\n            c[:] = a + 1.0\n        except RuntimeError:\n            pass\n",
             line=9, col=9),
        Case(_JIT + "    for i in pypto.loop(4, name='L', idx_name='i'):\n        c[:] = a + 1.0\n        break\n",
             line=8, col=9),
        Case(_JIT + "    try:\n        c[:] = a + 1.0\n    except RuntimeError:\n        pass\n", line=6, col=5),
        Case(_JIT + "    with open('log.txt') as f:\n        c[:] = a + 1.0\n", line=6, col=5),
        # pypto.options as a context manager in a frontend.jit body: pypto has no With visitor
        Case(_JIT + "    with pypto.options(vec_tile_shapes=[8, 16]):\n        c[:] = a + 1.0\n", line=6, col=5),
        Case(_JIT + "    for r in range(4):\n        if r == 2:\n            continue\n        c[:] = c + a\n",
             line=8, col=13),
        Case(_JIT + "    import math\n    c[:] = a * math.pi\n", line=6, col=5),
        Case(_JIT + "    for r in range(2):\n        c[:] = c + a\n    else:\n        c[:] = c * 2.0\n", line=6, col=5),
        # a comprehension reading the kernel's names
        Case(_JIT + "    parts = [pypto.view(a, [16, 32], [r * 16, 0]) for r in range(2)]\n"
             "    c[0:16, :] = parts[0] + parts[1]\n", line=6, col=13),
        # range() of a symbolic scalar, in a helper
        Case("import pypto\n\ndef blocks(a, c, n):\n    for r in range(n):\n        c[:] = c + a\n\n"
             "@pypto.frontend.jit\n"
             "def k(a: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), c: pypto.Tensor([pypto.DYNAMIC, 32], "
             "pypto.DT_FP32)):\n    pypto.set_vec_tile_shapes(16, 32)\n    blocks(a, c, a.shape[0] // 16)\n",
             line=4, col=14),
        # a Python list indexed by a loop index
        Case(_JIT + "    scales = [1.0, 2.0, 3.0, 4.0]\n    for i in pypto.loop(4, name='L', idx_name='i'):\n"
             "        c[:] = a * scales[i]\n", line=8, col=20),
        # a conditional expression on a symbolic value in a jit body
        Case(_JIT + "    for i in pypto.loop(4, name='L', idx_name='i'):\n        c[:] = a * (2.0 if i == 0 else 1.0)\n",
             line=7, col=21),
        # keyword arguments to a frontend.function helper
        Case("import pypto\n\n@pypto.frontend.function\n"
             "def add1(x: pypto.Tensor((32, 32), pypto.DT_FP32), y: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
             "    y[:] = x + 1.0\n\n@pypto.frontend.jit\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
             "    add1(a, y=c)\n", line=10, col=5),
        # one jit kernel called from another
        Case("import pypto\n\n@pypto.frontend.jit\ndef inner" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
             "    c[:] = a + 1.0\n\n@pypto.frontend.jit\ndef outer" + _SIG + "    inner(a, c)\n", line=10, col=5),
        # the repository's pypto.jit is frontend.jit; new_ir=False selects the AST parser there
        Case("import pypto\n\n@pypto.jit(new_ir=False)\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
             "    while False:\n        pass\n", line=6, col=5, settings={"target": "head"}),
    ]

    def check(self, ctx: LintContext):
        seen: set = set()
        scope = ctx.model.scope
        parsed = _PARSED | ({"pypto.jit"} if ctx.settings.target == "head" else set())
        for node in ast.walk(ctx.source.tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            qual = scope.decorator_qualname(node)
            if qual not in parsed or qual != "pypto_ast.jit" and not _parsed_by_ast_parser(ctx, node, qual):
                continue
            for stmt in _statements(node.body, _build_time_test(scope, node)):
                if id(stmt) in seen:
                    continue
                seen.add(id(stmt))
                if isinstance(stmt, (ast.For, ast.AsyncFor)) and stmt.orelse and not isinstance(stmt, ast.AsyncFor):
                    yield self.diagnostic(
                        ctx.source.header_span(stmt),
                        "`for ... else` in a kernel body: pypto's parser refuses it (\"For-else clauses are not "
                        "supported\")", help="put the `else` statements after the loop")
                    continue
                entry = _STATEMENTS.get(type(stmt))
                if entry is None:
                    continue
                if qual == "pypto_ast.jit" and isinstance(stmt, ast.With) and _pypto_context(stmt, scope):
                    continue
                what, help_text = entry
                pyname = _PYNAME.get(type(stmt), type(stmt).__name__)
                yield self.diagnostic(
                    _keyword_span(ctx, stmt),
                    f"{what} in the body of the `@{qual}` kernel `{node.name}`: pypto's parser refuses it "
                    f"(\"{pyname} is not supported by the PTO parser yet\")",
                    help=help_text)
            for comp, name in _comprehensions(node.body):
                if id(comp) in seen:
                    continue
                seen.add(id(comp))
                yield self.diagnostic(
                    ctx.span(comp),
                    f"a comprehension in the body of the `@{qual}` kernel `{node.name}` reads `{name}`: pypto "
                    "evaluates it with `eval(code, {}, locals)`, where a comprehension sees no kernel name "
                    f"(NameError: name '{name}' is not defined)",
                    help="write a Python `for` loop that appends to a list, or build the list in a plain helper")
        for kernel in ctx.model.kernels:
            kqual = scope.decorator_qualname(kernel.node) if isinstance(
                kernel.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            if kqual in ("pypto.frontend.jit", "pypto.jit") and not old_parser(ctx, kernel.node):
                continue  # the repository's new IR front end: not modelled here
            for branch in kernel.branches:
                if branch.kind != "ifexp" or not branch.symbolic or branch.context not in ("jit", "function") or \
                        not in_file(ctx, branch.node):
                    continue
                key = ("node", id(branch.node))
                if key not in seen:
                    seen.add(key)
                    yield self.diagnostic(
                        ctx.span(branch.node),
                        f"conditional expression on the symbolic value `{ctx.source.segment(branch.node.test)}`: "
                        "it has no single build-time value (pypto: `Not concrete value`)",
                        help="use pypto.min / pypto.max / pypto.where, or an `if` statement")
            for message, where in kernel.rejected:
                key = ("node", id(where))
                if key not in seen and in_file(ctx, where):
                    seen.add(key)
                    yield self.diagnostic(ctx.span(where), message, help=_HELP)


_HELP = ("write the kernel with what pypto parses: pypto.loop or a Python `for` over a build-time range, "
         "`if` statements, assignments; keep other Python in plain helpers or the host code")


def _parsed_by_ast_parser(ctx, node, qual) -> bool:
    """0.2.0: every frontend.jit / frontend.function body. --target head: a jit kernel only with
    ``new_ir=False`` (the new IR front end, the default there, parses while, with, comprehensions...);
    a frontend.function helper is parsed by its caller's front end, unknown here: not checked."""
    if ctx.settings.target != "head":
        return True
    return qual != "pypto.frontend.function" and old_parser(ctx, node)


def _statements(stmts, static_test=None):
    """Statements of a kernel body at any depth, not those of functions or classes defined in it.
    ``static_test(if_node)`` -> True/False for a test known at build time: pypto's parser visits
    only the taken arm of such an ``if``, so the other is not walked."""
    stack = list(reversed(stmts))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        taken = static_test(stmt) if static_test is not None and isinstance(stmt, ast.If) else None
        if taken is not None:
            stack.extend(reversed(stmt.body if taken else stmt.orelse))
            continue
        children = [c for c in ast.iter_child_nodes(stmt) if isinstance(c, ast.stmt)]
        for handler in getattr(stmt, "handlers", ()):
            children.extend(handler.body)
        for case in getattr(stmt, "cases", ()):
            children.extend(case.body)
        stack.extend(reversed(children))


def _build_time_test(scope, func):
    """A test of module-level names only (``if DEBUG:``), none of them bound in the kernel, read as
    pypto's parser reads it at build time: its bool, or None when not known."""
    bound = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    bound |= {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}

    def taken(stmt):
        names = {n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}
        if names & bound:
            return None
        value = scope.evaluate(stmt.test)
        return value if isinstance(value, bool) else (bool(value) if isinstance(value, int) else None)

    return taken


def _comprehensions(stmts):
    """(comprehension, first name it reads that it does not bind) of a parsed body: the outermost
    iterable is evaluated in the kernel's scope, everything else in the comprehension's own."""
    for stmt in _statements(stmts):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                continue
            for node in _outer_comprehensions(child):
                name = _free_name(node)
                if name is not None:
                    yield node, name


def _outer_comprehensions(expr):
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, _COMPREHENSIONS):
            yield node
            continue
        if isinstance(node, ast.Lambda):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _free_name(comp) -> str | None:
    bound = set()
    for gen in comp.generators:
        for n in ast.walk(gen.target):
            if isinstance(n, ast.Name):
                bound.add(n.id)
    parts = [comp.generators[0].target] + [g for g in comp.generators[0].ifs]
    for gen in comp.generators[1:]:
        parts += [gen.iter, *gen.ifs]
    parts += [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
    for part in parts:
        for n in ast.walk(part):
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                bound.add(n.target.id)
    for part in parts:
        for n in ast.walk(part):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound and \
                    n.id not in _BUILTINS:
                return n.id
    return None


def _pypto_context(stmt: ast.With, scope) -> bool:
    for item in stmt.items:
        expr = item.context_expr
        func = expr.func if isinstance(expr, ast.Call) else expr
        value = scope.evaluate(func)
        if isinstance(value, ApiRef) and value.qualname.startswith("pypto"):
            return True
    return False


def _keyword_span(ctx, stmt):
    """The statement's keyword for compound statements (``while``, ``with``, ``try``), else the statement."""
    span = ctx.span(stmt)
    length = _KEYWORD_LEN.get(type(stmt))
    if length is None and type(stmt).__name__ in ("TryStar", "Match"):
        length = 3 if type(stmt).__name__ == "TryStar" else 5
    if length is None:
        return span if not isinstance(stmt, ast.ClassDef) else ctx.source.header_span(stmt)
    end = ctx.source.pos(stmt.lineno, stmt.col_offset + length)
    return type(span)(span.path, span.start, end)


RULE = UnsupportedConstruct
