"""PTO019 unknown-option."""

from __future__ import annotations

import ast
import difflib

from ...frontend.scope import canonical
from ...frontend.values import ApiRef
from ..rule import Case, LintContext, Rule, Valid

_V020, _HEAD = "0.2.0", "head"
_OTHER = {_V020: _HEAD, _HEAD: _V020}
_RELEASE = {_V020: "pypto 0.2.0", _HEAD: "the repository's later pypto"}

# -- what each release accepts (pypto 0.2.0's wheel; hicann/pypto@883e7df's python/pypto and
# framework/src/interface/configs/tile_fwk_config.json) ------------------------------------------
_LOOP = {
    _V020: frozenset({"name", "idx_name", "unroll_list", "submit_before_loop"}),
    _HEAD: frozenset({"name", "idx_name", "unroll_list", "submit_before_loop", "parallel"}),
}
_JIT = {
    _V020: frozenset({"host_options", "codegen_options", "pass_options", "runtime_options", "verify_options",
                      "debug_options", "infer_controlflow_shape", "use_cache"}),
    _HEAD: frozenset({"host_options", "codegen_options", "pass_options", "runtime_options", "verify_options",
                      "debug_options", "new_ir", "create_new_logical_tensor"}),
}
# keyword arguments of pypto.set_<group>_options (frontend.jit applies its dicts through them,
# except runtime_options, which goes to the configuration map like pypto.options does)
_SETTER = {
    "pass": {
        _V020: frozenset({"pg_skip_partition", "pg_upper_bound", "vec_nbuffer_setting", "cube_l1_reuse_setting",
                          "cube_nbuffer_setting", "sg_set_scope"}),
        _HEAD: frozenset({"vec_nbuffer_setting", "cube_l1_reuse_setting", "cube_nbuffer_setting", "sg_set_scope",
                          "sg_set_ooo_scope", "ooo_sched_mode", "auto_mix_partition", "sg_set_tunevf_mode",
                          "enable_slice"}),
    },
    "host": dict.fromkeys((_V020, _HEAD), frozenset({
        "compile_stage", "compile_monitor_enable", "compile_timeout", "compile_timeout_stage",
        "compile_monitor_print_interval"})),
    "codegen": {
        _V020: frozenset({"support_dynamic_aligned"}),
        _HEAD: frozenset({"support_dynamic_aligned", "soc_version", "enable_pmu_trace", "vf_options"}),
    },
    "verify": dict.fromkeys((_V020, _HEAD), frozenset({
        "enable_pass_verify", "pass_verify_save_tensor", "pass_verify_save_tensor_dir", "pass_verify_pass_filter",
        "pass_verify_error_tol"})),
    "debug": {
        _V020: frozenset({"compile_debug_mode", "runtime_debug_mode"}),
        _HEAD: frozenset({"compile_debug_mode", "runtime_debug_mode", "dump_pass_graph"}),
    },
}
# keys of the configuration map (``<group>.<key>``) that pypto.options / pypto.set_options and
# frontend.jit's runtime_options write; an absent key is ``IndexError: map::at`` in 0.2.0
_MAP = {
    "runtime": {
        _V020: frozenset({"device_sched_mode", "stitch_function_inner_memory", "stitch_function_outcast_memory",
                          "stitch_function_num_initial", "stitch_function_max_num", "stitch_function_num_step",
                          "stitch_cfgcache_size", "stitch_function_size", "triple_stream_sched", "run_mode",
                          "valid_shape_optimize", "ready_on_host_tensors"}),
        _HEAD: frozenset({"device_sched_mode", "device_sched_parallelism", "launch_early_mode",
                          "launch_sched_aicpu_num", "max_workspace_kb", "ready_on_host_tensors", "run_mode",
                          "stitch_function_max_num", "valid_shape_optimize"}),
    },
    "pass": {
        _V020: frozenset({"pg_parallel_lower_bound", "pg_upper_bound", "pg_lower_bound", "mg_copyin_upper_bound",
                          "mg_vec_parallel_lb", "pg_skip_partition", "copyout_resolve_coalescing", "sg_set_scope",
                          "cube_l1_reuse_setting", "cube_nbuffer_setting", "vec_nbuffer_setting"}),
        _HEAD: frozenset({"auto_mix_partition", "copyout_resolve_coalescing", "cube_l1_reuse_setting",
                          "cube_l1_reuse_setting_by_func", "cube_l1_reuse_setting_by_label", "cube_nbuffer_setting",
                          "cube_nbuffer_setting_by_func", "cube_nbuffer_setting_by_label", "enable_slice",
                          "mg_copyin_upper_bound", "mg_vec_parallel_lb", "ooo_sched_mode", "ooo_sort_mode_aic",
                          "ooo_sort_mode_aiv", "pg_lower_bound", "pg_parallel_lower_bound",
                          "pg_partition_algorithm", "sg_set_ooo_scope", "sg_set_scope", "sg_set_tunevf_mode",
                          "vec_nbuffer_setting", "vec_nbuffer_setting_by_func", "vec_nbuffer_setting_by_label"}),
    },
    "host": _SETTER["host"],
    "codegen": {
        _V020: frozenset({"support_dynamic_aligned"}),
        _HEAD: frozenset({"enable_pmu_trace", "soc_version", "support_dynamic_aligned", "vf_compiler", "vf_options"}),
    },
    "verify": _SETTER["verify"],
    "debug": _SETTER["debug"],
    "operation": {
        _V020: frozenset({"force_combine_axis", "combine_axis"}),
        _HEAD: frozenset({"combine_axis"}),
    },
}
_GROUP_KWARGS = {f"{g}_options": g for g in ("runtime", "pass", "host", "codegen", "verify", "debug", "operation")}
_OPTIONS_CALLS = {
    "pypto.options": frozenset({"name", "vec_tile_shapes", "cube_tile_shapes", "conv_tile_shapes", "matrix_size"}),
    "pypto.set_options": frozenset({"vec_tile_shapes", "cube_tile_shapes", "conv_tile_shapes", "matrix_size"}),
}
_SETTERS = {f"pypto.set_{g}_options": g for g in ("pass", "host", "codegen", "verify", "debug")}
# 0.2.0 casts these pass options to dict[int, int] (string keys: RuntimeError) / an int (a tuple: bad_cast)
_INT_KEYED = frozenset({"vec_nbuffer_setting", "cube_l1_reuse_setting", "cube_nbuffer_setting"})

