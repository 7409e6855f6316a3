#!/usr/bin/env python3
"""Deterministic generator of realistic PyPTO kernel files, for benchmarking pypto-lint.

    python bench/corpus.py OUTDIR -n 1000 --seed 0

writes ``OUTDIR/kernel_00000.py`` ... and ``OUTDIR/manifest.json``.  Each file is 60-250 lines
of the pypto 0.2.0 ``frontend.jit`` dialect: imports in varied spellings, module constants,
1-4 ``@jit`` kernels with tensor annotations, tile-shape calls, loops (``pypto.loop`` with
name/idx_name/unroll_list, ``loop_unroll``), views/assemble, reductions, matmuls, plain and
``frontend.function`` helpers, comments, docstrings and an ``if __name__ == "__main__":`` host
section with torch tensors.  About 20 % of the files carry exactly one documented pitfall
(PTO001-PTO014, see examples/README.md); the rest are written to be clean.

``manifest.json`` records, per file, its line count, kernels and the injected pitfall codes with
the line of the statement that carries each (the statement a fix would touch; a linter may
anchor a little differently, e.g. on the enclosing loop).  Use it to score the linter: clean
files should produce nothing, pitfall files their code.

Determinism: file *i* is generated from ``random.Random(f"{seed}:{i}")`` only, so the same
seed gives byte-identical files on every run and platform (string seeds are hashed with
SHA-512, not with the salted ``hash()``), and any single file can be regenerated on its own.
Every generated file is checked with ``ast.parse`` and against the 60-250 line bounds before it
is written (``--check`` re-runs that check on an existing directory).
"""
from __future__ import annotations

import argparse
import ast
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

PITFALL_CODES = tuple(f"PTO{i:03d}" for i in range(1, 15))
PITFALL_RATE = 0.2
MIN_LINES, MAX_LINES = 60, 250
TAG = "\x00"  # line suffix "\x00PTOxxx" marks a pitfall site; stripped before writing

# dtype key -> (pypto name, bytes, torch dtype)
DTYPES = {
    "fp32": ("DT_FP32", 4, "torch.float32"),
    "fp16": ("DT_FP16", 2, "torch.float16"),
    "bf16": ("DT_BF16", 2, "torch.bfloat16"),
    "int32": ("DT_INT32", 4, "torch.int32"),
}
UB_TILE_BUDGET = 32 * 1024  # bytes per vector tile we allow in clean code


PARAM_DOCS = ["input tensor", "written in place", "output, overwritten", "broadcast along rows",
              "per-channel parameters", "activation block", "row-major, contiguous"]


def tag(line: str, code: str) -> str:
    return f"{line}{TAG}{code}"


# --------------------------------------------------------------------------- style
@dataclass
class Style:
    imports: list[str]
    P: str            # name the pypto module is bound to
    JIT: str          # decorator expression for frontend.jit
    FN: str           # decorator expression for frontend.function
    ann: str          # "paren" | "bracket" | "list"
    dt_alias: bool    # module-level F32 = pypto.DT_FP32 aliases
    comment_rate: float
    kernel_docstrings: bool
    npu_host: bool    # host code moves tensors to the NPU (torch_npu)
    host_funcs: bool  # host code split into _run_<kernel>() functions


def make_style(rng: random.Random) -> Style:
    form = rng.choices(
        ["pypto", "pto", "pt", "frontend", "jit", "pto_jit"], weights=[35, 20, 8, 15, 15, 7])[0]
    imports: list[str]
    if form == "pypto":
        P, JIT, FN, imports = "pypto", "pypto.frontend.jit", "pypto.frontend.function", ["import pypto"]
    elif form in ("pto", "pt"):
        P = form
        JIT, FN, imports = f"{P}.frontend.jit", f"{P}.frontend.function", [f"import pypto as {P}"]
    elif form == "frontend":
        P, JIT, FN = "pypto", "frontend.jit", "frontend.function"
        imports = ["import pypto", "from pypto import frontend"]
    elif form == "jit":
        P, JIT, FN = "pypto", "jit", "pypto.frontend.function"
        imports = ["import pypto", "from pypto.frontend import jit"]
    else:
        P, JIT, FN = "pto", "jit", "pto.frontend.function"
        imports = ["import pypto as pto", "from pypto.frontend import jit"]
    return Style(
        imports=imports, P=P, JIT=JIT, FN=FN,
        ann=rng.choices(["paren", "bracket", "list"], weights=[50, 35, 15])[0],
        dt_alias=rng.random() < 0.45,
        comment_rate=rng.choice([0.05, 0.15, 0.3]),
        kernel_docstrings=rng.random() < 0.6,
        npu_host=rng.random() < 0.3,
        host_funcs=rng.random() < 0.5,
    )


# --------------------------------------------------------------------------- module builder
@dataclass
class Kernel:
    name: str
    params: list[tuple[str, tuple, str, str]]  # (name, shape ints, dtype key, role: in/out/lens)
    lines: list[str]
    ref: dict[str, str] = field(default_factory=dict)  # out param -> torch expression
    extra_args: list[str] = field(default_factory=list)  # non-tensor call args (host)
    call: str | None = None  # host call override (legacy launchers)
    dyn_rows: int | None = None  # host row count for DYNAMIC first dims
    call_pit: str | None = None  # a pitfall at the host's call of it (PTO002: a legacy launcher, no device)


class Module:
    def __init__(self, rng: random.Random, style: Style):
        self.rng, self.s = rng, style
        self.consts: dict[str, str] = {}
        self.values: dict[str, object] = {}
        self.names: set[str] = set()
        self.blocks: list[list[str]] = []
        self.kernels: list[Kernel] = []
        self.std_imports: set[str] = set()
        self.pitfalls: list[str] = []
        self.last_params: list[str] = []
        self.allow_set_device = True

    # ----- names and constants
    def unique(self, base: str) -> str:
        name, k = base, 2
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        return name

    def const(self, base: str, value: object, text: str | None = None) -> str:
        """A module constant; reused when the same name already holds the same value."""
        name, k = base, 2
        while name in self.values and self.values[name] != value:
            name, k = f"{base}_{k}", k + 1
        if name not in self.values:
            self.values[name] = value
            self.consts[name] = text if text is not None else repr(value)
            self.names.add(name)
        return name

    def dim(self, base: str, value: int) -> str:
        """Dimension either as a named constant or as a literal, by the file's habits."""
        return self.const(base, value) if self.rng.random() < 0.75 else str(value)

    def dt(self, key: str) -> str:
        pname = DTYPES[key][0]
        if self.s.dt_alias:
            alias = {"fp32": "F32", "fp16": "F16", "bf16": "BF16", "int32": "I32"}[key]
            return self.const(alias, pname, f"{self.s.P}.{pname}")
        return f"{self.s.P}.{pname}"

    def ann(self, dims: list[str], key: str) -> str:
        P, dt = self.s.P, self.dt(key)
        if self.s.ann == "bracket":
            return f"{P}.Tensor[[{', '.join(dims)}], {dt}]"
        if self.s.ann == "list":
            return f"{P}.Tensor([{', '.join(dims)}], {dt})"
        inner = ", ".join(dims) + ("," if len(dims) == 1 else "")
        return f"{P}.Tensor(({inner}), {dt})"

    def comment(self, indent: str, pool: list[str]) -> list[str]:
        if self.rng.random() < self.s.comment_rate:
            return [f"{indent}# {self.rng.choice(pool)}"]
        return []

    def decorator(self) -> str:
        r = self.rng.random()
        if r < 0.6:
            return f"@{self.s.JIT}"
        if r < 0.8:
            return f"@{self.s.JIT}()"
        if r < 0.9:
            return f'@{self.s.JIT}(runtime_options={{"run_mode": {self.s.P}.RunMode.SIM}})'
        if r < 0.95:
            return f"@{self.s.JIT}(pass_options={{\"vec_nbuffer_setting\": {{-1: 2}}}})"
        return f"@{self.s.JIT}(debug_options={{\"runtime_debug_mode\": 3}})"

    def signature(self, name: str, params: list[tuple[str, str]], extra: list[str] = ()) -> list[str]:
        """def line(s) for a kernel: params = [(pname, annotation)]."""
        self.last_params = [p for p, _ in params] + [e.split(":")[0] for e in extra]
        parts = [f"{p}: {a}" for p, a in params] + list(extra)
        one = f"def {name}({', '.join(parts)}):"
        if len(one) <= 100:
            return [one]
        return [f"def {name}("] + [f"    {p}," for p in parts] + ["):"]

    def docstring(self, text: str, params: list[str] | None = None) -> list[str]:
        if not self.s.kernel_docstrings:
            return []
        params = self.last_params if params is None else params
        if params and self.rng.random() < 0.5:
            lines = [f'    """{text}', "", "    Args:"]
            lines += [f"        {p}: {self.rng.choice(PARAM_DOCS)}" for p in params]
            return lines + ['    """']
        return [f'    """{text}"""']


