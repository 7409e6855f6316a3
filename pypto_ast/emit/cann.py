"""Where CANN is on this machine: the toolkit root, its version, its compiler and the driver's version.

Discovery follows what CANN's own ``set_env.sh`` and build scripts use (ascendc.md §12.2): the
first of ``ASCEND_HOME_PATH``, ``ASCEND_TOOLKIT_HOME`` and ``ASCEND_CANN_PACKAGE_PATH`` that is
set, else the default install roots (``/usr/local/Ascend/cann``, ``.../ascend-toolkit/latest``,
the same under ``~/Ascend``).  The version is read from the toolkit's ``opp/version.info`` (the
file the PyPTO FAQ tells users to read), else its top-level ``version.info``; the driver's from
``/usr/local/Ascend/driver/version.info``.  Nothing here runs a CANN program: a machine with no
NPU can still be told precisely what is missing.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

ROOT_VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CANN_PACKAGE_PATH")
DEFAULT_ROOTS = ("/usr/local/Ascend/cann", "/usr/local/Ascend/ascend-toolkit/latest",
                 "~/Ascend/cann", "~/Ascend/ascend-toolkit/latest")
DEFAULT_DRIVER = "/usr/local/Ascend/driver"
DRIVER_VARIABLE = "PYPTO_AST_ASCEND_DRIVER"
"""Our knob for a driver installed elsewhere (CANN has no variable for it; ``knobs.ascend_driver``)."""

MIN_CANN = (8, 5, 0)
MIN_DRIVER = (25, 2, 0)
"""The FAQ's minimums for PyPTO ("cann-package-incompatible": driver 25.2.0, CANN 8.5.0)."""


class ToolkitError(Exception):
    """CANN (or a part of it) is missing or unreadable; ``fix`` says what to do."""

    def __init__(self, message: str, fix: str = ""):
        super().__init__(message)
        self.message, self.fix = message, fix

    def __str__(self) -> str:
        return f"{self.message} ({self.fix})" if self.fix else self.message


@dataclass(frozen=True)
class Version:
    """A dotted version as CANN writes it (``8.5.0.2.220``, ``25.3.rc1``): its leading numbers,
    and whether it is a release candidate (an ``rcN`` part: before the release it names)."""

    text: str
    numbers: tuple
    candidate: bool

    def at_least(self, minimum: tuple) -> bool:
        width = max(len(self.numbers), len(minimum))
        mine = self.numbers + (0,) * (width - len(self.numbers))
        wanted = tuple(minimum) + (0,) * (width - len(minimum))
        if mine != wanted:
            return mine > wanted
        return not self.candidate

    def __str__(self) -> str:
        return self.text


def parse_version(text: str) -> Optional[Version]:
    """``None`` when ``text`` does not start with a number (a malformed ``Version=`` line)."""
    text = text.strip().strip('"')
    numbers = []
    candidate = False
    for part in text.split("."):
        if re.fullmatch(r"\d+", part):
            if candidate:
                break
            numbers.append(int(part))
        elif re.fullmatch(r"(?i)rc\d*|alpha\d*|beta\d*|t\d+", part):
            candidate = True
        else:
            break
    if not numbers:
        return None
    return Version(text, tuple(numbers), candidate)


