# near-miss: PTO019
"""Every option here exists in pypto 0.2.0: a pass option set_pass_options takes, integer group
keys, runtime keys of 0.2.0's configuration map, a debug mode, and a loop_unroll with its own
keywords plus a splatted name."""
import pypto

LOOP_NAMING = {"name": "blocks"}


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.NPU, "stitch_function_max_num": 128, "device_sched_mode": 1},
    pass_options={"vec_nbuffer_setting": {-1: 2}, "cube_l1_reuse_setting": {0: 4}, "pg_upper_bound": 4096},
    debug_options={"runtime_debug_mode": 0},
)
def scale_blocks(
    x: pypto.Tensor([512, 128], pypto.DT_FP32),
    y: pypto.Tensor([512, 128], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 128)
    for b, f in pypto.loop_unroll(0, 32, 1, idx_name="b", unroll_list=[4, 2], submit_before_loop=False,
                                  **LOOP_NAMING):
        part = pypto.view(x, [16 * f, 128], [b * 16, 0])
        y[b * 16:b * 16 + 16 * f, :] = pypto.mul(part, 3.0)