# --------------------------------------------------------------------------- tiles
def align_elems(key: str) -> int:
    return 32 // DTYPES[key][1]


def pick_row_tile(rng: random.Random, rows: int, width: int, key: str, budget: int = UB_TILE_BUDGET) -> int:
    nbytes = DTYPES[key][1]
    opts = [t for t in (4, 8, 16, 32, 64) if t <= rows and rows % t == 0 and t * width * nbytes <= budget]
    return rng.choice(opts) if opts else 1


def pick_tile2(rng: random.Random, rows: int, cols: int, key: str) -> tuple[int, int]:
    nbytes = DTYPES[key][1]
    col_opts = [c for c in (32, 64, 128, 256, 512, 1024) if c <= cols and cols % c == 0
                and c % align_elems(key) == 0 and 4 * c * nbytes <= UB_TILE_BUDGET]
    ct = rng.choice(col_opts[-3:]) if col_opts else cols
    return pick_row_tile(rng, rows, ct, key), ct


def misaligned_last(rng: random.Random, key: str, near: int) -> int:
    """A last tile dim close to the aligned `near` but not 32-byte aligned for `key`.

    Staying close keeps the tile count (and so PTO013's budget) where the aligned tile had it,
    so an injected PTO004 does not drag a PTO013 along.  Below `near` (the row length or a
    divisor of it), so the tile cuts rows off the 32-byte grid: a tile covering whole rows is
    not a finding.
    """
    half = max(1, align_elems(key) // 2)
    cands = [c for c in (near - half, near - 3 * half) if c > 0 and (c * DTYPES[key][1]) % 32]
    return rng.choice(cands or [c for c in (near + half, near + 3 * half) if (c * DTYPES[key][1]) % 32])


# --------------------------------------------------------------------------- expression chains
UNARY_F32 = ["{P}.exp({t})", "{P}.sigmoid({t})", "{P}.relu({t})", "{P}.sqrt({P}.abs({t}) + 1.0)",
             "{P}.rsqrt({t} * {t} + 1.0)", "{P}.log1p({P}.abs({t}))", "{P}.clip({t}, -4.0, 4.0)",
             "{P}.maximum({t}, {t} * 0.1)", "{t} * {P}.sigmoid({t})", "{P}.where({t} > 0.0, {t}, {t} * 0.01)"]
UNARY_F16 = ["{P}.exp({t})", "{P}.relu({t})", "{P}.maximum({t}, {t} * 0.1)", "{P}.abs({t})",
             "{P}.clip({t}, -4.0, 4.0)"]
SCALAR = ["{t} * {c}", "{t} + {c}", "{t} - {c}", "{t} * {c} + 1.0"]
TORCH_OF = {
    "{P}.exp({t})": "torch.exp({t})", "{P}.sigmoid({t})": "torch.sigmoid({t})",
    "{P}.relu({t})": "torch.relu({t})", "{P}.sqrt({P}.abs({t}) + 1.0)": "torch.sqrt({t}.abs() + 1.0)",
    "{P}.rsqrt({t} * {t} + 1.0)": "torch.rsqrt({t} * {t} + 1.0)",
    "{P}.log1p({P}.abs({t}))": "torch.log1p({t}.abs())", "{P}.clip({t}, -4.0, 4.0)": "{t}.clamp(-4.0, 4.0)",
    "{P}.maximum({t}, {t} * 0.1)": "torch.maximum({t}, {t} * 0.1)",
    "{t} * {P}.sigmoid({t})": "{t} * torch.sigmoid({t})",
    "{P}.where({t} > 0.0, {t}, {t} * 0.01)": "torch.where({t} > 0, {t}, {t} * 0.01)",
    "{P}.abs({t})": "{t}.abs()",
}


def chain(m: Module, inputs: list[str], key: str, n_ops: int, min_binary: int = 0) -> tuple[list[str], str, str]:
    """Statements computing `t` from inputs; returns (lines, final_expr, torch_expr)."""
    rng, P = m.rng, m.s.P
    t = rng.choice(["t", "h", "acc", "v"])
    first = inputs[0]
    lines: list[str] = []
    ref = first
    cur = first
    binaries = 0
    for i in range(n_ops):
        choice = rng.random()
        need_bin = binaries < min_binary and (n_ops - i) <= (min_binary - binaries)
        if len(inputs) > 1 and (need_bin or choice < 0.45):
            other = inputs[1 + (binaries % (len(inputs) - 1))]
            op = rng.choice(["+", "*", "-"])
            expr, rexpr = f"{cur} {op} {other}", f"({ref} {op} {other})"
            binaries += 1
        elif choice < 0.75:
            pat = rng.choice(UNARY_F32 if key == "fp32" else UNARY_F16)
            expr = pat.format(P=P, t=cur)
            rexpr = TORCH_OF[pat].format(t=f"({ref})")
        else:
            c = rng.choice(["0.5", "2.0", "0.125", "1.5"])
            pat = rng.choice(SCALAR)
            expr, rexpr = pat.format(t=cur, c=c), "(" + pat.format(t=f"({ref})", c=c) + ")"
        lines.append(f"    {t} = {expr}")
        cur, ref = t, rexpr
    return lines, cur, ref


# --------------------------------------------------------------------------- kernel templates
# Each template builds one kernel (plus helpers it needs) into the module and returns it.
# `pit` is the pitfall code to inject, or None; SUPPORTS says which codes each template can carry.

ELEM_NAMES = [("elementwise_chain", "Fused elementwise chain"), ("gated_residual", "Gated residual update"),
              ("activation_epilogue", "Activation epilogue"), ("bias_act", "Bias + activation"),
              ("scale_shift_act", "Scale, shift and activate")]


def t_elementwise(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    key = rng.choices(["fp32", "fp16"], weights=[75, 25])[0]
    base, title = rng.choice(ELEM_NAMES)
    name = m.unique(base)
    if pit == "PTO013":
        rows, cols = rng.choice([(1024, 1024), (2048, 1024), (1024, 2048)])
    else:
        rows, cols = rng.choice([64, 128, 256, 512]), rng.choice([64, 128, 256, 512, 1024])
    R, C = m.dim("ROWS", rows), m.dim("COLS", cols)
    n_in = rng.choice([1, 2, 2, 3])
    if pit == "PTO013":
        n_in = max(n_in, 2)
    in_names = rng.choice([["x", "y", "z"], ["a", "b", "c"], ["inp", "gate", "res"], ["x", "w", "bias"]])[:n_in]
    out = rng.choice(["out", "y_out", "dst", "result"])
    T = m.ann([R, C], key)
    params = [(n, T) for n in in_names] + [(out, T)]
    extra = []
    alpha = None
    if rng.random() < 0.25:
        alpha = rng.choice(["alpha", "scale"])
        extra = [f"{alpha}: float = {rng.choice(['0.5', '1.0', '2.0'])}"]
    lines = [m.decorator()]
    sig = m.signature(name, params, extra)
    if pit == "PTO013":
        sig[0] = tag(sig[0], "PTO013")
    lines += sig
    lines += m.docstring(f"{title}: {n_in} input(s), {rows}x{cols} {key}.")
    # tile
    rt, ct = pick_tile2(rng, rows, cols, key)
    tile_line = f"    {P}.set_vec_tile_shapes({rt}, {ct})"
    first_op_pit = None
    if pit == "PTO013":
        tile_line = f"    {P}.set_vec_tile_shapes(8, {align_elems(key)})"
    elif pit == "PTO004":
        tile_line = tag(f"    {P}.set_vec_tile_shapes({rt}, {misaligned_last(rng, key, ct)})", "PTO004")
    elif pit == "PTO003":
        tile_line = tag(f"    {P}.set_vec_tile_shapes({ct})", "PTO003")  # reported at the kernel's tile call
    elif pit == "PTO005":
        variant = rng.choice(["none", "zero", "neg", "five"])
        if variant == "none":
            tile_line = None
            first_op_pit = "PTO005"
        elif variant == "zero":
            tile_line = tag(f"    {P}.set_vec_tile_shapes({rt}, 0)", "PTO005")
        elif variant == "neg":
            tile_line = tag(f"    {P}.set_vec_tile_shapes(-1, {ct})", "PTO005")
        else:
            # leading dims are the ones pypto uses, so the tile count stays that of (rt, ct)
            tile_line = tag(f"    {P}.set_vec_tile_shapes({rt}, {ct}, 1, 1, 1)", "PTO005")
    lines += m.comment("    ", ["tile sized for the UB", "one tile shape for the whole chain",
                                f"{rt} rows per tile", "keep the last tile dim 32-byte aligned"])
    if tile_line:
        lines.append(tile_line)
    body, final, ref = chain(m, in_names, key, rng.randint(2, 5), min_binary=2 if pit == "PTO013" else 0)
    if pit == "PTO013" and final == in_names[0]:
        body, final, ref = chain(m, in_names, key, 3, min_binary=2)
    if first_op_pit and body:
        body[0] = tag(body[0], first_op_pit)
    lines += body
    write = f"{final} * {alpha}" if alpha else final
    ref_w = f"{ref} * {extra[0].split('= ')[1]}" if alpha else ref
    if pit == "PTO001":
        op = "=" if rng.random() < 0.7 else "+="
        lines.append(tag(f"    {out} {op} {write}", "PTO001"))
    else:
        if first_op_pit and not body:
            lines.append(tag(f"    {out}[:] = {P}.clone({write})", first_op_pit))
        elif final == in_names[0]:
            lines.append(f"    {out}[:] = {P}.clone({write})")
        else:
            lines.append(f"    {out}[:] = {write}")
    shape = (rows, cols)
    kparams = [(n, shape, key, "in") for n in in_names] + [(out, shape, key, "out")]
    return Kernel(name, kparams, lines, {out: ref_w})


def t_softmax(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["row_softmax", "softmax_rows", "attn_softmax", "log_softmax_rows", "scaled_softmax"]))
    rows, cols = rng.choice([64, 128, 256, 512]), rng.choice([128, 256, 512, 1024])
    R, C = m.dim("ROWS", rows), m.dim("COLS", cols)
    x, out = rng.choice([("x", "out"), ("scores", "probs"), ("logits", "probs")])
    T = m.ann([R, C], "fp32")
    lines = [m.decorator()] + m.signature(name, [(x, T), (out, T)])
    variant = rng.choice(["plain", "scaled", "log", "builtin"]) if pit is None else rng.choice(["plain", "scaled", "log"])
    lines += m.docstring({"plain": "Numerically stable softmax over the last axis.",
                          "scaled": "Softmax of scaled scores (temperature).",
                          "log": "Log-softmax over the last axis.",
                          "builtin": "Row softmax using the fused pypto.softmax op."}[variant])
    rt = pick_row_tile(rng, rows, cols, "fp32")
    tile = f"    {P}.set_vec_tile_shapes({rt}, {C})"
    if pit == "PTO004":
        tile = tag(f"    {P}.set_vec_tile_shapes({rt}, {misaligned_last(rng, 'fp32', cols)})", "PTO004")
    elif pit == "PTO003":
        tile = tag(f"    {P}.set_vec_tile_shapes({C})", "PTO003")
    lines += m.comment("    ", ["whole rows per tile: the reductions run along the last axis",
                                "row max first for numerical stability"])
    lines.append(tile)
    src = x
    ref_src = x
    body = []
    if variant == "scaled":
        temp = m.const("INV_TEMPERATURE", 0.125, rng.choice(["0.125", "1.0 / 8.0"]))
        body.append(f"    z = {x} * {temp}")
        src, ref_src = "z", f"({x} * {temp})"
    if variant == "builtin":
        body.append(f"    {out}[:] = {P}.softmax({src}, -1)")
        ref = f"torch.softmax({ref_src}, dim=-1)"
    else:
        body += [f"    row_max = {P}.amax({src}, -1, keepdim=True)",
                 f"    shifted = {src} - row_max",
                 f"    e = {P}.exp(shifted)",
                 f"    denom = {P}.sum(e, -1, keepdim=True)"]
        if variant == "log":
            body.append(f"    {out}[:] = shifted - {P}.log(denom)")
            ref = f"torch.log_softmax({ref_src}, dim=-1)"
        else:
            body.append(f"    {out}[:] = e / denom")
            ref = f"torch.softmax({ref_src}, dim=-1)"
    if pit == "PTO001":
        body[-1] = tag(body[-1].replace(f"{out}[:] =", f"{out} ="), "PTO001")
    lines += body
    return Kernel(name, [(x, (rows, cols), "fp32", "in"), (out, (rows, cols), "fp32", "out")], lines, {out: ref})


def t_norm(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    kind = rng.choice(["rms", "layer"])
    name = m.unique("rms_norm" if kind == "rms" else "layer_norm")
    key = rng.choice(["fp32", "fp16", "bf16"])
    tokens, hidden = rng.choice([32, 64, 128, 256]), rng.choice([256, 512, 1024, 2048])
    Tk, H = m.dim("TOKENS", tokens), m.const("HIDDEN", hidden)
    eps = m.const("EPS", 1e-6 if kind == "rms" else 1e-5)
    x, out = "x", rng.choice(["out", "y"])
    params = [(x, m.ann([Tk, H], key)), ("gamma", m.ann(["1", H], key))]
    kparams = [(x, (tokens, hidden), key, "in"), ("gamma", (1, hidden), key, "in")]
    if kind == "layer":
        params.append(("beta", m.ann(["1", H], key)))
        kparams.append(("beta", (1, hidden), key, "in"))
    params.append((out, m.ann([Tk, H], key)))
    kparams.append((out, (tokens, hidden), key, "out"))
    two_out = pit == "PTO001" or rng.random() < 0.3
    if two_out:
        params.append(("rstd", m.ann([Tk, "1"], "fp32")))
        kparams.append(("rstd", (tokens, 1), "fp32", "out"))
    lines = [m.decorator()] + m.signature(name, params)
    lines += m.docstring(f"{'RMS' if kind == 'rms' else 'Layer'} norm over the hidden axis ({key} in, fp32 math).")
    rt = pick_row_tile(rng, tokens, hidden, "fp32")
    tile = f"    {P}.set_vec_tile_shapes({rt}, {H})"
    if pit == "PTO004":
        tile = tag(f"    {P}.set_vec_tile_shapes({rt}, {misaligned_last(rng, 'fp32', hidden)})", "PTO004")
    lines.append(tile)
    cast = key != "fp32"
    xf = f"{P}.cast({x}, {m.dt('fp32')})" if cast else x
    lines.append(f"    xf = {xf}")
    inv_h = rng.choice([f"(1.0 / {H})", f"{1.0 / hidden!r}"])
    if kind == "rms":
        lines += m.comment("    ", ["mean of squares, kept as a column for broadcasting", "fp32 accumulation"])
        lines.append(f"    mean_sq = {P}.sum(xf * xf, -1, keepdim=True) * {inv_h}")
        lines.append(f"    inv = {P}.rsqrt(mean_sq + {eps})")
        lines.append(f"    normed = xf * inv * {P}.cast(gamma, {m.dt('fp32')})" if cast else "    normed = xf * inv * gamma")
        ref_y = f"{x}.float() * torch.rsqrt({x}.float().pow(2).mean(-1, keepdim=True) + {eps}) * gamma.float()"
        ref_rstd = f"torch.rsqrt({x}.float().pow(2).mean(-1, keepdim=True) + {eps})"
    else:
        lines.append(f"    mean = {P}.sum(xf, -1, keepdim=True) * {inv_h}")
        lines.append("    xc = xf - mean")
        lines.append(f"    var = {P}.sum(xc * xc, -1, keepdim=True) * {inv_h}")
        lines.append(f"    inv = {P}.rsqrt(var + {eps})")
        if cast:
            lines.append(f"    normed = xc * inv * {P}.cast(gamma, {m.dt('fp32')}) + {P}.cast(beta, {m.dt('fp32')})")
        else:
            lines.append("    normed = xc * inv * gamma + beta")
        ref_y = (f"torch.nn.functional.layer_norm({x}.float(), ({H},), gamma.float().reshape(-1), "
                 f"beta.float().reshape(-1), {eps})")
        ref_rstd = f"torch.rsqrt({x}.float().var(-1, keepdim=True, unbiased=False) + {eps})"
    final = f"{P}.cast(normed, {m.dt(key)})" if cast else "normed"
    if pit == "PTO001" and not two_out:
        lines.append(tag(f"    {out} = {final}", "PTO001"))
    else:
        lines.append(f"    {out}[:] = {final}")
    ref = {out: ref_y + (f".to({DTYPES[key][2]})" if cast else "")}
    if two_out:
        if pit == "PTO001":
            lines.append(tag("    rstd = inv", "PTO001") if rng.random() < 0.5
                         else tag(f"    rstd = {P}.clone(inv)", "PTO001"))
        else:
            lines.append(f"    rstd[:] = {P}.clone(inv)" if rng.random() < 0.5 else "    rstd[:] = inv")
        ref["rstd"] = ref_rstd
    return Kernel(name, kparams, lines, ref)


def t_matmul(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["linear", "matmul_bias", "proj", "gemm", "dense_relu", "qk_proj"]))
    key = rng.choice(["fp16", "fp16", "bf16"])
    M_, K_, N_ = (rng.choice([64, 128, 256, 512]) for _ in range(3))
    Md, Kd, Nd = m.dim("M", M_), m.dim("K", K_), m.dim("N", N_)
    b_trans = rng.random() < 0.25
    epi = rng.choice(["none", "bias", "bias_relu", "relu", "scale"])
    a, b, out = rng.choice([("a", "b", "c"), ("x", "w", "out"), ("act", "weight", "out")])
    params = [(a, m.ann([Md, Kd], key)), (b, m.ann([Nd, Kd] if b_trans else [Kd, Nd], key))]
    kparams = [(a, (M_, K_), key, "in"), (b, (N_, K_) if b_trans else (K_, N_), key, "in")]
    if epi.startswith("bias"):
        params.append(("bias", m.ann(["1", Nd], "fp32")))
        kparams.append(("bias", (1, N_), "fp32", "in"))
    params.append((out, m.ann([Md, Nd], "fp32")))
    kparams.append((out, (M_, N_), "fp32", "out"))
    lines = [m.decorator()] + m.signature(name, params)
    lines += m.docstring(f"{out} = {a} @ {b}{'^T' if b_trans else ''} ({key} in, fp32 out)" +
                         {"none": ".", "bias": " + bias.", "bias_relu": " + bias, then ReLU.", "relu": ", then ReLU.",
                          "scale": ", scaled."}[epi])

    def cube(dim: int) -> list[int]:
        l0 = rng.choice([t for t in (32, 64, 128) if t <= dim])
        l1 = rng.choice([t for t in (l0, 2 * l0, 4 * l0) if t <= dim and t <= 256])
        return [l0, l1]

    mt, kt, nt = cube(M_), cube(K_), cube(N_)
    if pit != "PTO005":
        lines += m.comment("    ", ["L0/L1 tiles for the cube unit", "kL1 a multiple of kL0",
                                    "fits L0A/L0B (64 KiB) and L0C (128 KiB)"])
        lines.append(f"    {P}.set_cube_tile_shapes({mt}, {kt}, {nt})")
    mm = f"{P}.matmul({a}, {b}, {m.dt('fp32')}{', b_trans=True' if b_trans else ''})"
    mm_line = f"    acc = {mm}" if epi != "none" else f"    {out}[:] = {mm}"
    if pit == "PTO005":
        mm_line = tag(mm_line, "PTO005")
    if pit == "PTO001" and epi == "none":
        mm_line = tag(f"    {out} = {mm}", "PTO001")
    lines.append(mm_line)
    bt = f"{b}.float().T" if b_trans else f"{b}.float()"
    ref = f"{a}.float() @ {bt}"
    if epi != "none":
        rt = pick_row_tile(rng, M_, N_, "fp32")
        lines.append(f"    {P}.set_vec_tile_shapes({rt}, {Nd})")
        expr = {"bias": "acc + bias", "bias_relu": f"{P}.relu(acc + bias)", "relu": f"{P}.relu(acc)",
                "scale": "acc * 0.0625"}[epi]
        ref = {"bias": f"{ref} + bias", "bias_relu": f"torch.relu({ref} + bias)", "relu": f"torch.relu({ref})",
               "scale": f"({ref}) * 0.0625"}[epi]
        if pit == "PTO001":
            lines.append(tag(f"    {out} = {expr}", "PTO001"))
        else:
            lines.append(f"    {out}[:] = {expr}")
    return Kernel(name, kparams, lines, {out: ref})


def t_batched(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    B, S, H = rng.choice([2, 4, 8]), rng.choice([32, 64, 128]), rng.choice([64, 128, 256])
    Bd, Sd, Hd = m.dim("BATCH", B), m.dim("SEQ", S), m.dim("HIDDEN", H)
    variant = "bmm" if (pit is None and rng.random() < 0.4) else "elem"
    if variant == "bmm":
        name = m.unique(rng.choice(["attention_scores", "batched_qk", "bmm_scores"]))
        T = m.ann([Bd, Sd, Hd], "fp16")
        lines = [m.decorator()] + m.signature(name, [("q", T), ("k", T), ("scores", m.ann([Bd, Sd, Sd], "fp32"))])
        lines += m.docstring("Batched q @ k^T scaled by 1/sqrt(d).")
        scale = m.const("SCALE", round(1.0 / H ** 0.5, 6))
        c = min(S, 64)
        lines.append(f"    {P}.set_cube_tile_shapes([{c}, {c}], [64, 64], [{c}, {c}])")
        lines.append(f"    {P}.set_vec_tile_shapes(1, {c}, {c})")
        lines.append(f"    raw = {P}.matmul(q, k, {m.dt('fp32')}, b_trans=True)")
        lines.append(f"    scores[:] = raw * {scale}")
        return Kernel(name, [("q", (B, S, H), "fp16", "in"), ("k", (B, S, H), "fp16", "in"),
                             ("scores", (B, S, S), "fp32", "out")], lines,
                      {"scores": f"(q.float() @ k.float().transpose(-1, -2)) * {scale}"})
    name = m.unique(rng.choice(["residual_relu", "batched_bias_act", "seq_gate", "token_mix"]))
    T = m.ann([Bd, Sd, Hd], "fp32")
    lines = [m.decorator()] + m.signature(name, [("x", T), ("res", T), ("out", T)])
    lines += m.docstring("Residual add and activation over a [batch, seq, hidden] activation.")
    st = rng.choice([t for t in (8, 16, 32) if t <= S])
    tile = f"    {P}.set_vec_tile_shapes(1, {st}, {Hd})"
    op_pit = None
    if pit == "PTO003":
        tile = tag(f"    {P}.set_vec_tile_shapes({st}, {Hd})", "PTO003")
    elif pit == "PTO004":
        tile = tag(f"    {P}.set_vec_tile_shapes(1, {st}, {misaligned_last(rng, 'fp32', H)})", "PTO004")
    lines.append(tile)
    act, ract = rng.choice([(f"{P}.relu", "torch.relu"), (f"{P}.sigmoid", "torch.sigmoid"), (f"{P}.exp", "torch.exp")])
    first = "    h = x + res"
    lines.append(tag(first, op_pit) if op_pit else first)
    lines.append(f"    out[:] = {act}(h) * 0.5")
    shape = (B, S, H)
    return Kernel(name, [("x", shape, "fp32", "in"), ("res", shape, "fp32", "in"), ("out", shape, "fp32", "out")],
                  lines, {"out": f"{ract}(x + res) * 0.5"})


def t_dyn_rows(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["silu_tokens", "dyn_rows_exp", "token_scale", "rows_gelu_approx"]))
    hidden = rng.choice([64, 128, 256])
    H = m.const("HIDDEN", hidden)
    blk = rng.choice([8, 16, 32])
    BLK = m.const("BLOCK", blk)
    T = f"{P}.Tensor([{P}.DYNAMIC, {H}], {m.dt('fp32')})" if m.s.ann != "bracket" else \
        f"{P}.Tensor[[{P}.DYNAMIC, {H}], {m.dt('fp32')}]"
    lines = [m.decorator()] + m.signature(name, [("x", T), ("y", T)])
    lines += m.docstring("Rows only known at call time: static blocks plus a valid_shape tail.")
    lines.append(f"    {P}.set_vec_tile_shapes({BLK}, {H})")
    lines.append("    n = x.shape[0]")
    idx = rng.choice(["i", "blk", "r"])
    lines.append(f"    for {idx} in {P}.loop(({'n'} + {BLK} - 1) // {BLK}, name=\"row_blocks\", idx_name=\"{idx}\"):")
    lines.append(f"        valid = {P}.min({BLK}, n - {idx} * {BLK})")
    if pit == "PTO007":
        lines.append(tag(f"        print(\"block\", {idx}, \"valid rows\", valid)", "PTO007"))
    lines.append(f"        tile = {P}.view(x, [{BLK}, {H}], [{idx} * {BLK}, 0], valid_shape=[valid, {H}])")
    act, ract = rng.choice([(f"tile * {P}.sigmoid(tile)", "torch.nn.functional.silu(x)"),
                            (f"{P}.exp(tile * 0.5)", "torch.exp(x * 0.5)"),
                            (f"tile * {P}.sigmoid(tile * 1.702)", "x * torch.sigmoid(x * 1.702)")])
    lines.append(f"        {P}.assemble({act}, [{idx} * {BLK}, 0], y)")
    rows = rng.choice([40, 100, 130, 257])
    return Kernel(name, [("x", (rows, hidden), "fp32", "in"), ("y", (rows, hidden), "fp32", "out")], lines,
                  {"y": ract}, dyn_rows=rows)


def t_varlen(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["varlen_affine", "masked_seq_scale", "kv_scale", "seq_norm_shift"]))
    B, S, H = rng.choice([2, 4, 8]), rng.choice([32, 64, 128]), rng.choice([64, 128])
    Bd, Sd, Hd = m.const("BATCH", B), m.const("MAX_SEQ", S), m.const("HIDDEN", H)
    lines = [m.decorator()] + m.signature(name, [
        ("inp", m.ann([Bd, Sd, Hd], "fp32")), ("seq_lens", m.ann([Bd], "int32")), ("out", m.ann([Bd, Sd, Hd], "fp32"))])
    lines += m.docstring("Per-sequence transform honouring the real sequence lengths.")
    st = rng.choice([t for t in (16, 32) if t <= S])
    lines.append(f"    {P}.set_vec_tile_shapes(1, {st}, {Hd})")
    b = rng.choice(["b", "bi", "seq"])
    lines.append(f"    for {b} in {P}.loop({Bd}, name=\"batch\", idx_name=\"{b}\"):")
    cur = rng.choice(["cur_len", "cur_seq", "n_valid"])
    lines.append(f"        {cur} = seq_lens[{b}]")
    if pit == "PTO007":
        lines.append(tag(f"        print(\"seq\", {b}, \"len\", {cur})", "PTO007"))
    view = f"        part = {P}.view(inp, [1, {Sd}, {Hd}], [{b}, 0, 0], valid_shape=[1, {cur}, {Hd}])"
    if pit == "PTO006":
        view = tag(f"        part = {P}.view(inp, [1, {Sd}, {Hd}], [{b}, 0, 0])", "PTO006")
    lines += m.comment("        ", ["rows past the length are padding", "valid extent from the lengths tensor"])
    lines.append(view)
    lines.append(f"        out[{b}:{b} + 1, :, :] = part * 2.0 + 1.0")
    shape = (B, S, H)
    return Kernel(name, [("inp", shape, "fp32", "in"), ("seq_lens", (B,), "int32", "lens"),
                         ("out", shape, "fp32", "out")], lines,
                  {"out": "_varlen_expected(inp, seq_lens, out)"})


