// Stand-in for CANN's closed CPU-debug `stub_def.h` (tikicpulib), written for pypto-ast's syntax
// check of emitted kernels against the real asc-devkit headers (pypto_ast/emit/realheaders.py).
//
// The devkit's headers, compiled with ASCENDC_CPU_DEBUG=1, include this file for what the CCE
// compiler provides on the NPU: its address-space qualifiers and attributes, its enums, the
// 16-bit float types and the hardware intrinsics the devkit's implementation calls.  Only what
// the devkit (mirror-cann/asc-devkit) needs to parse for A2 (__NPU_ARCH__ 2201) is here, and
// nothing computes: the check is `g++ -fsyntax-only`.  Nothing here is in namespace AscendC but
// the three CPU-debug names the devkit reads there, so every AscendC name a kernel uses is the
// devkit's own.
#ifndef PYPTO_STANDIN_STUB_DEF_H
#define PYPTO_STANDIN_STUB_DEF_H

// the standard headers the devkit's CPU-debug branches use without including them
#include <cassert>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "kernel_bf16.h"
#include "kernel_fp16.h"

// address spaces and function attributes of the CCE compiler: nothing on the CPU
#define __aicore__
#define __global__
#define __host__
#define __host_aicore__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#define __ssbuf__
#define __simd_callee__
#define __BLOCK_LOCAL__
#define __sync_alias__
#define __check_sync_alias__
#define __in_pipe__(...)
#define __out_pipe__(...)
#define __inout_pipe__(...)
#define ASCENDC_HOST_AICORE

