"""PTO002 missing-device-id."""

from __future__ import annotations

import ast

from ...diagnostics import Applicability, Edit, Fix, Pos
from ...frontend.values import ApiRef
from ..rule import Case, LintContext, Rule

SET_DEVICE = {"torch.npu.set_device", "torch_npu.npu.set_device"}
IDIOM = 'torch.npu.set_device(int(os.environ.get("TILE_FWK_DEVICE_ID", 0)))'
RUN_PREFIX = "pypto.runtime._device_run"  # _device_run_once_data_from_host and its kin: run the graph

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


_RUN = (
    "import os\nimport torch\nimport pypto\n\n\n"
    "def test_add():\n"
    "{before}"
    "    pypto.runtime._device_init()\n"
    "    a = pypto.tensor((32, 32), pypto.DT_FP32, 'a')\n"
    "    b = pypto.tensor((32, 32), pypto.DT_FP32, 'b')\n"
    "    with pypto.function('ADD', a, b):\n"
    "        b.move(a + 1.0)\n"
    "    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(torch.ones(32, 32), 'a'),\n"
    "                                                  pypto.from_torch(torch.zeros(32, 32), 'b'))\n"
    "{after}"
)
_HELPER = (
    "import torch\nimport pypto\n\n\n"
    "def build(a, b):\n"
    "    with pypto.function('ADD', a, b):\n"
    "        b.move(a + 1.0)\n\n\n"
    "def test_add():\n"
    "{before}"
    "    a = pypto.tensor((32, 32), pypto.DT_FP32, 'a')\n"
    "    b = pypto.tensor((32, 32), pypto.DT_FP32, 'b')\n"
    "    build(a, b)\n"
    "    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(torch.ones(32, 32), 'a'),\n"
    "                                                  pypto.from_torch(torch.zeros(32, 32), 'b'))\n"
)


_LAUNCHER = (
    "import os\nimport torch\nimport pypto\n\n\n"
    "def launch(x_t, y_t):\n"
    "    x, y = pypto.from_torch(x_t, 'x'), pypto.from_torch(y_t, 'y')\n"
    "    with pypto.function('SCALE', x, y):\n"
    "        for _ in pypto.loop(1):\n"
    "            pypto.set_vec_tile_shapes(8, 64)\n"
    "            y.move(x * 2.0)\n\n\n"
    "def test_scale():\n"
    "    import torch_npu  # noqa: F401\n"
    "    device = f\"npu:{{os.environ.get('TILE_FWK_DEVICE_ID', 0)}}\"\n"
    "{before}"
    "    x_t = torch.ones(8, 64, device=device)\n"
    "    y_t = torch.zeros(8, 64, device=device)\n"
    "    launch(x_t, y_t)\n"
)


