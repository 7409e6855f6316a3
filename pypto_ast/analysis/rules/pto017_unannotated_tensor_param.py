"""PTO017 unannotated-tensor-param."""

from __future__ import annotations

import ast

from ...diagnostics import Note
from ...frontend import api
from ...frontend.values import UNKNOWN, ApiRef, TensorAnnotation
from ..rule import Case, LintContext, Rule, Valid

_OK = "pypto.Tensor((32, 32), pypto.DT_FP32)"


def _kernel(x_ann: str, body: str = "    out[:] = x + 1.0\n", out_ann: str = _OK) -> str:
    x = f"x: {x_ann}" if x_ann else "x"
    return (
        "import pypto\n\n@pypto.frontend.jit\n"
        f"def k({x}, out: {out_ann}):\n"
        "    pypto.set_vec_tile_shapes(16, 32)\n" + body
    )


class UnannotatedTensorParam(Rule):
    """
    ## What it does
    Reports a parameter of a ``pypto.frontend.jit`` kernel that the body uses as a tensor --
    sliced or indexed (``x[0:16, :]``, ``x[:] = ...``), written with ``x.move(...)`` /
    ``x.assemble(...)``, passed to a ``pypto.*`` call (``pypto.add(x, y)``, ``pypto.view(x, ...)``),
    -- while its annotation is missing or
    is not a tensor annotation (``int``, ``torch.Tensor``). It also reports the bare class
    ``pypto.Tensor`` used as an annotation, wherever the parameter is used.

    Every spelling of a tensor annotation counts as one, under both ``--target`` versions:
    ``pypto.Tensor((m, n), dt)``, ``pypto.Tensor[[m, n], dt]``, ``pypto.Tensor()``,
    ``pypto.Tensor([...])`` and ``pypto.Tensor[...]`` without a dtype (0.2.0 reads a missing dtype
    as FP32, the repository's later version takes the argument's: which dtype that is, is not this
    rule's business). An annotation the linter cannot evaluate is trusted. ``@pypto_ast.jit``
    kernels and ``frontend.function`` helpers are not checked (the caller's tensors flow in).

    ## Why is this bad?
    pypto decides which parameters are tensors from their annotations alone: an annotation
    that has no ``to_tensor`` makes the parameter a plain value. Passing a torch tensor to it
    raises ``RuntimeError: Non-tensor parameter 'x' must not be a torch.Tensor``; passing the
    FAQ's ``pypto.from_torch(...)`` objects traces a kernel in which nothing is computed (0 tasks,
    "Root incast read from empty address" in the log). The bare class ``pypto.Tensor`` has a
    ``to_tensor`` method, so pypto calls it unbound and fails with
    ``AttributeError: 'str' object has no attribute 'shape'``.

    ## Example
    ```python
    @pypto.frontend.jit
    def add_one(x, out: pypto.Tensor((32, 32), pypto.DT_FP32)):
        out[:] = x + 1.0
    ```

    ## Use instead
    ```python
    @pypto.frontend.jit
    def add_one(x: pypto.Tensor((32, 32), pypto.DT_FP32),
                out: pypto.Tensor((32, 32), pypto.DT_FP32)):
        out[:] = x + 1.0
    ```

    ## Fix safety
    No fix: only the author knows the shape and dtype, and adding an annotation changes how
    the kernel is called (tensor parameters come first and take no default).

    ## References
    `pypto-dsl.md` §2.1 (signature rules); `pypto-0.2-behaviour.md` pitfall 1 (the FAQ's
    unannotated ``def add_kernel(x, y)``), "annotation = the bare class ``pypto.Tensor``".
    """

    code = "PTO017"
    name = "unannotated-tensor-param"
    summary = "a frontend.jit parameter used as a tensor has no pypto.Tensor annotation (or the bare class)"
    VALID = [
        _kernel(_OK),
        _kernel("pypto.Tensor[[32, 32], pypto.DT_FP32]"),
        _kernel("pypto.Tensor()"),
        Valid(_kernel("pypto.Tensor([32, 32])"), settings={"target": "0.2.0"}),
        Valid(_kernel("pypto.Tensor([32, 32])"), settings={"target": "head"}),
        Valid(_kernel("pypto.Tensor[...]"), settings={"target": "head"}),
        Valid(_kernel("pypto.Tensor[...]"), settings={"target": "0.2.0"}),
        # a build-time scalar parameter used as one (arithmetic with a tensor proves nothing)
        "import pypto\n\n@pypto.frontend.jit\n"
        f"def k(x: {_OK}, out: {_OK}, scale=2.0, rows: int = 16):\n"
        "    pypto.set_vec_tile_shapes(rows, 32)\n    out[:] = x * scale\n",
        # an unannotated parameter used only as a Python value (a list of offsets)
        "import pypto\n\n@pypto.frontend.jit\n"
        f"def k(x: {_OK}, out: {_OK}, offs=(0, 16)):\n"
        "    pypto.set_vec_tile_shapes(16, 32)\n    for o in offs:\n"
        "        out[o:o + 16, :] = x[o:o + 16, :] * 2.0\n",
        # rebound to a tensor before any use
        "import pypto\n\n@pypto.frontend.jit\n"
        f"def k(x: {_OK}, out: {_OK}, y=None):\n"
        "    pypto.set_vec_tile_shapes(16, 32)\n    y = x * 2.0\n    out[:] = y[:, :] + 1.0\n",
        # an annotation the linter cannot evaluate is trusted
        "import pypto\nfrom mylib import T32\n\n@pypto.frontend.jit\n"
        f"def k(x: T32, out: {_OK}):\n    pypto.set_vec_tile_shapes(16, 32)\n    out[:] = x + 1.0\n",
        # pypto-ast's own jit and plain helpers are not checked
        "import pypto\nimport pypto_ast\n\n@pypto_ast.jit\ndef k(x, y):\n    return x + y\n",
        "import pypto\n\ndef helper(x, out):\n    out[:] = pypto.exp(x)\n",
    ]
    INVALID = [
        # the FAQ's form: no annotations at all
        Case(
            "import pypto\n\n@pypto.frontend.jit\ndef add_kernel(x, y):\n"
            "    pypto.set_vec_tile_shapes(16, 32)\n    y[:] = pypto.add(x, 1.0)\n",
            line=4, col=16,
        ),
        Case(_kernel("", body="    out[:] = x[:, :] + 1.0\n"), line=4, col=7),
        # `x + 1.0` alone could be a scalar: only a tensor use counts
        Case(_kernel("", body="    y = x + 1.0\n    out[:] = pypto.exp(y)\n    out.assemble(x, [0, 0])\n"),
             line=4, col=7),
        Case(_kernel("", body="    out[:] = pypto.exp(x[0:16, :])\n"), line=4, col=7),
        Case(_kernel("torch.Tensor", body="    out.move(pypto.view(x, [16, 32], [0, 0]))\n").replace(
            "import pypto\n", "import pypto\nimport torch\n"), line=5, col=7),
        # the bare class
        Case(_kernel("pypto.Tensor"), line=4, col=10),
        Case(_kernel("pypto.Tensor", body="    pass\n"), line=4, col=10, settings={"target": "head"}),
        Case(
            "from pypto import Tensor, DT_FP32\nimport pypto\n\n@pypto.frontend.jit\n"
            "def k(x: Tensor((8, 8), DT_FP32), out: Tensor):\n    out[:] = x * 2.0\n",
            line=5, col=40,
        ),
    ]

    def check(self, ctx: LintContext):
        scope = ctx.model.scope
        for kernel in ctx.model.kernels:
            func = kernel.node
            if kernel.kind != "jit" or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if scope.decorator_qualname(func) in api.RETURNING_DECORATORS:
                continue
            args = func.args
            tensors, suspects = set(), {}
            for arg in args.posonlyargs + args.args + args.kwonlyargs:
                ann = scope.evaluate(arg.annotation) if arg.annotation is not None else None
                if isinstance(ann, ApiRef) and ann.qualname in api.TENSOR_CLASSES:
                    yield self._bare(ctx, kernel, arg)
                    continue
                if isinstance(ann, TensorAnnotation) or ann is UNKNOWN and arg.annotation is not None:
                    tensors.add(arg.arg)
                    continue
                if arg.annotation is None or isinstance(ann, (ApiRef, type)) or ann is int or ann is float:
                    suspects[arg.arg] = arg
            if not suspects:
                continue
            for name, use in _tensor_uses(ctx, func, set(suspects), tensors):
                yield self._unannotated(ctx, kernel, suspects[name], use)

    def _bare(self, ctx, kernel, arg):
        text = ctx.source.segment(arg.annotation)
        return self.diagnostic(
            ctx.span(arg.annotation),
            f"parameter `{arg.arg}` of kernel `{kernel.name}` is annotated with the bare class `{text}`: pypto "
            "calls its `to_tensor` unbound and fails with `AttributeError: 'str' object has no attribute 'shape'`",
            help=f"give the shape and dtype: `{arg.arg}: {text}([rows, cols], pypto.DT_FP32)` (or `{text}()` to "
            "take both from the argument)",
        )

    def _unannotated(self, ctx, kernel, arg, use):
        how = "has no annotation" if arg.annotation is None else \
            f"is annotated `{ctx.source.segment(arg.annotation)}`, which is not a pypto tensor annotation"
        return self.diagnostic(
            ctx.span(arg),
            f"parameter `{arg.arg}` of kernel `{kernel.name}` is used as a tensor but {how}: pypto treats it as a "
            "plain value, so nothing is computed from it (a torch tensor passed to it raises `Non-tensor parameter`)",
            help=f"annotate it: `{arg.arg}: pypto.Tensor([rows, cols], pypto.DT_FP32)` (or `pypto.Tensor()` to take "
            "the shape and dtype from the argument); tensor parameters come first",
            notes=(Note(f"`{arg.arg}` is used as a tensor here", ctx.span(use)),),
        )


