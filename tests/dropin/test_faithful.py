"""The drop-in behaves as the official pypto and torch_npu do where a script can tell: a device
move is a copy (an in-place kernel on ``x_cpu.npu()`` leaves ``x_cpu`` alone) but a tensor on the NPU
already is not moved again (``y.npu()`` of ``y = zeros(...).npu()`` is ``y``), only names the
official pypto has are present (``hasattr`` and ``try: import`` feature detection), and
``torch.npu.Event`` times on the CPU clock."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import time

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin, lang  # noqa: E402
from pypto_ast.frontend import surface  # noqa: E402
from support import BACKENDS, write  # noqa: E402


@pytest.fixture
def npu_dropin():
    """The drop-in as scripts get it: NPU devices mapped to the CPU (torch patched for the test)."""
    dropin.install("interp")
    try:
        yield
    finally:
        dropin.uninstall()


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# =============================================================================================
# a device move is a copy
# =============================================================================================
IN_PLACE = """
    import torch
    import torch_npu  # noqa: F401

    import pypto


    @pypto.frontend.jit
    def scale_in_place(x: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        x[:] = x * 2.0 + 1.0


    def ref(x):
        return x * 2.0 + 1.0


    def test_npu_then_golden(device_id=0):
        x_cpu = torch.randn(8, 32)
        kept = x_cpu.clone()
        x = x_cpu.npu()
        golden = ref(x_cpu)
        scale_in_place(x)
        torch.testing.assert_close(x.cpu(), golden)
        assert torch.equal(x_cpu, kept)  # the kernel wrote the NPU copy only


    def test_golden_after_the_kernel(device_id=0):
        x_cpu = torch.randn(8, 32)
        x = x_cpu.to(f"npu:{device_id}")
        scale_in_place(x)
        torch.testing.assert_close(x.cpu(), ref(x_cpu))


    def test_cpu_is_a_snapshot(device_id=0):
        x = torch.randn(8, 32, device=f"npu:{device_id}")
        before = x.cpu()
        scale_in_place(x)
        torch.testing.assert_close(x.cpu(), ref(before))
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_kernel_on_a_moved_tensor(tmp_path, npu_dropin, backend):
    dropin.install(backend)
    module = load(write(tmp_path / "in_place.py", IN_PLACE), "dropin_in_place")
    module.test_npu_then_golden()
    module.test_golden_after_the_kernel()
    module.test_cpu_is_a_snapshot()
    assert module.scale_in_place.last_backend == backend


ALREADY_ON_NPU = """
    import torch
    import torch_npu  # noqa: F401

    import pypto


    @pypto.frontend.jit
    def gate_rows(
        x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_BF16),
        gate: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
        y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_BF16),
    ):
        pypto.set_vec_tile_shapes(8, 64)
        for i in pypto.loop(0, x.shape[0] // 8, 1, name="ROWS", idx_name="i"):
            xs = pypto.cast(pypto.view(x, [8, 64], [i * 8, 0]), pypto.DT_FP32)
            g = pypto.sigmoid(pypto.view(gate, [8, 64], [i * 8, 0]))
            pypto.assemble(pypto.cast(xs * g, pypto.DT_BF16), [i * 8, 0], y)


    def golden(x, gate):
        return (x.float() * torch.sigmoid(gate)).to(torch.bfloat16)


    def test_outputs_moved_twice(rows=16):
        x = torch.randn(rows, 64).to(torch.bfloat16)
        gate = torch.randn(rows, 64)
        want = golden(x, gate)
        y = torch.zeros_like(want).npu()  # on the NPU ...
        spare = torch.zeros_like(y)  # a *_like of an NPU tensor is on the NPU too
        inputs = [x.npu(), gate.npu(), y.npu()]  # ... so .npu() is no move: the kernel writes y
        gate_rows(*inputs)
        torch.testing.assert_close(y.cpu().float(), want.float(), rtol=1e-2, atol=1e-2)
        gate_rows(x.npu(), gate.to("npu:0"), spare.to("npu"))
        torch.testing.assert_close(spare.cpu().float(), want.float(), rtol=1e-2, atol=1e-2)
        made = torch.zeros(rows, 64, dtype=torch.bfloat16, device="npu:0")
        gate_rows(x.npu(), gate.npu(), made.npu())
        torch.testing.assert_close(made.cpu().float(), want.float(), rtol=1e-2, atol=1e-2)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tensor_already_on_the_npu_is_not_moved(tmp_path, npu_dropin, backend):
    dropin.install(backend)
    module = load(write(tmp_path / "twice.py", ALREADY_ON_NPU), "dropin_already_on_npu")
    module.test_outputs_moved_twice()
    x = torch.ones(2, 3)
    on = x.npu()
    assert on.npu() is on and on.to("npu:0") is on and on.to("npu", torch.float16) is not on
    assert on.cpu() is not on and x.npu() is not x and x.npu().npu() is not x  # moves from the CPU copy
    like, cpu_like = torch.empty_like(on), torch.empty_like(x)
    assert like.npu() is like and cpu_like.npu() is not cpu_like


def test_every_move_copies(npu_dropin):
    import numpy as np

    x = torch.arange(6.0).reshape(2, 3)
    moved = [x.npu(), x.to("npu"), x.to("npu:0"), x.to(torch.device("npu", 0)), x.to(device="npu:0"), x.to(0),
             x.to("npu:0", torch.float32), x.npu().cpu(), x.npu().to("cpu"), torch.as_tensor(x, device="npu:0"),
             torch.asarray(x, device="npu")]
    for y in moved:
        assert y.device.type == "cpu" and torch.equal(y, x)  # NPU tensors are CPU tensors ...
        y.add_(1)
        assert torch.equal(x, torch.arange(6.0).reshape(2, 3))  # ... whose storage is their own
    array = np.zeros(3, dtype=np.float32)
    torch.as_tensor(array, device="npu:0").add_(1)
    assert not array.any()
    assert x.to(torch.float32) is x and x.to(torch.float16).dtype == torch.float16  # no device: torch's own
    assert x.new_zeros(3).shape == (3,) and x.new_ones(2, device="npu:0").device.type == "cpu"


# =============================================================================================
# only the official names
# =============================================================================================
@pytest.fixture
def pypto():
    dropin.install("interp", npu_devices=False)
    try:
        import pypto

        yield pypto
    finally:
        dropin.uninstall()


def test_names_the_official_pypto_lacks_are_absent(pypto):
    assert not hasattr(pypto, "no_such_name")
    with pytest.raises(AttributeError, match="no_such_name"):
        pypto.no_such_name  # noqa: B018
    with pytest.raises(ImportError, match="no_such_name"):
        exec("from pypto import no_such_name", {})
    with pytest.raises(ModuleNotFoundError, match="pypto.nonexistent"):
        importlib.import_module("pypto.nonexistent")
    assert "pypto.nonexistent" not in sys.modules
    assert not hasattr(pypto.experimental, "no_such_name")  # under an official name the drop-in lacks
    import pypto.experimental

    assert not hasattr(pypto.experimental, "no_such_name") and not hasattr(pypto.runtime, "no_such_name")
    assert not hasattr(pypto, "set_future_options")


def test_official_names_the_drop_in_lacks_are_present_and_say_so_when_used(pypto):
    from pypto.distributed import create_shmem_signal

    assert hasattr(pypto, "verify") and hasattr(pypto.runtime, "verify")
    with pytest.raises(dropin.Unsupported, match=r"^pypto\.distributed\.create_shmem_signal is not supported by "
                                                 r"the pypto-ast drop-in \(called at "):
        create_shmem_signal(1)
    import pypto.pypto_impl

    assert isinstance(pypto.pypto_impl.SetGlobalConfig, dropin.UnsupportedAPI)  # the native module: any member
    assert isinstance(pypto.runtime._device_run_once_data_from_host, dropin.UnsupportedAPI)  # private: kept


def test_every_official_name_the_drop_in_serves_resolves(pypto):
    """Every public name of pypto's table resolves through the drop-in's namespaces (its own
    classes' members, pypto_ast.lang's, are those classes' business), and so does every name
    pypto_ast.lang exports."""
    missing = []
    for qualname in surface.NAMES:
        parts = qualname.split(".")
        value = pypto
        for depth in range(1, len(parts)):
            if not (isinstance(value, dropin.UnsupportedAPI) or getattr(value, "__pypto_ast_dropin__", False)):
                break  # a class of pypto_ast.lang
            prefix = ".".join(parts[: depth + 1])
            try:
                if surface.NAMES.get(prefix, ("",))[0] == "module":
                    value = importlib.import_module(prefix)
                else:
                    value = getattr(value, parts[depth])
            except (AttributeError, ImportError):
                missing.append(qualname)
                break
    assert missing == []
    for name in dir(lang):
        if not name.startswith("_") and name not in ("annotations", "enum"):
            assert hasattr(pypto, name), name


# =============================================================================================
# torch.npu.Event
# =============================================================================================
def test_events_time_on_the_cpu(pypto):
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    time.sleep(0.02)
    end.record()
    end.synchronize()
    assert 15.0 <= start.elapsed_time(end) < 60_000.0  # milliseconds: about the 20 ms slept
    assert start.query()
    stream = torch.npu.current_stream()
    assert stream.record_event().elapsed_time(stream.record_event()) >= 0.0
    with pytest.raises(RuntimeError, match="recorded"):
        torch.npu.Event(enable_timing=True).elapsed_time(end)
    with pytest.raises(RuntimeError, match="enable_timing"):
        torch.npu.Event().elapsed_time(end)
