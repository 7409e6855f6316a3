"""Proving a fix safe: the file's kernels, lowered before and after it, mean the same.

A fix offered as safe is applied only when every kernel of the file lowers (through the static
front end, as ``pypto-transpile`` would) to the same program after the edit as before, apart
from the change the rule intends (``Rule.fix_meaning``):

``same``          nothing may change (spans and block boundaries aside);
``loop1-merge``   loop(1) regions may be joined: their bodies are compared as one op sequence;
``output-write``  a rebound output may become a write: the new writes into parameters are
                  the only extra ops.
``unroll-tail``   a pypto loop may gain its ``Unroll1`` tail loop (the factor 1 added to its
                  ``unroll_list``): the loops of one pypto loop are compared without their
                  bounds, and an unroll-1 loop right after a loop of the same index and name is
                  left out.
``output-copy``   a copy may be made explicit (``out[:] = x`` -> ``out[:] = pypto.clone(x)``):
                  ``clone`` ops and whole views of a parameter at the origin are read as the
                  value they copy, everything else must stay the same.

A kernel the front end cannot lower without shapes is compared by its lint facts instead (its
ops in order, with the tile shapes in effect and the pypto loops around them).  A fix in a test
that exercises the kernel under ``pytest.raises`` is never safe: the error may be the point.
See docs/design.md §3.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Optional

from .. import ir
from ..diagnostics import Applicability, Diagnostic
from ..source import SourceError, SourceFile, apply_edits


def demote_unproven(text: str, path: str, diagnostics, fix_meaning: dict) -> tuple:
    """``diagnostics`` with every SAFE fix that cannot be proven turned UNSAFE (its title says why).

    The file is lowered once per meaning mode before the fixes, and the fixes of one mode are
    first proven together (all of them applied at once, as ``--fix`` applies a pass): when the file
    means the same after all of them, each one is proven by one more lowering.  Only when the
    combination does not prove is every fix of that mode lowered on its own -- so K loop(1)
    merges in one kernel cost two lowerings of the file, not 2K."""
    out = list(diagnostics)
    safe = [i for i, d in enumerate(out) if d.fix is not None and d.fix.applicability is Applicability.SAFE]
    if not safe:
        return tuple(out)
    raises = _raises_ranges(text)
    befores: dict = {}

    def before(allow: str):
        if allow not in befores:
            befores[allow] = _meaning(text, path, allow)
        return befores[allow]

    by_mode: dict = {}
    for i in safe:
        if any(lo <= out[i].span.start.line <= hi for lo, hi in raises):
            out[i] = _demote(out[i], "not proven safe: the kernel is tested under pytest.raises, the error may be intended")
        else:
            by_mode.setdefault(fix_meaning.get(out[i].code, "same"), []).append(i)
    for allow, group in by_mode.items():
        together = _disjoint(out, group)
        proven: set = set()
        if len(together) > 1:
            edits = [edit for i in together for edit in out[i].fix.edits]
            if _differs(before(allow), _meaning(apply_edits(text, edits), path, allow)) is None:
                proven = set(together)
        for i in group:
            if i not in proven:
                why = _unproven(text, path, out[i], allow, before(allow))
                if why is not None:
                    out[i] = _demote(out[i], why)
    return tuple(out)


def _demote(diag: Diagnostic, why: str) -> Diagnostic:
    fix = diag.fix
    unsafe = dataclasses.replace(fix, applicability=Applicability.UNSAFE, title=f"{fix.title} ({why})")
    return dataclasses.replace(diag, fix=unsafe)


def _disjoint(diagnostics: list, indices: list) -> list:
    """The indices, in order, whose edits overlap none taken before them (as the fixer chooses)."""
    chosen, taken = [], []
    for i in indices:
        ranges = [(e.start, e.end) for e in diagnostics[i].fix.edits]
        if any(a < te and ta < b or a == ta for a, b in ranges for ta, te in taken):
            continue
        chosen.append(i)
        taken.extend(ranges)
    return chosen


def _unproven(text: str, path: str, diag: Diagnostic, allow: str, before) -> Optional[str]:
    """Why the one fix of ``diag`` is not proven (None: it is); ``before``: the file's meaning."""
    after_text = apply_edits(text, list(diag.fix.edits))
    return _differs(before, _meaning(after_text, path, allow))


def _differs(before, after) -> Optional[str]:
    if before is None or after is None:
        return "not proven safe: the file does not parse after the fix"
    if before.keys() != after.keys():
        return "not proven safe: the fix changes which kernels the file has"
    for name in before:
        if before[name] != after[name]:
            return f"not proven safe: kernel `{name}` lowers to a different program after the fix"
    return None


# -- what a file's kernels mean -----------------------------------------------------------------
def _meaning(text: str, path: str, allow: str) -> Optional[dict]:
    """Kernel name -> a comparable summary of what it computes (None: the text does not parse)."""
    from .. import frontend

    try:
        source = SourceFile.parse(text, path)
    except SourceError:
        return None
    try:
        scope = frontend.read(source)
        kdefs = frontend.kernels(scope)
    except RecursionError:
        return None
    out = {}
    for kdef in kdefs:
        try:
            program, _ = frontend.lower(scope, kdef=kdef)
            out[kdef.name] = ("program", _program(program, allow))
        except frontend.FrontendError:
            out[kdef.name] = ("facts", _facts(scope, kdef, allow))
        except RecursionError:
            out[kdef.name] = ("unreadable",)
    return out


def _program(program: ir.Program, allow: str) -> tuple:
    params = tuple((p.name, p.kind, p.type, p.value) + (() if allow == "output-write" else (p.is_output,))
                   for p in program.params)
    written = {p.name for p in program.params} if allow == "output-write" else set()
    renames: dict = {}
    return params, tuple(program.locals), _region(program.body, allow, written, renames)


