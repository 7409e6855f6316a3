"""Which files to lint, and writing fixes back without ever losing a user's edit.

Discovery: paths named on the command line are taken as given (ruff's rule: naming a file
is a request to lint it, whatever its suffix or folder, unless ``force_exclude``);
directories are walked for ``*.py``/``*.pyi`` in sorted order, pruning excluded entries
below them and virtualenvs.  A walk never leaves its directory: symlinked directories are
not entered, symlinked files are taken only when they resolve inside it, and dangling or
looping links and non-regular files are skipped with a warning.

Writing: ``write_atomic`` never leaves a half-written file (temp file + fsync +
``os.replace``) and refuses to overwrite a file that changed after we read it, because an
editor or a second hook may have saved it in the meantime.  It refuses read-only files, and
writes in place (keeping inode, owner, group and links) when a rename would change them.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .config import display_path
from .settings import Settings

PY_SUFFIXES = (".py", ".pyi")


class PathError(Exception):
    """A path on the command line does not exist."""


class StaleFileError(OSError):
    """The file on disk is no longer what was linted; it was left alone."""


class ReadOnlyFileError(OSError):
    """The file has no write permission; replacing it through its directory would defeat that."""


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
    warn: Callable[[str], None] | None = None,
) -> list[str]:
    """Display paths (see ``config.display_path``) of every file to lint, sorted, unique.

    ``warn`` gets one message per entry a walk skipped (bad symlink, not a regular file)."""
    here = Path(os.path.abspath(cwd or os.getcwd()))
    excluder = Excluder(tuple(settings.exclude) + tuple(settings.extend_exclude), root)
    found: dict[str, str] = {}  # real path -> display path

    def skip(path: Path, reason: str) -> None:
        if warn is not None:
            warn(f"{display_path(path, here)}: skipped: {reason}")

    for given in paths:
        target = Path(os.path.abspath(Path(here, given)))
        if not os.path.lexists(target):
            raise PathError(f"{given}: no such file or directory")
        if target.is_dir():
            files: Iterable[Path] = _walk(target, excluder, skip)
        elif force_exclude and excluder.force_excluded(target):
            files = ()
        else:
            files = (target,)
        for file in files:
            found.setdefault(os.path.realpath(file), display_path(file, here))
    return sorted(set(found.values()))


def _walk(top: Path, excluder: Excluder, skip: Callable[[Path, str], None]) -> Iterable[Path]:
    """os.walk does not enter symlinked directories; files are checked by ``_unsafe``."""
    real_top = os.path.realpath(top)
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not excluder.excluded(here / d, top) and not is_virtualenv(here / d)
        )
        for name in sorted(filenames):
            if name.endswith(PY_SUFFIXES) and not excluder.excluded(here / name, top):
                reason = _unsafe(here / name, real_top)
                if reason:
                    skip(here / name, reason)
                else:
                    yield here / name


def _unsafe(path: Path, real_top: str) -> str | None:
    """Why a walked entry must not be linted (and so never edited), or None.

    A symlink is taken only when it resolves inside the walked directory, so ``--fix`` on a
    tree never writes outside it; a FIFO or device would block or be clobbered."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "dangling symlink"
    except OSError as exc:
        return "symlink loop" if exc.errno == errno.ELOOP else f"cannot stat: {exc.strerror or exc}"
    if path.is_symlink():
        real = os.path.realpath(path)
        if os.path.commonpath([real, real_top]) != real_top:
            return f"symlink to a file outside {real_top}"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    return None


# -- writing -------------------------------------------------------------------------------
_LONE_LF = re.compile(r"(?<!\r)\n")


def encode_text(text: str, encoding: str, original: bytes) -> bytes:
    """Encode fixed text like the file it came from: same codec (a ``utf-8-sig`` BOM comes
    back) and, when the file used CRLF throughout, CRLF for lines a fix inserted."""
    if b"\r\n" in original and original.count(b"\n") == original.count(b"\r\n"):
        text = _LONE_LF.sub("\r\n", text)
    return text.encode(encoding)


def write_atomic(path: str | os.PathLike, new_bytes: bytes, expected_old_bytes: bytes) -> None:
    """Replace ``path`` by ``new_bytes``, keeping its mode, unless it no longer holds
    ``expected_old_bytes`` (then raise StaleFileError and leave it untouched).

    A file without write permission raises ReadOnlyFileError (root could rename over it,
    but the user marked it read-only).  Normally the new text goes to a temp file that is
    renamed over the original, so no reader or crash sees half a file; when that rename
    would change what the file is — a hard link (the other names would keep the old text),
    or an owner or group we would not recreate — the original is overwritten in place
    instead, after the temp file holds the new text, which is kept if that write fails.
    A symlink is followed, so the link stays a link and its target is updated.
    """
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    info = os.stat(target)
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise ReadOnlyFileError(f"{path}: not fixed: the file is read-only")
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".pypto-lint.tmp", dir=folder)
    overwriting = False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(new_bytes)
            fh.flush()
            os.fsync(fh.fileno())
            made = os.fstat(fh.fileno())
        if info.st_nlink > 1 or (made.st_uid, made.st_gid) != (info.st_uid, info.st_gid):
            with open(target, "r+b") as fh:
                if fh.read() != expected_old_bytes:
                    raise StaleFileError(f"{path}: file changed since it was read, not written")
                overwriting = True
                fh.seek(0)
                fh.write(new_bytes)
                fh.truncate()
                fh.flush()
                os.fsync(fh.fileno())
                if os.fstat(fh.fileno()).st_mode != info.st_mode:  # a write may clear set-id bits
                    with contextlib.suppress(PermissionError):  # only the owner may set them back
                        os.fchmod(fh.fileno(), stat.S_IMODE(info.st_mode))
            os.unlink(tmp)
            return
        os.chmod(tmp, stat.S_IMODE(info.st_mode))  # mkstemp made it 0600
        with open(target, "rb") as fh:
            current = fh.read()
        if current != expected_old_bytes:
            raise StaleFileError(f"{path}: file changed since it was read, not written")
        os.replace(tmp, target)
    except BaseException as exc:
        if not overwriting:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        elif isinstance(exc, OSError):  # the original may be half-written: say where the fix is
            raise OSError(exc.errno, f"{exc.strerror or exc}; the fixed text is kept in {tmp}") from exc
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
