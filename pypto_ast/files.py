"""Which files to lint, and writing fixes back without ever losing a user's edit.

Discovery: paths named on the command line are taken as given (ruff's rule: naming a file
is a request to lint it, whatever its suffix or folder, unless ``force_exclude``);
directories are walked for ``*.py``/``*.pyi`` in sorted order, pruning excluded entries
below them and virtualenvs.

Writing: ``write_atomic`` never leaves a half-written file (temp file + fsync +
``os.replace``) and refuses to overwrite a file that changed after we read it, because an
editor or a second hook may have saved it in the meantime.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from .config import display_path
from .settings import Settings

PY_SUFFIXES = (".py", ".pyi")


class PathError(Exception):
    """A path on the command line does not exist."""


class StaleFileError(OSError):
    """The file on disk is no longer what was linted; it was left alone."""


@dataclass(frozen=True)
class Excluder:
    """Exclude globs: plain names match a path component, globs with ``/`` match the path
    relative to ``root`` (the config's directory) or to the directory being walked."""

    patterns: tuple[str, ...]
    root: Path

    def name_excluded(self, name: str) -> bool:
        return any(fnmatch.fnmatch(name, p.rstrip("/")) for p in self.patterns if "/" not in p.rstrip("/"))

    def excluded(self, path: Path, walk_root: Path | None = None) -> bool:
        """One directory entry met while walking: its own name, or an anchored glob."""
        if self.name_excluded(path.name):
            return True
        anchored = [p.rstrip("/") for p in self.patterns if "/" in p.rstrip("/")]
        for base in filter(None, (self.root, walk_root)):
            rel = _relative(path, base)
            if rel and any(fnmatch.fnmatch(rel, p) for p in anchored):
                return True
        return False

    def force_excluded(self, path: Path) -> bool:
        """A file named on the command line: any of its components below ``root`` counts."""
        rel = _relative(path, self.root)
        parents = rel.split("/")[:-1] if rel else []
        return any(self.name_excluded(part) for part in parents) or self.excluded(path)


def _relative(path: Path, base: Path) -> str | None:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return None


def is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()


def discover(
    paths: Sequence[str],
    settings: Settings,
    *,
    root: Path,
    cwd: Path | None = None,
    force_exclude: bool = False,
) -> list[str]:
    """Display paths (see ``config.display_path``) of every file to lint, sorted, unique."""
    here = Path(os.path.abspath(cwd or os.getcwd()))
    excluder = Excluder(tuple(settings.exclude) + tuple(settings.extend_exclude), root)
    found: dict[str, str] = {}  # real path -> display path
    for given in paths:
        target = Path(os.path.abspath(Path(here, given)))
        if not os.path.lexists(target):
            raise PathError(f"{given}: no such file or directory")
        if target.is_dir():
            files: Iterable[Path] = _walk(target, excluder)
        elif force_exclude and excluder.force_excluded(target):
            files = ()
        else:
            files = (target,)
        for file in files:
            found.setdefault(os.path.realpath(file), display_path(file, here))
    return sorted(set(found.values()))


def _walk(top: Path, excluder: Excluder) -> Iterable[Path]:
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not excluder.excluded(here / d, top) and not is_virtualenv(here / d)
        )
        for name in sorted(filenames):
            if name.endswith(PY_SUFFIXES) and not excluder.excluded(here / name, top):
                yield here / name


# -- writing -------------------------------------------------------------------------------
_LONE_LF = re.compile(r"(?<!\r)\n")


def encode_text(text: str, encoding: str, original: bytes) -> bytes:
    """Encode fixed text like the file it came from: same codec (a ``utf-8-sig`` BOM comes
    back) and, when the file used CRLF throughout, CRLF for lines a fix inserted."""
    if b"\r\n" in original and original.count(b"\n") == original.count(b"\r\n"):
        text = _LONE_LF.sub("\r\n", text)
    return text.encode(encoding)


def write_atomic(path: str | os.PathLike, new_bytes: bytes, expected_old_bytes: bytes) -> None:
    """Replace ``path`` by ``new_bytes`` atomically, keeping its mode, unless it no longer
    holds ``expected_old_bytes`` (then raise StaleFileError and leave it untouched).

    A symlink is followed, so the link stays a link and its target is updated.
    """
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    info = os.stat(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".pypto-lint.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(new_bytes)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(info.st_mode))  # mkstemp made it 0600
        with open(target, "rb") as fh:
            current = fh.read()
        if current != expected_old_bytes:
            raise StaleFileError(f"{path}: file changed since it was read, not written")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)


def _fsync_dir(folder: str) -> None:
    """Make the rename itself durable; not possible (nor needed) everywhere."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
