"""``pypto.conv`` (1-D/2-D/3-D, NCL/NCHW/NCDHW) on the cube unit as an explicit GEMM.

Per group ``g`` and batch ``n`` the output ``out[n, g*Cout_g:(g+1)*Cout_g, P]`` (``P`` = the
output positions, row-major) is ``W_g @ col[n, g]^T`` where ``W_g`` is the weight as a
``[Cout_g, K]`` matrix (``K = Cin_g * Kd * Kh * Kw``, the weight's own layout) and
``col[n, g]`` the ``[P, K]`` im2col matrix of the input::

    x (GM, any strides) --DataCopyPad rows--> UB slab --Gather--> col block --DataCopyPad--> col (GM)
    W (GM) [+ bias column]  x  col^T  --cube.py: Nd2Nz, LoadData, Mmad (fp32), Fixpipe (relu)--> out (GM)

The im2col kernel (AIV) takes one output row ``(n, g, od, oh)`` at a time: the ``Cin_g*Kd*Kh``
input rows it reads go into a UB slab (zero rows where the kernel hangs over the D/H padding),
then one ``Gather`` with byte offsets computed once per kernel (they do not depend on the row)
builds the ``[Wo, K]`` block: W padding points at a zero element after the slab.  Elements are
moved as 16/32-bit integers, so every dtype is a bit copy.  The GEMM is cube.py's matmul kernel
with ``a = W`` ([m = Cout_g, k]) and ``b = col`` stored ``[n = P, k]`` (transposed), which every
A2 dtype pairing takes (fp32 too) and whose output rows are the NC(D)HW rows: no transpose.

Bias: Mmad's BiasTable adds a row per output column, but a conv's bias runs down the rows
(one per output channel), so the bias rides the GEMM instead: the weight gets extra columns
holding it (a concat of IR ops) and ``col`` columns of 1.0.  Exact: a bias of the input dtype
is one column; an fp32 bias of a bf16 conv (what A2 requires) is split into three bf16 columns
``hi + mid + lo`` (each the rounding of what is left), whose sum is the fp32 value.

Partially valid input (a view's ``valid_shape``): as in the interpreter, the valid data is
convolved, the padding's zeros right after it; the im2col kernel takes the valid extents per
launch and never reads past them.  The result's valid extent is then N-D (not a 2-D prefix): it
is kept as a strided view that only an assemble takes (strided.py).  Channels must be whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import ir
from . import gm
from .errors import UNSUPPORTED, EmitError, unsupported
from .gm import GVal
from .index import IndexLaunch
from .strided import nd_view

__all__ = ["plan_conv", "emit_im2col_kernel", "ConvGeom"]

_BITS = {"fp16": ("uint16_t", 2, "0x3C00u"), "bf16": ("uint16_t", 2, "0x3F80u"), "fp32": ("uint32_t", 4, "0x3F800000u")}
MAX_CORES = 40


@dataclass(frozen=True)
class ConvGeom:
    """One conv's sizes, spatial axes normalised to 3 (D, H, W; absent ones are 1)."""

    nd: int
    n: int
    cin: int
    cout: int
    groups: int
    dhw: tuple
    kernel: tuple
    stride: tuple
    pad_lo: tuple
    pad_hi: tuple
    dil: tuple
    out: tuple
    nb: int  # bias columns (0, 1 or 3)

    @property
    def cin_g(self) -> int:
        return self.cin // self.groups

    @property
    def cout_g(self) -> int:
        return self.cout // self.groups

    @property
    def k(self) -> int:
        return self.cin_g * math.prod(self.kernel)

    @property
    def ka(self) -> int:
        return self.k + self.nb

    @property
    def p(self) -> int:
        return math.prod(self.out)


