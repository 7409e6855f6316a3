"""Consistency checks for examples/*.py (no pypto wheel needed; torch for the input checks).

* the docstring's `Expected diagnostics:` section matches the `# PTOxxx` line markers;
* clean files expect nothing, pitfall files expect at least one code;
* `torch` is never imported at module level; `example_inputs` / `reference` exist;
* exactly one `frontend.jit` kernel (or an `ENTRY` name);
* `example_inputs()` matches the kernel's annotated shapes/dtypes, and `reference()` returns
  tensors for output parameters with the shapes/dtypes of the passed-in outputs.
"""
from __future__ import annotations

import ast
import importlib.util
import inspect
import re
from collections import Counter
from pathlib import Path

import pypto_stub
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(EXAMPLES.glob("*.py"))
IDS = [p.stem for p in FILES]
MARKER = re.compile(r"  # (PTO\d{3}(?:, PTO\d{3})*)\s*$")


def _doc(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def _expected(path: Path) -> Counter:
    m = re.search(r"Expected diagnostics:(.*)\Z", _doc(path), re.DOTALL)
    assert m, f"{path.name}: docstring lacks an 'Expected diagnostics:' section"
    body = m.group(1).strip()
    if body == "none.":
        return Counter()
    entries = re.findall(r"^\s*(PTO\d{3}) line (\d+)\s*$", body, re.MULTILINE)
    assert len(entries) == len([ln for ln in body.splitlines() if ln.strip()]), body
    return Counter((c, int(n)) for c, n in entries)


def _markers(path: Path) -> Counter:
    found = Counter()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = MARKER.search(line)
        if m:
            for code in m.group(1).split(", "):
                found[(code, n)] += 1
    return found


def test_there_are_enough_examples():
    clean = [p for p in FILES if p.stem.startswith("clean_")]
    pitfall = [p for p in FILES if p.stem.startswith("pitfall_")]
    assert len(clean) >= 5 and len(pitfall) >= 5
    assert len(clean) + len(pitfall) == len(FILES), "every example is clean_* or pitfall_*"
    covered = {code for p in pitfall for code, _ in _expected(p)}
    assert covered == {f"PTO{i:03d}" for i in range(1, 15)}


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_expectations_match_markers(path: Path):
    expected = _expected(path)
    assert expected == _markers(path)
    if path.stem.startswith("clean_"):
        assert not expected
    else:
        assert expected
        # prose mentions such as "PTO001 (...), line 31" / "lines 27 and 29" agree too
        for code, _, nums in re.findall(r"(PTO\d{3})\s*\(([^)]*)\),\s*lines? ([\d and]+)", _doc(path)):
            for n in re.findall(r"\d+", nums):
                assert (code, int(n)) in expected, (code, n)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_module_shape(path: Path):
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Import):
            assert not any(a.name.split(".")[0] == "torch" for a in node.names), "module-level torch import"
        if isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] != "torch", "module-level torch import"
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"example_inputs", "reference"} <= funcs
    assert ast.get_docstring(tree)


def _load(path: Path):
    with pypto_stub.installed():
        spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    return mod


def _kernel(mod):
    if hasattr(mod, "ENTRY"):
        return getattr(mod, mod.ENTRY)
    jits = [v for v in vars(mod).values() if isinstance(v, pypto_stub.JitStub)]
    assert len(jits) == 1, "exactly one frontend.jit kernel per example"
    assert "run_mode" not in (jits[0].options.get("runtime_options") or {}), "no run mode baked in"
    return jits[0].func


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_inputs_and_reference(path: Path):
    torch = pytest.importorskip("torch")
    mod = _load(path)
    func = _kernel(mod)
    params = inspect.signature(func).parameters
    ann = {n: p.annotation for n, p in params.items() if isinstance(p.annotation, pypto_stub.TensorSpec)}
    inputs = mod.example_inputs()
    assert set(inputs) <= set(params), set(inputs) - set(params)
    assert set(ann) <= set(inputs), f"tensor parameters without inputs: {set(ann) - set(inputs)}"
    for name, spec in ann.items():
        t = inputs[name]
        assert isinstance(t, torch.Tensor)
        if spec.shape is not None:
            assert len(spec.shape) == t.dim(), name
            for want, got in zip(spec.shape, t.shape):
                assert want in (pypto_stub.DYNAMIC, "STATIC") or want == got, (name, spec.shape, t.shape)
        if spec.dtype is not None and spec.dtype.torch_name:
            assert str(t.dtype) == f"torch.{spec.dtype.torch_name}", (name, t.dtype, spec.dtype)
    snapshot = {k: v.clone() for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    expected = mod.reference(**inputs)
    assert isinstance(expected, dict) and expected
    for name, value in expected.items():
        assert name in inputs, f"reference() names {name!r}, which is not a parameter"
        assert isinstance(value, torch.Tensor)
        assert value.shape == inputs[name].shape and value.dtype == inputs[name].dtype, name
        assert torch.isfinite(value.float()).all(), name
    for k, v in snapshot.items():
        assert torch.equal(v, inputs[k]), f"reference() mutated input {k!r}"
