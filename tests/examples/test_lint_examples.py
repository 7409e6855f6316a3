"""pypto-lint on the examples and on the generated corpus: every expected finding, nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from test_examples import FILES, IDS, _expected

from pypto_ast.analysis.engine import lint_bytes
from pypto_ast.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_example_findings_are_exactly_the_expected_ones(path: Path):
    result = lint_bytes(path.read_bytes(), str(path), Settings())
    assert result.failure is None
    found = Counter((d.code, d.span.start.line) for d in result.diagnostics)
    assert found == _expected(path)


def test_fix_on_examples_converges_and_keeps_them_parsable(tmp_path):
    from pypto_ast.transforms.fixer import fix_text

    for path in FILES:
        outcome = fix_text(path.read_text(), str(path), Settings(), unsafe=True)
        assert outcome.converged, path
        compile(outcome.text, str(path), "exec")
        assert not [d for d in outcome.result.diagnostics if d.fix_applies(True)], path


def test_generated_corpus_findings_match_its_manifest(tmp_path):
    out = tmp_path / "corpus"
    subprocess.run([sys.executable, str(ROOT / "bench" / "corpus.py"), str(out), "-n", "150", "--seed", "3"],
                   check=True, capture_output=True)
    manifest = json.loads((out / "manifest.json").read_text())
    checked = 0
    for name, entry in manifest["files"].items():
        path = out / name
        result = lint_bytes(path.read_bytes(), str(path), Settings())
        found = {(d.code, d.span.start.line) for d in result.diagnostics}
        expected = {(p["code"], p["line"]) for p in entry["pitfalls"]}
        assert found == expected, (name, entry, sorted(found))
        checked += 1
    assert checked == 150
