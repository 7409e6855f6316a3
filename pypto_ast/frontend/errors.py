"""The diagnostics of reading a kernel for lowering: one stable code each, documented like the
lint rules (``pypto-lint rule PTO104`` prints one; docs/rules.md lists them all).

A ``FrontendError`` carries its code, the message and the AST node it is about (with the source
file holding it), so every message the transpiler prints is located: file:line:col and a caret.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional


class FrontendError(Exception):
    """A kernel cannot be read or lowered as written; located at ``node`` in ``source``."""

    def __init__(self, code: str, message: str, node: Optional[ast.AST] = None, source=None):
        super().__init__(message)
        self.code, self.message, self.node, self.source = code, message, node, source

    @property
    def name(self) -> str:
        return CODES[self.code].name if self.code in CODES else "cannot-lower"

    @property
    def path(self) -> Optional[str]:
        return getattr(self.source, "path", None)


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    summary: str
    doc: str


def _code(code: str, name: str, summary: str, doc: str) -> Code:
    return Code(code, name, summary, doc.strip("\n"))


CODES = {c.code: c for c in (
    _code("PTO100", "unsupported-construct", "a Python construct pypto (or pypto-ast) cannot build into a kernel", """
## What it means
The kernel body uses a statement pypto's frontend does not accept in a parsed body (`while`, `try`,
`with`, `break`, `continue`, `global`, a nested `pypto.function`), or one a pypto loop body cannot
hold (`return`/`break` inside `pypto.loop`: a loop body always runs to its end), or calls a jit
kernel from a kernel.

`pypto-lint` also reports PTO100, at the expression, for code nested too deeply for it to analyse
(an `a + a + ... + a` chain or a nesting tens of thousands of levels deep); nothing else in that
file is checked. Nesting deeper than CPython itself parses is PTO000.

## Example
```python
@pypto.frontend.jit
def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), y: pypto.Tensor((64, 64), pypto.DT_FP32)):
    i = 0
    while i < 4:          # PTO100: pypto 0.2.0 raises "While is not supported by the PTO parser yet"
        ...
```

## Fix
Use `pypto.loop` for loops the device runs and a Python `for` over a build-time range for loops
that unroll; move host logic out of the kernel; call helpers decorated with
`@pypto.frontend.function` instead of other jit kernels. Split an expression nested too deeply into
named partial results.
"""),
    _code("PTO101", "unknown-name", "a name pypto does not have, or a name bound nowhere", """
## What it means
`pypto.X` (or a tensor method `t.X`) is not a public name of pypto 0.2.0 nor of the repository's
later version: pypto would fail with an `AttributeError` when it builds the kernel, and the message
suggests the closest real names. Or a name the kernel reads is bound by no statement of the module
(no assignment, import, def or star import): pypto would raise `NameError`.

## Example
```python
y[:] = pypto.exq(x)      # PTO101: `pypto.exq` is not a pypto name; did you mean `pypto.exp`?
y[:] = x + bias          # PTO101: name `bias` is not defined
```

## Fix
Correct the spelling, or import the name from where it lives (`pypto.experimental...`).
"""),
    _code("PTO102", "unsupported-op", "a real pypto op that pypto-ast does not lower yet", """
## What it means
The op exists in pypto, but pypto-ast's lowering has no rule for it yet (for example `pypto.topk`,
`pypto.scatter_`, a bit-cast `view(dtype=...)`). The linter still reads the kernel; only lowering to
IR / Ascend C stops here.

## Example
```python
values, idx = pypto.topk(x, 8)   # PTO102 when lowering
```

## Fix
Express it with supported ops, or lint only. The list of supported ops is `pypto_ast/frontend/ops.py`.
"""),
    _code("PTO103", "cannot-run", "the module could not run for --run, or the transpiler could not run at all", """
## What it means
`pypto-transpile --run` imports the kernel module to call its `example_inputs()` and `reference()`.
This code says that import, or one of those calls, failed (the message quotes the exception), or
that the module lacks them. Also used for files that cannot be read.

## Example
```python
def example_inputs():
    return {"x": torch.randn(64, 64)}   # PTO103 when the module's own import of a package fails
```

## Fix
Make the module importable where it runs (`--emit`, `--list` and `--build` never import it), or
give it `example_inputs()` / `reference()`.
"""),
    _code("PTO104", "shape-needed", "a tensor parameter's shape is bound at the call and none was given", """
