"""The control/compute IR and its text forms: the nodes (``nodes.py``), the printer and parser of
its text, DOT, explicit PyPTO (``pyemit.py``), the loop(1) merge and the torch interpreter
(``interp.py``, imports torch).  ``from pypto_ast import ir`` gives the node classes."""

from .nodes import *  # noqa: F401,F403
from .nodes import DTYPE_BYTES, blocks, name_blocks, walk  # noqa: F401
