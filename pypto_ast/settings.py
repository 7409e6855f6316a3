"""Resolved lint settings: one frozen value, built from defaults, pyproject.toml and flags."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

TARGETS = ("0.2.0", "head")  # the latest release on PyPI, and hicann/pypto's main branch

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__",
    "node_modules", "build", "dist", "site-packages", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "*.egg-info",
)


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("PTO",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    # (glob, codes) pairs: codes ignored in files matching the glob
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    # the pypto version the rules follow where 0.2.0 and the repository's later version differ
    target: str = "0.2.0"
    # PTO004 also reports elementwise ops whose tile misses the 32-byte grid (the docs' rule, which
    # no pypto version enforces: the vector unit pads)
    strict_alignment: bool = False
    # thresholds of individual rules
    cond_path_threshold: int = 16  # PTO011: compiled paths per loop above which a branch is reported
    subgraph_budget: int = 18000  # PTO013: tile operations per loop body (tiling guide's count rule)
    soc: str = "ascend910b"  # PTO024: whose on-chip memory sizes (pypto_ast/socs.py; Atlas A2 by default)
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def enabled(self, code: str, path: str | None = None) -> bool:
        """ruff-style selection: the most specific matching prefix wins; ignore beats select on ties."""
        best_sel = max((len(p) for p in self.select + self.extend_select if _matches(code, p)), default=-1)
        best_ign = max((len(p) for p in self.ignore if _matches(code, p)), default=-1)
        if path is not None:
            for pattern, codes in self.per_file_ignores:
                if _path_matches(path, pattern):
                    best_ign = max([best_ign] + [len(c) for c in codes if _matches(code, c)])
        return best_sel >= 0 and best_sel > best_ign


def _matches(code: str, prefix: str) -> bool:
    return prefix == "ALL" or code.startswith(prefix)


def _path_matches(path: str, pattern: str) -> bool:
    norm = path.replace("\\", "/")
    if norm.startswith("./"):
        norm = norm[2:]
    return (
        fnmatch.fnmatch(norm, pattern)
        or fnmatch.fnmatch(norm.rsplit("/", 1)[-1], pattern)
        or fnmatch.fnmatch(norm, "*/" + pattern)
    )
