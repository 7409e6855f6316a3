"""PTO002 missing-device-id."""

from __future__ import annotations

import ast

from ...diagnostics import Applicability, Edit, Fix, Pos
from ...frontend.values import ApiRef
from ..rule import Case, LintContext, Rule

SET_DEVICE = {"torch.npu.set_device", "torch_npu.npu.set_device"}
IDIOM = 'torch.npu.set_device(int(os.environ.get("TILE_FWK_DEVICE_ID", 0)))'

_LEGACY = (
    "import torch\nimport torch_npu\nimport pypto\n\n"
    "def run():\n"
    "    x = pypto.from_torch(torch.ones(64, 64).npu(), 'x')\n"
    "    out = pypto.from_torch(torch.zeros(64, 64).npu(), 'out')\n"
    "{set}"
    "    with pypto.function('add', x, out):\n"
    "        for _ in pypto.loop(1):\n"
    "            pypto.set_vec_tile_shapes(32, 64)\n"
    "            out.move(x + 1.0)\n"
)


class MissingDeviceId(Rule):
    """
    ## What it does
    Reports host code that launches a kernel *without* ``@pypto.frontend.jit`` (the legacy
    ``with pypto.function(name, *tensors):`` flow) on NPU tensors -- the module imports
    ``torch_npu`` or places tensors on ``"npu"`` -- when no ``torch.npu.set_device(...)``
    runs before the launch on that path (in the launching function, or in every caller
    that reaches it).

    ## Why is this bad?
    Without ``@jit`` nothing picks a device for the launch, and the runtime fails on the
    device with ``fail get device id, check if set device id`` -- far from the cause.

    ## Example
    ```python
    import torch_npu, pypto
    x = pypto.from_torch(torch.ones(64, 64).npu(), "x")
    with pypto.function("add", x, out):
        ...
    ```

    ## Use instead
    ```python
    import os
    torch.npu.set_device(int(os.environ.get("TILE_FWK_DEVICE_ID", 0)))
    with pypto.function("add", x, out):
        ...
    ```
    or decorate the kernel with ``@pypto.frontend.jit``, which takes the device from its
    tensor arguments.

    ## Fix safety
    Display-only: the fix shows the ``TILE_FWK_DEVICE_ID`` idiom, but which device a
    program should use is the author's decision, so it is never applied.

    ## References
    PyPTO FAQ: device-id-not-set; env var TILE_FWK_DEVICE_ID; `pypto-0.2-behaviour.md` pitfall 2.
    """

    code = "PTO002"
    name = "missing-device-id"
    summary = "a non-jit kernel is launched on NPU tensors with no torch.npu.set_device() before it"
    fix_availability = "display-only"
    VALID = [
        _LEGACY.format(set="    torch.npu.set_device(0)\n"),
        # the caller sets the device before calling the launching function
        _LEGACY.format(set="") + "\nif __name__ == '__main__':\n    torch.npu.set_device(0)\n    run()\n",
        # no NPU in sight: CPU tensors, no torch_npu
        _LEGACY.format(set="").replace("import torch_npu\n", "").replace(".npu()", ""),
        # never called in this module: the caller is unknown
        _LEGACY.format(set=""),
        # jit kernels take the device from their arguments
        "import torch_npu, torch, pypto\n@pypto.frontend.jit\n"
        "def k(x: pypto.Tensor((8, 8), pypto.DT_FP32), y: pypto.Tensor((8, 8), pypto.DT_FP32)):\n"
        "    y[:] = x + 1.0\nk(torch.ones(8, 8, device='npu:0'), torch.ones(8, 8, device='npu:0'))\n",
    ]
    INVALID = [
        Case(_LEGACY.format(set="") + "\nif __name__ == '__main__':\n    run()\n", line=8, col=10),
        Case(
            "import torch\nimport pypto\n"
            "x = pypto.from_torch(torch.ones(8, 8, device='npu:0'), 'x')\n"
            "y = pypto.from_torch(torch.ones(8, 8, device='npu:0'), 'y')\n"
            "with pypto.function('f', x, y):\n"
            "    for _ in pypto.loop(1):\n        y.move(x + 1.0)\n",
            line=5, col=6,
        ),
    ]

    def check(self, ctx: LintContext):
        if not any(kernel.kind == "legacy" for kernel in ctx.model.kernels):
            return  # only legacy launches can miss the device (and the host walk is not free)
        host = _HostIndex(ctx)
        if not host.npu:
            return
        for kernel in ctx.model.kernels:
            if kernel.kind != "legacy":
                continue
            with_node = kernel.node
            call = next(i.context_expr for i in with_node.items if isinstance(i.context_expr, ast.Call))
            owner = host.owner_of(with_node)
            if host.covered(owner, with_node.lineno, depth=0) is not False:
                continue
            indent = ctx.source.line_text(with_node.lineno)[: with_node.col_offset]
            start = Pos(with_node.lineno, 0)
            fix = Fix(
                f"set the device before the launch: `{IDIOM}` (needs `import os`), "
                "or decorate the kernel with `@pypto.frontend.jit`",
                Applicability.DISPLAY_ONLY,
                (Edit(start, start, f"{indent}{IDIOM}\n"),),
            )
            yield self.diagnostic(
                ctx.span(call),
                f"kernel `{kernel.name}` is launched without @jit on NPU tensors, but no "
                "`torch.npu.set_device(...)` runs before it: the device fails with "
                "`fail get device id`",
                fix=fix,
            )


