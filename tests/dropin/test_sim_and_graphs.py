"""Two device-side features of the official stack under the drop-in:

* ``RunMode.SIM`` is pypto's cost model: pypto writes
  ``output/output_<date>_<time>_<usec>_<pid>_.../CostModelSimulationOutput/merged_swimlane.json``
  (Chrome trace events) and a cycle report in the working directory.  The drop-in computes the
  values and writes that directory from pypto-ast's own static cost model (design §33); only when
  the model cannot estimate a kernel is there a ``DropinWarning`` / ``dropin.notices()``, and the
  bench reports a test that then fails as unsupported.
* ``torch.npu.NPUGraph`` / ``torch.npu.graph``: capture records the pypto kernel calls, replay
  runs them again on the same tensors; a capture that issued other torch compute refuses to
  replay, naming the op.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin  # noqa: E402
from support import BACKENDS, line_of, write  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

KERNELS = """
    import torch

    import pypto


    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def sim_scale(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x * 3.0


    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def row_norm(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x / pypto.sum(x, -1, keepdim=True)


    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def sim_matmul(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
                   c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)


    def run_sim(x):
        out = torch.empty_like(x)
        sim_scale(x, out)  # the SIM call
        return out
"""


@pytest.fixture
def kernels(tmp_path, request):
    backend = getattr(request, "param", "interp")
    dropin.install(backend)
    path = write(tmp_path / "graph_kernels.py", KERNELS)
    spec = importlib.util.spec_from_file_location("graph_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.PATH = path
    dropin.clear_notices()
    try:
        yield module
    finally:
        dropin.clear_notices()
        dropin.uninstall()


# -- RunMode.SIM -------------------------------------------------------------------------------
def _sim_dirs(root: Path) -> list:
    out = root / "output"
    return sorted(out.iterdir()) if out.is_dir() else []


def _swimlane(folder: Path) -> dict:
    return json.loads((folder / "CostModelSimulationOutput" / "merged_swimlane.json").read_text())


@pytest.mark.parametrize("kernels", BACKENDS, indirect=True)
def test_sim_computes_the_values_and_writes_the_cost_model_output_where_pypto_does(kernels, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = torch.rand(16, 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = kernels.run_sim(x)
    torch.testing.assert_close(out, x * 3.0)
    assert dropin.notices() == [] and not [w for w in caught if w.category is dropin.DropinWarning]
    [folder] = _sim_dirs(tmp_path)
    # what the official example looks for: a directory naming the process id, holding the JSON
    assert folder.name.startswith("output_") and f"_{os.getpid()}_" in folder.name
    assert folder.name.endswith("_sim_scale")
    data = _swimlane(folder)
    events = data["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    assert spans and all(e["tid"] in threads for e in spans)
    assert set(threads.values()) == {"AIV_0", "AIV_1"}  # 16 rows in 8-row tiles: two vector tasks
    for e in spans:
        assert e["pid"] == 1 and e["dur"] > 0 and e["ts"] >= 0 and isinstance(e["name"], str)
    tasks = [e for e in spans if e["cat"] == "task"]
    assert len(tasks) == 2 and {e["args"]["block"] for e in tasks} == {"b0"}
    phases = [e for e in spans if e["cat"] != "task"]
    assert {e["name"] for e in phases} == {"copy-in", "vector", "copy-out"}
    for task in tasks:  # its phases lie inside it, on its core, one after another
        inside = sorted((e for e in phases if e["tid"] == task["tid"]), key=lambda e: e["ts"])
        assert [e["name"] for e in inside] == ["copy-in", "vector", "copy-out"]
        assert task["ts"] <= inside[0]["ts"] and inside[-1]["ts"] + inside[-1]["dur"] <= task["ts"] + task["dur"] + 1e-9
        assert task["args"]["bytes_in"] == 8 * 64 * 4 and task["args"]["bytes_out"] == 8 * 64 * 4
    summary = data["otherData"]
    assert summary["kernel"] == "sim_scale" and summary["tasks"] == {"AIC": 0, "AIV": 2}
    end = max(e["ts"] + e["dur"] for e in spans)
    assert summary["total_cycles"] == pytest.approx(end * summary["clock_mhz"], abs=1)
    report = (folder / "CostModelSimulationOutput" / "_simulate.stat.report.txt").read_text()
    [total] = [line for line in report.splitlines() if line.startswith("Total Cycles")]
    assert int(total.split(":")[1]) == summary["total_cycles"]
    assert "estimate" in report.splitlines()[0]


def test_each_sim_call_writes_its_own_directory_and_more_rows_cost_more(kernels, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kernels.run_sim(torch.rand(16, 64))
    kernels.run_sim(torch.rand(16 * 64, 64))
    small, large = (_swimlane(d)["otherData"] for d in _sim_dirs(tmp_path))
    assert small["tasks"]["AIV"] == 2 and large["tasks"]["AIV"] == 128
    assert large["total_cycles"] > small["total_cycles"]
    assert large["bytes"]["in"] == 64 * small["bytes"]["in"]


def test_a_sim_matmul_puts_its_tasks_on_cube_cores(kernels, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a, b = torch.rand(128, 256, dtype=torch.float16), torch.rand(256, 192, dtype=torch.float16)
    c = torch.empty(128, 192)
    kernels.sim_matmul(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-2)
    [folder] = _sim_dirs(tmp_path)
    data = _swimlane(folder)
    threads = {e["tid"]: e["args"]["name"] for e in data["traceEvents"] if e["name"] == "thread_name"}
    tasks = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] == "task"]
    assert len(tasks) == 2 * 3 and {threads[e["tid"]][:4] for e in tasks} == {"AIC_"}  # [128, 192] in [64, 64]
    assert {e["name"] for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] != "task"} == {"copy-in", "cube",
                                                                                                "copy-out"}
    assert data["otherData"]["tasks"] == {"AIC": 6, "AIV": 0} and data["otherData"]["busy_cycles"]["CUBE"] > 0


def test_npu_mode_writes_nothing(kernels, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = torch.rand(8, 64) + 0.5
    out = torch.empty_like(x)
    kernels.row_norm(x, out)
    torch.testing.assert_close(out, x / x.sum(-1, keepdim=True))
    assert dropin.notices() == [] and _sim_dirs(tmp_path) == []


def test_a_kernel_the_cost_model_cannot_estimate_is_noted_and_still_computes(kernels, tmp_path, monkeypatch):
    from pypto_ast.ir import costmodel

    def refuse(*args, **kwargs):
        raise costmodel.CostError("loop i: its bounds need a value read from @lens")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(costmodel, "estimate", refuse)
    x = torch.rand(16, 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = kernels.run_sim(x)
    torch.testing.assert_close(out, x * 3.0)
    [notice] = dropin.notices()
    line = line_of(kernels.PATH, "sim_scale(x, out)")
    assert str(notice).startswith("pypto's cost model (RunMode.SIM: output/*/CostModelSimulationOutput/)")
    assert f"graph_kernels.py:{line})" in str(notice) and "a value read from @lens" in str(notice)
    assert [w.category for w in caught] == [dropin.DropinWarning] and caught[0].lineno == line
    assert _sim_dirs(tmp_path) == []
    kernels.run_sim(x)  # the same call site again: noted once
    assert len(dropin.notices()) == 1


def _bench():
    spec = importlib.util.spec_from_file_location("dropin_examples_bench", ROOT / "bench" / "dropin_examples.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["dropin_examples_bench"] = bench
    spec.loader.exec_module(bench)
    return bench


def test_bench_counts_a_sim_test_by_its_own_checks(kernels, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bench = _bench()
    kernels.run_sim(torch.rand(8, 64))  # estimated: nothing is noted, an assertion is the test's own
    assert bench.classify(AssertionError("x"))[0] == "failed"


def test_bench_reports_a_failure_after_a_notice_as_unsupported(kernels, tmp_path, monkeypatch):
    from pypto_ast.ir import costmodel

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(costmodel, "estimate", lambda *a, **k: (_ for _ in ()).throw(costmodel.CostError("no")))
    bench = _bench()
    with pytest.warns(dropin.DropinWarning, match="could not estimate kernel sim_scale"):
        kernels.run_sim(torch.rand(8, 64))
    outcome, reason = bench.classify(AssertionError())
    assert outcome == "unsupported" and reason.startswith("Unsupported: pypto's cost model") and "then AssertionError" in reason


# -- NPUGraph ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kernels", BACKENDS, indirect=True)
def test_replay_reruns_the_captured_kernels_on_the_inputs_current_contents(kernels):
    x = torch.rand(16, 64, device="npu:0") + 0.5
    out = torch.empty(16, 64, device="npu:0")
    g = torch.npu.NPUGraph()
    assert not torch.npu.is_current_stream_capturing()
    with torch.npu.graph(g):
        assert torch.npu.is_current_stream_capturing()
        kernels.row_norm(x, out)
    assert g.kernel_calls == 1
    x.copy_(torch.rand(16, 64) + 2.0)  # new static input, as a script fills it before a replay
    out.fill_(float("nan"))
    g.replay()
    torch.testing.assert_close(out, x / x.sum(-1, keepdim=True))
    kernels.row_norm(x, torch.empty_like(x))  # outside the capture: not recorded
    assert g.kernel_calls == 1


def test_replay_through_torch_compile_with_an_output_allocated_in_the_capture(kernels):
    """A torch.compile'd module calling the kernel (allow_in_graph), its output allocated during
    the capture (torch.empty: the graph's memory); the replay refreshes that output."""
    from torch._dynamo import allow_in_graph

    @allow_in_graph
    def norm(x):
        out = torch.empty(x.shape, dtype=x.dtype)
        kernels.row_norm(x, out)
        return out

    class Net(torch.nn.Module):
        def forward(self, x):
            return norm(x)

    model = torch.compile(Net(), backend="eager")
    x = torch.rand(8, 64) + 0.5
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        y = model(x)
    x.mul_(2.0).add_(1.0)
    g.replay()
    torch.testing.assert_close(y, x / x.sum(-1, keepdim=True))


def test_a_capture_with_other_torch_compute_refuses_to_replay(kernels):
    x = torch.rand(8, 64) + 0.5
    out = torch.empty(8, 64)
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        kernels.row_norm(x * 2.0, out)  # the multiply would be replayed on an NPU, not here
    with pytest.raises(dropin.Unsupported, match=r"^torch_npu\.npu\.NPUGraph\.replay is not supported .*aten\.mul"):
        g.replay()


# -- torch custom ops for NPU, torchair's graph backend (npu_extensions) ------------------------
_LIB_COUNTER = iter(range(10_000))


def _custom_op(kernels):
    """A model's wrapper: a Meta kernel for tracing, an NPU kernel that launches the pypto kernel."""
    name = f"pypto_ast_test_norm{next(_LIB_COUNTER)}"
    lib = torch.library.Library("pypto_ast_tests", "FRAGMENT")
    lib.define(f"{name}(Tensor x) -> Tensor")

    @torch.library.impl(lib, name, "Meta")
    def meta(x):
        return torch.empty_like(x)

    @torch.library.impl(lib, name, "NPU")
    def npu(x):
        out = torch.empty_like(x)
        kernels.row_norm(x, out)
        return out

    return lib, getattr(torch.ops.pypto_ast_tests, name)


def test_a_custom_op_registered_for_npu_runs_its_kernel_on_the_cpu(kernels):
    lib, op = _custom_op(kernels)
    x = torch.rand(16, 64, device="npu:0") + 0.5
    torch.testing.assert_close(op(x), x / x.sum(-1, keepdim=True))
    assert dropin.notices() == []


def test_torchair_backend_runs_the_captured_graph_with_the_custom_op(kernels):
    import torchair as tng
    from torchair.configs.compiler_config import CompilerConfig

    lib, op = _custom_op(kernels)

    class Net(torch.nn.Module):
        def forward(self, x):
            return op(x * 2.0) + 1.0

    config = CompilerConfig()
    config.mode = "reduce-overhead"
    config.experimental_config.frozen_parameter = True  # nested groups appear on first use
    model = torch.compile(Net(), dynamic=False, fullgraph=True, backend=tng.get_npu_backend(compiler_config=config))
    x = torch.rand(16, 64, device="npu:0") + 0.5
    torch.testing.assert_close(model(x), (x * 2.0) / (x * 2.0).sum(-1, keepdim=True) + 1.0)
    with pytest.raises(dropin.Unsupported, match="torchair.inference"):
        tng.inference.set_dim_gears(x, {0: [1, 2]})


def test_uninstall_removes_torchair_and_the_npu_key_mapping(kernels):
    import torchair

    assert torchair.__pypto_ast_dropin__
    assert getattr(torch.library.Library.impl, "__pypto_ast_dropin__", False)
    assert torch.accelerator.is_available() is False
    dropin.uninstall()
    assert "torchair" not in sys.modules
    assert not getattr(torch.library.Library.impl, "__pypto_ast_dropin__", False)
    assert not getattr(torch.accelerator.is_available, "__pypto_ast_dropin__", False)
