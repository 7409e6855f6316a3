"""PTO008 read-before-write."""

from __future__ import annotations

import ast

from ...diagnostics import Note
from ..rule import Case, LintContext, Rule

_HEAD = (
    "import pypto\n\nS = (32, 32)\n\n@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor(S, pypto.DT_FP32), b: pypto.Tensor(S, pypto.DT_FP32),\n"
    "      c: pypto.Tensor(S, pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 16)\n"
)  # the body continues on line 9


class ReadBeforeWrite(Rule):
    """
    ## What it does
    Reports the first read of a local tensor created with ``pypto.tensor(...)`` (or
    ``pypto.Tensor(...)``) inside a kernel when nothing has written it yet: no
    ``t[...] = ...``, ``t.move(...)``, ``t.assemble(...)``, ``pypto.assemble(..., t)``
    or in-place op before the read.

    A write later in the body of a ``pypto.loop`` that also holds the read counts as a
    producer only when the first iteration may skip the read (the read sits under a
    symbolic branch such as ``if k > 0:`` or ``if not pypto.is_loop_begin(k):``, or in a
    helper whose call site the linter cannot see): the write then feeds the next
    iterations. An unguarded ``acc[:] = acc + x`` reads empty memory on the first
    iteration and is reported. Handing the tensor to code the linter cannot see counts
    as a write.

    ## Why is this bad?
    ``pypto.tensor`` only declares storage; it has no producer. pypto 0.2.0 accepts a
    read of it: reading a view or an element compiles and the simulator logs
    ``Root incast read from empty address`` (plus ``Double free detected in ItemPool``)
    while the kernel computes with garbage; using the whole tensor as an operand fails
    later with ``Run pass failed`` (``Tensor[..] is missing Alloc``) -- far from the
    line that caused it (FAQ pitfall 9).

    ## Example
    ```python
    t = pypto.tensor([32, 32], pypto.DT_FP32, "t")
    for i in pypto.loop(2, name="L", idx_name="i"):
        c[:] = a + t[:, :]
    ```

    ## Use instead
    ```python
    t = pypto.tensor([32, 32], pypto.DT_FP32, "t")
    t.move(a * 2.0)               # give it a producer first
    for i in pypto.loop(2, name="L", idx_name="i"):
        c[:] = b + t[:, :]
    ```

    ## Fix safety
    No fix is offered: only the author knows what the tensor should hold.

    ## References
    PyPTO FAQ: local-tensor-no-producer; `pypto-0.2-behaviour.md` pitfall 9
    (cases p9_local_tensor_no_producer, _whole, _scalar_read, _written_first).
    """

    code = "PTO008"
    name = "read-before-write"
    summary = "a local pypto.tensor is read before anything writes it"
    VALID = [
        # p9 control: written (move) before being read
        _HEAD + "    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n    t.move(a * 2.0)\n"
        "    for i in pypto.loop(2, name='L', idx_name='i'):\n        c[:] = b + t[:, :]\n",
        # written with [:] and with pypto.assemble before the reads
        _HEAD + "    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n    t[:] = a + b\n    c[:] = t * 2.0\n",
        _HEAD + "    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n"
        "    pypto.assemble(a[0:16, :] + 1.0, [0, 0], t)\n    pypto.assemble(b[16:32, :] + 1.0, [16, 0], t)\n"
        "    c[:] = t + a\n",
        # accumulator: the first iteration writes (is_loop_begin), the others read then write
        _HEAD + "    acc = pypto.tensor([32, 32], pypto.DT_FP32, 'acc')\n"
        "    for k in pypto.loop(4, name='K', idx_name='k'):\n"
        "        if pypto.is_loop_begin(k):\n            acc[:] = pypto.clone(a)\n"
        "        else:\n            acc[:] = acc + a\n    c[:] = acc * 1.0\n",
        # the read is skipped on the first iteration; the write later in the body feeds the next ones
        _HEAD + "    prev = pypto.tensor([32, 32], pypto.DT_FP32, 'prev')\n"
        "    for k in pypto.loop(4, name='K', idx_name='k'):\n"
        "        if k > 0:\n            c[:] = prev + a\n        prev[:] = a * 0.5\n",
        _HEAD + "    prev = pypto.tensor([32, 32], pypto.DT_FP32, 'prev')\n"
        "    for k in pypto.loop(4, name='K', idx_name='k'):\n"
        "        if not pypto.is_loop_begin(k):\n            c[:] = prev + a\n        prev[:] = a * 0.5\n",
        # read in a helper the loop calls under a guard, written later in the loop
        "import pypto\n\ndef blend(x, t):\n    return x + t\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n"
        "    for i in pypto.loop(4, name='L', idx_name='i'):\n        if i > 0:\n            c[:] = blend(a, t)\n"
        "        t[:] = a * 0.5\n",
        # written inside a frontend.function helper
        "import pypto as pto\n\n@pto.frontend.function\n"
        "def fill(x: pto.Tensor((32, 32), pto.DT_FP32), o: pto.Tensor((32, 32), pto.DT_FP32)):\n"
        "    o[:] = x * 2.0\n\n@pto.frontend.jit\n"
        "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
        "    pto.set_vec_tile_shapes(16, 16)\n    t = pto.tensor([32, 32], pto.DT_FP32, 't')\n"
        "    fill(a, t)\n    c[:] = t + a\n",
        # handed to code we cannot see: it may write it
        "import pypto\nfrom mylib import init_zero\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n"
        "    init_zero(t)\n    c[:] = a + t\n",
        # the name is rebound to a computed tensor before it is read
        _HEAD + "    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n    t = a + b\n    c[:] = t * 2.0\n",
        # in-place method write
        _HEAD + "    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n    t.fill_(0.0)\n    c[:] = a + t\n",
    ]
    INVALID = [
        # p9: a view of the local read in a loop
        Case(
            _HEAD + "    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n"
            "    for i in pypto.loop(2, name='L', idx_name='i'):\n        c[:] = a + t[:, :]\n",
            line=11, col=20,
        ),
        # p9 whole: used directly as an operand, never written
        Case(_HEAD + "    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n    c[:] = a + t\n", line=10, col=16),
        # p9 FAQ form: INT32 element read, with an alias
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(a: pto.Tensor((32, 32), pto.DT_FP32), b: pto.Tensor((32, 32), pto.DT_FP32),\n"
            "      c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(16, 16)\n    t = pto.tensor([1, 8], pto.DT_INT32, 't')\n"
            "    for i in pto.loop(2, name='L', idx_name='i'):\n        n = t[0, 0]\n        c[:] = a + b\n",
            line=9, col=13,
        ),
        # the write comes after the read, outside any loop
        Case(
            _HEAD + "    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n    c[:] = t * 2.0\n    t[:] = a\n",
            line=10, col=12,
        ),
        # running max: the unguarded read in the first iteration precedes every write
        Case(
            _HEAD + "    run_max = pypto.tensor([16, 32], pypto.DT_FP32, 'run_max')\n"
            "    for k in pypto.loop(2, name='blocks', idx_name='k'):\n"
            "        blk = pypto.view(a, [16, 32], [k * 16, 0])\n"
            "        run_max[:] = pypto.maximum(run_max[:, :], blk)\n"
            "    c[0:16, :] = pypto.clone(run_max)\n",
            line=12, col=36,
        ),
        # read in one loop, written only in a later sibling loop
        Case(
            "from pypto.frontend import jit\nimport pypto\n\n@jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n"
            "    for i in pypto.loop(2, name='L', idx_name='i'):\n        c[:] = a + t\n"
            "    for j in pypto.loop(2, name='M', idx_name='j'):\n        t[:] = a * 2.0\n",
            line=9, col=20,
        ),
        # read in a helper the loop calls unguarded, written only later in the loop: the first
        # trip reads it empty
        Case(
            "import pypto\n\ndef blend(x, t):\n    return x + t\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n"
            "    for i in pypto.loop(4, name='L', idx_name='i'):\n        c[:] = blend(a, t)\n        t[:] = c * 0.5\n",
            line=4, col=16,
        ),
        # read in a plain helper called before any write
        Case(
            "import pypto\n\ndef use(x, t):\n    return x + t[0:16, :]\n\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n    t = pypto.tensor([32, 32], pypto.DT_FP32, 't')\n"
            "    c[0:16, :] = use(a[0:16, :], t)\n    t[:] = a\n",
            line=4, col=16,
        ),
    ]

    def check(self, ctx: LintContext):
        seen: set = set()
        for kernel in ctx.model.kernels:
            parents = None
            reported: set = set()
            accesses = sorted(kernel.accesses, key=lambda a: a.order)
            branches = {id(b.node) for b in kernel.branches if b.symbolic}
            for read in accesses:
                if read.write or read.tensor.ident in reported:
                    continue
                if parents is None:  # the kernel's own nodes: _guarded never climbs out of it
                    parents = {id(c): p for p in ast.walk(kernel.node) for c in ast.iter_child_nodes(p)}
                if _has_producer(accesses, read, branches, parents):
                    continue
                reported.add(read.tensor.ident)
                key = (id(read.node), id(kernel.local_decls.get(read.tensor.ident)))
                if key in seen:
                    continue
                seen.add(key)
                yield self._diagnostic(ctx, kernel, read)

    def _diagnostic(self, ctx, kernel, read):
        tensor = read.tensor
        decl = kernel.local_decls.get(tensor.ident)
        label = f"`{tensor.name}`" if tensor.name else "the local tensor"
        notes = ()
        if decl is not None:
            notes = (Note(f"{label[0].upper() + label[1:] if not tensor.name else label} is declared here with `pypto.tensor`, which gives it no producer", ctx.span(decl)),)
        return self.diagnostic(
            ctx.span(read.node),
            f"{'local tensor ' + label if tensor.name else label} is read before anything writes it: pypto 0.2.0 reads an empty address "
            "(\"Root incast read from empty address\") or fails with \"missing Alloc\"",
            help="write it first (`t[:] = ...`, `t.move(...)`, `pypto.assemble(part, offsets, t)`), "
            "or use the computed tensor directly instead of a `pypto.tensor` declaration",
            notes=notes,
        )


def _has_producer(accesses, read, branches, parents) -> bool:
    """A write before the read, or a later write in a loop around both whose first iteration
    may skip the read (the read sits under a symbolic branch inside that loop)."""
    for access in accesses:
        if not access.write or access.tensor is not read.tensor:
            continue
        if access.order < read.order:
            return True
        common = [loop for loop in read.loops if loop in access.loops]
        if common and _guarded(_site(read, parents), common[0].node, branches, parents):
            return True
    return False


def _site(read, parents):
    """Where the read sits in the kernel's own body: the node itself, or the outermost call of
    the helper it is in, when that call is in the kernel (then its guards are the read's)."""
    if id(read.node) in parents:
        return read.node
    return next((call for call in read.sites if id(call) in parents), read.node)


def _guarded(node, loop_node, branches, parents) -> bool:
    """A symbolic branch lies between ``node`` and the ``for`` of ``loop_node``.

    When the loop is not found above the node (the read sits in a helper the loop calls),
    the call site cannot be seen: assume it may be guarded.
    """
    current = parents.get(id(node))
    while current is not None:
        if current is loop_node:
            return False
        if id(current) in branches:
            return True
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
        current = parents.get(id(current))
    return True


RULE = ReadBeforeWrite
