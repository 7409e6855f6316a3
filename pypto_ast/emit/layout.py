"""A permute kernel: any permutation of a GM value's axes into a GM workspace (``transpose``
swaps two of them).

A2 has no general transpose in the basic vector API (``Transpose`` is 16x16 of 2-byte
elements; ``TransDataTo5HD`` needs 16-row gathers), so the kernel moves one matrix at a time
through UB: the matrix's rows run along one source axis (read with a GM row stride), its
columns along the source's last axis (contiguous).  When the permutation moves the last axis,
the matrix is transposed in UB with scalar GetValue/SetValue and written out as rows of the
result's axis that the source's last axis became; when it keeps the last axis, the rows are
copied out as they are, each to its place.  A matrix larger than UB moves in blocks of rows
and columns that fit (``blocks``), each written to its place in the result.  Every other axis
and the blocks are a loop over work items, split over cores.  A transpose moves bits, so the kernel is typed by element size (uint8_t ...
uint64_t): one kernel for every dtype of that size, bf16 and fp16 alike.
"""

from __future__ import annotations

import math

from .errors import unsupported

ES = {"bool": 1, "int8": 1, "uint8": 1, "fp16": 2, "bf16": 2, "int16": 2, "uint16": 2, "fp32": 4, "int32": 4,
      "uint32": 4, "int64": 8}
BITS = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}
MAX_CORES = 40