def t_unroll(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["affine_blocks", "unrolled_scale", "block_bias_add", "rows_unrolled"]))
    blk = rng.choice([16, 32])
    nblk = rng.choice([8, 16, 22]) if pit != "PTO011" else rng.choice([8, 16])
    cols = rng.choice([64, 128, 256])
    rows = blk * nblk
    R, C, BLK = m.const("ROWS", rows), m.const("COLS", cols), m.const("BLOCK", blk)
    T = m.ann([R, C], "fp32")
    lines = [m.decorator()] + m.signature(name, [("x", T), ("scale", m.ann(["1", C], "fp32")), ("y", T)])
    lines += m.docstring("y = x * scale, walking row blocks with an unrolled loop.")
    lines.append(f"    {P}.set_vec_tile_shapes({BLK}, {C})")
    use_loop_unroll = pit is None and rng.random() < 0.5
    i = rng.choice(["i", "blk", "r"])
    nb = f"{R} // {BLK}"
    if use_loop_unroll:
        ul = rng.choice([[4, 2], [8, 4], [4], [2]])
        lines.append(f"    for {i}, f in {P}.loop_unroll(0, {nb}, 1, name=\"blocks\", idx_name=\"{i}\", unroll_list={ul}):")
        lines.append(f"        part = {P}.view(x, [{BLK} * f, {C}], [{i} * {BLK}, 0])")
        lines.append(f"        {P}.assemble(part * scale, [{i} * {BLK}, 0], y)")
        return Kernel(name, [("x", (rows, cols), "fp32", "in"), ("scale", (1, cols), "fp32", "in"),
                             ("y", (rows, cols), "fp32", "out")], lines, {"y": "x * scale"})
    if pit == "PTO011":
        ul = rng.choice([[8], [1, 2, 4], [2, 4], [1, 2, 4, 8], [1, 8]])
    else:
        ul = rng.choice([[1, 2, 4], [1, 4], [1, 2], [1, 8]])
    lines.append(f"    for {i} in {P}.loop({nb}, name=\"blocks\", idx_name=\"{i}\", unroll_list={ul}):")
    lines.append(f"        part = {P}.view(x, [{BLK}, {C}], [{i} * {BLK}, 0])")
    if pit == "PTO011":
        lines += m.comment("        ", ["the first block also gets the bias"])
        lines.append(tag(f"        if {i} == 0:", "PTO011"))
        lines.append(f"            {P}.assemble(part * scale + 1.0, [{i} * {BLK}, 0], y)")
        lines.append("        else:")
        lines.append(f"            {P}.assemble(part * scale, [{i} * {BLK}, 0], y)")
        ref = f"torch.cat([x[:{blk}] * scale + 1.0, x[{blk}:] * scale])"
    else:
        lines.append(f"        {P}.assemble(part * scale, [{i} * {BLK}, 0], y)")
        ref = "x * scale"
    return Kernel(name, [("x", (rows, cols), "fp32", "in"), ("scale", (1, cols), "fp32", "in"),
                         ("y", (rows, cols), "fp32", "out")], lines, {"y": ref})


