"""Loading kernel modules: bytes -> text -> CPython ``ast`` tree, with exact positions.

Analysis reads CPython's ``ast`` (C parser, exact start/end positions on every node, no
extra import cost); libcst is used where source is *rewritten* (see docs/design.md).
``ast`` columns are UTF-8 byte offsets; everything leaving this module is in characters.
"""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from dataclasses import dataclass
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
        return cls(path, text, tree, split_lines(text))

    # -- positions ------------------------------------------------------------------
    def pos(self, line: int, byte_col: int) -> Pos:
        return Pos(line, _byte_to_char(self.lines, line, byte_col))

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
            return self.lines[line - 1].encode("utf-8")[col:end_col].decode("utf-8", "replace")
        first = self.lines[line - 1].encode("utf-8")[col:].decode("utf-8", "replace")
        last = self.lines[end_line - 1].encode("utf-8")[:end_col].decode("utf-8", "replace")
        return first + "".join(self.lines[line:end_line - 1]) + last

    def deepest(self) -> tuple[int, list]:
        """How deep the tree nests (nodes on the longest root-to-leaf path) and that path,
        outermost first.  Iterative: usable on trees too deep for any recursive walk."""
        best_depth, best_leaf = 0, None
        parent: dict = {}
        stack = [(self.tree, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > best_depth:
                best_depth, best_leaf = depth, node
            for child in ast.iter_child_nodes(node):
                parent[id(child)] = node
                stack.append((child, depth + 1))
        path = []
        node = best_leaf
        while node is not None:
            path.append(node)
            node = parent.get(id(node))
        path.reverse()
        return best_depth, path

    def char_cols(self, node: ast.AST) -> tuple[int, int]:
        """0-based character columns of ``node``'s start and end (``ast`` gives UTF-8 bytes)."""
        start = _byte_to_char(self.lines, node.lineno, node.col_offset)
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        end = _byte_to_char(self.lines, end_line, end_col) if end_col is not None else start
        return start, end


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


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits; every character outside them is kept as it was."""
    lines = split_lines(text)
    ordered = sorted(edits, key=lambda e: (e.start, e.end), reverse=True)
    out = text
    for edit in ordered:
        a, b = offset_of(lines, edit.start), offset_of(lines, edit.end)
        out = out[:a] + edit.content + out[b:]
    return out
