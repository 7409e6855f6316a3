"""PTO020 return-in-kernel."""

from __future__ import annotations

import ast

from ..rule import Case, LintContext, Rule, Valid

_SIG = "(x: pypto.Tensor((32, 32), pypto.DT_FP32), y: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"


class ReturnInKernel(Rule):
    """
    ## What it does
    Reports a ``return`` statement -- with a value or bare -- in the body of a
    ``@pypto.frontend.jit`` kernel (also in its ``if`` / ``for`` / ``pypto.loop`` bodies).
    With ``--target head`` the repository's ``@pypto.jit`` (the same decorator there) is
    checked too.

    pypto-ast's own ``@pypto_ast.jit`` returns its results by convention, so the rule is
    silent there; plain helpers a kernel calls run as Python and may return.

    ## Why is this bad?
    pypto's parser refuses every ``return`` in a jit body (``ValueError: Return statements
    are not allowed. Use an out parameter and out.move(...) to write results instead.``,
    pypto 0.2.0 and the later release alike), and only when the kernel is first called: the
    kernel has to write its results into output parameters.

    ## Example
    ```python
    @pypto.frontend.jit
    def k(x: pypto.Tensor((32, 32), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 16)
        return pypto.exp(x)
    ```

    ## Use instead
    ```python
    @pypto.frontend.jit
    def k(x: pypto.Tensor((32, 32), pypto.DT_FP32), y: pypto.Tensor((32, 32), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 16)
        y[:] = pypto.exp(x)
    ```
    or decorate with ``@pypto_ast.jit``, which returns its results.

    ## Fix safety
    No fix: which parameter should receive the result is the author's choice.

    ## References
    pypto 0.2.0 ``frontend/parser/parser.py`` (``_validate_return_statements``,
    ``_visit_return``); PyPTO FAQ kernel-output-not-written-back; `pypto-dsl.md` §4.
    """

    code = "PTO020"
    name = "return-in-kernel"
    summary = "`return` in a pypto.frontend.jit kernel"
    VALID = [
        "import pypto\n\n@pypto.frontend.jit\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
        "    y[:] = pypto.exp(x)\n",
        # pypto-ast's own convention
        "import pypto\nimport pypto_ast\n\n@pypto_ast.jit\ndef k(x: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n    return pypto.exp(x)\n",
        # a plain helper returns to the kernel
        "import pypto\n\ndef act(t):\n    return pypto.sigmoid(t)\n\n@pypto.frontend.jit\ndef k" + _SIG +
        "    pypto.set_vec_tile_shapes(16, 16)\n    y[:] = act(x)\n",
        # host code around a nested kernel
        "import pypto\nimport torch\n\ndef test_k():\n    @pypto.frontend.jit\n"
        "    def k(x: pypto.Tensor((32, 32), pypto.DT_FP32), y: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "        pypto.set_vec_tile_shapes(16, 16)\n        y[:] = pypto.exp(x)\n\n"
        "    out = torch.zeros(32, 32)\n    k(torch.ones(32, 32), out)\n    return out\n",
        # the later release's @pypto.jit only under --target head
        Valid("import pypto\n\n@pypto.jit\ndef k(x: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
              "    return pypto.exp(x)\n"),
    ]
    INVALID = [
        Case("import pypto\n\n@pypto.frontend.jit\ndef k(x: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(16, 16)\n    return pypto.exp(x)\n", line=6, col=5),
        # a bare return under an if is refused too
        Case("from pypto.frontend import jit\nimport pypto as pto\n\n@jit(runtime_options={'run_mode': 1})\n"
             "def k(x: pto.Tensor((32, 32), pto.DT_FP32), y: pto.Tensor((32, 32), pto.DT_FP32), fast: bool):\n"
             "    pto.set_vec_tile_shapes(16, 16)\n    if fast:\n        y[:] = x\n        return\n"
             "    y[:] = pto.exp(x)\n", line=9, col=9),
        # inside a pypto loop
        Case("import pypto\n\n@pypto.frontend.jit\ndef k" + _SIG + "    pypto.set_vec_tile_shapes(16, 16)\n"
             "    for i in pypto.loop(2, name='L', idx_name='i'):\n        y[:] = x + 1.0\n        return y\n",
             line=8, col=9),
        Case("import pypto\n\n@pypto.jit\ndef k(x: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
             "    return pypto.exp(x)\n", line=5, col=5, settings={"target": "head"}),
    ]

    def check(self, ctx: LintContext):
        scope = ctx.model.scope
        checked = {"pypto.frontend.jit"} | ({"pypto.jit"} if ctx.settings.target == "head" else set())
        seen: set = set()
        for kernel in ctx.model.kernels:
            node = kernel.node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(node) in seen:
                continue
            seen.add(id(node))
            qual = scope.decorator_qualname(node)
            if qual not in checked:
                continue
            for ret in _returns(node.body):
                what = "`return`" if ret.value is not None else "a bare `return`"
                yield self.diagnostic(
                    ctx.span(ret),
                    f"{what} in the `@{qual}` kernel `{node.name}`: pypto refuses it when it parses the kernel "
                    "(\"Return statements are not allowed\")",
                    help="write the result into an output parameter (`out[:] = ...` or `out.move(...)`), "
                         "or decorate with @pypto_ast.jit to return it",
                )


def _returns(stmts):
    """Return statements of a body, not those of functions or classes defined in it."""
    stack = list(reversed(stmts))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Return):
            yield stmt
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        children = [c for c in ast.iter_child_nodes(stmt) if isinstance(c, ast.stmt)]
        for handler in getattr(stmt, "handlers", ()):
            children.extend(handler.body)
        for case in getattr(stmt, "cases", ()):
            children.extend(case.body)
        stack.extend(reversed(children))


RULE = ReturnInKernel
