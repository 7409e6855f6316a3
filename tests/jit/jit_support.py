"""Helpers of the ``@pypto_ast.jit`` tests (imported by name: this directory is on sys.path):
backends, kernel files, seeding a fresh build cache, a child-process runner for what only a new
process shows.  The fixtures are in conftest.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

try:
    import torch
except ImportError:  # the test modules skip themselves (pytest.importorskip)
    torch = None

from support import BACKENDS, needs_cxx, write  # noqa: F401 - the jit tests import them from here

ROOT = Path(__file__).resolve().parents[2]


def seed_runtime(cache: Path) -> None:
    """Copy the host runtime's prebuilt objects from the suite's cache into ``cache`` (building
    them takes about a minute; the programs' own libraries are what these tests build)."""
    from pypto_ast.emit import build, host_runtime

    objects = host_runtime.runtime_objects()  # built once into the suite's cache
    root = cache / f"v{build.FORMAT_VERSION}"
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(cache, 0o700)
    os.chmod(root, 0o700)
    entry = objects[0].parent
    if not (root / entry.name).exists():
        shutil.copytree(entry, root / entry.name)


CHILD = '''
import json, sys, time
import torch
from pypto_ast import live

module = live.load_module(sys.argv[1])
kernel = getattr(module, sys.argv[2])
inputs = module.example_inputs()
expected = module.expected(**{k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()})
start = time.perf_counter()
returned = kernel(**inputs)
first = time.perf_counter() - start
got = returned if returned is not None else inputs[module.OUTPUT]
print(json.dumps({"ok": bool(torch.allclose(got, expected, rtol=1e-5, atol=1e-5)), "first": first,
                  "stats": kernel.cache_stats, "backend": kernel.last_backend}))
'''


def run_child(path: Path, kernel: str, *, cache: Path, env: dict | None = None, timeout: int = 600) -> dict:
    """Call ``kernel`` of the module at ``path`` on its ``example_inputs()`` in a new process;
    the module defines ``expected(**inputs)`` and ``OUTPUT`` (or the kernel returns)."""
    child_env = dict(os.environ, PYPTO_AST_CACHE_DIR=str(cache), **(env or {}))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), kernel], capture_output=True, text=True,
                          env=child_env, timeout=timeout, cwd=str(path.parent))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]), stderr=proc.stderr)


# a kernel whose body creates more tile operations than pypto's subgraph budget: PTO013, a lint
# warning (not an error), in the kernel's own lines; BACKEND is filled in by the test
MANY_TILES = '''
import pypto
import pypto_ast

F32 = pypto.DT_FP32


@pypto_ast.jit(backend="BACKEND")
def many_tiles(x: pypto.Tensor((256, 512), F32), y: pypto.Tensor((256, 512), F32)):
    pypto.set_vec_tile_shapes(8, 8)
    a = x * 2.0
    b = a + x
    c = b * a
    d = c - b
    e = d * 0.5
    f = e + c
    g = f * d
    h = g + 1.0
    y[:] = h * e
'''


def many_tiles_expected(x):
    """What ``many_tiles`` writes into ``y``, in torch."""
    a = x * 2.0
    b = a + x
    c = b * a
    d = c - b
    e = d * 0.5
    f = e + c
    g = f * d
    h = g + 1.0
    return h * e
