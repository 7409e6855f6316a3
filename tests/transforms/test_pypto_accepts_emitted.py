"""The official pypto 0.2.0 frontend accepts the explicit source we emit for every clean example.

Each emitted kernel runs in SIM mode in its own subprocess and scratch directory (SIM writes
``output/`` into the cwd and logs under ``$HOME/ascend``; a rejected kernel may kill the
process), the way ``scripts/check_examples_pypto.py`` drives the wheel. SIM computes no
values, so this checks acceptance — parse, trace, passes, simulation — not numbers (our
interpreter checks those in test_pyemit.py). About 9 s per kernel, hence ``slow``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from pypto_ast import live, pipeline  # noqa: E402
from pypto_ast.ir.pyemit import emit_python  # noqa: E402


def _official_pypto() -> str | None:
    """The installed wheel's version; our own ``pypto_ast.lang`` is not the wheel."""
    if importlib.util.find_spec("pypto") is None:
        return None
    try:
        return importlib.metadata.version("pypto")
    except importlib.metadata.PackageNotFoundError:
        return None


VERSION = _official_pypto()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(VERSION is None, reason="the official pypto wheel is not installed (pip install pypto==0.2.0)"),
    pytest.mark.skipif(VERSION not in (None, "0.2.0"), reason=f"the emitter targets pypto 0.2.0, found {VERSION}"),
]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLEAN = sorted(EXAMPLES.glob("clean_*.py"))
TIMEOUT = 120
ACCEPTED = "EMITTED-KERNEL-ACCEPTED"
# The cost model launches matplotlib swim-lane scripts that fail harmlessly without matplotlib.
NOISE = ("swim_lane", "draw_pipe")

DRIVER = f'''\
"""Call the emitted kernel with the official pypto, in SIM mode, on the example's inputs."""
import importlib.util
import inspect
import os
import sys

os.environ.pop("ASCEND_HOME_PATH", None)  # before importing pypto: SIM is then the default
import torch  # noqa: F401
import pypto
from pypto.frontend.parser.entry import JitCallableWrapper


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


example = load("example_source", sys.argv[1])  # its `import pypto` is the real wheel here
emitted = load("emitted_kernel", "emitted_kernel.py")
kernels = [v for v in vars(emitted).values() if isinstance(v, JitCallableWrapper)]
assert len(kernels) == 1, kernels
kernel = kernels[0]
assert kernel._runtime_options.get("run_mode") == pypto.RunMode.SIM.value, kernel._runtime_options
inputs = example.example_inputs()
params = inspect.signature(kernel._original_func).parameters
tensors = [inputs[n] for n, p in params.items() if p.annotation is not inspect.Parameter.empty]
scalars = {{n: inputs[n] for n, p in params.items() if p.annotation is inspect.Parameter.empty and n in inputs}}
kernel(*tensors, **scalars)  # frontend.jit: tensor parameters positionally, the rest by keyword
print("{ACCEPTED}", flush=True)
'''


def _tracebacks(stderr: str) -> list:
    """Traceback blocks in stderr, minus the swim-lane scripts' harmless ones."""
    blocks = re.split(r"(?m)^(?=Traceback \(most recent call last\):)", stderr)
    return [b for b in blocks if b.startswith("Traceback") and not any(n in b for n in NOISE)]


def _log_errors(home: Path) -> list:
    errors = []
    for log in sorted((home / "ascend" / "log").rglob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("[ERROR]") and not any(n in line for n in NOISE):
                errors.append(line)
    return errors


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_official_frontend_accepts_emitted_kernel(path, tmp_path):
    module = live.load_module(str(path))
    program = pipeline.lower(live.find_kernel(module), module.example_inputs())
    (tmp_path / "emitted_kernel.py").write_text(emit_python(program))
    (tmp_path / "driver.py").write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"}
    env.update(HOME=str(tmp_path), PYTHONFAULTHANDLER="1")
    try:
        proc = subprocess.run([sys.executable, "driver.py", str(path)], cwd=tmp_path, env=env, check=False,
                              capture_output=True, text=True, errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"pypto {VERSION} SIM run of the emitted {path.stem} took more than {TIMEOUT} s")
    where = f"(emitted source and logs: {tmp_path})"
    assert proc.returncode == 0, f"exit {proc.returncode} {where}\n{proc.stderr[-3000:]}"
    assert ACCEPTED in proc.stdout, f"no acceptance marker {where}\n{proc.stdout[-2000:]}"
    assert not _tracebacks(proc.stderr), f"{where}\n" + "\n".join(_tracebacks(proc.stderr))[-3000:]
    assert not _log_errors(tmp_path), f"{where}\n" + "\n".join(_log_errors(tmp_path)[:10])
    shutil.rmtree(tmp_path / "output", ignore_errors=True)  # ~2 MB of SIM artefacts per kernel
