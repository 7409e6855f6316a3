"""PTO011 cond-path-explosion."""

from __future__ import annotations

import ast
import math

from ...diagnostics import Note, format_count, format_log10, format_power
from ..rule import Case, LintContext, Rule, Valid

_HEAD = (
    "import pypto\n\nS = (32, 32)\n\n@pypto.frontend.jit\n"
    "def k(a: pypto.Tensor(S, pypto.DT_FP32), b: pypto.Tensor(S, pypto.DT_FP32),\n"
    "      c: pypto.Tensor(S, pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 16)\n"
)  # the body continues on line 9
_IF_BODY = "            c[:] = a + b\n        else:\n            c[:] = a - b\n"
_L04 = (
    _HEAD + "    for i in pypto.loop(22, name='L', idx_name='i', unroll_list=[1, 2, 4]):\n"
    "        if i == 0:\n" + _IF_BODY
)
_L03 = _HEAD + "    for i in pypto.loop(20, name='L', idx_name='i', unroll_list=[4]):\n        if i == 0:\n" + _IF_BODY


class CondPathExplosion(Rule):
    """
    ## What it does
    Reports a symbolic branch (an ``if`` on a ``SymbolicScalar``, or ``pypto.cond``)
    inside a ``pypto.loop`` with an ``unroll_list`` when the loop then compiles more
    paths than ``cond-path-threshold`` (default 16). Branches in helpers the loop body
    calls count too. The count is, summed over the unroll factors ``k``,
    ``paths_per_body ** k * 2 ** flag_branches``: each unrolled copy of the body carries
    its own copy of every cond. Branches on ``pypto.is_loop_begin/is_loop_end`` are not
    reported (they stay at two paths).

    ``pypto.loop_unroll`` traces its body once per factor, without multiplying paths; it
    is not checked here.

    ## Why is this bad?
    Every cond splits the loop body into paths, and the body is traced and compiled once
    per path. With ``unroll_list=[4]`` one ``if i == 0`` gives 2**4 = 16 paths
    (``TENSOR_L_Unroll4_PATH0..15``); ``[1, 2, 4]`` gives 2 + 4 + 16 = 22. Compile time
    grows with the path count, and each path becomes its own leaf in the AI CPU control
    flow.

    ## Example
    ```python
    for i in pypto.loop(22, name="L", idx_name="i", unroll_list=[1, 2, 4]):
        if i == 0:
            c[:] = a + b
        else:
            c[:] = a - b
    ```

    ## Use instead
    ```python
    for i in pypto.loop(22, name="L", idx_name="i", unroll_list=[1, 2, 4]):
        if pypto.is_loop_begin(i):   # 2 paths, whatever the unroll
            c[:] = a + b
        else:
            c[:] = a - b
    ```
    or move the cond out of the unrolled loop (peel the first iteration).

    ## Fix safety
    No fix is offered: ``is_loop_begin`` is only equivalent when the test means "first
    iteration".

    ## Options
    - ``cond-path-threshold`` (``cond_path_threshold``): report above this many paths.

    ## References
    PyPTO FAQ loop-principle; PyPTO docs api/controlflow/pypto-is_loop_begin.md;
    `pypto-0.2-behaviour.md` pitfall 8 rows and cases l03, l04, l18.
    """

    code = "PTO011"
    name = "cond-path-explosion"
    summary = "a symbolic branch inside an unrolled loop multiplies the compiled paths"
    VALID = [
        # l03: unroll_list=[4] with one cond is 16 paths, not above the default threshold
        _L03,
        # is_loop_begin / is_loop_end keep two paths
        _HEAD + "    for i in pypto.loop(22, name='L', idx_name='i', unroll_list=[1, 2, 4]):\n"
        "        if pypto.is_loop_begin(i):\n" + _IF_BODY,
        _HEAD + "    for i in pypto.loop(8, name='L', idx_name='i', unroll_list=[4]):\n"
        "        if pypto.is_loop_begin(i):\n            c[:] = a + b\n"
        "        elif pypto.is_loop_end(i):\n            c[:] = a - b\n        else:\n            c[:] = a * b\n",
        # a higher threshold
        Valid(_L04, settings={"cond_path_threshold": 32}),
        # a cond in a loop without unroll_list
        _HEAD + "    for i in pypto.loop(22, name='L', idx_name='i'):\n        if i == 0:\n" + _IF_BODY,
        # loop_unroll traces once per factor: not multiplied
        _HEAD + "    for i, f in pypto.loop_unroll(0, 16, 1, name='U', idx_name='i', unroll_list=[8, 4, 2]):\n"
        "        if i == 0:\n" + _IF_BODY,
        # static branches on Python values and static shapes
        "import pypto as pto\nUSE_SUB = False\n\n@pto.frontend.jit\n"
        "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
        "    pto.set_vec_tile_shapes(16, 16)\n"
        "    for i in pto.loop(16, name='L', idx_name='i', unroll_list=[1, 2, 4, 8]):\n"
        "        if a.shape[0] == 32:\n            c[:] = a + 1.0\n"
        "        if USE_SUB:\n            c[:] = a - 1.0\n",
        # the cond sits in an inner loop that is not unrolled
        _HEAD + "    for i in pypto.loop(4, name='O', idx_name='i', unroll_list=[4]):\n"
        "        for j in pypto.loop(4, name='I', idx_name='j'):\n"
        "            if j == 0:\n                c[:] = a + b\n",
    ]
    INVALID = [
        # l04: 2 + 4 + 16 = 22 paths
        Case(_L04, line=10, col=9),
        # two conds with unroll 4: 4 ** 4 paths
        Case(
            _HEAD + "    for i in pypto.loop(20, name='L', idx_name='i', unroll_list=[4]):\n"
            "        if i == 0:\n            c[:] = a + b\n"
            "        if i == 19:\n            c[:] = c * 2.0\n",
            line=10, col=9,
        ),
        # l03 with a lower threshold
        Case(_L03, line=10, col=9, settings={"cond_path_threshold": 8}),
        # an elif chain: three paths per copy
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(a: pto.Tensor((32, 32), pto.DT_FP32), c: pto.Tensor((32, 32), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(16, 16)\n"
            "    for i in pto.loop(16, name='L', idx_name='i', unroll_list=[4]):\n"
            "        if i == 0:\n            c[:] = a + 1.0\n"
            "        elif i < 8:\n            c[:] = a + 2.0\n        else:\n            c[:] = a\n",
            line=7, col=9,
        ),
        # a pypto.cond in a plain helper called from the unrolled body
        Case(
            "import pypto\nfrom pypto.frontend import jit\n\n"
            "def first_or_rest(i, a, c):\n    if pypto.cond(i == 0):\n        c[:] = a + 1.0\n"
            "    else:\n        c[:] = a - 1.0\n\n@jit\n"
            "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(16, 16)\n"
            "    for i in pypto.loop(32, name='L', idx_name='i', unroll_list=[1, 8]):\n"
            "        first_or_rest(i, a, c)\n",
            line=5, col=5,
        ),
    ]

    def check(self, ctx: LintContext):
        threshold = ctx.settings.cond_path_threshold
        seen: set = set()
        for kernel in ctx.model.kernels:
            for branch in kernel.branches:
                if not branch.symbolic or branch.loop_flag or id(branch.node) in seen:
                    continue
                loop = branch.loop.enclosing_pypto()
                if loop is None or loop.kind != "loop" or not loop.unroll or not loop.unroll_known:
                    continue
                factors = list(dict.fromkeys(loop.unroll))
                per_body, flags = loop.body_paths, loop.flag_branches
                terms = [_paths(per_body, k, flags) for k in factors]  # None: too many to count exactly
                total = sum(terms) if None not in terms else None
                if not _above(total, per_body, factors, flags, threshold):
                    continue
                seen.add(id(branch.node))
                yield self._diagnostic(ctx, branch, loop, factors, per_body, flags, terms, total, threshold)

    def _diagnostic(self, ctx, branch, loop, factors, per_body, flags, terms, total, threshold):
        conds = "one cond" if per_body == 2 else f"conds giving {format_count(per_body)} paths per body copy"
        if flags:
            conds += (f" and {format_count(flags)} is_loop_begin/end branch{'es' if flags > 1 else ''} "
                      f"(x{format_power(2, flags)})")
        total_text = format_count(total) if total is not None else _estimate(per_body, factors, flags)
        if len(terms) == 1:
            formula = (f"{format_count(per_body)}^{format_count(factors[0])}"
                       + (f" x {format_power(2, flags)}" if flags else "") + f" = {total_text}")
        else:
            shown = [format_count(t) if t is not None else _power_text(per_body, k, flags) for t, k in zip(terms, factors)]
            formula = " + ".join(shown) + f" = {total_text}"
        unroll = "[" + ", ".join(format_count(f) for f in factors) + "]"
        message = (
            f"symbolic branch inside a loop unrolled with unroll_list {unroll} is copied into every unrolled "
            f"body: {conds}: {formula} compiled paths (threshold {threshold})"
        )
        index = loop.targets[0] if loop.targets else "i"
        help_text = (
            f"branch with `pypto.is_loop_begin({index})` / `pypto.is_loop_end({index})` "
            "(2 paths with unroll_list [4] on pypto 0.2.0), or move the cond out of the unrolled loop"
        )
        span = ctx.source.header_span(branch.node) if isinstance(branch.node, ast.If) else ctx.span(branch.node)
        notes = ()
        if loop.node is not None:
            notes = (Note(f"the loop is unrolled with unroll_list {unroll} here", ctx.source.header_span(loop.node)),)
        return self.diagnostic(span, message, help=help_text, notes=notes)


# path counts are computed exactly up to this many bits; beyond, only their logarithm is (an
# unroll factor of 2**31 must not build per_body ** 2**31)
_EXACT_BITS = 256


def _log2_paths(per_body: int, k, flags: int) -> float:
    """log2 of the path count (``inf`` past float range: an unroll factor of 2**2000)."""
    if per_body <= 1 or k <= 0:
        return float(flags)
    try:
        return k * math.log2(per_body) + flags
    except OverflowError:
        return math.inf


def _paths(per_body: int, k, flags: int):
    """``per_body ** k * 2 ** flags``, or None when it has more than _EXACT_BITS bits."""
    if not isinstance(k, int) or k <= 0 or per_body <= 1:
        return per_body ** k * 2 ** flags if flags <= _EXACT_BITS else None
    if _log2_paths(per_body, k, flags) > _EXACT_BITS:
        return None
    return per_body ** k * 2 ** flags


def _above(total, per_body, factors, flags, threshold) -> bool:
    if total is not None:
        return total > threshold
    biggest = max(_log2_paths(per_body, k, flags) for k in factors)
    return threshold <= 0 or biggest > math.log2(threshold)


def _power_text(per_body: int, k, flags: int) -> str:
    return format_power(per_body, k) + (f" x {format_power(2, flags)}" if flags else "")


def _estimate(per_body, factors, flags) -> str:
    """The order of magnitude of a path count too large to compute (``about 1.2e+646456992``)."""
    log10 = max(_log2_paths(per_body, k, flags) for k in factors) * math.log10(2)
    return "about " + format_log10(log10) if math.isfinite(log10) else "more than 10^(10^300)"


RULE = CondPathExplosion
