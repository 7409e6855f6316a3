"""``[tool.pypto-lint]`` in pyproject.toml, merged with command-line flags into one Settings.

Layering follows ruff: defaults < file < flags, where ``--select`` and ``--exclude``
replace, while ``--extend-select``, ``--ignore`` and ``--extend-exclude`` add.  Every key
is validated up front so a typo fails loudly (exit 2) instead of silently linting with
defaults.  Path globs that contain a ``/`` are anchored at the directory holding the
config file, and rewritten to the form the CLI uses for display paths (relative to the
working directory when inside it, absolute otherwise) so the engine can match them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from .settings import Settings

SECTION = "pypto-lint"
_CODE = re.compile(r"^(ALL|PTO\d{0,3})$")


class ConfigError(Exception):
    """Bad configuration: the message names the file and the key."""


@dataclass(frozen=True)
class Overrides:
    """Command-line flags; None / empty means "not given"."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None
    target: str | None = None


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    config_file: Path | None  # None: defaults only
    root: Path  # where anchored exclude globs start: the config's directory, else cwd
    options: dict = field(default_factory=dict)  # the validated file options, for messages


# -- value checkers: each returns the Settings value or raises ValueError(reason) ------------
def _codes(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of rule codes, e.g. [\"PTO001\"]")
    return tuple(normalize_code(v) for v in value)


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of strings")
    return tuple(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _target(value: Any) -> str:
    from .settings import TARGETS

    if not isinstance(value, str) or value.lower() not in TARGETS:
        raise ValueError(f"expected one of {', '.join(TARGETS)}, got {value!r}")
    return value.lower()


def _soc(value: Any) -> str:
    from .socs import SOCS

    if not isinstance(value, str) or value.lower() not in SOCS:
        raise ValueError(f"expected one of {', '.join(SOCS)}, got {value!r}")
    return value.lower()


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("expected a positive integer")
    return value


def _per_file(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ValueError("expected a table of glob = [codes]")
    out = []
    for glob, codes in value.items():
        try:
            out.append((glob, _codes(codes)))
        except ValueError as exc:
            raise ValueError(f"{glob!r}: {exc}") from None
    return tuple(out)


_KEYS: dict[str, Callable[[Any], Any]] = {
    "select": _codes,
    "ignore": _codes,
    "extend-select": _codes,
    "per-file-ignores": _per_file,
    "exclude": _strings,
    "extend-exclude": _strings,
    "unsafe-fixes": _bool,
    "target": _target,
    "strict-alignment": _bool,
    "cond-path-threshold": _positive_int,
    "subgraph-budget": _positive_int,
    "soc": _soc,
}


def normalize_code(code: str) -> str:
    """``pto001`` -> ``PTO001``; anything that is not a PTO prefix or ALL is an error."""
    norm = code.strip().upper()
    if not _CODE.match(norm):
        raise ValueError(f"{code!r} is not a rule code or prefix (PTO, PTO0, PTO001, ALL)")
    return norm


# -- reading ---------------------------------------------------------------------------------
def _read_toml(path: Path) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise ConfigError(f"{path}: reading TOML needs Python 3.11+ or the tomli package") from None
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _section(path: Path, data: dict, *, explicit: bool) -> dict | None:
    """The options table; an explicit non-pyproject file may hold the keys at top level."""
    tool = data.get("tool", {})
    if isinstance(tool, dict) and SECTION in tool:
        table = tool[SECTION]
    elif explicit and path.name != "pyproject.toml":
        table = {k: v for k, v in data.items() if k != "tool"}
    else:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    return table


def load_options(path: Path, *, explicit: bool = False) -> dict | None:
    """Validated options keyed by Settings field name, or None when the file has no section."""
    table = _section(path, _read_toml(path), explicit=explicit)
    if table is None:
        return None
    options = {}
    for key, value in table.items():
        check = _KEYS.get(key)
        if check is None:
            known = ", ".join(sorted(_KEYS))
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.{SECTION}] (known keys: {known})")
        try:
            options[key.replace("-", "_")] = check(value)
        except ValueError as exc:
            raise ConfigError(f"{path}: key {key!r} in [tool.{SECTION}]: {exc}") from None
    return options


def find_config(start: Path) -> Path | None:
    """Nearest pyproject.toml at or above ``start`` that has a [tool.pypto-lint] section
    (ruff's rule: a pyproject without our section does not stop the search)."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _section(candidate, _read_toml(candidate), explicit=False) is not None:
            return candidate
    return None


def search_start(paths: Sequence[str], cwd: Path) -> Path:
    """The common parent directory of the inputs (cwd for stdin or no paths)."""
    real = [Path(cwd, p).resolve() for p in paths if p != "-"]
    if not real:
        return cwd
    dirs = [p if p.is_dir() else p.parent for p in real]
    try:
        return Path(os.path.commonpath([str(d) for d in dirs]))
    except ValueError:  # different drives on Windows
        return cwd


# -- merging ---------------------------------------------------------------------------------
def display_path(path: str | os.PathLike, cwd: Path) -> str:
    """How the CLI names a file: relative to cwd when inside it, absolute otherwise."""
    absolute = Path(os.path.abspath(Path(cwd, path)))
    try:
        rel = absolute.relative_to(cwd)
    except ValueError:
        return absolute.as_posix()
    return rel.as_posix() or "."


def _anchor(glob: str, root: Path, cwd: Path) -> str:
    """Globs with a slash are relative to the config's directory, like ruff's."""
    if "/" not in glob.replace("\\", "/").rstrip("/"):
        return glob
    if os.path.isabs(glob):
        return display_path(glob, cwd)
    return display_path(Path(root, glob), cwd)


def build_settings(options: dict, overrides: Overrides, *, root: Path, cwd: Path) -> Settings:
    """Defaults < file options < command-line overrides."""
    base = Settings()
    values: dict[str, Any] = dict(options)
    if "per_file_ignores" in values:
        values["per_file_ignores"] = tuple(
            (_anchor(glob, root, cwd), codes) for glob, codes in values["per_file_ignores"]
        )
    settings = replace(base, **values)
    changes: dict[str, Any] = {}
    if overrides.select is not None:
        changes["select"] = overrides.select
    if overrides.extend_select:
        changes["extend_select"] = settings.extend_select + overrides.extend_select
    if overrides.ignore:
        changes["ignore"] = settings.ignore + overrides.ignore
    if overrides.exclude is not None:
        changes["exclude"] = overrides.exclude
    if overrides.extend_exclude:
        changes["extend_exclude"] = settings.extend_exclude + overrides.extend_exclude
    if overrides.unsafe_fixes is not None:
        changes["unsafe_fixes"] = overrides.unsafe_fixes
    if overrides.target is not None:
        changes["target"] = overrides.target
    return replace(settings, **changes)


def resolve(
    paths: Sequence[str],
    overrides: Overrides = Overrides(),
    *,
    config_path: str | os.PathLike | None = None,
    cwd: str | os.PathLike | None = None,
    stdin_filename: str | None = None,
) -> Resolved:
    """Find the config (``--config`` wins over the search), read it and apply the flags."""
    here = Path(os.path.abspath(cwd or os.getcwd()))
    if config_path is not None:
        found: Path | None = Path(here, config_path)
        if not found.is_file():
            raise ConfigError(f"{config_path}: config file not found")
        options = load_options(found, explicit=True) or {}
    else:
        start_from = [stdin_filename] if stdin_filename and list(paths) in ([], ["-"]) else paths
        found = find_config(search_start(start_from, here))
        options = (load_options(found) or {}) if found else {}
    root = found.parent if found else here
    settings = build_settings(options, overrides, root=root, cwd=here)
    return Resolved(settings, found, root, options)
