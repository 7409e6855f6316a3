"""Every rule, in code order. A new rule is one module in ``rules/`` and one line here."""

from __future__ import annotations

import importlib

from .rule import Rule

_MODULES = [
    "pto000_syntax_error",
    "pto001_output_rebind",
    "pto002_missing_device_id",
    "pto003_tile_rank_mismatch",
    "pto004_tile_misaligned",
    "pto005_tile_shape_invalid",
    "pto006_view_needs_valid_shape",
    "pto007_print_in_loop",
    "pto008_read_before_write",
    "pto009_duplicate_loop_index",
    "pto010_unroll_not_innermost",
    "pto011_cond_path_explosion",
    "pto012_unmerged_loop1",
    "pto013_subgraph_too_large",
    "pto014_symbolic_if_outside_jit",
    "pto015_unroll_tail_dropped",
    "pto016_output_copy_needs_clone",
    "pto017_unannotated_tensor_param",
    "pto018_tile_rank_excess",
    "pto019_unknown_option",
    "pto020_return_in_kernel",
    "pto021_unsupported_construct",
    "pto022_tensor_condition",
    "pto023_output_read_after_write",
    "pto024_buffer_overflow",
    "pto025_dynamic_whole_tensor",
    "pto026_view_out_of_bounds",
    "pto027_dtype_mismatch",
    "pto028_unknown_api",
]


def _load() -> list[Rule]:
    rules = []
    for name in _MODULES:
        try:
            module = importlib.import_module(f"{__package__}.rules.{name}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.endswith(name):
                continue  # not written yet
            raise
        rules.append(module.RULE())
    return rules


RULES: list[Rule] = _load()
BY_CODE = {rule.code: rule for rule in RULES}