def _region(region: tuple, allow: str, written: set, renames: Optional[dict] = None) -> tuple:
    renames = {} if renames is None else renames
    items: list = []
    for node in region:
        if isinstance(node, ir.Block):
            for op in node.ops:
                if _is_new_write(op, written):
                    continue
                if allow == "output-copy":
                    op = _renamed(op, renames)
                    if _is_copy(op):
                        renames[op.results[0]] = op.operands[0]
                        continue
                items.append(_op(op))
        elif isinstance(node, ir.Loop):
            body = _region(node.body, allow, written, renames)
            if allow == "loop1-merge" and _is_loop1(node):
                items.extend(body)
            elif allow == "unroll-tail":
                previous = items[-1] if items else None
                if node.unroll == 1 and previous is not None and previous[0] == "loop" and \
                        previous[1] == node.var and previous[-2] == node.name:
                    continue  # the tail loop the added factor 1 makes
                items.append(("loop", node.var, node.step, node.kind, node.unroll, node.submit_before_loop,
                              node.name, body))
            else:
                items.append(("loop", node.var, node.start, node.stop, node.step, node.kind, node.unroll,
                              node.submit_before_loop, node.name, body))
        elif isinstance(node, ir.Branch):
            items.append(("if", node.cond, _region(node.then, allow, written, renames),
                          _region(node.orelse, allow, written, renames)))
        else:
            items.append(("return", node.values))
    return tuple(items)


def _is_loop1(loop: ir.Loop) -> bool:
    return (loop.kind in ("loop", "implicit") and loop.unroll == 1 and not loop.submit_before_loop
            and loop.start == ir.Const(0) and loop.stop == ir.Const(1) and loop.step == ir.Const(1))


def _is_new_write(op: ir.Op, written: set) -> bool:
    """``output-write``: an assemble into a parameter (and the copy a parameter write makes)."""
    return op.opcode == "assemble" and any(isinstance(o, ir.TensorRef) and o.name in written for o in op.operands)


def _is_copy(op: ir.Op) -> bool:
    """``output-copy``: a clone, or a view of a whole parameter at the origin (how ``out[:] = x``
    lowers): both are the value they copy."""
    if len(op.results) != 1 or not op.operands:
        return False
    if op.opcode == "clone":
        return len(op.operands) == 1
    if op.opcode != "view" or not isinstance(op.operands[0], ir.TensorRef):
        return False
    attrs = dict(op.attrs)
    offsets = attrs.get("offsets")
    return set(attrs) <= {"offsets", "shape"} and isinstance(offsets, tuple) and \
        all(isinstance(o, ir.Const) and o.value == 0 or o == 0 for o in offsets)


def _renamed(op: ir.Op, renames: dict) -> ir.Op:
    if not renames:
        return op

    def sub(operand):
        if isinstance(operand, ir.Value) and operand.name in renames:
            return renames[operand.name]
        if isinstance(operand, tuple):
            return tuple(sub(o) for o in operand)
        return operand

    return dataclasses.replace(op, operands=tuple(sub(o) for o in op.operands))


def _op(op: ir.Op) -> tuple:
    return op.results, op.opcode, op.operands, op.attrs, op.types, op.tile, op.cube_tile


def _facts(scope, kdef, allow: str) -> tuple:
    """The lint facts of a kernel that does not lower: ops in order (their source text as
    written, with the tiles in effect and the pypto loops around them)."""
    from ..frontend import KernelReader

    try:
        kernel = KernelReader(scope, kdef).facts()
    except Exception:  # noqa: BLE001 - what cannot be read is compared as unreadable
        return ("unreadable",)
    ops = []
    for op in kernel.ops:
        if allow == "output-write" and op.op == "assemble" or allow == "output-copy" and op.op == "clone":
            continue
        loops = tuple(_loop_key(loop, allow) for loop in _chain(op.loop))
        ops.append((op.op, ast.unparse(op.node), _tile(op.vec_tile), _tile(op.cube_tile), op.multiplier, loops,
                    tuple(_shape(t) for t in op.inputs), _shape(op.out)))
    return tuple(ops)


def _chain(loop) -> list:
    out = []
    while loop is not None:
        out.append(loop)
        loop = loop.parent
    return out[::-1]


def _loop_key(loop, allow: str):
    if allow == "loop1-merge" and loop.is_loop1:
        return "loop1"
    if allow == "unroll-tail" and loop.kind == "loop":
        return (loop.kind, loop.idx_name, loop.trip, tuple(f for f in loop.unroll or () if f != 1))
    return (loop.kind, loop.idx_name, loop.trip, tuple(loop.unroll or ()))


def _tile(tile):
    return tile if isinstance(tile, tuple) else repr(tile)


def _shape(tensor):
    if tensor is None:
        return None
    shape = tuple(d if isinstance(d, int) else repr(d) for d in tensor.shape) if tensor.shape is not None else None
    return shape, tensor.dtype.name if tensor.dtype is not None else None


# -- negative tests -----------------------------------------------------------------------------
def _raises_ranges(text: str) -> list:
    """The (first, last) lines of every function (at any depth) that uses ``pytest.raises``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    ranges = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(isinstance(n, ast.Attribute) and n.attr == "raises" and isinstance(n.value, ast.Name)
                   and n.value.id == "pytest" for n in ast.walk(node)):
                ranges.append((node.lineno, node.end_lineno or node.lineno))
    return ranges


def _under_pytest_raises(text: str, line: int) -> bool:
    """Whether the function (at any depth) around ``line`` uses ``pytest.raises``."""
    return any(lo <= line <= hi for lo, hi in _raises_ranges(text))
