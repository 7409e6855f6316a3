"""File discovery and atomic writes."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from pypto_ast.files import PathError, StaleFileError, discover, encode_text, write_atomic
from pypto_ast.settings import Settings


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    touch(
        tmp_path,
        "b.py", "a.pyi", "notes.txt", "pkg/z.py", "pkg/sub/y.py",
        ".git/hooks/h.py", "venv/lib/v.py", "myenv/lib/e.py", "node_modules/n.py",
        "build/gen.py", "pkg/__pycache__/c.py", "gen/old_1.py", "gen/keep.py",
    )
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    return tmp_path


def test_walk_skips_vcs_venvs_and_defaults_sorted(tree):
    assert discover(["."], Settings(), root=tree) == [
        "a.pyi", "b.py", "gen/keep.py", "gen/old_1.py", "pkg/sub/y.py", "pkg/z.py",
    ]


def test_extend_exclude_names_and_anchored_paths(tree):
    s = Settings(extend_exclude=("old_*", "pkg/sub"))
    assert discover(["."], s, root=tree) == ["a.pyi", "b.py", "gen/keep.py", "pkg/z.py"]
    # relative to the walked directory as well
    assert discover(["pkg"], Settings(extend_exclude=("sub/*",)), root=tree) == ["pkg/z.py"]


def test_exclude_replaces_defaults(tree):
    found = discover(["."], Settings(exclude=("gen",)), root=tree)
    assert "build/gen.py" in found and "node_modules/n.py" in found
    assert "gen/keep.py" not in found
    assert "myenv/lib/e.py" not in found  # virtualenvs are skipped whatever the globs say
    assert ".git/hooks/h.py" in found  # .git was only a default glob


def test_explicit_files_are_taken_as_given(tree):
    assert discover(["notes.txt", "build/gen.py"], Settings(), root=tree) == ["build/gen.py", "notes.txt"]


def test_explicit_directory_inside_excluded_one_is_walked(tree):
    touch(tree, "build/sub/deep.py", "build/sub/.tox/t.py")
    assert discover(["build"], Settings(), root=tree) == ["build/gen.py", "build/sub/deep.py"]
    assert discover(["build/sub"], Settings(), root=tree) == ["build/sub/deep.py"]


def test_force_exclude_applies_to_explicit_files(tree):
    s = Settings(extend_exclude=("old_*",))
    found = discover(["build/gen.py", "gen/old_1.py", "b.py"], s, root=tree, force_exclude=True)
    assert found == ["b.py"]
    anchored = Settings(extend_exclude=("pkg/sub/*",))
    assert discover(["pkg/sub/y.py", "pkg/z.py"], anchored, root=tree, force_exclude=True) == ["pkg/z.py"]


def test_duplicates_and_absolute_paths(tree):
    found = discover(["b.py", str(tree / "b.py"), "./b.py"], Settings(), root=tree)
    assert found == ["b.py"]


def test_outside_cwd_paths_are_absolute(tree, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    touch(other, "o.py")
    assert discover([str(other)], Settings(), root=tree) == [(other / "o.py").as_posix()]


def test_missing_path(tree):
    with pytest.raises(PathError, match="nope: no such file or directory"):
        discover(["b.py", "nope"], Settings(), root=tree)


def test_symlink_loop_does_not_hang(tree):
    os.symlink(tree / "pkg", tree / "pkg" / "sub" / "loop")
    assert discover(["pkg"], Settings(), root=tree) == ["pkg/sub/y.py", "pkg/z.py"]


# -- writing -------------------------------------------------------------------------------
def test_write_atomic_replaces_and_keeps_mode(tmp_path):
    f = tmp_path / "k.py"
    f.write_bytes(b"old\n")
    os.chmod(f, 0o640)
    write_atomic(f, b"new\n", b"old\n")
    assert f.read_bytes() == b"new\n"
    assert f.stat().st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["k.py"]


def test_write_atomic_refuses_stale_file(tmp_path):
    f = tmp_path / "k.py"
    f.write_bytes(b"edited by someone else\n")
    with pytest.raises(StaleFileError, match="file changed since it was read, not written"):
        write_atomic(f, b"new\n", b"old\n")
    assert f.read_bytes() == b"edited by someone else\n"
    assert os.listdir(tmp_path) == ["k.py"]  # no temp file left behind


def test_write_atomic_follows_symlink(tmp_path):
    target = tmp_path / "real.py"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(link, b"new\n", b"old\n")
    assert link.is_symlink() and target.read_bytes() == b"new\n"


def test_write_atomic_failure_leaves_original(tmp_path, monkeypatch):
    f = tmp_path / "k.py"
    f.write_bytes(b"old\n")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(f, b"new\n", b"old\n")
    assert f.read_bytes() == b"old\n" and os.listdir(tmp_path) == ["k.py"]


@pytest.mark.parametrize(
    "text, encoding, original, expected",
    [
        ("a\nb\n", "utf-8", b"a\r\nc\r\n", b"a\r\nb\r\n"),  # CRLF file: inserted LF become CRLF
        ("a\nb\r\n", "utf-8", b"a\nc\r\n", b"a\nb\r\n"),  # mixed file: left as the fixer wrote it
        ("caf\xe9\n", "latin-1", b"", b"caf\xe9\n"),
        ("x\n", "utf-8-sig", b"\xef\xbb\xbfy\n", b"\xef\xbb\xbfx\n"),
    ],
)
def test_encode_text(text, encoding, original, expected):
    assert encode_text(text, encoding, original) == expected


def test_settings_stay_picklable_for_the_pool():
    import pickle

    s = dataclasses.replace(Settings(), extend_exclude=("x",))
    assert pickle.loads(pickle.dumps(s)) == s
