"""PTO007 print-in-loop."""

from __future__ import annotations

from ..rule import Case, LintContext, Rule


class PrintInLoop(Rule):
    """
    ## What it does
    Reports a call to the builtin ``print`` inside a ``pypto.loop`` / ``pypto.loop_unroll``
    body of a kernel, including in plain helpers the loop body calls.

    ## Why is this bad?
    A PyPTO kernel body is ordinary Python executed while the graph is *built*: it runs
    once per traced path (and once per unrolled copy), never once per iteration on the
    device. ``print(i)`` prints a symbol such as ``i`` or ``(i+1)``, not ``0, 1, 2, ...``,
    and in SIM mode it repeats on every call because the kernel is traced again.

    ## Example
    ```python
    for i in pypto.loop(20, name="L", idx_name="i"):
        print("i =", i)
        out[:] = a + b
    ```

    ## Use instead
    Remove the print, or print outside the loop; to inspect device values use PyPTO's
    verification tooling (``pypto.pass_verify_print``) or compare outputs after the call.

    ## Fix safety
    No fix is offered: deleting a print may remove output the author relies on.

    ## References
    PyPTO FAQ: python-print-in-loop; `pypto-0.2-behaviour.md` pitfall 8.
    """

    code = "PTO007"
    name = "print-in-loop"
    summary = "print() in a kernel loop runs once per traced path, not per iteration"
    VALID = [
        "import pypto\n@pypto.frontend.jit\ndef k(a: pypto.Tensor((8, 8), pypto.DT_FP32)):\n    print('tracing')\n",
        "import pypto\ndef host():\n    for i in range(3):\n        print(i)\n",
        "import pypto\n@pypto.frontend.jit\ndef k(a: pypto.Tensor((8, 8), pypto.DT_FP32)):\n"
        "    print = lambda *a: None\n    for i in pypto.loop(4):\n        print(i)\n",
    ]
    INVALID = [
        Case(
            "import pypto\n@pypto.frontend.jit\ndef k(a: pypto.Tensor((8, 8), pypto.DT_FP32)):\n"
            "    for i in pypto.loop(4, name='L', idx_name='i'):\n        print('i =', i)\n",
            line=5, col=9,
        ),
        Case(
            "import pypto as pto\n\ndef show(i):\n    print(i)\n\n@pto.frontend.jit()\n"
            "def k(a: pto.Tensor((8, 8), pto.DT_FP32)):\n    for i in pto.loop(4):\n        show(i)\n",
            line=4, col=5,
        ),
    ]

    def check(self, ctx: LintContext):
        for kernel in ctx.model.kernels:
            for fact in kernel.prints:
                loop = fact.loop.enclosing_pypto()
                where = f"`{loop.idx_name}`" if loop and loop.idx_name else "a `pypto.loop`"
                yield self.diagnostic(
                    ctx.span(fact.node),
                    f"`print` inside {where} runs once per traced path while the graph is built, "
                    "not once per iteration",
                    help="remove it, or print outside the loop; compare outputs after the call instead",
                )


RULE = PrintInLoop
