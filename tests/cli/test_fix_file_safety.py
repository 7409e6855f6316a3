"""``--fix`` and directory walking against hostile trees: read-only files, other owners,
hard links, symlinks out of the tree, dangling and looping links, and a killed parent."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from pypto_ast.files import ReadOnlyFileError, StaleFileError, discover, write_atomic
from pypto_ast.settings import Settings

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".pypto-lint.tmp")]


# -- read-only files -------------------------------------------------------------------------
@pytest.mark.usefixtures("toys")
@pytest.mark.parametrize("extra", [(), ("--exit-zero",)])
def test_fix_refuses_read_only_file_and_goes_on(cli, workdir, extra):
    ro = write(workdir / "a.py", "x = BAD\n")
    os.chmod(ro, 0o444)
    inode = ro.stat().st_ino
    other = write(workdir / "b.py", "x = BAD\n")
    run = cli("--fix", *extra, ".")
    assert ro.read_text() == "x = BAD\n"
    assert (ro.stat().st_ino, stat.S_IMODE(ro.stat().st_mode)) == (inode, 0o444)
    assert other.read_text() == "x = GOOD\n"  # linting went on
    assert "pypto-lint: error: a.py: not fixed: the file is read-only\n" in run.stderr
    assert "error[PTO901]" in run.stdout  # the unfixed finding is still shown
    assert run.exit_code == 2  # like any file we could not write, whatever --exit-zero says
    assert "Traceback" not in run.stderr
    assert leftovers(workdir) == []


@pytest.mark.usefixtures("toys")
def test_read_only_file_is_only_a_problem_when_fixing(cli, workdir):
    ro = write(workdir / "a.py", "x = BAD\n")
    os.chmod(ro, 0o444)
    assert cli("a.py").exit_code == 1
    run = cli("--diff", "a.py")
    assert run.exit_code == 1 and "read-only" not in run.stderr


def test_write_atomic_raises_read_only(tmp_path):
    f = write(tmp_path / "k.py", "old\n")
    os.chmod(f, 0o400)
    with pytest.raises(ReadOnlyFileError, match="k.py: not fixed: the file is read-only"):
        write_atomic(f, b"new\n", b"old\n")
    assert f.read_text() == "old\n" and leftovers(tmp_path) == []


# -- owner, group, hard links, mode ----------------------------------------------------------
@pytest.mark.usefixtures("toys")
@pytest.mark.skipif(not IS_ROOT, reason="giving a file to another user needs root")
def test_fix_keeps_owner_group_inode_and_mode(cli, workdir):
    f = write(workdir / "a.py", "x = BAD\n")
    os.chown(f, 12345, 12346)
    os.chmod(f, 0o664)
    before = f.stat()
    assert cli("--fix", "a.py").exit_code == 0
    after = f.stat()
    assert f.read_text() == "x = GOOD\n"
    assert (after.st_uid, after.st_gid, after.st_ino) == (12345, 12346, before.st_ino)
    assert stat.S_IMODE(after.st_mode) == 0o664
    assert leftovers(workdir) == []


@pytest.mark.usefixtures("toys")
@pytest.mark.skipif(not IS_ROOT, reason="giving a file to another group needs root")
def test_fix_keeps_group_alone(cli, workdir):
    f = write(workdir / "a.py", "x = BAD\n")
    os.chown(f, os.geteuid(), 12346)
    assert cli("--fix", "a.py").exit_code == 0
    assert f.read_text() == "x = GOOD\n" and f.stat().st_gid == 12346


@pytest.mark.usefixtures("toys")
def test_fix_keeps_hard_link_together(cli, workdir):
    f = write(workdir / "a.py", "x = BAD\n")
    os.chmod(f, 0o751)
    outside = workdir.parent / f"{workdir.name}-twin.py"
    os.link(f, outside)
    try:
        assert cli("--fix", "a.py").exit_code == 0
        assert f.read_text() == outside.read_text() == "x = GOOD\n"
        assert f.stat().st_ino == outside.stat().st_ino and f.stat().st_nlink == 2
        assert stat.S_IMODE(f.stat().st_mode) == 0o751
        assert leftovers(workdir) == []
    finally:
        outside.unlink()


@pytest.mark.usefixtures("toys")
def test_plain_file_is_still_replaced_atomically(cli, workdir):
    """One link, our own file: temp file + rename (a new inode), mode kept."""
    f = write(workdir / "a.py", "x = BAD\n")
    os.chmod(f, 0o640)
    inode = f.stat().st_ino
    assert cli("--fix", "a.py").exit_code == 0
    assert f.read_text() == "x = GOOD\n"
    assert f.stat().st_ino != inode and stat.S_IMODE(f.stat().st_mode) == 0o640


def test_in_place_write_refuses_stale_file(tmp_path):
    f = write(tmp_path / "k.py", "edited meanwhile\n")
    os.link(f, tmp_path / "twin.txt")
    with pytest.raises(StaleFileError, match="file changed since it was read"):
        write_atomic(f, b"new\n", b"old\n")
    assert f.read_text() == "edited meanwhile\n" and leftovers(tmp_path) == []


def test_in_place_write_failure_keeps_the_fixed_text(tmp_path, monkeypatch):
    """A failure after the original was truncated must not lose the fixed text."""
    f = write(tmp_path / "k.py", "old\n")
    os.link(f, tmp_path / "twin.txt")
    real_fsync = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:  # the first is the temp file, the second the original
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="the fixed text is kept in .*k.py.*pypto-lint.tmp"):
        write_atomic(f, b"new\n", b"old\n")
    (kept,) = leftovers(tmp_path)
    assert (tmp_path / kept).read_bytes() == b"new\n"


# -- walking: symlinks -----------------------------------------------------------------------
@pytest.fixture
def outside(tmp_path_factory):
    """A directory beside the tree, with a fixable file the tree must never edit."""
    folder = tmp_path_factory.mktemp("outside")
    write(folder / "victim.py", "x = BAD\n")
    write(folder / "pkg" / "deep.py", "x = BAD\n")
    return folder


@pytest.mark.usefixtures("toys")
def test_walk_does_not_follow_symlinks_out_of_the_tree(cli, workdir, outside):
    write(workdir / "a.py", "x = BAD\n")
    os.symlink(outside / "victim.py", workdir / "link.py")
    os.symlink(outside / "pkg", workdir / "linkdir")
    run = cli("--fix", ".")
    assert (workdir / "a.py").read_text() == "x = GOOD\n"
    assert (outside / "victim.py").read_text() == "x = BAD\n"
    assert (outside / "pkg" / "deep.py").read_text() == "x = BAD\n"
    assert "pypto-lint: warning: link.py: skipped: symlink to a file outside" in run.stderr
    assert run.exit_code == 0
    assert (workdir / "link.py").is_symlink()


@pytest.mark.usefixtures("toys")
def test_symlink_inside_the_tree_is_linted_once(cli, workdir):
    real = write(workdir / "pkg" / "real.py", "x = BAD\n")
    os.symlink(real, workdir / "alias.py")
    run = cli("--fix", "--output-format", "concise", ".")
    assert real.read_text() == "x = GOOD\n" and (workdir / "alias.py").is_symlink()
    assert "Found 1 error (1 fixed, 0 remaining)." in run.stderr
    assert "skipped" not in run.stderr


@pytest.mark.usefixtures("toys")
def test_symlink_named_on_the_command_line_is_followed(cli, workdir, outside):
    os.symlink(outside / "victim.py", workdir / "link.py")
    assert cli("--fix", "link.py").exit_code == 0
    assert (outside / "victim.py").read_text() == "x = GOOD\n"
    assert (workdir / "link.py").is_symlink()


def test_walk_root_given_through_a_symlink(tmp_path, monkeypatch):
    """The root is the resolved directory, so its own files are not 'outside'."""
    write(tmp_path / "real" / "a.py", "x = 1\n")
    os.symlink(tmp_path / "real", tmp_path / "via")
    os.symlink(tmp_path / "real" / "a.py", tmp_path / "real" / "b.py")
    monkeypatch.chdir(tmp_path)
    skipped = []
    assert discover(["via"], Settings(), root=tmp_path, warn=skipped.append) == ["via/a.py"]
    assert skipped == []


@pytest.mark.usefixtures("toys")
def test_dangling_and_looping_symlinks_warn_and_go_on(cli, workdir):
    fixable = write(workdir / "a.py", "x = BAD\n")
    os.symlink(workdir / "gone.py", workdir / "pkg_dangling.py")
    os.symlink("loop.py", workdir / "loop.py")
    os.symlink(workdir / "nowhere", workdir / "dir_dangling")  # no .py name: not ours to report
    run = cli("--fix", ".")
    assert run.exit_code == 0
    assert fixable.read_text() == "x = GOOD\n"
    assert "pypto-lint: warning: pkg_dangling.py: skipped: dangling symlink\n" in run.stderr
    assert "pypto-lint: warning: loop.py: skipped: symlink loop\n" in run.stderr
    assert "dir_dangling" not in run.stderr and "Traceback" not in run.stderr


def test_walk_skips_fifo_instead_of_hanging(tmp_path, monkeypatch):
    write(tmp_path / "a.py", "x = 1\n")
    os.mkfifo(tmp_path / "pipe.py")
    monkeypatch.chdir(tmp_path)
    skipped = []
    assert discover(["."], Settings(), root=tmp_path, warn=skipped.append) == ["a.py"]
    assert skipped == ["pipe.py: skipped: not a regular file"]


# -- a killed parent takes its pool workers along ----------------------------------------------
SLOW_LINES = 300_000  # "x = 1" lines: several seconds of linting per file
N_FILES = 17  # above POOL_THRESHOLD, so the run forks a pool


@pytest.fixture(scope="module")
def slow_tree(tmp_path_factory):
    folder = tmp_path_factory.mktemp("slow")
    text = "x = 1\n" * SLOW_LINES
    for i in range(N_FILES):
        write(folder / f"s{i:02}.py", text)
    return folder


def _procs() -> list[tuple[int, int, int, str]]:
    """(pid, ppid, pgid, state) of every process we can see."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                data = fh.read()
        except OSError:
            continue
        fields = data[data.rindex(")") + 2:].split()
        found.append((int(entry), int(fields[1]), int(fields[2]), fields[0]))
    return found


