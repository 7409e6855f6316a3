"""Matmul kernels for the cube unit (AIC) of Atlas A2: the low-level path of ascendc.md §10.2.

One kernel computes ``c[b] = a[b] @ b[b] (+ bias)`` for ``b < batch``::

    GM (ND) --DataCopy+Nd2NzParams--> L1 (NZ, A1/B1) --LoadData--> L0A (Zz) / L0B (Zn)
            --Mmad, K loop accumulating in L0C (CO1, float; int32 for int8)--> Fixpipe (NZ->ND, quant) --> GM (ND)

The output is cut into ``base_m x base_n`` tiles (per batch); tiles are dealt to cores
round-robin with ``GetBlockIdx()/GetBlockNum()``.  For each tile a K loop in ``base_k`` steps
moves one A and one B tile through L1 and L0 (TQue on every position, so the queue calls carry
the MTE2->MTE1->M->FIX synchronisation, §5.2 / §9.2) and accumulates in L0C.

Tails: the last tile in each direction is smaller; m and n pad to 16 in L1/L0 (never written
back: Fixpipe writes the valid ``[curM, curN]`` only), K pads to the fractal width.  The K
padding must not reach valid outputs (§10.1): where K runs along the GM row (a not transposed,
b transposed) Nd2Nz zero-fills it; where K runs down the GM column (a transposed, b not
transposed) Nd2Nz leaves the pad rows unwritten, so the kernel fills them with copies of the
tile's first row (finite data) and relies on the other operand's zero K padding -- hence
``trans_a and not trans_b`` needs ``k % 16 == 0``.

Kernel arguments: ``(GM_ADDR a, GM_ADDR b, [GM_ADDR bias,] GM_ADDR c, GM_ADDR tiling)``;
``tiling`` points to int64 element offsets ``[off_a, off_b, (off_bias,) off_c]`` (batch 0)
added to the base pointers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import EmitError
from .soc import get_soc

__all__ = ["MatmulSpec", "emit_matmul_kernel", "CUBE_MEMORY"]

KIB = 1024
# ascendc.md §1.2: AIC memories on A2 (bytes).
CUBE_MEMORY = {"l1": 512 * KIB, "l0a": 64 * KIB, "l0b": 64 * KIB, "l0c": 128 * KIB, "bt": 1 * KIB}
_DTYPES = {"fp16": ("half", 2), "fp32": ("float", 4)}
_DTYPES["bf16"] = ("bfloat16_t", 2)  # as fp16 in L1/L0 (2-byte fractals); Fixpipe F322BF16 for a bf16 result
# int8 x int8 -> int32 (§10.1): 16x32 fractals in L1/L0A/L0B, int32 in L0C, Fixpipe NoQuant int32 -> int32
_DTYPES["int8"] = ("int8_t", 1)
_DTYPES["int32"] = ("int32_t", 4)
_U16 = 65535
_BUFS_L1 = 2   # A1/B1 double-buffered
_BUFS_L0 = 2   # A2/B2 double-buffered
_BUFS_L0C = 1


@dataclass(frozen=True)
class MatmulSpec:
    kernel: str                 # extern "C" symbol
    a_dtype: str                # "fp16" | "bf16" | "fp32" | "int8" (c_dtype "int32")
    b_dtype: str
    c_dtype: str
    m: int                      # logical sizes of one matmul: a is [m,k], b is [k,n], c is [m,n]
    n: int
    k: int
    lda: int                    # GM row length (elements) of a, b, c as STORED
    ldb: int
    ldc: int
    trans_a: bool = False       # a stored [k, m]
    trans_b: bool = False       # b stored [n, k]
    batch: int = 1
    batch_stride_a: int = 0     # elements; 0 = reuse the same matrix
    batch_stride_b: int = 0
    batch_stride_c: int = 0
    base_m: int = 64            # L0 tile (PyPTO cube tile shapes [mL0,mL1], [kL0,kL1], [nL0,nL1])
    base_n: int = 64
    base_k: int = 64
    bias: bool = False          # a bias row of n fp32 elements added to every row of c
    valid_batches: bool = False  # the tiling's last int64: how many matrices hold data (the rest are skipped)
    valid_mnk: bool = False     # four more int64 (last): the valid m, n, k (a's) and b's valid k of every matrix, the control program's
    relu: bool = False          # Fixpipe's reluEn: max(c, 0) before the rounding (conv's relu_type)
    comment: str = ""


def _r(x: int, q: int) -> int:
    return (x + q - 1) // q * q


def _fmt(nbytes: int) -> str:
    return f"{nbytes} B ({nbytes / KIB:g} KiB)"


def _check_spec(s: MatmulSpec) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s.kernel or ""):
        raise EmitError(f"matmul kernel name {s.kernel!r} is not a C identifier")
    for name in ("a_dtype", "b_dtype", "c_dtype"):
        if getattr(s, name) not in _DTYPES:
            raise EmitError(f"matmul {name}={getattr(s, name)!r} is not supported on the cube path "
                            f"(supported: {', '.join(_DTYPES)})")
    if s.a_dtype != s.b_dtype:
        raise EmitError(f"matmul operands must have the same dtype on the cube unit (a is {s.a_dtype}, "
                        f"b is {s.b_dtype}; A2 combos: fp16 x fp16, bf16 x bf16, fp32 x fp32 -> fp32, §10.1)")
    if (s.a_dtype == "int8") != (s.c_dtype == "int32") or "int32" in (s.a_dtype, s.b_dtype) or s.c_dtype == "int8":
        raise EmitError(f"matmul {s.a_dtype} x {s.b_dtype} -> {s.c_dtype} is not an A2 cube combination "
                        "(int8 x int8 -> int32, half/bf16/float -> float, §10.1)")
    if s.a_dtype == "int8" and (s.trans_a or not s.trans_b):
        raise EmitError("matmul int8 x int8 needs a stored [m, k] (trans_a=False) and b stored [n, k] "
                        "(trans_b=True): 8-bit fractals transpose only through LoadDataWithTranspose, which this "
                        "emitter does not use")
    if s.a_dtype == "int8" and s.base_k % 32:
        raise EmitError(f"cube tile base_k={s.base_k} must be a multiple of 32 for int8 (a 16x32 fractal, §10.1); "
                        "change the cube tile shape")
    if s.a_dtype == "fp32" and (s.trans_a or not s.trans_b):
        raise EmitError("matmul fp32 x fp32 needs a stored [m, k] (trans_a=False) and b stored [n, k] "
                        "(trans_b=True): other fp32 layouts need LoadDataWithTranspose, which this emitter "
                        "does not use; cast the operands to fp16 or change the layout")
    for name in ("m", "n", "k", "batch"):
        v = getattr(s, name)
        if not isinstance(v, int) or v < 1:
            raise EmitError(f"matmul {name}={v!r} must be a positive integer")
    for name in ("base_m", "base_n", "base_k"):
        v = getattr(s, name)
        if not isinstance(v, int) or v < 16 or v % 16:
            raise EmitError(f"cube tile {name}={v!r} must be a positive multiple of 16 (fractal rows, §10.1); "
                            f"change the cube tile shape")
    rows_a, cols_a = (s.k, s.m) if s.trans_a else (s.m, s.k)
    rows_b, cols_b = (s.n, s.k) if s.trans_b else (s.k, s.n)
    for name, ld, cols in (("lda", s.lda, cols_a), ("ldb", s.ldb, cols_b), ("ldc", s.ldc, s.n)):
        if not isinstance(ld, int) or ld < cols:
            raise EmitError(f"matmul {name}={ld!r} is shorter than the stored row ({cols} elements)")
    for name, ld in (("lda", s.lda), ("ldb", s.ldb)):
        if ld > _U16:
            raise EmitError(f"matmul {name}={ld} exceeds 65535 elements (Nd2NzParams.srcDValue is 16-bit)")
    for name in ("batch_stride_a", "batch_stride_b", "batch_stride_c"):
        if getattr(s, name) < 0:
            raise EmitError(f"matmul {name} must be >= 0")
    if s.batch > 1 and s.batch_stride_c == 0:
        raise EmitError("matmul batch > 1 with batch_stride_c = 0 would write every batch to the same c")
    if s.trans_a and not s.trans_b and s.k % 16:
        raise EmitError(f"matmul with a transposed and b not transposed needs k % 16 == 0 (k={s.k}): both "
                        f"operands then carry K down their GM columns and Nd2Nz cannot zero-pad K there")


def _plan(s: MatmulSpec) -> dict:
    esz = _DTYPES[s.a_dtype][1]
    c0 = 32 // esz
    bm = min(s.base_m, _r(s.m, 16))
    bn = min(s.base_n, _r(s.n, 16))
    bk = min(s.base_k, _r(s.k, max(16, c0)))  # int8: K in whole 32-wide fractals
    a_tile = bm * bk * esz
    b_tile = bk * bn * esz
    bias_l1 = _r(bn, 16) * 4 if s.bias else 0
    p = dict(
        esz=esz, c0=c0, bm=bm, bn=bn, bk=bk,
        a1=a_tile, b1=b_tile, a2=a_tile, b2=b_tile, co1=bm * bn * 4, c1=bias_l1, c2=bias_l1,
        tiles_m=-(-s.m // bm), tiles_n=-(-s.n // bn), tiles_k=-(-s.k // bk),
    )
    # Double buffers where they fit, else single (pypto's rule is only that one tile fits each
    # memory: its plog says 'Alloc tensor size [..] exceeds MEM_L0B size [65536]' past that).
    def bufs(want: int, one: int, cap: int) -> int:
        return want if want * one <= cap else 1
    p["bufs_l1"] = bufs(_BUFS_L1, a_tile + b_tile, CUBE_MEMORY["l1"] - bias_l1)
    p["bufs_a2"] = bufs(_BUFS_L0, a_tile, CUBE_MEMORY["l0a"])
    p["bufs_b2"] = bufs(_BUFS_L0, b_tile, CUBE_MEMORY["l0b"])
    p["l1_bytes"] = p["bufs_l1"] * (a_tile + b_tile) + bias_l1
    p["l0a_bytes"] = p["bufs_a2"] * a_tile
    p["l0b_bytes"] = p["bufs_b2"] * b_tile
    p["l0c_bytes"] = _BUFS_L0C * p["co1"]
    p["bt_bytes"] = bias_l1
    p["tiles"] = s.batch * p["tiles_m"] * p["tiles_n"]
    shape = f"cube tile [mL0={bm}, kL0={bk}, nL0={bn}] ({s.a_dtype})"
    checks = (
        ("L0A (A2)", p["l0a_bytes"], CUBE_MEMORY["l0a"], f"{bm}x{bk} {s.a_dtype}", "[mL0, mL1] / [kL0, kL1]"),
        ("L0B (B2)", p["l0b_bytes"], CUBE_MEMORY["l0b"], f"{bk}x{bn} {s.b_dtype}", "[kL0, kL1] / [nL0, nL1]"),
        ("L0C (CO1)", p["l0c_bytes"], CUBE_MEMORY["l0c"], f"{bm}x{bn} fp32", "[mL0, mL1] / [nL0, nL1]"),
        ("L1 (A1/B1/C1)", p["l1_bytes"], CUBE_MEMORY["l1"],
         f"{bm}x{bk} + {bk}x{bn} {s.a_dtype}" + (f" + bias {bias_l1} B" if s.bias else ""),
         "[mL0, mL1] / [kL0, kL1] / [nL0, nL1]"),
        ("BiasTable (C2)", p["bt_bytes"], CUBE_MEMORY["bt"], f"bias row of {bn} fp32", "[nL0, nL1]"),
    )
    for mem, need, cap, what, dims in checks:
        if need > cap:
            raise EmitError(f"{shape} does not fit {mem}: one {what} tile needs {_fmt(need)} > {_fmt(cap)} "
                            f"(§1.2; pypto refuses it too: 'Alloc tensor size [{need}] exceeds MEM_{mem.split()[0].upper()} size [{cap}]'); "
                            f"reduce the cube tile shape {dims}")
    if bk // c0 > 255 or _r(bm, 16) // 16 > 255 or _r(bn, 16) // 16 > 255:
        raise EmitError(f"{shape}: more than 255 fractals per LoadData (repeatTimes is 8-bit); "
                        f"reduce the cube tile shape")
    return p


def emit_matmul_kernel(spec: MatmulSpec, soc: str = "ascend910b") -> tuple[str, dict]:
    """Return (C++ source of one cube kernel, info dict) for ``spec``; raise EmitError if unsupported."""
    s = spec
    _check_spec(s)
    chip = get_soc(soc)
    p = _plan(s)
    T, esz = _DTYPES[s.a_dtype]
    CT = _DTYPES[s.c_dtype][0]
    AT = "int32_t" if s.a_dtype == "int8" else "float"  # L0C (and bias) element type
    c0 = p["c0"]
    quant = {"fp16": "F322F16", "bf16": "F322BF16"}.get(s.c_dtype, "NoQuant")
    rows_a, cols_a = (s.k, s.m) if s.trans_a else (s.m, s.k)
    rows_b, cols_b = (s.n, s.k) if s.trans_b else (s.k, s.n)
    ext_a = (s.batch - 1) * s.batch_stride_a + (rows_a - 1) * s.lda + cols_a
    ext_b = (s.batch - 1) * s.batch_stride_b + (rows_b - 1) * s.ldb + cols_b
    ext_c = (s.batch - 1) * s.batch_stride_c + (s.m - 1) * s.ldc + s.n
    aic_cores = max(1, chip.vector_cores // 2)
    num_blocks = min(p["tiles"], aic_cores)
    offsets = ["off_a", "off_b"] + (["off_bias"] if s.bias else []) + ["off_c"]
    extra = (["valid_batches"] if s.valid_batches else []) + (["valid_m", "valid_n", "valid_k", "valid_kb"] if s.valid_mnk else [])
    args = ["a", "b"] + (["bias"] if s.bias else []) + ["c", "tiling"]

    L: list[str] = []
    w = L.append
    w("// Generated by pypto-ast (emit/cube.py): matmul on the cube unit, ascendc.md §10.2.")
    for line in (s.comment.splitlines() if s.comment else []):
        w(f"// {line}")
    ta = "a^T" if s.trans_a else "a"
    tb = "b^T" if s.trans_b else "b"
    w(f"// c[{s.m}, {s.n}] ({s.c_dtype}) = {ta} x {tb}" + (" + bias" if s.bias else "")
      + f"  ({s.a_dtype} inputs, {'int32' if s.a_dtype == 'int8' else 'fp32'} accumulate in L0C), batch {s.batch}")
    w(f"// a stored [{rows_a}, {cols_a}] lda={s.lda}; b stored [{rows_b}, {cols_b}] ldb={s.ldb}; c ldc={s.ldc}")
    w(f"// base tile m x n x k = {p['bm']} x {p['bn']} x {p['bk']}; {p['tiles']} output tiles over GetBlockNum() cores")
    w(f"// L1 {p['l1_bytes']} B, L0A {p['l0a_bytes']} B, L0B {p['l0b_bytes']} B, L0C {p['l0c_bytes']} B"
      + (f", BiasTable {p['bt_bytes']} B" if s.bias else ""))
    w("// tiling: int64 element offsets [" + ", ".join(offsets) + "] added to the base pointers")
    w('#include "kernel_operator.h"')
    w("")
    w("using namespace AscendC;")
    w("")
    w("namespace {")
    consts = [
        ("kM", s.m), ("kN", s.n), ("kK", s.k), ("kBaseM", p["bm"]), ("kBaseN", p["bn"]), ("kBaseK", p["bk"]),
        ("kTilesM", p["tiles_m"]), ("kTilesN", p["tiles_n"]), ("kTilesK", p["tiles_k"]), ("kTiles", p["tiles"]),
        ("kLda", s.lda), ("kLdb", s.ldb), ("kLdc", s.ldc),
    ]
    for name, v in consts:
        w(f"constexpr uint32_t {name} = {v};")
    for name, v in (("kStrideA", s.batch_stride_a), ("kStrideB", s.batch_stride_b), ("kStrideC", s.batch_stride_c),
                    ("kExtentA", ext_a), ("kExtentB", ext_b), ("kExtentC", ext_c)):
        w(f"constexpr uint64_t {name} = {v};")
    w(f"constexpr uint32_t kC0 = {c0};  // {T} elements per 32-byte fractal row (fractal = 16 x kC0)")
    w("}  // namespace")
    w("")
    w(f'extern "C" __global__ __aicore__ void {s.kernel}(' + ", ".join(f"GM_ADDR {x}" for x in args) + ")")
    w("{")
    w("    // Stage 0: batch-0 element offsets from the tiling block, GM views.")
    w("    GlobalTensor<int64_t> tilingGm;")
    w(f"    tilingGm.SetGlobalBuffer((__gm__ int64_t*)tiling, {len(offsets) + len(extra)});")
    for i, o in enumerate(offsets):
        var = "off" + "".join(x.capitalize() for x in o.split("_")[1:])
        w(f"    const int64_t {var} = tilingGm.GetValue({i});")
    if s.valid_batches:
        w(f"    const int64_t validBatches = tilingGm.GetValue({len(offsets)});  // matrices past it are not read")
    # the valid extents: static ones, or the control program's (a partially valid operand)
    vm, vn, vk = ("vM", "vN", "vK") if s.valid_mnk else ("kM", "kN", "kK")
    if s.valid_mnk:
        base = len(offsets) + s.valid_batches
        for i, (var, whole, what) in enumerate((("vM", "kM", "rows of c"), ("vN", "kN", "columns of c"),
                                                 ("vK", "kK", "k"))):
            w(f"    const uint32_t {var} = static_cast<uint32_t>(tilingGm.GetValue({base + i}));  // valid {what}")
            w(f'    ascendc_assert({var} <= {whole}, "matmul: valid {what} beyond the operand");')
        w(f"    const uint32_t vKb = static_cast<uint32_t>(tilingGm.GetValue({base + 3}));  // b's valid k")
        w('    ascendc_assert(vK <= vKb, "matmul: a\'s valid K exceeds b\'s (K is a\'s valid K: b would be read past its valid data)");')
        w('    ascendc_assert(vK > 0 || vM == 0 || vN == 0, "matmul over an empty valid K");')
        if s.trans_a and not s.trans_b:  # both carry K down their GM columns: no zero K padding (above)
            w('    ascendc_assert(vK % 16 == 0, "matmul with a transposed and b not: the valid k must be a multiple of 16");')
    w(f"    GlobalTensor<{T}> aGm;")
    w(f"    GlobalTensor<{T}> bGm;")
    w(f"    GlobalTensor<{CT}> cGm;")
    w(f"    aGm.SetGlobalBuffer((__gm__ {T}*)a + offA, kExtentA);")
    w(f"    bGm.SetGlobalBuffer((__gm__ {T}*)b + offB, kExtentB);")
    w(f"    cGm.SetGlobalBuffer((__gm__ {CT}*)c + offC, kExtentC);")
    if s.bias:
        w(f"    GlobalTensor<{AT}> biasGm;")
        w(f"    biasGm.SetGlobalBuffer((__gm__ {AT}*)bias + offBias, kN);")
    w("")
    w("    // Stage 1: on-chip buffers. L1: A1/B1 (NZ); L0A: A2 (Zz); L0B: B2 (Zn); L0C: CO1 (Nz, float).")
    w("    TPipe pipe;")
    w("    TQue<TPosition::A1, 1> qA1;")
    w("    TQue<TPosition::B1, 1> qB1;")
    w("    TQue<TPosition::A2, 1> qA2;")
    w("    TQue<TPosition::B2, 1> qB2;")
    w("    TQue<TPosition::CO1, 1> qCO1;")
    if s.bias:
        w("    TQue<TPosition::C1, 1> qC1;  // bias row in L1")
        w("    TQue<TPosition::C2, 1> qC2;  // bias row in the BiasTable")
    w(f"    pipe.InitBuffer(qA1, {p['bufs_l1']}, {p['a1']});")
    w(f"    pipe.InitBuffer(qB1, {p['bufs_l1']}, {p['b1']});")
    w(f"    pipe.InitBuffer(qA2, {p['bufs_a2']}, {p['a2']});")
    w(f"    pipe.InitBuffer(qB2, {p['bufs_b2']}, {p['b2']});")
    w(f"    pipe.InitBuffer(qCO1, {_BUFS_L0C}, {p['co1']});")
    if s.bias:
        w(f"    pipe.InitBuffer(qC1, 1, {p['c1']});")
        w(f"    pipe.InitBuffer(qC2, 1, {p['c2']});")
    w("")
    w("    // Output tiles (batch x m-tiles x n-tiles) dealt to cores round-robin.")
    w("    for (uint32_t t = static_cast<uint32_t>(GetBlockIdx()); t < kTiles; t += static_cast<uint32_t>(GetBlockNum())) {")
    w("        const uint32_t bi = t / (kTilesM * kTilesN);")
    if s.valid_batches:
        w("        if (static_cast<int64_t>(bi) >= validBatches) continue;")
    w("        const uint32_t m0 = (t / kTilesN) % kTilesM * kBaseM;")
    w("        const uint32_t n0 = t % kTilesN * kBaseN;")
    if s.valid_mnk:
        w("        if (m0 >= vM || n0 >= vN) continue;  // a tile past the valid data")
    w(f"        const uint32_t curM = {vm} - m0 < kBaseM ? {vm} - m0 : kBaseM;")
    w(f"        const uint32_t curN = {vn} - n0 < kBaseN ? {vn} - n0 : kBaseN;")
    w("        const uint32_t padM = (curM + 15) / 16 * 16;  // rows padded to 16")
    w("        const uint32_t padN = (curN + 15) / 16 * 16;")
    w("        const uint64_t aBase = static_cast<uint64_t>(bi) * kStrideA;")
    w("        const uint64_t bBase = static_cast<uint64_t>(bi) * kStrideB;")
    w("        const uint64_t cBase = static_cast<uint64_t>(bi) * kStrideC;")
    if s.bias:
        w("")
        w("        // Stage 2: bias row GM -> L1 (C1, Nd2Nz of one row) -> BiasTable (C2, 64-byte units).")
        w(f"        LocalTensor<{AT}> biasL1 = qC1.AllocTensor<{AT}>();")
        w("        DataCopy(biasL1, biasGm[n0], Nd2NzParams{1, 1, static_cast<uint16_t>(curN), 0, "
          "static_cast<uint16_t>(curN), 1, 1, 0});")
        w("        qC1.EnQue(biasL1);")
        w(f"        biasL1 = qC1.DeQue<{AT}>();")
        w(f"        LocalTensor<{AT}> biasBt = qC2.AllocTensor<{AT}>();")
        w("        DataCopy(biasBt, biasL1, DataCopyParams{1, static_cast<uint16_t>((curN * 4 + 63) / 64), 0, 0});")
        w("        qC2.EnQue(biasBt);")
        w("        qC1.FreeTensor(biasL1);")
        w(f"        biasBt = qC2.DeQue<{AT}>();")
    w("")
    w(f"        LocalTensor<{AT}> cL0 = qCO1.AllocTensor<{AT}>();")
    w("        for (uint32_t ki = 0; ki < " + ("(vK + kBaseK - 1) / kBaseK" if s.valid_mnk else "kTilesK") + "; ++ki) {")
    w("            const uint32_t k0 = ki * kBaseK;")
    w(f"            const uint32_t curK = {vk} - k0 < kBaseK ? {vk} - k0 : kBaseK;")
    w("            const uint32_t padK = (curK + kC0 - 1) / kC0 * kC0;  // K padded to the fractal width")
    w("")
    w("            // Stage 3: GM (ND) -> L1 (NZ).")
    w(f"            LocalTensor<{T}> a1 = qA1.AllocTensor<{T}>();")
    w(f"            LocalTensor<{T}> b1 = qB1.AllocTensor<{T}>();")
    u16 = "static_cast<uint16_t>"
    if s.trans_a:
        w("            // a^T tile [curK, curM] -> NZ [padK, padM]; K pad rows get copies of the tile's first row")
        w("            // (finite; b's K padding is zero, so they add 0).")
        w(f"            DataCopy(a1, aGm[aBase + static_cast<uint64_t>(k0) * kLda + m0], Nd2NzParams{{1, {u16}(curK), "
          f"{u16}(curM), 0, kLda, {u16}(padK), 1, 0}});")
        w("            if (padK > curK) {")
        w(f"                DataCopy(a1[curK * kC0], aGm[aBase + static_cast<uint64_t>(k0) * kLda + m0], Nd2NzParams{{"
          f"{u16}(padK - curK), 1, {u16}(curM), 0, kLda, {u16}(padK), 1, kC0}});")
        w("            }")
    else:
        w("            // a tile [curM, curK] -> NZ [padM, padK] (Nd2Nz zero-fills K to the fractal width)")
        w(f"            DataCopy(a1, aGm[aBase + static_cast<uint64_t>(m0) * kLda + k0], Nd2NzParams{{1, {u16}(curM), "
          f"{u16}(curK), 0, kLda, {u16}(padM), 1, 0}});")
    if s.trans_b:
        w("            // b^T tile [curN, curK] -> NZ [padN, padK] (Nd2Nz zero-fills K to the fractal width)")
        w(f"            DataCopy(b1, bGm[bBase + static_cast<uint64_t>(n0) * kLdb + k0], Nd2NzParams{{1, {u16}(curN), "
          f"{u16}(curK), 0, kLdb, {u16}(padN), 1, 0}});")
    else:
        w("            // b tile [curK, curN] -> NZ [padK, padN]; K pad rows get copies of the tile's first row")
        w("            // (finite; a's K padding is zero, so they add 0).")
        w(f"            DataCopy(b1, bGm[bBase + static_cast<uint64_t>(k0) * kLdb + n0], Nd2NzParams{{1, {u16}(curK), "
          f"{u16}(curN), 0, kLdb, {u16}(padK), 1, 0}});")
        w("            if (padK > curK) {")
        w(f"                DataCopy(b1[curK * kC0], bGm[bBase + static_cast<uint64_t>(k0) * kLdb + n0], Nd2NzParams{{"
          f"{u16}(padK - curK), 1, {u16}(curN), 0, kLdb, {u16}(padK), 1, kC0}});")
        w("            }")
    w("            qA1.EnQue(a1);")
    w("            qB1.EnQue(b1);")
    w(f"            a1 = qA1.DeQue<{T}>();")
    w(f"            b1 = qB1.DeQue<{T}>();")
    w("")
    w("            // Stage 4: L1 -> L0A (Zz) and L0B (Zn), one LoadData per 16-row strip.")
    w(f"            LocalTensor<{T}> a2 = qA2.AllocTensor<{T}>();")
    w(f"            LocalTensor<{T}> b2 = qB2.AllocTensor<{T}>();")
    u8 = "static_cast<uint8_t>"
    w("            for (uint32_t i = 0; i < padM / 16; ++i) {")
    if s.trans_a:
        w(f"                LoadData(a2[i * 16 * padK], a1[i * 16 * padK], LoadData2DParams{{0, {u8}(padK / 16), 1, 0, 0, true, 0}});")
    else:
        w(f"                LoadData(a2[i * 16 * padK], a1[i * 16 * kC0], LoadData2DParams{{0, {u8}(padK / kC0), "
          f"{u16}(padM / 16), 0, 0, false, 0}});")
    w("            }")
    w("            for (uint32_t i = 0; i < padK / kC0; ++i) {")
    if s.trans_b:
        w(f"                LoadData(b2[i * padN * kC0], b1[i * padN * kC0], LoadData2DParams{{0, {u8}(padN / 16), 1, 0, 0, false, 0}});")
    else:
        w(f"                LoadData(b2[i * 16 * padN], b1[i * 16 * 16], LoadData2DParams{{0, {u8}(padN / 16), "
          f"{u16}(padK / 16), 0, 0, true, 0}});")
    w("            }")
    w("            qA2.EnQue(a2);")
    w("            qB2.EnQue(b2);")
    w("            qA1.FreeTensor(a1);")
    w("            qB1.FreeTensor(b1);")
    w(f"            a2 = qA2.DeQue<{T}>();")
    w(f"            b2 = qB2.DeQue<{T}>();")
    w("")
    mnk = f"{u16}(curM), {u16}(curN), {u16}(curK)"
    if s.bias:
        w("            // Stage 5: Mmad into L0C; the first k step starts from the bias row (BiasTable),")
        w("            // later steps accumulate.")
        w("            if (ki == 0) {")
        w(f"                Mmad(cL0, a2, b2, biasBt, MmadParams{{{mnk}, 0, true, false}});")
        w("            } else {")
        w(f"                Mmad(cL0, a2, b2, MmadParams{{{mnk}, 0, false, false}});")
        w("            }")
    else:
        w("            // Stage 5: Mmad into L0C; the first k step initialises C, later steps accumulate.")
        w(f"            Mmad(cL0, a2, b2, MmadParams{{{mnk}, 0, false, ki == 0}});")
    w("            qA2.FreeTensor(a2);")
    w("            qB2.FreeTensor(b2);")
    w("        }")
    if s.bias:
        w("        qC2.FreeTensor(biasBt);")
    w("")
    w(f"        // Stage 6: L0C (Nz) -> GM (ND), valid [curM, curN] only, {dict(F322F16='float -> half', F322BF16='float -> bf16').get(quant, AT.replace('_t', ''))}.")
    w("        qCO1.EnQue(cL0);")
    w(f"        cL0 = qCO1.DeQue<{AT}>();")
    w(f"        Fixpipe(cGm[cBase + static_cast<uint64_t>(m0) * kLdc + n0], cL0, FixpipeParamsV220{{{u16}(curN), "
      f"{u16}(curM), {u16}(padM), kLdc, {'true' if s.relu else 'false'}, QuantMode_t::{quant}, 0, 1, 0, 0, 0}});")
    w("        qCO1.FreeTensor(cL0);")
    w("    }")
    w("}")
    src = "\n".join(L) + "\n"
    info = {
        "kernel": s.kernel,
        "num_blocks": num_blocks,
        "l1_bytes": p["l1_bytes"],
        "l0a_bytes": p["l0a_bytes"],
        "l0b_bytes": p["l0b_bytes"],
        "l0c_bytes": p["l0c_bytes"],
        "bt_bytes": p["bt_bytes"],
        "buffers": {"l1": p["bufs_l1"], "l0a": p["bufs_a2"], "l0b": p["bufs_b2"]},
        "tiles": p["tiles"],
        "base_tile": (p["bm"], p["bn"], p["bk"]),
        "args": args,
        "tiling": offsets + extra,
        "soc": chip.name,
    }
    return src, info
