"""PTO023 output-read-after-write."""

from __future__ import annotations

import ast

from ...frontend import api
from ..rule import Case, LintContext, Rule, Valid
from ._local import in_file, old_parser

_HEAD = "import pypto\n\n@pypto.frontend.jit\n"
_SIG = ("def k(x: pypto.Tensor((32, 64), pypto.DT_FP32), out: pypto.Tensor((32, 64), pypto.DT_FP32),\n"
        "      y: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n")  # the body continues on line 7
_LOOP = "    for i in pypto.loop(2, name='L', idx_name='i'):\n"


class OutputReadAfterWrite(Rule):
    """
    ## What it does
    Reports a tensor read after a whole write moved it into another one: ``out[:] = v`` and
    ``out.move(v)`` (every index an empty slice: pypto's move) hand ``v`` over to ``out``, so a
    later read of ``v`` -- a kernel input (``out[:] = x`` then ``out += x``), a plain whole slice
    of one (``x[:, :]`` is ``x``), or a temporary reached by its name (``t = x + 1.0;
    out[:] = t; y[:] = t * 2.0``), or a view of it -- reads an empty tensor. The finding is at
    the first such read, with the move it follows.

    Left alone: reads of the output itself after the move (it holds the value: measured, they
    trace fine), a move and a read on the two sides of one ``if``/``else`` (one path each),
    assembles and partial writes (``out[0:16, :] = x[0:16, :]`` copies), ``pypto.clone(x)``
    moved instead of ``x``, writes into a computed tensor (the build rebinds its name), and
    ``@pypto_ast.jit`` kernels (pypto-ast lowers the move as a copy). With ``--target head`` a
    ``frontend.jit`` kernel is checked only when declared ``new_ir=False`` (the repository's new
    IR front end, its default, is another implementation).

    ## Why is this bad?
    pypto's ``Tensor.move`` is the C++ ``Move`` of the source's storage, not a copy: the moved
    tensor is left empty. Measured on pypto 0.2.0 (SIM): ``out[:] = x`` then ``y[:] = x * 2.0``
    raises ``ValueError: Empty tensor``; then ``out[:] = out + x`` or ``out += x`` kills the
    process (SIGSEGV, no message); ``t = x + 1.0; out[:] = t; y[:] = t * 2.0`` fails with the
    misleading ``F21004 op [ADDS]tile shape not set``. ``out[:] = out * 2.0`` after the move,
    and a move in the ``if`` branch read in the ``else`` branch, trace fine.

    ## Example
    ```python
    out[:] = x          # also PTO016: no copy is generated
    out[:] = out + x    # reads x after it was moved: segfault
    ```

    ## Use instead
    ```python
    out[:] = pypto.clone(x)
    out[:] = out + x
    ```

    ## Fix safety
    No fix: whether to copy (``pypto.clone``) or to read the output instead is the author's
    choice.

    ## References
    pypto 0.2.0 ``tensor.py`` ``Tensor.move`` / ``__setitem__``; `pypto-dsl.md` §6 (the
    ``out[:] = x`` then ``out[:] = out + x`` segfault); `pypto-0.2-behaviour.md` (a) pitfall 1
    variants and ``dsl/work/inplace_aug_assign_out``.
    """

    code = "PTO023"
    name = "output-read-after-write"
    summary = "a tensor read after `out[:] = v` / `out.move(v)` handed it over (it is empty now)"
    VALID = [
        # the output read after the move holds the value
        _HEAD + _SIG + "    t = x + 1.0\n    out[:] = t\n    out[:] = out + x\n    y[:] = out * 2.0\n",
        # a copy, then the input is still there
        _HEAD + _SIG + "    out[:] = pypto.clone(x)\n    out[:] = out + x\n",
        # a partial write copies (assemble)
        _HEAD + _SIG + "    out[0:16, :] = x[0:16, :]\n    y[:] = x * 2.0\n",
        # the move and the read on the two sides of one if/else
        _HEAD + _SIG + _LOOP + "        part = x + 1.0\n        if pypto.is_loop_begin(i):\n"
        "            out[:] = part\n        else:\n            out[:] = out + part\n",
        # reads before the move
        _HEAD + _SIG + "    t = x * 2.0\n    y[:] = t + 1.0\n    out[:] = t\n",
        # pypto_ast.jit lowers a move of a parameter as a copy
        "import pypto\nimport pypto_ast\n\n@pypto_ast.jit\n" + _SIG + "    out[:] = x\n    y[:] = x * 2.0\n",
        # --target head: the new IR front end (new_ir=True, its default)
        Valid(_HEAD + _SIG + "    out[:] = x\n    y[:] = x * 2.0\n", settings={"target": "head"}),
    ]
    INVALID = [
        Case(_HEAD + _SIG + "    out[:] = x\n    out[:] = out + x\n", line=8, col=20),
        Case(_HEAD + _SIG + "    out[:] = x\n    out += x\n", line=8, col=12),
        # a temporary used again after the move
        Case(_HEAD + _SIG + "    t = x + 1.0\n    out.move(t)\n    y[:] = t * 2.0\n", line=9, col=12),
        # in a loop, through an alias
        Case(("import pypto as pto\n\n@pto.frontend.jit\n" + _SIG + _LOOP +
              "        part = x + 1.0\n        out[:] = part\n        y[:] = part[0:32, :] * 2.0\n")
             .replace("pypto.", "pto."), line=10, col=16),
        # a whole slice is the input itself
        Case(_HEAD + _SIG + "    out[:] = x[:, :]\n    y[:] = pypto.exp(x)\n", line=8, col=22),
        # --target head, a kernel on the AST parser
        Case(_HEAD.replace("jit\n", "jit(new_ir=False)\n") + _SIG + "    out[:] = x\n    y[:] = x * 2.0\n",
             line=8, col=12, settings={"target": "head"}),
    ]

    def check(self, ctx: LintContext):
        seen: set = set()
        scope = ctx.model.scope
        parents = None
        paths: dict = {}
        for kernel in ctx.model.kernels:
            func = kernel.node if isinstance(kernel.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            if func is not None and scope.decorator_qualname(func) in api.RETURNING_DECORATORS:
                continue
            if func is not None and kernel.kind in ("jit", "pypto.jit") and not old_parser(ctx, func):
                continue
            for move in kernel.moves:
                value = move.value
                if getattr(value, "root", None) is None or value.root() is move.target.root() or \
                        move.target.origin not in ("param", "local") or not in_file(ctx, move.node):
                    continue
                examined = 0
                for use in kernel.moved_uses:
                    if use.order <= move.order or not _reaches(use.tensor, value) or not in_file(ctx, use.node):
                        continue
                    examined += 1
                    if examined > _MAX_USES:  # hostile input (an elif chain of moves): stop looking
                        break
                    if _within(use.node, move.stmt or move.node):
                        continue  # the move's own statement
                    if parents is None:
                        parents = _parents(ctx.source.tree)
                    if _exclusive(parents, paths, move.stmt or move.node, use.node):
                        continue
                    key = (id(move.node), id(value))
                    if key not in seen:
                        seen.add(key)
                        yield self._diagnostic(ctx, move, use)
                    break

    def _diagnostic(self, ctx, move, use):
        value_text = ctx.source.segment(move.value_node) if move.value_node is not None else "the value"
        target_text = ctx.source.segment(move.node.func.value if move.method else move.node.value)
        form = f"{target_text}.move({value_text})" if move.method else f"{target_text}[:] = {value_text}"
        name = move.value.name or (value_text if isinstance(move.value_node, ast.Name) else "")
        read = ctx.source.segment(use.node)
        if move.value.origin == "param":
            what = f"the kernel input `{name}`" if name else "the kernel input"
            fails = "`ValueError: Empty tensor` (a segfault when it is read in one op with the output)"
            help_text = f"copy it instead of moving it: `{target_text}[:] = pypto.clone({value_text})`"
        else:
            what = f"`{name}`" if name else "the moved tensor"
            fails = "the misleading `F21004 op [...] tile shape not set` (or `Empty tensor` inside a loop)"
            help_text = (f"read `{target_text}`, which holds the value now, or copy it: "
                         f"`{target_text}[:] = pypto.clone({value_text})`")
        subject = f"`{read}` reads {what}" if read != name else (what[0].upper() + what[1:]) + " is read"
        message = (f"{subject} after `{form}` (line {move.node.lineno}) moved it into "
                   f"`{target_text}`: a move hands the tensor over, it does not copy it, so it is empty here; "
                   f"pypto 0.2.0 fails with {fails}")
        return self.diagnostic(ctx.span(use.node), message, help=help_text)


def _reaches(tensor, value) -> bool:
    """``tensor`` is ``value`` or a view of it."""
    t = tensor
    while t is not None:
        if t is value or t.ident == value.ident:
            return True
        t = t.base
    return False


def _within(node, outer) -> bool:
    if node is None or outer is None or not hasattr(node, "lineno") or not hasattr(outer, "lineno"):
        return False
    start, end = (outer.lineno, outer.col_offset), (outer.end_lineno, outer.end_col_offset)
    return start <= (node.lineno, node.col_offset) and (node.end_lineno, node.end_col_offset) <= end


def _parents(tree) -> dict:
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


_MAX_USES = 32  # later reads of one moved tensor looked at before giving up
_MAX_DEPTH = 64  # enclosing ifs looked at


def _branch_path(parents, paths, node) -> dict:
    """id(If) -> "body" | "orelse" for the nearest ``if`` statements around ``node`` (cached)."""
    if id(node) in paths:
        return paths[id(node)]
    path = {}
    child = node
    parent = parents.get(id(child))
    while parent is not None and len(path) < _MAX_DEPTH:
        if isinstance(parent, (ast.If, ast.IfExp)):
            body = parent.body if isinstance(parent.body, list) else [parent.body]
            orelse = parent.orelse if isinstance(parent.orelse, list) else [parent.orelse]
            if any(child is s for s in body):
                path[id(parent)] = "body"
            elif any(child is s for s in orelse):
                path[id(parent)] = "orelse"
        child, parent = parent, parents.get(id(parent))
    paths[id(node)] = path
    return path


def _exclusive(parents, paths, a, b) -> bool:
    """``a`` and ``b`` sit on the two sides of one ``if``/``else`` (pypto traces one path each)."""
    pa, pb = _branch_path(parents, paths, a), _branch_path(parents, paths, b)
    return any(pb.get(k) not in (None, side) for k, side in pa.items())


RULE = OutputReadAfterWrite