## What it means
The annotation leaves the shape to the call (`pypto.Tensor[...]`, `pypto.Tensor()`,
`pypto.Tensor([])`, or `pypto.STATIC` dims), the module's own code does not call the kernel with
tensors whose shapes are known statically, and no `--shape` was given. pypto-ast never guesses a
rank.

## Example
```python
@pypto.frontend.jit
def add(x: pypto.Tensor[...], y: pypto.Tensor[...], out: pypto.Tensor[...]):   # PTO104 for x
    ...
```

## Fix
Give the shapes: `pypto-transpile FILE --shape x=64x64 --shape y=64x64 --shape out=64x64`
(append `:fp16` for the dtype when the annotation has none), or call the kernel in the module with
`torch.randn(shape, dtype=...)` arguments whose shape is a build-time value.
"""),
    _code("PTO105", "not-static", "a value that must be known at build time is not", """
## What it means
pypto runs the kernel's Python once per control path at build time, so anything Python itself has
to compute — a `range()` bound, a list index, a tile shape, a view shape, an `if` in a plain helper
— must be a build-time value. Here it depends on a runtime value (a loop index, a value read from a
tensor, a dynamic dim) or on code the front end cannot see.

## Example
```python
for b in pypto.loop(B, name="b", idx_name="b"):
    n = lens[b]
    for i in range(n):      # PTO105: range() over the symbolic value `lens[b]`
        ...
```

## Fix
Use `pypto.loop` for trip counts known at run time, `pypto.view(..., valid_shape=[...])` for
extents read from tensors, `pypto.min`/`pypto.max` instead of Python conditionals, and
`if pypto.cond(...)` in plain helpers and legacy bodies.
"""),
    _code("PTO106", "invalid-op", "an op's arguments contradict pypto's rules", """
## What it means
The arguments of an op do not fit together: operands of different dtypes (pypto 0.2.0: FC0000),
shapes that do not broadcast, a view outside its tensor without `valid_shape`, a write of a value
of another dtype or rank, nested loops that reuse an `idx_name`, `is_loop_begin` of something that
is not a loop index.

## Example
```python
z[:] = x + y   # x fp32, y fp16 -> PTO106: operands have different dtypes (fp32, fp16)
```

## Fix
Cast explicitly with `pypto.cast`, pass `valid_shape=` for partial blocks, give nested loops their
own `idx_name`.
"""),
    _code("PTO107", "no-such-kernel", "the kernel asked for is not in the file, or there are several", """
## What it means
`--kernel NAME` names no kernel of the file, or the file has several kernels and none was chosen.
`pypto-transpile FILE --list` prints every kernel with the name `--kernel` accepts.

## Fix
Choose one with `--kernel NAME`.
"""),
    _code("PTO108", "branch-state-differs", "two arms of a symbolic `if` leave different build-time values", """
## What it means
pypto traces each path of a symbolic `if` separately, so a Python value (an int, a list, a tile
shape choice) may differ between the arms and everything after the `if` is compiled once per path.
pypto-ast builds one branch whose arms meet again; tensors that differ between the arms continue
through a workspace, but a build-time value that differs and is used after the `if` has no single
value.

## Example
```python
if pypto.is_loop_begin(i):
    scale = 2.0
else:
    scale = 1.0
y[:] = x * scale          # PTO108: `scale` differs between the arms
```

## Fix
Compute the value as a tensor (`pypto.where`, or write it in both arms), or move its use into the arms.
"""),
    _code("PTO109", "cannot-emit", "the IR holds something an emitter has no form for yet", """
## What it means
The kernel lowered to IR, but the emitter asked for (`--emit ascendc`, `--build`, `--run --backend host`,
`--emit python`) cannot express one of its ops or layouts yet: for example an op that lowers to IR but has
no Ascend C implementation (`pypto.quantize`, `pypto.uniform`), or a layout change the vector unit cannot do in
one kernel. The message names the op and points at its source line.

## Fix
Use `--emit ir` (or the interpreter) for this kernel, or express the op with supported ones.
"""),
    _code("PTO110", "ub-budget", "a block's buffers do not fit the SoC's on-chip memory", """
