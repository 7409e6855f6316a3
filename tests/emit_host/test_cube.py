"""Matmul on the cube unit: pypto_ast/emit/cube.py kernels run on the host model
pypto_ast/emit/host/pypto_host_cube.h (ascendc.md §10.2) and compared with torch.

Kernels are compiled with the project's cached host build; several kernels share one library
where possible so the file stays fast.
"""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings, strategies as st  # noqa: E402

from pypto_ast import knobs  # noqa: E402
from pypto_ast.emit.build import load_library  # noqa: E402
from pypto_ast.emit.host_runtime import build_program  # noqa: E402
from pypto_ast.emit.cube import MatmulSpec, emit_matmul_kernel  # noqa: E402
from pypto_ast.emit.errors import EmitError  # noqa: E402

pytestmark = pytest.mark.skipif(
    shutil.which(knobs.cxx) is None, reason=f"C++ compiler {knobs.cxx!r} not on PATH: the cube tests compile C++"
)

HOST_DIR = Path(__file__).resolve().parents[2] / "pypto_ast" / "emit" / "host"
FLAGS = ("-Wall", "-Werror", "-Werror=narrowing")

_TORCH = {"fp16": torch.float16, "fp32": torch.float32}


def _driver(name: str, nargs: int, qual: str = "") -> str:
    """extern "C" int run_<name>(blocks, args, err, errlen, traffic[4]): Launch + fault capture."""
    call = ", ".join(f"(GM_ADDR)args[{i}]" for i in range(nargs))
    return f"""
extern "C" int run_{name}(uint32_t blocks, void** args, char* err, int errlen, uint64_t* traffic)
{{
    try {{
        pypto_host::Launch(blocks, {qual}{name}, {call});
    }} catch (const pypto_host::HardwareFault& e) {{
        std::snprintf(err, static_cast<size_t>(errlen), "%s", e.what());
        return 3;
    }}
    const auto& t = pypto_host::Traffic();
    traffic[0] = t.gmToUbBytes; traffic[1] = t.gmToUbCalls; traffic[2] = t.ubToGmBytes; traffic[3] = t.ubToGmCalls;
    return 0;
}}
"""


class Fault(Exception):
    pass


INCLUDE = '#include "kernel_operator.h"'


def build(kernels: dict[str, tuple[str, int]], opt: str = "-O2"):
    """{name: (kernel source, number of GM_ADDR args)} -> {name: runner(blocks, *tensors)}.

    All kernels go into ONE translation unit (each emitted file wrapped in its own namespace,
    its include hoisted), so the header is compiled once per library.
    """
    parts = [INCLUDE, '#include "pypto_host_fault.h"', "#include <cstdio>"]
    for name, (src, nargs) in kernels.items():
        assert src.count(INCLUDE) == 1
        parts.append(f"namespace tu_{name} {{\n{src.replace(INCLUDE, '')}\n}}  // namespace tu_{name}")
        parts.append(_driver(name, nargs, qual=f"tu_{name}::"))
    lib = load_library(build_program({"kernels.cpp": "\n".join(parts)}, extra_flags=(*FLAGS, opt)))
    runners = {}
    for name, (_, nargs) in kernels.items():
        fn = getattr(lib, f"run_{name}")
        fn.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int,
                       ctypes.POINTER(ctypes.c_uint64)]
        fn.restype = ctypes.c_int

        def run(blocks, *tensors, _fn=fn, _n=nargs):
            assert len(tensors) == _n
            ptrs = (ctypes.c_void_p * _n)(*[t.data_ptr() for t in tensors])
            err = ctypes.create_string_buffer(4096)
            traffic = (ctypes.c_uint64 * 4)()
            rc = _fn(blocks, ptrs, err, 4096, traffic)
            if rc:
                raise Fault(err.value.decode())
            return list(traffic)

        runners[name] = run
    return runners


