"""The host build: g++ into a content-addressed, atomically written cache, loaded with ctypes."""

import ctypes
import json
import multiprocessing
import shutil
import subprocess

import pytest

from pypto_ast import knobs
from pypto_ast.emit import build
from pypto_ast.emit.build import BuildError, build_host_library, load_library

pytestmark = pytest.mark.skipif(
    shutil.which(knobs.cxx) is None,
    reason=f"C++ compiler {knobs.cxx!r} not on PATH (set PYPTO_AST_CXX): the host build needs one",
)

ADD = {"add.cpp": '#include "k.h"\nextern "C" int add(int a, int b) { return a + b + K; }\n'}


@pytest.fixture(autouse=True)
def _plain_knobs(monkeypatch):
    # A developer's PYPTO_AST_ALWAYS_COMPILE must not turn cache hits into misses here.
    monkeypatch.setattr(knobs, "always_compile", False)


@pytest.fixture
def include(tmp_path):
    d = tmp_path / "include"
    d.mkdir()
    (d / "k.h").write_text("#define K 0\n")
    return d


@pytest.fixture
def compiles(monkeypatch):
    """Counts compiler runs that produce a library (``--version`` probes are not builds)."""
    calls = []
    real = subprocess.run

    def counting(cmd, *args, **kwargs):
        if "-shared" in cmd:
            calls.append(cmd)
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting)
    return calls


def _add(path):
    lib = load_library(path)
    lib.add.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.add.restype = ctypes.c_int
    return lib.add


def _entries(cache):
    return sorted(p.name for p in (cache / f"v{build.FORMAT_VERSION}").iterdir())


def test_builds_loads_and_calls(tmp_path, include):
    path = build_host_library(ADD, include_dirs=[include], cache_dir=tmp_path / "cache")
    assert path.name == "lib.so" and path.parent.parent == tmp_path / "cache" / f"v{build.FORMAT_VERSION}"
    assert _add(path)(2, 3) == 5
    meta = json.loads((path.parent / "meta.json").read_text())
    assert meta["digest"] == path.parent.name and len(meta["digest"]) == 64
    assert meta["inputs"]["headers"] == {"0:k.h": build._sha256(b"#define K 0\n")}
    assert meta["files"] == {"lib.so": build._sha256(path.read_bytes())}


def test_second_call_is_a_hit_without_any_process(tmp_path, include, monkeypatch, compiles):
    cache = tmp_path / "cache"
    first = build_host_library(ADD, include_dirs=[include], cache_dir=cache)
    assert len(compiles) == 1
    every_run = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: every_run.append(a) or pytest.fail("ran a process"))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: every_run.append(a) or pytest.fail("ran a process"))
    assert build_host_library(ADD, include_dirs=[include], cache_dir=cache) == first
    assert every_run == []


def test_knob_cache_dir_is_the_default(tmp_path, include, monkeypatch):
    monkeypatch.setattr(knobs, "cache_dir", tmp_path / "from-knob")
    path = build_host_library(ADD, include_dirs=[include])
    assert (tmp_path / "from-knob" / f"v{build.FORMAT_VERSION}") in path.parents


def test_header_change_changes_the_key(tmp_path, include):
    cache = tmp_path / "cache"
    before = build_host_library(ADD, include_dirs=[include], cache_dir=cache)
    (include / "k.h").write_text("#define K 100\n")
    after = build_host_library(ADD, include_dirs=[include], cache_dir=cache)
    assert after != before and _add(after)(2, 3) == 105
    (include / "sub").mkdir()
    (include / "sub" / "unused.h").write_text("// new header\n")
    assert build_host_library(ADD, include_dirs=[include], cache_dir=cache) not in (before, after)


def test_flags_and_source_text_change_the_key(tmp_path, include):
    cache = tmp_path / "cache"
    base = build_host_library(ADD, include_dirs=[include], cache_dir=cache)
    flagged = build_host_library(ADD, include_dirs=[include], cache_dir=cache, extra_flags=["-DX=1", "-g"])
    reordered = build_host_library(ADD, include_dirs=[include], cache_dir=cache, extra_flags=["-g", "-DX=1"])
    edited = build_host_library({"add.cpp": ADD["add.cpp"] + "\n"}, include_dirs=[include], cache_dir=cache)
    assert len({base, flagged, reordered, edited}) == 4  # flag order can matter to the compiler