def t_accumulate(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["accumulate_grads", "block_sum", "running_sum", "sum_micro_batches"]))
    nb, rows, cols = rng.choice([4, 8, 16]), rng.choice([16, 32]), rng.choice([64, 128])
    NB, R, C = m.const("N_MICRO", nb), m.const("MB_ROWS", rows), m.const("MB_COLS", cols)
    lines = [m.decorator()] + m.signature(name, [("grads", m.ann([f"{NB} * {R}", C], "fp32")),
                                                 ("acc", m.ann([R, C], "fp32"))])
    lines += m.docstring("Sum of micro-batch blocks, accumulated across loop iterations.")
    lines.append(f"    {P}.set_vec_tile_shapes({R}, {C})")
    k = rng.choice(["k", "mb", "step"])
    local = pit == "PTO008" or (pit is None and rng.random() < 0.3)
    ul = "" if rng.random() < 0.4 else ", unroll_list=[1, 4]"
    if pit == "PTO011":
        ul = f", unroll_list={rng.choice([[1, 2, 4], [8], [2, 4], [1, 8]])}"
    sub = ", submit_before_loop=True" if rng.random() < 0.5 else ""
    if local:
        lines.append(f"    total = {P}.tensor([{R}, {C}], {m.dt('fp32')}, \"total\")")
        if pit is None:
            lines.append(f"    total[:] = {P}.full([{R}, {C}], 0.0, {m.dt('fp32')})")
        lines.append(f"    for {k} in {P}.loop({NB}, name=\"micro\", idx_name=\"{k}\"{ul}{sub}):")
        lines.append(f"        part = {P}.view(grads, [{R}, {C}], [{k} * {R}, 0])")
        upd = "        total[:] = total[:, :] + part"
        lines.append(tag(upd, "PTO008") if pit == "PTO008" else upd)
        lines.append(f"    acc[:] = {P}.clone(total)")
    else:
        lines.append(f"    for {k} in {P}.loop({NB}, name=\"micro\", idx_name=\"{k}\"{ul}{sub}):")
        lines.append(f"        part = {P}.view(grads, [{R}, {C}], [{k} * {R}, 0])")
        if pit == "PTO011":
            lines.append(tag(f"        if {k} == 0:", "PTO011"))
        else:
            lines.append(f"        if {P}.is_loop_begin({k}):")
        lines.append(f"            acc[:] = {P}.clone(part)")
        lines.append("        else:")
        lines.append("            acc[:] = acc + part")
    return Kernel(name, [("grads", (nb * rows, cols), "fp32", "in"), ("acc", (rows, cols), "fp32", "out")], lines,
                  {"acc": f"grads.reshape({nb}, {rows}, {cols}).sum(0)"})