class MissingDeviceId(Rule):
    """
    ## What it does
    Reports, at the launch, host code that runs a graph on the device *without*
    ``@pypto.frontend.jit`` when no ``torch.npu.set_device(...)`` runs before it on that path.
    The launch is the statement that runs the graph: a ``pypto.runtime._device_run_once...``
    call, or -- in a module that has none -- the legacy ``with pypto.function(name, *tensors):``
    block on NPU tensors (the module imports ``torch_npu``, anywhere, or places tensors on
    ``"npu..."``, also through an f-string or a variable), or the call of a launch helper: a
    function taking its tensors from its caller whose body holds that block.
    "Before it on that path": earlier in the same function and on every path to the launch
    (not after it, not in one arm of an ``if`` the launch is outside of), or in every caller
    that reaches the function; a ``test_*`` function is called by pytest, which sets no device.

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
        _LAUNCHER.format(before="    torch.npu.set_device(int(os.environ.get('TILE_FWK_DEVICE_ID', 0)))\n"),
        _LEGACY.format(set="    torch.npu.set_device(0)\n"),
        # the official tests' idiom: the device id from TILE_FWK_DEVICE_ID, first thing in the test
        _RUN.format(before="    torch.npu.set_device(int(os.environ.get('TILE_FWK_DEVICE_ID', 0)))\n", after=""),
        # set inside a `with` that always runs, before the launch
        _RUN.format(before="    with open(os.devnull) as _:\n        torch.npu.set_device(0)\n", after=""),
        _HELPER.format(before="    torch.npu.set_device(0)\n"),
        # pytest sets it first: an autouse fixture, a requested one, a setup hook
        "import os\nimport pytest\nimport torch\nimport pypto\n\n@pytest.fixture(autouse=True)\ndef npu():\n"
        "    torch.npu.set_device(0)\n    yield\n\n\n" + _RUN.format(before="", after="").split("\n\n\n", 1)[1],
        "import os\nimport pytest\nimport torch\nimport pypto\n\n@pytest.fixture\ndef npu():\n    torch.npu.set_device(0)\n\n\n"
        + _RUN.format(before="", after="").split("\n\n\n", 1)[1].replace("def test_add():", "def test_add(npu):"),
        "import os\nimport torch\nimport pypto\n\ndef setup_module(module):\n    torch.npu.set_device(0)\n\n\n"
        + _RUN.format(before="", after="").split("\n\n\n", 1)[1],
        # set in both arms of an if: every path sets it
        _RUN.format(before="    if os.environ.get('DEV0'):\n        torch.npu.set_device(0)\n"
                           "    else:\n        torch.npu.set_device(int(os.environ['TILE_FWK_DEVICE_ID']))\n", after=""),
        # a run call in a function whose callers are unknown (a library): not judged
        _RUN.format(before="", after="").replace("def test_add", "def add_case"),
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
        # a launch helper on the test's NPU tensors (device from an f-string, torch_npu imported in the test)
        Case(_LAUNCHER.format(before=""), line=19, col=5),
        Case(_LEGACY.format(set="") + "\nif __name__ == '__main__':\n    run()\n", line=8, col=10),
        # the official tests' form: graph built in a test function, run by _device_run_once...; no device
        Case(_RUN.format(before="", after=""), line=12, col=5),
        # set only after the launch: it does not count
        Case(_RUN.format(before="", after="    torch.npu.set_device(0)\n"), line=12, col=5),
        # set on one path only
        Case(_RUN.format(before="    if os.environ.get('TILE_FWK_DEVICE_ID'):\n        torch.npu.set_device(0)\n",
                         after=""), line=14, col=5),
        # a fixture the test does not request; one that sets it only after its yield (teardown)
        Case("import os\nimport pytest\nimport torch\nimport pypto\n\n@pytest.fixture\ndef npu():\n"
             "    torch.npu.set_device(0)\n\n\n" + _RUN.format(before="", after="").split("\n\n\n", 1)[1],
             line=17, col=5),
        Case("import os\nimport pytest\nimport torch\nimport pypto\n\n@pytest.fixture(autouse=True)\ndef npu():\n"
             "    yield\n    torch.npu.set_device(0)\n\n\n" + _RUN.format(before="", after="").split("\n\n\n", 1)[1],
             line=18, col=5),
        # both arms of an if, but the elif arm sets nothing
        Case(_RUN.format(before="    if os.environ.get('DEV0'):\n        torch.npu.set_device(0)\n"
                                "    elif os.environ.get('DEV1'):\n        torch.npu.set_device(1)\n", after=""),
             line=16, col=5),
        # the graph is built by a helper the test calls; the run is in the test
        Case(_HELPER.format(before=""), line=14, col=5),
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
        if not any(kernel.kind == "legacy" for kernel in ctx.model.kernels) and "_device_run" not in ctx.source.text:
            return  # only non-jit launches can miss the device (and the host walk is not free)
        host = _HostIndex(ctx)
        # (statement node to check, node to report, what it does)
        launches = [(call, call, "the graph is run on the device") for call in host.runs]
        if not launches and host.npu:
            for kernel in ctx.model.kernels:
                if kernel.kind == "legacy":
                    launches += self._legacy_launches(host, kernel.node)
        for node, call, what in launches:
            owner = host.owner_of(node)
            if host.covered(owner, node, depth=0) is not False:
                continue
            stmt = host.statement_of(node)
            indent = ctx.source.line_text(stmt.lineno)[: stmt.col_offset]
            start = Pos(stmt.lineno, 0)
            fix = Fix(
                f"set the device before the launch: `{IDIOM}` (needs `import os`), "
                "or decorate the kernel with `@pypto.frontend.jit`",
                Applicability.DISPLAY_ONLY,
                (Edit(start, start, f"{indent}{IDIOM}\n"),),
            )
            yield self.diagnostic(
                ctx.span(call),
                f"{what} without @jit, but no `torch.npu.set_device(...)` runs before it on this path: "
                "the device fails with `fail get device id`",
                fix=fix,
            )


    @staticmethod
    def _legacy_launches(host, with_node) -> list:
        """Where a legacy ``with pypto.function(...)`` block launches: the block itself, or -- when
        it is the body of a launch helper, which takes its tensors from its caller and does not set
        the device before the block -- each call of that helper (the test's ``launch(x_t, y_t)`` on
        the NPU tensors it made), where the caller's device is what counts."""
        call = next(i.context_expr for i in with_node.items if isinstance(i.context_expr, ast.Call))
        owner = host.owner_of(with_node)
        helper = isinstance(owner, ast.FunctionDef) and bool(owner.args.args or owner.args.posonlyargs)
        sites = host.call_sites.get(owner.name, []) if helper else []
        if not sites or any(host._always_runs_before(c, with_node) for c in host.set_devices.get(owner, ())):
            return [(with_node, call, "the kernel is launched")]
        return [(site, site, f"`{owner.name}` launches a graph") for _, site in sites]


