"""Hypothesis strategies for generated PyPTO kernels and for broken/odd Python.

The kernels are built from the statement shapes real authors write, with random names,
shapes, tiles, loops, branches and the documented pitfalls mixed in, so every rule and
every fix gets exercised by the property tests.
"""

from __future__ import annotations

from hypothesis import strategies as st

IMPORTS = [
    ("import pypto\n", "pypto", "@pypto.frontend.jit"),
    ("import pypto as pto\n", "pto", "@pto.frontend.jit()"),
    ("from pypto import frontend\nimport pypto\n", "pypto", "@frontend.jit"),
    ("from pypto.frontend import jit\nimport pypto as P\n", "P", "@jit(runtime_options={})"),
]
DTYPES = ["DT_FP32", "DT_FP16", "DT_BF16", "DT_INT32"]
NAMES = ["a", "b", "x", "t", "tmp", "acc", "u", "v"]


@st.composite
def kernels(draw) -> str:
    imports, p, deco = draw(st.sampled_from(IMPORTS))
    rows = draw(st.sampled_from([8, 16, 32, 64, 128]))
    cols = draw(st.sampled_from([8, 16, 32, 64, 256]))
    dtype = draw(st.sampled_from(DTYPES))
    ann = f"{p}.Tensor(({rows}, {cols}), {p}.{dtype})"
    lines = [imports, "\n"]
    if draw(st.booleans()):
        lines.append("def helper(i, src, dst):\n    if i == 0:\n        dst[:] = src + 1.0\n    print(i)\n\n")
    lines.append(f"{deco}\ndef kernel(a: {ann}, b: {ann}, out: {ann}):\n")
    body: list[str] = []
    draw_block(draw, body, p, depth=1, rows=rows, cols=cols, loop_vars=[], budget=[draw(st.integers(2, 14))])
    if not _has_statement(body):
        body.append("    pass\n")
    lines.extend(body)
    if draw(st.booleans()):
        lines.append("\n\nif __name__ == '__main__':\n    import torch\n    print('host')\n")
    return "".join(lines)


def draw_block(draw, out, p, depth, rows, cols, loop_vars, budget):
    ind = "    " * depth
    count = draw(st.integers(1, 4))
    for _ in range(count):
        if budget[0] <= 0:
            return
        budget[0] -= 1
        kind = draw(st.sampled_from([
            "tile", "tile_bad", "op", "write", "move", "rebind", "augrebind", "local", "print",
            "loop", "loop", "loop1", "if_sym", "if_static", "view", "assemble", "sum", "matmul",
            "helper", "comment", "pyfor",
        ]))
        name = draw(st.sampled_from(NAMES))
        src = draw(st.sampled_from(["a", "b"]))
        if kind == "tile":
            out.append(f"{ind}{p}.set_vec_tile_shapes({min(rows, 32)}, {cols})\n")
        elif kind == "tile_bad":
            dims = draw(st.sampled_from(["7", "32, 7", "0, 32", "1, 2, 3, 4, 5", "16, 12"]))
            out.append(f"{ind}{p}.set_vec_tile_shapes({dims})\n")
        elif kind == "op":
            op = draw(st.sampled_from(["+", "*", "-"]))
            out.append(f"{ind}{name} = {src} {op} {draw(st.sampled_from(['a', 'b', '2.0', '1']))}\n")
        elif kind == "write":
            out.append(f"{ind}out[:] = {src} + {draw(st.sampled_from(['a', 'b', '1.0']))}\n")
        elif kind == "move":
            out.append(f"{ind}out.move({p}.exp({src}))\n")
        elif kind == "rebind":
            out.append(f"{ind}out = {src} * 2.0\n")
        elif kind == "augrebind":
            out.append(f"{ind}out += {src}\n")
        elif kind == "local":
            out.append(f"{ind}{name} = {p}.tensor([{rows}, {cols}], {p}.DT_FP32, '{name}')\n")
            if draw(st.booleans()):
                out.append(f"{ind}out[:] = {name} + a\n")
        elif kind == "print":
            out.append(f"{ind}print('value', {loop_vars[-1] if loop_vars else 1})\n")
        elif kind in ("loop", "loop1") and depth < 4:
            var = draw(st.sampled_from(["i", "j", "k", "_"]))
            if kind == "loop1":
                header = f"{p}.loop(1)"
            else:
                extra = []
                if draw(st.booleans()):
                    extra.append(f"idx_name='{draw(st.sampled_from(['i', 'j', 'k']))}'")
                if draw(st.booleans()):
                    extra.append(f"unroll_list={draw(st.sampled_from(['[1]', '[4]', '[1, 2, 4]', '[8]', '[4, 1]']))}")
                fn = draw(st.sampled_from(["loop", "loop"]))
                header = f"{p}.{fn}({draw(st.sampled_from([2, 4, 22]))}{''.join(', ' + e for e in extra)})"
            out.append(f"{ind}for {var} in {header}:\n")
            start = len(out)
            draw_block(draw, out, p, depth + 1, rows, cols, loop_vars + [var if var != "_" else "0"], budget)
            if not _has_statement(out[start:]):
                out.append(f"{ind}    pass\n")
        elif kind == "if_sym" and loop_vars:
            v = loop_vars[-1]
            test = draw(st.sampled_from([f"{v} == 0", f"{p}.is_loop_begin({v})", f"{v} > 1"]))
            out.append(f"{ind}if {test}:\n{ind}    out[:] = a + b\n")
            if draw(st.booleans()):
                out.append(f"{ind}else:\n{ind}    out[:] = a - b\n")
        elif kind == "if_static":
            out.append(f"{ind}if {rows} > 16:\n{ind}    out[:] = {src} * 3.0\n")
        elif kind == "view" and loop_vars:
            v = loop_vars[-1]
            out.append(f"{ind}cur = lens[{v}] if False else 0\n")
            out.append(f"{ind}{name} = {p}.view({src}, [{rows}, {cols}], [0, 0])\n")
        elif kind == "assemble":
            out.append(f"{ind}{p}.assemble({src} + 1.0, [0, 0], out)\n")
        elif kind == "sum":
            out.append(f"{ind}{name} = {p}.sum({src}, {draw(st.sampled_from(['-1', '0', '1']))}, keepdim={draw(st.booleans())})\n")
        elif kind == "matmul":
            if draw(st.booleans()):
                out.append(f"{ind}{p}.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])\n")
            out.append(f"{ind}{name} = {p}.matmul({src}, b, {p}.DT_FP32)\n")
        elif kind == "helper":
            out.append(f"{ind}helper({loop_vars[-1] if loop_vars else 0}, a, out)\n")
        elif kind == "comment":
            out.append(f"{ind}# note: {draw(st.sampled_from(['tile', 'é ünïcode', 'noqa', 'noqa: PTO001']))}\n")
        elif kind == "pyfor":
            out.append(f"{ind}for r in range({draw(st.integers(0, 3))}):\n{ind}    out[:] = out + {src}\n")


def _has_statement(lines) -> bool:
    return any(line.strip() and not line.strip().startswith("#") for line in lines)


@st.composite
def mutated(draw, base=kernels()) -> str:
    """A generated kernel with a few random character edits: mostly broken Python."""
    text = draw(base)
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        op = draw(st.sampled_from(["delete", "insert", "dup_line"]))
        if op == "delete":
            text = text[:i] + text[i + 1:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(list("():[]=,.#'\"\\\t\n x0é\x00"))) + text[i:]
        else:
            lines = text.splitlines(True)
            j = draw(st.integers(0, len(lines) - 1))
            lines.insert(j, lines[j])
            text = "".join(lines)
    return text