def t_blocked2d(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["blocked_exp", "tiled_residual", "block_scale_2d", "causal_block_scale"]))
    rows, cols = rng.choice([128, 256]), rng.choice([128, 256])
    rb, cb = rng.choice([32, 64]), rng.choice([32, 64])
    R, C, RB, CB = m.const("ROWS", rows), m.const("COLS", cols), m.const("RB", rb), m.const("CB", cb)
    T = m.ann([R, C], "fp32")
    diag = pit == "PTO014" or (pit is None and rows == cols and rb == cb and rng.random() < 0.3)
    helper = None
    if diag:
        rows = cols
        C = R
        cb, CB = rb, RB
        T = m.ann([R, R], "fp32")
        helper = m.unique("_scale_block")
        hl = [f"def {helper}(src, dst, bi, bj):",
              '    """Plain helper: scale one block; diagonal blocks keep only their lower triangle."""',
              f"    blk = {P}.view(src, [{RB}, {RB}], [bi * {RB}, bj * {RB}])"]
        if pit == "PTO014":
            hl.append(tag("    if bi == bj:", "PTO014"))
        else:
            hl.append(f"    if {P}.cond(bi == bj):")
        hl += [f"        {P}.assemble({P}.tril(blk) * 0.5, [bi * {RB}, bj * {RB}], dst)",
               "    else:",
               f"        {P}.assemble(blk * 0.5, [bi * {RB}, bj * {RB}], dst)"]
        m.blocks.append(hl)
    lines = [m.decorator()] + m.signature(name, [("x", T), ("out", T)])
    lines += m.docstring("Walk row blocks and column blocks; each block is viewed, transformed, assembled.")
    lines.append(f"    {P}.set_vec_tile_shapes({RB}, {CB})")
    i, j = rng.choice([("i", "j"), ("r", "c"), ("bi", "bj"), ("row", "col")])
    outer_ul = ""
    inner_ul = ", unroll_list=[1, 2]" if (pit is None and rng.random() < 0.3) else ""
    if pit == "PTO010":
        outer_ul = f", unroll_list={rng.choice([[2], [1, 2], [4], [1, 2, 4]])}"
    inner_idx = j
    inner_var = j
    if pit == "PTO009":
        if rng.random() < 0.6:
            inner_idx = i
        else:
            inner_idx = i
            inner_var = i
            j = i
    outer = f"    for {i} in {P}.loop({R} // {RB}, name=\"row_blk\", idx_name=\"{i}\"{outer_ul}):"
    inner = f"        for {inner_var} in {P}.loop({C} // {CB}, name=\"col_blk\", idx_name=\"{inner_idx}\"{inner_ul}):"
    lines.append(tag(outer, "PTO010") if pit == "PTO010" else outer)
    lines.append(tag(inner, "PTO009") if pit == "PTO009" else inner)
    if diag:
        lines.append(f"            {helper}(x, out, {i}, {j})")
        ref = f"_blocked_tril_expected(x, {rb})"
    else:
        lines.append(f"            blk = {P}.view(x, [{RB}, {CB}], [{i} * {RB}, {j} * {CB}])")
        lines.append(f"            {P}.assemble({P}.exp(blk * 0.5), [{i} * {RB}, {j} * {CB}], out)")
        ref = "torch.exp(x * 0.5)"
    return Kernel(name, [("x", (rows, cols), "fp32", "in"), ("out", (rows, cols), "fp32", "out")], lines, {"out": ref})