def _geom(xshape, wshape, oshape, attrs, nb, span) -> ConvGeom:
    nd = len(xshape) - 2

    def ints(key, n):
        v = attrs.get(key)
        vals = [gm.const(e) for e in (v or ())]
        if len(vals) != n or None in vals:
            unsupported(f"conv with {key} {v!r} not known at build time", span)
        return vals

    strides, dils, pads = ints("strides", nd), ints("dilations", nd), ints("paddings", 2 * nd)
    groups = attrs.get("groups", 1)
    if not isinstance(groups, int) or groups < 1 or xshape[1] % groups or wshape[0] % groups \
            or xshape[1] != wshape[1] * groups:
        unsupported(f"conv with groups={groups!r} for input {list(xshape)} and weight {list(wshape)}", span)
    if min(strides + dils) < 1 or min(pads) < 0:
        unsupported(f"conv with strides {strides}, dilations {dils}, paddings {pads}", span)

    def three(v, fill):
        return tuple([fill] * (3 - nd) + list(v))

    g = ConvGeom(nd, xshape[0], xshape[1], wshape[0], groups, three(xshape[2:], 1), three(wshape[2:], 1),
                 three(strides, 1), three(pads[0::2], 0), three(pads[1::2], 0), three(dils, 1), three(oshape[2:], 1), nb)
    want = tuple((i + lo + hi - d * (k - 1) - 1) // s + 1
                 for i, lo, hi, d, k, s in zip(g.dhw, g.pad_lo, g.pad_hi, g.dil, g.kernel, g.stride))
    if want != g.out or min(want) < 1:
        unsupported(f"conv whose output {list(oshape)} is not its input's {list(xshape)} under these parameters", span)
    return g


