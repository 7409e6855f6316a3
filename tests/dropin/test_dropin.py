"""The drop-in ``import pypto`` (pypto_ast.dropin): scripts and test suites written in the
official examples' style (tests/dropin/scripts/official_style.py: argparse ``main()``,
``test_*(device)`` functions under ``@pypto.options``, ``pypto.Tensor[[...], dt]`` kernels,
``import torch_npu`` at the top) run unchanged through ``python -m pypto_ast.dropin`` and
``pytest -p pypto_ast.pytest_plugin`` on interp and host and pass their own checks; what the
drop-in does not provide is one located ``Unsupported`` line; the benchmark's classification
(bench/dropin_examples.py) on a tree of our own examples.  Nothing here reads the official
repository.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin  # noqa: E402
from support import BACKENDS, line_of, write  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "official_style.py"


def python(args, cwd, timeout=600):
    env = dict(os.environ, TILE_FWK_DEVICE_ID="0", PYTHONPATH=str(ROOT))
    env.pop("PYPTO_AST_BACKEND", None)
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


# =============================================================================================
# python -m pypto_ast.dropin SCRIPT
# =============================================================================================
@pytest.mark.parametrize("backend", BACKENDS)
def test_script_runs_unchanged(tmp_path, backend):
    """The script's own main() in NPU mode (its default): torch_npu is the stub, npu:0 the CPU,
    its `if "npu" in device:` checks run and hold."""
    done = python(["-m", "pypto_ast.dropin", "--backend", backend, str(SCRIPT), "-t", "scale_add", "rows", "softmax"],
                  tmp_path)
    assert done.returncode == 0, done.stderr
    for name in ("scale_add", "rows", "softmax"):
        assert f"ok {name} on npu:0" in done.stdout
    assert "argv=['-t', 'scale_add', 'rows', 'softmax']" in done.stdout  # sys.argv as the script expects


def test_script_sim_mode(tmp_path):
    done = python(["-m", "pypto_ast.dropin", str(SCRIPT), "--run_mode", "sim", "-t", "scale_add"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "sim mode: not compared" in done.stdout and "ok scale_add on cpu" in done.stdout


def test_unsupported_api_is_one_located_line(tmp_path):
    script = write(tmp_path / "uses_new_api.py", """
        import torch_npu  # noqa: F401

        import pypto
        import pypto.pypto_impl  # an official submodule the drop-in does not model: importable
        from pypto.distributed import create_shmem_signal  # an official name: readable at import time

        LATER = pypto.runtime.verify  # so is an attribute


        def main():
            create_shmem_signal(1, 2)


        main()
    """)
    done = python(["-m", "pypto_ast.dropin", str(script)], tmp_path)
    assert done.returncode == 1
    line = line_of(script, "create_shmem_signal(1, 2)")
    assert done.stderr == ("pypto_ast.dropin.Unsupported: pypto.distributed.create_shmem_signal is not supported "
                           f"by the pypto-ast drop-in (called at uses_new_api.py:{line})\n")
    assert "Traceback" not in done.stderr


def test_kernel_error_is_one_located_line(tmp_path):
    script = write(tmp_path / "bad_kernel.py", """
        import torch

        import pypto


        @pypto.frontend.jit
        def kernel(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 32)
            out[:] = pypto.no_such_op(x)


        x = torch.ones(8, 32)
        kernel(x, torch.empty(8, 32))
    """)
    done = python(["-m", "pypto_ast.dropin", str(script)], tmp_path)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("pypto_ast.dropin.KernelError: kernel kernel cannot run on the pypto-ast drop-in: "
                               f"bad_kernel.py:{line_of(script, 'no_such_op')}:")
    assert lines[0].endswith(f"(called at bad_kernel.py:{line_of(script, 'kernel(x, torch')})")


def test_a_number_where_a_tensor_is_says_so(tmp_path):
    script = write(tmp_path / "number.py", """
        import torch

        import pypto


        @pypto.frontend.jit
        def add1(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 32)
            out[:] = x + 1.0


        try:
            add1(5, torch.zeros(8, 32))
        except TypeError as exc:
            print(exc)
    """)
    done = python(["-m", "pypto_ast.dropin", "--backend", "interp", str(script)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("add1(): argument `x` must be a tensor (a torch.Tensor: the kernel declares `x` a "
                                   "pypto.Tensor), got int 5"), done.stdout  # not "declared with rank 2 ... [5]"


def test_main_usage_errors(tmp_path):
    done = python(["-m", "pypto_ast.dropin", str(tmp_path / "missing.py")], tmp_path)
    assert done.returncode == 2 and "no such file" in done.stderr


# =============================================================================================
# pytest -p pypto_ast.pytest_plugin
# =============================================================================================
@pytest.mark.parametrize("backend", BACKENDS)
def test_pytest_plugin(tmp_path, backend):
    """A suite of the official style under the plugin: a conftest that imports pypto at its top
    (installed before conftests load), parametrized tests under @pypto.options (pytest sees their
    signature), the plugin's `device` fixture, a located Unsupported inside a test."""
    shutil.copy(SCRIPT, tmp_path / "test_official_style.py")
    write(tmp_path / "conftest.py", """
        import pypto

        assert getattr(pypto, "__pypto_ast_dropin__", False), "the drop-in serves pypto before conftests load"
    """)
    write(tmp_path / "test_more.py", """
        import pytest
        import torch

        import pypto
        from pypto_ast.dropin import Unsupported


        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
        def double_kernel(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 64)
            out[:] = x + x


        @pypto.options(vec_tile_shapes=[8, 64])
        @pytest.mark.parametrize("rows", [8, 24])
        def test_double(device, rows):
            x = torch.randn(rows, 64, device=device)
            out = torch.empty(rows, 64, device=device)
            double_kernel(x, out)
            assert "npu" in device
            torch.testing.assert_close(out, x * 2)
            assert double_kernel.last_backend == "BACKEND"


        def test_unsupported_is_located():
            with pytest.raises(Unsupported, match=r"^pypto\\.runtime\\.verify is not supported by the pypto-ast "
                                                  r"drop-in \\(called at test_more\\.py:\\d+\\)$"):
                pypto.runtime.verify([], [])
    """.replace("BACKEND", backend))
    done = python(["-m", "pytest", "-p", "pypto_ast.pytest_plugin", "--pypto-backend", backend, "-p",
                   "no:cacheprovider", "--rootdir", str(tmp_path), "-v", str(tmp_path)], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 passed" in done.stdout, done.stdout
    assert f"pypto: pypto-ast drop-in, kernels on the {backend} backend" in done.stdout
    assert "test_double[8] PASSED" in done.stdout and "test_double[24] PASSED" in done.stdout


def test_plugin_runs_skipped_large(tmp_path):
    """--pypto-run-skipped-large lifts the skips a suite puts on tests for their size (a reason
    "large test case" or naming a size such as "t=16", on a function or a pytest.param) and keeps
    the others; without the flag every skip holds."""
    write(tmp_path / "test_sizes.py", """
        import pytest


        @pytest.mark.skip(reason="large test case")
        def test_large():
            pass


        @pytest.mark.skip("t=16")
        def test_t16():
            pass


        @pytest.mark.skip(reason="ci torch version")
        def test_torch_version():
            pass


        @pytest.mark.parametrize("n", [1, pytest.param(2, marks=pytest.mark.skip(reason="temporarily disabled")),
                                       pytest.param(3, marks=pytest.mark.skip(reason="large test case"))])
        def test_param(n):
            pass
    """)
    base = ["-m", "pytest", "-p", "pypto_ast.pytest_plugin", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
            "-v", str(tmp_path)]
    held = python(base, tmp_path)
    assert "1 passed, 5 skipped" in held.stdout, held.stdout
    lifted = python(base + ["--pypto-run-skipped-large"], tmp_path)
    assert "4 passed, 2 skipped" in lifted.stdout, lifted.stdout
    for name in ("test_large PASSED", "test_t16 PASSED", "test_param[3] PASSED", "test_torch_version SKIPPED",
                 "test_param[2] SKIPPED"):
        assert name in lifted.stdout, lifted.stdout


# =============================================================================================
# in-process: the namespaces
# =============================================================================================
@pytest.fixture
def served():
    """The drop-in installed for one test (NPU devices not mapped: torch stays untouched)."""
    dropin.install("interp", npu_devices=False)
    try:
        import pypto

        yield pypto
    finally:
        dropin.uninstall()


def test_namespaces(served):
    pypto = served
    import pypto.frontend
    import pypto.runtime
    from pypto.frontend import dynamic, jit  # noqa: F401

    assert pypto.__pypto_ast_dropin__ and pypto.frontend.jit is jit
    assert pypto.runtime.RunMode is pypto.RunMode and pypto.RunMode.SIM != pypto.RunMode.NPU
    assert pypto.DT_BF16.bytes == 2 and pypto.DYNAMIC is not None
    assert pypto.set_pass_options(enable_slice=True) is None and pypto.set_codegen_options() is None
    assert not hasattr(pypto, "set_future_options")  # the official set_*_options only (test_faithful.py)
    assert not hasattr(pypto, "__wrapped__") and not hasattr(pypto, "__path_hooks__")  # the import system's probes
    assert isinstance(pypto.runtime._device_run_once_data_from_host, dropin.UnsupportedAPI)  # private: readable
    import pypto.pypto_impl as impl  # noqa: F811 - any official submodule imports

    with pytest.raises(dropin.Unsupported) as info:
        impl.SetGlobalConfig({"pass.enable_slice": True})
    line = inspect.currentframe().f_lineno - 1
    rel = os.path.relpath(__file__)
    shown = __file__ if rel.startswith("..") else rel
    assert str(info.value) == ("pypto.pypto_impl.SetGlobalConfig is not supported by the pypto-ast drop-in "
                               f"(called at {shown}:{line})")
    with pytest.raises(dropin.Unsupported, match=r"^pypto\.add is not supported .*only inside @pypto\.frontend\.jit"):
        pypto.add(1, 2)


def test_options_keeps_the_function(served):
    pypto = served

    def test_fn(device, rows: int = 4):
        return device, rows

    decorated = pypto.options(pass_options={"enable_slice": True}, vec_tile_shapes=[8, 8])(test_fn)
    assert decorated is test_fn and inspect.signature(decorated) == inspect.signature(test_fn)
    assert pypto.options(test_fn) is test_fn  # bare @pypto.options
    with pypto.options(vec_tile_shapes=[16, 16]) as scope:
        assert scope is not None


def test_torch_npu_stub(served):
    import torch_npu

    torch_npu.npu.set_device(0)
    assert torch.npu.current_device() == 0 and torch.npu.is_available()
    torch.npu.synchronize()
    with pytest.raises(dropin.Unsupported, match=r"^torch_npu\.npu_rms_norm is not supported"):
        torch_npu.npu_rms_norm(torch.ones(2), torch.ones(2))


def test_uninstall_restores(served):
    dropin.uninstall()
    assert "pypto" not in sys.modules or not getattr(sys.modules["pypto"], "__pypto_ast_dropin__", False)
    assert not hasattr(torch, "npu") or not getattr(torch.npu, "__pypto_ast_dropin__", False)
    dropin.install("interp", npu_devices=False)  # for the fixture's own uninstall


class CpuDevice(str):
    def __contains__(self, item):
        return item == "npu" or str.__contains__(self, item)


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_process_kernels(served, backend):
    dropin.install(backend)
    spec = importlib.util.spec_from_file_location("dropin_official_style", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("test_scale_add", "test_rows", "test_softmax"):
        getattr(module, name)(CpuDevice("cpu"))
    assert module.scale_add_kernel.last_backend == backend
    assert module.rows_kernel.last_backend == backend


# =============================================================================================
# bench/dropin_examples.py on a tree of our own examples
# =============================================================================================
def test_bench_classifies(tmp_path):
    examples = tmp_path / "examples" / "01_basic"
    examples.mkdir(parents=True)
    write(examples / "mixed.py", """
        import os

        import torch

        import pypto

        global_run_mode = pypto.RunMode.NPU


        @pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
        def add_kernel(a: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(4, 8)
            out[:] = a + 1.0


        def test_passes(device_id: int = None):
            device = f"npu:{device_id}" if global_run_mode == pypto.RunMode.NPU and device_id is not None else "cpu"
            a = torch.ones(4, 8, device=device)
            out = torch.empty(4, 8, device=device)
            add_kernel(a, out)
            if global_run_mode == pypto.RunMode.NPU:
                torch.testing.assert_close(out, a + 1.0)


        def test_device_guard(device):
            a = torch.ones(4, 8, device=device)
            out = torch.empty(4, 8, device=device)
            add_kernel(a, out)
            if "npu" in device:
                torch.testing.assert_close(out, a + 2.0)  # wrong on purpose: the guard must run


        def test_unsupported(device_id=None):
            pypto.distributed.shmem_signal(1)


        def test_dies(device_id=None):
            os._exit(3)


        def test_crash(device_id=None):
            raise ValueError("boom")
    """)
    out = tmp_path / "out.json"
    done = python([str(ROOT / "bench" / "dropin_examples.py"), str(tmp_path), "--backend", "interp", "--json",
                   str(out), "--timeout", "60"], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # 1 of 5 passed: under the goal
    rows = {r["test"]: r for r in json.loads(out.read_text())["backends"]["interp"]["results"]}
    assert {t: r["outcome"] for t, r in rows.items()} == {
        "test_passes": "passed", "test_device_guard": "failed", "test_unsupported": "unsupported",
        "test_dies": "crash", "test_crash": "crash"}
    assert "Tensor-likes are not close" in rows["test_device_guard"]["reason"]
    assert "pypto.distributed.shmem_signal is not supported" in rows["test_unsupported"]["reason"]
    assert "died" in rows["test_dies"]["reason"] and "ValueError: boom" in rows["test_crash"]["reason"]
    assert "total (interp): passed 1  failed 1  unsupported 1  crash 2  of 5" in done.stdout
