"""``pypto-transpile doctor``: is this machine ready for a backend, and if not, what to do.

Each check reports ``ok``, ``fail`` or ``warn`` with what it found and, when not ok, the fix.
A check lists the backends that need it; the exit status is 0 exactly when every check the chosen
backend needs is ok.  The checks are the PyPTO FAQ's (driver >= 25.2.0 and CANN >= 8.5.0 read from
their ``version.info``, a device id chosen) plus what pypto-ast itself uses (torch, torch_npu of the
same version, the host compiler, graphviz).  Nothing heavy is imported here: torch's presence is
read from its metadata and torch_npu's import is tried in a child process (it fails without CANN,
and a failed native import can leave a process in a bad state).
"""

from __future__ import annotations

import glob
import importlib.metadata
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Mapping, Optional

from . import knobs
from .emit import cann

ALL = ("interp", "host", "npu")
DEVICE_NODES = "/dev/davinci[0-9]*"


@dataclass
class Check:
    name: str
    status: str  # ok | fail | warn
    found: str
    fix: str = ""
    needed_by: tuple = field(default_factory=tuple)


def _version(package: str) -> Optional[str]:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _release(version: str) -> tuple:
    """``2.13.0+cpu`` / ``2.13.0.post1`` -> (2, 13, 0): what torch and torch_npu must share."""
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0])[:3])


def check_python() -> Check:
    return Check("python", "ok", f"{platform.python_version()} ({sys.executable})", needed_by=ALL)


def check_torch(environ: Mapping[str, str], python: str = sys.executable) -> Check:
    """torch installed, and ``import torch`` working in a child process: with torch >= 2.5 it imports
    every installed device extension, so a torch_npu without CANN makes ``import torch`` itself fail."""
    version = _version("torch")
    if version is None:
        return Check("torch", "fail", "not installed", "pip install torch==2.13.0 (the CPU build; then "
                     "pip install -e \".[run]\")", needed_by=ALL)
    ok, why = _imports(python, "torch", environ)
    if ok:
        return Check("torch", "ok", version, needed_by=ALL)
    if "backend extension" in why:
        return Check("torch", "fail", f"{version}, but `import torch` fails: {why}",
                     "export TORCH_DEVICE_BACKEND_AUTOLOAD=0 (torch then skips the broken extension; the drop-in "
                     "and pytest plugin set it for you), or install CANN and `source <CANN>/set_env.sh`, or "
                     "pip uninstall torch_npu", needed_by=ALL)
    return Check("torch", "fail", f"{version}, but `import torch` fails: {why}", "reinstall torch==2.13.0",
                 needed_by=ALL)


def _imports(python: str, module: str, environ: Mapping[str, str]) -> tuple:
    """(ok, last error line) of ``import module`` in a child process."""
    try:
        done = subprocess.run([python, "-c", f"import {module}"], capture_output=True, text=True, timeout=180,
                              env=dict(environ))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return done.returncode == 0, (lines[-1] if lines else f"exit status {done.returncode}")


def check_host_compiler() -> Check:
    path = shutil.which(knobs.cxx)
    if path is None:
        return Check("host compiler", "fail", f"{knobs.cxx!r} not on PATH",
                     "install g++ >= 9 (apt install g++), or set PYPTO_AST_CXX to a C++17 compiler", needed_by=("host",))
    try:
        first = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("host compiler", "fail", f"{path}: cannot run it ({exc})",
                     "reinstall it, or set PYPTO_AST_CXX to another C++17 compiler", needed_by=("host",))
    return Check("host compiler", "ok", f"{first[0] if first else path} ({path})", needed_by=("host",))