def test_compile_error_carries_the_compiler_message(tmp_path, include):
    bad = {"bad.cpp": 'extern "C" int f() {\n  return 1\n}\n'}
    with pytest.raises(BuildError) as info:
        build_host_library(bad, include_dirs=[include], cache_dir=tmp_path / "cache")
    err = info.value
    assert "bad.cpp:2:" in err.stderr and "error" in err.stderr
    assert "bad.cpp:2:" in str(err) and "Traceback" not in str(err)
    assert "-c" in err.command and "bad.cpp" in err.command  # the command that failed
    assert _entries(tmp_path / "cache") == []  # no entry, no leftover temp dir


def test_missing_compiler_is_a_build_error(tmp_path, include):
    with pytest.raises(BuildError, match="not found"):
        build_host_library(ADD, include_dirs=[include], cache_dir=tmp_path, cxx="no-such-compiler-pypto")


def test_bad_inputs_are_build_errors(tmp_path, include):
    with pytest.raises(BuildError, match="nothing to compile"):
        build_host_library({"k.h": ""}, include_dirs=[include], cache_dir=tmp_path)
    with pytest.raises(BuildError, match="bad source file name"):
        build_host_library({"../x.cpp": ""}, include_dirs=[include], cache_dir=tmp_path)
    with pytest.raises(BuildError, match="include directory not found"):
        build_host_library(ADD, include_dirs=[tmp_path / "nope"], cache_dir=tmp_path)


def _race(barrier, queue, cache, include):
    barrier.wait()  # all four miss the cache and compile at the same time
    try:
        queue.put(str(build_host_library(ADD, include_dirs=[include], cache_dir=cache)))
    except BaseException as exc:  # report, don't hang the parent
        queue.put(f"error: {exc!r}")


def test_concurrent_builders_agree(tmp_path, include):
    ctx = multiprocessing.get_context("fork")
    cache = tmp_path / "cache"
    barrier, queue = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(barrier, queue, cache, include)) for _ in range(4)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert len(set(results)) == 1 and not results[0].startswith("error"), results
    assert len(_entries(cache)) == 1  # exactly one entry; no .tmp-/.old- directories left
    assert _add(results[0])(1, 1) == 2


def test_corrupt_meta_is_rebuilt(tmp_path, include, compiles):
    cache = tmp_path / "cache"
    path = build_host_library(ADD, include_dirs=[include], cache_dir=cache)
    meta_file = path.parent / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta_file.write_text(json.dumps({**meta, "digest": "0" * 64}))
    with pytest.warns(build.DamagedCacheWarning):
        assert build_host_library(ADD, include_dirs=[include], cache_dir=cache) == path
    assert len(compiles) == 2 and json.loads(meta_file.read_text())["digest"] == path.parent.name
    # A digest that matches the name but not the recorded inputs is as bad.
    meta_file.write_text(json.dumps({**meta, "inputs": {**meta["inputs"], "flags": []}}))
    with pytest.warns(build.DamagedCacheWarning):
        assert build_host_library(ADD, include_dirs=[include], cache_dir=cache) == path
    assert len(compiles) == 3 and _entries(cache) == [path.parent.name]


def test_always_compile_rebuilds_and_no_cache_stays_out(tmp_path, include, compiles, monkeypatch):
    cache = tmp_path / "cache"
    path = build_host_library(ADD, include_dirs=[include], cache_dir=cache)
    assert build_host_library(ADD, include_dirs=[include], cache_dir=cache, always_compile=True) == path
    monkeypatch.setattr(knobs, "always_compile", True)
    assert build_host_library(ADD, include_dirs=[include], cache_dir=cache) == path
    assert len(compiles) == 3 and _entries(cache) == [path.parent.name]

    elsewhere = build_host_library(ADD, include_dirs=[include], cache_dir=tmp_path / "unused", no_cache=True)
    try:
        assert _add(elsewhere)(4, 4) == 8 and not (tmp_path / "unused").exists()
    finally:
        shutil.rmtree(elsewhere.parent)


# ---- several translation units, prebuilt objects, artefact digests, cache permissions --------

TWO = {
    "a.cpp": 'extern "C" int twice(int x);\nextern "C" int quad(int x) { return twice(twice(x)); }\n',
    "b.cpp": 'extern "C" int twice(int x) { return 2 * x; }\n',
}


def _fn(path, name):
    fn = getattr(load_library(path), name)
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def test_translation_units_compile_separately_and_link_together(tmp_path, include):
    path = build_host_library(TWO, include_dirs=[include], cache_dir=tmp_path / "cache")
    assert _fn(path, "quad")(3) == 12
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.cpp", "b.cpp", "lib.so", "meta.json"]


