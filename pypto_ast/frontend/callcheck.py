"""Calls that pypto's own Python signatures reject.

pypto's ops are plain Python functions (wrapped by ``functools.wraps`` pass-throughs), so a call
with a misspelt keyword (``valid_shape`` written ``validshape``, ``keepdim`` written
``keepdims``), one positional argument too many or a required one missing raises TypeError the
moment pypto traces it.  pypto-ast would otherwise model such a call as if the stray argument
were absent -- a reduction without the keepdim the user meant, a view without its valid shape --
so the call is checked against the signature of each release (``signatures.py``, generated from
both sources) before it is modelled.  A function without a recorded signature is not checked.
"""

from __future__ import annotations

import ast
import difflib

from . import signatures

VERSIONS = ("0.2.0", "head")
# keywords PTO019 (unknown-option) already judges, with the option tables of both releases
OPTION_CALLS = frozenset({"pypto.frontend.jit", "pypto.jit", "pypto.loop", "pypto.loop_unroll", "pypto.options",
                          "pypto.set_options"})


def checked(qualname: str) -> bool:
    return qualname not in OPTION_CALLS and not (qualname.startswith("pypto.set_") and qualname.endswith("_options"))
RELEASE = {"0.2.0": "pypto 0.2.0", "head": "the repository's later pypto"}


def signature_of(qualname: str, version: str) -> tuple | None:
    entry = signatures.SIGNATURES.get(qualname)
    if entry is None:
        return None
    return entry.get("both") or entry.get(version)


def render(name: str, sig: tuple) -> str:
    """``name(input, shape=..., *, valid_shape=...)`` as a reader compares it with a call."""
    params, required, posonly, varargs, kwonly, kwonly_required, varkw = sig
    parts = [p if i < required else f"{p}=..." for i, p in enumerate(params)]
    if posonly:
        parts.insert(posonly, "/")
    if varargs:
        parts.append("*args")
    elif kwonly:
        parts.append("*")
    parts += [k if k in kwonly_required else f"{k}=..." for k in kwonly]
    if varkw:
        parts.append("**kwargs")
    return f"{name}({', '.join(parts)})"


def rejection(sig: tuple, call: ast.Call) -> tuple[str, str] | None:
    """(why binding ``call`` to ``sig`` raises TypeError, a "did you mean"), or None when it binds
    (or may: ``*x``, ``**x``)."""
    params, required, posonly, varargs, kwonly, kwonly_required, varkw = sig
    starred = any(isinstance(a, ast.Starred) for a in call.args)
    spread = any(kw.arg is None for kw in call.keywords)
    given = len(call.args)  # a method's receiver is bound to ``self``, which the signature leaves out
    if not starred and not varargs and given > len(params):
        return f"takes at most {len(params)} positional argument{'s' if len(params) != 1 else ''} ({given} given)", ""
    named = [kw.arg for kw in call.keywords if kw.arg is not None]
    for name in named:
        if name in params[posonly:] or name in kwonly:
            if not starred and name in params[:given]:
                return f"got multiple values for argument `{name}`", ""
            continue
        if varkw:
            continue
        allowed = list(params[posonly:]) + list(kwonly)
        close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
        return f"got an unexpected keyword argument `{name}`", (f"did you mean `{close[0]}`?" if close else "")
    if starred or spread:
        return None
    missing = [p for i, p in enumerate(params[:required]) if i >= given and (i < posonly or p not in named)]
    missing += [k for k in kwonly_required if k not in named]
    if missing:
        return "missing required argument " + ", ".join(f"`{m}`" for m in missing), ""
    return None


def rejections(qualname: str, call: ast.Call, receiver: bool = False) -> dict[str, str]:
    """version -> the located message, for each release whose signature of ``qualname`` rejects ``call``."""
    if not isinstance(call, ast.Call) or not checked(qualname):
        return {}
    out = {}
    spelled = qualname.rsplit(".", 1)[-1] if receiver else qualname
    for version in VERSIONS:
        sig = signature_of(qualname, version)
        if sig is None:
            continue
        found = rejection(sig, call)
        if found is not None:
            why, hint = found
            out[version] = (f"`{spelled}()` {why} ({RELEASE[version]} defines `{render(qualname, sig)}` "
                            f"and raises TypeError){'; ' + hint if hint else ''}")
    return out


def rejected_everywhere(qualname: str, found: dict[str, str]) -> bool:
    """Every release that defines ``qualname`` rejects the call."""
    defined = [v for v in VERSIONS if signature_of(qualname, v) is not None]
    return bool(defined) and all(v in found for v in defined)
