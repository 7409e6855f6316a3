# caught: PTO014
"""Paged KV gather for decode: a plain helper skips unused page-table slots with a Python `if`
on the page id read from the table; pypto executes the helper, so bool() on the symbolic
value raises `Not concrete value` while the graph is built."""
import pypto

B, MAX_PAGES, PAGE, D = 4, 8, 64, 128
POOL = 64


def copy_page(kv_pool, page_table, gathered, b, p):
    page = page_table[b, p]
    if page >= 0:
        rows = pypto.view(kv_pool, [PAGE, D], [page * PAGE, 0])
        pypto.assemble(pypto.mul(rows, 1.0), [(b * MAX_PAGES + p) * PAGE, 0], gathered)


@pypto.frontend.jit
def gather_pages(
    kv_pool: pypto.Tensor([POOL * PAGE, D], pypto.DT_FP32),
    page_table: pypto.Tensor([B, MAX_PAGES], pypto.DT_INT32),
    gathered: pypto.Tensor([B * MAX_PAGES * PAGE, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(PAGE, D)
    for b in pypto.loop(B, name="batch", idx_name="b"):
        for p in pypto.loop(MAX_PAGES, name="pages", idx_name="p"):
            copy_page(kv_pool, page_table, gathered, b, p)