def _pad32(nbytes: int) -> int:
    return -(-nbytes // 32) * 32


def emit_im2col_kernel(name: str, g: ConvGeom, dtype: str, budget: int, label: str, span=None) -> tuple[str, dict]:
    """The im2col kernel: ``col[n][grp][p][k]`` for every batch, group and output position.

    Arguments ``(GM_ADDR x, GM_ADDR col, GM_ADDR tiling)``; tiling = int64 ``[off_x, n_x, off_col,
    n_col, sN, sC, sD, sH, vN, vD, vH, vW]``: element offsets and counts, the input's element strides
    per axis (a view's, known per launch when a dim is dynamic; W runs contiguously) and its valid
    extents: past them the input reads as the zeros of the padding, as the interpreter convolves a
    partially valid input's valid data."""
    U, es, one = _BITS[dtype]
    c0 = 32 // es
    (D, H, W), (Kd, Kh, Kw) = g.dhw, g.kernel
    (Do, Ho, Wo), (sd, sh, sw), (dd, dh, dw) = g.out, g.stride, g.dil
    rows = g.cin_g * Kd * Kh
    ws = -(-W // c0) * c0  # a slab row, 32-byte aligned
    zero_at = rows * ws
    slab = rows * ws * es + 32
    blk = _pad32(Wo * g.ka * es)
    offs = _pad32(Wo * g.ka * 4)
    need = slab + blk + offs
    if need > budget:
        unsupported(f"op 'conv' on {dtype}: its im2col row block [{Wo}, {g.ka}] with its {rows} input rows of {W} "
                    f"needs {need} B of UB (at most {budget}); split the output over a pypto.loop of views", span)
    items = g.n * g.groups * Do * Ho
    L = [f"// Generated by pypto-ast (emit/conv.py): im2col of {label} ({dtype}, moved as {U}).",
         f"// col[n][g][p][k], p < {g.p} output positions, k < {g.ka} = {g.cin_g} x {Kd}x{Kh}x{Kw}"
         + (f" + {g.nb} bias column(s) of 1.0" if g.nb else "") + f"; {items} rows of {Wo} positions.",
         "// tiling: int64 [off_x, n_x, off_col, n_col, sN, sC, sD, sH, vN, vD, vH, vW]",
         '#include "kernel_operator.h"', "", "using namespace AscendC;", "", "namespace {"]
    for cname, v in (("kD", D), ("kH", H), ("kW", W), ("kKd", Kd), ("kKh", Kh), ("kKw", Kw), ("kDo", Do), ("kHo", Ho),
                     ("kWo", Wo), ("kSd", sd), ("kSh", sh), ("kSw", sw), ("kDd", dd), ("kDh", dh), ("kDw", dw),
                     ("kPd", g.pad_lo[0]), ("kPh", g.pad_lo[1]), ("kPw", g.pad_lo[2]), ("kCinG", g.cin_g),
                     ("kGroups", g.groups), ("kRows", rows), ("kWs", ws), ("kKa", g.ka), ("kK", g.k), ("kP", g.p),
                     ("kItems", items), ("kZeroAt", zero_at), ("kEs", es)):
        L.append(f"constexpr int64_t {cname} = {v};")
    L += ["}  // namespace", "",
          f'extern "C" __global__ __aicore__ void {name}(GM_ADDR x, GM_ADDR col, GM_ADDR tiling)', "{",
          "    GlobalTensor<int64_t> tilingGm;",
          "    tilingGm.SetGlobalBuffer((__gm__ int64_t*)tiling, 12);",
          "    const int64_t offX = tilingGm.GetValue(0), offCol = tilingGm.GetValue(2);",
          "    const int64_t sN = tilingGm.GetValue(4), sC = tilingGm.GetValue(5), sD = tilingGm.GetValue(6), "
          "sH = tilingGm.GetValue(7);",
          "    // valid extents (at most the declared ones): beyond them the input is zero",
          "    const int64_t vN = tilingGm.GetValue(8), vD = tilingGm.GetValue(9), vH = tilingGm.GetValue(10), "
          "vW = tilingGm.GetValue(11);",
          "    (void)kD; (void)kH;",
          f"    GlobalTensor<{U}> xGm, colGm;",
          f"    xGm.SetGlobalBuffer((__gm__ {U}*)x, static_cast<uint64_t>(tilingGm.GetValue(1)));",
          f"    colGm.SetGlobalBuffer((__gm__ {U}*)col, static_cast<uint64_t>(tilingGm.GetValue(3)));",
          "    (void)sD; (void)sH;",
          "    TPipe pipe;",
          "    TBuf<TPosition::VECCALC> slabBuf, blkBuf, offBuf;",
          f"    pipe.InitBuffer(slabBuf, {slab});  // {rows} input rows of {ws}, then a zero and a one",
          f"    pipe.InitBuffer(blkBuf, {blk});  // one [{Wo}, {g.ka}] block of col",
          f"    pipe.InitBuffer(offBuf, {offs});  // its Gather byte offsets into the slab",
          f"    LocalTensor<{U}> slab = slabBuf.Get<{U}>();",
          f"    LocalTensor<{U}> blk = blkBuf.Get<{U}>();",
          "    LocalTensor<uint32_t> offs = offBuf.Get<uint32_t>();",
          f"    Duplicate(slab[kZeroAt], static_cast<{U}>(0), {c0});",
          "    SetFlag<HardEvent::V_S>(0);",
          "    WaitFlag<HardEvent::V_S>(0);",
          f"    slab.SetValue(kZeroAt + 1, static_cast<{U}>({one}));  // 1.0, the bias columns' factor",
          "    // The offsets of a row block: position ow, column k = (ci, kd, kh, kw) reads slab row",
          "    // (ci*Kd + kd)*Kh + kh at iw = ow*Sw + kw*Dw - Pw, or the zero past the slab.",
          "    uint32_t i = 0;",
          "    for (int64_t ow = 0; ow < kWo; ++ow) {",
          "        for (int64_t r = 0; r < kRows; ++r) {",
          "            for (int64_t kw = 0; kw < kKw; ++kw) {",
          "                const int64_t iw = ow * kSw + kw * kDw - kPw;",
          "                offs.SetValue(i++, static_cast<uint32_t>((iw >= 0 && iw < vW ? r * kWs + iw : kZeroAt) * kEs));",
          "            }",
          "        }",
          "        for (int64_t j = kK; j < kKa; ++j) offs.SetValue(i++, static_cast<uint32_t>((kZeroAt + 1) * kEs));",
          "    }",
          "    SetFlag<HardEvent::S_V>(0);",
          "    WaitFlag<HardEvent::S_V>(0);",
          "    SetFlag<HardEvent::S_MTE2>(0);",
          "    WaitFlag<HardEvent::S_MTE2>(0);",
          "    for (int64_t t = GetBlockIdx(); t < kItems; t += GetBlockNum()) {",
          "        const int64_t oh = t % kHo, od = t / kHo % kDo, ng = t / (kHo * kDo);",
          "        const int64_t n = ng / kGroups, grp = ng % kGroups;",
          "        for (int64_t r = 0; r < kRows; ++r) {",
          "            const int64_t ci = r / (kKd * kKh), kd = r / kKh % kKd, kh = r % kKh;",
          "            const int64_t id = od * kSd + kd * kDd - kPd, ih = oh * kSh + kh * kDh - kPh;",
          "            if (n >= vN || id < 0 || id >= vD || ih < 0 || ih >= vH || vW <= 0) {  // a row of the padding",
          f"                Duplicate(slab[r * kWs], static_cast<{U}>(0), static_cast<int32_t>(kW));",
          "                continue;",
          "            }",
          "            const int64_t src = offX + n * sN + (grp * kCinG + ci) * sC + id * sD + ih * sH;",
          f"            DataCopyPad(slab[r * kWs], xGm[src], DataCopyExtParams{{1, static_cast<uint32_t>(vW * kEs), 0, 0, 0}},",
          f"                        DataCopyPadExtParams<{U}>{{false, 0, 0, static_cast<{U}>(0)}});",
          "        }",
          "        SetFlag<HardEvent::MTE2_V>(0);",
          "        WaitFlag<HardEvent::MTE2_V>(0);",
          "        Gather(blk, slab, offs, 0u, static_cast<uint32_t>(kWo * kKa));",
          "        SetFlag<HardEvent::V_MTE3>(0);",
          "        WaitFlag<HardEvent::V_MTE3>(0);",
          "        const int64_t dst = offCol + (ng * kP + (od * kHo + oh) * kWo) * kKa;",
          "        DataCopyPad(colGm[dst], blk, DataCopyExtParams{1, static_cast<uint32_t>(kWo * kKa * kEs), 0, 0, 0});",
          "        SetFlag<HardEvent::MTE3_V>(0);  // the next row's Gather overwrites the block",
          "        WaitFlag<HardEvent::MTE3_V>(0);",
          "        SetFlag<HardEvent::V_MTE2>(0);  // and its loads the slab",
          "        WaitFlag<HardEvent::V_MTE2>(0);",
          "    }", "}"]
    info = {"kernel": name, "kind": "im2col", "file": f"{name}.cpp", "num_blocks": min(items, MAX_CORES),
            "ub_bytes": need}
    return "\n".join(L) + "\n", info


class Im2colLaunch(IndexLaunch):
    """The im2col kernel in a block's launch order: the input (N-D strides) and col."""

    def __init__(self, name, text, info, regions, span, label, x):
        super().__init__(name, text, info, regions, span, label)
        self.x = x  # (offset, strides (N, C, D, H), valid extents (N, D, H, W))

    def launch(self, planner, scope: set, depth: int):
        src, col = self.regions
        planner._check_extents((), self.span, (("elements of col", gm.const(col.buf.numel) or 0),))
        off, strides, valid = self.x
        fields = [planner.cexpr(e, scope, self.span)
                  for e in (off, src.buf.numel, col.offset, col.buf.numel) + strides + valid]
        planner._launch_fixed(self.name, self.text, self.info, self.regions, fields, self.label, scope, depth, self.span)


def _input(bp, x, span):
    """The conv input as (buffer, offset, strides of the leading axes, static shape, N-D valid
    extent (Exprs), [(valid Expr, full)] that must hold at run time), or a refusal."""
    views = getattr(bp, "conv_views", {})
    if isinstance(x, ir.Value) and x.name in views:
        v = views[x.name]
        if gm.const(v.strides[-1]) != 1:
            raise v.error
        return v.buf, v.offset, list(v.strides[:-1]), v.shape, v.valid, []
    g = bp.gval_of(x, span)
    if isinstance(x, ir.TensorRef):
        shape = tuple(gm.const(d) for d in g.buf.shape)
        if None in shape:
            unsupported(f"conv of the dynamically shaped tensor @{x.name} (take a static-shaped view)", span)
    else:
        shape = g.shape
    if g.rows < 0 and not isinstance(x, ir.TensorRef):
        unsupported(f"conv of a dynamically shaped operand {x!r}", span)
    strides, acc = [], gm.as_expr(g.ld)
    for k in range(len(shape) - 2, -1, -1):
        strides.insert(0, acc)
        acc = gm.mul(acc, shape[k])
    rows, cols = gm.flat2(shape)
    valid = gm.valid_dims(g.vr, g.vc, shape)
    if valid is None:  # not an N-D extent: it must be whole
        return g.buf, g.offset, strides, shape, tuple(gm.C(d) for d in shape), [(g.vr, rows), (g.vc, cols)]
    return g.buf, g.offset, strides, shape, tuple(valid), []


def _nchw_strides(strides: list, nd: int) -> tuple:
    """(sN, sC, sD, sH) from the strides of the leading axes (N, C, spatial but W)."""
    sp = strides[2:]
    sp = [gm.C(0)] * (2 - len(sp)) + sp
    return (strides[0], strides[1], sp[0], sp[1])


def plan_conv(bp, op: ir.Op):
    """Lower one conv op in a block (``ascendc._BlockPlanner`` ``bp``): im2col kernel, a bias
    column concat when there is a bias, one cube matmul per group; the result in a GM buffer."""
    from .ascendc import _CubeLaunch
    from .cube import MatmulSpec

    span = op.span
    attrs = dict(op.attrs)
    dtype = op.types[0].dtype
    relu = attrs.get("relu", False)
    nd_name = {3: "1-D", 4: "2-D", 5: "3-D"}
    oshape = gm.static_dims(op.types[0].shape, span, "conv output shape")
    form = f"{nd_name.get(len(oshape), f'rank-{len(oshape)}')} conv"
    if dtype not in _BITS:
        unsupported(f"op 'conv' on {dtype} ({form})", span)
    if attrs.get("scale"):
        unsupported(f"op 'conv' on {dtype} with a scale (a quantized {form})", span)
    if relu not in (False, True):
        unsupported(f"op 'conv' on {dtype} with relu_type {relu} ({form})", span)
    buf, xoff, xstrides, xshape, xvalid, checks = _input(bp, op.operands[0], span)
    if len(xshape) != len(oshape) or len(xshape) not in (3, 4, 5):
        unsupported(f"op 'conv' of a rank-{len(xshape)} input ({form})", span)
    w = op.operands[1]
    wshape = gm.static_dims(bp._operand_shape(w, span), span, "conv weight shape")
    bias = op.operands[2] if len(op.operands) > 2 else None
    bdt = None
    if bias is not None:
        bdt = bp.gval_of(bias, span).dtype
    nb = 0 if bias is None else (3 if (dtype, bdt) == ("bf16", "fp32") else 1)
    if bias is not None and bdt not in (dtype, "fp32"):
        unsupported(f"op 'conv' on {dtype} with a {bdt} bias ({form})", span)
    geo = _geom(xshape, wshape, oshape, attrs, nb, span)
    res = op.results[0]

    # the weight as [Cout, K] (+ bias columns): a reshape, or a concat of IR ops
    def part(name, code, operands, a, shape, dt):
        ty = ir.TensorType(tuple(ir.Const(d) for d in shape), dt)
        bp._ir_shape[name] = tuple(shape)
        bp.op(ir.Op((name,), code, tuple(operands), tuple(sorted(a.items())), (ty,), op.tile, op.cube_tile, span))
        return ir.Value(name)

    wk = part(f"{res}_w", "reshape", (w,), {"shape": (geo.cout, geo.k)}, (geo.cout, geo.k), dtype)
    if bias is not None:
        b = part(f"{res}_b", "reshape", (bias,), {"shape": (geo.cout, 1)}, (geo.cout, 1), bdt)
        pieces = [b]
        if nb == 3:  # fp32 = hi + mid + lo, three bf16 roundings of what is left (exact)
            pieces, rest = [], b
            for j in range(3):
                piece = part(f"{res}_b{j}", "cast", (rest,), {"dtype": "bf16", "mode": "CAST_RINT"}, (geo.cout, 1), "bf16")
                pieces.append(piece)
                if j < 2:
                    back = part(f"{res}_b{j}f", "cast", (piece,), {"dtype": "fp32"}, (geo.cout, 1), "fp32")
                    rest = part(f"{res}_r{j}", "sub", (rest, back), {}, (geo.cout, 1), "fp32")
        wk = part(f"{res}_wb", "concat", (tuple([wk] + pieces),), {"dim": 1}, (geo.cout, geo.ka), dtype)
    ga = bp.gval_of(wk, span)
    if not gm.static_ld(ga) or ga.ld != geo.ka:
        unsupported(f"op 'conv' with a strided weight ({form})", span)

    # a partially valid input convolves its valid data (the interpreter's rule); its channels must be
    # whole, and a valid extent the N-D form cannot say must be whole, both checked when it runs
    xname = f"{op.operands[0]!r}"
    checks = list(checks) + [(xvalid[1], geo.cin)]
    for e, full in checks:
        if gm.const(e) != full:
            cond = bp.P.cexpr(e, bp.scope, span)
            bp.checks.append((span, f'if ({cond} != {full}) pypto_host::Fault("conv of the input {xname}, partially '
                                    f'valid along its channels (or in a form the output cannot follow): pypto-ast\'s '
                                    f'Ascend C emitter does not support it yet (PTO109)");'))
    vsp = [gm.C(1)] * (3 - geo.nd) + list(xvalid[2:])
    vout = [gm.emax(gm.C(0), gm.add(_floordiv(gm.add(v, gm.C(lo + hi - d * (k - 1) - 1)), st), gm.C(1)))
            for v, lo, hi, d, k, st in zip(vsp, geo.pad_lo, geo.pad_hi, geo.dil, geo.kernel, geo.stride)]
    out_valid = (xvalid[0], gm.C(geo.cout)) + tuple(vout[3 - geo.nd:])
    partial = any(gm.const(e) != d for e, d in zip(out_valid, oshape))
    if partial and (res in bp.P.returned or bp.used_later(res)):
        unsupported(f"op 'conv' on {dtype} whose result %{res} is partially valid and outlives its block ({form})",
                    span)
    bp.close()
    col = bp.P.new_ws(dtype, (geo.n, geo.groups, geo.p, geo.ka), False)
    out = bp.P.new_ws(dtype, oshape, res in bp.P.returned)
    bp.nseg += 1
    stem = f"{bp.P.symbol}_{bp.block.name}"
    name = f"{stem}_cv{bp.nseg}"
    label = f"{bp.block.name}: %{res} = conv, line {span.line if span else '?'}"
    text, info = emit_im2col_kernel(name, geo, dtype, bp.P.budget, label, span)
    gcol = gm.whole(col, span)
    src = GVal(buf, xoff, max(1, math.prod(xshape[:-1])), xshape[-1], xstrides[-1] if len(xstrides) else xshape[-1],
               gm.C(math.prod(xshape[:-1])), gm.C(xshape[-1]), dtype, tuple(xshape))
    bp.done.append(Im2colLaunch(name, text, info, [src, gcol], span, f"{bp.block.name} im2col %{res}",
                                (xoff, _nchw_strides(xstrides, geo.nd), (xvalid[0],) + tuple(vsp))))
    cube = op.cube_tile or ((64, 64), (64, 64), (64, 64))
    for grp in range(geo.groups):
        bp.nseg += 1
        spec = MatmulSpec(
            kernel=f"{stem}_mm{bp.nseg}", a_dtype=dtype, b_dtype=dtype, c_dtype=dtype, m=geo.cout_g, n=geo.p, k=geo.ka,
            lda=geo.ka, ldb=geo.ka, ldc=geo.p, trans_a=False, trans_b=True, batch=geo.n, batch_stride_a=0,
            batch_stride_b=geo.groups * geo.p * geo.ka, batch_stride_c=geo.cout * geo.p,
            base_m=cube[0][0], base_n=cube[2][0], base_k=cube[1][0], relu=bool(relu),
            comment=f"{label}: group {grp} of {geo.groups}, out[n, {grp * geo.cout_g}:{(grp + 1) * geo.cout_g}] = "
                    f"W_g @ col[n, {grp}]^T")
        a = GVal(ga.buf, gm.add(ga.offset, gm.C(grp * geo.cout_g * geo.ka)), geo.cout_g, geo.ka, geo.ka,
                 gm.C(geo.cout_g), gm.C(geo.ka), dtype, (geo.cout_g, geo.ka))
        b = GVal(col, gm.C(grp * geo.p * geo.ka), geo.p, geo.ka, geo.ka, gm.C(geo.p), gm.C(geo.ka), dtype, (geo.p, geo.ka))
        c = GVal(out, gm.C(grp * geo.cout_g * geo.p), geo.cout_g, geo.p, geo.p, gm.C(geo.cout_g), gm.C(geo.p), dtype,
                 (geo.cout_g, geo.p))
        bp.done.append(_CubeLaunch(spec, [a, b, c], span, f"{bp.block.name} conv %{res} group {grp}"))
    bp._ir_shape[res] = oshape
    if not partial:
        bp.env[res] = gm.whole(out, span)
        return
    # a partially valid result: its valid extent is N-D (not a 2-D prefix), so only an assemble
    # (strided.py, slab by slab) takes it; other readers get this refusal
    error = EmitError(f"reading the partially valid conv result %{res} other than by an assemble: {UNSUPPORTED}", span)
    bp.conv_views[res] = nd_view(out, (0,) * len(oshape), oshape, out_valid, error)


def _floordiv(a, b: int):
    a = gm.as_expr(a)
    if b == 1:
        return a
    if gm.const(a) is not None:
        return gm.C(gm.const(a) // b)
    return ir.BinExpr("//", a, gm.C(b))
