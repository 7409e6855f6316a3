"""``--merge-loop1``: merge consecutive loop(1) regions in the IR (what the PTO012 fix does
to the source). A plain loop(1) whose index is unused joins the region before it: the
compute blocks that end up adjacent become one block."""

from __future__ import annotations

import dataclasses

from . import nodes as ir
from .nodes import name_blocks


def _is_loop1(node) -> bool:
    return (isinstance(node, ir.Loop) and node.kind in ("loop", "implicit") and node.unroll == 1
            and node.start == ir.Const(0) and node.stop == ir.Const(1) and node.step == ir.Const(1)
            and not node.submit_before_loop)


def _uses_var(region, var: str) -> bool:
    def expr_uses(e) -> bool:
        if isinstance(e, ir.Var):
            return e.name == var
        if isinstance(e, ir.BinExpr):
            return expr_uses(e.a) or expr_uses(e.b)
        if isinstance(e, ir.UnExpr):
            return expr_uses(e.a)
        if isinstance(e, ir.Read):
            return any(expr_uses(i) for i in e.index)
        if isinstance(e, (tuple, list)):
            return any(expr_uses(x) for x in e)
        return False

    for node in ir.walk(region):
        if isinstance(node, ir.Block):
            for op in node.ops:
                if expr_uses(op.operands) or expr_uses(tuple(v for _, v in op.attrs)):
                    return True
        elif isinstance(node, ir.Loop):
            if expr_uses((node.start, node.stop, node.step)):
                return True
        elif isinstance(node, ir.Branch) and expr_uses(node.cond):
            return True
    return False


def _merge_blocks(region: list) -> list:
    out: list = []
    for node in region:
        if isinstance(node, ir.Block) and out and isinstance(out[-1], ir.Block):
            out[-1] = ir.Block(out[-1].name, out[-1].ops + node.ops)
        else:
            out.append(node)
    return out


def _merge_region(region: tuple, inline_into_parent: bool) -> tuple:
    out: list = []
    for node in region:
        if isinstance(node, ir.Loop):
            node = dataclasses.replace(node, body=_merge_region(node.body, _is_loop1(node)))
        elif isinstance(node, ir.Branch):
            node = dataclasses.replace(node, then=_merge_region(node.then, False),
                                       orelse=_merge_region(node.orelse, False))
        mergeable = _is_loop1(node) and node.kind == "loop" and not _uses_var(node.body, node.var)
        if mergeable and inline_into_parent and out:
            out.extend(node.body)  # joins the enclosing loop(1) region
        elif mergeable and out and _is_loop1(out[-1]) and out[-1].kind == "loop":
            out[-1] = dataclasses.replace(out[-1], body=tuple(_merge_blocks(list(out[-1].body) + list(node.body))))
        else:
            out.append(node)
    return tuple(_merge_blocks(out))


def merge_loop1(program: ir.Program) -> ir.Program:
    return dataclasses.replace(program, body=name_blocks(_merge_region(program.body, False)))
