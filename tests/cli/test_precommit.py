"""Our ``.pre-commit-hooks.yaml`` as another repository would use it, via ``pre-commit try-repo``.

try-repo ignores untracked files of the hook repository, so the test commits a copy of the
current working tree (pyproject, package, hooks file) to a throwaway repository first;
pre-commit then pip-installs that copy into its own virtualenv (network: PyPI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SHIPPED = ["pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "pypto_ast", "cli"]


def git(*args: str, cwd: Path, env: dict) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def env(tmp_path):
    identity = {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    return {**clean, **identity, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}


@pytest.fixture
def hook_repo(tmp_path, env) -> Path:
    """A committed copy of this checkout's installable files."""
    if shutil.which("pre-commit") is None:
        pytest.skip("pre-commit is not installed")
    copy = tmp_path / "hook-repo"
    copy.mkdir()
    for name in SHIPPED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif src.exists():
            shutil.copy2(src, copy / name)
    if not (copy / "README.md").exists():  # pyproject's readme must exist to build
        (copy / "README.md").write_text("pypto-ast\n")
    git("init", "-q", cwd=copy, env=env)
    git("add", "-A", cwd=copy, env=env)
    git("commit", "-q", "-m", "snapshot", cwd=copy, env=env)
    return copy


@pytest.fixture
def project(tmp_path, env) -> Path:
    proj = tmp_path / "project"
    proj.mkdir()
    git("init", "-q", cwd=proj, env=env)
    return proj


def try_repo(hook_repo: Path, hook: str, project: Path, env: dict, *files: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["pre-commit", "try-repo", str(hook_repo), hook, "--files", *files],
        cwd=project, env=env, capture_output=True, text=True, timeout=900,
    )


def commit(project: Path, env: dict, name: str, text: str) -> Path:
    path = project / name
    path.write_text(text)
    git("add", name, cwd=project, env=env)
    git("commit", "-q", "-m", f"add {name}", cwd=project, env=env)
    return path


def _fixable_case():
    """A kernel some real rule fixes safely, and what --fix makes of it (None until one lands)."""
    from pypto_ast.analysis.registry import RULES
    from pypto_ast.settings import Settings
    from pypto_ast.transforms.fixer import fix_text

    for rule in RULES:
        for case in rule.INVALID:
            if case.fixed is not None and not case.unsafe and not case.settings:
                outcome = fix_text(case.code, "kernel.py", Settings(), unsafe=False)
                if outcome.text != case.code:
                    return case.code, outcome.text
    return None


def test_hooks_report_then_fix(hook_repo, project, env):
    bad = commit(project, env, "broken.py", "def kernel(x, y)\n    y[:] = x + 1\n")
    good = commit(project, env, "ok.py", "x = 1\n")

    run = try_repo(hook_repo, "pypto-lint", project, env, "ok.py")
    assert run.returncode == 0, run.stdout + run.stderr

    run = try_repo(hook_repo, "pypto-lint", project, env, "broken.py", "ok.py")
    assert run.returncode != 0
    assert "broken.py:1:17" in run.stdout and "PTO000" in run.stdout, run.stdout
    assert bad.read_text() == "def kernel(x, y)\n    y[:] = x + 1\n"

    case = _fixable_case()
    if case is None:
        pytest.skip("no real rule with a safe fix is registered yet; the report hook passed")
    source, fixed = case
    kernel = commit(project, env, "kernel.py", source)
    run = try_repo(hook_repo, "pypto-lint-fix", project, env, "kernel.py")
    assert run.returncode != 0  # --exit-non-zero-on-fix: the commit stops for review
    assert kernel.read_text() == fixed
    assert good.read_text() == "x = 1\n"
