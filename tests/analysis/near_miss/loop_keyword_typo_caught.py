# caught: PTO019
"""A misspelt unroll keyword is read by nobody: the loop runs un-unrolled and pypto says nothing;
the runtime option misspelt next to it stops the first call with map::at."""
import pypto


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU, "stitch_func_max_num": 64})
def gelu_rows(
    x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP16),
    y: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(32, 256)
    for r in pypto.loop(x.shape[0] // 32, name="rows", idx_name="r", unroll_lst=[1, 2]):
        part = pypto.view(x, [32, 256], [r * 32, 0])
        y[r * 32:(r + 1) * 32, :] = pypto.mul(part, pypto.sigmoid(pypto.mul(part, 1.702)))