def _alive_in_group(pgid: int) -> list[int]:
    return [pid for pid, _, group, state in _procs() if group == pgid and state not in "ZX"]


def _foreground_signals() -> None:
    """Ctrl-C as a terminal's foreground job gets it: a suite started in the background by a
    shell without job control inherits SIGINT ignored, and pypto-lint would rightly keep that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_with_workers(exe: str, cwd: Path) -> tuple[subprocess.Popen, list[int]]:
    proc = subprocess.Popen(
        [exe, "--fix", "."], cwd=cwd, start_new_session=True, preexec_fn=_foreground_signals,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = [pid for pid, ppid, _, state in _procs() if ppid == proc.pid and state not in "ZX"]
        if len(workers) >= 2:
            time.sleep(0.5)  # let them take their first (slow) file
            return proc, workers
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"pypto-lint never started its pool workers: {proc.stderr.read().decode()}")


def _wait_gone(pgid: int, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := _alive_in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _wait_or_show_stack(proc: subprocess.Popen, seconds: float) -> int:
    """The exit code; if the run is still there after ``seconds``, fail with its threads' stacks
    (pypto-lint prints them on SIGUSR1) so a hang says where it hangs."""
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGUSR1)
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        pytest.fail(f"pypto-lint did not exit within {seconds} s; its stacks:\n{proc.stderr.read().decode()[-6000:]}")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc to find the workers")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="with one CPU pypto-lint lints serially, no pool")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_workers_die_with_the_parent(exe, slow_tree, how):
    proc, workers = _start_with_workers(exe, slow_tree)
    pgid = proc.pid  # start_new_session: the parent leads its own group
    try:
        if how == "SIGINT":  # Ctrl-C: the terminal signals the whole group
            os.killpg(pgid, signal.SIGINT)
        else:
            os.kill(proc.pid, getattr(signal, how))
        code = _wait_or_show_stack(proc, 30)
        survivors = _wait_gone(pgid, 5)
        if survivors:
            os.killpg(pgid, signal.SIGKILL)  # only the group this test started; frees stderr
        stderr = proc.stderr.read().decode()
        assert survivors == [], f"workers {survivors} outlived the parent (was {workers})"
        if how == "SIGKILL":
            assert code == -signal.SIGKILL
        else:
            assert "Traceback" not in stderr, stderr
            assert code != 0
        if how == "SIGTERM":
            assert code == 128 + signal.SIGTERM
    finally:
        if _alive_in_group(pgid):
            os.killpg(pgid, signal.SIGKILL)  # only the group this test started
        proc.stderr.close()
