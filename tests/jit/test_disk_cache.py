"""The disk side of ``@pypto_ast.jit`` (host backend), seen from new processes: a warm cache serves
a new process's first call without lowering (the jit index) and without compiling (the build
cache); a truncated, corrupted, stale or missing library and a damaged index entry are detected
and rebuilt; PYPTO_AST_ALWAYS_COMPILE rebuilds; an edit of the kernel's file misses; the cache
is private; eight processes compiling the same kernel into an empty cache all get the right
result and leave one valid entry."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from jit_support import CHILD, MANY_TILES, many_tiles_expected, needs_cxx, run_child, write  # noqa: E402

from pypto_ast.emit import build  # noqa: E402

pytestmark = needs_cxx

KERNEL = '''
import pypto
import pypto_ast

F32 = pypto.DT_FP32
OUTPUT = "out"


@pypto_ast.jit(backend="host")
def axpy(x: pypto.Tensor((32, 64), F32), y: pypto.Tensor((32, 64), F32), out: pypto.Tensor((32, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x * 3.0 + y


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(7)
    return {"x": torch.randn(32, 64, generator=g), "y": torch.randn(32, 64, generator=g), "out": torch.zeros(32, 64)}


def expected(x, y, out):
    return x * 3.0 + y
'''


@pytest.fixture
def kernel_file(tmp_path):
    return write(tmp_path / "axpy_kernel.py", KERNEL)


def _root(cache: Path) -> Path:
    return cache / f"v{build.FORMAT_VERSION}"


def _index_entries(cache: Path) -> list[Path]:
    folder = _root(cache) / "jit"
    return sorted(folder.glob("*/*.json")) if folder.is_dir() else []  # jit/<key>/<variant>.json


def _library_entry(cache: Path) -> Path:
    (index,) = _index_entries(cache)
    return _root(cache) / json.loads(index.read_text())["build"]


def _programs(cache: Path) -> list[Path]:
    """The library entries (not the runtime's objects, the index or temporary directories)."""
    return sorted(p for p in _root(cache).iterdir() if p.is_dir() and len(p.name) == 64)


def test_a_new_process_uses_the_warm_cache_without_lowering(kernel_file, fresh_cache):
    first = run_child(kernel_file, "axpy", cache=fresh_cache)
    assert first["ok"] and first["backend"] == "host"
    assert first["stats"]["lowered"] == 1 and first["stats"]["compiles"] >= 1, first
    second = run_child(kernel_file, "axpy", cache=fresh_cache)
    assert second["ok"]
    assert second["stats"]["lowered"] == 0 and second["stats"]["index_hits"] == 1, second
    assert second["stats"]["compiles"] == 0, second


def _truncate(lib: Path) -> None:
    data = lib.read_bytes()
    lib.write_bytes(data[: len(data) // 2])


def _flip(lib: Path) -> None:
    data = bytearray(lib.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = bytes(b ^ 0xFF for b in data[middle:middle + 64])
    lib.write_bytes(bytes(data))


def _stale_meta(lib: Path) -> None:
    meta = lib.parent / build.META
    record = json.loads(meta.read_text())
    record["inputs"]["flags"] = record["inputs"]["flags"] + ["-DSTALE"]  # recorded for another key
    meta.write_text(json.dumps(record))


def _missing(lib: Path) -> None:
    lib.unlink()


DAMAGE = {"truncated": _truncate, "corrupted": _flip, "stale-meta": _stale_meta, "missing": _missing}


@pytest.mark.parametrize("damage", [pytest.param(d, marks=[pytest.mark.slow] if d == "missing" else [])
                                    for d in DAMAGE])
def test_a_damaged_library_is_detected_and_rebuilt(kernel_file, fresh_cache, damage):
    assert run_child(kernel_file, "axpy", cache=fresh_cache)["ok"]
    entry = _library_entry(fresh_cache)
    DAMAGE[damage](entry / build.LIBRARY)
    assert build.cached_library(entry.name) is None  # never loaded as it is
    again = run_child(kernel_file, "axpy", cache=fresh_cache)
    assert again["ok"], again
    assert again["stats"]["index_hits"] == 0 and again["stats"]["compiles"] >= 1, again
    if damage != "missing":  # a damaged entry is said to be rebuilt (a missing file is simply built)
        assert "DamagedCacheWarning" in again["stderr"], again["stderr"]
    assert build.cached_library(entry.name) == entry / build.LIBRARY  # rebuilt in place, valid again
    third = run_child(kernel_file, "axpy", cache=fresh_cache)
    assert third["ok"] and third["stats"]["index_hits"] == 1 and third["stats"]["compiles"] == 0, third


@pytest.mark.parametrize("damage", ["truncated", pytest.param("garbage", marks=pytest.mark.slow),
                                    pytest.param("wrong-digest", marks=pytest.mark.slow)])
def test_a_damaged_index_entry_is_ignored_and_rewritten(kernel_file, fresh_cache, damage):
    assert run_child(kernel_file, "axpy", cache=fresh_cache)["ok"]
    (index,) = _index_entries(fresh_cache)
    text = index.read_text()
    if damage == "truncated":
        index.write_text(text[: len(text) // 2])
    elif damage == "garbage":
        index.write_bytes(b"\x00\xff not json")
    else:
        record = json.loads(text)
        record["key"] = "0" * 64
        index.write_text(json.dumps(record))
    again = run_child(kernel_file, "axpy", cache=fresh_cache)
    assert again["ok"] and again["stats"]["lowered"] == 1 and again["stats"]["compiles"] == 0, again
    assert json.loads(index.read_text())["key"] == index.parent.name  # rewritten whole


def test_always_compile_rebuilds(kernel_file, fresh_cache):
    assert run_child(kernel_file, "axpy", cache=fresh_cache)["ok"]
    forced = run_child(kernel_file, "axpy", cache=fresh_cache, env={"PYPTO_AST_ALWAYS_COMPILE": "1"})
    assert forced["ok"] and forced["stats"]["lowered"] == 1 and forced["stats"]["compiles"] >= 1, forced
    assert len(_programs(fresh_cache)) == 1  # the fresh build replaced the entry


def test_an_edit_of_the_kernel_file_misses_the_index(kernel_file, fresh_cache):
    assert run_child(kernel_file, "axpy", cache=fresh_cache)["ok"]
    kernel_file.write_text(kernel_file.read_text().replace("out[:] = x * 3.0 + y", "out[:] = x * 3.0 - y"))
    edited = run_child(kernel_file, "axpy", cache=fresh_cache)
    assert not edited["ok"]  # `expected` still says + y: the kernel now computes - y ...
    assert edited["stats"]["lowered"] == 1 and edited["stats"]["index_hits"] == 0  # ... because it was lowered again
    assert len(_index_entries(fresh_cache)) == 2 and len(_programs(fresh_cache)) == 2


def test_the_cache_is_private(kernel_file, fresh_cache):
    assert run_child(kernel_file, "axpy", cache=fresh_cache)["ok"]
    root = _root(fresh_cache)
    for folder in (root, root / "jit", _library_entry(fresh_cache)):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for index in _index_entries(fresh_cache):
        assert stat.S_IMODE(index.stat().st_mode) & 0o077 == 0, index


def test_eight_processes_compile_one_kernel_at_once(kernel_file, tmp_path):
    from jit_support import seed_runtime

    cache = tmp_path / "fresh"
    seed_runtime(cache)
    env = dict(os.environ, PYPTO_AST_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(kernel_file), "axpy"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=str(tmp_path)) for _ in range(8)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-4000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r["ok"] for r in results), results
    assert sum(r["stats"]["compiles"] for r in results) >= 1
    programs = _programs(cache)
    assert len(programs) == 1, programs
    assert build.cached_library(programs[0].name, cache_dir=cache) is not None
    leftovers = [p.name for p in _root(cache).iterdir() if ".tmp-" in p.name or ".old-" in p.name]
    assert not leftovers, leftovers
    assert len(_index_entries(cache)) == 1
    assert not [p for p in (_root(cache) / "jit").glob("*/*") if p.suffix != ".json"]  # no temporary index files
    after = run_child(kernel_file, "axpy", cache=cache)
    # (an index hit, unless pypto-ast's own files changed meanwhile: then it lowers, but never compiles)
    assert after["ok"] and after["stats"]["compiles"] == 0, after


def test_the_index_serves_another_kernel_object_in_process(module, fresh_cache):
    # PTO013 (a lint warning) in the kernel's lines: warned by the first call, replayed from the index
    mod = module(MANY_TILES.replace("BACKEND", "host"), "tiles.py")
    import pypto_ast

    x = torch.randn(256, 512)
    want = many_tiles_expected(x)
    y = torch.zeros(256, 512)
    with pytest.warns(pypto_ast.KernelWarning, match="PTO013"):
        mod.many_tiles(x, y)
    assert torch.allclose(y, want, rtol=1e-5, atol=1e-4)
    assert mod.many_tiles.cache_stats["lowered"] == 1
    again = pypto_ast.jit(mod.many_tiles.func, backend="host")
    y.zero_()
    with pytest.warns(pypto_ast.KernelWarning, match="PTO013"):
        again(x, y)
    assert torch.allclose(y, want, rtol=1e-5, atol=1e-4)
    assert again.cache_stats["lowered"] == 0 and again.cache_stats["index_hits"] == 1, again.cache_stats


# -- records bound to what they name (issue 16, point 10) ----------------------------------------
ONE_OP = '''
import pypto
import pypto_ast

F32 = pypto.DT_FP32
OUTPUT = "out"


@pypto_ast.jit(backend="host")
def NAME(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((16, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x OP


def example_inputs():
    import torch

    return {"x": torch.arange(16 * 64, dtype=torch.float32).reshape(16, 64), "out": torch.zeros(16, 64)}


def expected(x, out):
    return x OP
'''


def _one_op(tmp_path, name: str, op: str) -> Path:
    return write(tmp_path / f"{name}.py", ONE_OP.replace("NAME", name).replace("OP", op))


def _record_of(cache: Path, kernel: str) -> Path:
    (found,) = [v for v in _index_entries(cache) if kernel in v.read_text()]
    return found


def test_swapped_records_never_run_another_kernels_library(tmp_path, fresh_cache):
    add1, mul2 = _one_op(tmp_path, "add1", "+ 1.0"), _one_op(tmp_path, "mul2", "* 2.0")
    assert run_child(add1, "add1", cache=fresh_cache)["ok"]
    assert run_child(mul2, "mul2", cache=fresh_cache)["ok"]
    a, m = _record_of(fresh_cache, "add1.py"), _record_of(fresh_cache, "mul2.py")
    ra, rm = json.loads(a.read_text()), json.loads(m.read_text())
    for field in ("build", "spec"):  # valid JSON, every digest left as it was
        ra[field], rm[field] = rm[field], ra[field]
    a.write_text(json.dumps(ra))
    m.write_text(json.dumps(rm))
    again = run_child(add1, "add1", cache=fresh_cache)
    assert again["ok"], "add1 ran another kernel's library"
    assert again["stats"]["index_hits"] == 0 and again["stats"]["lowered"] == 1, again
    assert run_child(mul2, "mul2", cache=fresh_cache)["ok"]


def test_a_layout_the_library_was_not_built_for_is_a_miss(tmp_path, fresh_cache):
    import importlib

    jit = importlib.import_module("pypto_ast.jit")  # the module (``pypto_ast.jit`` is the decorator)
    add1 = _one_op(tmp_path, "add1", "+ 1.0")
    assert run_child(add1, "add1", cache=fresh_cache)["ok"]
    (variant,) = _index_entries(fresh_cache)
    record = json.loads(variant.read_text())
    buffers = record["layout"]["manifest"]["buffers"]
    buffers[0]["name"], buffers[1]["name"] = buffers[1]["name"], buffers[0]["name"]  # a launch would write into x
    record["seal"] = jit._seal(record)  # a record consistent in itself
    variant.write_text(json.dumps(record))
    again = run_child(add1, "add1", cache=fresh_cache)
    assert again["ok"] and again["stats"]["index_hits"] == 0 and again["stats"]["lowered"] == 1, again
