"""Loading kernel modules: bytes -> text -> CPython ``ast`` tree, with exact positions.

Analysis reads CPython's ``ast`` (C parser, exact start/end positions on every node, no
extra import cost); libcst is used where source is *rewritten* (see docs/design.md).
``ast`` columns are UTF-8 byte offsets; everything leaving this module is in characters.
"""

from __future__ import annotations

import ast
import io
import threading
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import Sequence

from .diagnostics import Edit, Pos, Span


class SourceError(Exception):
    """The file could not be decoded or parsed; ``pos`` says where (1-based line, 0-based col)."""

    def __init__(self, message: str, pos: Pos):
        super().__init__(message)
        self.message = message
        self.pos = pos


def decode(data: bytes) -> tuple[str, str]:
    """Decode like the interpreter does (BOM, PEP 263 cookie); return (text, encoding)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # bad or unknown coding cookie
        raise SourceError(f"cannot decode file: {exc.msg}", Pos(exc.lineno or 1, 0)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        raise SourceError(f"cannot decode file as {encoding}: {exc}", Pos(line, 0)) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, encoding


@dataclass
class SourceFile:
    path: str
    text: str
    tree: ast.Module
    lines: list[str]  # with line endings kept
    # per line: its UTF-8 bytes, computed once (a 1 MB line is not re-encoded for every node on it)
    _encoded: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str, path: str = "<string>") -> "SourceFile":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes etc.
                tree = ast.parse(text, filename=path, type_comments=False)
        except SyntaxError as exc:
            lines = split_lines(text)
            line = exc.lineno or 1
            col = _byte_to_char(lines, line, (exc.offset or 1) - 1) if exc.offset else 0
            raise SourceError(f"syntax error: {exc.msg}", Pos(line, max(col, 0))) from None
        except (RecursionError, MemoryError) as exc:  # nesting beyond CPython's own parser
            detail = str(exc) or type(exc).__name__
            raise SourceError(f"cannot parse file: it nests too deeply for CPython's parser ({detail})",
                              Pos(1, 0)) from None
        except ValueError as exc:  # NUL bytes
            raise SourceError(f"cannot parse file: {exc}", Pos(1, 0)) from None
        source = cls(path, text, tree, split_lines(text))
        _recent.source = source
        return source

    # -- positions ------------------------------------------------------------------
    def pos(self, line: int, byte_col: int) -> Pos:
        return Pos(line, self._char(line, byte_col))

    def _bytes(self, line: int):
        """The UTF-8 bytes of 1-based ``line``, or None when the line is ASCII (bytes == chars)."""
        try:
            return self._encoded[line]
        except KeyError:
            text = self.lines[line - 1]
            data = None if text.isascii() else text.encode("utf-8")
            self._encoded[line] = data
            return data

    def _char(self, line: int, byte_col: int) -> int:
        if not 0 < line <= len(self.lines):
            return max(byte_col, 0)
        data = self._bytes(line)
        if data is None:
            return byte_col
        return len(data[:byte_col].decode("utf-8", "replace"))

    def _slice(self, line: int, start: int | None, end: int | None) -> str:
        """Bytes ``start:end`` of 1-based ``line`` as text (``ast`` columns are UTF-8 offsets)."""
        data = self._bytes(line)
        if data is None:
            return self.lines[line - 1][start:end]
        return data[start:end].decode("utf-8", "replace")

    def span(self, node: ast.AST, end_node: ast.AST | None = None) -> Span:
        """Span of ``node`` (to the end of ``end_node`` when given)."""
        last = end_node or node
        start = self.pos(node.lineno, node.col_offset)
        end_line = getattr(last, "end_lineno", None) or node.lineno
        end_col = getattr(last, "end_col_offset", None)
        end = self.pos(end_line, end_col) if end_col is not None else start
        return Span(self.path, start, end)

    def header_span(self, node: ast.AST) -> Span:
        """For compound statements underline only the header (``for ...:`` line), Taichi-style."""
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return self.span(node, node.iter)
        if isinstance(node, (ast.If, ast.While)):
            return self.span(node, node.test)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return self.span(node, node.items[-1].context_expr)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            line = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else ""
            text = line.rstrip("\r\n")
            start = len(text) - len(text.lstrip())
            return Span(self.path, Pos(node.lineno, start), Pos(node.lineno, len(text)))
        return self.span(node)

    def line_text(self, line: int) -> str:
        return self.lines[line - 1].rstrip("\r\n") if 0 < line <= len(self.lines) else ""

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node`` (from its own lines: not the whole file per call)."""
        line, end_line = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if None in (line, end_line, col, end_col) or not 0 < line <= end_line <= len(self.lines):
            return ""
        if line == end_line:
            return self._slice(line, col, end_col)
        return self._slice(line, col, None) + "".join(self.lines[line:end_line - 1]) + self._slice(end_line, None, end_col)

    def deepest(self) -> tuple[int, list]:
        """How deep the tree nests (nodes on the longest root-to-leaf path) and that path,
        outermost first.  Iterative: usable on trees too deep for any recursive walk."""
        best_depth, best_link = 0, None
        stack = [(self.tree, 1, None)]
        while stack:
            node, depth, up = stack.pop()
            link = (node, up)
            if depth > best_depth:
                best_depth, best_link = depth, link
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, _SHARED_NODES):
                    stack.append((child, depth + 1, link))
        path = []
        while best_link is not None:
            path.append(best_link[0])
            best_link = best_link[1]
        path.reverse()
        return best_depth, path

    def char_cols(self, node: ast.AST) -> tuple[int, int]:
        """0-based character columns of ``node``'s start and end (``ast`` gives UTF-8 bytes)."""
        start = self._char(node.lineno, node.col_offset)
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        end = self._char(end_line, end_col) if end_col is not None else start
        return start, end