// the CCE compiler's enums, with the enumerators the devkit names
enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2, PIPE_FIX };
enum event_t { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
enum class QuantMode_t {
    NoQuant, F322F16, F322BF16, DEQF16, VDEQF16, DEQS16, VDEQS16, REQ8, VREQ8, REQ4, VREQ4,
    QF322B8_PRE, VQF322B8_PRE, QF322F16_PRE, VQF322F16_PRE, QF322BF16_PRE, VQF322BF16_PRE, QF322F32_PRE,
    VQF322F32_PRE, QF322FP8_PRE, VQF322FP8_PRE, QF322HIF8_PRE, VQF322HIF8_PRE, QF322HIF8_PRE_HYBRID,
    VQF322HIF8_PRE_HYBRID, QS322BF16_PRE, VQS322BF16_PRE, QF162B8_PRE, VQF162B8_PRE, QF162S4_PRE, VQF162S4_PRE,
    QF162S16_PRE, VQF162S16_PRE
};
enum class Order_t { VALUE_INDEX, INDEX_VALUE, ONLY_VALUE, ONLY_INDEX };
enum class dcci_dst_t { CACHELINE_ALL, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
enum class cache_line_t { SINGLE_CACHE_LINE, ENTIRE_DATA_CACHE };
enum class pad_t { PAD_NONE };
enum addr_cal_mode_t { inc, dec };
enum vld_va_half_t { L128, H128 };
enum ub_addr8_t { VA0, VA1, VA2, VA3, VA4, VA5, VA6, VA7 };
enum mem_dsb_t {};
enum mem_t {};
enum atomic_type_t {};
enum atomic_op_t {};

// element and register types of other architectures, named by headers every build includes
struct fp4x2_e1m2_t { uint8_t v; };
struct fp4x2_e2m1_t { uint8_t v; };
struct fp8_e4m3fn_t { uint8_t v; };
struct fp8_e5m2_t { uint8_t v; };
struct fp8_e8m0_t { uint8_t v; };
struct vector_bool {};
struct vector_align {};
struct vector_address {};

// the CPU-debug model's core state
extern int64_t block_idx;
extern int64_t block_num;
extern int64_t sub_block_idx;
extern uint64_t g_fixpipeNdNzParam;
extern int64_t g_taskRation;
namespace AscendC {
constexpr int32_t AIC_TYPE = 1;  // AscendC::AIC, AscendC::AIV (utils/sys_constants.h)
constexpr int32_t AIV_TYPE = 2;
extern bool g_isVdeq;
}  // namespace AscendC

// Every CCE intrinsic the A2 headers call (found in the preprocessed headers, not only those today's
// kernels instantiate).  One takes anything (the check is of a kernel's use of the AscendC API
// above them, not of the devkit's use of the intrinsics); most return nothing, those that read a
// register or convert a scalar return a value.
#define PYPTO_CCE(name) \
    template <class... A> \
    inline void name(A&&...) {}
#define PYPTO_CCE_VALUE(name) \
    template <class... A> \
    inline uint64_t name(A&&...) { return 0; }
PYPTO_CCE(copy_cbuf_to_bt) PYPTO_CCE(copy_cbuf_to_fbuf) PYPTO_CCE(copy_cbuf_to_gm) PYPTO_CCE(copy_gm_to_cbuf)
PYPTO_CCE(copy_gm_to_cbuf_multi_nd2nz_b16) PYPTO_CCE(copy_gm_to_cbuf_multi_nd2nz_b32s)
PYPTO_CCE(copy_gm_to_cbuf_multi_nd2nz_b8) PYPTO_CCE(copy_gm_to_ubuf) PYPTO_CCE(copy_gm_to_ubuf_align_b16)
PYPTO_CCE(copy_gm_to_ubuf_align_b32) PYPTO_CCE(copy_gm_to_ubuf_align_b8) PYPTO_CCE(copy_matrix_cbuf_to_cc)
PYPTO_CCE(copy_matrix_cc_to_cbuf) PYPTO_CCE(copy_matrix_cc_to_gm) PYPTO_CCE(copy_ubuf_to_gm)
PYPTO_CCE(copy_ubuf_to_gm_align_b16) PYPTO_CCE(copy_ubuf_to_gm_align_b32) PYPTO_CCE(copy_ubuf_to_gm_align_b8)
PYPTO_CCE(copy_ubuf_to_ubuf) PYPTO_CCE(create_ca_matrix) PYPTO_CCE(create_ca_matrix_bf16)
PYPTO_CCE(create_cb_matrix) PYPTO_CCE(create_cb_matrix_bf16) PYPTO_CCE(create_cbuf_matrix)
PYPTO_CCE(create_cbuf_matrix_bf16) PYPTO_CCE(dc_preload) PYPTO_CCE(dcci) PYPTO_CCE(dsb)
PYPTO_CCE(ffts_cross_core_sync) PYPTO_CCE(hset_flag) PYPTO_CCE(hwait_flag) PYPTO_CCE(img2colv2_cbuf_to_ca)
PYPTO_CCE(img2colv2_cbuf_to_ca_s4) PYPTO_CCE(img2colv2_cbuf_to_cb) PYPTO_CCE(load_cbuf_to_ca)
PYPTO_CCE(load_cbuf_to_ca_s4) PYPTO_CCE(load_cbuf_to_ca_transpose) PYPTO_CCE(load_cbuf_to_cb)
PYPTO_CCE(load_cbuf_to_cb_s4) PYPTO_CCE(load_cbuf_to_cb_sp) PYPTO_CCE(load_cbuf_to_cb_transpose)
PYPTO_CCE(load_cbuf_to_cb_transpose_s4) PYPTO_CCE(load_gm_to_ca) PYPTO_CCE(load_gm_to_cb)
PYPTO_CCE(load_gm_to_cbuf) PYPTO_CCE(load_image_to_cbuf) PYPTO_CCE(mad) PYPTO_CCE(mad_s4) PYPTO_CCE(mad_sp)
PYPTO_CCE(pipe_barrier) PYPTO_CCE(preload) PYPTO_CCE(scatter_vnchwconv_b16) PYPTO_CCE(scatter_vnchwconv_b32)
PYPTO_CCE(scatter_vnchwconv_b8) PYPTO_CCE(set_aipp_spr_0) PYPTO_CCE(set_aipp_spr_1) PYPTO_CCE(set_aipp_spr_18)
PYPTO_CCE(set_aipp_spr_19) PYPTO_CCE(set_aipp_spr_2) PYPTO_CCE(set_aipp_spr_20) PYPTO_CCE(set_aipp_spr_21)
PYPTO_CCE(set_aipp_spr_3) PYPTO_CCE(set_aipp_spr_4) PYPTO_CCE(set_aipp_spr_5) PYPTO_CCE(set_aipp_spr_6)
PYPTO_CCE(set_aipp_spr_7) PYPTO_CCE(set_aipp_spr_8) PYPTO_CCE(set_aipp_spr_9) PYPTO_CCE(set_atomic_add)
PYPTO_CCE(set_atomic_bf16) PYPTO_CCE(set_atomic_f16) PYPTO_CCE(set_atomic_f32) PYPTO_CCE(set_atomic_max)
PYPTO_CCE(set_atomic_min) PYPTO_CCE(set_atomic_none) PYPTO_CCE(set_atomic_s16) PYPTO_CCE(set_atomic_s32)
PYPTO_CCE(set_atomic_s8) PYPTO_CCE(set_cmpmask) PYPTO_CCE(set_ctrl) PYPTO_CCE(set_data_exp_0)
PYPTO_CCE(set_data_exp_1) PYPTO_CCE(set_data_exp_2) PYPTO_CCE(set_data_exp_3) PYPTO_CCE(set_deqscale)
PYPTO_CCE(set_ffts_base_addr) PYPTO_CCE(set_flag) PYPTO_CCE(set_fmatrix) PYPTO_CCE(set_fmatrix_b)
PYPTO_CCE(set_fpc) PYPTO_CCE(set_l1_3d_size) PYPTO_CCE(set_l3d_rpt) PYPTO_CCE(set_mask_count)
PYPTO_CCE(set_mask_norm) PYPTO_CCE(set_mov_pad_val) PYPTO_CCE(set_nd_para) PYPTO_CCE(set_padding)
PYPTO_CCE(set_quant_pre) PYPTO_CCE(set_st_atomic_cfg) PYPTO_CCE(set_va_reg_sb) PYPTO_CCE(set_vector_mask)
PYPTO_CCE(st_dev) PYPTO_CCE(trap) PYPTO_CCE(vabs) PYPTO_CCE(vadd) PYPTO_CCE(vaddrelu)
PYPTO_CCE(vaddreluconv_f162s8) PYPTO_CCE(vaddreluconv_f322f16) PYPTO_CCE(vaddreluconv_s162s8) PYPTO_CCE(vadds)
PYPTO_CCE(vand) PYPTO_CCE(vaxpy) PYPTO_CCE(vbitsort) PYPTO_CCE(vbrcb) PYPTO_CCE(vcadd) PYPTO_CCE(vcgadd)
PYPTO_CCE(vcgmax) PYPTO_CCE(vcgmin) PYPTO_CCE(vcmax) PYPTO_CCE(vcmin) PYPTO_CCE(vcmp_eq) PYPTO_CCE(vcmp_ge)
PYPTO_CCE(vcmp_gt) PYPTO_CCE(vcmp_le) PYPTO_CCE(vcmp_lt) PYPTO_CCE(vcmp_ne) PYPTO_CCE(vcmpv_eq)
PYPTO_CCE(vcmpv_ge) PYPTO_CCE(vcmpv_gt) PYPTO_CCE(vcmpv_le) PYPTO_CCE(vcmpv_lt) PYPTO_CCE(vcmpv_ne)
PYPTO_CCE(vcmpvs_eq) PYPTO_CCE(vcmpvs_ge) PYPTO_CCE(vcmpvs_gt) PYPTO_CCE(vcmpvs_le) PYPTO_CCE(vcmpvs_lt)
PYPTO_CCE(vcmpvs_ne) PYPTO_CCE(vconv_bf162f32) PYPTO_CCE(vconv_bf162s32a) PYPTO_CCE(vconv_bf162s32c)
PYPTO_CCE(vconv_bf162s32f) PYPTO_CCE(vconv_bf162s32r) PYPTO_CCE(vconv_bf162s32z) PYPTO_CCE(vconv_deq)
PYPTO_CCE(vconv_deqs162b8h) PYPTO_CCE(vconv_deqs162b8l) PYPTO_CCE(vconv_f162f32) PYPTO_CCE(vconv_f162s16a)
PYPTO_CCE(vconv_f162s16c) PYPTO_CCE(vconv_f162s16f) PYPTO_CCE(vconv_f162s16r) PYPTO_CCE(vconv_f162s16z)
PYPTO_CCE(vconv_f162s32a) PYPTO_CCE(vconv_f162s32c) PYPTO_CCE(vconv_f162s32f) PYPTO_CCE(vconv_f162s32r)
PYPTO_CCE(vconv_f162s32z) PYPTO_CCE(vconv_f162s4) PYPTO_CCE(vconv_f162s4a) PYPTO_CCE(vconv_f162s4c)
PYPTO_CCE(vconv_f162s4f) PYPTO_CCE(vconv_f162s4r) PYPTO_CCE(vconv_f162s4z) PYPTO_CCE(vconv_f162s8)
PYPTO_CCE(vconv_f162s8a) PYPTO_CCE(vconv_f162s8c) PYPTO_CCE(vconv_f162s8f) PYPTO_CCE(vconv_f162s8r)
PYPTO_CCE(vconv_f162s8z) PYPTO_CCE(vconv_f162u8) PYPTO_CCE(vconv_f162u8a) PYPTO_CCE(vconv_f162u8c)
PYPTO_CCE(vconv_f162u8f) PYPTO_CCE(vconv_f162u8r) PYPTO_CCE(vconv_f162u8z) PYPTO_CCE(vconv_f322bf16a)
PYPTO_CCE(vconv_f322bf16c) PYPTO_CCE(vconv_f322bf16f) PYPTO_CCE(vconv_f322bf16r) PYPTO_CCE(vconv_f322bf16z)
PYPTO_CCE(vconv_f322f16) PYPTO_CCE(vconv_f322f16a) PYPTO_CCE(vconv_f322f16c) PYPTO_CCE(vconv_f322f16f)
PYPTO_CCE(vconv_f322f16o) PYPTO_CCE(vconv_f322f16r) PYPTO_CCE(vconv_f322f16z) PYPTO_CCE(vconv_f322f32a)
PYPTO_CCE(vconv_f322f32c) PYPTO_CCE(vconv_f322f32f) PYPTO_CCE(vconv_f322f32r) PYPTO_CCE(vconv_f322f32z)
PYPTO_CCE(vconv_f322s16a) PYPTO_CCE(vconv_f322s16c) PYPTO_CCE(vconv_f322s16f) PYPTO_CCE(vconv_f322s16r)
PYPTO_CCE(vconv_f322s16z) PYPTO_CCE(vconv_f322s32a) PYPTO_CCE(vconv_f322s32c) PYPTO_CCE(vconv_f322s32f)
PYPTO_CCE(vconv_f322s32r) PYPTO_CCE(vconv_f322s32z) PYPTO_CCE(vconv_f322s64a) PYPTO_CCE(vconv_f322s64c)
PYPTO_CCE(vconv_f322s64f) PYPTO_CCE(vconv_f322s64r) PYPTO_CCE(vconv_f322s64z) PYPTO_CCE(vconv_s162f16)
PYPTO_CCE(vconv_s162f16a) PYPTO_CCE(vconv_s162f16c) PYPTO_CCE(vconv_s162f16f) PYPTO_CCE(vconv_s162f16r)
PYPTO_CCE(vconv_s162f16z) PYPTO_CCE(vconv_s162f32) PYPTO_CCE(vconv_s322f32) PYPTO_CCE(vconv_s322f32a)
PYPTO_CCE(vconv_s322f32c) PYPTO_CCE(vconv_s322f32f) PYPTO_CCE(vconv_s322f32r) PYPTO_CCE(vconv_s322f32z)
PYPTO_CCE(vconv_s322s16) PYPTO_CCE(vconv_s322s64) PYPTO_CCE(vconv_s42f16) PYPTO_CCE(vconv_s642f32a)
PYPTO_CCE(vconv_s642f32c) PYPTO_CCE(vconv_s642f32f) PYPTO_CCE(vconv_s642f32r) PYPTO_CCE(vconv_s642f32z)
PYPTO_CCE(vconv_s642s32) PYPTO_CCE(vconv_s82f16) PYPTO_CCE(vconv_u82f16) PYPTO_CCE(vconv_vdeqs162b8h)
PYPTO_CCE(vconv_vdeqs162b8l) PYPTO_CCE(vcopy) PYPTO_CCE(vcpadd) PYPTO_CCE(vdiv) PYPTO_CCE(vector_dup)
PYPTO_CCE(vexp) PYPTO_CCE(vgather) PYPTO_CCE(vgatherb) PYPTO_CCE(vld_va_reg) PYPTO_CCE(vln) PYPTO_CCE(vlrelu)
PYPTO_CCE(vmadd) PYPTO_CCE(vmaddrelu) PYPTO_CCE(vmax) PYPTO_CCE(vmaxs) PYPTO_CCE(vmin) PYPTO_CCE(vmins)
PYPTO_CCE(vmla) PYPTO_CCE(vmrgsort4) PYPTO_CCE(vmul) PYPTO_CCE(vmulconv_f162s8) PYPTO_CCE(vmulconv_f162u8)
PYPTO_CCE(vmuls) PYPTO_CCE(vnot) PYPTO_CCE(vor) PYPTO_CCE(vrec) PYPTO_CCE(vreducev2) PYPTO_CCE(vrelu)
PYPTO_CCE(vrsqrt) PYPTO_CCE(vsel) PYPTO_CCE(vshl) PYPTO_CCE(vshr) PYPTO_CCE(vsqrt) PYPTO_CCE(vsub)
PYPTO_CCE(vsubrelu) PYPTO_CCE(vsubreluconv_f162s8) PYPTO_CCE(vsubreluconv_f322f16)
PYPTO_CCE(vsubreluconv_s162s8) PYPTO_CCE(vtranspose) PYPTO_CCE(wait_flag) PYPTO_CCE(wait_flag_dev)
PYPTO_CCE_VALUE(bcnt0) PYPTO_CCE_VALUE(bcnt1) PYPTO_CCE_VALUE(clz) PYPTO_CCE_VALUE(conv_f322f16o)
PYPTO_CCE_VALUE(conv_f322s32a) PYPTO_CCE_VALUE(conv_f322s32c) PYPTO_CCE_VALUE(conv_f322s32f)
PYPTO_CCE_VALUE(conv_f322s32r) PYPTO_CCE_VALUE(get_acc_val) PYPTO_CCE_VALUE(get_arch_ver)
PYPTO_CCE_VALUE(get_block_idx) PYPTO_CCE_VALUE(get_block_num) PYPTO_CCE_VALUE(get_cmpmask)
PYPTO_CCE_VALUE(get_ctrl) PYPTO_CCE_VALUE(get_icache_prl_st) PYPTO_CCE_VALUE(get_max_min_cnt)
PYPTO_CCE_VALUE(get_pc) PYPTO_CCE_VALUE(get_rsvd_cnt) PYPTO_CCE_VALUE(get_st_atomic_cfg)
PYPTO_CCE_VALUE(get_vms4_sr) PYPTO_CCE_VALUE(ld_dev) PYPTO_CCE_VALUE(sbitset0) PYPTO_CCE_VALUE(sbitset1)
PYPTO_CCE_VALUE(sff0) PYPTO_CCE_VALUE(sff1) PYPTO_CCE_VALUE(sflbits)

#endif
