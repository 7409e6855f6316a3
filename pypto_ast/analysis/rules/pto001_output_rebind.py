"""PTO001 output-rebind."""

from __future__ import annotations

import ast

from ...diagnostics import Applicability, Edit, Fix, Note
from ...frontend.values import Tensor as TensorVal
from ..rule import Case, LintContext, Rule

_HEAD = "import pypto\n\n@pypto.frontend.jit\ndef add_one(x: pypto.Tensor((64, 64), pypto.DT_FP32),\n            out: pypto.Tensor((64, 64), pypto.DT_FP32)):\n    pypto.set_vec_tile_shapes(32, 64)\n"


def _passed_a_tensor(ctx, function, name: str) -> bool:
    """Whether a kernel of this file calls the frontend.function ``function`` with one of its
    tensor parameters in the place of ``name``."""
    node = function.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    names = [a.arg for a in node.args.posonlyargs + node.args.args]
    for caller in ctx.model.kernels:
        if caller is function or not isinstance(caller.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(caller.node):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == node.name):
                continue
            given = {k.arg: k.value for k in call.keywords if k.arg}
            given.update({names[i]: a for i, a in enumerate(call.args) if i < len(names)})
            arg = given.get(name)
            if isinstance(arg, ast.Name) and isinstance(caller.params.get(arg.id), TensorVal):
                return True
    return False