class _HostIndex:
    """Where set_device is called, who calls which module function, and whether NPU is in use."""

    def __init__(self, ctx: LintContext):
        self.scope = ctx.model.scope
        self.functions = ctx.model.functions
        self.set_devices: dict = {}  # owner FunctionDef (None = module) -> [set_device call]
        self.call_sites: dict = {}  # function name -> [(owner, call)]
        self.runs: list = []  # pypto.runtime._device_run... calls: launches
        self.parents: dict = {}  # node -> owner FunctionDef (None: the module)
        self.up: dict = {}  # node -> its parent node
        self._setups = None  # pytest fixtures and setup hooks that set the device (built on first need)
        self.npu = any(
            isinstance(v, ApiRef) and v.qualname.split(".")[0] == "torch_npu" for v in self.scope.env.values()
        )
        self.npu_names = _npu_names(ctx.source.tree)  # variables bound to an "npu..." device string
        self._walk(ctx.source.tree, None)

    def _walk(self, node, owner):
        for child in ast.iter_child_nodes(node):
            self.parents[child] = owner
            self.up[child] = node
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else owner
            if isinstance(child, ast.Call):
                self._call(child, owner)
            elif isinstance(child, (ast.Import, ast.ImportFrom)) and _imports_torch_npu(child):
                self.npu = True  # also an import inside the test function
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
        elif isinstance(func, ast.Attribute) and func.attr.startswith("_device_run") and _small(func):
            base = self.scope.evaluate_static(func.value)  # a private name: not in the API table
            target = ApiRef(f"{base.qualname}.{func.attr}") if isinstance(base, ApiRef) else None
        else:
            target = None
        if isinstance(target, ApiRef) and target.qualname in SET_DEVICE:
            self.set_devices.setdefault(owner, []).append(call)
        if isinstance(target, ApiRef) and target.qualname.startswith(RUN_PREFIX):
            self.runs.append(call)
        if isinstance(call.func, ast.Name) and call.func.id in self.functions:
            self.call_sites.setdefault(call.func.id, []).append((owner, call))
        if isinstance(call.func, ast.Attribute) and call.func.attr == "npu":
            self.npu = True
        for kw in call.keywords:
            if kw.arg == "device" and (_is_npu_string(kw.value) or
                                       isinstance(kw.value, ast.Name) and kw.value.id in self.npu_names):
                self.npu = True
        if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args and _is_npu_string(call.args[0]):
            self.npu = True

    def owner_of(self, node):
        return self.parents.get(node)

    def statement_of(self, node):
        while not isinstance(node, ast.stmt) and node in self.up:
            node = self.up[node]
        return node

    def _lifted(self, stmt):
        """The statement out of the ``with`` and ``try`` bodies around it, which always run."""
        while isinstance(self.up.get(stmt), (ast.With, ast.Try)) and stmt in getattr(self.up[stmt], "body", ()):
            stmt = self.up[stmt]
        return stmt

    def _lifted_over_ifs(self, stmt, owner):
        """The statement out of with/try bodies, and out of each ``if`` whose other arm sets the
        device too (then the whole if does)."""
        stmt = self._lifted(stmt)
        while isinstance(self.up.get(stmt), ast.If):
            branch = self.up[stmt]
            other = branch.orelse if stmt in branch.body else branch.body
            if not other or not self._arm_sets(other, owner):
                break
            stmt = self._lifted(branch)
        return stmt

    def _arm_sets(self, arm: list, owner) -> bool:
        """Whether a set_device runs on every path through the statements ``arm`` (at its top
        level, out of with/try bodies, or in both arms of an if there)."""
        for call in self.set_devices.get(owner, ()):
            stmt = self._lifted(self.statement_of(call))
            while stmt not in arm and isinstance(self.up.get(stmt), ast.If):
                branch = self.up[stmt]
                other = branch.orelse if stmt in branch.body else branch.body
                if not other or not any(self._lifted(self.statement_of(c)) in other
                                        for c in self.set_devices.get(owner, ())):
                    break
                stmt = self._lifted(branch)
            if stmt in arm:
                return True
        return False

    def _always_runs_before(self, first, then) -> bool:
        """Whether the statement of ``first`` runs on every path to ``then``, before it (same function):
        its statement -- lifted out of ``with`` and ``try`` bodies, which always run -- is an earlier
        sibling of a statement that holds ``then``."""
        stmt = self._lifted_over_ifs(self.statement_of(first), self.owner_of(first))
        holder = self.up.get(stmt)
        block = next((b for b in (getattr(holder, f, None) for f in ("body", "orelse", "finalbody"))
                      if isinstance(b, list) and stmt in b), None)
        if block is None:
            return False
        node = then
        while node is not None and node is not holder:
            if node in block:
                return block.index(stmt) < block.index(node)
            node = self.up.get(node)
        return False

    def _sets_first(self, function) -> bool:
        """Whether ``function`` sets the device unconditionally (before its ``yield``, for a fixture)."""
        body = function.body
        stop = next((i for i, st in enumerate(body) if isinstance(st, ast.Expr) and
                     isinstance(st.value, (ast.Yield, ast.YieldFrom))), len(body))
        for call in self.set_devices.get(function, ()):
            stmt = self._lifted_over_ifs(self.statement_of(call), function)
            if stmt in body and body.index(stmt) < stop:
                return True
        return False

    def _pytest_sets(self, test) -> bool:
        """Whether pytest sets the device before running ``test``: an autouse fixture or one the
        test requests (by parameter name), or a setup_module / setup_function / setUp hook."""
        if self._setups is None:
            self._setups = []  # (function, is a fixture, autouse) that set the device first
            for function in self.set_devices:
                if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                flags = [_is_fixture(d) for d in function.decorator_list]
                fixture = any(f for f, _ in flags)
                if (fixture or function.name in _SETUPS) and self._sets_first(function):
                    self._setups.append((function, fixture, any(a for _, a in flags)))
        wanted = {a.arg for a in test.args.args + test.args.kwonlyargs}
        return any(not fixture or autouse or function.name in wanted for function, fixture, autouse in self._setups)

    def covered(self, owner, node, depth: int):
        """True: a set_device runs first on every path; False: on none; None: unknown caller."""
        if any(self._always_runs_before(call, node) for call in self.set_devices.get(owner, ())):
            return True
        if owner is None:
            return False
        sites = self.call_sites.get(owner.name, [])
        if not sites and owner.name.startswith("test"):
            return self._pytest_sets(owner)  # pytest calls it: after its setup and fixtures
        if not sites or depth > 5:
            return None
        results = [self.covered(site_owner, site_call, depth + 1) for site_owner, site_call in sites]
        if all(r is False for r in results):
            return False
        return True if all(r is True for r in results) else None


_SETUPS = {"setup_module", "setup_function", "setup_method", "setup_class", "setUp", "setUpClass", "setUpModule"}


def _is_fixture(decorator) -> tuple:
    """(is a pytest fixture, autouse) for one decorator: ``@pytest.fixture``, ``@fixture(autouse=True)``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
    if name != "fixture":
        return False, False
    autouse = isinstance(decorator, ast.Call) and any(
        k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value is True for k in decorator.keywords)
    return True, autouse


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
    """``"npu:0"``, or an f-string that starts so (``f"npu:{device_id}"``)."""
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("npu")


def _npu_names(tree) -> set:
    """Names some assignment binds to an NPU device string (``device = f"npu:{device_id}"``)."""
    return {node.targets[0].id for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and _is_npu_string(node.value)}


def _imports_torch_npu(node) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "torch_npu" for alias in node.names)
    return (node.module or "").split(".")[0] == "torch_npu"


RULE = MissingDeviceId
