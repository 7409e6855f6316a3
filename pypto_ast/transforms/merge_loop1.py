"""Merge loop(1) regions through libcst, keeping every other byte of the file as it was.

Two forms, both located by the 1-based line of the ``for`` keyword:
- ``merge_into_previous``: the body of the second ``for`` joins the body of the first;
- ``inline_loop``: the body of a ``for`` replaces it (it joins the implicit loop(1)).
Comments above the removed header, and the one after it, move with its statements. The result is a single
``Edit`` covering only the changed text, or None when the loops cannot be located.
"""

from __future__ import annotations

import ast
import bisect
import threading
from typing import Optional

from ..diagnostics import Edit, Pos


def _locate(module, lines: set):
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    found = {}
    for node, pos in positions.items():
        if isinstance(node, cst.For) and pos.start.line in lines:
            found[pos.start.line] = node
    return found


# libcst's parser is super-linear on deep or long constructs (a 2000-term ``a + ... + a`` takes
# seconds, a 2000-call chain tens of seconds): a statement beyond these sizes gets no fix
MAX_PART_NODES = 30_000
MAX_PART_DEPTH = 200


class _Part:
    """One top-level statement of the file (the kernel's ``def``, with the lines up to the next
    one), parsed by libcst once for every fix computed in it: each ``for`` by the line of its
    keyword with the indentation it is generated at (one plain code generation finds them;
    libcst's PositionProvider costs several times that).  So K loop(1) regions cost one parse
    and K local generations, not K parses and generations of the whole module."""

    def __init__(self, text: str, first_line: int):
        import libcst as cst
        from libcst._nodes.internal import CodegenState

        self.text = text
        self.first_line = first_line  # line of the file where ``text`` starts
        self.module = cst.parse_module(text)
        self.starts = None
        found: dict = {}

        class Lines(CodegenState):
            def before_codegen(self, node) -> None:
                if isinstance(node, cst.For):
                    new = self.tokens[self.seen:]
                    self.line += sum(t.count("\n") + t.count("\r") - t.count("\r\n") for t in new)
                    self.seen = len(self.tokens)
                    found.setdefault(self.line + len(node.leading_lines), (node, tuple(self.indent_tokens)))

        state = Lines(default_indent=self.module.default_indent, default_newline=self.module.default_newline)
        state.line, state.seen = first_line, 0
        self.module._codegen(state)
        self.found = found

    def code(self, nodes, indents) -> str:
        """The code of ``nodes`` (statements) generated at ``indents``, as inside the module."""
        from libcst._nodes.internal import CodegenState

        state = CodegenState(default_indent=self.module.default_indent, default_newline=self.module.default_newline)
        for indent in indents:
            state.increase_indent(indent)
        for node in nodes:
            node._codegen(state)
        return "".join(state.tokens)

    def offset(self, line: int) -> int:
        """Character offset in ``text`` where ``line`` (of the file) starts."""
        if self.starts is None:
            from ..source import line_starts, split_lines

            self.starts = line_starts(split_lines(self.text))
        return self.starts[min(max(line - self.first_line, 0), len(self.starts) - 1)]

    def replace(self, old_nodes, new_nodes, indents, first_line: int):
        """``(True, edit)`` turning the code of ``old_nodes`` (consecutive statements, the first
        one's keyword on ``first_line``) into that of ``new_nodes`` (edit None: no change);
        ``(False, None)`` when the text there is not what libcst generates for them (then the
        caller transforms the whole part)."""
        old = self.code(old_nodes, indents)
        top = first_line - len(old_nodes[0].leading_lines)
        start = self.offset(top)
        if top < self.first_line or self.text[start:start + len(old)] != old:
            return False, None
        return True, _shifted(_minimal_edit(old, self.code(new_nodes, indents)), top)

    def transformed(self, transformer) -> Optional[Edit]:
        """The edit of the whole part transformed (the general way, when ``replace`` cannot)."""
        return _shifted(_minimal_edit(self.text, self.module.visit(transformer).code), self.first_line)


