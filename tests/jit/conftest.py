"""Fixtures of the ``@pypto_ast.jit`` tests: kernel modules written into tmp_path and loaded the
way ``pypto-transpile --run`` loads them (``import pypto`` served by pypto_ast.lang), and a fresh
build cache per test (helpers: jit_support.py)."""

from __future__ import annotations

import shutil

import pytest

from jit_support import seed_runtime, write

from pypto_ast import knobs, live


@pytest.fixture
def module(tmp_path):
    """``module(source, name="kernels.py")``: write a kernel module and load it (pypto from pypto_ast.lang)."""

    def make(source: str, name: str = "kernels.py"):
        path = write(tmp_path / name, source)
        return live.load_module(str(path))

    return make


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty build cache for this test (the knob, and the environment for child processes),
    holding only the host runtime's objects."""
    cache = tmp_path / "cache"
    if shutil.which(knobs.cxx) is not None:
        seed_runtime(cache)
    else:
        cache.mkdir(mode=0o700)
    monkeypatch.setattr(knobs, "cache_dir", cache)
    monkeypatch.setenv("PYPTO_AST_CACHE_DIR", str(cache))
    return cache