def read_version_info(path: Path) -> Version:
    """The ``Version=`` (else ``package_version=``) of a ``version.info`` file."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ToolkitError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields.setdefault(key.strip().lower(), value.strip())
    for key in ("version", "package_version"):
        if key in fields:
            version = parse_version(fields[key])
            if version is None:
                raise ToolkitError(f"{path}: {key}={fields[key]!r} is not a version",
                                   "reinstall the package that wrote it")
            return version
    raise ToolkitError(f"{path}: no Version= line", "reinstall the package that wrote it")


def machine_arch() -> str:
    """CANN's name for this machine's architecture directory (``x86_64``, ``aarch64``)."""
    arch = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)


@dataclass(frozen=True)
class Toolkit:
    """One CANN toolkit install: where it is (and which variable said so), its version and compiler."""

    root: Path
    source: str  # "ASCEND_HOME_PATH", ..., or "default path"
    version: Version
    version_file: Path
    compiler: Optional[Path]  # bisheng (older installs: ccec); None when the install has none

    @property
    def arch_dir(self) -> Path:
        return self.root / f"{machine_arch()}-linux"

    def include_dirs(self) -> list:
        """The devkit's include directories, as the toolkit's legacy CMake passes them (§12.3)."""
        bases = [self.arch_dir / "asc", self.root / "compiler" / "asc", self.root / "asc"]
        asc = next((b for b in bases if (b / "include").is_dir()), bases[0])
        dirs = [asc / "include", asc / "include" / "basic_api", asc / "include" / "adv_api", asc / "include" / "utils",
                asc / "impl", asc / "impl" / "basic_api", asc / "impl" / "adv_api", asc / "impl" / "utils"]
        tik = next((d for d in (self.arch_dir / "tikcpp" / "tikcfw", self.root / "compiler" / "tikcpp" / "tikcfw",
                                self.root / "tools" / "tikcpp" / "tikcfw") if d.is_dir()), None)
        if tik is not None:
            dirs += [tik, tik / "interface", tik / "impl"]
        dirs.append(self.root / "include")
        return dirs

    def library_dirs(self) -> list:
        return [d for d in (self.arch_dir / "lib64", self.root / "lib64") if d.is_dir()] or [self.root / "lib64"]


def _candidates(environ: Mapping[str, str]):
    for name in ROOT_VARIABLES:
        value = environ.get(name, "").strip()
        if value:
            yield Path(value).expanduser(), name
            return  # a variable that is set is what the user chose: never fall back past it
    for path in DEFAULT_ROOTS:
        yield Path(path).expanduser(), "default path"


def _version_file(root: Path) -> Optional[Path]:
    for path in (root / "opp" / "version.info", root / "version.info",
                 root / f"{machine_arch()}-linux" / "ascend_toolkit_install.info"):
        if path.is_file():
            return path
    return None


def find_compiler(root: Path, environ: Mapping[str, str]) -> Optional[Path]:
    """bisheng (or the older ccec) of the toolkit at ``root``, else on ``PATH``."""
    for sub in (f"{machine_arch()}-linux/ccec_compiler/bin", "compiler/ccec_compiler/bin", "tools/ccec_compiler/bin",
                "ccec_compiler/bin", "bin"):
        for name in ("bisheng", "ccec"):
            path = root / sub / name
            if path.is_file() and os.access(path, os.X_OK):
                return path
    found = shutil.which("bisheng", path=environ.get("PATH", os.defpath))
    return Path(found) if found else None


def find_toolkit(environ: Optional[Mapping[str, str]] = None) -> Toolkit:
    """The CANN toolkit this process would build with; :class:`ToolkitError` says what is missing."""
    environ = os.environ if environ is None else environ
    tried = []
    for root, source in _candidates(environ):
        if not root.is_dir():
            tried.append(f"{root} ({source})")
            if source != "default path":
                raise ToolkitError(f"{source}={root}: no such directory",
                                   f"point {source} at the CANN install, e.g. `source <CANN>/set_env.sh`")
            continue
        version_file = _version_file(root)
        if version_file is None:
            raise ToolkitError(f"{root} ({source}): no opp/version.info or version.info: not a CANN toolkit",
                               "point ASCEND_HOME_PATH at the toolkit (the directory `set_env.sh` is in)")
        return Toolkit(root, source, read_version_info(version_file), version_file, find_compiler(root, environ))
    raise ToolkitError("no CANN toolkit: none of " + ", ".join(ROOT_VARIABLES) + " is set and no default install "
                       f"exists ({', '.join(tried)})",
                       "install CANN >= 8.5.0 and `source <CANN>/set_env.sh` (it sets ASCEND_HOME_PATH)")


def driver_version(environ: Optional[Mapping[str, str]] = None) -> Version:
    """The NPU driver's version (``<driver>/version.info``); :class:`ToolkitError` when absent."""
    from .. import knobs

    environ = os.environ if environ is None else environ
    value = environ.get(DRIVER_VARIABLE, "").strip()
    root = Path(value).expanduser() if value else (knobs.ascend_driver if environ is os.environ else Path(DEFAULT_DRIVER))
    path = root / "version.info"
    if not path.is_file():
        raise ToolkitError(f"no NPU driver: {path} does not exist",
                           "install the Ascend driver (HDK) >= 25.2.0; on a machine with no NPU use --backend host")
    return read_version_info(path)
