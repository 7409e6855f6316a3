"""pypto-ast: static analysis, lowering and Ascend C emission for PyPTO kernels."""

__version__ = "0.1.0"