def check_torch_npu(environ: Mapping[str, str], python: str = sys.executable) -> list:
    """Two checks: torch_npu installed with torch's version, and importable (in a child process)."""
    torch_version, npu_version = _version("torch"), _version("torch_npu")
    if npu_version is None:
        return [Check("torch_npu", "fail", "not installed",
                      f"pip install torch_npu=={torch_version.split('+')[0] if torch_version else '2.13.0'} "
                      "(or pip install -e \".[npu]\")", needed_by=("npu",))]
    checks = []
    if torch_version and _release(torch_version) != _release(npu_version):
        checks.append(Check("torch_npu", "fail", f"{npu_version}, but torch is {torch_version}",
                            f"install the torch_npu of torch {torch_version.split('+')[0]}, or the torch of "
                            f"torch_npu {npu_version}", needed_by=("npu",)))
    else:
        checks.append(Check("torch_npu", "ok", f"{npu_version} (torch {torch_version})", needed_by=("npu",)))
    ok, why = _imports(python, "torch_npu", dict(environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0"))
    if ok:
        checks.append(Check("torch_npu import", "ok", "imports", needed_by=("npu",)))
    else:
        fix = ("install CANN >= 8.5.0 and `source <CANN>/set_env.sh` before starting Python (torch_npu loads "
               "CANN's libraries at import)" if "lib" in why and ".so" in why else
               "reinstall torch_npu; run `python -c 'import torch_npu'` to see the whole error")
        checks.append(Check("torch_npu import", "fail", why, fix, needed_by=("npu",)))
    return checks


def check_cann(environ: Mapping[str, str]) -> list:
    try:
        toolkit = cann.find_toolkit(environ)
    except cann.ToolkitError as exc:
        return [Check("CANN toolkit", "fail", exc.message, exc.fix, needed_by=("npu",))]
    where = f"{toolkit.root} (from {toolkit.source}; {toolkit.version_file.name} in {toolkit.version_file.parent})"
    checks = []
    if toolkit.version.at_least(cann.MIN_CANN):
        checks.append(Check("CANN toolkit", "ok", f"{toolkit.version} at {where}", needed_by=("npu",)))
    else:
        checks.append(Check("CANN toolkit", "fail", f"{toolkit.version} at {where}: older than "
                            f"{'.'.join(map(str, cann.MIN_CANN))}", "install CANN >= 8.5.0 (PyPTO's minimum) and "
                            "`source <CANN>/set_env.sh`", needed_by=("npu",)))
    if toolkit.compiler is None:
        checks.append(Check("bisheng", "fail", f"no bisheng under {toolkit.root} or on PATH",
                            "install the toolkit's compiler package (bisheng ships with the CANN toolkit)",
                            needed_by=("npu",)))
    else:
        checks.append(Check("bisheng", "ok", str(toolkit.compiler), needed_by=("npu",)))
    return checks


def check_driver(environ: Mapping[str, str]) -> Check:
    try:
        version = cann.driver_version(environ)
    except cann.ToolkitError as exc:
        return Check("NPU driver", "fail", exc.message, exc.fix, needed_by=("npu",))
    if version.at_least(cann.MIN_DRIVER):
        return Check("NPU driver", "ok", str(version), needed_by=("npu",))
    return Check("NPU driver", "fail", f"{version}: older than {'.'.join(map(str, cann.MIN_DRIVER))}",
                 "upgrade the Ascend driver (HDK) to >= 25.2.0 (PyPTO's minimum; 25.5.0 recommended)",
                 needed_by=("npu",))


def check_devices(environ: Mapping[str, str], nodes: str = DEVICE_NODES) -> list:
    found = sorted(glob.glob(nodes))
    checks = [Check("NPU device", "ok", f"{len(found)} visible ({', '.join(found[:4])}{', ...' if len(found) > 4 else ''})",
                    needed_by=("npu",)) if found else
              Check("NPU device", "fail", "no /dev/davinci* device node",
                    "run on a machine with an Ascend NPU (npu-smi info lists them), or in a container started with "
                    "the devices passed through; without one use --backend host", needed_by=("npu",))]
    value = environ.get("TILE_FWK_DEVICE_ID", "").strip()
    if not value:
        checks.append(Check("device id", "fail", "TILE_FWK_DEVICE_ID is not set",
                            "export TILE_FWK_DEVICE_ID=0 (or call torch.npu.set_device(id) before the first kernel)",
                            needed_by=("npu",)))
    elif not value.isdigit():
        checks.append(Check("device id", "fail", f"TILE_FWK_DEVICE_ID={value!r} is not a device number",
                            "export TILE_FWK_DEVICE_ID=0 (a number npu-smi info lists)", needed_by=("npu",)))
    elif found and int(value) >= len(found):
        checks.append(Check("device id", "fail", f"TILE_FWK_DEVICE_ID={value}, but {len(found)} device(s) are visible",
                            f"export TILE_FWK_DEVICE_ID to one of 0..{len(found) - 1}", needed_by=("npu",)))
    else:
        checks.append(Check("device id", "ok", f"TILE_FWK_DEVICE_ID={value}", needed_by=("npu",)))
    return checks


def check_graphviz() -> Check:
    path = shutil.which("dot")
    if path:
        return Check("graphviz", "ok", f"{path} (for --emit dot rendering)")
    return Check("graphviz", "warn", "`dot` not on PATH (only rendering --emit dot output needs it)",
                 "apt install graphviz")


def run_checks(environ: Optional[Mapping[str, str]] = None, *, python: str = sys.executable,
               device_nodes: str = DEVICE_NODES) -> list:
    environ = dict(os.environ if environ is None else environ)
    return [check_python(), check_torch(environ, python), check_host_compiler(), *check_torch_npu(environ, python),
            *check_cann(environ), check_driver(environ), *check_devices(environ, device_nodes), check_graphviz()]


def ready(checks: list, backend: str) -> bool:
    return all(c.status == "ok" for c in checks if backend in c.needed_by)


def render(checks: list, backend: str) -> str:
    lines = [f"pypto-ast doctor: what --backend {backend} needs on this machine"]
    for c in checks:
        mark = {"ok": "ok  ", "fail": "FAIL", "warn": "warn"}[c.status]
        if c.status == "fail" and backend not in c.needed_by:
            mark = "--  "  # missing, but the chosen backend does not need it
        lines.append(f"  {mark}  {c.name}: {c.found}")
        if c.status != "ok" and c.fix:
            lines.append(f"        fix: {c.fix}")
    missing = [c.name for c in checks if backend in c.needed_by and c.status != "ok"]
    lines.append(f"ready for --backend {backend}" if not missing else
                 f"not ready for --backend {backend}: {', '.join(missing)} (see the fixes above)")
    return "\n".join(lines) + "\n"


def as_json(checks: list, backend: str) -> dict:
    return {"backend": backend, "ready": ready(checks, backend), "checks": [asdict(c) for c in checks]}
