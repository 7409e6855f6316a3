"""The installed ``pypto-lint`` script in a real process: exit codes, streams, colour, imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

PRINT_IN_LOOP = textwrap.dedent(
    """\
    import pypto


    @pypto.frontend.jit
    def k(a: pypto.Tensor((8, 8), pypto.DT_FP32)):
        for i in pypto.loop(4, name="L", idx_name="i"):
            print("i =", i)
    """
)


def test_version(tmp_path, run_exe):
    from pypto_ast import __version__

    proc = run_exe(["--version"], cwd=tmp_path)
    assert (proc.returncode, proc.stdout.decode()) == (0, f"pypto-lint {__version__}\n")


def test_syntax_error_file_exits_2(tmp_path, run_exe):
    (tmp_path / "bad.py").write_text("def f(:\n    pass\n")
    proc = run_exe(["bad.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout.decode() == (
        "error[PTO000] syntax error: invalid syntax\n"
        " --> bad.py:1:7\n"
        "  |\n"
        "1 | def f(:\n"
        "  |       ^\n"
        "\n"
    )
    assert "no input could be parsed" in proc.stderr.decode()


@pytest.mark.parametrize("fmt", ["concise", "json", "json-lines", "github", "sarif"])
def test_every_format_on_a_syntax_error(tmp_path, fmt, run_exe):
    (tmp_path / "bad.py").write_text("x = (\n")
    proc = run_exe(["--output-format", fmt, "bad.py"], cwd=tmp_path)
    out = proc.stdout.decode()
    assert proc.returncode == 2
    if fmt == "concise":
        assert out.startswith("bad.py:1:5: PTO000 syntax error:")
    elif fmt == "json":
        assert [d["code"] for d in json.loads(out)] == ["PTO000"]
    elif fmt == "json-lines":
        assert json.loads(out)["location"] == {"row": 1, "column": 5}
    elif fmt == "github":
        assert out.startswith("::error title=pypto-lint (PTO000),file=bad.py,line=1,col=5,")
    else:
        assert json.loads(out)["runs"][0]["results"][0]["ruleId"] == "PTO000"


def test_missing_path_exits_2(tmp_path, run_exe):
    proc = run_exe(["missing.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert b"missing.py: no such file or directory" in proc.stderr


def test_bad_config_exits_2(tmp_path, run_exe):
    (tmp_path / "pyproject.toml").write_text("[tool.pypto-lint]\nselect = 'PTO001'\n")
    (tmp_path / "k.py").write_text("x = 1\n")
    proc = run_exe(["k.py"], cwd=tmp_path)
    assert proc.returncode == 2
    assert b"pyproject.toml: key 'select'" in proc.stderr


def test_rules_and_rule(tmp_path, run_exe):
    proc = run_exe(["rules"], cwd=tmp_path)
    assert proc.returncode == 0 and b"PTO000" in proc.stdout
    proc = run_exe(["rule", "PTO000"], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith(b"# syntax-error (PTO000)")
    assert run_exe(["rule", "PTO998"], cwd=tmp_path).returncode == 2


def test_real_rule_finding_exits_1(tmp_path, run_exe, require_rule):
    require_rule("PTO007")
    (tmp_path / "k.py").write_text(PRINT_IN_LOOP)
    proc = run_exe(["--output-format", "concise", "k.py"], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.decode().startswith("k.py:7:9: PTO007 ")
    assert run_exe(["--exit-zero", "k.py"], cwd=tmp_path).returncode == 0
    assert run_exe(["--ignore", "PTO007", "k.py"], cwd=tmp_path).returncode == 0


def test_real_clean_file_exits_0(tmp_path, run_exe, require_rule):
    require_rule("PTO007")
    (tmp_path / "k.py").write_text("x = 1\n")
    proc = run_exe(["k.py"], cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"All checks passed!\n")


def test_fix_in_subprocess_with_toy_rules(tmp_path, run_exe):
    f = tmp_path / "k.py"
    f.write_text("x = BAD\ny = UGLY\n")
    proc = run_exe(["--fix", "k.py"], cwd=tmp_path, toy=True)
    assert proc.returncode == 1
    assert f.read_text() == "x = GOOD\ny = UGLY\n"
    assert b"Found 2 errors (1 fixed, 1 remaining)." in proc.stderr


def test_stdin_fix_in_subprocess(tmp_path, run_exe):
    proc = run_exe(["--fix", "-"], cwd=tmp_path, input=b"x = BAD\n", toy=True)
    assert (proc.returncode, proc.stdout) == (0, b"x = GOOD\n")


def test_many_files_in_subprocess_pool(tmp_path, run_exe):
    for i in range(30):
        (tmp_path / f"m{i:02}.py").write_text("x = UGLY\n")
    proc = run_exe(["--output-format", "concise", "."], cwd=tmp_path, toy=True)
    assert proc.returncode == 1
    assert proc.stdout.decode().splitlines() == [f"m{i:02}.py:1:5: PTO903 `UGLY` found" for i in range(30)]


def _run_on_pty(args, cwd, env):
    """Run with stdout on a pseudo-terminal, so the CLI sees a TTY."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, cwd=cwd, stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO once the child has closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode()


def test_colour_only_on_tty_without_no_color(tmp_path, run_exe, exe):
    (tmp_path / "bad.py").write_text("x = (\n")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    coloured = _run_on_pty([exe, "bad.py"], tmp_path, env)
    assert "\x1b[1;31merror[PTO000]" in coloured
    plain = _run_on_pty([exe, "bad.py"], tmp_path, {**env, "NO_COLOR": "1"})
    assert "error[PTO000]" in plain and "\x1b[" not in plain
    piped = run_exe(["bad.py"], cwd=tmp_path)
    assert b"\x1b[" not in piped.stdout


# -- start-up cost ---------------------------------------------------------------------------
def _fresh(code: str, cwd) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    (last,) = [line for line in proc.stdout.splitlines() if line.startswith("LOADED:")]
    return last.split()[1:]


def test_lint_path_imports_neither_torch_nor_numpy(tmp_path):
    (tmp_path / "k.py").write_text(PRINT_IN_LOOP)
    (tmp_path / "bad.py").write_text("x = (\n")
    loaded = _fresh(
        "import sys\n"
        "from pypto_ast.cli.lint import main\n"
        "for args in (['k.py', 'bad.py'], ['--fix', 'k.py'], ['--output-format', 'sarif', 'k.py'], ['rules']):\n"
        "    main(args, standalone_mode=False)\n"
        "print('LOADED:', *[m for m in ('torch', 'numpy', 'pypto', 'pypto_ast.analysis.engine') if m in sys.modules])\n",
        tmp_path,
    )
    assert loaded == ["pypto_ast.analysis.engine"]  # the lint path ran, and pulled in none of them


def test_version_does_not_import_libcst(tmp_path):
    loaded = _fresh(
        "import sys\n"
        "from pypto_ast.cli.lint import main\n"
        "main(['--version'], standalone_mode=False)\n"
        "print('LOADED:', *[m for m in sys.modules if m.split('.')[0] in ('libcst', 'torch', 'numpy')])\n",
        tmp_path,
    )
    assert loaded == []
