"""Shared helpers for the CLI tests: a CliRunner wrapper, the toy rules, rule gating."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _map_cli_package() -> None:
    """The source tree's ``pypto_ast/`` can shadow an installed copy (``python -m pytest`` puts
    the checkout first on sys.path); without an editable install nothing then maps ``cli/`` to
    ``pypto_ast.cli`` the way pyproject's package-dir does, so do it here."""
    try:
        import pypto_ast.cli  # noqa: F401
    except ModuleNotFoundError:
        import pypto_ast

        if Path(pypto_ast.__file__).resolve().parent != REPO / "pypto_ast":
            raise
        spec = importlib.util.spec_from_file_location(
            "pypto_ast.cli", REPO / "cli" / "__init__.py", submodule_search_locations=[str(REPO / "cli")]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["pypto_ast.cli"] = module
        spec.loader.exec_module(module)
        pypto_ast.cli = module


_map_cli_package()


def _load_toy_rules():
    """Import toy_rules.py by path, whatever pytest's import mode puts on sys.path."""
    if "toy_rules" in sys.modules:
        return sys.modules["toy_rules"]
    spec = importlib.util.spec_from_file_location("toy_rules", HERE / "toy_rules.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["toy_rules"] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: bytes = b""


@pytest.fixture
def cli(monkeypatch):
    """``cli(*args, input=None, cwd=None)`` runs pypto-lint in-process and returns a Run."""
    from pypto_ast.cli.lint import main

    monkeypatch.delenv("NO_COLOR", raising=False)

    def run(*args: str, input: bytes | str | None = None, cwd: Path | None = None) -> Run:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        try:
            runner = CliRunner(mix_stderr=False)
        except TypeError:  # click >= 8.2 always keeps stderr apart
            runner = CliRunner()
        result = runner.invoke(main, list(args), input=input, catch_exceptions=False)
        return Run(result.exit_code, result.stdout, result.stderr, result.stdout_bytes)

    return run


@pytest.fixture
def toys(monkeypatch):
    """Install the toy rules PTO901-PTO904 for this test."""
    module = _load_toy_rules()
    module.install(monkeypatch.setattr)
    return module


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh directory as cwd, with a pyproject.toml marking it as the project root."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _require_rule(code: str) -> None:
    from pypto_ast.analysis.registry import BY_CODE

    if code not in BY_CODE:
        pytest.skip(f"rule {code} is not implemented yet")


@pytest.fixture
def require_rule():
    """``require_rule(code)`` skips unless the real rule is registered (rules land one by one)."""
    return _require_rule


@pytest.fixture
def real_rules():
    """For tests that need the real rule set (PTO001 is the marker that it has landed)."""
    _require_rule("PTO001")


def _exe() -> str:
    exe = shutil.which("pypto-lint")
    if exe is None:
        pytest.fail("pypto-lint is not on PATH: run `pip install -e .` first")
    return exe


def _run_exe(args, *, cwd, input: bytes | None = None, env=None, toy: bool = False) -> subprocess.CompletedProcess:
    """Run the installed console script, or (``toy``) the CLI with the toy rules installed."""
    full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    full_env.update(env or {})
    if toy:
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), full_env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-c", "import toy_rules; toy_rules.install(); toy_rules.main()", *args]
    else:
        cmd = [_exe(), *args]
    return subprocess.run(cmd, cwd=cwd, input=input, capture_output=True, env=full_env, timeout=300)


@pytest.fixture
def exe() -> str:
    """Path of the installed ``pypto-lint`` console script."""
    return _exe()


@pytest.fixture
def run_exe():
    """``run_exe(args, cwd=..., input=None, env=None, toy=False)`` -> CompletedProcess."""
    return _run_exe
