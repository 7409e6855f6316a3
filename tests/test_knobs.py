"""docs/knobs.md and pypto_ast/knobs.py describe the same knobs, and each knob reads its variable."""

import ast
import re
from pathlib import Path

import pytest

from pypto_ast import knobs

ROOT = Path(__file__).resolve().parent.parent
ENV = re.compile(r"^PYPTO_AST_[A-Z_]+$")


def _code_knobs() -> dict[str, tuple[str, str]]:
    """{variable: (attribute, docstring)} from the assignments in ``knobs.reload``."""
    tree = ast.parse((ROOT / "pypto_ast" / "knobs.py").read_text())
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "reload").body
    found = {}
    for stmt, after in zip(body, body[1:] + [None]):
        if not isinstance(stmt, ast.Assign):
            continue
        env = [c.value for c in ast.walk(stmt.value) if isinstance(c, ast.Constant)
               and isinstance(c.value, str) and ENV.match(c.value)]
        assert len(env) == 1, ast.unparse(stmt)
        doc = after.value.value if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) else ""
        found[env[0]] = (stmt.targets[0].id, doc)
    return found


def _doc_knobs() -> dict[str, str]:
    """{variable: attribute} from the table in docs/knobs.md."""
    rows = re.findall(r"^\| `(PYPTO_AST_\w+)` \| `(\w+)` \|", (ROOT / "docs" / "knobs.md").read_text(), re.M)
    return dict(rows)


def test_docs_and_code_list_the_same_knobs():
    code, doc = _code_knobs(), _doc_knobs()
    assert code, "no knobs found in pypto_ast/knobs.py"
    assert {env: attr for env, (attr, _) in code.items()} == doc


def test_every_knob_has_a_docstring_and_attribute():
    for env, (attr, docstring) in _code_knobs().items():
        assert docstring.strip(), f"{attr} ({env}) has no docstring"
        assert hasattr(knobs, attr), attr


def test_knobs_read_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_AST_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYPTO_AST_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("PYPTO_AST_DUMP", "yes")
    monkeypatch.setenv("PYPTO_AST_BACKTRACE", "off")
    monkeypatch.setenv("PYPTO_AST_BACKEND", "HOST")
    monkeypatch.setenv("PYPTO_AST_CXX", "clang++")
    try:
        knobs.reload()
        assert knobs.cache_dir == tmp_path
        assert knobs.always_compile and knobs.dump and not knobs.backtrace
        assert knobs.backend == "host" and knobs.cxx == "clang++"
    finally:
        monkeypatch.undo()
        knobs.reload()


def test_defaults(monkeypatch):
    for env in _doc_knobs():
        monkeypatch.delenv(env, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    try:
        knobs.reload()
        assert knobs.cache_dir == Path("~/.cache/pypto-ast").expanduser()
        assert (knobs.always_compile, knobs.dump, knobs.backtrace) == (False, False, False)
        assert knobs.backend == "interp" and knobs.cxx == "g++"
    finally:
        monkeypatch.undo()
        knobs.reload()


def test_cache_dir_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("PYPTO_AST_CACHE_DIR", raising=False)
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        knobs.reload()
        assert knobs.cache_dir == tmp_path / "pypto-ast"
        monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # not absolute: ignored, as the XDG spec says
        knobs.reload()
        assert knobs.cache_dir == Path("~/.cache/pypto-ast").expanduser()
        monkeypatch.setenv("PYPTO_AST_CACHE_DIR", str(tmp_path / "mine"))  # the knob wins
        knobs.reload()
        assert knobs.cache_dir == tmp_path / "mine"
    finally:
        monkeypatch.undo()
        knobs.reload()


def test_auto_backend_is_accepted(monkeypatch):
    monkeypatch.setenv("PYPTO_AST_BACKEND", "auto")
    try:
        knobs.reload()
        assert knobs.backend == "auto"
    finally:
        monkeypatch.undo()
        knobs.reload()


def test_bad_backend_is_loud(monkeypatch):
    monkeypatch.setenv("PYPTO_AST_BACKEND", "gpu")
    try:
        with pytest.raises(knobs.KnobError, match="PYPTO_AST_BACKEND"):
            knobs.reload()
    finally:
        monkeypatch.undo()
        knobs.reload()
