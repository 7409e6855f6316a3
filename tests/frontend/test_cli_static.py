"""``pypto-transpile`` reads a kernel module's source and never runs it (except ``--run``).

Every test here runs the CLI in a real process (``python -m pypto_ast.cli.transpile``) in a
fresh directory, on kernels written the way the official PyPTO tests and examples write them:
module-level and nested ``@pypto.frontend.jit`` kernels, ``@pypto.frontend.function`` helpers,
legacy ``with pypto.function(name, *tensors):`` bodies, annotations that leave the shape to the
call, and a module whose top level cannot run on this machine at all.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support import line_of, needs_cxx, write

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def transpile(*args, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    """The CLI in its own process (inherits PYPTO_AST_CACHE_DIR from the suite's conftest)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYPTO_AST_TRACEBACK", "NO_COLOR")}
    return subprocess.run([sys.executable, "-m", "pypto_ast.cli.transpile", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=timeout)


def col_of(path: Path, needle: str) -> int:
    """1-based column where ``needle`` starts on its line."""
    text = path.read_text().splitlines()[line_of(path, needle) - 1]
    return text.index(needle) + 1


def assert_located(stderr: str, name: str, line: int, col: int | None = None) -> None:
    """A rendered diagnostic: ``--> name:line:col``, the source line and a caret under it."""
    where = rf"--> {re.escape(name)}:{line}:" + (str(col) if col is not None else r"\d+")
    assert re.search(where, stderr), stderr
    assert re.search(r"(?m)^\s*\|\s*\^+", stderr), f"no caret line:\n{stderr}"
    assert "Traceback" not in stderr, stderr


# =============================================================================================
# 1a. a module that cannot run here: --list / --emit / --build never execute it
# =============================================================================================
UNRUNNABLE = '''
    """Official-style module: NPU-only imports, local helpers that do not exist here."""
    import os
    import pathlib

    # top-level side effect: proves whether the module body ever ran
    pathlib.Path(os.path.dirname(os.path.abspath(__file__)), "MARKER").write_text("executed")

    import torch_npu  # noqa: E402,F401  registers the NPU device on a CANN host
    import definitely_not_installed_pkg  # noqa: E402,F401
    from my_missing_helpers import thing  # noqa: E402,F401

    import pypto  # noqa: E402

    ROWS, COLS = 32, 64
    TILE_ROWS = 16


    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def add_relu(
        x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
        y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
        out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    ):
        pypto.set_vec_tile_shapes(TILE_ROWS, COLS)
        out[:] = pypto.relu(x + y)
'''


@pytest.fixture
def unrunnable(tmp_path) -> Path:
    return write(tmp_path / "npu_only_kernel.py", UNRUNNABLE)


def test_unrunnable_module_really_fails_and_writes_the_marker_when_executed(unrunnable):
    """Control for the tests below: executing the module writes MARKER, then dies on an import."""
    for name in ("definitely_not_installed_pkg", "my_missing_helpers"):
        assert importlib.util.find_spec(name) is None
    proc = subprocess.run([sys.executable, unrunnable.name], cwd=unrunnable.parent, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "ModuleNotFoundError" in proc.stderr
    assert (unrunnable.parent / "MARKER").read_text() == "executed"


@pytest.mark.parametrize("args, check", [
    (["--list"], "list"),
    (["--emit", "ir"], "ir"),
    (["--emit", "python"], "python"),
    (["--emit", "ascendc", "-o", "gen"], "ascendc"),
    pytest.param(["--build", "--backend", "host", "-o", "build"], "build", marks=needs_cxx),
], ids=["list", "emit-ir", "emit-python", "emit-ascendc", "build-host"])
def test_static_commands_never_execute_the_module(unrunnable, args, check):
    cwd = unrunnable.parent
    proc = transpile(unrunnable.name, *args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (cwd / "MARKER").exists(), "the module's top level ran"
    if check == "list":
        line = line_of(unrunnable, "def add_relu(")
        assert proc.stdout == f"npu_only_kernel.py:{line}:1  jit  add_relu\n"
    elif check == "ir":
        first = proc.stdout.splitlines()[0]
        assert first.startswith("program add_relu(@x: tensor<32x64xfp32>, @y: tensor<32x64xfp32>, "
                                "@out: tensor<32x64xfp32> out)"), first
        assert re.search(r"= relu\(%\d+\) : tensor<32x64xfp32> tile \[16, 64\]", proc.stdout), proc.stdout
    elif check == "python":
        assert "def add_relu(" in proc.stdout and "relu" in proc.stdout
    elif check == "ascendc":
        names = sorted(p.name for p in (cwd / "gen").iterdir())
        assert "control.cpp" in names and "manifest.json" in names and any(n.startswith("add_relu_b") for n in names)
        manifest = json.loads((cwd / "gen" / "manifest.json").read_text())
        assert manifest["program"] == "add_relu" and manifest["outputs"] == ["out"]
    else:
        assert "built add_relu for ascend910b (host backend)" in proc.stdout, proc.stdout + proc.stderr
        assert (cwd / "build" / "libadd_relu.so").is_file()


def test_run_is_the_one_command_that_imports_the_module(unrunnable):
    """``--run`` imports the module (for example_inputs/reference): a located PTO103, exit 2."""
    cwd = unrunnable.parent
    proc = transpile(unrunnable.name, "--run", cwd=cwd)
    assert proc.returncode == 2
    assert "error[PTO103]" in proc.stderr and "torch_npu" in proc.stderr
    assert_located(proc.stderr, unrunnable.name, line_of(unrunnable, "import torch_npu"))
    assert (cwd / "MARKER").exists()


# =============================================================================================
# 1b. reading a kernel imports neither torch nor numpy (nor the pypto wheel)
# =============================================================================================
_PROBE = """
import json, sys
from pypto_ast.cli.transpile import main
try:
    main({args!r}, standalone_mode=False)
except SystemExit as exc:
    if exc.code not in (0, None):
        raise
print("@@" + json.dumps({{m: m in sys.modules for m in ("torch", "numpy", "pypto")}}))
"""


def _probe(args, cwd) -> tuple:
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(args=[str(a) for a in args])], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    marker = [line for line in proc.stdout.splitlines() if line.startswith("@@")]
    assert len(marker) == 1, proc.stdout
    return json.loads(marker[0][2:]), proc.stdout


@pytest.mark.parametrize("args", [["--emit", "ir"], ["--list"], ["--emit", "dot"]], ids=["ir", "list", "dot"])
def test_reading_a_kernel_imports_neither_torch_nor_numpy(tmp_path, args):
    loaded, stdout = _probe([EXAMPLES / "clean_row_softmax.py", *args], tmp_path)
    assert loaded == {"torch": False, "numpy": False, "pypto": False}
    assert "scaled_softmax" in stdout


def test_the_import_probe_sees_torch_when_the_module_runs(tmp_path):
    """Control: ``--run`` executes example_inputs() (which imports torch); the probe notices."""
    pytest.importorskip("torch")
    loaded, _ = _probe([EXAMPLES / "clean_row_softmax.py", "--run"], tmp_path)
    assert loaded["torch"] is True


# =============================================================================================
# 1c. --list: nested kernels, a frontend.function helper, a legacy body
# =============================================================================================
MANY_KERNELS = '''
    import pytest
    import torch

    import pypto

    SHAPE = (32, 64)


    @pypto.frontend.function
    def double_into(src: pypto.Tensor(SHAPE, pypto.DT_FP32), dst: pypto.Tensor(SHAPE, pypto.DT_FP32)):
        dst[:] = src * 2.0


    @pypto.options(pass_options={"enable_slice": True})
    def test_add_static():
        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
        def add_kernel(
            a: pypto.Tensor(SHAPE, pypto.DT_FP32),
            b: pypto.Tensor(SHAPE, pypto.DT_FP32),
            out: pypto.Tensor(SHAPE, pypto.DT_FP32),
        ):
            pypto.set_vec_tile_shapes(16, 64)
            out[:] = a + b

        a = torch.rand(SHAPE, dtype=torch.float32)
        b = torch.rand(SHAPE, dtype=torch.float32)
        out = torch.empty(SHAPE, dtype=torch.float32)
        add_kernel(a, b, out)


    class TestUnary:
        @pytest.mark.parametrize("cols", [128, 256])
        def test_exp(self, cols):
            @pypto.frontend.jit
            def exp_kernel(
                x: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
                y: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
            ):
                pypto.set_vec_tile_shapes(8, cols)
                y[:] = pypto.exp(x)

            x = torch.rand((16, cols), dtype=torch.float32)
            y = torch.zeros((16, cols), dtype=torch.float32)
            exp_kernel(x, y)


    def test_shape_left_to_the_call():
        @pypto.frontend.jit
        def sqrt_kernel(x: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_FP32],
                        y: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_FP32]):
            pypto.set_vec_tile_shapes(8, 128)
            y[:] = pypto.sqrt(x)


    def test_legacy_add():
        a = pypto.tensor([32, 64], pypto.DT_FP32, "a")
        b = pypto.tensor([32, 64], pypto.DT_FP32, "b")
        c = pypto.tensor([32, 64], pypto.DT_FP32, "c")
        with pypto.function("LEGACY_ADD", a, b, c):
            for _ in pypto.loop(1, name="LOOP_L0", idx_name="k"):
                pypto.set_vec_tile_shapes(16, 64)
                c.move(a + b)
'''

# name --kernel takes -> (kind, text that locates its line, program line expected or None for PTO104)
LISTED = {
    "double_into": ("function", "def double_into(",
                    "program double_into(@src: tensor<32x64xfp32>, @dst: tensor<32x64xfp32> out)"),
    "test_add_static.add_kernel": ("jit", "def add_kernel(",
                                   "program add_kernel(@a: tensor<32x64xfp32>, @b: tensor<32x64xfp32>, "
                                   "@out: tensor<32x64xfp32> out)"),
    "TestUnary.test_exp.exp_kernel": ("jit", "def exp_kernel(",
                                      "program exp_kernel(@x: tensor<16x128xfp32>, @y: tensor<16x128xfp32> out)"),
    "test_shape_left_to_the_call.sqrt_kernel": ("jit", "def sqrt_kernel(", None),
    "test_legacy_add.LEGACY_ADD": ("legacy", 'with pypto.function("LEGACY_ADD"',
                                   "program LEGACY_ADD(@a: tensor<32x64xfp32>, @b: tensor<32x64xfp32>, "
                                   "@c: tensor<32x64xfp32> out)"),
}


@pytest.fixture
def many(tmp_path) -> Path:
    return write(tmp_path / "test_many_kernels.py", MANY_KERNELS)


def test_list_prints_every_kernel_with_kind_and_location(many):
    proc = transpile(many.name, "--list", cwd=many.parent)
    assert proc.returncode == 0, proc.stderr
    rows = [re.fullmatch(r"(\S+):(\d+):(\d+)  (\S+)\s+(\S+)", line) for line in proc.stdout.splitlines()]
    assert all(rows), proc.stdout
    got = [(m[1], int(m[2]), int(m[3]), m[4], m[5]) for m in rows]
    expected = []
    for name, (kind, needle, _) in LISTED.items():  # the column is where the def / with starts
        expected.append((many.name, line_of(many, needle), col_of(many, needle), kind, name))
    assert sorted(got, key=lambda r: r[1]) == sorted(expected, key=lambda r: r[1])
    assert [r[1] for r in got] == sorted(r[1] for r in got), "kernels are listed in source order"


def test_every_listed_kernel_lowers_by_its_name(many):
    listed = transpile(many.name, "--list", cwd=many.parent).stdout.split()
    names = [listed[i] for i in range(2, len(listed), 3)]
    assert names == list(LISTED)
    for name in names:
        _, _, program = LISTED[name]
        proc = transpile(many.name, "--kernel", name, cwd=many.parent)
        assert "Traceback" not in proc.stderr
        if program is None:  # STATIC dims and no call: the shape is bound at the call
            assert proc.returncode == 1, (name, proc.stdout)
            assert "error[PTO104]" in proc.stderr and "`x`" in proc.stderr and "--shape" in proc.stderr
            assert_located(proc.stderr, many.name, line_of(many, "def sqrt_kernel(x:"))
        else:
            assert proc.returncode == 0, (name, proc.stderr)
            assert proc.stdout.splitlines()[0].startswith(program), (name, proc.stdout)


def test_kernel_by_unique_short_name_and_shape_for_the_unbound_one(many):
    proc = transpile(many.name, "--kernel", "add_kernel", cwd=many.parent)
    assert proc.returncode == 0 and proc.stdout.startswith("program add_kernel("), proc.stderr
    proc = transpile(many.name, "--kernel", "sqrt_kernel", "--shape", "x=8x128", "--shape", "y=8x128",
                     cwd=many.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("program sqrt_kernel(@x: tensor<8x128xfp32>, @y: tensor<8x128xfp32> out)")


def test_several_kernels_without_kernel_option_is_pto107(many):
    proc = transpile(many.name, "--emit", "ir", cwd=many.parent)
    assert proc.returncode == 1
    assert "error[PTO107]" in proc.stderr and "--kernel" in proc.stderr
    for name in ("test_add_static.add_kernel", "test_legacy_add.LEGACY_ADD"):
        assert name in proc.stderr
    assert "Traceback" not in proc.stderr


def test_ambiguous_short_name_is_pto107(tmp_path):
    path = write(tmp_path / "test_twice.py", '''
        import pypto


        def test_a():
            @pypto.frontend.jit
            def kernel(x: pypto.Tensor([16, 64], pypto.DT_FP32), y: pypto.Tensor([16, 64], pypto.DT_FP32)):
                pypto.set_vec_tile_shapes(16, 64)
                y[:] = x + 1.0


        def test_b():
            @pypto.frontend.jit
            def kernel(x: pypto.Tensor([16, 64], pypto.DT_FP32), y: pypto.Tensor([16, 64], pypto.DT_FP32)):
                pypto.set_vec_tile_shapes(16, 64)
                y[:] = x - 1.0
        ''')
    listed = transpile(path.name, "--list", cwd=tmp_path).stdout
    assert listed.split()[2::3] == ["test_a.kernel", "test_b.kernel"]
    proc = transpile(path.name, "--kernel", "kernel", cwd=tmp_path)
    assert proc.returncode == 1 and "error[PTO107]" in proc.stderr
    proc = transpile(path.name, "--kernel", "test_b.kernel", cwd=tmp_path)
    assert proc.returncode == 0 and re.search(r"= sub\(@x, \$1\.0\)", proc.stdout), proc.stdout + proc.stderr


# =============================================================================================
# 1d. shapes bound at the call, no call site: PTO104, then --shape
# =============================================================================================
UNBOUND = '''
    import pypto


    @pypto.frontend.jit
    def kernel(
        x: {ann},
        y: {ann},
    ):
        pypto.set_vec_tile_shapes(32, 128)
        y[:] = pypto.exp(x) + 1.0
'''

ANNOTATIONS = {
    "bracket-static": ("pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_FP32]", True),
    "paren-empty-list": ("pypto.Tensor([], pypto.DT_FP32)", True),
    "paren-static": ("pypto.Tensor((pypto.STATIC, pypto.STATIC), pypto.DT_FP32)", True),
    "bracket-ellipsis": ("pypto.Tensor[...]", False),  # no dtype: --shape must carry one
    "paren-empty": ("pypto.Tensor()", False),
}


@pytest.fixture(params=list(ANNOTATIONS), ids=list(ANNOTATIONS))
def unbound(request, tmp_path):
    ann, has_dtype = ANNOTATIONS[request.param]
    return write(tmp_path / "unbound.py", UNBOUND.format(ann=ann)), has_dtype


def test_shape_bound_at_the_call_without_call_site_is_pto104(unbound):
    path, _ = unbound
    proc = transpile(path.name, "--emit", "ir", cwd=path.parent)
    assert proc.returncode == 1, proc.stdout
    assert proc.stdout == ""
    assert "error[PTO104]" in proc.stderr
    assert "`x`" in proc.stderr and "--shape" in proc.stderr
    assert_located(proc.stderr, path.name, line_of(path, "x: pypto.Tensor"), col_of(path, "x: pypto.Tensor"))


def test_shape_option_binds_the_shapes(unbound):
    path, has_dtype = unbound
    suffix = "" if has_dtype else ":fp32"
    proc = transpile(path.name, "--emit", "ir", "--shape", f"x=64x128{suffix}", "--shape", f"y=64x128{suffix}",
                     cwd=path.parent)
    assert proc.returncode == 0, proc.stderr
    program = proc.stdout.splitlines()[0]
    assert program.startswith("program kernel(@x: tensor<64x128xfp32>, @y: tensor<64x128xfp32> out)"), program
    assert re.search(r"= exp\(@x\) : tensor<64x128xfp32> tile \[32, 128\]", proc.stdout), proc.stdout


def test_shape_option_comma_form_and_dtype_of_dtypeless_annotation(unbound):
    path, has_dtype = unbound
    if has_dtype:
        proc = transpile(path.name, "--shape", "x=64,128", "--shape", "y=[64,128]", cwd=path.parent)
        assert proc.returncode == 0, proc.stderr
        assert "@x: tensor<64x128xfp32>" in proc.stdout.splitlines()[0]
        return
    proc = transpile(path.name, "--shape", "x=64x128:fp16", "--shape", "y=64x128:half", cwd=path.parent)
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("program kernel(@x: tensor<64x128xfp16>, @y: tensor<64x128xfp16> out)"), first
    # a shape without a dtype is not enough when the annotation has none
    proc = transpile(path.name, "--shape", "x=64x128", "--shape", "y=64x128", cwd=path.parent)
    assert proc.returncode == 1
    assert "error[PTO104]" in proc.stderr and "`x`" in proc.stderr and ":fp16" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_shape_for_one_parameter_names_the_other(unbound):
    path, has_dtype = unbound
    proc = transpile(path.name, "--shape", "x=64x128" + ("" if has_dtype else ":fp32"), cwd=path.parent)
    assert proc.returncode == 1
    assert "error[PTO104]" in proc.stderr and "`y`" in proc.stderr and "`x`" not in proc.stderr
    assert_located(proc.stderr, path.name, line_of(path, "y: pypto.Tensor"))


@pytest.mark.parametrize("bad", ["x=abc", "x=64x:nope", "x=64xq", "=64x128", "x=", "x=-1x128", "x64x128"])
def test_bad_shape_values_are_usage_errors(tmp_path, bad):
    path = write(tmp_path / "unbound.py", UNBOUND.format(ann=ANNOTATIONS["bracket-static"][0]))
    proc = transpile(path.name, "--emit", "ir", "--shape", bad, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Invalid value for '--shape'" in proc.stderr
    assert repr(bad) in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


# =============================================================================================
# 1e. located diagnostics, never a traceback
# =============================================================================================
KERNEL_HEAD = '''
    import pypto

    N = 64


    @pypto.frontend.jit
    def kernel(x: pypto.Tensor([N, N], pypto.DT_FP32), y: pypto.Tensor([N, N], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, N)
'''

DIAGNOSTICS = {
    # id: (body lines, code, the text the caret is under, substrings of the message)
    "typo-op": (["y[:] = pypto.exq(x)"], "PTO101", "pypto.exq(x)", ["did you mean", "`pypto.exp`"]),
    "typo-method": (["y[:] = x.exq()"], "PTO101", "x.exq()", ["exq"]),
    "while": (["i = 0", "while i < 4:", "    i += 1", "y[:] = x + 1.0"], "PTO100", "while i < 4:", ["while"]),
    "try": (["try:", "    y[:] = x + 1.0", "except Exception:", "    pass"], "PTO100", "try:", ["try"]),
}


@pytest.mark.parametrize("case", list(DIAGNOSTICS))
def test_unsupported_constructs_and_unknown_names_are_located(tmp_path, case):
    body, code, at, words = DIAGNOSTICS[case]
    source = textwrap.dedent(KERNEL_HEAD).lstrip("\n") + "".join(f"    {line}\n" for line in body)
    path = tmp_path / "diag.py"
    path.write_text(source)
    proc = transpile(path.name, "--emit", "ir", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert proc.stdout == ""
    assert f"error[{code}]" in proc.stderr, proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr
    assert_located(proc.stderr, path.name, line_of(path, at), col_of(path, at))


def test_syntax_error_is_pto000_located(tmp_path):
    path = write(tmp_path / "broken.py", '''
        import pypto


        @pypto.frontend.jit
        def broken(x: pypto.Tensor([64, 64], pypto.DT_FP32), y: pypto.Tensor([64, 64], pypto.DT_FP32):
            y[:] = x
        ''')
    for args in (["--emit", "ir"], ["--list"]):
        proc = transpile(path.name, *args, cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout
        assert "error[PTO000] syntax error" in proc.stderr
        assert_located(proc.stderr, path.name, 5)


UNDEFINED_NAME_BODIES = {
    "operand": "y[:] = x + bias_not_defined",
    "op-argument": "y[:] = pypto.exp(bias_not_defined)",
    "written-value": "y[:] = bias_not_defined",
    "helper": "y[:] = bias_not_defined(x)",
    "loop-bound": "for i in pypto.loop(bias_not_defined, name='l', idx_name='i'):\n        y[:] = x + 1.0",
}


@pytest.mark.parametrize("case", list(UNDEFINED_NAME_BODIES))
def test_undefined_name_in_the_body_is_a_located_error(tmp_path, case):
    path = tmp_path / "undefined.py"
    path.write_text(textwrap.dedent(KERNEL_HEAD).lstrip("\n") + f"    {UNDEFINED_NAME_BODIES[case]}\n")
    proc = transpile(path.name, "--emit", "ir", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert re.search(r"error\[PTO1\d\d\]", proc.stderr), proc.stderr
    assert_located(proc.stderr, path.name, line_of(path, "bias_not_defined"))


@pytest.mark.parametrize("case", ["operand", "op-argument"])
def test_undefined_name_message_names_the_variable(tmp_path, case):
    path = tmp_path / "undefined.py"
    path.write_text(textwrap.dedent(KERNEL_HEAD).lstrip("\n") + f"    {UNDEFINED_NAME_BODIES[case]}\n")
    proc = transpile(path.name, "--emit", "ir", cwd=tmp_path)
    assert proc.returncode == 1
    assert "_Unknown" not in proc.stderr
    assert "bias_not_defined" in proc.stderr.split("-->")[0], proc.stderr


def test_return_in_a_frontend_jit_body_is_pto100(tmp_path):
    path = tmp_path / "ret.py"
    path.write_text(textwrap.dedent(KERNEL_HEAD).lstrip("\n") + "    return x + 1.0\n")
    proc = transpile(path.name, "--emit", "ir", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "error[PTO100]" in proc.stderr
    assert_located(proc.stderr, path.name, line_of(path, "return x"))


RAISING_USER_CODE = '''
    import pypto


    @pypto.frontend.jit
    def kernel(x: pypto.Tensor((16, 32), pypto.DT_FP32), y: pypto.Tensor((16, 32), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        y[:] = x + 1.0


    def example_inputs():
        {inputs}


    def reference(x, y):
        {reference}
'''


@pytest.mark.parametrize("which", ["example_inputs", "reference"])
def test_user_code_that_raises_under_run_is_pto103_at_its_line(tmp_path, which):
    inputs = 'raise RuntimeError("no data here")' if which == "example_inputs" else \
        'import torch\n    return {"x": torch.ones(16, 32), "y": torch.zeros(16, 32)}'
    reference = 'raise RuntimeError("no data here")' if which == "reference" else 'return {"y": x + 1.0}'
    path = tmp_path / "raising.py"
    path.write_text(textwrap.dedent(RAISING_USER_CODE).lstrip("\n").format(inputs=inputs, reference=reference))
    proc = transpile(path.name, "--run", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"error[PTO103] {which}() raised RuntimeError: no data here" in proc.stderr
    assert_located(proc.stderr, path.name, line_of(path, 'raise RuntimeError("no data here")'))