def make_inputs(spec: MatmulSpec, seed: int = 0, pad: int = 0):
    g = torch.Generator().manual_seed(seed)
    s = spec
    ra, ca = (s.k, s.m) if s.trans_a else (s.m, s.k)
    rb, cb = (s.n, s.k) if s.trans_b else (s.k, s.n)
    ext_a = (s.batch - 1) * s.batch_stride_a + (ra - 1) * s.lda + ca
    ext_b = (s.batch - 1) * s.batch_stride_b + (rb - 1) * s.ldb + cb
    ext_c = (s.batch - 1) * s.batch_stride_c + (s.m - 1) * s.ldc + s.n
    a = (torch.rand(ext_a + 7 + pad, generator=g) * 2 - 1).to(_TORCH[s.a_dtype])
    b = (torch.rand(ext_b + 5 + pad, generator=g) * 2 - 1).to(_TORCH[s.b_dtype])
    c = torch.full((ext_c + 3 + pad,), 12345.0, dtype=_TORCH[s.c_dtype])
    bias = (torch.rand(s.n + 2 + pad, generator=g) * 2 - 1).to(torch.float32)
    return a, b, bias, c


def reference(spec: MatmulSpec, a, b, bias, offs):
    s = spec
    out = []
    for bi in range(s.batch):
        oa = offs[0] + bi * s.batch_stride_a
        ob = offs[1] + bi * s.batch_stride_b
        ra, ca = (s.k, s.m) if s.trans_a else (s.m, s.k)
        rb, cb = (s.n, s.k) if s.trans_b else (s.k, s.n)
        A = a[oa:oa + (ra - 1) * s.lda + ca].float()
        A = torch.as_strided(A, (ra, ca), (s.lda, 1))
        B = b[ob:ob + (rb - 1) * s.ldb + cb].float()
        B = torch.as_strided(B, (rb, cb), (s.ldb, 1))
        if s.trans_a:
            A = A.t()
        if s.trans_b:
            B = B.t()
        C = A.double() @ B.double()
        if s.bias:
            ob2 = offs[2]
            C = C + bias[ob2:ob2 + s.n].double()
        out.append(C)
    return out


def run_spec(spec: MatmulSpec, runner, info, blocks=None, offs=None, seed=0):
    """Run and compare with torch; return (traffic, c tensor)."""
    offs = offs or ([0, 0, 0, 0] if spec.bias else [0, 0, 0])
    a, b, bias, c = make_inputs(spec, seed, pad=max(offs))
    tiling = torch.tensor(offs, dtype=torch.int64)
    args = (a, b, bias, c, tiling) if spec.bias else (a, b, c, tiling)
    traffic = runner(blocks or info["num_blocks"], *args)
    refs = reference(spec, a, b, bias, offs)
    s = spec
    written = torch.zeros(c.numel(), dtype=torch.bool)
    for bi, R in enumerate(refs):
        oc = offs[-1] + bi * s.batch_stride_c
        Cv = torch.as_strided(c, (s.m, s.n), (s.ldc, 1), oc).double()
        torch.as_strided(written, (s.m, s.n), (s.ldc, 1), oc).fill_(True)
        if s.c_dtype == "fp32":
            torch.testing.assert_close(Cv, R, rtol=1e-3, atol=1e-3 * max(1.0, s.k ** 0.5))
        else:
            torch.testing.assert_close(Cv, R, rtol=2e-3, atol=2e-3 * max(1.0, s.k ** 0.5))
    # Nothing outside the valid [m, n] regions was written.
    assert torch.all(c[~written] == 12345.0)
    return traffic, c


def spec(name, m, n, k, **kw):
    kw.setdefault("a_dtype", "fp16")
    kw.setdefault("b_dtype", kw["a_dtype"])
    kw.setdefault("c_dtype", "fp32")
    ta, tb = kw.get("trans_a", False), kw.get("trans_b", False)
    kw.setdefault("lda", m if ta else k)
    kw.setdefault("ldb", k if tb else n)
    kw.setdefault("ldc", n)
    return MatmulSpec(kernel=name, m=m, n=n, k=k, **kw)