def t_staged(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["staged_pipeline", "two_stage_update", "prescale_then_blocks"]))
    rows, cols = rng.choice([128, 256]), rng.choice([128, 256])
    R, C = m.const("ROWS", rows), m.const("COLS", cols)
    T = m.ann([R, C], "fp32")
    lines = [m.decorator()] + m.signature(name, [("x", T), ("bias", T), ("out", T)])
    lines += m.docstring("Scale, exp + bias, then halve.")
    rt = pick_row_tile(rng, rows, cols, "fp32")
    lines.append(f"    {P}.set_vec_tile_shapes({rt}, {C})")
    if pit == "PTO012":
        variant = rng.choice(["top_then_loop1", "two_loop1"])
        if variant == "top_then_loop1":
            lines.append("    scaled = x * 0.125")
            lines.append(tag(f"    for _ in {P}.loop(1, name=\"stage_exp\", idx_name=\"s1\"):", "PTO012"))
            lines.append(f"        out[:] = ({P}.exp(scaled) + bias) * 0.5")
        else:
            lines.append(f"    for _ in {P}.loop(1, name=\"stage_scale\", idx_name=\"s0\"):")
            lines.append(f"        shifted = {P}.exp(x * 0.125) + bias")
            lines.append(tag(f"    for _ in {P}.loop(1, name=\"stage_out\", idx_name=\"s1\"):", "PTO012"))
            lines.append("        out[:] = shifted * 0.5")
    else:
        blk = rng.choice([t for t in (16, 32, 64) if rows % t == 0 and t >= rt])
        BLK = m.const("STAGE_BLOCK", blk)
        lines.append(f"    shifted = {P}.exp(x * 0.125) + bias")
        lines += m.comment("    ", ["second stage per row block", "blocks are independent"])
        lines.append(f"    for s in {P}.loop({R} // {BLK}, name=\"stage_out\", idx_name=\"s\"):")
        lines.append(f"        part = {P}.view(shifted, [{BLK}, {C}], [s * {BLK}, 0])")
        lines.append(f"        {P}.assemble(part * 0.5, [s * {BLK}, 0], out)")
    return Kernel(name, [("x", (rows, cols), "fp32", "in"), ("bias", (rows, cols), "fp32", "in"),
                         ("out", (rows, cols), "fp32", "out")], lines, {"out": "(torch.exp(x * 0.125) + bias) * 0.5"})


def t_helpers(m: Module, pit: str | None) -> Kernel:
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["norm_act", "residual_block", "mlp_tail", "gated_rows"]))
    rows, hidden = rng.choice([64, 128, 256]), rng.choice([128, 256, 512])
    blk = rng.choice([t for t in (8, 16, 32) if rows % t == 0])
    R, H, BLK = m.const("ROWS", rows), m.const("HIDDEN", hidden), m.const("ROW_BLOCK", blk)
    eps = m.const("EPS", 1e-5)
    act = m.unique("_act")
    norm = m.unique("_rms")
    m.blocks.append([f"def {norm}(x):",
                     '    """Plain helper, executed while tracing: x * rsqrt(mean(x^2) + eps)."""',
                     f"    ms = {P}.sum(x * x, -1, keepdim=True) * (1.0 / {H})",
                     f"    return x * {P}.rsqrt(ms + {eps})"])
    if pit == "PTO014":
        m.blocks.append([f"def {act}(x, blk_id):",
                         '    """Plain helper: the first block gets a plain sigmoid, the others SiLU."""',
                         tag("    if blk_id == 0:", "PTO014"),
                         f"        return {P}.sigmoid(x)",
                         f"    return x * {P}.sigmoid(x)"])
        call = f"{act}({norm}(part), r)"
        ref = f"_helpers_expected(x, {blk})"
    else:
        fast = rng.random() < 0.5
        m.blocks.append([f"def {act}(x, fast={fast}):",
                         '    """Plain helper; `fast` is a Python bool, so this branch is static."""',
                         "    if fast:",
                         f"        return x * {P}.sigmoid(x * 1.702)",
                         f"    return x * {P}.sigmoid(x)"])
        call = f"{act}({norm}(part))"
        sig = "x_n * torch.sigmoid(x_n * 1.702)" if fast else "x_n * torch.sigmoid(x_n)"
        ref = f"(lambda x_n: {sig})(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + {eps}))"
    use_fn = pit is None and rng.random() < 0.4
    fn = None
    if use_fn:
        fn = m.unique("add_residual")
        T = m.ann([R, H], "fp32")
        m.blocks.append([f"@{m.s.FN}",
                         f"def {fn}(a: {T}, b: {T}, dst: {T}):",
                         '    """Inlined by the pypto parser: no return, write through `dst`."""',
                         "    dst[:] = a + b"])
    T = m.ann([R, H], "fp32")
    params = [("x", T)] + ([("res", T)] if use_fn else []) + [("out", T)]
    lines = [m.decorator()] + m.signature(name, params)
    lines += m.docstring("Normalise and activate each row block through plain helpers.")
    lines.append(f"    {P}.set_vec_tile_shapes({BLK}, {H})")
    target = "tmp" if use_fn else "out"
    if use_fn:
        lines.append(f"    tmp = {P}.tensor([{R}, {H}], {m.dt('fp32')}, \"tmp\")")
    lines.append(f"    for r in {P}.loop({R} // {BLK}, name=\"rows\", idx_name=\"r\"):")
    lines.append(f"        part = x[r * {BLK}:(r + 1) * {BLK}, :]")
    lines.append(f"        {target}[r * {BLK}:(r + 1) * {BLK}, :] = {call}")
    kparams = [("x", (rows, hidden), "fp32", "in")]
    if use_fn:
        lines.append(f"    {fn}(tmp, res, out)")
        kparams.append(("res", (rows, hidden), "fp32", "in"))
        ref = f"({ref}) + res"
    kparams.append(("out", (rows, hidden), "fp32", "out"))
    return Kernel(name, kparams, lines, {"out": ref})


