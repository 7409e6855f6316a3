"""The NPU toolchain without an NPU: CANN discovery and versions (emit/cann.py), the bisheng build
(emit/npu_build.py, ``--build --backend npu``) and ``pypto-transpile doctor``, against fake CANN
trees in temporary directories and a fake ``bisheng`` that records its command line, succeeds,
fails with a message at a kernel line, or hangs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pypto_ast import doctor, pipeline
from pypto_ast.emit import cann, npu_build

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "clean_row_softmax.py"

FAKE_BISHENG = """\
#!{python}
import os, sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print(os.environ.get("FAKE_BISHENG_VERSION", "fake bisheng 1.0"))
    sys.exit(0)
with open(os.environ["FAKE_BISHENG_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
mode = os.environ.get("FAKE_BISHENG_MODE", "ok")
if mode == "hang":
    time.sleep(120)
if mode == "fail" and "-c" in args:
    sys.stderr.write(os.environ["FAKE_BISHENG_ERROR"] + "\\n")
    sys.exit(1)
with open(args[args.index("-o") + 1], "w") as out:
    out.write("object of " + " ".join(args))
"""


def fake_cann(root: Path, version: str = "8.5.0.2.220", *, compiler: bool = True, layout: str = "opp") -> Path:
    """A CANN toolkit tree: ``opp/version.info`` (or the top-level one) and a recording bisheng."""
    info = root / ("opp/version.info" if layout == "opp" else "version.info")
    info.parent.mkdir(parents=True, exist_ok=True)
    info.write_text(f"Version={version}\nversion_dir={version[:5]}\ntimestamp=20251117_000024591\n")
    if compiler:
        bisheng = root / f"{cann.machine_arch()}-linux" / "ccec_compiler" / "bin" / "bisheng"
        bisheng.parent.mkdir(parents=True)
        bisheng.write_text(FAKE_BISHENG.format(python=sys.executable))
        bisheng.chmod(0o755)
    return root


def fake_driver(root: Path, version: str = "25.3.rc1") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "version.info").write_text(f"Version={version}\nascendhal_version=7.35.23\npackage_version={version}\n")
    return root


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A clean environment (no CANN variables) with a private build cache and the fake's log."""
    for name in (*cann.ROOT_VARIABLES, cann.DRIVER_VARIABLE, "TILE_FWK_DEVICE_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYPTO_AST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_BISHENG_LOG", str(tmp_path / "bisheng.log"))
    from pypto_ast import knobs

    monkeypatch.setattr(knobs, "cache_dir", tmp_path / "cache")
    monkeypatch.setattr(knobs, "always_compile", False)
    return dict(os.environ)


def calls(tmp_path) -> list:
    log = tmp_path / "bisheng.log"
    return log.read_text().splitlines() if log.exists() else []


# =============================================================================================
# versions and discovery
# =============================================================================================
@pytest.mark.parametrize("text, numbers, candidate", [
    ("8.5.0.2.220", (8, 5, 0, 2, 220), False), ("25.3.rc1", (25, 3), True), ("8.5.RC1", (8, 5), True),
    ('"9.0.0"', (9, 0, 0), False), ("25.5.0.B120", (25, 5, 0), False),
])
def test_parse_version(text, numbers, candidate):
    version = cann.parse_version(text)
    assert version.numbers == numbers and version.candidate is candidate


@pytest.mark.parametrize("text, minimum, ok", [
    ("8.5.0.2.220", (8, 5, 0), True), ("8.5.0", (8, 5, 0), True), ("8.3.0", (8, 5, 0), False),
    ("9.0.0", (8, 5, 0), True), ("8.5.RC1", (8, 5, 0), False), ("25.3.rc1", (25, 2, 0), True),
    ("25.2.rc1", (25, 2, 0), False), ("25.10.0", (25, 2, 0), True),
])
def test_versions_against_minimums(text, minimum, ok):
    assert cann.parse_version(text).at_least(minimum) is ok


def test_malformed_version_files(tmp_path):
    (tmp_path / "a.info").write_text("Version=banana\n")
    (tmp_path / "b.info").write_text("timestamp=1\n")
    with pytest.raises(cann.ToolkitError, match="not a version"):
        cann.read_version_info(tmp_path / "a.info")
    with pytest.raises(cann.ToolkitError, match="no Version= line"):
        cann.read_version_info(tmp_path / "b.info")


def test_discovery_order(tmp_path, env):
    first, second = fake_cann(tmp_path / "first"), fake_cann(tmp_path / "second", "8.6.0", layout="top")
    found = cann.find_toolkit({"ASCEND_TOOLKIT_HOME": str(second), "ASCEND_HOME_PATH": str(first)})
    assert found.root == first and found.source == "ASCEND_HOME_PATH" and str(found.version) == "8.5.0.2.220"
    found = cann.find_toolkit({"ASCEND_TOOLKIT_HOME": str(second), "ASCEND_CANN_PACKAGE_PATH": str(first)})
    assert found.root == second and found.version_file.name == "version.info" and found.compiler is not None
    # a variable that is set decides: a wrong one is an error, never a silent fall back to a default install
    with pytest.raises(cann.ToolkitError, match=r"ASCEND_HOME_PATH=.*missing: no such directory"):
        cann.find_toolkit({"ASCEND_HOME_PATH": str(tmp_path / "missing"), "ASCEND_TOOLKIT_HOME": str(first)})
    (tmp_path / "empty").mkdir()
    with pytest.raises(cann.ToolkitError, match="not a CANN toolkit"):
        cann.find_toolkit({"ASCEND_HOME_PATH": str(tmp_path / "empty")})


def test_no_compiler_in_the_toolkit(tmp_path, env):
    root = fake_cann(tmp_path / "cann", compiler=False)
    toolkit = cann.find_toolkit({"ASCEND_HOME_PATH": str(root), "PATH": str(tmp_path)})
    assert toolkit.compiler is None
    program = pipeline.lower_file(str(EXAMPLE))
    with pytest.raises(pipeline.PipelineError, match="has no bisheng compiler"):
        pipeline.build_npu(program, environ={"ASCEND_HOME_PATH": str(root), "PATH": str(tmp_path)})


# =============================================================================================
# the build
# =============================================================================================
def test_arch_flags_per_core_and_cann_version(tmp_path, env):
    eight = cann.find_toolkit({"ASCEND_HOME_PATH": str(fake_cann(tmp_path / "c8"))})
    nine = cann.find_toolkit({"ASCEND_HOME_PATH": str(fake_cann(tmp_path / "c9", "9.0.0"))})
    assert npu_build.arch_flags(eight, "ascend910b", "AIV") == ["-x", "cce", "--cce-aicore-arch=dav-c220-vec"]
    assert npu_build.arch_flags(eight, "ascend910_93", "AIC") == ["-x", "cce", "--cce-aicore-arch=dav-c220-cube"]
    assert npu_build.arch_flags(nine, "ascend910b", "AIC") == ["-x", "asc", "--npu-arch=dav-2201"]
    with pytest.raises(cann.ToolkitError, match="no NPU build for SoC"):
        npu_build.arch_flags(eight, "ascend310p", "AIV")


def test_cli_build_invokes_bisheng_per_kernel(tmp_path, env):
    """The issue's check: a fake CANN tree and a recording bisheng; one compile per kernel with the SoC's
    aicore arch, one link; the launcher launches on the given stream and never synchronises."""
    root = fake_cann(tmp_path / "cann")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "pypto_ast.cli.transpile", str(EXAMPLE), "--build", "--backend",
                           "npu", "-o", str(out)], capture_output=True, text=True, cwd=tmp_path,
                          env=dict(env, ASCEND_HOME_PATH=str(root), PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    assert "(npu backend)" in done.stdout and (out / "libscaled_softmax.so").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    compiles = [c for c in calls(tmp_path) if " -c " in c]
    assert len(compiles) == len(manifest["kernels"]) + 2 and len(manifest["kernels"]) >= 1
    assert compiles[-2].endswith("-c control_npu.cpp -o control_npu.o") and "--cce-aicore-arch" not in compiles[-2]
    assert compiles[-1].endswith("-c pypto_npu_runtime.cpp -o pypto_npu_runtime.o")
    control = (out / "control_npu.cpp").read_text()
    assert 'extern "C" int pypto_npu_run(void* stream, void** tensors' in control
    assert "pypto_host::Tiling(tiling, sizeof tiling)" in control and "PYPTO_NPU_KERNEL(" in control
    for line, kernel in zip(compiles, manifest["kernels"]):
        arch = "dav-c220-cube" if kernel["kind"] == "cube" else "dav-c220-vec"
        assert f"--cce-aicore-arch={arch}" in line and f"-c {kernel['kernel']}_launch.cpp" in line
        assert f"-I{root}" in line and "-std=c++17" in line
    link = calls(tmp_path)[-1]
    assert link.startswith("-shared") and "-lascendcl" in link
    launcher = (out / f"{manifest['kernels'][0]['kernel']}_launch.cpp").read_text()
    assert "<<<blocks, nullptr, stream>>>" in launcher and "Synchronize" not in launcher
    assert f'#include "{manifest["kernels"][0]["file"]}"' in launcher


def test_compiler_error_points_at_the_python_line(tmp_path, env):
    root = fake_cann(tmp_path / "cann")
    line = next(i for i, text in enumerate(EXAMPLE.read_text().splitlines(), 1) if "amax" in text)
    error = f"{EXAMPLE.name}:{line}:17: error: no matching function for call to 'ReduceMax'"
    done = subprocess.run([sys.executable, "-m", "pypto_ast.cli.transpile", str(EXAMPLE), "--build", "--backend",
                           "npu", "-q"], capture_output=True, text=True, cwd=ROOT,
                          env=dict(env, ASCEND_HOME_PATH=str(root), PYTHONPATH=str(ROOT), FAKE_BISHENG_MODE="fail",
                                   FAKE_BISHENG_ERROR=error))
    assert done.returncode == 1, done.stderr
    assert "error[PTO112] bisheng: no matching function for call to 'ReduceMax'" in done.stderr
    assert f"--> examples/{EXAMPLE.name}:{line}:" in done.stderr and "Traceback" not in done.stderr


def test_compiler_error_elsewhere_keeps_the_message(tmp_path, env):
    root = fake_cann(tmp_path / "cann")
    program = pipeline.lower_file(str(EXAMPLE))
    environ = {"ASCEND_HOME_PATH": str(root)}
    os.environ.update(FAKE_BISHENG_MODE="fail", FAKE_BISHENG_ERROR="kernel_operator.h:10:3: error: unknown type 'X'")
    try:
        with pytest.raises(pipeline.PipelineError, match=r"(?s)bisheng failed on .*unknown type 'X'"):
            pipeline.build_npu(program, environ=environ)
    finally:
        for name in ("FAKE_BISHENG_MODE", "FAKE_BISHENG_ERROR"):
            os.environ.pop(name)


def test_a_hung_compiler_is_stopped(tmp_path, env, monkeypatch):
    root = fake_cann(tmp_path / "cann")
    toolkit = cann.find_toolkit({"ASCEND_HOME_PATH": str(root)})
    files = pipeline.emit(pipeline.lower_file(str(EXAMPLE)), "ascendc", npu=True)
    monkeypatch.setenv("FAKE_BISHENG_MODE", "hang")
    with pytest.raises(npu_build.NpuBuildError, match="did not finish in 1 s: stopped"):
        npu_build.build_npu_library(files, toolkit, timeout=1)
    assert not list((tmp_path / "cache").rglob("libpypto_npu.so"))  # nothing half-built is published


def test_cache_key_covers_cann_version_and_soc(tmp_path, env):
    files = pipeline.emit(pipeline.lower_file(str(EXAMPLE)), "ascendc", npu=True)
    first = cann.find_toolkit({"ASCEND_HOME_PATH": str(fake_cann(tmp_path / "a"))})
    newer = cann.find_toolkit({"ASCEND_HOME_PATH": str(fake_cann(tmp_path / "b", "8.6.0"))})
    lib = npu_build.build_npu_library(files, first)
    count = len(calls(tmp_path))
    assert npu_build.build_npu_library(files, first) == lib and len(calls(tmp_path)) == count  # a hit: no compiler run
    others = {npu_build.build_npu_library(files, newer), npu_build.build_npu_library(files, first, soc="ascend910_93")}
    assert lib not in others and len(others) == 2 and len(calls(tmp_path)) > count
    lib.write_text("tampered")  # a damaged entry is rebuilt, never used
    before = len(calls(tmp_path))
    assert npu_build.build_npu_library(files, first) == lib and len(calls(tmp_path)) > before
    assert lib.read_text().startswith("object of -shared")


# =============================================================================================
# doctor
# =============================================================================================
def by_name(checks) -> dict:
    return {c.name: c for c in checks}


def test_doctor_on_a_machine_without_cann(tmp_path, env):
    checks = doctor.run_checks({"PATH": os.environ["PATH"]}, device_nodes=str(tmp_path / "davinci*"))
    named = by_name(checks)
    for name in ("CANN toolkit", "NPU driver", "NPU device", "device id"):
        assert named[name].status == "fail" and named[name].fix, name
    assert not doctor.ready(checks, "npu")
    assert "CANN toolkit" in doctor.render(checks, "npu") and "not ready for --backend npu" in doctor.render(checks, "npu")
    assert doctor.ready(checks, "host") == (named["host compiler"].status == "ok")
    assert doctor.ready(checks, "interp")


def test_doctor_with_a_full_fake_install(tmp_path, env):
    root, driver = fake_cann(tmp_path / "cann"), fake_driver(tmp_path / "driver")
    (tmp_path / "davinci0").touch()
    (tmp_path / "davinci1").touch()
    environ = {"PATH": os.environ["PATH"], "ASCEND_HOME_PATH": str(root), cann.DRIVER_VARIABLE: str(driver),
               "TILE_FWK_DEVICE_ID": "1"}
    named = by_name(doctor.run_checks(environ, device_nodes=str(tmp_path / "davinci*")))
    for name in ("CANN toolkit", "bisheng", "NPU driver", "NPU device", "device id"):
        assert named[name].status == "ok", (name, named[name])
    assert "2 visible" in named["NPU device"].found
    environ["TILE_FWK_DEVICE_ID"] = "2"
    assert by_name(doctor.run_checks(environ, device_nodes=str(tmp_path / "davinci*")))["device id"].status == "fail"


@pytest.mark.parametrize("cann_version, driver_version, failing", [
    ("8.3.0", "25.3.rc1", "CANN toolkit"), ("8.5.0", "24.1.0", "NPU driver"), ("8.5.RC1", "25.5.0", "CANN toolkit"),
])
def test_doctor_names_an_old_version(tmp_path, env, cann_version, driver_version, failing):
    environ = {"PATH": os.environ["PATH"], "ASCEND_HOME_PATH": str(fake_cann(tmp_path / "cann", cann_version)),
               cann.DRIVER_VARIABLE: str(fake_driver(tmp_path / "driver", driver_version))}
    check = by_name(doctor.run_checks(environ, device_nodes=str(tmp_path / "none*")))[failing]
    assert check.status == "fail" and "older than" in check.found and check.fix


def test_doctor_malformed_driver_file(tmp_path, env):
    driver = tmp_path / "driver"
    driver.mkdir()
    (driver / "version.info").write_text("garbage\n")
    check = doctor.check_driver({cann.DRIVER_VARIABLE: str(driver)})
    assert check.status == "fail" and "no Version= line" in check.found


def test_doctor_cli_exit_status_and_json(tmp_path, env):
    base = [sys.executable, "-m", "pypto_ast.cli.transpile", "doctor"]
    environ = dict(env, PYTHONPATH=str(ROOT), PYPTO_AST_ASCEND_DRIVER=str(tmp_path / "nodriver"))
    npu = subprocess.run(base + ["--json"], capture_output=True, text=True, env=environ)
    report = json.loads(npu.stdout)
    assert npu.returncode == 1 and report["backend"] == "npu" and not report["ready"]
    assert {"CANN toolkit", "NPU driver", "device id"} <= {c["name"] for c in report["checks"] if c["status"] == "fail"}
    interp = subprocess.run(base + ["--backend", "interp"], capture_output=True, text=True, env=environ)
    assert interp.returncode == 0 and "ready for --backend interp" in interp.stdout


def broken_torch_npu(site: Path) -> Path:
    """A torch_npu installed as the real wheel is on a machine without CANN: its metadata, the
    ``torch.backends`` entry point torch >= 2.5 loads at ``import torch``, an import that fails in a
    native library load."""
    package = site / "torch_npu"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('libhccl.so: cannot open shared object file: "
                                         "No such file or directory')\n")
    info = site / "torch_npu-2.13.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.13.0\n")
    (info / "entry_points.txt").write_text("[torch.backends]\ntorch_npu = torch_npu:_autoload\n")
    return site


def test_doctor_with_torch_npu_but_no_cann(tmp_path, env):
    """The state `pip install torch_npu` leaves on a machine without CANN: `import torch` fails (the
    autoloaded extension), torch_npu's import fails on libhccl.so; both named, each with its fix."""
    pytest.importorskip("torch")
    environ = dict(env, PYTHONPATH=str(broken_torch_npu(tmp_path / "site")))
    environ.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    torch_check = doctor.check_torch(environ)
    assert torch_check.status == "fail" and "backend extension" in torch_check.found
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in torch_check.fix
    sys.path.insert(0, str(tmp_path / "site"))  # the metadata check reads this process's path
    try:
        import importlib

        importlib.invalidate_caches()
        named = by_name(doctor.check_torch_npu(environ))
    finally:
        sys.path.remove(str(tmp_path / "site"))
    assert named["torch_npu"].status == "ok" and "2.13.0" in named["torch_npu"].found
    assert named["torch_npu import"].status == "fail" and "libhccl.so" in named["torch_npu import"].found
    assert "CANN" in named["torch_npu import"].fix


def test_dropin_runs_with_a_torch_npu_that_cannot_load(tmp_path, env):
    """The drop-in keeps torch importable (no extension autoload) and serves its torch_npu stub."""
    pytest.importorskip("torch")
    script = tmp_path / "script.py"
    script.write_text("import torch\nimport torch_npu\nimport pypto\n"
                      "print('stub' if getattr(torch_npu, '__pypto_ast_dropin__', False) else 'real', "
                      "torch.randn(2, device='npu:0').device)\n")
    environ = dict(env, PYTHONPATH=os.pathsep.join([str(broken_torch_npu(tmp_path / "site")), str(ROOT)]))
    environ.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    done = subprocess.run([sys.executable, "-m", "pypto_ast.dropin", str(script)], capture_output=True, text=True,
                          env=environ, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["stub", "cpu"]


def test_doctor_needs_neither_torch_nor_numpy(tmp_path, env):
    probe = textwrap.dedent("""
        import sys
        from pypto_ast import doctor
        doctor.run_checks()
        print(sorted(m for m in ("torch", "numpy", "torch_npu") if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
