"""Merge loop(1) regions through libcst, keeping every other byte of the file as it was.

Two forms, both located by the 1-based line of the ``for`` keyword:
- ``merge_into_previous``: the body of the second ``for`` joins the body of the first;
- ``inline_loop``: the body of a ``for`` replaces it (it joins the implicit loop(1)).
Comments above the removed header, and the one after it, move with its statements. The result is a single
``Edit`` covering only the changed text, or None when the loops cannot be located.
"""

from __future__ import annotations

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

    module = cst.parse_module(text)
    found = _locate(module, {first_line, second_line})
    first, second = found.get(first_line), found.get(second_line)
    if first is None or second is None:
        return None, False

    class Merge(cst.CSTTransformer):
        def leave_For(self, original, updated):
            if original is first:
                body = updated.body.with_changes(body=[*updated.body.body, *_moved_body(second)])
                return updated.with_changes(body=body)
            if original is second:
                return cst.RemovalSentinel.REMOVE
            return updated

    new = module.visit(Merge()).code
    return _minimal_edit(text, new), False  # the header's comment moves with the body


def inline_loop(text: str, line: int) -> tuple[Optional[Edit], bool]:
    import libcst as cst

    module = cst.parse_module(text)
    loop = _locate(module, {line}).get(line)
    if loop is None:
        return None, False

    class Inline(cst.CSTTransformer):
        def leave_For(self, original, updated):
            if original is loop:
                return cst.FlattenSentinel(_moved_body(updated))
            return updated

    new = module.visit(Inline()).code
    return _minimal_edit(text, new), False  # the header's comment moves with the body