def t_legacy(m: Module, pit: str | None) -> Kernel:
    """Pre-jit launcher: records a graph with `with pypto.function(...)` on from_torch tensors."""
    rng, P = m.rng, m.s.P
    name = m.unique(rng.choice(["launch_add_relu", "legacy_scale_add", "launch_bias_relu_legacy"]))
    rows, cols = rng.choice([64, 128]), rng.choice([64, 128, 256])
    R, C = m.const("ROWS", rows), m.const("COLS", cols)
    m.std_imports.add("import torch")
    lines = [f"def {name}(x_t, y_t, out_t, device_id=0):",
             '    """Legacy flow: convert torch tensors, record the graph, launch on leaving the context."""']
    if pit != "PTO002":
        lines.append("    torch.npu.set_device(device_id)")
    lines += [f"    x = {P}.from_torch(x_t, \"x\")",
              f"    y = {P}.from_torch(y_t, \"y\")",
              f"    out = {P}.from_torch(out_t, \"out\")"]
    lines.append(f"    with {P}.function(\"{name}\", x, y, out):")
    lines.append(f"        for i in {P}.loop(2, name=\"halves\", idx_name=\"i\"):")
    lines.append(f"            {P}.set_vec_tile_shapes(32, {C})")
    lines.append(f"            part_x = {P}.view(x, [{R} // 2, {C}], [i * ({R} // 2), 0])")
    lines.append(f"            part_y = {P}.view(y, [{R} // 2, {C}], [i * ({R} // 2), 0])")
    if pit == "PTO014":
        lines.append(tag("            if i == 0:", "PTO014"))
    else:
        lines.append(f"            if {P}.cond({P}.is_loop_begin(i)):")
    lines.append(f"                {P}.assemble({P}.relu(part_x + part_y), [i * ({R} // 2), 0], out)")
    lines.append("            else:")
    lines.append(f"                {P}.assemble(part_x + part_y, [i * ({R} // 2), 0], out)")
    k = Kernel(name, [("x_t", (rows, cols), "fp32", "in"), ("y_t", (rows, cols), "fp32", "in"),
                      ("out_t", (rows, cols), "fp32", "out")], lines,
               {"out_t": f"torch.cat([torch.relu(x_t[:{rows // 2}] + y_t[:{rows // 2}]), "
                         f"x_t[{rows // 2}:] + y_t[{rows // 2}:]])"})
    k.call_pit = "PTO002" if pit == "PTO002" else None  # reported where the host launches it on NPU tensors
    return k


TEMPLATES = {
    "elementwise": (t_elementwise, {"PTO001", "PTO003", "PTO004", "PTO005", "PTO013"}, 14),
    "softmax": (t_softmax, {"PTO001", "PTO003", "PTO004"}, 10),
    "norm": (t_norm, {"PTO001", "PTO004"}, 10),
    "matmul": (t_matmul, {"PTO001", "PTO005"}, 10),
    "batched": (t_batched, {"PTO003", "PTO004"}, 6),
    "dyn_rows": (t_dyn_rows, {"PTO007"}, 7),
    "varlen": (t_varlen, {"PTO006", "PTO007"}, 6),
    "unroll": (t_unroll, {"PTO011"}, 7),
    "accumulate": (t_accumulate, {"PTO008", "PTO011"}, 7),
    "blocked2d": (t_blocked2d, {"PTO009", "PTO010", "PTO014"}, 7),
    "staged": (t_staged, {"PTO012"}, 5),
    "helpers": (t_helpers, {"PTO014"}, 7),
    "legacy": (t_legacy, {"PTO002", "PTO014"}, 0),  # only added as an extra block, see _assemble
}


# --------------------------------------------------------------------------- host code
REF_HELPERS = {
    "_varlen_expected": [
        "def _varlen_expected(inp, seq_lens, out):",
        '    """Only the first seq_lens[b] rows of each sequence are written."""',
        "    expected = out.clone()",
        "    for b, n in enumerate(seq_lens.tolist()):",
        "        expected[b, :n] = inp[b, :n] * 2.0 + 1.0",
        "    return expected"],
    "_blocked_tril_expected": [
        "def _blocked_tril_expected(x, blk):",
        '    """Diagonal blocks keep their lower triangle; everything is scaled by 0.5."""',
        "    expected = x * 0.5",
        "    for b in range(x.shape[0] // blk):",
        "        sl = slice(b * blk, (b + 1) * blk)",
        "        expected[sl, sl] = torch.tril(x[sl, sl]) * 0.5",
        "    return expected"],
    "_helpers_expected": [
        "def _helpers_expected(x, blk):",
        "    n = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)",
        "    y = n * torch.sigmoid(n)",
        "    y[:blk] = torch.sigmoid(n[:blk])",
        "    return y"],
}
CHECK_UTIL = [
    "def _check(name, got, want, atol=1e-2, rtol=1e-2):",
    '    """Compare a kernel output with its torch reference and print one line."""',
    "    got, want = got.float().cpu(), want.float()",
    "    ok = torch.allclose(got, want, atol=atol, rtol=rtol)",
    "    err = (got - want).abs().max().item()",
    "    print(f\"{name:28s} {'ok ' if ok else 'BAD'} max_abs_err={err:.3e}\")",
    "    return ok"]
BENCH_UTIL = [
    "def _bench(fn, *args, iters=5):",
    '    """Average wall time of fn(*args) in ms (SIM mode re-traces and re-compiles every call)."""',
    "    fn(*args)",
    "    t0 = time.perf_counter()",
    "    for _ in range(iters):",
    "        fn(*args)",
    "    return (time.perf_counter() - t0) * 1000.0 / iters"]


def host_block(m: Module, kernels: list[Kernel]) -> list[str]:
    """Host code: torch inputs, kernel calls, reference checks, under `if __name__ == "__main__":`."""
    rng, s = m.rng, m.s
    use_check = rng.random() < 0.45
    use_bench = rng.random() < 0.2
    layout = rng.choices(["inline", "funcs", "argparse"], weights=[40, 35, 25])[0]
    utils: list[list[str]] = []
    needed: list[str] = []
    runs: list[tuple[str, list[str]]] = []
    for k in kernels:
        body: list[str] = []
        for pname, shape, key, role in k.params:
            dims = ", ".join(str(d) for d in shape)
            if k.dyn_rows is not None and len(shape) == 2:
                dims = f"{k.dyn_rows}, {shape[1]}"
            dt = "" if key == "fp32" else f", dtype={DTYPES[key][2]}"
            if role == "lens":
                body.append(f"{pname} = torch.randint(1, {k.params[0][1][1]} + 1, ({dims},), dtype=torch.int32)")
            elif role == "out":
                body.append(f"{pname} = torch.zeros({dims}{dt})")
            else:
                body.append(f"{pname} = torch.randn({dims}{dt})")
        names = [p[0] for p in k.params]
        if s.npu_host:
            dev = [f"d_{n}" for n in names]
            body.append(f"{', '.join(dev)} = {', '.join(n + '.npu()' for n in names)}")
            call_args = ", ".join(dev)
        else:
            call_args = ", ".join(names)
        body.append(tag(f"{k.name}({call_args})", k.call_pit) if k.call_pit else f"{k.name}({call_args})")
        for oname, expr in k.ref.items():
            for helper in REF_HELPERS:
                if helper in expr and helper not in needed:
                    needed.append(helper)
            got = f"d_{oname}" if s.npu_host else oname
            body.append(f"expected_{oname} = {expr}")
            if use_check:
                body.append(f"_check(\"{k.name}.{oname}\", {got}, expected_{oname})")
            elif rng.random() < 0.5:
                body.append(f"print(\"{k.name}:\", torch.allclose({got}.float().cpu(), expected_{oname}.float(), "
                            f"atol=1e-2, rtol=1e-2))")
            else:
                body.append(f"print(\"{k.name} max abs err:\", ({got}.float().cpu() - expected_{oname}.float())"
                            f".abs().max().item())")
        if use_bench:
            body.append(f"print(\"{k.name}: %.1f ms/call\" % _bench({k.name}, {call_args}))")
        runs.append((k.name, body))
    for helper in needed:
        utils.append(REF_HELPERS[helper])
    if use_check:
        utils.append(CHECK_UTIL)
    if use_bench:
        utils.append(BENCH_UTIL)
        m.std_imports.add("import time")
    out: list[str] = []
    for u in utils:
        out += ["", ""] + u
    setup: list[str] = []
    if s.npu_host:
        setup.append("import torch_npu  # noqa: F401")
        if m.allow_set_device and rng.random() < 0.7:
            setup.append('torch.npu.set_device(int(os.environ.get("TILE_FWK_DEVICE_ID", "0")))')
            m.std_imports.add("import os")
    seed = rng.randint(0, 9999)
    if layout == "inline":
        main = ['if __name__ == "__main__":'] + [f"    {ln}" for ln in setup] + [f"    torch.manual_seed({seed})"]
        for name, body in runs:
            if rng.random() < 0.3:
                main.append(f"    # {name}")
            main += [f"    {ln}" for ln in body]
        return out + ["", ""] + main
    for name, body in runs:
        out += ["", "", f"def _run_{name}():"] + [f"    {ln}" for ln in body]
    if layout == "funcs":
        main = ['if __name__ == "__main__":'] + [f"    {ln}" for ln in setup] + [f"    torch.manual_seed({seed})"]
        main += [f"    _run_{name}()" for name, _ in runs]
        return out + ["", ""] + main
    m.std_imports.add("import argparse")
    choices = ", ".join(repr(n) for n, _ in runs)
    main = ["def main(argv=None):",
            "    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])",
            f"    parser.add_argument(\"--seed\", type=int, default={seed})",
            f"    parser.add_argument(\"--only\", choices=[{choices}], default=None)",
            "    args = parser.parse_args(argv)"]
    main += [f"    {ln}" for ln in setup]
    main.append("    torch.manual_seed(args.seed)")
    for name, _ in runs:
        main += [f"    if args.only in (None, {name!r}):", f"        _run_{name}()"]
    return out + ["", ""] + main + ["", "", 'if __name__ == "__main__":', "    main()"]


