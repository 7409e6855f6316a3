"""PTO027 dtype-mismatch."""

from __future__ import annotations

from ..rule import Case, LintContext, Rule
from ._local import in_file

_HEAD = "import pypto\n\n@pypto.frontend.jit\n"
_F32 = "pypto.Tensor((64, 64), pypto.DT_FP32)"
_F16 = "pypto.Tensor((64, 64), pypto.DT_FP16)"

_HELP = {
    "dtype": "cast explicitly with `pypto.cast(x, dtype)` so both sides have one dtype",
    "shape": "write a value of the output's shape (or assemble a part at its offsets: `out.assemble(v, [...])`)",
    "element-dtype": "element reads `x[i, j]` need a DT_INT32 tensor: keep indices and lengths in an int32 tensor",
    "step": "slice with step 1 (take a contiguous view; gather or reshape for strided data)",
    "call": "match the call to the signature shown (the parameter names of the release you --target)",
    "signature": "pass the shape as a list, e.g. `pypto.tensor([1], pypto.DT_FP32)`, or make a constant with "
                 "`pypto.full([1], value, dtype)`",
}


class DtypeMismatch(Rule):
    """
    ## What it does
    Reports what pypto's own checks and signatures refuse about the types and forms of values
    (found by the static front end, in the transpiler's PTO106 words):

    - two tensor operands of different dtypes in one elementwise binary op (``x_fp32 + y_fp16``:
      0.2.0 raises `FC0000 The dtype of input tensors are not same.`);
    - a result written into an output of another dtype (``out_fp16[:] = x_fp32 * 2.0``), or,
      with ``[:]``/``move``, of another static shape (a (32, 64) result into a (32, 32) output):
      0.2.0 stores both without a word;
    - an element read ``x[i, j]`` on a tensor that is not DT_INT32 (0.2.0:
      `AssertionError: tensor dtype must be DT_INT32.`);
    - a slice with a step other than 1 (``x[0:32:2, :]``: `ValueError: step must be 1 or None`);
    - a call pypto's signature rejects: ``pypto.tensor(127.0, pypto.DT_FP32)`` passes a number
      where the shape goes, and ``Tensor.__init__`` iterates it (TypeError);
    - a call that does not bind to the signature of the ``--target`` release (a misspelt keyword
      such as ``keepdims=`` or ``validshape=``, a positional argument too many, a required one
      missing): pypto's ops are Python functions and raise TypeError at trace time, where
      pypto-ast would otherwise drop the stray argument and model another computation.
      ``pypto.add(a, b, alpha=2.0)`` binds in 0.2.0 but not in the repository's later version,
      which has no ``alpha``.

    Where pypto converts legitimately it is silent: a Python scalar operand takes the tensor's
    dtype (``x_fp16 * 0.5``), comparisons and ``logical_and`` accept mixed dtypes (BOOL result),
    ``pypto.cast`` and ``matmul``'s ``out_dtype`` change dtypes by design, ``exp2`` of an integer
    gives FP32, and a dtype or shape left to the call (``pypto.Tensor()``, DYNAMIC dims) is not
    guessed: a placeholder ``pypto.tensor()`` takes the dtype of what is moved into it, a
    ``matmul`` whose ``out_dtype`` is a call-time value has an unknown dtype.

    ## Why is this bad?
    The refused forms stop the trace with a message far from the intent (an assertion, a
    TypeError from inside pypto); the silent ones store bytes of one dtype as another, or
    leave part of the output unwritten.

    ## Example
    ```python
    out_fp16[:] = x_fp32 + y_fp16
    ```

    ## Use instead
    ```python
    out_fp16[:] = pypto.cast(x_fp32 + pypto.cast(y_fp16, pypto.DT_FP32), pypto.DT_FP16)
    ```

    ## Fix safety
    No fix: where to cast, and to which dtype, decides the precision of the result.

    ## References
    `pypto-dsl.md` §6 (writes: no implicit cast, no shape check), §7 (indexing: INT32 element
    reads, step 1), §8 (elementwise dtypes); `pypto-0.2-behaviour.md` probe table;
    `python/pypto/tensor.py` ``Tensor.__init__``.
    """

    code = "PTO027"
    name = "dtype-mismatch"
    summary = "mixed dtypes in one op, a write into an output of another dtype or shape, int32-only element reads, step slices"
    VALID = [
        # a Python scalar takes the tensor's dtype
        _HEAD + f"def k(a: {_F16}, out: {_F16}):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    out[:] = a * 0.5 + 1\n",
        # explicit casts
        _HEAD + f"def k(a: {_F32}, b: {_F16}, out: {_F16}):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    out[:] = pypto.cast(a + pypto.cast(b, pypto.DT_FP32), pypto.DT_FP16)\n",
        # comparisons and logical_and take mixed dtypes
        _HEAD + f"def k(a: {_F32}, b: {_F16}, out: {_F32}):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    m = pypto.logical_and(a, b)\n"
        "    out[:] = pypto.where(m, a, 0.0)\n",
        # element reads of an int32 tensor
        _HEAD + "def k(x: pypto.Tensor((8, 64), pypto.DT_FP32), lens: pypto.Tensor((8,), pypto.DT_INT32),\n"
        "      out: pypto.Tensor((8, 64), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(1, 64)\n"
        "    for b in pypto.loop(8, name='B', idx_name='b'):\n"
        "        n = lens[b]\n"
        "        row = pypto.view(x, [1, 64], [b, 0], valid_shape=[1, n])\n"
        "        out[b:b + 1, :] = row * 2.0\n",
        # dtypes left to the call
        _HEAD + "def k(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    out[:] = a + b\n",
        # a call that binds: keyword spelled as pypto spells it, a spread of keywords
        _HEAD + f"def k(a: {_F32}, out: pypto.Tensor((64, 1), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    opts = {'keepdim': True}\n"
        "    out[:] = pypto.sum(a, -1, **opts) + pypto.sum(a, dim=-1, keepdim=True)\n",
        # 0.2.0's add takes alpha (the default --target)
        _HEAD + f"def k(a: {_F32}, b: {_F32}, out: {_F32}):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    out[:] = pypto.add(a, b, alpha=2.0)\n",
        # a part assembled at an offset (a smaller value is not a whole write)
        _HEAD + f"def k(a: pypto.Tensor((32, 64), pypto.DT_FP32), out: {_F32}):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    out[32:64, :] = a + 1.0\n",
        # a placeholder `pypto.tensor()` takes the dtype of what is moved into it
        _HEAD + "def k(a: pypto.Tensor((64, 64), pypto.DT_INT32), out: pypto.Tensor((64, 64), pypto.DT_INT32)):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    t = pypto.tensor()\n"
        "    t.move(a + 1)\n"
        "    pypto.assemble(t, [0, 0], out)\n",
        # a matmul whose out_dtype the call gives (a config field): its dtype is not guessed
        _HEAD + "def k(a: pypto.Tensor((64, 64), pypto.DT_FP16), b: pypto.Tensor((64, 64), pypto.DT_FP16),\n"
        f"      out: {_F32}, cfg):\n"
        "    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])\n"
        "    out.move(pypto.matmul(a, b, out_dtype=cfg.out_dtype))\n",
        # a local declared with a shape list
        _HEAD + f"def k(a: {_F32}, out: {_F32}):\n"
        "    pypto.set_vec_tile_shapes(32, 64)\n"
        "    t = pypto.tensor([64, 64], pypto.DT_FP32)\n"
        "    t[:] = a * 2.0\n"
        "    out[:] = t + 1.0\n",
    ]
    INVALID = [
        Case(_HEAD + f"def k(a: {_F32}, b: {_F16}, out: {_F32}):\n"
             "    pypto.set_vec_tile_shapes(32, 64)\n"
             "    out[:] = a + b\n", line=6, col=14),
        # an fp32 result into an fp16 output; `import pypto as pto`
        Case("import pypto as pto\n\n@pto.frontend.jit\n"
             "def k(a: pto.Tensor((64, 64), pto.DT_FP32), out: pto.Tensor((64, 64), pto.DT_FP16)):\n"
             "    pto.set_vec_tile_shapes(32, 64)\n"
             "    for _ in pto.loop(1, name='L', idx_name='i'):\n"
             "        out[:] = pto.exp(a)\n", line=7, col=9),
        # a (64, 64) result moved into a (32, 64) output
        Case(_HEAD + f"def k(a: {_F32}, out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(32, 64)\n"
             "    out.move(a * 2.0)\n", line=6, col=5),
        # an element read of an fp32 tensor
        Case(_HEAD + "def k(x: pypto.Tensor((8, 64), pypto.DT_FP32), lens: pypto.Tensor((8,), pypto.DT_FP32),\n"
             "      out: pypto.Tensor((8, 64), pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(1, 64)\n"
             "    for b in pypto.loop(8, name='B', idx_name='b'):\n"
             "        n = lens[b]\n"
             "        row = pypto.view(x, [1, 64], [b, 0], valid_shape=[1, n])\n"
             "        out[b:b + 1, :] = row * 2.0\n", line=8, col=13),
        # a strided slice
        Case(_HEAD + f"def k(a: {_F32}, out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(32, 64)\n"
             "    out[:] = a[0:64:2, :] + 1.0\n", line=6, col=14),
        # a number where pypto.tensor wants the shape
        Case(_HEAD + f"def k(a: {_F32}, out: {_F32}):\n"
             "    pypto.set_vec_tile_shapes(32, 64)\n"
             "    bias = pypto.tensor(127.0, pypto.DT_FP32)\n"
             "    out[:] = a + 1.0\n", line=6, col=12),
        # a misspelt keyword of a reduction (keepdims for keepdim)
        Case(_HEAD + f"def k(a: {_F32}, out: pypto.Tensor((64, 1), pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(32, 64)\n"
             "    out[:] = pypto.sum(a, -1, keepdims=True)\n", line=6, col=14),
        # a misspelt keyword of a tensor method
        Case(_HEAD + f"def k(a: {_F32}, out: pypto.Tensor((32, 64), pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(32, 64)\n"
             "    out[:] = a.view([32, 64], [0, 0], validshape=[32, 64]) + 1.0\n", line=6, col=14),
        # an argument only 0.2.0's add takes, linted for the later release
        Case(_HEAD + f"def k(a: {_F32}, b: {_F32}, out: {_F32}):\n"
             "    pypto.set_vec_tile_shapes(32, 64)\n"
             "    out[:] = pypto.add(a, b, alpha=2.0)\n", line=6, col=14, settings={"target": "head"}),
    ]

    def check(self, ctx: LintContext):
        seen = set()
        target = ctx.settings.target
        for kernel in ctx.model.kernels:
            for kind, message, node in kernel.op_errors:
                kind, _, version = kind.partition("@")
                if version and version != target:
                    continue  # a call only the other release's signature rejects
                if kind not in _HELP or node is None or not in_file(ctx, node):
                    continue
                key = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0), message)
                if key in seen:
                    continue
                seen.add(key)
                yield self.diagnostic(ctx.span(node), message, help=_HELP[kind])


RULE = DtypeMismatch
