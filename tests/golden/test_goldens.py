"""Whole-kernel goldens for every example: printed IR, emitted Python, or (for pitfall
examples that cannot lower) the rendered ``pypto-transpile`` diagnostic; and the emitted
Ascend C (every file) of the kernels in ``regen_goldens.ASCENDC``.

The renderings come from ``scripts/regen_goldens.py`` (``render``), the same code that
writes the files; when they drift the failure shows a diff and the command to regenerate.
"""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("regen_goldens", ROOT / "scripts" / "regen_goldens.py")
regen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regen)

EXAMPLES = regen.examples()
IDS = [p.stem for p in EXAMPLES]


def _compare(path: Path, want: str) -> None:
    rel = path.relative_to(ROOT)
    if not path.exists():
        pytest.fail(f"{rel} is missing; regenerate with: {regen.REGEN_COMMAND}")
    have = path.read_text(encoding="utf-8")
    if have != want:
        diff = "".join(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                            f"{rel} (committed)", f"{rel} (now)"))
        pytest.fail(f"{rel} drifted from the current output:\n{diff}\n"
                    f"if the change is intended, regenerate with: {regen.REGEN_COMMAND}", pytrace=False)


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_ir_or_diagnostic_golden(path):
    rendered = regen.render(path, kinds=("ir", "diagnostics"))
    assert rendered, f"{path.name} produced neither IR nor a diagnostic"
    for golden, text in rendered.items():
        _compare(golden, text)
    for kind in ("ir", "diagnostics"):  # the example changed sides (now lowers, or no longer does)
        other = regen.golden_path(kind, path.stem)
        assert other in rendered or not other.exists(), \
            f"stale {other.relative_to(ROOT)}; regenerate with: {regen.REGEN_COMMAND}"


@pytest.mark.skipif(not regen.have_pyemit(),
                    reason="pypto_ast.ir.pyemit (the Python emitter) does not exist yet")
@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_python_golden(path):
    rendered = regen.render(path, kinds=("python",))
    for golden, text in rendered.items():
        _compare(golden, text)


def test_diagnostic_goldens_record_a_failure():
    """A diagnostics golden exists only for an example pypto-transpile rejects (exit 1 or 2)."""
    for path in sorted((regen.GOLDEN / "diagnostics").glob("*.txt")):
        status = path.read_text(encoding="utf-8").splitlines()[1]
        assert status in ("[exit 1]", "[exit 2]"), f"{path.name}: {status}"


@pytest.mark.parametrize("path", regen.ASCENDC, ids=[p.stem for p in regen.ASCENDC])
def test_ascendc_golden(path):
    try:
        rendered = regen.render_ascendc(path)
    except regen.GoldenError as exc:
        pytest.fail(f"{exc}\nthe kernel is listed in scripts/regen_goldens.py ASCENDC", pytrace=False)
    assert any(p.name == "manifest.json" for p in rendered) and any(p.suffix == ".cpp" for p in rendered)
    for golden, text in rendered.items():
        _compare(golden, text)
    stale = sorted(str(p.relative_to(ROOT)) for p in regen.ascendc_dir(path.stem).glob("*") if p not in rendered)
    assert not stale, f"files the emitter no longer writes: {stale}; regenerate with: {regen.REGEN_COMMAND}"


def test_no_stale_goldens():
    examples = {p.stem for p in EXAMPLES}
    ascendc = {p.stem for p in regen.ASCENDC}
    top = regen.GOLDEN / "ascendc"
    stale = sorted(str(p.relative_to(ROOT)) for p in regen.existing()
                   if (p.parent.parent == top and p.parent.name not in ascendc)
                   or (top not in p.parents and p.stem not in examples))
    assert not stale, f"goldens without an example: {stale}; regenerate with: {regen.REGEN_COMMAND}"
