"""The peer for bench/lint_throughput.py: PTO007 (print in a pypto loop) written as a Fixit rule.

Fixit resolves names with LibCST's QualifiedNameProvider, as its docs recommend; this is
the "one equivalent rule" the throughput goal compares against.
"""

import libcst as cst
from fixit import LintRule
from libcst.metadata import QualifiedNameProvider

LOOPS = {"pypto.loop", "pypto.loop_unroll"}


class PrintInPyptoLoop(LintRule):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)
    MESSAGE = "print() inside a pypto loop runs once per traced path"

    def __init__(self):
        super().__init__()
        self.depth = 0

    def _is_pypto_loop(self, node: cst.For) -> bool:
        if not isinstance(node.iter, cst.Call):
            return False
        names = self.get_metadata(QualifiedNameProvider, node.iter.func, set())
        return any(n.name in LOOPS for n in names)

    def visit_For(self, node: cst.For) -> None:
        if self._is_pypto_loop(node):
            self.depth += 1

    def leave_For(self, original_node: cst.For) -> None:
        if self._is_pypto_loop(original_node):
            self.depth -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if self.depth and isinstance(node.func, cst.Name):
            names = self.get_metadata(QualifiedNameProvider, node.func, set())
            if any(n.name == "builtins.print" for n in names):
                self.report(node)