def test_the_first_failing_file_is_reported(tmp_path, include):
    bad = {**TWO, "c.cpp": "int broken(\n"}
    with pytest.raises(BuildError) as info:
        build_host_library(bad, include_dirs=[include], cache_dir=tmp_path / "cache")
    assert str(info.value).startswith("compiling c.cpp failed") and "c.cpp:1:" in info.value.stderr


def test_prebuilt_objects_are_built_once_and_linked(tmp_path, include, compiles, monkeypatch):
    cache = tmp_path / "cache"
    objects = build.Objects({"b.cpp": TWO["b.cpp"]}, include_dirs=[include], flags=["-O1"], label="the test objects")
    lines = []
    first = build_host_library({"a.cpp": TWO["a.cpp"]}, link=objects, cache_dir=cache, progress=lines.append)
    assert _fn(first, "quad")(5) == 20
    assert lines == ["building the test objects once for this compiler: 1 files (" + lines[0].split("(")[1],
                     lines[1]] and lines[1].startswith("compiling 1 file (")
    [entry] = [p for p in (cache / f"v{build.FORMAT_VERSION}").iterdir() if p.name.startswith("obj-")]
    assert entry.name == f"obj-{objects.digest()}"
    # Another library linking the same objects does not rebuild them; an edit of them does.
    popens = []
    real = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, *a, **k: popens.append(cmd) or real(cmd, *a, **k))
    other = build_host_library({"a.cpp": TWO["a.cpp"] + "\n"}, link=objects, cache_dir=cache)
    compiled = [cmd for cmd in popens if "-c" in cmd]
    assert other != first and len(compiled) == 1 and "a.cpp" in compiled[0]
    edited = build.Objects({"b.cpp": TWO["b.cpp"].replace("2 * x", "3 * x")}, include_dirs=[include])
    assert edited.digest() != objects.digest()
    assert _fn(build_host_library({"a.cpp": TWO["a.cpp"]}, link=edited, cache_dir=cache), "quad")(1) == 9


def test_a_tampered_object_is_rebuilt_before_linking(tmp_path, include):
    cache = tmp_path / "cache"
    objects = build.Objects({"b.cpp": TWO["b.cpp"]}, include_dirs=[include])
    [obj] = objects.paths(cache_dir=cache)
    obj.write_bytes(obj.read_bytes()[:100])  # truncated: its recorded sha256 no longer matches
    with pytest.warns(build.DamagedCacheWarning):
        [again] = objects.paths(cache_dir=cache)
    assert again == obj and build._sha256(again.read_bytes()) != build._sha256(b"")
    assert _fn(build_host_library({"a.cpp": TWO["a.cpp"]}, link=objects, cache_dir=cache), "quad")(2) == 8


@pytest.mark.parametrize("damage", ["truncate", "empty", "replace", "flip"])
def test_a_damaged_library_is_rebuilt_never_loaded(tmp_path, include, compiles, damage):
    cache = tmp_path / "cache"
    path = build_host_library(ADD, include_dirs=[include], cache_dir=cache)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "replace":  # another valid library under the same name
        other = build_host_library({"add.cpp": ADD["add.cpp"].replace("a + b", "a - b")}, include_dirs=[include],
                                   cache_dir=tmp_path / "other")
        path.write_bytes(other.read_bytes())
    else:
        flipped = bytearray(data)
        for i in range(len(data) // 2, len(data) // 2 + 64):
            flipped[i] ^= 0xFF
        path.write_bytes(bytes(flipped))
    with pytest.warns(build.DamagedCacheWarning, match="rebuilding it"):
        assert build_host_library(ADD, include_dirs=[include], cache_dir=cache) == path
    assert len(compiles) == (3 if damage == "replace" else 2)
    assert _add(path)(2, 3) == 5


def test_cache_dirs_are_private_and_foreign_ones_refused(tmp_path, include):
    cache = tmp_path / "fresh"
    build_host_library(ADD, include_dirs=[include], cache_dir=cache)
    assert (cache.stat().st_mode & 0o777) == 0o700
    assert ((cache / f"v{build.FORMAT_VERSION}").stat().st_mode & 0o777) == 0o700
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(BuildError, match="writable by group or others"):
        build_host_library(ADD, include_dirs=[include], cache_dir=shared)