_recent = threading.local()


def recent(text: str) -> "SourceFile | None":
    """The SourceFile this thread last parsed, when it was parsed from this very ``text`` object
    (the fixes of a rule find the tree of the file they edit without parsing it again)."""
    source = getattr(_recent, "source", None)
    return source if source is not None and source.text is text else None


# ``ast`` shares one instance of each context and operator (``Load()``, ``Add()``) between nodes
_SHARED_NODES = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def split_lines(text: str) -> list[str]:
    """Lines as Python's tokenizer counts them: only \\n, \\r\\n and \\r end a line
    (``str.splitlines`` also splits on form feeds and Unicode separators)."""
    return io.StringIO(text, newline="").readlines()


def _byte_to_char(lines: Sequence[str], line: int, byte_col: int) -> int:
    if not 0 < line <= len(lines):
        return max(byte_col, 0)
    text = lines[line - 1]
    if text.isascii():
        return byte_col
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def offset_of(lines: Sequence[str], pos: Pos) -> int:
    """Character offset of ``pos`` in the text made of ``lines``."""
    return sum(len(lines[i]) for i in range(min(pos.line - 1, len(lines)))) + pos.col


def line_starts(lines: Sequence[str]) -> list[int]:
    """``starts[i]``: character offset of 0-based line ``i``; one past the last line holds the length."""
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits; every character outside them is kept as it was.
    Linear in the text and the edits (offsets from one table of line starts, one join)."""
    if not edits:
        return text
    starts = line_starts(split_lines(text))

    def offset(pos: Pos) -> int:
        return starts[min(max(pos.line - 1, 0), len(starts) - 1)] + pos.col

    # applied last-first as before, so edits at the same place keep their old relative order
    ordered = sorted(edits, key=lambda e: (e.start, e.end), reverse=True)
    pieces, tail = [], len(text)
    for edit in ordered:
        a, b = offset(edit.start), offset(edit.end)
        b = min(b, tail)  # an edit reaching into the one applied after it: as slicing did
        pieces.append(text[b:tail])
        pieces.append(edit.content)
        tail = min(a, b)
    pieces.append(text[:tail])
    return "".join(reversed(pieces))


def child_statements(node):
    """The statements directly in ``node``'s blocks (bodies, else/finally blocks, except and case
    bodies). Walks that look for statements (kernels, returns) use it to leave expressions out: a
    1 MB expression then costs them nothing."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list):
            yield from block
    for holder in getattr(node, "handlers", ()) or getattr(node, "cases", ()):
        yield from holder.body
