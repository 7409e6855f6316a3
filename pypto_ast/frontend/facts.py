"""Facts the front end records about each kernel while it evaluates it; rules only read these."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Optional

from .values import Tensor


@dataclass(eq=False)
class LoopFact:
    node: Optional[ast.AST]  # the ``for`` statement; None for the implicit loop(1)
    kind: str  # "implicit" | "loop" | "loop_unroll" | "static" (Python for over range/list)
    parent: Optional["LoopFact"] = None
    function: Optional[ast.AST] = None  # the FunctionDef whose body holds the loop header
    unroll: tuple = ()  # unroll factors from unroll_list (empty: none given)
    unroll_known: bool = True
    idx_name: Optional[str] = None  # explicit idx_name string
    targets: tuple = ()  # loop variable names
    trip: Optional[int] = None
    is_loop1: bool = False  # pypto.loop(1) / loop(0, 1) without unroll or barrier
    submit_before_loop: bool = False
    repeat: int = 1  # how many times the body is traced for one trace of the parent (static for)
    children: list = field(default_factory=list)
    ops: list = field(default_factory=list)  # OpFacts directly in this body (not nested pypto loops)
    branches: list = field(default_factory=list)  # BranchFacts directly in this body
    body_paths: int = 1  # compiled paths of one body copy from symbolic branches (flag branches aside)
    flag_branches: int = 0  # branches on is_loop_begin/is_loop_end
    has_inplace_reshape: bool = False
    # reads behind a ceil-divided trip count ``(n + B - 1) // B`` of a value read from a tensor:
    # the last trip is a partial block (PTO006)
    tail_reads: frozenset = frozenset()

    @property
    def explicit(self) -> bool:
        return self.kind in ("loop", "loop_unroll")

    def pypto_ancestors(self):
        loop = self.parent
        while loop is not None:
            if loop.explicit:
                yield loop
            loop = loop.parent

    def enclosing_pypto(self) -> Optional["LoopFact"]:
        """This loop if it is a pypto loop, else the nearest pypto loop around it."""
        loop: Optional[LoopFact] = self
        while loop is not None and not loop.explicit:
            loop = loop.parent
        return loop

    def compute_loop(self) -> "LoopFact":
        """The loop whose body forms the compute block holding this one (skips static fors)."""
        loop = self
        while loop.kind == "static" and loop.parent is not None:
            loop = loop.parent
        return loop


@dataclass(eq=False)
class OpFact:
    node: ast.AST
    op: str  # op name in pypto's vocabulary ("add", "matmul", ...)
    out: Optional[Tensor]
    inputs: tuple  # TensorVals consumed
    loop: LoopFact
    vec_tile: Any  # tuple of ints / None (none set) / UNKNOWN
    vec_tile_node: Optional[ast.Call]
    cube_tile: Any
    cube_tile_node: Optional[ast.Call]
    vector: bool
    multiplier: int = 1  # static repetitions (Python for) and unroll copies
    axis: Any = None  # reductions: the ``dim`` argument as evaluated (int, list, or UNKNOWN)


@dataclass(eq=False)
class TileSetFact:
    node: ast.Call
    kind: str  # "vec" | "cube"
    dims: Any  # vec: tuple of ints/None; cube: tuple of 3 tuples; UNKNOWN when not evaluable
    loop: LoopFact
    uses: list = field(default_factory=list)  # OpFacts created under this setting


@dataclass(eq=False)
class BranchFact:
    node: ast.AST  # ast.If / ast.IfExp / the pypto.cond call
    kind: str  # "if" | "ifexp" | "cond"
    symbolic: bool
    loop_flag: bool  # the test only involves is_loop_begin/end results
    loop: LoopFact
    context: str  # "jit" | "function" | "helper" | "legacy"


@dataclass(eq=False)
class PrintFact:
    node: ast.Call
    loop: LoopFact


@dataclass(eq=False)
class RebindFact:
    stmt: ast.AST  # Assign / AugAssign / AnnAssign
    target: ast.Name
    param: str
    aug: bool
    simple: bool  # ``name = expr`` with a single Name target (the fixable form)
    value: Any  # abstract value of the right-hand side
    order: int
    loops: tuple  # pypto loops around the statement
    read_after: bool = False


@dataclass(eq=False)
class AccessFact:
    """A read or write of a tracked tensor (a local from pypto.tensor, or a parameter)."""

    node: ast.AST
    tensor: Tensor
    write: bool
    order: int
    loops: tuple  # pypto LoopFacts around the access (innermost last)
    sites: tuple = ()  # the calls the access sits in, outermost first (a read in a helper: its call sites)


@dataclass(eq=False)
class MoveFact:
    """A whole write with no op of its own: ``t[:] = v`` (every index an empty slice, pypto's move)
    or ``t.move(v)``.  ``kind`` says what ``v`` is: "input" (a whole kernel parameter), "slice" (a
    plain ``x[a:b, :]`` slice of one), "temp" (a computed tensor the code reaches by a name), ""
    (anything else, e.g. an expression computed right there)."""

    node: ast.AST  # the target ``t[:]`` / the ``t.move`` call
    stmt: Optional[ast.AST]  # the statement holding it
    target: Tensor
    value: Any
    value_node: Optional[ast.AST]
    method: bool
    kind: str
    order: int
    loops: tuple  # pypto LoopFacts around the write (innermost last)
    context: str  # the frame's context: "jit" | "function" | "helper" | "legacy"


@dataclass(eq=False)
class UseFact:
    """A read of a tensor a MoveFact wrote or moved (``out + x`` after ``out[:] = x``; ``t * 2``
    after ``out.move(t)``)."""

    node: ast.AST
    tensor: Tensor
    order: int
    loops: tuple


@dataclass(eq=False)
class ViewFact:
    node: ast.AST
    has_valid_shape: bool
    uses_tensor_read: bool  # shape/offsets/extent involve a value read from a tensor
    index_of_live_read: bool  # offsets use a loop index that also indexed a live tensor read
    read_node: Optional[ast.AST]  # where that tensor value was read
    slicing: bool
    loop: LoopFact
    read_ids: frozenset = frozenset()  # reads behind the live read (index_of_live_read)
    shape_read_ids: frozenset = frozenset()  # reads in the shape / slice extents (uses_tensor_read)
    offset_read_ids: frozenset = frozenset()  # reads in the offsets
    tail_read_ids: frozenset = frozenset()  # reads behind the ceil-divided trip count of a loop the offsets index
    indirect_tail_read_ids: frozenset = frozenset()  # the same, for a loop the offsets reach through a table read
    layout: Optional[str] = None  # the view's shape and offsets as evaluated (None: not known), to pair views
    valid_read_ids: frozenset = frozenset()  # reads in its valid_shape


@dataclass(eq=False)
class Kernel:
    name: str
    node: ast.AST  # FunctionDef, or the With of a legacy pypto.function
    kind: str  # "jit" | "function" | "pypto.jit" | "legacy"
    params: dict  # name -> TensorVal | None (non-tensor)
    param_nodes: dict  # name -> ast node of the parameter
    has_return_value: bool
    root: LoopFact  # the implicit loop(1)
    loops: list = field(default_factory=list)  # every LoopFact, program order
    ops: list = field(default_factory=list)
    tile_sets: list = field(default_factory=list)
    branches: list = field(default_factory=list)
    prints: list = field(default_factory=list)
    rebinds: list = field(default_factory=list)
    accesses: list = field(default_factory=list)
    views: list = field(default_factory=list)
    outputs: set = field(default_factory=set)  # parameter names written through [:]/move/assemble
    param_reads: list = field(default_factory=list)  # (param name, order, loops)
    # tensor-read id (Sym.reads) -> use kinds: "operand" | "offset" | "valid_shape" | "extent"
    read_uses: dict = field(default_factory=dict)
    local_decls: dict = field(default_factory=dict)  # TensorVal.ident of a local -> its pypto.tensor(...) call
    # names pypto does not have, read in the kernel (message as the transpiler words it, node): PTO028
    unknown_names: list = field(default_factory=list)
    moves: list = field(default_factory=list)  # MoveFacts, program order: PTO016, PTO023
    moved_uses: list = field(default_factory=list)  # UseFacts of tensors a move wrote or moved: PTO023
    # pypto's refusals the front end finds in a lint run, by kind ("bounds", "dtype", "shape",
    # "element-dtype", "step", "signature"): (kind, message as the transpiler words it, node);
    # PTO026 (bounds) and PTO027 (the others)
    op_errors: list = field(default_factory=list)
    # constructs pypto rejects when it traces the kernel (message as the transpiler words it, node): PTO021
    rejected: list = field(default_factory=list)
    # a tensor used as a truth value: (node tested, how: "if" | "ifexp" | "and" | "or" | "not" | "cond",
    # the frame's context): PTO022
    tensor_tests: list = field(default_factory=list)

    @property
    def body(self) -> list:
        return self.node.body