_K = (
    "import pypto\n\n@pypto.frontend.jit{deco}\n"
    "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
    "    pypto.set_vec_tile_shapes(16, 16)\n"
    "    for i in pypto.loop({loop}):\n        c[:] = a + 1.0\n"
)


def _k(deco: str = "", loop: str = "4, name='L', idx_name='i'") -> str:
    return _K.format(deco=deco, loop=loop)


class UnknownOption(Rule):
    """
    ## What it does
    Reports an option pypto does not have in the ``--target`` release:

    - a keyword of ``pypto.loop`` / ``pypto.loop_unroll`` other than ``name``, ``idx_name``,
      ``unroll_list``, ``submit_before_loop`` (and ``parallel`` in the later release);
    - a keyword of ``pypto.frontend.jit`` it does not take;
    - a key of ``runtime_options`` / ``pass_options`` / ``host_options`` / ``codegen_options`` /
      ``verify_options`` / ``debug_options`` (in ``frontend.jit``, ``pypto.options``,
      ``pypto.set_options``) or a keyword of ``pypto.set_pass_options`` and the other setters
      that the target release does not know, saying when it exists only in the other release;
    - for 0.2.0, string keys in ``vec_nbuffer_setting`` / ``cube_l1_reuse_setting`` /
      ``cube_nbuffer_setting`` (0.2.0 takes ``{int: int}``) and a tuple ``sg_set_scope``.

    Each is given with the closest known names ("did you mean").

    ## Why is this bad?
    ``pypto.loop`` reads its keywords with ``kwargs.get``: a misspelt ``unrol_list`` is silently
    ignored and the loop is not unrolled. ``frontend.jit`` applies its option dicts with
    ``pypto.set_pass_options(**d)`` and friends when the kernel is first called, so an unknown
    pass, host or codegen option is a ``TypeError`` then; an unknown runtime option (or any
    unknown key given to ``pypto.options``) is ``IndexError: map::at`` in 0.2.0. Options the
    repository's later pypto added (``enable_slice``, ``max_workspace_kb``, function-name keys
    ``{"func8_0": 2}``) fail the same way on 0.2.0; ``cycle_upper_bound``, the FAQ's remedy for
    subgraph size, exists in no release.

    ## Example
    ```python
    @pypto.frontend.jit(pass_options={"cycle_upper_bound": 2000})
    def k(...):
        for i in pypto.loop(n, name="L", idx_name="i", unrol_list=[1, 4]):
            ...
    ```

    ## Use instead
    ```python
    @pypto.frontend.jit(pass_options={"pg_upper_bound": 2000})
    def k(...):
        for i in pypto.loop(n, name="L", idx_name="i", unroll_list=[1, 4]):
            ...
    ```

    ## Fix safety
    No fix: the closest name is a guess, and renaming an option changes what pypto does.

    ## References
    pypto 0.2.0: ``_controller.py`` (``loop``, ``loop_unroll``), ``config.py`` (the setters,
    ``_Options``), ``frontend/parser/entry.py`` (``jit``, ``_set_config_option``),
    ``lib/configs/tile_fwk_config.json``; the same files at hicann/pypto@883e7df;
    `pypto-dsl.md` §9.1 and §11.
    """

    code = "PTO019"
    name = "unknown-option"
    summary = "an option or loop keyword the target pypto release does not have"
    VALID = [
        _k("(runtime_options={'run_mode': pypto.RunMode.SIM, 'stitch_function_max_num': 128}, "
           "pass_options={'vec_nbuffer_setting': {-1: 2}, 'pg_upper_bound': 2000})",
           "0, 32, 8, name='L', idx_name='i', unroll_list=[1, 2], submit_before_loop=True"),
        # loop_unroll's keywords; options from a config dict splatted in
        "import pypto\nOPTS = {'name': 'L'}\n\n@pypto.frontend.jit(debug_options={'runtime_debug_mode': 3})\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n"
        "    for i, f in pypto.loop_unroll(0, 4, 1, idx_name='i', unroll_list=[2], **OPTS):\n"
        "        c[:] = a + 1.0\n",
        # later-release options under --target head
        Valid(_k("(runtime_options={'max_workspace_kb': 65536}, pass_options={'enable_slice': True, "
                 "'cube_l1_reuse_setting': {'func8_0': 2}}, codegen_options={'soc_version': 'Ascend910B'})",
                 "4, name='L', idx_name='i', parallel=True"), {"target": "head"}),
        # pypto.options writes the configuration map: pass keys beyond set_pass_options' keywords
        "import pypto\n\n@pypto.options(pass_options={'pg_lower_bound': 256}, vec_tile_shapes=[16, 16])\n"
        "def build():\n    pass\n",
        # another library's loop() and jit
        "import numba\nfrom mylib import loop\n\n@numba.jit(nopython=True)\ndef f(n):\n"
        "    for i in loop(n, unrol_list=[2]):\n        pass\n",
        # options read from somewhere the linter cannot see
        "import pypto\nfrom cfg import PASS\n\n@pypto.frontend.jit(pass_options=PASS)\n"
        "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(16, 16)\n    c[:] = a + 1.0\n",
    ]
    INVALID = [
        # a misspelt loop keyword: silently ignored
        Case(_k(loop="16, name='L', idx_name='i', unrol_list=[1, 4]"), line=6, col=53),
        # cycle_upper_bound exists in no release
        Case(_k("(pass_options={'cycle_upper_bound': 2000})"), line=3, col=35),
        # an unknown runtime key: map::at
        Case(_k("(runtime_options={'run_mode': 1, 'stich_function_max_num': 64})"), line=3, col=53),
        # later-release options on 0.2.0: a module-level dict
        Case("import pypto\nRT = {'max_workspace_kb': 65536}\n\n@pypto.frontend.jit(runtime_options=RT)\n"
             "def k(a: pypto.Tensor((32, 32), pypto.DT_FP32), c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
             "    pypto.set_vec_tile_shapes(16, 16)\n    c[:] = a + 1.0\n", line=4, col=21),
        # string keys where 0.2.0 wants integers
        Case(_k("(pass_options={'cube_l1_reuse_setting': {'DEFAULT': 4}})"), line=3, col=61),
        # a removed option under --target head; a direct setter call with an alias
        Case("import pypto as pto\npto.set_pass_options(pg_upper_bound=2000)\n", line=2, col=22,
             settings={"target": "head"}),
        # parallel is a later-release loop keyword: 0.2.0 ignores it
        Case(_k(loop="4, name='L', idx_name='i', parallel=True"), line=6, col=52),
        # a jit keyword that does not exist
        Case(_k("(runtime_option={'run_mode': 1})"), line=3, col=21),
        # pypto.options with an unknown group key
        Case("import pypto\n\nwith pypto.options(host_options={'compile_stag': 1}):\n    pass\n", line=3, col=34),
    ]

    def check(self, ctx: LintContext):
        target = ctx.settings.target if ctx.settings.target in _OTHER else _V020
        env = ctx.model.scope.env
        for node in ast.walk(ctx.source.tree):
            if not isinstance(node, ast.Call) or not node.keywords:
                continue
            qual = _qualname(node.func, env)
            if qual is None:
                continue
            if qual in ("pypto.loop", "pypto.loop_unroll"):
                yield from self._keywords(ctx, node, _LOOP, target, f"`{qual}`",
                                          "it is silently ignored")
            elif qual == "pypto.frontend.jit":
                yield from self._keywords(ctx, node, _JIT, target, "`pypto.frontend.jit`",
                                          "decorating the kernel raises TypeError")
                for kw in node.keywords:
                    group = _GROUP_KWARGS.get(kw.arg or "")
                    if group is None or group == "operation":
                        continue
                    if group == "runtime":
                        yield from self._dict(ctx, kw, group, _MAP[group], target, "map")
                    else:
                        yield from self._dict(ctx, kw, group, _SETTER[group], target, "setter")
            elif qual in _OPTIONS_CALLS:
                for kw in node.keywords:
                    group = _GROUP_KWARGS.get(kw.arg or "")
                    if group is not None:
                        yield from self._dict(ctx, kw, group, _MAP[group], target, "map")
            elif qual in _SETTERS:
                group = _SETTERS[qual]
                yield from self._keywords(ctx, node, _SETTER[group], target, f"`{qual}`", "it raises TypeError")
                if group == "pass" and target == _V020:
                    for kw in node.keywords:
                        yield from self._pass_types(ctx, kw.arg, kw.value, kw.value)

    # -- keyword arguments -----------------------------------------------------------------
    def _keywords(self, ctx, call, table, target, what, effect):
        for kw in call.keywords:
            if kw.arg is None or kw.arg in table[target]:
                continue
            yield self._unknown(ctx, kw, kw.arg, table, target, f"keyword `{kw.arg}` of {what}", effect)

    def _unknown(self, ctx, node, key, table, target, what, effect):
        other = _OTHER[target]
        if key in table[other]:
            message = (f"{what} exists only in {_RELEASE[other]}, not in {_RELEASE[target]} (the --target): "
                       f"{effect}")
            help_text = (f"drop it, or lint with --target {other} if the kernel runs on {_RELEASE[other]}")
        else:
            message = f"{what} is not an option of {_RELEASE[target]} (nor of {_RELEASE[other]}): {effect}"
            close = difflib.get_close_matches(key, sorted(table[target]), n=3, cutoff=0.6)
            help_text = ("did you mean " + ", ".join(f"`{c}`" for c in close) + "?") if close else \
                "known: " + ", ".join(f"`{c}`" for c in sorted(table[target]))
        return self.diagnostic(ctx.span(node), message, help=help_text)

    # -- option dicts ---------------------------------------------------------------------------
    def _dict(self, ctx, kw, group, table, target, how):
        value = kw.value
        keys = _literal_keys(value)
        if keys is None:
            static = ctx.model.scope.evaluate(value) if isinstance(value, ast.Name) else None
            if not isinstance(static, dict) or not all(isinstance(k, str) for k in static):
                return
            keys = [(k, kw, None) for k in static]
        if how == "map":
            effect = "pypto looks it up in its configuration map and raises `IndexError: map::at`" \
                if target == _V020 else "pypto raises `key: ... does not exist`"
        else:
            effect = f"frontend.jit passes it to `pypto.set_{group}_options`, which raises TypeError"
        for key, node, item in keys:
            if key not in table[target]:
                yield self._unknown(ctx, node, key, table, target, f"`{key}` in `{kw.arg}`", effect)
            elif group == "pass" and target == _V020 and item is not None:
                yield from self._pass_types(ctx, key, item, item)

    def _pass_types(self, ctx, key, value, node):
        if key in _INT_KEYED and isinstance(value, ast.Dict):
            for k in value.keys:
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    yield self.diagnostic(
                        ctx.span(k),
                        f"string key {k.value!r} in `{key}`: pypto 0.2.0 takes `{{int: int}}` here (`-1` for every "
                        "group, or a group's order) and raises `RuntimeError: Unable to cast`; function-name and label "
                        "keys exist only in the repository's later pypto",
                        help="use an integer key such as `{-1: 4}`, or lint with --target head")
                    return
        if key == "sg_set_scope" and isinstance(value, ast.Tuple):
            yield self.diagnostic(
                ctx.span(value),
                "a tuple `sg_set_scope`: pypto 0.2.0 takes one int scope id and fails with `std::bad_cast`; "
                "the (id, bool, bool) form exists only in the repository's later pypto",
                help="give the scope id alone, or lint with --target head")


def _literal_keys(value):
    """(key, key node, value node) of a dict literal with string keys; None for anything else."""
    if not isinstance(value, ast.Dict):
        return None
    out = []
    for k, v in zip(value.keys, value.values):
        if k is None:  # **other: not known here
            continue
        if not isinstance(k, ast.Constant) or not isinstance(k.value, str):
            continue
        out.append((k.value, k, v))
    return out


def _qualname(func, env):
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    root = env.get(func.id)
    if isinstance(root, ApiRef):
        base = root.qualname
    elif func.id == "pypto" and func.id not in env:
        base = "pypto"  # imported inside a function
    else:
        return None
    if not base.startswith("pypto"):
        return None
    return canonical(".".join([base] + parts[::-1]))


RULE = UnknownOption
