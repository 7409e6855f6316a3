"""``@pypto_ast.jit``: a kernel that runs in-process through pypto-ast's pipeline.

Unlike ``pypto.frontend.jit`` it also accepts kernels that *return* their results. Calling
the kernel traces it for the given arguments and runs it on the chosen backend (today the
torch reference interpreter, ``interp``).
"""

from __future__ import annotations

from .lang.frontend import Kernel


class JitKernel(Kernel):
    kind = "pypto_ast.jit"

    def __call__(self, *args, **kwargs):
        from .pipeline import call_kernel

        return call_kernel(self, args, kwargs, backend=self.options.get("backend", "interp"))


def jit(func=None, **options):
    if func is None:
        return lambda f: JitKernel(f, options)
    return JitKernel(func, options)
