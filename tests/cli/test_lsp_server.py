"""`pypto-lint server` end to end: a real LSP client (pytest-lsp) talks to the server process."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="pypto-lint server needs the [lsp] extra (pygls)")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="the end-to-end test needs pytest-lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

REBIND = textwrap.dedent('''\
    import pypto


    @pypto.frontend.jit
    def add_one(x: pypto.Tensor([32, 64], pypto.DT_FP32), out: pypto.Tensor([32, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        out = x + 1.0
''')
CLEAN = REBIND.replace("    out = x + 1.0", "    out[:] = x + 1.0")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pypto_ast.cli.lint", "server"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=ROOT.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, path: Path, text: str) -> list:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


@pytest.mark.asyncio
async def test_open_publishes_the_finding_with_code_link_and_range(client: LanguageClient, tmp_path):
    diags = await _open(client, tmp_path / "kern.py", REBIND)
    assert [d.code for d in diags] == ["PTO001"]
    d = diags[0]
    assert d.source == "pypto-lint"
    assert d.severity == types.DiagnosticSeverity.Error
    assert (d.range.start.line, d.range.start.character) == (6, 4)  # `out` on line 7, 0-based
    assert d.code_description is not None and d.code_description.href.endswith("rules.md#pto001")
    assert "rebinds output parameter `out`" in d.message


@pytest.mark.asyncio
async def test_change_republishes_and_clears(client: LanguageClient, tmp_path):
    path = tmp_path / "kern.py"
    await _open(client, path, REBIND)
    uri = path.as_uri()
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=CLEAN)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[uri]) == []


@pytest.mark.asyncio
async def test_safe_fix_is_a_quick_fix_and_fix_all(client: LanguageClient, tmp_path):
    path = tmp_path / "kern.py"
    diags = await _open(client, path, REBIND)
    uri = path.as_uri()
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diags[0].range,
        context=types.CodeActionContext(diagnostics=diags)))
    kinds = {a.kind: a for a in actions}
    quick = kinds[types.CodeActionKind.QuickFix]
    (edit,) = quick.edit.changes[uri]
    assert edit.new_text == "[:]"
    assert (edit.range.start.line, edit.range.start.character) == (6, 7)  # right after `out`
    fix_all = kinds["source.fixAll.pypto-lint"]
    (whole,) = fix_all.edit.changes[uri]
    assert whole.new_text == CLEAN


@pytest.mark.asyncio
async def test_unparsable_buffer_is_a_finding_not_a_crash(client: LanguageClient, tmp_path):
    diags = await _open(client, tmp_path / "broken.py", "def f(:\n    pass\n")
    assert [d.code for d in diags] == ["PTO000"]
    # the server is still alive
    again = await _open(client, tmp_path / "kern.py", REBIND)
    assert [d.code for d in again] == ["PTO001"]
