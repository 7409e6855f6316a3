"""Every clean example and every differential kernel on the host backend.

For each kernel (``examples/clean_*.py``, ``tests/differential/kernels/k*.py``):

* supported (not in ``UNSUPPORTED``): the host run must match the module's own torch
  ``reference(**inputs)`` (``runner.run_and_compare(..., backend="host") == 0``) *and* the
  torch interpreter (``backend="interp"``), per output tensor -- or per returned value for
  return-convention kernels -- within the kernel's ``TOLERANCE`` (else the runner's default
  for the dtype);
* listed in ``UNSUPPORTED``: the host run must stop with a clean error located in the kernel
  file (``pipeline.KernelErrors`` -- the pipeline's wrapping of ``EmitError`` -- whose message
  contains the listed substring).  A listed kernel that now runs and matches fails
  ``test_unsupported_list_is_current`` (and its own parametrized case): prune the entry.

Plus: the GM traffic ratio (bytes moved / minimum) is exactly 1.00 for the row softmax
example and for a pure elementwise kernel.

Each kernel builds its C++ once; builds are cached on disk (``emit/build.py``), so the second
host run of a kernel here and every warm rerun skip the compiler.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import shutil
from pathlib import Path

import pytest
import torch

from pypto_ast import knobs, live, pipeline
from pypto_ast.emit.errors import UNSUPPORTED, EmitError
from pypto_ast.runner import DEFAULT_TOLERANCE, run_and_compare

pytestmark = pytest.mark.skipif(
    shutil.which(knobs.cxx) is None,
    reason=f"C++ compiler {knobs.cxx!r} not on PATH (set PYPTO_AST_CXX): the host build needs one",
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("clean_*.py"))
DIFFERENTIAL = sorted((ROOT / "tests" / "differential" / "kernels").glob("k*.py"))
KERNELS = EXAMPLES + DIFFERENTIAL
BY_STEM = {p.stem: p for p in KERNELS}

# Kernels the host backend does not handle yet: stem -> a substring of the expected error.
# Prune entries as the emitter grows (test_unsupported_list_is_current fails on stale ones).
UNSUPPORTED: dict[str, str] = {}


def _load(path: Path):
    with contextlib.redirect_stdout(io.StringIO()):  # kernels that print() while traced
        module = live.load_module(str(path))
        return module, live.find_kernel(module)


def _run(module, kernel, backend: str):
    """Fresh example inputs through ``backend``: (inputs after the run, returned value, program)."""
    inputs = module.example_inputs()
    with contextlib.redirect_stdout(io.StringIO()):
        program = pipeline.lower(kernel, inputs)
        returned = pipeline.run(program, inputs, backend)
    return inputs, returned, program


def _outputs(module, inputs, returned) -> dict:
    """{name: tensor} of what the kernel produced, named like runner.run_and_compare does."""
    expected = module.reference(**module.example_inputs())
    if isinstance(expected, dict):
        return {name: inputs[name] for name in expected}
    if returned is None:
        return {}
    values = returned if isinstance(returned, tuple) else (returned,)
    names = ["return"] if len(values) == 1 else [f"return[{i}]" for i in range(len(values))]
    return dict(zip(names, values))


def _tolerance(module, tensor: torch.Tensor):
    return getattr(module, "TOLERANCE", None) or DEFAULT_TOLERANCE.get(str(tensor.dtype), (1e-5, 1e-5))


@pytest.fixture(scope="module", autouse=True)
def _prebuild(request):
    """Compile the selected kernels' C++ two at a time before the tests run them (g++ runs
    outside the GIL); the tests then hit the on-disk build cache.  Lowering and emitting stay
    in this thread (tracing swaps sys.modules).  Failures are left for the tests to report.
    Under pytest-xdist the workers already use the cores, and every worker would prebuild
    every kernel: each test builds its own then."""
    from concurrent.futures import ThreadPoolExecutor

    from pypto_ast.emit.host_runtime import build_program

    if os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    stems = set()
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if getattr(item, "module", None) is request.module:
            if "path" in params:
                stems.add(params["path"].stem)
            elif "stem" in params:
                stems.add(params["stem"])
    sources = []
    for stem in sorted(stems - set(UNSUPPORTED)):
        try:
            module, kernel = _load(BY_STEM[stem])
            with contextlib.redirect_stdout(io.StringIO()):
                files = pipeline.emit(pipeline.lower(kernel, module.example_inputs()), "ascendc")
        except Exception:  # noqa: BLE001 - the test itself reports it
            continue
        sources.append({n: t for n, t in files.items() if n.endswith(".cpp")})

    def build(src):
        try:
            build_program(src)
        except Exception:  # noqa: BLE001 - the test itself reports it
            pass

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(build, sources))
    yield


@functools.lru_cache(maxsize=None)
def _host_outcome(stem: str):
    """("ok", echo text) when the host run matches the reference, ("mismatch", text) when it
    runs but differs, ("error", exception) when it stops with KernelErrors/EmitError.
    Anything else (a build failure, a Python error) propagates: never a clean outcome."""
    module, kernel = _load(BY_STEM[stem])
    lines: list[str] = []
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = run_and_compare(module, kernel, module.example_inputs(), backend="host", echo=lines.append)
    except (pipeline.KernelErrors, EmitError) as exc:
        return "error", exc
    return ("ok" if code == 0 else "mismatch"), "\n".join(lines)


def _message(exc) -> str:
    return getattr(exc, "message", None) or str(exc)


@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_host_matches_reference_and_interp(path):
    stem = path.stem
    status, detail = _host_outcome(stem)
    if stem in UNSUPPORTED:
        assert status == "error", (f"{stem} is listed in UNSUPPORTED but the host run gave {status!r}; "
                                   f"remove it from UNSUPPORTED\n{detail}")
        want = UNSUPPORTED[stem]
        assert want in _message(detail), f"{stem}: expected an error containing {want!r}, got: {_message(detail)}"
        # located: the error names the kernel's file (and, for per-op errors, a span in it)
        assert getattr(detail, "path", None) and Path(detail.path).resolve() == path.resolve(), \
            f"{stem}: error not located in the kernel file: path={getattr(detail, 'path', None)!r}"
        return
    assert status != "error", f"{stem}: host backend stopped: {_message(detail)}"
    assert status == "ok", f"{stem}: host output differs from reference():\n{detail}"

    module, kernel = _load(path)
    host_inputs, host_ret, _ = _run(module, kernel, "host")
    interp_inputs, interp_ret, _ = _run(module, kernel, "interp")
    host = _outputs(module, host_inputs, host_ret)
    interp = _outputs(module, interp_inputs, interp_ret)
    assert interp, f"{stem}: the interpreter produced no outputs"
    assert set(host) == set(interp), f"{stem}: host outputs {sorted(host)} vs interp {sorted(interp)}"
    for name, want in interp.items():
        got = host[name]
        assert got.shape == want.shape and got.dtype == want.dtype, \
            f"{stem}: {name}: {tuple(got.shape)} {got.dtype} vs interp {tuple(want.shape)} {want.dtype}"
        rtol, atol = _tolerance(module, want)
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True,
                                   msg=lambda m, name=name: f"{stem}: {name}: host vs interp: {m}")


def test_unsupported_list_is_current():
    unknown = sorted(set(UNSUPPORTED) - set(BY_STEM))
    assert not unknown, f"UNSUPPORTED names kernels that do not exist: {unknown}"
    now_pass = [stem for stem in sorted(UNSUPPORTED) if _host_outcome(stem)[0] == "ok"]
    assert not now_pass, f"these kernels now run on the host backend: remove them from UNSUPPORTED: {now_pass}"
    wrong = {stem: _message(detail) for stem in sorted(UNSUPPORTED)
             for status, detail in [_host_outcome(stem)]
             if status == "error" and UNSUPPORTED[stem] not in _message(detail)}
    assert not wrong, f"UNSUPPORTED substrings no longer match the errors (update them): {wrong}"


def test_every_kernel_is_covered():
    assert len(EXAMPLES) == 12 and len(DIFFERENTIAL) >= 40


@pytest.mark.parametrize("stem", ["clean_row_softmax", "k01_binary_fp32"])
def test_gm_traffic_is_minimal(stem):
    """Every input read once, every output written once: moved bytes / minimum == 1.00."""
    module, kernel = _load(BY_STEM[stem])
    inputs = module.example_inputs()
    program = pipeline.lower(kernel, inputs)
    stats: dict = {}
    pipeline.run(program, inputs, "host", stats=stats)
    moved = stats["gm_to_ub_bytes"] + stats["ub_to_gm_bytes"]
    assert stats["min_bytes"] > 0
    assert f"{moved / stats['min_bytes']:.2f}" == "1.00", stats
    assert moved == stats["min_bytes"], stats


def current_unsupported() -> dict:
    """What UNSUPPORTED should be right now: every kernel whose host run stops with a clean
    error, mapped to the error's first clause (print it with ``python <this file>``)."""
    out = {}
    for stem in sorted(BY_STEM):
        try:
            status, detail = _host_outcome.__wrapped__(stem)
        except Exception as exc:  # noqa: BLE001 - not a clean error: the test reports it
            print(f"# {stem}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            continue
        if status == "error":
            text = _message(detail).split("; ")[0].replace(f": {UNSUPPORTED}", "")
            out[stem] = (text.split(" (")[0] if len(text) > 40 else text)[:60]
        elif status == "mismatch":
            print(f"# {stem}: runs but differs from reference()")
    return out


if __name__ == "__main__":
    print("UNSUPPORTED: dict[str, str] = {")
    for stem, text in current_unsupported().items():
        print(f"    {stem!r}: {text!r},")
    print("}")