class _HostIndex:
    """Where set_device is called, who calls which module function, and whether NPU is in use."""

    def __init__(self, ctx: LintContext):
        self.scope = ctx.model.scope
        self.functions = ctx.model.functions
        self.set_device_lines: dict = {}  # owner FunctionDef (None = module) -> [line]
        self.call_sites: dict = {}  # function name -> [(owner, line)]
        self.parents: dict = {}
        self.npu = any(
            isinstance(v, ApiRef) and v.qualname.split(".")[0] == "torch_npu" for v in self.scope.env.values()
        )
        self._walk(ctx.source.tree, None)

    def _walk(self, node, owner):
        for child in ast.iter_child_nodes(node):
            self.parents[child] = owner
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else owner
            if isinstance(child, ast.Call):
                self._call(child, owner)
            self._walk(child, inner)

    def _call(self, call: ast.Call, owner):
        # only a callee spelled ``....set_device`` or a bare imported name can be torch's
        # set_device; evaluating every callee would cost more than the rest of the lint, and a
        # chain ``x.f().f()...`` holds every call inside it (quadratic): such a callee is not short
        func = call.func
        if isinstance(func, ast.Name):
            target = self.scope.lookup(func.id)
        elif isinstance(func, ast.Attribute) and func.attr == "set_device" and _small(func):
            target = self.scope.evaluate_static(func)
        else:
            target = None
        if isinstance(target, ApiRef) and target.qualname in SET_DEVICE:
            self.set_device_lines.setdefault(owner, []).append(call.lineno)
        if isinstance(call.func, ast.Name) and call.func.id in self.functions:
            self.call_sites.setdefault(call.func.id, []).append((owner, call.lineno))
        if isinstance(call.func, ast.Attribute) and call.func.attr == "npu":
            self.npu = True
        for kw in call.keywords:
            if kw.arg == "device" and _is_npu_string(kw.value):
                self.npu = True
        if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args and _is_npu_string(call.args[0]):
            self.npu = True

    def owner_of(self, node):
        return self.parents.get(node)

    def covered(self, owner, line: int, depth: int):
        """True: a set_device runs first on every path; False: on none; None: unknown caller."""
        if any(l < line for l in self.set_device_lines.get(owner, ())):
            return True
        if owner is None:
            return False
        sites = self.call_sites.get(owner.name, [])
        if not sites or depth > 5:
            return None
        results = [self.covered(site_owner, site_line, depth + 1) for site_owner, site_line in sites]
        if all(r is False for r in results):
            return False
        return True if all(r is True for r in results) else None


def _small(node, limit: int = 64) -> bool:
    """Whether the expression has at most ``limit`` nodes (counting stops there)."""
    todo, seen = [node], 0
    while todo:
        seen += 1
        if seen > limit:
            return False
        todo.extend(ast.iter_child_nodes(todo.pop()))
    return True


def _is_npu_string(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("npu")


RULE = MissingDeviceId
