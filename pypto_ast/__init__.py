"""pypto-ast: static analysis, lowering and Ascend C emission for PyPTO kernels."""

__version__ = "0.1.0"


def __getattr__(name):
    # ``pypto_ast.jit`` is imported on first use so ``import pypto_ast`` stays light for the linter
    if name == "jit":
        from .jit import jit

        # importing the submodule bound `pypto_ast.jit` to the module; the decorator wins
        globals()["jit"] = jit
        return jit
    raise AttributeError(f"module 'pypto_ast' has no attribute {name!r}")
