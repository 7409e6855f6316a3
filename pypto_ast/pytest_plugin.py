"""pytest plugin: a test suite written for the official pypto runs on the pypto-ast drop-in.

    pytest -p pypto_ast.pytest_plugin --pypto-backend host tests/

``import pypto`` (and ``torch_npu``, stubbed when the real one cannot be imported) resolves to
``pypto_ast.dropin`` before any conftest or test module is imported: the drop-in is installed in
``pytest_load_initial_conftests`` (first, before conftest files load), or at ``pytest_configure``
when the plugin is loaded later (``pytest_plugins = ["pypto_ast.pytest_plugin"]`` in a conftest).
Kernels run on ``--pypto-backend`` (``interp`` or ``host``; default ``$PYPTO_AST_BACKEND`` when it
names one of them, else ``interp``), whatever ``run_mode`` the tests ask for.

A ``device`` fixture is provided for tests written ``def test_x(device)``: the NPU device the
official scripts use (``npu:$TILE_FWK_DEVICE_ID``, which the drop-in's torch_npu stub maps to
the CPU, so ``if "npu" in device:`` checks run), or ``cpu`` when the real torch_npu is present
(no NPU is used: kernels run on the pypto-ast backend).  A conftest's own ``device`` fixture
takes precedence.  The header line of the run names the backend.

``--pypto-run-skipped-large`` lifts the skips a suite puts on its tests for their size
(``@pytest.mark.skip(reason="large test case")``, or a reason naming a size such as ``"t=16"``):
those are the shapes users run, and on a CPU backend only time limits them.  Other skips (a torch
version, "precision test", "temporarily disabled") stay.

A test that fails an ``assert_allclose`` / ``assert_close`` only by one bf16 or fp16 rounding step
per mismatching element gets a PTO113 warning in its report, at the comparison's line
(``pypto_ast.rounding_steps``); one whose kernels rounded values lying at a tie between two
integers (an int8 quantization) gets a PTO114 warning at the cast (``pypto_ast.rounding_ties``).
"""

from __future__ import annotations

import os
import re

import pytest

_CHOICES = ("interp", "host")


def _default_backend() -> str:
    value = os.environ.get("PYPTO_AST_BACKEND", "").strip().lower()
    return value if value in _CHOICES else "interp"


def pytest_addoption(parser):
    group = parser.getgroup("pypto-ast", "pypto-ast drop-in for the official pypto")
    group.addoption("--pypto-backend", dest="pypto_backend", choices=_CHOICES, default=None,
                    help="where kernels run: interp (torch reference interpreter) or host (emitted Ascend C "
                         "built with g++); default $PYPTO_AST_BACKEND or interp")
    group.addoption("--pypto-run-skipped-large", dest="pypto_run_skipped_large", action="store_true",
                    default=False, help="run the tests a suite skips for their size (reason 'large test case', "
                                        "'t=16', ...)")


_SIZE_REASON = re.compile(r"\blarge\b|^\s*[a-z]\w*\s*=\s*\d+\s*$", re.IGNORECASE)


def size_skip(mark) -> bool:
    """Is this ``skip`` mark one a suite puts on a test for its size (see the module docstring)?"""
    if mark.name != "skip":
        return False
    reason = mark.kwargs.get("reason", mark.args[0] if mark.args else "")
    return bool(_SIZE_REASON.search(str(reason)))


def pytest_collection_modifyitems(config, items):
    if not config.getoption("pypto_run_skipped_large", default=False):
        return
    for item in items:
        item.own_markers[:] = [mark for mark in item.own_markers if not size_skip(mark)]


def _backend_of(config) -> str:
    value = getattr(config.known_args_namespace, "pypto_backend", None) if hasattr(config, "known_args_namespace") \
        else None
    if value is None:
        try:
            value = config.getoption("pypto_backend")
        except (ValueError, AttributeError):
            value = None
    return value or _default_backend()


def _install(config) -> None:
    from . import dropin

    dropin.install(_backend_of(config))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    _install(early_config)


def pytest_configure(config):
    from . import dropin

    if not dropin.installed():
        _install(config)
    else:  # the backend option is parsed now
        dropin.install(config.getoption("pypto_backend") or dropin.backend())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    from . import rounding_ties

    if call.when == "setup":  # the ties a test's kernels see are that test's
        rounding_ties.clear()
    if call.when != "call" or call.excinfo is None:
        return
    from .rounding_steps import explain, render

    diag = explain(call.excinfo.value)
    parts = [render(diag)] if diag is not None else []
    if isinstance(call.excinfo.value, AssertionError):
        ties = rounding_ties.render(rounding_ties.take())
        parts += [ties] if ties else []
    if parts:
        outcome.get_result().sections.append(("pypto-ast", "\n".join(parts)))


def pytest_report_header(config):
    from . import dropin

    stub = "stub torch_npu (npu devices are the CPU)" if dropin._state.torch_npu_stub else "real torch_npu"
    return f"pypto: pypto-ast drop-in, kernels on the {dropin.backend()} backend, {stub}"


@pytest.fixture
def device():
    """The device argument of ``def test_x(device)``: see the module docstring."""
    from . import dropin

    if dropin._state.torch_npu_stub:
        return f"npu:{os.environ.get('TILE_FWK_DEVICE_ID', '0')}"
    return "cpu"
