"""The NPU launcher's argument marshalling (emit/npu_launch.NpuLaunch) on the host ABI: the host library of
each clean example, with a shim ``pypto_npu_run(stream, ...)`` that records the stream and calls
``pypto_run``, launched through ``NpuLaunch`` gives the example's reference outputs and the host
backend's bits, and reads the stream before every launch (never once for all)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import live, pipeline  # noqa: E402
from pypto_ast.emit import build, host_runtime  # noqa: E402
from pypto_ast.emit.host_backend import HostLaunch, launch_layout  # noqa: E402
from pypto_ast.emit.npu_launch import NpuLaunch  # noqa: E402

from support import needs_cxx  # noqa: E402

pytestmark = needs_cxx
ROOT = Path(__file__).resolve().parents[2]
CLEAN = sorted(p.name for p in (ROOT / "examples").glob("clean_*.py"))
SHIM = """#include <cstdint>
extern "C" int pypto_run(void** tensors, const int64_t* scalars, const int64_t* dims);
static void* g_stream = nullptr;
static int g_calls = 0;
extern "C" void* shim_stream() { return g_stream; }
extern "C" int shim_calls() { return g_calls; }
extern "C" int pypto_npu_run(void* stream, void** tensors, const int64_t* scalars, const int64_t* dims)
{
    g_stream = stream;
    ++g_calls;
    return pypto_run(tensors, scalars, dims);
}
"""


def _inputs(module):
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in module.example_inputs().items()}


@pytest.mark.parametrize("example", CLEAN)
def test_npu_launch_marshals_like_the_host(example):
    path = str(ROOT / "examples" / example)
    module = live.load_module(path)
    inputs = _inputs(module)
    kernel = live.find_kernel(module)
    program = pipeline.lower(kernel, inputs)
    files = pipeline.emit(program, "ascendc")
    names = list(inputs)
    scalars = {p.name: inputs.get(p.name, p.value) for p in program.params if p.kind == "scalar"}
    layout = launch_layout(program, files, scalars)
    sources = {n: t for n, t in files.items() if n.endswith(".cpp")}
    lib = build.load_library(host_runtime.build_program({**sources, "npu_shim.cpp": SHIM}))
    streams = iter(range(0x1000, 0x2000, 0x10))
    read = []

    def stream():
        read.append(next(streams))
        return read[-1]

    npu = NpuLaunch(layout, lib, names, device=None, stream=stream)
    host = HostLaunch(layout, lib, names)
    for launch_number in (1, 2):  # twice: the stream is read again, scratch reused
        mine, theirs = _inputs(module), _inputs(module)
        got = npu.launch([mine[n] for n in names])
        want = host.launch([theirs[n] for n in names])
        lib.shim_stream.restype = ctypes.c_void_p
        assert len(read) == launch_number and lib.shim_stream() == read[-1] and lib.shim_calls() == launch_number
        outputs = [n for n in names if isinstance(mine[n], torch.Tensor)]
        for name in outputs:
            assert torch.equal(mine[name], theirs[name]), f"{example}: {name} differs from the host launch"
        if got is not None:
            for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                assert torch.equal(a, b)
    reference = module.reference(**_inputs(module))
    if isinstance(reference, dict):
        for name, value in reference.items():
            tol = getattr(module, "TOLERANCE", {})
            torch.testing.assert_close(mine[name], value, **(tol if isinstance(tol, dict) and "rtol" in tol else {}))
