"""Docs that are generated from code stay in step with it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_rules_page_is_current():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "document_rules.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_readme_lists_every_rule():
    from pypto_ast.analysis.registry import RULES

    readme = (ROOT / "README.md").read_text()
    for rule in RULES:
        assert rule.code in readme and rule.name in readme, rule.code


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = "python -m pytest -q -n auto"
    assert command in readme and ci.rstrip().splitlines()[-1] == command