# ------------------------------------------------------------------------------------------
# The main grid: one library with all kernels.
# ------------------------------------------------------------------------------------------
GRID = {
    "aligned": spec("mm_aligned", 64, 64, 64),
    "ragged": spec("mm_ragged", 33, 47, 29, base_m=32, base_n=32, base_k=16),
    "ragged_f16out": spec("mm_ragged_f16", 33, 47, 29, c_dtype="fp16"),
    "trans_a": spec("mm_trans_a", 40, 24, 48, trans_a=True, base_k=32),
    "trans_b": spec("mm_trans_b", 37, 50, 45, trans_b=True, base_k=32),
    "trans_ab": spec("mm_trans_ab", 30, 20, 70, trans_a=True, trans_b=True, base_k=32),
    "bias": spec("mm_bias", 50, 40, 35, bias=True, base_n=32, base_k=32),
    "batch_shared_b": spec("mm_batch", 24, 40, 32, batch=2, batch_stride_a=24 * 32 + 8, batch_stride_b=0,
                           batch_stride_c=24 * 40 + 16),
    "k_loop": spec("mm_kloop", 32, 32, 200, base_k=32),
    "multicore": spec("mm_multi", 96, 80, 48, base_m=32, base_n=32),
    "padded_ld": spec("mm_padded_ld", 20, 30, 40, lda=48, ldb=40, ldc=33),
    "fp32": spec("mm_fp32", 20, 30, 44, a_dtype="fp32", trans_b=True, base_k=16),
    # an fp32 [kL0=128, nL0=128] tile is all of L0B: single-buffered, as pypto runs it
    "single_l0b": spec("mm_single_l0b", 64, 128, 384, a_dtype="fp32", trans_b=True, base_m=64, base_n=128,
                       base_k=128),
    "big": spec("mm_512", 512, 512, 512, base_m=128, base_n=128, base_k=64),
}


@pytest.fixture(scope="module")
def grid():
    emitted = {key: emit_matmul_kernel(s) for key, s in GRID.items()}
    runners = build({s.kernel: (emitted[key][0], 5 if s.bias else 4) for key, s in GRID.items()})
    return {key: (GRID[key], runners[GRID[key].kernel], emitted[key][1], emitted[key][0]) for key in GRID}


@pytest.mark.parametrize("key", [k for k in GRID if k != "big"])
def test_matches_torch(grid, key):
    s, run, info, _ = grid[key]
    run_spec(s, run, info)


def test_emitted_source_shape(grid):
    s, _, info, src = grid["bias"]
    assert src.startswith("// Generated") and '#include "kernel_operator.h"' in src
    assert 'extern "C" __global__ __aicore__ void mm_bias(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tiling)' in src
    for needle in ("Nd2NzParams{", "LoadData2DParams{", "MmadParams{", "FixpipeParamsV220{", "QuantMode_t::NoQuant",
                   "GetBlockIdx()", "GetBlockNum()", "TQue<TPosition::CO1, 1>", "// Stage"):
        assert needle in src
    assert set(info) >= {"kernel", "num_blocks", "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes"}
    assert info["tiling"] == ["off_a", "off_b", "off_bias", "off_c"]
    assert "QuantMode_t::F322F16" in grid["ragged_f16out"][3]


def test_tiling_offsets(grid):
    s, run, info, _ = grid["trans_b"]
    run_spec(s, run, info, offs=[3, 5, 7])


def test_multicore_split_matches_any_block_count(grid):
    s, run, info, _ = grid["multicore"]
    assert info["num_blocks"] == 3 * 3
    for blocks in (1, 2, 4, 9, 13):
        run_spec(s, run, info, blocks=blocks)


def test_k_loop_has_several_steps(grid):
    s, _, _, src = grid["k_loop"]
    assert "constexpr uint32_t kTilesK = 7;" in src


def test_512_and_traffic(grid):
    s, run, info, _ = grid["big"]
    assert info["num_blocks"] == 16
    traffic, _ = run_spec(s, run, info, seed=3)
    # every output tile reads its A row-panel and B column-panel once: 16 tiles x (128x512 + 512x128) x 2 B
    assert traffic[0] == 16 * 2 * 128 * 512 * 2
    assert traffic[2] == 512 * 512 * 4 and traffic[3] == 16


# ------------------------------------------------------------------------------------------
# Emitter rejections.
# ------------------------------------------------------------------------------------------
def test_l0a_overflow_names_the_tile():
    # one 256x256 fp16 tile is 128 KiB, twice L0A: pypto's own plan fails the same way
    with pytest.raises(EmitError) as e:
        emit_matmul_kernel(spec("big_tile", 512, 64, 512, base_m=256, base_k=256))
    msg = str(e.value)
    assert "L0A" in msg and "mL0=256" in msg and "kL0=256" in msg and "cube tile" in msg
    assert "exceeds MEM_L0A size [65536]" in msg


