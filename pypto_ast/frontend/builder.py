"""The IR a kernel evaluation builds: SSA values, compute ops in the current region, named
tensors (parameters, locals, branch workspaces), and the count of compiled paths.

The evaluator owns control flow (it opens a region per loop body and branch arm); the builder
only records what it is told, in order, and closes regions into ``ir.Loop`` / ``ir.Branch`` /
``ir.Block`` nodes.
"""

from __future__ import annotations

import contextlib
from .. import ir


class Builder:
    def __init__(self, name: str):
        self.name = name
        self.counter = 0
        self.events: list = []  # the current region: ir.Op, ir.Loop, ir.Branch, ir.Return
        self.params: list = []  # ir.Param, in signature order
        self.param_names: set = set()
        self.locals: dict = {}  # name -> ir.TensorType (pypto.tensor locals and branch workspaces)
        self.outputs: set = set()

    # -- values and ops ---------------------------------------------------------------------
    def fresh(self) -> str:
        name = str(self.counter)
        self.counter += 1
        return name

    def op(self, opcode: str, operands: tuple, attrs: dict, types: tuple, tile, cube_tile, span) -> tuple:
        names = tuple(self.fresh() for _ in types)
        self.events.append(ir.Op(names, opcode, operands, tuple(sorted(attrs.items())), types, tile, cube_tile, span))
        return names

    def local(self, base: str, ttype: ir.TensorType) -> str:
        """A new named tensor ``@base`` (``@base_1``, ... when taken)."""
        name, n = base, 1
        while name in self.locals or name in self.param_names:
            name, n = f"{base}_{n}", n + 1
        self.locals[name] = ttype
        return name

    # -- regions ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def region(self):
        """Collect what is recorded inside the ``with`` into its own list (yielded)."""
        saved, self.events = self.events, []
        collected = self.events
        try:
            yield collected
        finally:
            self.events = saved

    def add(self, node) -> None:
        self.events.append(node)

    # -- the program ------------------------------------------------------------------------
    def program(self, body: list, attrs: tuple) -> ir.Program:
        region = ir.name_blocks(group(body))
        params = tuple(p if p.kind != "tensor" else ir.Param(p.name, p.kind, p.type, p.name in self.outputs, p.value)
                       for p in self.params)
        locals_ = tuple(ir.LocalTensor(n, t) for n, t in self.locals.items())
        return ir.Program(self.name, params, region, locals_, count_paths(region), attrs)


def group(items: list) -> tuple:
    """A region from recorded items: consecutive ops become one Block."""
    region: list = []
    pending: list = []

    def flush():
        if pending:
            region.append(ir.Block("", tuple(pending)))
            pending.clear()

    for item in items:
        if isinstance(item, ir.Op):
            pending.append(item)
            continue
        flush()
        region.append(item)
    flush()
    return tuple(region)


def _traces(region: tuple, memo: dict | None = None) -> int:
    """Paths through a region, as pypto traces it: each symbolic branch splits the path.
    ``memo`` (id of a region -> count) keeps a walk over nested regions linear."""
    if memo is not None:
        hit = memo.get(id(region))
        if hit is not None:
            return hit
    n = 1
    for node in region:
        if isinstance(node, ir.Branch):
            n *= _traces(node.then, memo) + _traces(node.orelse, memo)
    if memo is not None:
        memo[id(region)] = n
    return n


# Program.paths saturates here: no compiler enumerates more, and the exact count of a hostile
# kernel (a branch in a body unrolled 100 000 times: 2**100000) is no number to print
MAX_PATHS = 2 ** 63 - 1


def count_paths(region: tuple) -> int:
    """The control paths pypto compiles for a program (``Program.paths``): every loop body -- the
    implicit loop(1) included -- once per path through it, each time the loop is reached while
    its enclosing body is traced (a loop inside one arm of a branch is reached on that arm's
    paths only).  At most MAX_PATHS."""
    memo: dict = {}  # every region stays alive during the walk, so ids are not reused

    def visit(region: tuple, passes: int, runs: int) -> int:
        # passes: traces of the enclosing loop body that go through ``region``;
        # runs: how often that enclosing loop is traced as a whole
        total = 0
        for node in region:
            if isinstance(node, ir.Loop):
                loop_runs = runs * passes
                body = _traces(node.body, memo)
                total += loop_runs * body + visit(node.body, body, loop_runs)
            elif isinstance(node, ir.Branch):
                split = _traces(node.then, memo) + _traces(node.orelse, memo)
                for arm in (node.then, node.orelse):
                    total += visit(arm, passes // split * _traces(arm, memo), runs)
        return total

    return min(visit(region, 1, 1), MAX_PATHS)
