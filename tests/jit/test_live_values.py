"""The live values a ``@pypto_ast.jit`` kernel reads, and only those, decide what it computes and
when it lowers again (issue 16, points 1 and 2): another module's globals as the running program
set them, the globals of a helper inlined from another module, a global only an inlined helper
reads, a dict global changed in place; a global the kernel never reads changes nothing, in
memory or on disk."""

from __future__ import annotations

import json
import uuid

import pytest

torch = pytest.importorskip("torch")

from jit_support import BACKENDS, needs_cxx, run_child, write  # noqa: E402

from pypto_ast.emit import build  # noqa: E402

HELPERS = '''
import pypto

SCALE = 2.0


def scaled(t):
    return t * SCALE
'''

# HELPERS is replaced by a module name unique to the test: sys.modules outlives one test
USES_HELPERS = '''
import pypto
import pypto_ast
import HELPERS as helpers
from HELPERS import scaled

F32 = pypto.DT_FP32


@pypto_ast.jit(backend="BACKEND")
def by_attribute(x: pypto.Tensor((8, 64), F32), out: pypto.Tensor((8, 64), F32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x * helpers.SCALE


@pypto_ast.jit(backend="BACKEND")
def by_helper(x: pypto.Tensor((8, 64), F32), out: pypto.Tensor((8, 64), F32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = scaled(x) + 1.0
'''

OWN_GLOBALS = '''
import time

import pypto
import pypto_ast

F32 = pypto.DT_FP32
SCALE = 2.0
CFG = {"scale": 2.0, "unused": 1}
STARTED = time.time()  # changes on every run; no kernel reads it
RESULTS = []


def scaled(t):
    return t * SCALE


@pypto_ast.jit(backend="BACKEND")
def through_helper(x: pypto.Tensor((8, 64), F32), out: pypto.Tensor((8, 64), F32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = scaled(x)


@pypto_ast.jit(backend="BACKEND")
def from_config(x: pypto.Tensor((8, 64), F32), out: pypto.Tensor((8, 64), F32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x * CFG["scale"]
'''


@pytest.fixture
def uses_helpers(tmp_path, monkeypatch, module):
    """``uses_helpers(backend)``: the kernel module and the helpers module it imported."""

    def make(backend):
        name = f"helpers_{uuid.uuid4().hex[:8]}"
        write(tmp_path / f"{name}.py", HELPERS)
        monkeypatch.syspath_prepend(str(tmp_path))
        mod = module(USES_HELPERS.replace("HELPERS", name).replace("BACKEND", backend), "uses_helpers.py")
        monkeypatch.delitem(__import__("sys").modules, name)  # after the test; the module object stays
        return mod, mod.helpers

    return make


def _inputs():
    return torch.randn(8, 64), torch.full((8, 64), float("nan"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_another_modules_global_is_read_as_the_program_set_it(uses_helpers, backend):
    mod, helpers = uses_helpers(backend)
    helpers.SCALE = 3.0  # before the first call: pypto's tracing and plain Python both read 3.0
    x, out = _inputs()
    mod.by_attribute(x, out)
    assert torch.equal(out, x * 3.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helper_from_another_module_reads_its_own_modules_live_globals(uses_helpers, backend):
    mod, helpers = uses_helpers(backend)
    helpers.SCALE = 3.0
    x, out = _inputs()
    mod.by_helper(x, out)
    assert torch.equal(out, x * 3.0 + 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_change_of_another_modules_global_after_a_call_lowers_again(uses_helpers, backend):
    mod, helpers = uses_helpers(backend)
    x, out = _inputs()
    mod.by_attribute(x, out)
    assert torch.equal(out, x * 2.0)
    helpers.SCALE = 4.0
    mod.by_attribute(x, out)
    assert torch.equal(out, x * 4.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebinding_a_global_only_an_inlined_helper_reads_lowers_again(module, backend):
    mod = module(OWN_GLOBALS.replace("BACKEND", backend))
    x, out = _inputs()
    mod.through_helper(x, out)
    assert torch.equal(out, x * 2.0)
    mod.SCALE = 3.0
    mod.through_helper(x, out)
    assert torch.equal(out, x * 3.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dict_global_changed_in_place_lowers_again(module, backend):
    mod = module(OWN_GLOBALS.replace("BACKEND", backend))
    x, out = _inputs()
    mod.from_config(x, out)
    assert torch.equal(out, x * 2.0)
    mod.CFG["scale"] = 5.0
    mod.from_config(x, out)
    assert torch.equal(out, x * 5.0)
    assert mod.from_config.cache_stats["lowered"] == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_the_kernel_never_reads_changes_nothing(module, backend):
    mod = module(OWN_GLOBALS.replace("BACKEND", backend))
    x, out = _inputs()
    mod.from_config(x, out)
    mod.STARTED += 1.0
    mod.RESULTS.append(out.sum().item())
    mod.CFG  # noqa: B018 - read, not changed
    mod.from_config(x, out)
    assert torch.equal(out, x * 2.0)
    assert mod.from_config.cache_stats["lowered"] == 1


# -- on disk: a new process ---------------------------------------------------------------------
CHILD_SCALE = OWN_GLOBALS.replace("BACKEND", "host").replace(
    'SCALE = 2.0', 'SCALE = float(__import__("os").environ.get("TEST_SCALE", "2.0"))') + '''
OUTPUT = "out"


def example_inputs():
    import torch

    return {"x": torch.arange(8 * 64, dtype=torch.float32).reshape(8, 64), "out": torch.zeros(8, 64)}


def expected(x, out):
    return x * SCALE
'''


def _variants(cache):
    return sorted((cache / f"v{build.FORMAT_VERSION}" / "jit").glob("*/*.json"))


@needs_cxx
def test_a_new_process_keys_the_disk_index_on_what_the_kernel_read(tmp_path, fresh_cache):
    path = write(tmp_path / "child_scale.py", CHILD_SCALE)
    first = run_child(path, "through_helper", cache=fresh_cache)
    assert first["ok"] and first["stats"]["lowered"] == 1
    # STARTED (time.time()) differs in every process: the kernel never read it, so the index serves
    second = run_child(path, "through_helper", cache=fresh_cache)
    assert second["ok"] and second["stats"]["lowered"] == 0 and second["stats"]["index_hits"] == 1, second
    assert len(_variants(fresh_cache)) == 1
    # SCALE, read by the inlined helper, is other data in this process: lowered for it, not the index's
    third = run_child(path, "through_helper", cache=fresh_cache, env={"TEST_SCALE": "3.0"})
    assert third["ok"] and third["stats"]["lowered"] == 1 and third["stats"]["index_hits"] == 0, third
    (recorded,) = {tuple(r) for v in _variants(fresh_cache) for r in json.loads(v.read_text())["reads"]
                   if r[1] == "SCALE" and r[2] == "float:3.0"}
    assert recorded[0] == str(path)
    # both variants are kept: each SCALE is served from the index now
    assert len(_variants(fresh_cache)) == 2
    for scale in ("2.0", "3.0"):
        again = run_child(path, "through_helper", cache=fresh_cache, env={"TEST_SCALE": scale})
        assert again["ok"] and again["stats"]["index_hits"] == 1, again
