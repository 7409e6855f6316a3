"""A static cost model of a lowered program: estimated cycles per task, per core, on an A2 SoC.

What pypto's ``RunMode.SIM`` answers with its own simulator (how long would this kernel take, and
where), answered here from the IR alone with a deliberately small model whose every constant is
below and in docs/design.md §33.  The figures are pypto-ast's estimate, not a measurement and not
pypto's simulator; they grow with the work as the hardware's would (bytes moved, vector repeats,
cube fractals) and put each task on the core kind that would run it.

The model, in one paragraph: the control program is walked with the call's scalars and shapes
(loops iterate, branches take the arm their condition gives).  Each time a ``Block`` is reached
its ops are cut into *stages*: maximal runs of ops on one unit (cube: ``matmul``/``conv``; vector:
every other computing op), the data between stages going through GM as it does on A2 (AIC and AIV
share only GM).  A stage is split into tasks -- the tiles of its coarsest-tiled op (vector) or the
``[m, n]`` tiles of its output (cube) -- and each task runs three phases one after the other on one
core: copy-in (GM -> UB / L1: views and whole-tensor operands read from memory, values from an
earlier stage), compute (vector repeats, or cube fractal steps), copy-out (assembles, values a
later stage reads).  Tasks go to the earliest free core of their kind; a stage waits for the
previous stage of its block and for the last write of every named tensor it reads (a whole-tensor
read-after-write; writes of different regions are not told apart, so that wait is conservative).

No torch, no numpy: this module reads ``ir.nodes`` and ``socs`` only, so ``pypto-transpile --emit
cost`` starts fast and the drop-in calls it with the shapes of the call.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..socs import Soc, get_soc
from .nodes import (
    DTYPE_BYTES, BinExpr, Block, Branch, Const, Loop, Op, Program, Read, Return, ShapeOf, TensorRef, UnExpr, Value,
    Var,
)

# ---------------------------------------------------------------------------------------------
# Constants (docs/design.md §33: which are documented A2 figures and which are assumptions)

REPEAT_BYTES = 256  # one vector instruction step processes 8 x 32 B blocks (ascendc.md §3)
VECTOR_ISSUE = 30  # cycles per vector instruction per task: issue, pipeline fill, pipe sync (assumed)
# vector cycles per 256 B repeat, by op family (assumed: 1 for the single-instruction ALU ops)
VECTOR_CYCLES = {
    "simple": 1,  # add, mul, max, compare, select, cast, copy, duplicate, ...
    "reduce": 2,  # a repeat reduced, then the partial results combined
    "unit": 4,  # single instructions of the A2 vector unit that iterate: Div, Exp, Ln, Sqrt, Rsqrt, Reciprocal
    "composite": 12,  # math-library functions built of several vector instructions: sin, erf, atan, pow, ...
    "sort": 16,  # sort / top-k / argsort per repeat and per merge level (x log2 of the row)
    "indexed": 16,  # gather, scatter: element-addressed moves
}
_UNIT = {"div", "exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "floor_div", "ceil_div",
         "fmod", "remainder", "expm1", "log1p"}
_COMPOSITE = {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
              "erf", "erfc", "pow", "sigmoid", "cbrt", "hypot", "gcd", "softmax", "normal", "uniform", "round",
              "copysign", "prelu", "lrelu", "quantize", "dequantize", "cumsum", "cumprod", "one_hot"}
_REDUCE = {"sum", "amax", "amin", "prod", "argmax", "argmin"}
_SORT = {"sort", "argsort", "topk"}
_INDEXED = {"gather", "scatter", "scatter_update", "experimental.gather_in_ub", "gather_in_ub"}
_CUBE = {"matmul", "conv"}
_FREE = {"view", "reshape", "unsqueeze", "assemble", "move", "store_scalar"}  # address arithmetic, or a move
_WRITES = {"assemble", "move", "store_scalar", "scatter_update"}  # ops writing their TensorRef operand

# the cube multiplies one [16 x (32 B / element)] by one [(32 B / element) x 16] fractal per cycle
CUBE_FRACTAL_BYTES = 32
CUBE_MN = 16
CUBE_DEFAULT_TILE = 128  # output rows / columns per cube task when no cube tile is set (assumed)

MTE_BYTES_PER_CYCLE = 64  # one core's DMA between GM and UB / L1 (assumed: 2 x 32 B blocks a cycle)
HBM_BYTES_PER_CYCLE = 888  # the chip's HBM, shared by the cores moving at once: 1.6 TB/s at 1.8 GHz
DMA_LATENCY = 200  # cycles before the first byte of a GM transfer arrives (assumed)
TASK_DISPATCH = 100  # cycles the AI CPU takes to hand a task to a core (assumed)

MAX_TASKS = 200_000  # tasks simulated at most (beyond: the estimate says it is partial)
MAX_EVENTS = 20_000  # tasks drawn on the timeline at most (the totals count every task)


class CostError(ValueError):
    """The program cannot be estimated with what is known (a loop bound read from data not given)."""


# ---------------------------------------------------------------------------------------------
# The result


@dataclass
class Task:
    lane: tuple  # ("AIC" | "AIV", index)
    block: str
    stage: int
    index: int  # the task's number within its stage instance
    start: float  # cycles
    copy_in: float
    compute: float
    copy_out: float
    bytes_in: int
    bytes_out: int
    ops: tuple  # opcodes of the stage
    line: Optional[int]

    @property
    def end(self) -> float:
        return self.start + TASK_DISPATCH + self.copy_in + self.compute + self.copy_out


@dataclass
class Estimate:
    kernel: str
    soc: Soc
    total_cycles: float = 0.0
    tasks: list = field(default_factory=list)  # the first MAX_EVENTS tasks
    n_tasks: dict = field(default_factory=lambda: {"AIC": 0, "AIV": 0})
    busy: dict = field(default_factory=lambda: {"MTE_IN": 0.0, "VECTOR": 0.0, "CUBE": 0.0, "MTE_OUT": 0.0})
    bytes: dict = field(default_factory=lambda: {"in": 0, "out": 0})
    blocks: dict = field(default_factory=dict)  # name -> {"instances", "tasks", "cycles", "line"}
    lanes_used: dict = field(default_factory=lambda: {"AIC": set(), "AIV": set()})
    complete: bool = True
    assumed_branches: int = 0

    @property
    def total_us(self) -> float:
        return self.total_cycles / self.soc.clock_mhz

    def summary(self) -> dict:
        return {
            "generator": "pypto-ast static cost model (an estimate from the IR, docs/design.md §33)",
            "kernel": self.kernel, "soc": self.soc.name, "clock_mhz": self.soc.clock_mhz,
            "cube_cores": self.soc.cube_cores, "vector_cores": self.soc.vector_cores,
            "total_cycles": int(math.ceil(self.total_cycles)), "total_us": round(self.total_us, 3),
            "tasks": dict(self.n_tasks), "busy_cycles": {k: int(round(v)) for k, v in self.busy.items()},
            "bytes": dict(self.bytes), "complete": self.complete, "assumed_branches": self.assumed_branches,
            "blocks": {k: {**v, "cycles": int(round(v["cycles"]))} for k, v in self.blocks.items()},
        }


# ---------------------------------------------------------------------------------------------
# Scalars


_BIN = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "//": lambda a, b: a // b,
    "%": lambda a, b: a % b, "/": lambda a, b: a / b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "and": lambda a, b: a and b, "or": lambda a, b: a or b, "min": min, "max": max,
}


class _Unknown(Exception):
    pass


class _Walker:
    def __init__(self, program: Program, shapes: dict, scalars: dict, read: Optional[Callable], soc: Soc):
        self.program, self.soc = program, soc
        self.shapes = {k: tuple(int(d) for d in v) for k, v in shapes.items()}
        self.scalars = dict(scalars)
        self.read = read
        self.values: dict = {}  # SSA name -> (shape, dtype), as last defined
        self.dtypes = {p.name: p.type.dtype for p in program.params if p.type is not None}
        for p in program.params:
            if p.kind == "tensor" and p.name not in self.shapes and p.type is not None:
                self.shapes[p.name] = tuple(self.int(d) for d in p.type.shape)
        for t in program.locals:
            self.dtypes[t.name] = t.type.dtype
            if t.name not in self.shapes:
                self.shapes[t.name] = tuple(self.int(d) for d in t.type.shape)
        # values a block defines and another block reads: they go through GM (one AI-core graph
        # per block)
        defined, used = {}, {}
        for block in _blocks(program.body):
            own = set()
            for op in block.ops:
                for x in _operands(op):
                    if isinstance(x, Value) and x.name not in own:  # read from another block
                        used.setdefault(x.name, set()).add(block.name)
                for r in op.results:
                    defined.setdefault(r, set()).add(block.name)
                    own.add(r)
        self.escapes = {}
        self.gm_views: dict = {}
        for name, readers in used.items():
            for producer in defined.get(name, ()):
                if readers - {producer}:
                    self.escapes.setdefault(producer, set()).add(name)
        self.free = {"AIC": [0.0] * soc.cube_cores, "AIV": [0.0] * soc.vector_cores}
        self.written: dict = {}  # named tensor -> end of its last write (cycles)
        self.est = Estimate(program.name, soc)
        self.count = 0

    # -- expressions
    def eval(self, e: Any) -> Any:
        if isinstance(e, (bool, int, float)):
            return e
        if isinstance(e, Const):
            return e.value
        if isinstance(e, Var):
            if e.name not in self.scalars:
                raise _Unknown(f"scalar {e.name}")
            return self.scalars[e.name]
        if isinstance(e, ShapeOf):
            shape = self.shapes.get(e.tensor) or (self.values.get(e.tensor) or (None,))[0]
            if shape is None:
                raise _Unknown(f"the shape of {e.tensor}")
            return shape[e.axis]
        if isinstance(e, Read):
            if self.read is None:
                raise _Unknown(f"a value read from @{e.tensor}")
            return self.read(e.tensor, tuple(self.int(i) for i in e.index))
        if isinstance(e, BinExpr):
            return _BIN[e.op](self.eval(e.a), self.eval(e.b))
        if isinstance(e, UnExpr):
            a = self.eval(e.a)
            return -a if e.op == "-" else not a
        raise _Unknown(f"{e!r}")

    def int(self, e: Any) -> int:
        return int(self.eval(e))

    # -- the control program
    def region(self, region: tuple) -> bool:
        """Run a region; False once a Return (or the task cap) ends the program."""
        for node in region:
            if isinstance(node, Block):
                self.block(node)
                if not self.est.complete:
                    return False
            elif isinstance(node, Loop):
                try:
                    start, stop, step = self.int(node.start), self.int(node.stop), self.int(node.step)
                except _Unknown as exc:
                    raise CostError(f"loop {node.name or node.var}: its bounds need {exc}") from None
                saved = self.scalars.get(node.var)
                for i in range(start, stop, step or 1):
                    self.scalars[node.var] = i
                    if not self.region(node.body):
                        return False
                if saved is not None:
                    self.scalars[node.var] = saved
            elif isinstance(node, Branch):
                try:
                    taken = bool(self.eval(node.cond))
                except _Unknown:
                    taken = True
                    self.est.assumed_branches += 1
                if not self.region(node.then if taken else node.orelse):
                    return False
            elif isinstance(node, Return):
                return False
        return True

    # -- one block instance
    def shape_of(self, x: Any) -> Optional[tuple]:
        if isinstance(x, Value):
            v = self.values.get(x.name)
            return v[0] if v else None
        if isinstance(x, TensorRef):
            return self.shapes.get(x.name)
        return None

    def dtype_of(self, x: Any) -> Optional[str]:
        if isinstance(x, Value):
            v = self.values.get(x.name)
            return v[1] if v else None
        if isinstance(x, TensorRef):
            return self.dtypes.get(x.name)
        return None

    def define(self, op: Op) -> None:
        for name, t in zip(op.results, op.types):
            try:
                shape = tuple(self.int(d) for d in t.shape)
            except _Unknown:
                shape = self.shape_of(op.operands[0]) if op.operands else ()
            self.values[name] = (shape or (), t.dtype)
        if op.opcode == "view":
            valid = op.attr("valid_shape")
            if valid is not None and op.results:
                try:
                    shape = tuple(max(0, self.int(d)) for d in valid)
                    self.values[op.results[0]] = (shape, self.values[op.results[0]][1])
                except _Unknown:
                    pass

    def block(self, block: Block) -> None:
        stages = []  # [unit, ops]
        unit_of = {}  # SSA name -> stage index (-1: defined by another block, read through GM)
        gm_views = self.gm_views  # SSA name of a view of a named tensor -> the tensor (in any block)
        for op in block.ops:
            for r in op.results:
                gm_views.pop(r, None)
            for x in _operands(op):
                if isinstance(x, Value) and x.name not in unit_of and x.name not in gm_views:
                    unit_of[x.name] = -1
            self.define(op)
            if op.opcode == "view" and op.operands and isinstance(op.operands[0], TensorRef):
                gm_views[op.results[0]] = op.operands[0].name
                continue
            if op.opcode in ("view", "reshape", "unsqueeze") and op.operands and isinstance(op.operands[0], Value):
                src = op.operands[0].name
                if src in gm_views:
                    gm_views[op.results[0]] = gm_views[src]
                elif src in unit_of:
                    unit_of[op.results[0]] = unit_of[src]
                continue
            unit = "cube" if op.opcode in _CUBE else "vector"
            if op.opcode in _FREE and stages:
                stages[-1][1].append(op)  # a move goes with the stage before it
            elif stages and stages[-1][0] == unit:
                stages[-1][1].append(op)
            else:
                stages.append([unit, [op]])
            for r in op.results:
                unit_of[r] = len(stages) - 1
        ready = 0.0
        for index, (unit, ops) in enumerate(stages):
            ready = self.stage(block, index, unit, ops, ready, unit_of, gm_views)
            if not self.est.complete:
                return
        entry = self.est.blocks.setdefault(block.name, {"instances": 0, "tasks": 0, "cycles": 0.0, "line": None})
        entry["instances"] += 1
        if entry["line"] is None:
            entry["line"] = next((op.span.line for op in block.ops if op.span is not None), None)

    def stage(self, block, index, unit, ops, ready, unit_of, gm_views) -> float:
        bytes_in = bytes_out = 0
        reads, writes = set(), set()
        seen = set()
        work = 0.0  # compute cycles of the whole stage, before the split into tasks
        issue = 0  # vector instructions per task
        tasks = None
        later = set()
        for op in ops:
            for x in _operands(op):
                if isinstance(x, TensorRef) and op.opcode not in _WRITES:
                    if ("@", x.name) not in seen:
                        seen.add(("@", x.name))
                        bytes_in += _nbytes(self.shapes.get(x.name), self.dtypes.get(x.name))
                    reads.add(x.name)
                elif isinstance(x, Value) and x.name not in seen:
                    if x.name in gm_views:
                        seen.add(x.name)
                        bytes_in += _nbytes(*self.values.get(x.name, ((), None)))
                        reads.add(gm_views[x.name])
                    elif unit_of.get(x.name, index) != index:
                        seen.add(x.name)
                        bytes_in += _nbytes(*self.values.get(x.name, ((), None)))
                        if unit_of.get(x.name) == -1:  # another block's: wait for its copy-out
                            reads.add("%" + x.name)
            if op.opcode in _WRITES:
                target = next((x for x in op.operands if isinstance(x, TensorRef)), None)
                if target is not None:
                    writes.add(target.name)
                value = op.operands[0] if op.operands else None
                if op.opcode in ("assemble", "move") and isinstance(value, Value):
                    bytes_out += _nbytes(*self.values.get(value.name, ((), None)))
                    if value.name in gm_views:  # a copy GM -> GM through UB: read it too
                        if value.name not in seen:
                            seen.add(value.name)
                            bytes_in += _nbytes(*self.values.get(value.name, ((), None)))
                        reads.add(gm_views[value.name])
                elif op.opcode == "store_scalar":
                    bytes_out += 32
                if op.opcode != "scatter_update":
                    continue
            if op.opcode in _FREE:
                continue
            if unit == "cube":
                cycles, n, extra_in = self._cube(op)
                work += cycles
                tasks = n if tasks is None else max(tasks, n)
                bytes_in += extra_in
            else:
                cycles, grid = self._vector(op)
                work += cycles
                issue += 1
                if grid is not None:
                    tasks = grid if tasks is None else min(tasks, grid)
            later.update(op.results)
        # values a later stage of this block reads leave through GM
        escapes = self.escapes.get(block.name, ())
        for name in later:
            if name in escapes or any(unit_of.get(name) == index and _reads_value(o, name)
                                      for o in self._later_ops(block, ops)):
                bytes_out += _nbytes(*self.values.get(name, ((), None)))
                if name in escapes:
                    writes.add("%" + name)
        tasks = max(1, tasks or 1)
        kind = "AIC" if unit == "cube" else "AIV"
        lanes = self.free[kind]
        busy = min(tasks, len(lanes))
        bandwidth = min(MTE_BYTES_PER_CYCLE, HBM_BYTES_PER_CYCLE / busy)
        per_in = bytes_in / tasks
        per_out = bytes_out / tasks
        copy_in = (DMA_LATENCY + per_in / bandwidth) if per_in else 0.0
        copy_out = (DMA_LATENCY + per_out / bandwidth) if per_out else 0.0
        compute = work / tasks + (VECTOR_ISSUE * issue if unit == "vector" else 0)
        start_at = max([ready] + [self.written.get(t, 0.0) for t in reads])
        end = start_at
        est = self.est
        line = next((op.span.line for op in ops if op.span is not None), None)
        opcodes = tuple(op.opcode for op in ops)
        for t in range(tasks):
            if self.count >= MAX_TASKS:
                est.complete = False
                return end
            lane = min(range(len(lanes)), key=lanes.__getitem__)
            start = max(start_at, lanes[lane])
            task = Task((kind, lane), block.name, index, t, start, copy_in, compute, copy_out,
                        int(per_in), int(per_out), opcodes, line)
            lanes[lane] = task.end
            end = max(end, task.end)
            self.count += 1
            if len(est.tasks) < MAX_EVENTS:
                est.tasks.append(task)
            est.lanes_used[kind].add(lane)
        est.n_tasks[kind] += tasks
        est.busy["MTE_IN"] += copy_in * tasks
        est.busy["MTE_OUT"] += copy_out * tasks
        est.busy["CUBE" if unit == "cube" else "VECTOR"] += compute * tasks
        est.bytes["in"] += bytes_in
        est.bytes["out"] += bytes_out
        entry = est.blocks.setdefault(block.name, {"instances": 0, "tasks": 0, "cycles": 0.0, "line": None})
        entry["tasks"] += tasks
        entry["cycles"] += (TASK_DISPATCH + copy_in + compute + copy_out) * tasks
        for name in writes:
            self.written[name] = max(self.written.get(name, 0.0), end)
        est.total_cycles = max(est.total_cycles, end)
        return end

    def _later_ops(self, block: Block, ops: list):
        after = False
        last = ops[-1]
        for op in block.ops:
            if after:
                yield op
            elif op is last:
                after = True

    # -- op costs
    def _vector(self, op: Op) -> tuple:
        out = self.values.get(op.results[0]) if op.results else None
        elems = math.prod(out[0]) if out else 0
        width = _compute_bytes(out[1] if out else None)
        for x in _operands(op):
            shape = self.shape_of(x)
            if shape is not None:
                elems = max(elems, math.prod(shape))
                width = max(width, _compute_bytes(self.dtype_of(x)))
        repeats = math.ceil(elems * width / REPEAT_BYTES)
        family = _family(op.opcode)
        cycles = repeats * VECTOR_CYCLES[family]
        if family == "sort":
            row = (out[0][-1] if out and out[0] else 1) or 1
            cycles *= max(1, math.ceil(math.log2(max(2, row))))
        grid = None
        if op.tile is not None and out:
            shape = out[0]
            tile = list(op.tile)[-len(shape):] if shape else []
            tile = [1] * (len(shape) - len(tile)) + tile
            grid = math.prod(math.ceil(d / max(1, t)) for d, t in zip(shape, tile)) if shape else 1
        return cycles, grid

    def _cube(self, op: Op) -> tuple:
        """(cycles, tasks, extra bytes read) of a matmul (a conv: its im2col matmul)."""
        out = self.values.get(op.results[0]) if op.results else None
        if not out or len(out[0]) < 2:
            return 0.0, 1, 0
        a, b = (op.operands + (None, None))[:2]
        ash, bsh = self.shape_of(a), self.shape_of(b)
        elem = DTYPE_BYTES.get(self.dtype_of(a) or "fp16", 2)
        m, n = out[0][-2], out[0][-1]
        batch = math.prod(out[0][:-2])
        if op.opcode == "conv" and bsh is not None:
            k = math.prod(bsh[1:])  # C_in x kernel window per output element
            m, n, batch = math.prod(out[0]) // max(1, out[0][1]), out[0][1], 1
        elif ash is not None:
            k = ash[-2] if op.attr("a_trans", False) else ash[-1]
        else:
            k = 1
        depth = max(1, CUBE_FRACTAL_BYTES // elem)
        steps = batch * math.ceil(m / CUBE_MN) * math.ceil(n / CUBE_MN) * math.ceil(k / depth)
        if op.cube_tile:
            tm, tn = max(op.cube_tile[0]), max(op.cube_tile[2])
        else:
            tm = tn = CUBE_DEFAULT_TILE
        tasks = batch * math.ceil(m / tm) * math.ceil(n / tn)
        # every task reads its rows of a and its columns of b: b is read once per row tile
        whole = _nbytes(ash, self.dtype_of(a)) + _nbytes(bsh, self.dtype_of(b))
        reread = batch * (math.ceil(n / tn) - 1) * m * k * elem + batch * (math.ceil(m / tm) - 1) * k * n * elem
        extra = max(0, reread) if whole else 0
        return float(steps), tasks, extra


def _blocks(region: tuple):
    for node in region:
        if isinstance(node, Block):
            yield node
        elif isinstance(node, Loop):
            yield from _blocks(node.body)
        elif isinstance(node, Branch):
            yield from _blocks(node.then)
            yield from _blocks(node.orelse)


def _operands(op: Op):
    for x in op.operands:
        if isinstance(x, (tuple, list)):
            yield from (y for y in x if isinstance(y, (Value, TensorRef)))
        elif isinstance(x, (Value, TensorRef)):
            yield x


def _reads_value(op: Op, name: str) -> bool:
    return any(isinstance(x, Value) and x.name == name for x in _operands(op))


def _family(opcode: str) -> str:
    if opcode in _UNIT:
        return "unit"
    if opcode in _COMPOSITE:
        return "composite"
    if opcode in _REDUCE:
        return "reduce"
    if opcode in _SORT:
        return "sort"
    if opcode in _INDEXED:
        return "indexed"
    return "simple"


def _compute_bytes(dtype: Optional[str]) -> int:
    """Bytes per element the vector unit computes on: bf16 is computed in fp32 (design §12)."""
    if dtype is None:
        return 1
    return 4 if dtype == "bf16" else DTYPE_BYTES.get(dtype, 4)


def _nbytes(shape: Optional[tuple], dtype: Optional[str]) -> int:
    if not shape and shape != ():
        return 0
    return math.prod(shape) * DTYPE_BYTES.get(dtype or "fp32", 4)


# ---------------------------------------------------------------------------------------------
# Entry point and text forms


def estimate(program: Program, shapes: Optional[dict] = None, scalars: Optional[dict] = None,
             read: Optional[Callable] = None, soc: Soc | str | None = None) -> Estimate:
    """Estimate ``program`` run with tensors of ``shapes`` (name -> dims; the declared ones
    otherwise), ``scalars`` (name -> value; the specialised values otherwise) and ``read(tensor,
    index) -> int`` for scalars a loop bound or branch reads from data."""
    soc = soc if isinstance(soc, Soc) else get_soc(soc)
    given = {p.name: p.value for p in program.params if p.kind == "scalar" and p.value is not None}
    given.update(scalars or {})
    try:
        walker = _Walker(program, shapes or {}, given, read, soc)
        walker.region(program.body)
    except _Unknown as exc:
        raise CostError(f"the estimate needs {exc}") from None
    return walker.est


LANE_TID = {"AIC": 1000, "AIV": 3000}


def trace(est: Estimate) -> dict:
    """The timeline as Chrome trace events (``{"traceEvents": [...]}``, times in microseconds),
    one thread per core (``AIC_<n>`` / ``AIV_<n>``): a task event holding its three phases."""
    mhz = est.soc.clock_mhz
    events = [{"name": "process_name", "ph": "M", "pid": 1, "cat": "__metadata",
               "args": {"name": f"pypto-ast cost model (static estimate): {est.kernel}"}}]
    for kind in ("AIC", "AIV"):
        for lane in sorted(est.lanes_used[kind]):
            events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": LANE_TID[kind] + lane,
                           "cat": "__metadata", "args": {"name": f"{kind}_{lane}"}})
    for n, t in enumerate(est.tasks):
        tid = LANE_TID[t.lane[0]] + t.lane[1]
        compute = "cube" if t.lane[0] == "AIC" else "vector"
        args = {"block": t.block, "stage": t.stage, "task": t.index, "ops": " ".join(t.ops),
                "bytes_in": t.bytes_in, "bytes_out": t.bytes_out,
                "cycles": int(round(t.end - t.start)), "line": t.line}
        events.append({"name": f"{t.block}.s{t.stage}[{t.index}]", "cat": "task", "ph": "X", "pid": 1, "tid": tid,
                       "id": n, "ts": t.start / mhz, "dur": (t.end - t.start) / mhz, "args": args})
        at = t.start + TASK_DISPATCH
        for phase, cycles in (("copy-in", t.copy_in), (compute, t.compute), ("copy-out", t.copy_out)):
            if cycles > 0:
                events.append({"name": phase, "cat": phase, "ph": "X", "pid": 1, "tid": tid, "ts": at / mhz,
                               "dur": cycles / mhz, "args": {"cycles": int(round(cycles))}})
            at += cycles
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": est.summary()}


def report(est: Estimate) -> str:
    """The cycle report: totals, per-pipe busy cycles, per block."""
    s = est.summary()

    def row(key: str, value: Any) -> str:
        return f"{key:.<50}: {value:>12}"

    ncube, nvec = len(est.lanes_used["AIC"]), len(est.lanes_used["AIV"])
    lines = ["pypto-ast static cost model: an estimate from the IR, not a measurement (docs/design.md §33)",
             row("Kernel", est.kernel), row("SoC", f"{est.soc.name}"),
             row("Clock (MHz)", est.soc.clock_mhz),
             row("Cube Count", est.soc.cube_cores), row("Vector Count", est.soc.vector_cores),
             row("Total Cycles", s["total_cycles"]), row("Total Time (us)", f"{est.total_us:.3f}"),
             row("Total Submit Tasks", est.n_tasks["AIC"] + est.n_tasks["AIV"]),
             row("  |--Cube Tasks", est.n_tasks["AIC"]), row("  |--Vector Tasks", est.n_tasks["AIV"]),
             row("Bytes GM -> core", est.bytes["in"]), row("Bytes core -> GM", est.bytes["out"])]
    total = max(1.0, est.total_cycles)
    for pipe, used in (("MTE_IN", ncube + nvec), ("VECTOR", nvec), ("CUBE", ncube), ("MTE_OUT", ncube + nvec)):
        busy = est.busy[pipe]
        avg = busy / used if used else 0.0
        lines.append(row(f"Average {pipe} Busy (cycles, per core used)", f"{avg:.0f} {100 * avg / total:6.2f}%"))
    if est.assumed_branches:
        lines.append(row("Branches taken as `then` (condition unknown)", est.assumed_branches))
    if not est.complete:
        lines.append(f"partial: the first {MAX_TASKS} tasks only")
    lines.append("block  line  instances  tasks  task cycles (sum)")
    for name, b in est.blocks.items():
        lines.append(f"{name:<6} {b['line'] or '-':>4}  {b['instances']:>9}  {b['tasks']:>5}  {b['cycles']:.0f}")
    return "\n".join(lines) + "\n"


def trace_text(est: Estimate) -> str:
    return json.dumps(trace(est), indent=1)