def test_a_tile_that_fills_l0_is_single_buffered_only_there(grid):
    """A tile whose two copies do not fit an L0 memory keeps its shape with one queue buffer
    there (pypto only needs one tile to fit); the other memories stay double-buffered."""
    s, run, info, src = grid["single_l0b"]
    assert info["buffers"] == {"l1": 2, "l0a": 2, "l0b": 1}, info["buffers"]
    assert info["l0b_bytes"] == 128 * 128 * 4 and info["base_tile"] == (64, 128, 128)
    assert "pipe.InitBuffer(qB2, 1, 65536);" in src and "pipe.InitBuffer(qA2, 2," in src
    _, c = run_spec(s, run, info)  # three K steps through the one B2 buffer
    assert torch.isfinite(c).all()


def test_l0c_overflow_names_the_tile():
    with pytest.raises(EmitError, match=r"L0C.*reduce the cube tile shape"):
        emit_matmul_kernel(spec("big_c", 512, 512, 32, base_m=256, base_n=256, base_k=16))


@pytest.mark.parametrize("kw, pattern", [
    (dict(a_dtype="fp32", b_dtype="fp32"), "fp32 x fp32 needs"),
    (dict(a_dtype="fp16", b_dtype="fp32"), "same dtype"),
    (dict(a_dtype="int8"), "not an A2 cube combination"),
    (dict(c_dtype="int8"), "not an A2 cube combination"),
    (dict(a_dtype="int8", b_dtype="int8", c_dtype="fp32", trans_b=True), "not an A2 cube combination"),
    (dict(a_dtype="int8", b_dtype="int8", c_dtype="int32"), "int8 x int8 needs"),
    (dict(a_dtype="int8", b_dtype="int8", c_dtype="int32", trans_b=True, base_k=48), "multiple of 32 for int8"),
    (dict(base_m=24), "multiple of 16"),
    (dict(trans_a=True, k=30), "k % 16 == 0"),
    (dict(batch=2, batch_stride_c=0), "same c"),
])
def test_rejections(kw, pattern):
    base = dict(m=32, n=32, k=32)
    base.update({k: kw.pop(k) for k in ("m", "n", "k") if k in kw})
    with pytest.raises(EmitError, match=pattern):
        emit_matmul_kernel(spec("bad", base["m"], base["n"], base["k"], **kw))


# ------------------------------------------------------------------------------------------
# Host model: wrong parameters fault or give wrong numbers (never silently match).
# ------------------------------------------------------------------------------------------
def _mutate(src: str, old: str, new: str) -> str:
    assert src.count(old) >= 1, old
    return src.replace(old, new, 1)


@pytest.fixture(scope="module")
def broken():
    base = spec("mm_base", 48, 40, 40, base_k=32)  # k tail 8 -> pad rows; m/n tails
    src, info = emit_matmul_kernel(base)
    variants = {
        # Nd2Nz: C0 stride of A = padM; a smaller value makes column blocks overlap rows
        "nd2nz_c0stride": _mutate(src, "0, kLda, static_cast<uint16_t>(padM), 1, 0}", "0, kLda, static_cast<uint16_t>(padM - 16), 1, 0}"),
        # Nd2Nz: wrong GM row length (srcDValue) reads the wrong elements
        "nd2nz_srcd": _mutate(src, "0, kLdb, static_cast<uint16_t>(padK), 1, 0}", "0, kLdb + 1, static_cast<uint16_t>(padK), 1, 0}"),
        # B's K pad rows not filled: garbage in K padding must be caught
        "no_pad_fill": _mutate(src, "if (padK > curK) {", "if (false) {"),
        # LoadData for L0B without the fractal transpose
        "loaddata_notrans": _mutate(src, "static_cast<uint16_t>(padK / 16), 0, 0, true, 0}", "static_cast<uint16_t>(padK / 16), 0, 0, false, 0}"),
        # LoadData for L0A with a wrong source stride
        "loaddata_srcstride": _mutate(src, "static_cast<uint16_t>(padM / 16), 0, 0, false, 0}", "static_cast<uint16_t>(1), 0, 0, false, 0}"),
        # Mmad k larger than what was loaded
        "mmad_k": _mutate(src, "static_cast<uint16_t>(curK), 0, false, ki == 0}",
                          "static_cast<uint16_t>(curK + 16), 0, false, ki == 0}"),
        # Fixpipe source stride not matching the Mmad result layout
        "fixpipe_srcstride": _mutate(src, "static_cast<uint16_t>(padM), kLdc", "static_cast<uint16_t>(padM + 16), kLdc"),
        # cmatrixInitVal always true: only the last k step survives
        "no_accumulate": _mutate(src, "0, false, ki == 0}", "0, false, true}"),
    }
    kernels = {f"mm_{k}": (v.replace("void mm_base(", f"void mm_{k}("), 4) for k, v in variants.items()}
    kernels["mm_base"] = (src, 4)
    return base, info, build(kernels)


