"""A safe fix is applied only when lowering proves it keeps the kernel's meaning (transforms/proof.py)."""

from __future__ import annotations

import textwrap

from pypto_ast.diagnostics import Applicability, Diagnostic, Edit, Fix, Pos, Span
from pypto_ast.settings import Settings
from pypto_ast.transforms.fixer import fix_text
from pypto_ast.transforms.proof import demote_unproven

MEANING = {"PTO012": "loop1-merge", "PTO001": "output-write"}

TWO_REGIONS = textwrap.dedent('''
    import pypto


    @pypto.frontend.jit
    def k(a: pypto.Tensor((32, 64), pypto.DT_FP32), b: pypto.Tensor((32, 64), pypto.DT_FP32),
          c: pypto.Tensor((32, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 64)
        for _ in pypto.loop(1, name="s1", idx_name="i"):
            c[:] = a + b
        for _ in pypto.loop(1, name="s2", idx_name="j"):
            c[:] = c * 2.0
''').lstrip("\n")

SHAPES_AT_THE_CALL = TWO_REGIONS.replace("pypto.Tensor((32, 64), pypto.DT_FP32)", "pypto.Tensor([], pypto.DT_FP32)")


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _diag(text: str, code: str, first_line: int, last_line: int, new_text: str) -> Diagnostic:
    """A diagnostic whose SAFE fix replaces lines first_line..last_line with ``new_text``."""
    edit = Edit(Pos(first_line, 0), Pos(last_line + 1, 0), new_text)
    span = Span("k.py", Pos(first_line, 4), Pos(first_line, 10))
    return Diagnostic(code, "test", "test", span, fix=Fix("test fix", Applicability.SAFE, (edit,)))


def _merge(text: str) -> Diagnostic:
    second = _line_of(text, 'name="s2"')
    return _diag(text, "PTO012", second, second + 1, "        c[:] = c * 2.0\n")


def _change_op(text: str) -> Diagnostic:
    line = _line_of(text, "c * 2.0")
    return _diag(text, "PTO012", line, line, "        c[:] = c * 3.0\n")


def _applicability(text, diag) -> Applicability:
    (out,) = demote_unproven(text, "k.py", [diag], MEANING)
    return out.fix.applicability


def test_a_loop1_merge_that_keeps_the_ops_stays_safe():
    assert _applicability(TWO_REGIONS, _merge(TWO_REGIONS)) is Applicability.SAFE


def test_a_fix_that_changes_an_op_is_reported_unsafe():
    (out,) = demote_unproven(TWO_REGIONS, "k.py", [_change_op(TWO_REGIONS)], MEANING)
    assert out.fix.applicability is Applicability.UNSAFE
    assert "lowers to a different program" in out.fix.title


def test_a_merge_is_not_allowed_to_rules_whose_fix_must_change_nothing():
    diag = _merge(TWO_REGIONS)
    diag = Diagnostic("PTO014", diag.name, diag.message, diag.span, fix=diag.fix)
    assert _applicability(TWO_REGIONS, diag) is Applicability.UNSAFE


def test_kernels_that_need_shapes_are_compared_by_their_facts():
    assert _applicability(SHAPES_AT_THE_CALL, _merge(SHAPES_AT_THE_CALL)) is Applicability.SAFE
    assert _applicability(SHAPES_AT_THE_CALL, _change_op(SHAPES_AT_THE_CALL)) is Applicability.UNSAFE


def test_moving_a_region_under_another_tile_shape_is_unsafe():
    text = TWO_REGIONS.replace('        c[:] = c * 2.0\n', '        pypto.set_vec_tile_shapes(16, 64)\n'
                                                          '        c[:] = c * 2.0\n')
    first = _line_of(text, 'name="s1"')
    # put the first region's op after the tile change of the second: its tile differs
    diag = _diag(text, "PTO012", first, first + 5,
                 '        pypto.set_vec_tile_shapes(16, 64)\n        c[:] = a + b\n        c[:] = c * 2.0\n')
    assert _applicability(text, diag) is Applicability.UNSAFE


NEGATIVE_TEST = textwrap.dedent('''
    import pytest
    import torch

    import pypto


    def test_rebinding_the_output_is_an_error():
        @pypto.frontend.jit
        def k(a: pypto.Tensor((32, 32), pypto.DT_FP16), c: pypto.Tensor((32, 32), pypto.DT_FP16)):
            pypto.set_vec_tile_shapes(32, 32)
            c = a + a  # the test expects pypto to refuse this

        with pytest.raises(Exception):
            k(torch.rand(32, 32).half(), torch.zeros(32, 32).half())
''').lstrip("\n")


def test_fix_leaves_a_deliberate_negative_test_alone():
    outcome = fix_text(NEGATIVE_TEST, "test_neg.py", Settings())
    assert outcome.text == NEGATIVE_TEST
    (diag,) = [d for d in outcome.result.diagnostics if d.code == "PTO001"]
    assert diag.fix.applicability is Applicability.UNSAFE and "pytest.raises" in diag.fix.title


def test_the_same_rebind_outside_a_negative_test_is_fixed():
    text = NEGATIVE_TEST.replace("with pytest.raises(Exception):\n        ", "")
    outcome = fix_text(text, "test_pos.py", Settings())
    assert "c[:] = a + a" in outcome.text and outcome.applied == 1


def test_the_merge_keeps_the_removed_headers_comment():
    text = TWO_REGIONS.replace('idx_name="j"):', 'idx_name="j"):  # second stage')
    outcome = fix_text(text, "k.py", Settings())
    assert outcome.applied == 1
    assert "        # second stage\n        c[:] = c * 2.0" in outcome.text