def _tensor_uses(ctx, func, suspects: set, tensors: set):
    """(name, node) of the first tensor use of each suspect parameter that the body never rebinds
    before it (a name assigned anywhere before its first use is left alone)."""
    scope = ctx.model.scope
    assigned: dict = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and node.id in suspects:
            assigned[node.id] = min(assigned.get(node.id, node.lineno), node.lineno)
    found: dict = {}

    def note(name, node):
        if name in suspects and name not in found and (name not in assigned or assigned[name] > node.lineno):
            found[name] = node

    for node in ast.walk(func):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            key = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(k, ast.Slice) for k in key):  # x[0:16, :]; an index alone may be a list's
                note(node.value.id, node)
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.attr in ("move", "assemble"):
                note(f.value.id, node)
                if node.args and isinstance(node.args[0], ast.Name):  # the value moved in is a tensor too
                    note(node.args[0].id, node.args[0])
                continue
            target = scope.evaluate(f) if isinstance(f, (ast.Attribute, ast.Name)) else None
            op = target.qualname[len("pypto."):] if isinstance(target, ApiRef) and \
                target.qualname.startswith("pypto.") else None
            if op in _TENSOR_FIRST:
                tensor_args = node.args[:1] + (node.args[2:3] if op == "assemble" else [])
                for a in tensor_args:
                    if isinstance(a, ast.Name):
                        note(a.id, a)
    for name, node in sorted(found.items(), key=lambda kv: (kv[1].lineno, kv[1].col_offset)):
        yield name, node


# pypto ops whose first positional argument is a tensor (creation ops take shapes)
_TENSOR_FIRST = (api.ALL_OPS - api.CREATION) | {"clone", "view"}


RULE = UnannotatedTensorParam
