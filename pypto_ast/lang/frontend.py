"""``pypto.frontend``: the ``jit`` / ``function`` decorators and ``dynamic`` dims."""

from __future__ import annotations

import functools


class Kernel:
    """What ``@pypto.frontend.jit`` makes of a function: it is lowered from source when called."""

    kind = "jit"

    def __init__(self, func, options: dict):
        self.func = func
        self.options = options
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        """Run the kernel on torch tensors: lowered from its source, run by the reference interpreter."""
        from pypto_ast.pipeline import call_kernel  # heavy: torch, the front end

        return call_kernel(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<pypto kernel {self.func.__qualname__}>"


class InlineFunction(Kernel):
    """``@pypto.frontend.function``: inlined into the calling kernel."""

    kind = "function"

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)


def _decorator(cls):
    def decorate(func=None, **options):
        if func is None:
            return lambda f: cls(f, options)
        return cls(func, options)

    return decorate


jit = _decorator(Kernel)
function = _decorator(InlineFunction)


class DynamicDim:
    """``pypto.frontend.dynamic("N")``: a named dynamic dimension for annotations."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"dynamic({self.name!r})"


def dynamic(name: str) -> DynamicDim:
    return DynamicDim(name)
