"""A build cut short leaves nothing behind: SIGTERM during a cold build removes its temporary
directory and stops its compilers, and the temporaries of builds killed outright (SIGKILL) are
swept by a later build once their process is gone -- never a live process's.  The compiler is a
stand-in shell script (no g++ needed): it records its pid and either sleeps or writes its output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pypto_ast.emit import build

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"unit.cpp": "int unit() { return 1; }\n"}
HOUR_AGO = time.time() - 3600

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals and pids")


def fake_compiler(tmp_path: Path, body: str) -> Path:
    """A ``cxx`` that answers ``--version`` and otherwise appends its pid to ``pids`` and runs ``body``."""
    script = tmp_path / "fake-cxx"
    script.write_text("#!/bin/sh\n"
                      'case "$*" in *--version*) echo "fake-cxx 1"; exit 0;; esac\n'
                      f'echo $$ >> "{tmp_path / "pids"}"\n'
                      + body)
    script.chmod(0o755)
    return script


WRITES_OUTPUT = 'while [ $# -gt 1 ]; do [ "$1" = "-o" ] && out="$2"; shift; done\n: > "$out"\n'


def temporaries(cache: Path) -> list:
    return sorted(p.name for p in (cache / f"v{build.FORMAT_VERSION}").iterdir() if ".tmp-" in p.name
                  or ".old-" in p.name)


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()  # reaped: no process has this pid now
    return child.pid


def stale_dir(cache: Path, pid: int, tag: str = "0123abcd") -> Path:
    root = cache / f"v{build.FORMAT_VERSION}"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    d = root / f"{'ab' * 32}.tmp-{pid}-{tag}"
    d.mkdir(mode=0o700)
    (d / "unit.cpp.o").write_bytes(b"half an object")
    os.utime(d, (HOUR_AGO, HOUR_AGO))
    return d


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_during_a_cold_build_leaves_no_temporaries(tmp_path):
    cache = tmp_path / "cache"
    cxx = fake_compiler(tmp_path, "exec sleep 300\n")  # a compile that never ends on its own
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pypto_ast.emit import build; "
         f"build.build_host_library({SOURCES!r}, cache_dir=sys.argv[1], cxx=sys.argv[2])", str(cache), str(cxx)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stderr=subprocess.PIPE, text=True)
    pids = tmp_path / "pids"
    compiler = None
    try:
        deadline = time.monotonic() + 120
        while not (pids.exists() and pids.read_text().strip()):
            assert child.poll() is None, child.stderr.read()
            assert time.monotonic() < deadline, "the build never started its compiler"
            time.sleep(0.05)
        compiler = int(pids.read_text().split()[0])
        assert len(temporaries(cache)) == 1  # mid-build: its private directory exists
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=60)
        assert child.returncode == -signal.SIGTERM, child.stderr.read()  # still dies of the signal
        assert temporaries(cache) == []
        assert not alive(compiler)  # its compiler was stopped, not left running
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if compiler is not None and alive(compiler):
            os.kill(compiler, signal.SIGKILL)


def test_a_dead_builders_temporary_is_swept_a_live_ones_kept(tmp_path):
    cache = tmp_path / "cache"
    dead = stale_dir(cache, dead_pid())
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        live = stale_dir(cache, sleeper.pid, "4567cdef")
        fresh = stale_dir(cache, dead_pid(), "89ab0123")
        os.utime(fresh, None)  # just touched: a builder we cannot see may still be writing it
        lib = build.build_host_library(SOURCES, cache_dir=cache, cxx=str(fake_compiler(tmp_path, WRITES_OUTPUT)))
        assert lib.is_file()
        assert not dead.exists()
        assert live.exists() and (live / "unit.cpp.o").exists() and fresh.exists()
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the build's own handler is gone
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_sweep_never_follows_a_symlink(tmp_path):
    cache = tmp_path / "cache"
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("not the cache's")
    root = cache / f"v{build.FORMAT_VERSION}"
    root.mkdir(mode=0o700, parents=True)
    link = root / f"{'cd' * 32}.tmp-{dead_pid()}-0123abcd"
    link.symlink_to(target, target_is_directory=True)
    os.utime(link, (HOUR_AGO, HOUR_AGO), follow_symlinks=False)
    build.build_host_library(SOURCES, cache_dir=cache, cxx=str(fake_compiler(tmp_path, WRITES_OUTPUT)))
    assert (target / "keep.txt").read_text() == "not the cache's" and link.is_symlink()


def test_sigterm_inside_a_compilers_start_waits_for_it_to_be_listed(tmp_path):
    """A compiler's Popen can return after the compiler already runs: a SIGTERM then is acted on
    once the compiler is listed (killed by the unwinding), not inside Popen, which left it running
    (seen under load). The deferred signal still ends the process with -15."""
    script = (
        "import os, signal, sys, time\n"
        "from pypto_ast.emit import build\n"
        "with build._sigterm_cleans_up():\n"
        "    with build._sigterm_deferred():\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        time.sleep(0.2)\n"
        "        print('block ran to its end', flush=True)\n"
        "    print('after the block', flush=True)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == -signal.SIGTERM, run.stderr
    assert run.stdout.splitlines() == ["block ran to its end"]