class OutputRebind(Rule):
    """
    ## What it does
    Reports a kernel without a return value that *rebinds* an output parameter
    (``out = ...``, ``out = pypto.add(...)``, ``out += ...``, ``a, out = ...``) instead
    of writing into it.

    A parameter counts as an output when the kernel writes it somewhere
    (``out[:] = ...``, ``out.move(...)``, ``out.assemble(...)``,
    ``pypto.assemble(x, offsets, out)``), or when the tensor the caller passed is never
    read before the rebinding, or the rebound value is never used afterwards.

    ## Why is this bad?
    A kernel body is Python: ``out = x + 1`` only points the local name ``out`` at a new
    tensor. The caller's tensor is never written, and pypto 0.2.0 accepts the kernel
    without a word -- the computation is dropped as dead code (0 tasks) and the caller
    reads back whatever the tensor held before. ``out += x`` is the same rebinding.

    ## Example
    ```python
    @pypto.frontend.jit
    def add_one(x: pypto.Tensor((64, 64), pypto.DT_FP32),
                out: pypto.Tensor((64, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 64)
        out = x + 1.0
    ```

    ## Use instead
    ```python
        out[:] = x + 1.0          # or out.move(x + 1.0)
    ```

    ## Fix safety
    ``out = expr`` becomes ``out[:] = expr``, and an output among the names of a tuple target
    (``a_out, b_out = helper(x)``) becomes ``a_out[:]`` there, under the same rule.
    ``out += x`` is shown as ``out[:] = out + (x)`` but never applied: it reads the output,
    which 0.2.0 may find unwritten (PTO023). The fix is safe when ``expr`` is a tensor
    whose shape is unknown or equal to the output's: later reads of ``out`` then see the
    same values. When the shapes are known to differ, or ``expr`` is not a tensor, the fix
    is unsafe (``--unsafe-fixes``): writing a differently shaped value is silently accepted
    by pypto 0.2.0 and must be reviewed. Augmented assignments and tuple targets get no fix.

    ## References
    PyPTO FAQ: kernel-output-not-written-back; `pypto-0.2-behaviour.md` pitfall 1.
    """

    code = "PTO001"
    name = "output-rebind"
    summary = "an output parameter is rebound instead of written, so the caller's tensor is never written"
    fix_availability = "sometimes"
    fix_meaning = "output-write"
    VALID = [
        # a frontend.function that returns its result: the rebinding is a local
        "import pypto\n\n@pypto.frontend.function\ndef norm(x, gamma):\n"
        "    h = x * x\n    h = h * gamma\n    return h\n",
        # a frontend.function parameter rebound and then used
        "import pypto\n\n@pypto.frontend.function\ndef norm(x, gamma, out):\n"
        "    x = x * gamma\n    out[:] = x + 1.0\n",
        _HEAD + "    out[:] = x + 1.0\n",
        _HEAD + "    out.move(x + 1.0)\n",
        _HEAD + "    pypto.assemble(x + 1.0, [0, 0], out)\n",
        _HEAD + "    x = pypto.cast(x, pypto.DT_FP32)\n    out[:] = x * 2.0\n",
        # a returning kernel (pypto_ast.jit convention): rebinding names is fine there
        "import pypto_ast\nimport pypto\n\n@pypto_ast.jit\ndef k(x: pypto.Tensor((8, 8), pypto.DT_FP32), y: pypto.Tensor((8, 8), pypto.DT_FP32)):\n"
        "    y = x + y\n    return y\n",
        # plain functions are not kernels
        "def f(x, out):\n    out = x + 1\n",
    ]
    INVALID = [
        # a frontend.function helper rebinds the output it was given and returns nothing
        Case(
            "import pypto\n\n@pypto.frontend.function\ndef norm(x, gamma, out):\n"
            "    h = pypto.exp(x)\n    out = h * gamma\n\n@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor((8, 8), pypto.DT_FP32), g: pypto.Tensor((1, 8), pypto.DT_FP32),\n"
            "      y: pypto.Tensor((8, 8), pypto.DT_FP32)):\n    pypto.set_vec_tile_shapes(8, 8)\n    norm(x, g, y)\n",
            line=6, col=5,
        ),
        Case(_HEAD + "    out = x + 1.0\n", line=7, col=5, fixed=_HEAD + "    out[:] = x + 1.0\n"),
        Case(_HEAD + "    out = pypto.add(x, x)\n", line=7, fixed=_HEAD + "    out[:] = pypto.add(x, x)\n"),
        Case(_HEAD + "    out += x\n", line=7, col=5),
        Case(_HEAD + "    tmp, out = x * 2.0, x + 1.0\n", line=7, fixed=_HEAD + "    tmp, out[:] = x * 2.0, x + 1.0\n"),
        # a helper returning a tuple of outputs: each element written
        Case(
            "import pypto\n\ndef halves(x):\n    return x + 1.0, x * 2.0\n\n@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor((8, 8), pypto.DT_FP32), a: pypto.Tensor((8, 8), pypto.DT_FP32),\n"
            "      b: pypto.Tensor((8, 8), pypto.DT_FP32)):\n    pypto.set_vec_tile_shapes(8, 8)\n    a, b = halves(x)\n",
            line=10, col=5,
            fixed="import pypto\n\ndef halves(x):\n    return x + 1.0, x * 2.0\n\n@pypto.frontend.jit\n"
            "def k(x: pypto.Tensor((8, 8), pypto.DT_FP32), a: pypto.Tensor((8, 8), pypto.DT_FP32),\n"
            "      b: pypto.Tensor((8, 8), pypto.DT_FP32)):\n    pypto.set_vec_tile_shapes(8, 8)\n    a[:], b[:] = halves(x)\n",
        ),
        Case(
            "import pypto as pto\nfrom pypto.frontend import jit\n\n@jit(runtime_options={})\n"
            "def k(a: pto.Tensor[[32, 32], pto.DT_FP16], o: pto.Tensor[[32, 32], pto.DT_FP16]):\n"
            "    pto.set_vec_tile_shapes(32, 32)\n    for i in pto.loop(1):\n        o = a * a  # squared\n",
            line=8, col=9,
            fixed="import pypto as pto\nfrom pypto.frontend import jit\n\n@jit(runtime_options={})\n"
            "def k(a: pto.Tensor[[32, 32], pto.DT_FP16], o: pto.Tensor[[32, 32], pto.DT_FP16]):\n"
            "    pto.set_vec_tile_shapes(32, 32)\n    for i in pto.loop(1):\n        o[:] = a * a  # squared\n",
        ),
        # shapes differ: only an unsafe fix
        Case(
            _HEAD + "    out = pypto.sum(x, 1, keepdim=True)\n", line=7, unsafe=True,
            fixed=_HEAD + "    out[:] = pypto.sum(x, 1, keepdim=True)\n",
        ),
        # legacy pypto.function form
        Case(
            "import pypto\nimport torch\nx = pypto.from_torch(torch.ones(8, 8), 'x')\ny = pypto.from_torch(torch.ones(8, 8), 'y')\n"
            "with pypto.function('f', x, y):\n    for _ in pypto.loop(1):\n        y = x + 1.0\n",
            line=7, col=9,
            fixed="import pypto\nimport torch\nx = pypto.from_torch(torch.ones(8, 8), 'x')\ny = pypto.from_torch(torch.ones(8, 8), 'y')\n"
            "with pypto.function('f', x, y):\n    for _ in pypto.loop(1):\n        y[:] = x + 1.0\n",
        ),
    ]

    def check(self, ctx: LintContext):
        for kernel in ctx.model.kernels:
            if kernel.has_return_value:
                continue
            seen = set()
            for fact in kernel.rebinds:
                name = fact.param
                if name in seen:
                    continue
                seen.add(name)
                param = kernel.params.get(name)
                if not isinstance(param, TensorVal) and name not in kernel.outputs:
                    # a frontend.function's parameters carry no annotation: the caller passes
                    # tensors, and a parameter rebound to a value nothing reads is an output lost
                    if not (kernel.kind == "function" and param is None and not fact.read_after
                            and (isinstance(fact.value, TensorVal) or _passed_a_tensor(ctx, kernel, name))):
                        continue
                read_before = any(
                    order < fact.order or set(loops) & set(fact.loops)
                    for pname, order, loops in kernel.param_reads
                    if pname == name
                )
                if name in kernel.outputs:
                    why = f"`{name}` is written elsewhere in the kernel, so it is an output"
                elif not fact.read_after:
                    why = f"the new value of `{name}` is never used"
                elif not read_before:
                    why = f"the tensor passed as `{name}` is never read"
                else:
                    continue
                yield self._diagnostic(ctx, kernel, fact, param, why)

    def _diagnostic(self, ctx, kernel, fact, param, why):
        name = fact.param
        fix = None
        if fact.simple and not fact.aug or _tuple_element(fact):
            value = fact.value
            safe = isinstance(value, TensorVal) and (
                value.shape is None or not isinstance(param, TensorVal) or param.shape is None
                or value.shape == param.shape or None in value.shape
            )
            end = ctx.source.pos(fact.target.end_lineno, fact.target.end_col_offset)
            fix = Fix(
                f"write into the output: `{name}[:] = ...`",
                Applicability.SAFE if safe else Applicability.UNSAFE,
                (Edit(end, end, "[:]"),),
            )
        elif fact.aug and isinstance(fact.stmt, ast.AugAssign) and isinstance(fact.stmt.target, ast.Name):
            # shown, never applied: `out[:] = out + x` reads the output (0.2.0 may read it empty: PTO023)
            op = _AUG_OPS.get(type(fact.stmt.op))
            if op is not None:
                value = ctx.source.segment(fact.stmt.value)
                start = ctx.source.pos(fact.stmt.lineno, fact.stmt.col_offset)
                end = ctx.source.pos(fact.stmt.end_lineno, fact.stmt.end_col_offset)
                fix = Fix(f"write into the output: `{name}[:] = {name} {op} ...` (it reads the output: check it "
                          "was written first)", Applicability.DISPLAY_ONLY,
                          (Edit(start, end, f"{name}[:] = {name} {op} ({value})"),))
        verb = "augmented assignment rebinds" if fact.aug else "assignment rebinds"
        notes = ()
        declared = kernel.param_nodes.get(name)
        if declared is not None and hasattr(declared, "lineno"):
            notes = (Note(f"`{name}` is a parameter of kernel `{kernel.name}` here", ctx.span(declared)),)
        help_text = None if fix else (
            f"write the result into the caller's tensor: `{name}[:] = ...`, `{name}.move(...)` "
            f"or `pypto.assemble(part, offsets, {name})`"
        )
        return self.diagnostic(
            ctx.span(fact.stmt),
            f"{verb} output parameter `{name}`, so the caller's tensor is never written ({why})",
            help=help_text,
            fix=fix,
            notes=notes,
        )


_AUG_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.MatMult: "@"}


def _tuple_element(fact) -> bool:
    """``a_out, b_out = helper(x)``: the rebound name is a plain element of a tuple (or list) target of a
    one-target assignment, so ``a_out[:], b_out[:] = helper(x)`` writes each output instead."""
    stmt = fact.stmt
    if fact.aug or not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    target = stmt.targets[0]
    return isinstance(target, (ast.Tuple, ast.List)) and any(e is fact.target for e in target.elts)


RULE = OutputRebind