# --------------------------------------------------------------------------- file assembly
DOCS = [
    "Kernels for the {part} of the {model} block.",
    "PyPTO kernels: {part} ({model}).",
    "{model}: {part} kernels, written against the pypto 0.2.0 frontend.",
    "Ascend kernels for {part}, ported from the {model} reference implementation.",
]
PARTS = ["attention epilogue", "MLP", "normalisation", "decoder layer", "token mixer", "output projection",
         "embedding post-processing", "loss computation", "router", "KV-cache update"]
MODELS = ["Llama-style", "GPT-2", "BERT", "ViT", "Qwen-like", "Mixtral-like", "T5", "DeepSeek-like"]


def generate_file(seed: int, index: int) -> tuple[str, dict]:
    """Source text and manifest entry of file `index` (deterministic in (seed, index))."""
    # the pitfall (or none) is fixed per file; retries only redraw the content around it
    prng = random.Random(f"{seed}:{index}:pit")
    pit = prng.choice(PITFALL_CODES) if prng.random() < PITFALL_RATE else None
    for attempt in range(50):
        rng = random.Random(f"{seed}:{index}:{attempt}")
        text, kernels, pits = _assemble(rng, pit)
        n = text.count("\n")
        if MIN_LINES <= n <= MAX_LINES:
            ast.parse(text)
            return text, {"lines": n, "kernels": kernels, "pitfalls": pits}
    raise RuntimeError(f"could not generate file {index} within {MIN_LINES}-{MAX_LINES} lines")


def _assemble(rng: random.Random, pit: str | None) -> tuple[str, list[str], list[dict]]:
    style = make_style(rng)
    m = Module(rng, style)
    n_kernels = rng.choices([1, 2, 3, 4], weights=[20, 35, 30, 15])[0]
    names = [n for n in TEMPLATES if n != "legacy"]
    weights = [TEMPLATES[n][2] for n in names]
    chosen = rng.choices(names, weights=weights, k=n_kernels)
    pit_slot = None
    legacy: str | None = None  # the legacy launcher is an extra block, never a jit slot
    if pit is not None:
        carriers = [n for n, (_, sup, _) in TEMPLATES.items() if pit in sup]
        tmpl = rng.choice(carriers)
        if tmpl == "legacy":
            legacy = pit
        else:
            pit_slot = rng.randrange(n_kernels)
            chosen[pit_slot] = tmpl
    elif rng.random() < 0.03:
        legacy = "clean"  # a legacy launcher done right (device set first)
    if pit == "PTO002":
        # the pitfall is a launch on NPU tensors with no set_device anywhere in the program
        style.npu_host, m.allow_set_device = True, False
    legacy_at = rng.randint(0, n_kernels) if legacy else -1
    kernels: list[Kernel] = []
    if legacy:
        chosen.insert(legacy_at, "legacy")
    for slot, tname in enumerate(chosen):
        if legacy and slot == legacy_at:
            k = t_legacy(m, None if legacy == "clean" else legacy)
            kernels.append(k)
            m.blocks.append(k.lines)
            continue
        if legacy and slot > legacy_at:
            slot -= 1
        # a template appends the helpers it needs to m.blocks itself, so they precede the kernel
        k = TEMPLATES[tname][0](m, pit if slot == pit_slot else None)
        kernels.append(k)
        m.blocks.append(k.lines)
    host = host_block(m, kernels)
    # ---- header
    doc = rng.choice(DOCS).format(part=rng.choice(PARTS), model=rng.choice(MODELS))
    header = ['"""' + doc]
    if rng.random() < 0.6:
        header += ["", rng.choice([
            "Shapes are static unless marked DYNAMIC; outputs are written in place.",
            "Every kernel writes its results into the output tensors passed by the caller.",
            "Run on an NPU with torch_npu, or in SIM mode on a CPU host for compile checks.",
            "Tile shapes follow the 32-byte alignment rule of the vector unit."])]
    header.append('"""')
    std = sorted(m.std_imports | {"import torch"})
    if rng.random() < 0.2:
        std = sorted(set(std) | {"import math"})
    imports = std + [""] + style.imports if rng.random() < 0.8 else style.imports + std
    consts = [f"{k} = {v}" for k, v in m.consts.items()]
    if rng.random() < 0.3 and consts:
        consts.insert(0, rng.choice(["# problem sizes", "# shapes and dtypes", "# ---- configuration"]))
    lines = header + imports + ["", ""] + consts
    sections = rng.random() < 0.35
    for block in m.blocks:
        lines += ["", ""]
        if sections and block and block[0].startswith("@") and "frontend.function" not in block[0] \
                and not block[0].startswith(f"@{style.FN}"):
            name = next(ln for ln in block if ln.startswith("def ")).split("(")[0][4:]
            lines += [f"# {'-' * 8} {name} {'-' * max(4, 70 - len(name))}"]
        lines += block
    lines += host
    text = "\n".join(lines) + "\n"
    # strip tags, recording pitfall lines
    out_lines, pits = [], []
    for n, line in enumerate(text.split("\n"), 1):
        if TAG in line:
            line, code = line.split(TAG)
            pits.append({"code": code, "line": n})
        out_lines.append(line)
    text = "\n".join(out_lines)
    return text, [k.name for k in kernels], pits


def generate(outdir: Path, n: int, seed: int) -> dict:
    outdir.mkdir(parents=True, exist_ok=True)
    manifest = {"generator": "bench/corpus.py", "seed": seed, "n": n, "files": {}}
    for i in range(n):
        text, entry = generate_file(seed, i)
        name = f"kernel_{i:05d}.py"
        (outdir / name).write_text(text)
        manifest["files"][name] = entry
    (outdir / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def check(outdir: Path) -> list[str]:
    """Problems found in an existing corpus directory (empty list = fine)."""
    problems = []
    manifest = json.loads((outdir / "manifest.json").read_text())
    for name, entry in manifest["files"].items():
        text = (outdir / name).read_text()
        try:
            ast.parse(text, filename=name)
        except SyntaxError as exc:
            problems.append(f"{name}: {exc}")
        n = text.count("\n")
        if not MIN_LINES <= n <= MAX_LINES:
            problems.append(f"{name}: {n} lines")
        if n != entry["lines"]:
            problems.append(f"{name}: manifest says {entry['lines']} lines, file has {n}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate a deterministic corpus of PyPTO kernel files.")
    ap.add_argument("outdir", type=Path)
    ap.add_argument("-n", type=int, default=1000, help="number of files (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", action="store_true", help="only check an existing corpus directory")
    ns = ap.parse_args(argv)
    if not ns.check:
        manifest = generate(ns.outdir, ns.n, ns.seed)
        files = manifest["files"].values()
        with_pit = sum(1 for e in files if e["pitfalls"])
        print(f"wrote {ns.n} files to {ns.outdir} ({with_pit} with a pitfall, "
              f"{sum(e['lines'] for e in files)} lines)", file=sys.stderr)
    problems = check(ns.outdir)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