class _Index:
    """The top-level statements of one text, each parsed by libcst when a fix first needs it.

    A statement's part runs from the line after the previous statement to the line before the
    next one: the blank and comment lines on both sides come with it, so libcst gives every
    ``for`` inside the same leading lines and block footers as in the whole module."""

    def __init__(self, text: str):
        from ..source import recent, split_lines

        self.text = text
        source = recent(text)
        tree = source.tree if source is not None else ast.parse(text)
        self.lines = split_lines(text)
        self.tops = []  # (first line with decorators, last line, statement)
        for stmt in tree.body:
            first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            self.tops.append((first, stmt.end_lineno or stmt.lineno, stmt))
        self.firsts = [first for first, _, _ in self.tops]
        self.parts: dict = {}

    def _top(self, line: int) -> Optional[int]:
        i = bisect.bisect_right(self.firsts, line) - 1
        return i if i >= 0 and line <= self.tops[i][1] else None

    def part(self, line: int, last_line: Optional[int] = None) -> Optional[_Part]:
        """The parsed top-level statements holding ``line`` to ``last_line``; None outside any,
        or when they are too big for libcst (then no fix is offered)."""
        i, j = self._top(line), self._top(line if last_line is None else last_line)
        if i is None or j is None or j < i:
            return None
        if (i, j) not in self.parts:
            first, last = self.tops[i][0], self.tops[j][1]
            lo = min(self.tops[i - 1][1] + 1, first) if i > 0 else 1
            hi = max(self.tops[j + 1][0] - 1, last) if j + 1 < len(self.tops) else len(self.lines)
            part = None
            if j - i < 2 and all(_small(self.tops[k][2]) for k in range(i, j + 1)):
                try:
                    part = _Part("".join(self.lines[lo - 1:hi]), lo)
                except Exception:  # noqa: BLE001 - libcst refuses the slice (odd layouts): no fix
                    part = None
            self.parts[(i, j)] = part
        return self.parts[(i, j)]


def _small(stmt) -> bool:
    """Whether libcst can parse ``stmt`` quickly: at most MAX_PART_NODES nodes, MAX_PART_DEPTH deep."""
    todo, count = [(stmt, 1)], 0
    while todo:
        node, depth = todo.pop()
        count += 1
        if count > MAX_PART_NODES or depth > MAX_PART_DEPTH:
            return False
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return True


_cache = threading.local()


def _index(text: str) -> _Index:
    hit = getattr(_cache, "index", None)
    if hit is None or (hit.text is not text and hit.text != text):
        hit = _cache.index = _Index(text)
    return hit


def _shifted(edit: Optional[Edit], line: int) -> Optional[Edit]:
    """``edit`` made in text starting at ``line`` of the file, in the file's positions."""
    if edit is None:
        return None

    def shift(pos: Pos) -> Pos:
        return Pos(line + pos.line - 1, pos.col)

    return Edit(shift(edit.start), shift(edit.end), edit.content)


def _moved_body(loop) -> list:
    """The loop's statements, with the comments above the loop and the header's trailing
    comment (``for ...:  # note``) kept above the first one."""
    import libcst as cst

    body = list(loop.body.body)
    header = getattr(loop.body.header, "comment", None)
    kept = [*loop.leading_lines] + ([cst.EmptyLine(indent=True, comment=header)] if header is not None else [])
    if body and kept:
        body[0] = body[0].with_changes(leading_lines=[*kept, *body[0].leading_lines])
    return body


def _minimal_edit(old: str, new: str) -> Optional[Edit]:
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return Edit(_pos(old, start), _pos(old, end_old), new[start:end_new])


def _pos(text: str, offset: int) -> Pos:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1)
    return Pos(line, col)


def merge_into_previous(text: str, first_line: int, second_line: int) -> tuple[Optional[Edit], bool]:
    """Edit and whether a comment is lost (never: the header's comment moves above the body)."""
    import libcst as cst

    part = _index(text).part(first_line, second_line)
    if part is None:
        return None, False
    (first, indents), (second, _) = part.found.get(first_line, (None, ())), part.found.get(second_line, (None, ()))
    if first is None or second is None:
        return None, False
    merged = first.with_changes(body=first.body.with_changes(body=[*first.body.body, *_moved_body(second)]))
    done, edit = part.replace([first, second], [merged], indents, first_line)
    if done:
        return edit, False  # the header's comment moves with the body

    class Merge(cst.CSTTransformer):
        def leave_For(self, original, updated):
            if original is first:
                body = updated.body.with_changes(body=[*updated.body.body, *_moved_body(second)])
                return updated.with_changes(body=body)
            if original is second:
                return cst.RemovalSentinel.REMOVE
            return updated

    return part.transformed(Merge()), False  # the header's comment moves with the body


def inline_loop(text: str, line: int) -> tuple[Optional[Edit], bool]:
    import libcst as cst

    part = _index(text).part(line)
    if part is None:
        return None, False
    loop, indents = part.found.get(line, (None, ()))
    if loop is None:
        return None, False
    done, edit = part.replace([loop], _moved_body(loop), indents, line)
    if done:
        return edit, False  # the header's comment moves with the body

    class Inline(cst.CSTTransformer):
        def leave_For(self, original, updated):
            if original is loop:
                return cst.FlattenSentinel(_moved_body(updated))
            return updated

    return part.transformed(Inline()), False  # the header's comment moves with the body
