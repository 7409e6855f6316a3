"""Graphviz view of a Program's control tree, for looking at lowering results.

Loops are clusters with a header node (body edge in, dashed ``next`` edge back, ``exit``
edge out); branches are diamonds whose out-edges say ``true: cond`` / ``false: cond``;
compute blocks are table nodes (an HTML-like label: a title row, then one row per op
with results, opcode and result shapes).
Node ids are numbered in program order, so the output is deterministic.
"""

from __future__ import annotations

import html
import unicodedata

from . import nodes as ir
from .printer import expr, name, sigil_name, value, var_name

INDENT = "  "


def _visible(text: str) -> str:
    """Control characters and lone surrogates shown as ``\\xNN`` (graphviz chokes on them).
    Runs after backslashes are doubled, so it writes the doubled form itself."""
    return "".join(f"\\\\x{ord(c):02x}" if c != "\n" and unicodedata.category(c) in ("Cc", "Cs") else c
                   for c in text)


def _quote(text: str) -> str:
    text = _visible(text.replace("\\", "\\\\"))
    return '"' + text.replace('"', '\\"').replace("\n", "\\n") + '"'


def _html(text: str) -> str:
    """Text inside an HTML-like label: XML entities, and dot still reads ``\\\\`` as one ``\\``."""
    return html.escape(_visible(text.replace("\\", "\\\\").replace("\n", " ")), quote=True)


def _shape(t: ir.TensorType) -> str:
    """``16x64 fp32``; a symbolic dim with spaces in it gets parentheses."""
    dims = [expr(d) for d in t.shape]
    return " ".join(["x".join(f"({d})" if " " in d else d for d in dims), t.dtype]).lstrip()


def op_line(op: ir.Op) -> str:
    """``%0 = add 64x64 fp32``; ops without results name the tensors they write."""
    if op.results:
        head = ", ".join(sigil_name("%", r) for r in op.results) + " = " + name(op.opcode)
    else:
        refs = [sigil_name("@", v.name) for v in op.operands if isinstance(v, ir.TensorRef)]
        head = " ".join([name(op.opcode), *refs])
    shapes = ", ".join(_shape(t) for t in op.types)
    return f"{head} : {shapes}" if shapes else head


class _Dot:
    def __init__(self):
        self.lines: list = []
        self.edges: list = []
        self.count = 0

    def node(self, depth: int, attrs: str) -> str:
        node_id = f"n{self.count}"
        self.count += 1
        self.lines.append(f"{INDENT * depth}{node_id} [{attrs}];")
        return node_id

    def connect(self, preds, dst: str, back: bool = False) -> None:
        """Edges from each tail; a back edge (to a loop header) is dashed, labelled ``next``
        unless the tail already carries a label (a branch arm that is empty)."""
        for src, attrs in preds:
            if back:
                attrs = "style=dashed, " + (attrs or 'label="next"')
            self.edges.append(f"{src} -> {dst}" + (f" [{attrs}]" if attrs else "") + ";")

    def region(self, nodes, preds: list, depth: int) -> list:
        """Draw ``nodes`` after ``preds`` ((node, edge attrs) pairs); return the new tails."""
        for node in nodes:
            preds = getattr(self, "draw_" + type(node).__name__)(node, preds, depth)
        return preds

    def draw_Loop(self, n: ir.Loop, preds, depth):
        self.lines.append(f"{INDENT * depth}subgraph cluster_{self.count} {{")
        title = f"loop {name(n.name)} ({name(n.kind)}, unroll={n.unroll}"
        title += ", submit_before_loop)" if n.submit_before_loop else ")"
        self.lines.append(f"{INDENT * (depth + 1)}label={_quote(title)};")
        rng = f"{var_name(n.var)} = {expr(n.start)} to {expr(n.stop)} step {expr(n.step)}"
        head = self.node(depth + 1, f"shape=box, style=rounded, label={_quote(rng)}")
        self.connect(preds, head)
        tails = self.region(n.body, [(head, 'label="body"')], depth + 1)
        self.connect(tails, head, back=True)
        self.lines.append(f"{INDENT * depth}}}")
        return [(head, 'label="exit"')]

    def draw_Branch(self, n: ir.Branch, preds, depth):
        cond = expr(n.cond)
        test = self.node(depth, f"shape=diamond, label={_quote('if ' + cond)}")
        self.connect(preds, test)
        then = self.region(n.then, [(test, f"label={_quote('true: ' + cond)}")], depth)
        orelse = self.region(n.orelse, [(test, f"label={_quote('false: ' + cond)}")], depth)
        return then + orelse

    def draw_Block(self, n: ir.Block, preds, depth):
        # A table rather than shape=record: dot cannot route some edges between records.
        rows = [f"<tr><td><b>{_html(name(n.name))}</b></td></tr>"]  # never empty: "" is quoted
        rows += [f'<tr><td align="left">{_html(op_line(op))}</td></tr>' for op in n.ops]
        table = '<table border="0" cellborder="1" cellspacing="0">' + "".join(rows) + "</table>"
        node_id = self.node(depth, f"shape=plain, label=<{table}>")
        self.connect(preds, node_id)
        return [(node_id, "")]

    def draw_Return(self, n: ir.Return, preds, depth):
        text = "return " + ", ".join(value(v) for v in n.values)
        node_id = self.node(depth, f"shape=box, label={_quote(text.rstrip())}")
        self.connect(preds, node_id)
        return [(node_id, "")]


def program_to_dot(program: ir.Program) -> str:
    """A ``digraph`` of ``program``: entry, the control tree in program order, exit."""
    d = _Dot()
    params = ", ".join(p.name for p in program.params)
    start = d.node(1, f"shape=oval, label={_quote(f'program {program.name}({params}) paths={program.paths}')}")
    tails = d.region(program.body, [(start, "")], 1)
    end = d.node(1, 'shape=oval, label="end"')
    d.connect(tails, end)
    header = [f"digraph {_quote(program.name)} {{",
              f'{INDENT}node [fontname="monospace"];',
              f'{INDENT}edge [fontname="monospace"];']
    return "\n".join(header + d.lines + [INDENT + e for e in d.edges] + ["}"]) + "\n"
