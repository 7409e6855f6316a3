"""pypto-ast: static analysis, lowering and Ascend C emission for PyPTO kernels."""

__version__ = "0.1.0"


def __getattr__(name):
    # imported on first use so ``import pypto_ast`` stays light for the linter
    if name == "jit":
        from .jit import jit

        # importing the submodule bound `pypto_ast.jit` to the module; the decorator wins
        globals()["jit"] = jit
        return jit
    if name in ("KernelError", "KernelWarning", "BackendUnavailable"):
        from . import errors

        value = getattr(errors, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pypto_ast' has no attribute {name!r}")
