"""The README runs: every Python block executes on the README's install, every command a shell block
shows exists (the entry point is installed, the script or file it names is in the repository), and the
pre-commit snippets name hooks this repository defines."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", README, re.M | re.S)
ENTRY_POINTS = ("pypto-lint", "pypto-transpile")
TOOLS = ("pip", "python", "python3", "pytest", "dot", "git", "apt", "pre-commit", "cd", "export", "source")


def blocks(language: str) -> list:
    return [text for lang, text in BLOCKS if lang == language]


def commands() -> list:
    """Each shell command of the bash blocks (``&&`` / ``|`` / ``;`` split, comments and env assignments dropped)."""
    out = []
    for text in blocks("bash"):
        for line in text.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if not line or line.startswith("#"):
                continue
            for part in re.split(r"&&|\|\||;| \| ", line):  # `a|b` inside an option is an alternative
                words = shlex.split(part.strip().replace("[", "").replace("]", ""), posix=True) if part.strip() else []
                while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                    words = words[1:]
                if words:
                    out.append(words)
    return out


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_blocks_run(tmp_path, index):
    pytest.importorskip("torch")
    text = blocks("python")[index]
    script = tmp_path / "readme_block.py"  # a file: @pypto_ast.jit reads the kernel's source
    script.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, f"README python block {index}:\n{text}\n{done.stderr}"


def test_shell_commands_exist():
    assert len(commands()) >= 10
    for words in commands():
        tool = words[0]
        if tool in ENTRY_POINTS:
            assert shutil.which(tool), f"{tool} is not installed (pip install -e .)"
            if words[1:2] == ["doctor"]:
                continue
            files = [w for w in words[1:] if w.endswith(".py") and not w.startswith("-")]
            for name in files:
                if not name.startswith(("path/", "pypto/", "PATH")) and "/" in name:
                    assert (ROOT / name).exists(), f"README: `{' '.join(words)}` names {name}, which does not exist"
        elif tool in ("python", "python3") and len(words) > 1:
            if words[1] == "-m":
                module = words[2]
                assert module in ("pytest", "pip", "pypto_ast.dropin", "pypto_ast.cli.transpile", "pypto_ast.cli.lint"), \
                    f"README runs an unknown module: {' '.join(words)}"
            elif words[1].endswith(".py"):
                assert (ROOT / words[1]).exists(), f"README: `{' '.join(words)}`: {words[1]} does not exist"
        else:
            assert tool in TOOLS, f"README shows a command this test does not know: {' '.join(words)}"


def test_pre_commit_snippets_name_our_hooks():
    hooks = set(re.findall(r"^- id: (\S+)", (ROOT / ".pre-commit-hooks.yaml").read_text(), re.M))
    named = set(re.findall(r"id: (\S+)", "\n".join(blocks("yaml"))))
    assert named and named <= hooks | {"pypto-lint"}, named - hooks
    assert "v0.1.0" not in "\n".join(blocks("yaml"))  # no tag of this repository names a release
