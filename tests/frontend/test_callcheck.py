"""Calls checked against pypto's signatures (``frontend/callcheck.py``, ``signatures.py``).

The binder must say what CPython says: a property test builds a real function from a random
signature and calls it with a random call; either both accept or both raise.
"""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import given, settings, strategies as st

from pypto_ast import frontend, ir
from pypto_ast.analysis.engine import lint_text
from pypto_ast.frontend import api, callcheck, signatures
from pypto_ast.frontend.errors import FrontendError
from pypto_ast.settings import Settings
from pypto_ast.source import SourceFile

HEAD = "import pypto\n\n@pypto.frontend.jit\n"
F32 = "pypto.Tensor((64, 64), pypto.DT_FP32)"


def _call(text: str) -> ast.Call:
    return ast.parse(text, mode="eval").body


def _source(sig: tuple) -> str:
    params, required, posonly, varargs, kwonly, kwonly_required, varkw = sig
    parts = [p if i < required else f"{p}=None" for i, p in enumerate(params)]
    if posonly:
        parts.insert(posonly, "/")
    if varargs:
        parts.append("*args")
    elif kwonly:
        parts.append("*")
    parts += [k if k in kwonly_required else f"{k}=None" for k in kwonly]
    if varkw:
        parts.append("**kwargs")
    return f"def f({', '.join(parts)}):\n    pass\n"


NAMES = ["a", "b", "c", "d", "e"]


@st.composite
def signatures_and_calls(draw):
    names = draw(st.permutations(NAMES))
    n_pos = draw(st.integers(0, 3))
    params = tuple(names[:n_pos])
    required = draw(st.integers(0, n_pos))
    posonly = draw(st.integers(0, n_pos))
    varargs = draw(st.booleans())
    kwonly = tuple(names[n_pos:n_pos + draw(st.integers(0, 2))])
    kwonly_required = tuple(k for k in kwonly if draw(st.booleans()))
    varkw = draw(st.booleans())
    sig = (params, required, posonly, varargs, kwonly, kwonly_required, varkw)
    n_args = draw(st.integers(0, 4))
    keywords = draw(st.lists(st.sampled_from(NAMES + ["zz"]), max_size=3, unique=True))
    call = "f(" + ", ".join([str(i) for i in range(n_args)] + [f"{k}=0" for k in keywords]) + ")"
    return sig, call


@settings(max_examples=400, deadline=None)
@given(signatures_and_calls())
def test_the_binder_agrees_with_cpython(case):
    sig, call = case
    env: dict = {}
    exec(_source(sig), env)
    try:
        eval(call, env)
        python_rejects = False
    except TypeError:
        python_rejects = True
    assert (callcheck.rejection(sig, _call(call)) is not None) == python_rejects, (_source(sig), call)


def test_spread_arguments_are_not_judged():
    sig = (("input", "dim"), 2, 0, False, ("keepdim",), (), False)
    assert callcheck.rejection(sig, _call("f(*xs)")) is None
    assert callcheck.rejection(sig, _call("f(x, **opts)")) is None
    # a keyword the signature lacks is wrong whatever a spread holds
    assert callcheck.rejection(sig, _call("f(x, -1, keepdims=True, **opts)")) is not None


def test_the_table_names_only_pypto_functions_and_methods():
    assert len(signatures.SIGNATURES) > 500
    for qual, entry in signatures.SIGNATURES.items():
        assert api.known(qual), qual
        assert set(entry) <= {"both", "0.2.0", "head"} and entry, qual
        for sig in entry.values():
            params, required, posonly, varargs, kwonly, kwonly_required, varkw = sig
            assert 0 <= required <= len(params) and 0 <= posonly <= len(params), qual
            assert set(kwonly_required) <= set(kwonly), qual


def test_the_message_renders_the_release_signature_and_a_close_name():
    found = callcheck.rejections("pypto.sum", _call("pypto.sum(x, -1, keepdims=True)"))
    assert set(found) == {"0.2.0", "head"}
    assert "`keepdims`" in found["0.2.0"] and "did you mean `keepdim`?" in found["0.2.0"]
    assert "pypto.sum(input, dim, keepdim=...)" in found["0.2.0"]
    # the later release dropped add's alpha: only it rejects the call
    assert set(callcheck.rejections("pypto.add", _call("pypto.add(a, b, alpha=2.0)"))) == {"head"}


def lower_source(text: str) -> ir.Program:
    return frontend.lower(frontend.read(SourceFile.parse(text, "k.py")))[0]


def _lint(code: str, target: str = "0.2.0"):
    result = lint_text(code, "k.py", Settings(target=target))
    assert result.failure is None, result.failure
    return [(d.code, d.span.start.line) for d in result.diagnostics]


KEEPDIMS = HEAD + textwrap.dedent(f"""\
    def k(a: {F32}, out: pypto.Tensor((64, 1), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 64)
        for i in pypto.loop(2, name="L", idx_name="i"):
            v = pypto.view(a, [32, 64], [i * 32, 0], validshape=[32, 64])
            out[i * 32:(i + 1) * 32, :] = pypto.sum(v, -1, keepdims=True)
    """)


def test_misspelt_keywords_are_lint_findings_at_the_call():
    assert _lint(KEEPDIMS) == [("PTO027", 7), ("PTO027", 8)]


def test_the_transpiler_refuses_what_every_release_rejects():
    with pytest.raises(FrontendError) as err:
        lower_source(KEEPDIMS)
    assert err.value.code == "PTO106" and "validshape" in str(err.value)


def test_a_call_only_one_release_rejects_follows_the_target_and_still_lowers():
    code = HEAD + f"def k(a: {F32}, b: {F32}, out: {F32}):\n    pypto.set_vec_tile_shapes(32, 64)\n" \
                  "    out[:] = pypto.add(a, b, alpha=2.0)\n"
    assert _lint(code) == []
    assert _lint(code, "head") == [("PTO027", 6)]
    program = lower_source(code)
    add = next(op for b in ir.blocks(program) for op in b.ops if op.opcode == "add")
    assert add.attr("alpha") == 2.0