def test_broken_base_is_correct(broken):
    base, info, runners = broken
    run_spec(base, runners["mm_base"], info)


@pytest.mark.parametrize("variant", ["nd2nz_c0stride", "nd2nz_srcd", "no_pad_fill", "loaddata_notrans",
                                     "loaddata_srcstride", "mmad_k", "fixpipe_srcstride", "no_accumulate"])
def test_wrong_parameter_is_caught(broken, variant):
    base, info, runners = broken
    with pytest.raises((Fault, AssertionError)) as e:
        run_spec(base, runners[f"mm_{variant}"], info)
    if variant in ("nd2nz_c0stride", "no_pad_fill", "mmad_k", "fixpipe_srcstride"):
        assert e.type is Fault, f"{variant} should fault loudly, got wrong numbers instead"


HAND = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void l1_overflow(GM_ADDR x)
{
    TPipe pipe;
    TQue<TPosition::A1, 1> qa;
    TQue<TPosition::B1, 1> qb;
    pipe.InitBuffer(qa, 2, 128 * 1024);
    pipe.InitBuffer(qb, 2, 128 * 1024 + 32);   // 512 KiB + 64 B of L1
}
extern "C" __global__ __aicore__ void l0a_overflow(GM_ADDR x)
{
    TPipe pipe;
    TQue<TPosition::A2, 1> qa;
    pipe.InitBuffer(qa, 2, 33 * 1024);
}
extern "C" __global__ __aicore__ void vec_and_cube(GM_ADDR x)
{
    TPipe pipe;   // a UB queue and L1 queues side by side: separate memories
    TQue<TPosition::VECIN, 1> qv;
    TQue<TPosition::A1, 1> qa;
    pipe.InitBuffer(qv, 2, 96 * 1024);
    pipe.InitBuffer(qa, 2, 256 * 1024);
}
// Static tensors (TBuf) with the manual cube events of §10.2 / §9.1, half output.
extern "C" __global__ __aicore__ void tbuf_manual(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    TPipe pipe;
    TBuf<TPosition::A1> a1Buf;
    TBuf<TPosition::B1> b1Buf;
    TBuf<TPosition::A2> a2Buf;
    TBuf<TPosition::B2> b2Buf;
    TBuf<TPosition::CO1> cBuf;
    pipe.InitBuffer(a1Buf, 32 * 48 * 2);
    pipe.InitBuffer(b1Buf, 48 * 16 * 2);
    pipe.InitBuffer(a2Buf, 32 * 48 * 2);
    pipe.InitBuffer(b2Buf, 48 * 16 * 2);
    pipe.InitBuffer(cBuf, 32 * 16 * 4);
    GlobalTensor<half> aGm, bGm, cGm;
    aGm.SetGlobalBuffer((__gm__ half*)a, 32 * 48);
    bGm.SetGlobalBuffer((__gm__ half*)b, 48 * 16);
    cGm.SetGlobalBuffer((__gm__ half*)c, 32 * 16);
    LocalTensor<half> a1 = a1Buf.Get<half>(), b1 = b1Buf.Get<half>(), a2 = a2Buf.Get<half>(), b2 = b2Buf.Get<half>();
    LocalTensor<float> cl = cBuf.Get<float>();
    DataCopy(a1, aGm, Nd2NzParams{1, 32, 48, 0, 48, 32, 1, 0});
    DataCopy(b1, bGm, Nd2NzParams{1, 48, 16, 0, 16, 48, 1, 0});
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    for (uint32_t i = 0; i < 2; ++i) LoadData(a2[i * 16 * 48], a1[i * 16 * 16], LoadData2DParams{0, 3, 2, 0, 0, false, 0});
    for (uint32_t i = 0; i < 3; ++i) LoadData(b2[i * 16 * 16], b1[i * 16 * 16], LoadData2DParams{0, 1, 3, 0, 0, true, 0});
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(cl, a2, b2, MmadParams{32, 16, 48, 0, false, true});
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    Fixpipe(cGm, cl, FixpipeParamsV220{16, 32, 32, 16, false, QuantMode_t::F322F16, 0, 1, 0, 0, 0});
    SetFlag<HardEvent::FIX_M>(EVENT_ID1);
    WaitFlag<HardEvent::FIX_M>(EVENT_ID1);
    SetFlag<HardEvent::M_MTE1>(EVENT_ID1);
    WaitFlag<HardEvent::M_MTE1>(EVENT_ID1);
    SetFlag<HardEvent::MTE1_MTE2>(EVENT_ID1);
    WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID1);
}
extern "C" __global__ __aicore__ void wrong_dtypes(GM_ADDR x)
{
    TPipe pipe;
    TQue<TPosition::A2, 1> qa;
    TQue<TPosition::B2, 1> qb;
    TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa, 1, 1024);
    pipe.InitBuffer(qb, 1, 1024);
    pipe.InitBuffer(qc, 1, 1024);
    LocalTensor<half> a = qa.AllocTensor<half>();
    LocalTensor<half> b = qb.AllocTensor<half>();
    LocalTensor<half> c = qc.AllocTensor<half>();
    Mmad(c, a, b, MmadParams{16, 16, 16, 0, false, true});
}
"""


@pytest.fixture(scope="module")
def hand_lib():
    nargs = {"l1_overflow": 1, "l0a_overflow": 1, "vec_and_cube": 1, "wrong_dtypes": 1, "tbuf_manual": 3}
    src = HAND + '\n#include "pypto_host_fault.h"\n#include <cstdio>\n' + "".join(_driver(n, k) for n, k in nargs.items())
    lib = load_library(build_program({"hand.cpp": src}, extra_flags=(*FLAGS, "-O0")))

    def run(name, *tensors):
        fn = getattr(lib, f"run_{name}")
        fn.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int,
                       ctypes.POINTER(ctypes.c_uint64)]
        err = ctypes.create_string_buffer(4096)
        tensors = tensors or (torch.zeros(8),)
        ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
        rc = fn(1, ptrs, err, 4096, (ctypes.c_uint64 * 4)())
        return rc, err.value.decode()
    return run


def test_l1_over_allocation_faults(hand_lib):
    rc, msg = hand_lib("l1_overflow")
    assert rc == 3 and "L1 overflow" in msg and "524288" in msg


def test_l0a_over_allocation_faults(hand_lib):
    rc, msg = hand_lib("l0a_overflow")
    assert rc == 3 and "L0A overflow" in msg


def test_cube_pools_are_separate_from_ub(hand_lib):
    assert hand_lib("vec_and_cube") == (0, "")


def test_tbuf_static_tensors_with_manual_cube_events(hand_lib):
    g = torch.Generator().manual_seed(7)
    a = (torch.rand(32, 48, generator=g) - 0.5).half()
    b = (torch.rand(48, 16, generator=g) - 0.5).half()
    c = torch.zeros(32, 16, dtype=torch.float16)
    assert hand_lib("tbuf_manual", a, b, c) == (0, "")
    torch.testing.assert_close(c, (a.double() @ b.double()).half(), rtol=1e-3, atol=1e-3)


def test_mmad_dtype_combo_not_on_a2_faults(hand_lib):
    rc, msg = hand_lib("wrong_dtypes")
    assert rc == 3 and "not an A2 cube combination" in msg


# ------------------------------------------------------------------------------------------
# Random small shapes (each example compiles one kernel; the build cache makes reruns fast).
# ------------------------------------------------------------------------------------------
@settings(max_examples=15, deadline=None, derandomize=True)  # fixed examples: reruns hit the build cache
@given(
    m=st.integers(1, 70), n=st.integers(1, 70), k=st.integers(1, 90),
    trans_a=st.booleans(), trans_b=st.booleans(),
    bm=st.sampled_from([16, 32, 48]), bn=st.sampled_from([16, 32, 64]), bk=st.sampled_from([16, 32]),
    bias=st.booleans(), f16out=st.booleans(), blocks=st.integers(1, 5),
)
def test_random_shapes(m, n, k, trans_a, trans_b, bm, bn, bk, bias, f16out, blocks):
    if trans_a and not trans_b:
        k = max(16, k // 16 * 16)
    s = spec("mm_rand", m, n, k, trans_a=trans_a, trans_b=trans_b, base_m=bm, base_n=bn, base_k=bk,
             bias=bias, c_dtype="fp16" if f16out else "fp32")
    src, info = emit_matmul_kernel(s)
    run = build({"mm_rand": (src, 5 if bias else 4)}, opt="-O0")["mm_rand"]
    run_spec(s, run, info, blocks=blocks)
