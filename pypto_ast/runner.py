"""The ``--run`` contract every backend shares: run a kernel module's ``example_inputs()``
through a backend, compare with its ``reference(**inputs)``, report per output.

Exit status: 0 all outputs match, 1 one differs, 2 it could not run.
"""

from __future__ import annotations

from typing import Callable, Optional

from . import pipeline
from .errors import BackendUnavailable

# (rtol, atol) per dtype when the module defines no TOLERANCE; fp16/bf16 allow for one
# rounding per op of a chain computed in fp32 and stored in the narrow type.
DEFAULT_TOLERANCE = {
    "torch.float32": (1e-5, 1e-5), "torch.float64": (1e-7, 1e-7), "torch.float16": (2e-3, 2e-3),
    "torch.bfloat16": (1.6e-2, 1e-2),
}


def _clone(value):
    import torch

    return value.clone() if isinstance(value, torch.Tensor) else value


def outputs_match(got, want, rtol: float, atol: float) -> bool:
    """``torch.testing.assert_close(got, want, rtol, atol, equal_nan=True)`` for tensors of the
    same shape and dtype: |got - want| <= atol + rtol * |want| elementwise, equal infinities
    and NaN in both places count as equal.  Written on ``torch.isclose`` because importing
    ``torch.testing`` pulls in the distributed tensor package (about 2 s of start-up)."""
    import torch

    if got.numel() == 0:
        return True
    return bool(torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol, equal_nan=True).all())


BUILT = ("host", "npu")
"""Backends that build a library: their errors arrive located (emit, UB budget, device faults)."""


def run_and_compare(module, kernel, inputs: dict, *, backend: str = "interp", merge_loop1: bool = False,
                    echo: Callable[[str], None] = print, soc: Optional[str] = None,
                    progress: Optional[Callable[[str], None]] = None) -> int:
    """``kernel``: the Program already lowered for ``inputs`` (``pypto-transpile --run``), or a
    live kernel object of ``module``, lowered here from its source."""
    from .ir import Program

    if not hasattr(module, "reference"):
        raise pipeline.PipelineError("the module defines no reference(**inputs) to compare with",
                                     getattr(module, "__file__", None))
    pristine = {k: _clone(v) for k, v in inputs.items()}
    program = kernel if isinstance(kernel, Program) else pipeline.lower(kernel, inputs, merge_loop1=merge_loop1)
    stats: dict = {}
    from .arguments import ArgumentError

    try:
        if backend == "host":
            returned = pipeline.run(program, inputs, backend, soc=soc, stats=stats, progress=progress)
        else:
            returned = pipeline.run(program, inputs, backend)
    except ArgumentError as exc:  # the example's tensors: could not run, on either backend
        raise pipeline.PipelineError(str(exc), getattr(module, "__file__", None)) from None
    except pipeline.KernelErrors as exc:
        if backend not in BUILT:
            raise pipeline.KernelErrors([(f"{backend} backend: {exc}", getattr(exc, "span", None))],
                                        getattr(module, "__file__", None), code="PTO111") from None
        # host errors come located already (emit errors, the UB budget, device faults)
        raise pipeline.KernelErrors(exc.findings, exc.path or getattr(module, "__file__", None), code=exc.code) from None
    except pipeline.PipelineError as exc:
        if backend in BUILT:  # build failure, bad inputs: could not run (exit 2)
            raise
        raise pipeline.KernelErrors([(f"{backend} backend: {exc}", getattr(exc, "span", None))],
                                    getattr(module, "__file__", None), code="PTO111") from None
    except BackendUnavailable:  # the npu backend says what is missing: could not run (exit 2)
        raise
    except Exception as exc:  # the backend's own error (e.g. InterpError) -> located diagnostic
        if backend in BUILT:  # HostRunError/EmitError arrive as KernelErrors: anything else is our bug
            raise pipeline.PipelineError(f"host backend failed: {type(exc).__name__}: {exc}",
                                         getattr(module, "__file__", None)) from None
        span = getattr(exc, "span", None)
        raise pipeline.KernelErrors([(f"{backend} backend: {exc}", span)], getattr(module, "__file__", None),
                                    code=getattr(exc, "code", None) or "PTO111") from None
    from .live import call_user

    expected = call_user(module, "reference", **pristine)
    if isinstance(expected, dict):
        actual = {name: inputs[name] for name in expected}
    else:
        names = ["return"] if not isinstance(expected, tuple) else [f"return[{i}]" for i in range(len(expected))]
        expected_values = expected if isinstance(expected, tuple) else (expected,)
        returned_values = returned if isinstance(returned, tuple) else (returned,)
        if len(returned_values) != len(expected_values):
            echo(f"kernel returned {len(returned_values)} value(s), reference {len(expected_values)}")
            return 1
        expected = dict(zip(names, expected_values))
        actual = dict(zip(names, returned_values))
    tolerance = getattr(module, "TOLERANCE", None)
    failed = False
    echo(f"backend: {backend}  kernel: {program.name}  paths: {program.paths}")
    if "min_bytes" in stats:
        moved = stats["gm_to_ub_bytes"] + stats["ub_to_gm_bytes"]
        ratio = moved / stats["min_bytes"] if stats["min_bytes"] else float("nan")
        echo(f"  GM traffic: {moved} B (GM->UB {stats['gm_to_ub_bytes']} B, UB->GM {stats['ub_to_gm_bytes']} B); "
             f"minimum {stats['min_bytes']} B; ratio {ratio:.2f}")
    for name, want in expected.items():
        got = actual[name]
        rtol, atol = tolerance or DEFAULT_TOLERANCE.get(str(want.dtype), (1e-5, 1e-5))
        if got.shape != want.shape or got.dtype != want.dtype:
            echo(f"  {name}: MISMATCH shape/dtype {tuple(got.shape)} {got.dtype} vs expected "
                 f"{tuple(want.shape)} {want.dtype}")
            failed = True
            continue
        err = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
        if outputs_match(got, want, rtol, atol):
            echo(f"  {name}: ok  max abs error {err:.3g}  (rtol={rtol:g}, atol={atol:g})")
        else:
            echo(f"  {name}: MISMATCH  max abs error {err:.3g}  (rtol={rtol:g}, atol={atol:g})")
            failed = True
    return 1 if failed else 0
