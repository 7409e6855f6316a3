"""PTO015 unroll-tail-dropped."""

from __future__ import annotations

import ast

from ...diagnostics import Applicability, Edit, Fix, format_count
from ..rule import Case, LintContext, Rule

_HEAD = (
    "import pypto\n\nS = (32, 32)\n\n@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor(S, pypto.DT_FP32), b: pypto.Tensor(S, pypto.DT_FP32),\n"
    "      c: pypto.Tensor(S, pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 16)\n"
)  # the body continues on line 9

_DYN = (
    "import pypto\n\n@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), c: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 64)\n"
    "    rows = a.shape[0] // 16\n"
)  # the body continues on line 7


def _loop(header: str) -> str:
    return _HEAD + f"    for i in {header}:\n        c[:] = a + b\n"


def _dyn(header: str) -> str:
    return _DYN + (
        f"    for i in {header}:\n"
        "        t = pypto.view(a, [16, 64], [i * 16, 0])\n"
        "        c[i * 16:(i + 1) * 16, :] = pypto.exp(t)\n"
    )


class UnrollTailDropped(Rule):
    """
    ## What it does
    Reports a ``pypto.loop`` whose ``unroll_list`` cannot cover every trip count: the list
    has no factor 1 and the trip count is not known at build time, or it is known and the
    factors (largest first, as pypto splits the range) leave iterations over.

    ``pypto.loop_unroll`` always adds the factor 1 itself and is never reported.

    ## Why is this bad?
    ``pypto.loop`` makes one loop per factor, largest first, each over the iterations the
    larger ones left; the last factor's loop runs to the end in steps of that factor. It does
    not add the factor 1 (``loop_unroll`` does): ``pypto.loop(22, unroll_list=[4])`` becomes
    ``LOOP(i, 0, 22, 4)`` with a 4-copy body and no tail loop, so the last 2 iterations are
    never run as themselves (the last block covers indices 20..23). pypto 0.2.0 accepts it
    without a word.

    ## Example
    ```python
    for i in pypto.loop(rows, name="L", idx_name="i", unroll_list=[4]):
        ...
    ```

    ## Use instead
    ```python
    for i in pypto.loop(rows, name="L", idx_name="i", unroll_list=[4, 1]):
        ...
    ```

    ## Fix safety
    When the ``unroll_list`` is a list or tuple written in the call, the fix appends ``1`` to
    it; it is safe when pypto then only adds the ``Unroll1`` loop over the iterations the other
    factors leave, the loops of the other factors traced as before (the fix is proven by
    lowering the kernel before and after it). When a known trip count leaves a factor's loop
    with nothing but the overrun block (``loop(9, unroll_list=[4, 3])``: the 3-copy loop
    disappears), the fix changes more than the tail and is offered as unsafe. A list bound
    elsewhere (a variable, a config field) is reported without a fix.

    ## References
    PyPTO docs: api/controlflow/pypto-loop.md (``unroll_list``); `pypto-dsl.md` §9.1;
    `pypto-0.2-behaviour.md` loop semantics (case l05_unroll_tail).
    """

    code = "PTO015"
    name = "unroll-tail-dropped"
    summary = "pypto.loop unroll_list without a factor 1 that cannot cover every trip count"
    fix_availability = "sometimes"
    fix_meaning = "unroll-tail"
    VALID = [
        # the factor 1 is there
        _loop("pypto.loop(22, name='L', idx_name='i', unroll_list=[1, 2, 4])"),
        _dyn("pypto.loop(rows, name='L', idx_name='i', unroll_list=[4, 1])"),
        # 20 is a multiple of 4
        _loop("pypto.loop(20, name='L', idx_name='i', unroll_list=[4])"),
        # 22 = 5 * 4 + 2: the factor 2 takes the rest
        _loop("pypto.loop(22, name='L', idx_name='i', unroll_list=[4, 2])"),
        # start / step: 0, 3, ..., 24 is 9 iterations, [3] covers them
        _loop("pypto.loop(0, 27, 3, name='L', idx_name='i', unroll_list=[3])"),
        # loop_unroll appends 1 itself
        _HEAD + "    for i, f in pypto.loop_unroll(0, 22, 1, name='L', idx_name='i', unroll_list=[4]):\n"
        "        c[:] = a + b\n",
        # no unroll_list, or factors not known statically
        _dyn("pypto.loop(rows, name='L', idx_name='i')"),
        "import pypto\nfrom cfg import FACTORS\n\n@pypto.frontend.jit\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n"
        "    for i in pypto.loop(22, name='L', idx_name='i', unroll_list=FACTORS):\n        c[:] = a + 1.0\n",
        # a loop outside any kernel is not traced
        "import pypto\n\ndef build(n):\n    for i in pypto.loop(n, unroll_list=[4]):\n        pass\n",
    ]
    INVALID = [
        # l05: 22 is not a multiple of 4
        Case(_loop("pypto.loop(22, name='L', idx_name='i', unroll_list=[4])"), line=9, col=5,
             fixed=_loop("pypto.loop(22, name='L', idx_name='i', unroll_list=[4, 1])")),
        # a trip count known only on the device
        Case(_dyn("pypto.loop(rows, name='L', idx_name='i', unroll_list=[8, 4])"), line=7, col=5,
             fixed=_dyn("pypto.loop(rows, name='L', idx_name='i', unroll_list=[8, 4, 1])")),
        # 9 = 2 * 4 + 1: the 3 cannot take the last one even though 9 is a multiple of 3
        # (the fix is not proven safe here: the 3-copy loop that ran past the end goes away)
        Case(_loop("pypto.loop(9, name='L', idx_name='i', unroll_list=(4, 3,))"), line=9, col=5,
             fixed=_loop("pypto.loop(9, name='L', idx_name='i', unroll_list=(4, 3, 1,))"), unsafe=True),
        # the list is a local: reported, no fix
        Case(
            _DYN + "    factors = [16, 4]\n"
            "    for i in pypto.loop(0, rows, 1, name='L', idx_name='i', unroll_list=factors):\n"
            "        c[i * 16:(i + 1) * 16, :] = pypto.exp(pypto.view(a, [16, 64], [i * 16, 0]))\n",
            line=8, col=5,
        ),
        # in a helper the kernel calls, with an alias
        Case(
            "import pypto as pto\n\ndef rows_loop(a, c, n):\n"
            "    for r in pto.loop(n, name='R', idx_name='r', unroll_list=[2]):\n"
            "        c[:] = a * 2.0\n\n"
            "@pto.frontend.jit\n"
            "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(16, 16)\n    rows_loop(a, c, 7)\n",
            line=4, col=5,
            fixed="import pypto as pto\n\ndef rows_loop(a, c, n):\n"
            "    for r in pto.loop(n, name='R', idx_name='r', unroll_list=[2, 1]):\n"
            "        c[:] = a * 2.0\n\n"
            "@pto.frontend.jit\n"
            "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(16, 16)\n    rows_loop(a, c, 7)\n",
        ),
    ]

    def check(self, ctx: LintContext):
        seen: set = set()
        for kernel in ctx.model.kernels:
            for loop in kernel.loops:
                if loop.kind != "loop" or loop.node is None or id(loop.node) in seen:
                    continue
                if not loop.unroll_known or not loop.unroll or 1 in loop.unroll:
                    continue
                if any(not isinstance(f, int) or f < 1 for f in loop.unroll):
                    continue  # not positive ints: pypto-transpile's PTO106
                left = _left_over(loop.trip, loop.unroll)
                if left == 0:
                    continue
                seen.add(id(loop.node))
                yield self._diagnostic(ctx, loop, left)

    def _diagnostic(self, ctx, loop, left):
        factors = ", ".join(format_count(f) for f in loop.unroll)
        smallest = min(loop.unroll)
        if loop.trip is None:
            why = (f"the trip count is not known at build time, so up to {format_count(smallest - 1)} "
                   f"trailing iteration{'s' if smallest > 2 else ''} may be left to a {format_count(smallest)}-copy block "
                   "running past the end")
        else:
            why = (f"{format_count(loop.trip)} iterations split into these factors (largest first) leave "
                   f"{format_count(left)}, which get no loop of their own: the last block runs past the end")
        message = (f"`unroll_list=[{factors}]` has no factor 1 and cannot cover every iteration: {why}; "
                   "pypto.loop does not add the factor 1 (pypto 0.2.0 accepts this silently)")
        fix = _append_one(ctx, loop.node)
        help_text = None if fix is not None else "add the factor 1 to the unroll list (e.g. `unroll_list=[4, 1]`)"
        return self.diagnostic(ctx.source.header_span(loop.node), message, help=help_text, fix=fix)


def _left_over(trip, factors) -> int | None:
    """Iterations the factors leave (pypto's split: each factor over what the larger left);
    None when the trip count is not known."""
    if trip is None:
        return None
    left = trip
    for k in sorted(set(factors), reverse=True):
        left %= k
    return left


def _append_one(ctx, node):
    call = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else None
    if not isinstance(call, ast.Call):
        return None
    for kw in call.keywords:
        if kw.arg == "unroll_list" and isinstance(kw.value, (ast.List, ast.Tuple)) and kw.value.elts:
            last = kw.value.elts[-1]
            if isinstance(last, ast.Starred) or last.end_lineno is None:
                return None
            at = ctx.source.pos(last.end_lineno, last.end_col_offset)
            return Fix("append the factor 1 to `unroll_list`", Applicability.SAFE, (Edit(at, at, ", 1"),))
    return None


RULE = UnrollTailDropped