## What it means
The emitted kernel keeps each tile of every input and output in the Unified Buffer (double buffered), and
for the chosen `--soc` that plan is larger than the UB one vector core has (its size minus what the
runtime reserves), even single-buffered and in sub-tiles of fewer rows (a tile whose live tiles fit
pypto's own 192 KiB runs so): pypto itself refuses such a tile ("Alloc tensor ... exceeds MEM_UB
size"), and on the device the kernel would fail to allocate or overwrite its neighbour's data.

## Example
```python
pypto.set_vec_tile_shapes(256, 1024)   # fp32: 1 MiB per tile, far over 192 KiB of UB
```

## Fix
Use smaller tile shapes: the message says how many rows fit.
"""),
    _code("PTO111", "run-fault", "the kernel stopped at run time on the interpreter or the host model", """
## What it means
`--run` executed the lowered kernel and it faulted as the device would: a local tensor read before any
write, a copy outside a tensor, an op given a dtype the vector unit does not support, a scalar read out
of range. The message says what and where.

## Fix
Write the tensor before reading it (`pypto.full`/`zeros`, or a `[:] =` before the loop), keep views
inside their tensors, cast to a supported dtype first.
"""),
    _code("PTO112", "device-build-failed", "CANN's compiler rejected an emitted kernel (`--backend npu`)", """
## What it means
`--build --backend npu` (or a first call on the NPU) compiled the emitted Ascend C with the CANN toolkit's
`bisheng`, and it reported an error. The emitted kernels carry `#line` directives, so the error points at
the kernel's Python line that produced the failing code; the compiler's own message follows. Without a
toolkit (none of `ASCEND_HOME_PATH`, `ASCEND_TOOLKIT_HOME`, `ASCEND_CANN_PACKAGE_PATH` set and no default
install) the build stops before any compiler runs: `pypto-transpile doctor --backend npu` says what is missing.

## Fix
Read the compiler's message: most often the toolkit is older than the API the kernel needs (CANN >= 8.5.0),
or the SoC (`--soc`) is not the one installed. Report the kernel if the toolkit is current: pypto-ast emitted
code the real toolchain rejects.
"""),
    _code("PTO113", "rounding-step", "a failed comparison whose every mismatch is one bf16/fp16 rounding step", """
## What it means
A test run through the drop-in (the pytest plugin, `python -m pypto_ast.dropin`) failed a
`numpy.testing.assert_allclose` or `torch.testing.assert_close`, and every element outside the tolerance is
the expected value's neighbour on the bf16 (or fp16) grid: one rounding step away, while the tolerance at
that element is finer than one step. Two fp32 computations that sum in different orders (the kernel's
K-blocked accumulation, the golden's CPU GEMM, the NPU's cube) differ in their last bits, and a value near
a rounding midpoint then rounds to one neighbour on one and to the other on the other. The kernel's result
is not wrong for that; the comparison cannot tell the two apart. The warning is added to the failure
(the test still fails) at the line of the comparison, with the first such element.

## Example
```python
assert_allclose(out.float(), golden.float(), rtol=3e-3, atol=3e-3)   # bf16 values near 3: a step is 2^-6
```

## Fix
Compare 16-bit outputs at one step of their format (bf16: `rtol=2**-7`; fp16: `rtol=2**-10`), or compare
an fp32 output before its final rounding.
"""),
    _code("PTO114", "rounding-tie", "a failed test whose kernel rounded values lying at a tie between two integers", """
## What it means
A test run through the drop-in failed one of its own checks, and a cast of its kernel that rounds to an
integer (`CAST_RINT`, `CAST_ROUND`: an int8 or int32 quantization) met values within 8 fp32 steps of
`n + 0.5`. The golden computes the same value with its fp32 sums in another order and can land on the other
side of the tie: one integer apart, and everything computed from that integer (a dequantized matmul over
the row) differs by far more than the tolerance. Neither result is wrong; the test's inputs sit where the
order of an fp32 sum decides. The warning is added to the failure (the test still fails) at the line of the
cast on the interpreter; on the host backend at the first rounding cast of the kernel that met them.

## Example
```python
out_int32 = pypto.cast(x_fp32 * scale, pypto.DT_INT32, pypto.CastMode.CAST_RINT)   # 63.500004 -> 64; torch: 63
```

## Fix
Compare the integers with a tolerance of one step and what is computed from them with a share of mismatches
that allows the rows one step moves, or draw the test's inputs away from ties (another seed).
"""),
    _code("PTO999", "internal-error", "pypto-ast itself failed: a bug to report", """
## What it means
Something in pypto-ast raised an exception it did not expect. The file is not damaged and nothing was
written. `PYPTO_AST_TRACEBACK=1` prints the Python traceback for the report.

## Fix
Report it with the file (or a reduced kernel) and the command line.
"""),
)}


def located(node: Optional[ast.AST]) -> tuple:
    """(line, col) of a node, or (1, 0)."""
    if node is None or not hasattr(node, "lineno"):
        return 1, 0
    return node.lineno, node.col_offset
