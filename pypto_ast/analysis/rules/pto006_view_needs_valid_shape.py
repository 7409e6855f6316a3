"""PTO006 view-needs-valid-shape."""

from __future__ import annotations

import ast

from ...diagnostics import Note
from ..rule import Case, LintContext, Rule

_APPLIED = {"operand", "offset", "valid_shape", "compare", "trip"}  # uses that show the read value is consumed

_HEAD = (
    "import pypto\n\nB, S, H = 4, 64, 64\n\n@pypto.frontend.jit\n"
    "def k(inp: pypto.Tensor((B, S, H), pypto.DT_FP32), act_seqs: pypto.Tensor((B,), pypto.DT_INT32),\n"
    "      out: pypto.Tensor((B, S, H), pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(1, 32, 64)\n"
    "    for b in pypto.loop(B, name='b_loop', idx_name='b'):\n"
)  # the loop body starts on line 10


class ViewNeedsValidShape(Rule):
    """
    ## What it does
    Reports a ``pypto.view`` (or a slice ``t[a:b, ...]``) without ``valid_shape=`` whose
    real extent depends on a value read from a tensor (``cur = lens[b]``, a
    ``SymbolicScalar`` read from an INT32 tensor):

    - the view's shape or slice bounds use such a value, or
    - the view's offsets use the loop index ``b`` that also indexed a tensor read
      ``cur = lens[b]`` earlier in the loop body, and ``cur`` is never applied anywhere
      (not as an operand, an offset, a comparison or a ``valid_shape``) -- it looks like the
      length the author meant to give the view; a value computed from several reads
      (``n = cu[b + 1] - cu[b]``) counts as applied only when every read behind it is, or
    - the view's offsets use, directly (``j * 32``, not through a table read), the index of a
      loop whose trip count is a rounded-up block count of a value read from a tensor
      (``for j in pypto.loop((n + 31) // 32)``): the last block is partial; reached through a
      table read (``pages[b, j] * 32``) only when no read of the length's tensor is applied anywhere
      in the kernel (a re-read used as a mask or valid shape shows the kernel masks the page), or
    - the view's offsets use the loop index of a live read ``kv_len = lens[b]`` that the kernel
      applies as the ``valid_shape`` of *another* view of the same shape at the same offsets
      (the K and V blocks of one cache slot: ``vb`` takes ``valid_shape=[kv_len, D]``, ``kb``
      does not): the two cover the same block, and only one stops at the valid rows.

    A per-batch value that *is* used (a scale multiplied in, an offset, a guard
    ``if e < active``) is not reported, nor a loop over a count of whole blocks read from a
    tensor (``for j in pypto.loop(n_blocks)``).

    ## Why is this bad?
    Without ``valid_shape`` pypto infers the valid extent of a view from its input's: the
    input's valid extent past the view's offset, clipped to the view's shape. For a view of a
    static tensor that is the full block (for one of a ``DYNAMIC`` dim, the ragged tail of
    that dim, which is right), and it cannot follow another tensor's values. pypto 0.2.0 compiles
    such a kernel silently; the AI CPU expression table then uses a constant extent, so
    the padding rows past ``cur`` are computed and written as if they were data (FAQ
    pitfall 5). Slicing cannot pass a valid shape at all.

    ## Example
    ```python
    for b in pypto.loop(B, name="b_loop", idx_name="b"):
        cur = act_seqs[b]
        a0 = pypto.view(inp, [1, S, H], [b, 0, 0])
        out[b:b + 1, :, :] = a0 + 1.0
    ```

    ## Use instead
    ```python
    for b in pypto.loop(B, name="b_loop", idx_name="b"):
        cur = act_seqs[b]
        a0 = pypto.view(inp, [1, S, H], [b, 0, 0], valid_shape=[1, cur, H])
        out[b:b + 1, :, :] = a0 + 1.0
    ```

    ## Fix safety
    No fix is offered: which dimension the value bounds is the author's decision.

    ## References
    PyPTO docs: api/operation/pypto-view.md (``valid_shape``); PyPTO FAQ pitfall 5;
    `pypto-0.2-behaviour.md` pitfall 5 (cases p5_view_no_valid_shape / p5_view_with_valid_shape).
    """

    code = "PTO006"
    name = "view-needs-valid-shape"
    summary = "a view whose extent depends on tensor data passes no valid_shape, so it always covers the full block"
    VALID = [
        # a masked view next to a view of another block shape (its first row): not the same block
        _HEAD + "        cur = act_seqs[b]\n"
        "        first = pypto.view(inp, [1, 1, H], [b, 0, 0])\n"
        "        rows = pypto.view(inp, [1, S, H], [b, 0, 0], valid_shape=[1, cur, H])\n"
        "        out[b:b + 1, :, :] = rows - first\n",
        # both blocks of the slot stop at the length
        _HEAD + "        cur = act_seqs[b]\n"
        "        k_blk = pypto.view(inp, [1, S, H], [b, 0, 0], valid_shape=[1, cur, H])\n"
        "        v_blk = pypto.view(inp, [1, S, H], [b, 0, 0], valid_shape=[1, cur, H])\n"
        "        out[b:b + 1, :, :] = k_blk * v_blk\n",
        # p5 control: the read length is applied as valid_shape
        _HEAD + "        cur_seq = act_seqs[b]\n"
        "        a0 = pypto.view(inp, [1, S, H], [b, 0, 0], valid_shape=[1, cur_seq, H])\n"
        "        out[b:b + 1, :, :] = a0 + 1.0\n",
        # the per-batch value is a scale used as an operand: the full block is intended
        _HEAD + "        scale = act_seqs[b]\n"
        "        out[b:b + 1, :, :] = pypto.view(inp, [1, S, H], [b, 0, 0]) * scale\n",
        # the read value is an offset (page table); the extent is the static block
        _HEAD + "        start = act_seqs[b]\n"
        "        blk = pypto.view(inp, [1, 16, H], [b, start, 0])\n"
        "        out[b:b + 1, 0:16, :] = blk + 1.0\n",
        _HEAD + "        start = act_seqs[b]\n"
        "        out[b:b + 1, 0:16, :] = inp[b:b + 1, start:start + 16, :] * 2.0\n",
        # the read value picks where the result goes
        _HEAD + "        dst = act_seqs[b]\n"
        "        out[dst:dst + 1, :, :] = inp[b:b + 1, :, :] + 1.0\n",
        # no tensor read at all: static blocks
        _HEAD + "        out[b:b + 1, :, :] = pypto.view(inp, [1, S, H], [b, 0, 0]) + 1.0\n",
        # a length read once outside the loop, not indexed by the loop: intent unknown
        "import pypto as pto\n\n@pto.frontend.jit\n"
        "def k(x: pto.Tensor((64, 64), pto.DT_FP32), n: pto.Tensor((1,), pto.DT_INT32),\n"
        "      y: pto.Tensor((64, 64), pto.DT_FP32)):\n"
        "    pto.set_vec_tile_shapes(16, 64)\n    total = n[0]\n"
        "    for i in pto.loop(4, name='rows', idx_name='i'):\n"
        "        y[i * 16:(i + 1) * 16, :] = x[i * 16:(i + 1) * 16, :] + 1.0\n",
        # dynamic tail handled with valid_shape (reference idiom)
        "import pypto\n\n@pypto.frontend.jit\n"
        "def rowwise(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),\n"
        "            y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 64)\n    n = x.shape[0]\n"
        "    for i in pypto.loop((n + 15) // 16, name='rows', idx_name='i'):\n"
        "        valid = pypto.min(16, n - i * 16)\n"
        "        blk = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[valid, 64])\n"
        "        pypto.assemble(pypto.exp(blk), [i * 16, 0], y)\n",
        # the read value guards the block: whole blocks are skipped past it
        _HEAD + "        n_act = act_seqs[b]\n"
        "        for j in pypto.loop(4, name='j_loop', idx_name='j', unroll_list=[1, 2]):\n"
        "            if j < n_act:\n"
        "                blk = pypto.view(inp, [1, 16, H], [b, j * 16, 0])\n"
        "                pypto.assemble(blk * 2.0, [b, j * 16, 0], out)\n",
        # physical pages through a block table, the length also applied elsewhere (a mask, a
        # scale): masking the partial page is the kernel's own business
        _HEAD + "        n_tok = act_seqs[b]\n"
        "        for j in pypto.loop((n_tok + 15) // 16, name='j_loop', idx_name='j'):\n"
        "            page = act_seqs[j]\n"
        "            blk = pypto.view(inp, [1, 16, H], [b, page * 16, 0])\n"
        "            pypto.assemble(blk * n_tok, [b, j * 16, 0], out)\n",
        # a count of whole blocks read from a tensor: no tail
        _HEAD + "        n_blocks = act_seqs[b]\n"
        "        for j in pypto.loop(n_blocks, name='j_loop', idx_name='j'):\n"
        "            blk = pypto.view(inp, [1, 16, H], [b, j * 16, 0])\n"
        "            pypto.assemble(blk * 2.0, [b, j * 16, 0], out)\n",
        # both reads of a packed layout applied: start as offset, length as valid shape
        _HEAD + "        start = act_seqs[b]\n"
        "        seg_len = act_seqs[b + 1] - start\n"
        "        seg = pypto.view(inp, [1, S, H], [0, start, 0], valid_shape=[1, seg_len, H])\n"
        "        pypto.assemble(seg * 2.0, [0, start, 0], out)\n",
        # a helper never called from a kernel is not checked
        "import pypto\n\ndef unused(inp, lens, b):\n    cur = lens[b]\n    return pypto.view(inp, [1, 64, 64], [b, 0, 0])\n",
        # the length bounds a rounded-up inner loop through a name: the outer view at the same
        # index covers a whole row of its own tensor (the inner views' tail is the finding)
        _HEAD + "        n_tok = act_seqs[b]\n"
        "        n_blk = (n_tok + 15) // 16\n"
        "        row = pypto.view(inp, [1, 1, H], [b, 0, 0])\n"
        "        for j in pypto.loop(n_blk, name='blk', idx_name='j'):\n"
        "            blk = pypto.view(inp, [1, 16, H], [b, j * 16, 0], valid_shape=[1, pypto.min(16, n_tok - j * 16), H])\n"
        "            pypto.assemble(blk + row, [b, j * 16, 0], out)\n",
    ]
    INVALID = [
        # the K and V blocks of one slot: only one stops at the length read for it
        Case(
            _HEAD + "        cur = act_seqs[b]\n"
            "        k_blk = pypto.view(inp, [1, S, H], [b, 0, 0])\n"
            "        v_blk = pypto.view(inp, [1, S, H], [b, 0, 0], valid_shape=[1, cur, H])\n"
            "        out[b:b + 1, :, :] = k_blk * v_blk\n",
            line=11, col=17,
        ),
        # p5: the read length is never applied
        Case(
            _HEAD + "        cur_seq = act_seqs[b]\n"
            "        a0 = pypto.view(inp, [1, S, H], [b, 0, 0])\n"
            "        out[b:b + 1, :, :] = a0 + 1.0\n",
            line=11, col=14,
        ),
        # same through slicing, with an alias
        Case(
            "import pypto as pto\n\n@pto.frontend.jit\n"
            "def k(inp: pto.Tensor((4, 64, 64), pto.DT_FP32), lens: pto.Tensor((4,), pto.DT_INT32),\n"
            "      out: pto.Tensor((4, 64, 64), pto.DT_FP32)):\n"
            "    pto.set_vec_tile_shapes(1, 32, 64)\n"
            "    for b in pto.loop(4, name='b_loop', idx_name='b'):\n"
            "        cur = lens[b]\n"
            "        out[b:b + 1, :, :] = inp[b:b + 1, :, :] * 2.0\n",
            line=9, col=30,
        ),
        # the shape itself comes from tensor data
        Case(
            _HEAD + "        cur = act_seqs[b]\n"
            "        a0 = pypto.view(inp, [1, cur, H], [b, 0, 0])\n"
            "        pypto.assemble(a0 + 1.0, [b, 0, 0], out)\n",
            line=11, col=14,
        ),
        # a slice bound from tensor data
        Case(
            _HEAD + "        cur = act_seqs[b]\n"
            "        a0 = inp[b:b + 1, 0:cur, :]\n"
            "        pypto.assemble(a0 * 2.0, [b, 0, 0], out)\n",
            line=11, col=14,
        ),
        # the read only bounds an inner loop; the tail block still reads padding
        Case(
            "from pypto import frontend\nimport pypto\n\n@frontend.jit\n"
            "def k(inp: pypto.Tensor((4, 64, 64), pypto.DT_FP32), lens: pypto.Tensor((4,), pypto.DT_INT32),\n"
            "      out: pypto.Tensor((4, 64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(1, 16, 64)\n"
            "    for b in pypto.loop(4, name='b_loop', idx_name='b'):\n"
            "        cur = lens[b]\n"
            "        for j in pypto.loop((cur + 15) // 16, name='blk', idx_name='j'):\n"
            "            blk = pypto.view(inp, [1, 16, 64], [b, j * 16, 0])\n"
            "            pypto.assemble(blk + 1.0, [b, j * 16, 0], out)\n",
            line=11, col=19,
        ),
        # packed layout: the start is applied, the length computed from it is not
        Case(
            _HEAD + "        start = act_seqs[b]\n"
            "        seg_len = act_seqs[b + 1] - start\n"
            "        seg = pypto.view(inp, [1, S, H], [0, start, 0])\n"
            "        pypto.assemble(seg * 2.0, [0, start, 0], out)\n",
            line=12, col=15,
        ),
        # the per-block value is applied, but the rounded-up block count makes the last block partial
        Case(
            _HEAD + "        n_tok = act_seqs[b]\n"
            "        for j in pypto.loop((n_tok + 15) // 16, name='j_loop', idx_name='j'):\n"
            "            scale = act_seqs[j]\n"
            "            blk = pypto.view(inp, [1, 16, H], [b, j * 16, 0])\n"
            "            pypto.assemble(blk * scale, [b, j * 16, 0], out)\n",
            line=13, col=19,
        ),
        # physical pages through a block table; nothing but the trip count reads the length, so
        # the last page's padding rows are copied as data
        Case(
            "import pypto\n\n@pypto.frontend.jit\n"
            "def k(cache: pypto.Tensor((256, 64), pypto.DT_FP32), pages: pypto.Tensor((2, 4), pypto.DT_INT32),\n"
            "      lens: pypto.Tensor((2,), pypto.DT_INT32), out: pypto.Tensor((256, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(32, 64)\n"
            "    for b in pypto.loop(2, name='req', idx_name='b'):\n"
            "        n_tok = lens[b]\n"
            "        for j in pypto.loop((n_tok + 31) // 32, name='blk', idx_name='j'):\n"
            "            page = pages[b, j]\n"
            "            blk = pypto.view(cache, [32, 64], [page * 32, 0])\n"
            "            pypto.assemble(blk * 2.0, [(b * 4 + j) * 32, 0], out)\n",
            line=11, col=19,
        ),
        # inside a plain helper called from the loop
        Case(
            "import pypto\nfrom pypto.frontend import jit\n\n"
            "def block(inp, b):\n    return inp.view([1, 64, 64], [b, 0, 0])\n\n@jit\n"
            "def k(inp: pypto.Tensor((4, 64, 64), pypto.DT_FP32), lens: pypto.Tensor((4,), pypto.DT_INT32),\n"
            "      out: pypto.Tensor((4, 64, 64), pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(1, 32, 64)\n"
            "    for b in pypto.loop(4, name='b_loop', idx_name='b'):\n"
            "        n_valid = lens[b]\n"
            "        pypto.assemble(block(inp, b) + 1.0, [b, 0, 0], out)\n",
            line=5, col=12,
        ),
        # the same through a named block count, without the tail's valid shape
        Case(
            _HEAD + "        n_tok = act_seqs[b]\n"
            "        n_blk = (n_tok + 15) // 16\n"
            "        row = pypto.view(inp, [1, 1, H], [b, 0, 0])\n"
            "        for j in pypto.loop(n_blk, name='blk', idx_name='j'):\n"
            "            blk = pypto.view(inp, [1, 16, H], [b, j * 16, 0])\n"
            "            pypto.assemble(blk + row, [b, j * 16, 0], out)\n",
            line=14, col=19,
        ),
    ]

    def check(self, ctx: LintContext):
        reads = None  # id of a tensor-read node -> node (built on first need)
        seen: set = set()
        for kernel in ctx.model.kernels:
            for view in kernel.views:
                if view.has_valid_shape or id(view.node) in seen:
                    continue
                shape_ids = getattr(view, "shape_read_ids", frozenset())
                live_ids = getattr(view, "read_ids", frozenset())
                sibling = self._masked_sibling(kernel, view, live_ids) if view.index_of_live_read else None
                if view.uses_tensor_read:
                    cause, ids = "shape", shape_ids
                elif sibling is not None:
                    cause, ids = "sibling", live_ids
                elif view.index_of_live_read and self._unapplied(kernel, view, live_ids):
                    cause, ids = "index", live_ids
                elif view.tail_read_ids:
                    cause, ids = "tail", view.tail_read_ids
                elif view.indirect_tail_read_ids:
                    if reads is None:
                        reads = {id(n): n for n in ast.walk(ctx.source.tree) if isinstance(n, ast.Subscript)}
                    if self._length_applied(kernel, view.indirect_tail_read_ids, reads):
                        continue
                    cause, ids = "tail", view.indirect_tail_read_ids
                else:
                    continue
                seen.add(id(view.node))
                if reads is None:
                    reads = {id(n): n for n in ast.walk(ctx.source.tree) if isinstance(n, ast.Subscript)}
                read_nodes = sorted((reads[r] for r in ids if r in reads), key=lambda n: (n.lineno, n.col_offset))
                yield self._diagnostic(ctx, view, cause, read_nodes, sibling)

    @staticmethod
    def _masked_sibling(kernel, view, live_ids):
        """Another view of the kernel with the same shape and offsets whose ``valid_shape`` uses
        one of the live reads behind this view's index, or None."""
        if view.layout is None or not live_ids:
            return None
        return next((other for other in kernel.views if other is not view and other.has_valid_shape
                     and other.layout == view.layout and other.valid_read_ids & live_ids), None)

    @staticmethod
    def _length_applied(kernel, ids, reads) -> bool:
        """Whether the tensor the length is read from is applied anywhere in the kernel (a read of
        it, this one or another, as an operand, offset, guard or valid shape): then the kernel
        masks the partial page itself."""
        tensors = {ast.dump(reads[r].value) for r in ids if r in reads}
        for r, uses in kernel.read_uses.items():
            if uses & _APPLIED and r in reads and ast.dump(reads[r].value) in tensors:
                return True
        return False

    @staticmethod
    def _unapplied(kernel, view, live_ids) -> bool:
        """The live read is never applied; or, computed from several reads, some are applied and
        this view's offsets use one of those but nothing applies the rest (``n = cu[b + 1] - cu[b]``
        with ``cu[b]`` the offset): the length the view was meant to take."""
        # a rounded-up trip count consumes the read too: the partial tail is then the business of
        # the views that loop indexes (the "tail" cause), not of every view at the same index
        applied = {r for r in live_ids if kernel.read_uses.get(r, set()) & (_APPLIED | {"extent"})}
        if not applied:
            return True
        return applied != set(live_ids) and bool(applied & view.offset_read_ids)

    def _diagnostic(self, ctx, view, cause, read_nodes, sibling=None):
        what = "slice" if view.slicing else "`pypto.view`"
        name = None
        if cause in ("index", "sibling") and isinstance(view.read_node, ast.Name):
            name = view.read_node.id
        read_text = ctx.source.segment(read_nodes[0]) if read_nodes else None
        shown = f"`{name}`" if name else (f"`{read_text}`" if read_text else "a value read from a tensor")
        if cause == "shape":
            message = (
                f"{what} extent depends on {shown}, read from tensor data, but no `valid_shape=` is given: "
                "pypto infers the valid extent from the input, so it cannot follow the data"
            )
        elif cause == "sibling":
            message = (
                f"{what} has no `valid_shape=` although the view of the same block at line "
                f"{sibling.node.lineno} stops at {shown}, read from tensor data: this one covers the full block, "
                "the rows past it included"
            )
        elif cause == "tail":
            message = (
                f"{what} has no `valid_shape=` although its loop runs a rounded-up block count of {shown}, "
                "read from tensor data: the last block is partial, yet the view covers it whole"
            )
        else:
            message = (
                f"{what} has no `valid_shape=` although {shown}, read from a tensor at the same loop index, "
                "is never applied: the view always covers the full block"
            )
        value = name or read_text or "cur"
        help_text = f"give the real extent: `pypto.view(x, shape, offsets, valid_shape=[..., {value}, ...])`"
        if view.slicing:
            help_text += " (a slice `t[a:b]` cannot take a valid shape; use `pypto.view`)"
        elif cause == "shape":
            help_text = (
                "keep a static block shape and pass the data-dependent extent as "
                f"`pypto.view(x, shape, offsets, valid_shape=[..., {value}, ...])`"
            )
        notes = ()
        if read_nodes:
            notes = (Note(f"`{read_text}` is read from tensor data here", ctx.span(read_nodes[0])),)
        elif view.read_node is not None:
            notes = (Note("the value is read from tensor data here", ctx.span(view.read_node)),)
        if sibling is not None:
            notes += (Note("the view of the same block with its valid_shape", ctx.span(sibling.node)),)
        return self.diagnostic(ctx.span(view.node), message, help=help_text, notes=notes)


RULE = ViewNeedsValidShape
