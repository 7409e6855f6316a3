"""The CLI over the real rules: a known PTO001 finding, its rendering and its fix."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.usefixtures("real_rules")


@pytest.fixture
def rebind(workdir):
    """PTO001's first INVALID case (with its expected fix) as ``k.py``."""
    from pypto_ast.analysis.registry import BY_CODE

    case = next(c for c in BY_CODE["PTO001"].INVALID if c.fixed and not c.unsafe and not c.settings)
    path = workdir / "k.py"
    path.write_text(case.code)
    return path, case


def test_full_output(cli, rebind):
    path, case = rebind
    run = cli("k.py")
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith("error[PTO001] ")
    assert lines[1] == f" --> k.py:{case.line}:{case.col}"
    source_line = case.code.splitlines()[case.line - 1]
    assert lines[3] == f"{case.line} | {source_line}"
    assert lines[4].lstrip(" |").startswith("^") and len(lines[4]) - len(lines[4].lstrip(" |^")) > 4
    assert any(line.startswith("help: ") for line in lines)
    assert "[*] 1 fixable with --fix." in run.stderr


def test_json_has_the_fix(cli, rebind):
    (data,) = [d for d in json.loads(cli("--output-format", "json", "k.py").stdout) if d["code"] == "PTO001"]
    assert data["fix"]["applicability"] == "safe" and data["fix"]["edits"]
    assert data["url"] == "docs/rules.md#pto001"


def test_fix_writes_expected_source(cli, rebind):
    path, case = rebind
    run = cli("--fix", "--select", "PTO001", "k.py")
    assert run.exit_code == 0, run.stdout
    assert path.read_text() == case.fixed
    assert "(1 fixed, 0 remaining)" in run.stderr


def test_diff_then_fix_agree(cli, rebind):
    path, case = rebind
    diff = cli("--diff", "--select", "PTO001", "k.py")
    assert diff.exit_code == 1 and path.read_text() == case.code
    assert "-" + case.code.splitlines()[case.line - 1] in diff.stdout.splitlines()
    cli("--fix", "--select", "PTO001", "k.py")
    assert cli("--diff", "--select", "PTO001", "k.py").stdout == ""


def test_noqa_and_ignore(cli, rebind):
    path, case = rebind
    assert cli("--ignore", "PTO001", "--select", "PTO001", "k.py").exit_code == 0
    lines = case.code.splitlines(True)
    lines[case.line - 1] = lines[case.line - 1].rstrip("\n") + "  # noqa: PTO001\n"
    path.write_text("".join(lines))
    assert cli("--select", "PTO001", "k.py").exit_code == 0


def test_stdin_fix(cli, rebind):
    path, case = rebind
    run = cli("--fix", "--select", "PTO001", "--stdin-filename", "k.py", input=case.code)
    assert (run.exit_code, run.stdout) == (0, case.fixed)


def test_sarif_lists_real_rules(cli, rebind):
    from pypto_ast.analysis.registry import RULES

    doc = json.loads(cli("--output-format", "sarif", "k.py").stdout)
    ids = [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
    assert ids[: len(RULES)] == [r.code for r in RULES]
    pto001 = doc["runs"][0]["tool"]["driver"]["rules"][ids.index("PTO001")]
    assert pto001["fullDescription"]["text"].startswith("## What it does")
