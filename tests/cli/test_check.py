"""Every option and exit code of ``pypto-lint`` (the default ``check`` command), in-process.

The toy rules (see toy_rules.py) give known diagnostics and fixes through the real engine
and fixer, so these tests pin CLI behaviour independently of the real rule set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("toys")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- exit codes and summaries ---------------------------------------------------------------
def test_clean_file_exits_0(cli, workdir):
    write(workdir / "ok.py", "x = 1\n")
    run = cli("ok.py")
    assert (run.exit_code, run.stdout) == (0, "")
    assert "All checks passed!" in run.stderr


def test_diagnostic_exits_1_full_format(cli, workdir):
    write(workdir / "a.py", "x = BAD\n")
    run = cli("a.py")
    assert run.exit_code == 1
    assert run.stdout == (
        "error[PTO901] `BAD` found\n"
        " --> a.py:1:5\n"
        "  |\n"
        "1 | x = BAD\n"
        "  |     ^^^\n"
        "help: replace with `GOOD`\n"
        "\n"
    )
    assert "Found 1 error." in run.stderr
    assert "[*] 1 fixable with --fix." in run.stderr


def test_default_path_is_cwd(cli, workdir):
    write(workdir / "pkg" / "a.py", "x = UGLY\n")
    run = cli()
    assert run.exit_code == 1
    assert "pkg/a.py:1:5" in run.stdout


def test_exit_zero(cli, workdir):
    write(workdir / "a.py", "x = UGLY\n")
    assert cli("--exit-zero", "a.py").exit_code == 0


def test_quiet_drops_summary_keeps_diagnostics(cli, workdir):
    write(workdir / "a.py", "x = UGLY\n")
    run = cli("-q", "--output-format", "concise", "a.py")
    assert run.exit_code == 1
    assert run.stdout == "a.py:1:5: PTO903 `UGLY` found\n"
    assert run.stderr == ""


def test_missing_path_exits_2(cli, workdir):
    run = cli("nope.py")
    assert run.exit_code == 2
    assert "nope.py: no such file or directory" in run.stderr


def test_unknown_option_exits_2(cli, workdir):
    assert cli("--no-such-flag").exit_code == 2


def test_all_inputs_unparsable_exits_2(cli, workdir):
    write(workdir / "a.py", "def f(:\n")
    write(workdir / "b.py", "x = (\n")
    run = cli("--output-format", "concise", "a.py", "b.py")
    assert run.exit_code == 2
    assert "a.py:1:7: PTO000" in run.stdout
    assert "no input could be parsed" in run.stderr


def test_one_unparsable_among_others_exits_1(cli, workdir):
    write(workdir / "a.py", "def f(:\n")
    write(workdir / "b.py", "x = 1\n")
    run = cli("a.py", "b.py")
    assert run.exit_code == 1
    assert "error[PTO000]" in run.stdout


def test_unparsable_is_2_even_with_exit_zero(cli, workdir):
    write(workdir / "a.py", "def f(:\n")
    assert cli("--exit-zero", "a.py").exit_code == 2


def test_internal_error_exits_2_as_bug(cli, workdir):
    write(workdir / "a.py", "CRASH = 1\nx = UGLY\n")
    write(workdir / "b.py", "x = 1\n")
    run = cli("--exit-zero", "a.py", "b.py")
    assert run.exit_code == 2
    assert "bug[PTO999]" in run.stdout
    assert "please report" in run.stdout
    assert "error[PTO903]" in run.stdout  # other rules' findings are still shown
    assert "RuntimeError: toy rule crashed on purpose" in run.stderr


def test_no_files_found_warns_exits_0(cli, workdir):
    (workdir / "empty").mkdir()
    run = cli("empty")
    assert run.exit_code == 0
    assert "no Python files found" in run.stderr


def test_version(cli):
    from pypto_ast import __version__

    for args in (["--version"], ["check", "--version"], ["-q", "--version"]):
        run = cli(*args)
        assert (run.exit_code, run.stdout) == (0, f"pypto-lint {__version__}\n")


def test_help_shows_check_options_and_commands(cli):
    run = cli("--help")
    assert run.exit_code == 0
    assert "--output-format" in run.stdout
    assert "pypto-lint rules" in run.stdout


def test_explicit_check_subcommand(cli, workdir):
    write(workdir / "a.py", "x = UGLY\n")
    assert cli("check", "a.py").exit_code == 1


# -- selection -----------------------------------------------------------------------------
TWO = "x = BAD\ny = UGLY\n"


def codes(run) -> list[str]:
    return [line.split()[1] for line in run.stdout.splitlines()]


def test_select_replaces(cli, workdir):
    write(workdir / "a.py", TWO)
    run = cli("--output-format", "concise", "--select", "PTO903", "a.py")
    assert codes(run) == ["PTO903"]


def test_select_comma_separated_and_repeatable(cli, workdir):
    write(workdir / "a.py", TWO)
    assert codes(cli("--output-format", "concise", "--select", "PTO901,PTO903", "a.py")) == ["PTO901", "PTO903"]
    assert codes(cli("--output-format", "concise", "--select", "PTO901", "--select", "pto903", "a.py")) == [
        "PTO901", "PTO903",
    ]


def test_ignore_adds(cli, workdir):
    write(workdir / "a.py", TWO)
    assert codes(cli("--output-format", "concise", "--ignore", "PTO901", "a.py")) == ["PTO903"]


def test_extend_select_adds(cli, workdir):
    write(workdir / "a.py", TWO)
    run = cli("--output-format", "concise", "--select", "PTO000", "--extend-select", "PTO903", "a.py")
    assert codes(run) == ["PTO903"]


def test_invalid_code_is_usage_error(cli, workdir):
    write(workdir / "a.py", TWO)
    run = cli("--select", "E501", "a.py")
    assert run.exit_code == 2
    assert "E501" in run.stderr


# -- output formats ------------------------------------------------------------------------
def test_concise(cli, workdir):
    write(workdir / "a.py", TWO)
    run = cli("--output-format", "concise", "a.py")
    assert run.stdout == "a.py:1:5: PTO901 `BAD` found\na.py:2:5: PTO903 `UGLY` found\n"


def test_json(cli, workdir):
    write(workdir / "a.py", TWO)
    run = cli("--output-format", "json", "a.py")
    data = json.loads(run.stdout)
    assert data[0] == {
        "code": "PTO901",
        "name": "toy-bad",
        "message": "`BAD` found",
        "filename": "a.py",
        "location": {"row": 1, "column": 5},
        "end_location": {"row": 1, "column": 8},
        "fix": {
            "applicability": "safe",
            "message": "replace with `GOOD`",
            "edits": [
                {"content": "GOOD", "location": {"row": 1, "column": 5}, "end_location": {"row": 1, "column": 8}}
            ],
        },
        "url": "docs/rules.md#pto901",
        "severity": "error",
        "help": None,
    }
    assert data[1]["fix"] is None


def test_json_empty(cli, workdir):
    write(workdir / "a.py", "x = 1\n")
    run = cli("--output-format", "json", "a.py")
    assert (run.exit_code, json.loads(run.stdout)) == (0, [])


def test_json_lines(cli, workdir):
    write(workdir / "a.py", TWO)
    lines = cli("--output-format", "json-lines", "a.py").stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["PTO901", "PTO903"]


def test_github(cli, workdir):
    write(workdir / "a.py", TWO)
    run = cli("--output-format", "github", "a.py")
    assert run.stdout.splitlines()[0] == (
        "::error title=pypto-lint (PTO901),file=a.py,line=1,col=5,endLine=1,endColumn=8::PTO901 `BAD` found"
    )


def test_sarif(cli, workdir):
    write(workdir / "a.py", TWO)
    doc = json.loads(cli("--output-format", "sarif", "a.py").stdout)
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "pypto-lint"
    rules = {r["id"]: r for r in driver["rules"]}
    assert rules["PTO901"]["shortDescription"]["text"] == "BAD is bad"
    assert rules["PTO901"]["fullDescription"]["text"] == "Flags BAD; the safe fix writes GOOD."
    first = run["results"][0]
    assert first["ruleId"] == "PTO901"
    assert driver["rules"][first["ruleIndex"]]["id"] == "PTO901"
    assert first["level"] == "error"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "a.py"},
        "region": {"startLine": 1, "startColumn": 5, "endLine": 1, "endColumn": 8},
    }


def test_statistics(cli, workdir):
    write(workdir / "a.py", "x = BAD\ny = BAD\nz = UGLY\n")
    run = cli("--statistics", "a.py")
    assert run.exit_code == 1
    assert run.stdout.splitlines() == ["2  PTO901  toy-bad   2 fixable", "1  PTO903  toy-ugly"]


def test_statistics_json(cli, workdir):
    write(workdir / "a.py", "x = BAD\ny = UGLY\n")
    data = json.loads(cli("--statistics", "--output-format", "json", "a.py").stdout)
    assert data == [
        {"code": "PTO901", "name": "toy-bad", "count": 1, "fixable": 1},
        {"code": "PTO903", "name": "toy-ugly", "count": 1, "fixable": 0},
    ]


def test_no_colour_when_not_a_tty(cli, workdir):
    write(workdir / "a.py", TWO)
    assert "\x1b[" not in cli("a.py").stdout


# -- fixing --------------------------------------------------------------------------------
def test_fix_all_fixed_exits_0(cli, workdir):
    f = write(workdir / "a.py", "x = BAD\n")
    run = cli("--fix", "a.py")
    assert run.exit_code == 0
    assert f.read_text() == "x = GOOD\n"
    assert run.stdout == ""
    assert "Found 1 error (1 fixed, 0 remaining)." in run.stderr


def test_fix_with_remaining_exits_1(cli, workdir):
    f = write(workdir / "a.py", TWO)
    run = cli("--fix", "--output-format", "concise", "a.py")
    assert run.exit_code == 1
    assert f.read_text() == "x = GOOD\ny = UGLY\n"
    assert run.stdout == "a.py:2:5: PTO903 `UGLY` found\n"
    assert "Found 2 errors (1 fixed, 1 remaining)." in run.stderr


def test_exit_non_zero_on_fix(cli, workdir):
    write(workdir / "a.py", "x = BAD\n")
    assert cli("--fix", "--exit-non-zero-on-fix", "a.py").exit_code == 1
    # nothing left to fix: back to 0
    assert cli("--fix", "--exit-non-zero-on-fix", "a.py").exit_code == 0


def test_unsafe_fixes_need_the_flag(cli, workdir):
    f = write(workdir / "a.py", "x = RISKY\n")
    run = cli("--fix", "a.py")
    assert run.exit_code == 1
    assert f.read_text() == "x = RISKY\n"
    assert "(1 more fixable with --fix --unsafe-fixes.)" in run.stderr
    run = cli("--fix", "--unsafe-fixes", "a.py")
    assert run.exit_code == 0
    assert f.read_text() == "x = CAREFUL\n"


def test_unsafe_fixes_from_config_and_no_flag(cli, workdir):
    (workdir / "pyproject.toml").write_text("[tool.pypto-lint]\nunsafe-fixes = true\n")
    f = write(workdir / "a.py", "x = RISKY\n")
    assert cli("--fix", "--no-unsafe-fixes", "a.py").exit_code == 1
    assert f.read_text() == "x = RISKY\n"
    assert cli("--fix", "a.py").exit_code == 0
    assert f.read_text() == "x = CAREFUL\n"


def test_fix_keeps_crlf_and_encoding(cli, workdir):
    f = workdir / "a.py"
    f.write_bytes("# -*- coding: latin-1 -*-\r\ns = 'caf\xe9'\r\nx = BAD\r\n".encode("latin-1"))
    assert cli("--fix", "a.py").exit_code == 0
    assert f.read_bytes() == "# -*- coding: latin-1 -*-\r\ns = 'caf\xe9'\r\nx = GOOD\r\n".encode("latin-1")


def test_fix_keeps_bom(cli, workdir):
    f = workdir / "a.py"
    f.write_bytes(b"\xef\xbb\xbfx = BAD\n")
    assert cli("--fix", "a.py").exit_code == 0
    assert f.read_bytes() == b"\xef\xbb\xbfx = GOOD\n"


def test_fix_keeps_mode_bits(cli, workdir):
    f = write(workdir / "a.py", "x = BAD\n")
    os.chmod(f, 0o751)
    assert cli("--fix", "a.py").exit_code == 0
    assert f.read_text() == "x = GOOD\n"
    assert f.stat().st_mode & 0o7777 == 0o751


def test_fix_leaves_file_changed_meanwhile(cli, workdir, monkeypatch):
    """Another writer saves the file between our read and our rename: theirs wins."""
    from pypto_ast.cli import runner
    from pypto_ast.files import write_atomic

    f = write(workdir / "a.py", "x = BAD\n")

    def racing_write(path, new_bytes, expected_old_bytes):
        Path(path).write_text("x = BAD  # edited meanwhile\n")
        return write_atomic(path, new_bytes, expected_old_bytes)

    monkeypatch.setattr(runner, "write_atomic", racing_write)
    run = cli("--fix", "a.py")
    assert f.read_text() == "x = BAD  # edited meanwhile\n"
    assert "file changed since it was read, not written" in run.stderr
    assert run.exit_code == 1  # the original diagnostic still stands
    assert "error[PTO901]" in run.stdout
    assert [p.name for p in workdir.iterdir() if p.name.startswith(".a.py")] == []


def test_diff_prints_and_writes_nothing(cli, workdir):
    f = write(workdir / "a.py", TWO)
    run = cli("--diff", "a.py")
    assert run.exit_code == 1
    assert f.read_text() == TWO
    assert run.stdout == "--- a.py\n+++ a.py\n@@ -1,2 +1,2 @@\n-x = BAD\n+x = GOOD\n y = UGLY\n"
    assert "Would fix 1 error." in run.stderr


def test_diff_without_fixes_exits_0(cli, workdir):
    write(workdir / "a.py", "x = UGLY\n")
    run = cli("--diff", "a.py")
    assert (run.exit_code, run.stdout) == (0, "")
    assert "No errors would be fixed." in run.stderr


def test_fix_many_files_in_pool(cli, workdir):
    files = [write(workdir / f"m{i:02}.py", "x = BAD\ny = UGLY\n") for i in range(40)]
    run = cli("--fix", "--output-format", "concise", ".")
    assert run.exit_code == 1
    assert all(f.read_text() == "x = GOOD\ny = UGLY\n" for f in files)
    assert run.stdout.splitlines() == [f"m{i:02}.py:2:5: PTO903 `UGLY` found" for i in range(40)]
    assert "Found 80 errors (40 fixed, 40 remaining)." in run.stderr


def test_pool_matches_sequential(workdir, monkeypatch):
    from pypto_ast.cli import runner
    from pypto_ast.settings import Settings

    paths = [str(write(workdir / f"m{i:02}.py", "x = BAD\n" if i % 3 else "def f(:\n").name) for i in range(30)]
    import multiprocessing

    contexts = []
    real_get_context = multiprocessing.get_context

    def spy(method):
        contexts.append(method)
        return real_get_context(method)

    monkeypatch.setattr(multiprocessing, "get_context", spy)
    pooled = runner.lint_paths(paths, Settings(), runner.Mode(), jobs=2)
    assert contexts == ["fork"]
    monkeypatch.setattr(runner, "POOL_THRESHOLD", 10_000)
    serial = runner.lint_paths(paths, Settings(), runner.Mode(), jobs=2)
    assert contexts == ["fork"]
    assert pooled == serial
    assert sum(1 for r in serial if not r.result.parsed) == 10


# -- stdin ---------------------------------------------------------------------------------
def test_stdin(cli, workdir):
    run = cli("--output-format", "concise", "-", input="x = BAD\n")
    assert run.exit_code == 1
    assert run.stdout == "-:1:5: PTO901 `BAD` found\n"


def test_stdin_filename(cli, workdir):
    run = cli("--output-format", "concise", "--stdin-filename", "pkg/k.py", input="x = UGLY\n")
    assert run.stdout == "pkg/k.py:1:5: PTO903 `UGLY` found\n"


def test_stdin_fix_writes_source_to_stdout(cli, workdir):
    run = cli("--fix", "--output-format", "concise", "-", input="x = BAD\ny = UGLY\n")
    assert run.exit_code == 1
    assert run.stdout == "x = GOOD\ny = UGLY\n"
    assert "-:2:5: PTO903 `UGLY` found" in run.stderr


def test_stdin_fix_unchanged_echoes_input(cli, workdir):
    run = cli("--fix", "-", input="def f(:\n")
    assert run.stdout == "def f(:\n"
    assert run.exit_code == 2


def test_stdin_diff(cli, workdir):
    run = cli("--diff", "--stdin-filename", "k.py", "-", input="x = BAD\n")
    assert run.exit_code == 1
    assert run.stdout == "--- k.py\n+++ k.py\n@@ -1 +1 @@\n-x = BAD\n+x = GOOD\n"


def test_stdin_mixed_with_paths_is_usage_error(cli, workdir):
    write(workdir / "a.py", "x = 1\n")
    assert cli("-", "a.py", input="x = 1\n").exit_code == 2


# -- rules / rule --------------------------------------------------------------------------
def test_rules_table(cli):
    run = cli("rules")
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["code", "name", "fix", "summary"]
    toy = next(line for line in lines if line.startswith("PTO901"))
    assert toy.split()[:3] == ["PTO901", "toy-bad", "safe"]
    assert toy.endswith("BAD is bad")


def test_rule_docs(cli):
    run = cli("rule", "pto901")
    assert run.exit_code == 0
    assert run.stdout.startswith("# toy-bad (PTO901)\n")
    assert "Flags BAD; the safe fix writes GOOD." in run.stdout
    assert cli("rule", "toy-bad").stdout == run.stdout


def test_rule_unknown_exits_2(cli):
    run = cli("rule", "PTO998")
    assert run.exit_code == 2
    assert "unknown rule" in run.stderr