def _pad(n: int, es: int) -> int:
    a = 32 // es
    return -(-n // a) * a


def _ub_bytes(br: int, bc: int, es: int, transposed: bool) -> tuple:
    """UB of a block of ``br`` rows and ``bc`` columns: its rows padded to 32 B, and (transposed)
    its ``bc`` rows of ``br`` in the other buffer."""
    in_bytes = -(-br * _pad(bc, es) * es // 32) * 32
    return in_bytes, (-(-bc * _pad(br, es) * es // 32) * 32 if transposed else 0)


def blocks(rows: int, cols: int, es: int, transposed: bool, budget: int) -> tuple:
    """The block ``(br, bc)`` a ``[rows, cols]`` matrix moves through UB in: the whole matrix when it
    fits; else whole rows (contiguous reads) in as many rows as fit, in multiples of 32 B of
    elements; else the widest columns, in such multiples, that a block of that many rows takes.
    ``(None, None)`` when not even the smallest block fits."""
    if sum(_ub_bytes(rows, cols, es, transposed)) <= budget:
        return rows, cols
    a = 32 // es

    def fits(br: int, bc: int) -> bool:
        return sum(_ub_bytes(br, bc, es, transposed)) <= budget

    bc = cols
    if not fits(min(rows, a), bc):
        bc = max((w for w in range(a, cols, a) if fits(min(rows, a), w)), default=None)
        if bc is None:
            return None, None
    br = max(br for br in range(min(rows, a), rows + 1, a) if fits(br, bc))
    return br, bc


def plan(shape: tuple, perm: tuple) -> dict:
    """The matrix a permute kernel moves: ``ra`` (the source axis its rows run along),
    ``transposed`` (whether the last axis moves), ``q`` (the result's axis the matrix rows are
    written along: where the source's last axis went, or where ``ra`` went), and ``batch``
    (the source axes looped over)."""
    n = len(shape)
    transposed = perm[n - 1] != n - 1
    ra = perm[n - 1] if transposed else perm[n - 2]
    q = perm.index(n - 1) if transposed else n - 2
    batch = tuple(k for k in range(n - 1) if k != ra)
    return dict(ra=ra, transposed=transposed, q=q, batch=batch, n=n)


def emit_permute_kernel(name: str, dtype: str, shape: tuple, perm: tuple, budget: int, label: str,
                        span=None) -> tuple[str, dict]:
    """``dst[i_0..i_{n-1}] = src[j]`` with ``j[perm[k]] = i_k``, for the valid elements of the
    source (only those are read and written): ``shape`` is the source's static shape, ``perm[k]``
    the source axis that is the result's axis ``k``.

    Arguments ``(GM_ADDR src, GM_ADDR dst, GM_ADDR tiling)``; tiling = int64 ``[off_src, n_src,
    off_dst, n_dst, vr, vc, lds]``: element offsets and counts, the source's valid extent as a
    prefix of its rows (all axes but the last, flattened; ``vr`` of them) by ``vc`` columns, and
    its row stride (known per launch for a tensor with a dynamic last dimension).  The result is
    contiguous."""
    if dtype not in ES:
        unsupported(f"transpose of {dtype}", span)
    n = len(shape)
    p = plan(shape, perm)
    ra, q, transposed = p["ra"], p["q"], p["transposed"]
    es = ES[dtype]
    ct = BITS[es]
    rows, cols = shape[ra], shape[n - 1]
    oshape = tuple(shape[k] for k in perm)
    ost = [math.prod(oshape[k + 1:]) for k in range(n)]  # the result's strides
    rowm = [math.prod(shape[k + 1:n - 1]) for k in range(n - 1)]  # source strides in rows (times lds)
    pos = {perm[k]: k for k in range(n)}  # source axis -> the result's axis
    br, bc = blocks(rows, cols, es, transposed, budget)
    if br is None:
        unsupported(f"transpose of a [{rows}, {cols}] matrix (not even a block of [{32 // es}, {32 // es}] fits "
                    f"{budget} B of UB)", span)
    nrb, ncb = -(-rows // br), -(-cols // bc)
    nblk = nrb * ncb
    cp, rp = _pad(bc, es), _pad(br, es)
    in_bytes, out_bytes = _ub_bytes(br, bc, es, transposed)
    nbatch = math.prod(shape[k] for k in p["batch"])
    L = [f"// Generated by pypto-ast from {label}: permute {list(perm)} of {list(shape)} {dtype} through UB, "
         f"{nbatch} matrices of [{rows}, {cols}]" + (f" in {nrb} x {ncb} blocks of [{br}, {bc}]." if nblk > 1 else "."),
         '#include "kernel_operator.h"', "",
         f'extern "C" __global__ __aicore__ void {name}(GM_ADDR src, GM_ADDR dst, GM_ADDR tiling)', "{",
         "    AscendC::TPipe pipe;",
         "    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf" + (", outBuf;" if transposed else ";"),
         f"    pipe.InitBuffer(inBuf, {in_bytes});"]
    if transposed:
        L.append(f"    pipe.InitBuffer(outBuf, {out_bytes});")
    L += [f"    AscendC::LocalTensor<{ct}> a = inBuf.Get<{ct}>();"]
    if transposed:
        L.append(f"    AscendC::LocalTensor<{ct}> t = outBuf.Get<{ct}>();")
    L += [f"    AscendC::GlobalTensor<{ct}> gs, gd;",
          "    const __gm__ int64_t* tl = (__gm__ int64_t*)tiling;",
          f"    gs.SetGlobalBuffer((__gm__ {ct}*)src, static_cast<uint64_t>(tl[1]));",
          f"    gd.SetGlobalBuffer((__gm__ {ct}*)dst, static_cast<uint64_t>(tl[3]));",
          f"    const uint32_t vc = tl[5] < 0 ? 0u : (tl[5] < {cols} ? static_cast<uint32_t>(tl[5]) : {cols}u);",
          "    const int64_t vrows = tl[4];",
          "    const uint64_t lds = static_cast<uint64_t>(tl[6]);",
          f"    const uint64_t srs = lds * {rowm[ra]}u;  // the source's stride between matrix rows",
          f"    for (uint64_t w = AscendC::GetBlockIdx(); w < {nbatch * nblk}u; w += AscendC::GetBlockNum()) {{",
          f"        const uint64_t b = w / {nblk}u;  // the matrix",
          f"        const uint32_t r0 = static_cast<uint32_t>(w % {nblk}u / {ncb}u) * {br}u, "
          f"c0 = static_cast<uint32_t>(w % {ncb}u) * {bc}u;  // the block's first row and column",
          "        uint64_t rest = b, row0 = 0, dOff = 0;  // b's source row and result offset"]
    for k in reversed(p["batch"]):
        L += [f"        {{ const uint64_t i = rest % {shape[k]}u; rest /= {shape[k]}u; "
              f"row0 += i * {rowm[k]}u; dOff += i * {ost[pos[k]]}u; }}"]
    L += [f"        const int64_t left = vrows - static_cast<int64_t>(row0);  // valid source rows from row0 on",
          f"        const uint32_t vrm = left <= 0 ? 0u : (left >= {rows * rowm[ra]} ? {rows}u : "
          f"static_cast<uint32_t>((left + {rowm[ra] - 1}) / {rowm[ra]}));  // the matrix's valid rows",
          f"        const uint32_t vr = vrm > r0 ? (vrm - r0 < {br}u ? vrm - r0 : {br}u) : 0u;  // the block's",
          f"        const uint32_t vcb = vc > c0 ? (vc - c0 < {bc}u ? vc - c0 : {bc}u) : 0u;",
          "        if (vr == 0 || vcb == 0) continue;",
          f"        const uint32_t inLen = vcb * {es}u;  // bytes per row copied in",
          "        AscendC::DataCopyPad(a, gs[static_cast<uint64_t>(tl[0]) + row0 * lds + r0 * srs + c0], "
          f"AscendC::DataCopyExtParams{{static_cast<uint16_t>(vr), inLen, static_cast<uint32_t>(srs * {es}u) - inLen, "
          f"({cp * es}u - (inLen + 31u) / 32u * 32u) / 32u, 0}}, "
          f"AscendC::DataCopyPadExtParams<{ct}>{{false, 0, 0, 0}});"]
    if transposed:
        dst = f"gd[static_cast<uint64_t>(tl[2]) + dOff + static_cast<uint64_t>(c0) * {ost[q]}u + r0]"
        L += ["        AscendC::SetFlag<AscendC::HardEvent::MTE2_S>(0);",
              "        AscendC::WaitFlag<AscendC::HardEvent::MTE2_S>(0);",
              "        for (uint32_t i = 0; i < vr; ++i) {",
              f"            for (uint32_t j = 0; j < vcb; ++j) t.SetValue(j * {rp} + i, a.GetValue(i * {cp} + j));",
              "        }",
              "        AscendC::SetFlag<AscendC::HardEvent::S_MTE3>(0);",
              "        AscendC::WaitFlag<AscendC::HardEvent::S_MTE3>(0);",
              f"        const uint32_t outLen = vr * {es}u;  // bytes per row copied out",
              f"        AscendC::DataCopyPad({dst}, t, AscendC::DataCopyExtParams{{static_cast<uint16_t>(vcb), outLen, "
              f"({rp * es}u - (outLen + 31u) / 32u * 32u) / 32u, {ost[q] * es}u - outLen, 0}});"]
    else:
        dst = f"gd[static_cast<uint64_t>(tl[2]) + dOff + static_cast<uint64_t>(r0) * {ost[q]}u + c0]"
        L += ["        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);",
              "        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);",
              f"        AscendC::DataCopyPad({dst}, a, AscendC::DataCopyExtParams{{static_cast<uint16_t>(vr), inLen, "
              f"({cp * es}u - (inLen + 31u) / 32u * 32u) / 32u, {ost[q] * es}u - inLen, 0}});"]
    L += ["        AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(0);  // the next block may overwrite UB",
          "        AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(0);",
          "    }", "}"]
    info = {"kernel": name, "kind": "transpose", "file": f"{name}.cpp", "num_blocks": min(nbatch * nblk, MAX_CORES),
            "ub_bytes": in_bytes + out_bytes, **({"blocks": [br, bc]} if nblk > 1 else {})}
    return "\n".join(L) + "\n", info
