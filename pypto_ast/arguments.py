"""What every backend does with a call's tensor arguments before a kernel runs, so that the
interpreter and the host agree (docs/design.md §9):

* an output that is a leaf tensor autograd tracks (``requires_grad``, grad mode on) is refused:
  a kernel writes its outputs in place, which torch forbids on such a tensor (the interpreter
  failed inside its first write; the host wrote it behind autograd's back);
* a kernel reads its inputs as they were at the call, as a torch function does: an input whose
  memory overlaps the memory of an output (another parameter's tensor) is read from a copy taken
  before the run (the host's kernels read it while other kernels, or other tiles of the same
  kernel, overwrote it).

Both take tensors, never import torch themselves (the callers have it)."""

from __future__ import annotations

from typing import Sequence


class ArgumentError(ValueError):
    """A tensor argument no backend runs the kernel with; the message names the parameter."""


def check_outputs(names: Sequence[str], tensors: Sequence, outputs: Sequence[bool], who: str = "") -> None:
    """Raise ArgumentError for an output that is a leaf requiring grad while grad mode is on
    (``who`` prefixes the message: ``"kernel(): "``)."""
    for name, t, out in zip(names, tensors, outputs):
        if out and getattr(t, "requires_grad", False) and t.is_leaf and _grad_enabled():
            raise ArgumentError(f"{who}argument `{name}` is an output but a leaf tensor that requires grad: the kernel "
                                f"writes it in place, which autograd forbids (pass `{name}.detach()` or a tensor "
                                "without requires_grad, or call it under torch.no_grad())")


def aliased_inputs(tensors: Sequence, outputs: Sequence[bool]) -> list:
    """Indices of the tensors that are not outputs and whose bytes overlap an output's bytes:
    the ones to read from a copy.  An output that is one parameter both read and written (an
    in-place ``x[:] = x + 1``) is not an alias; two outputs sharing memory are written in
    program order, as given.  Byte ranges: interleaved strided views count as overlapping."""
    return overlapping([_span(t) for t in tensors], outputs)


def overlapping(spans: Sequence, outputs: Sequence[bool]) -> list:
    """``aliased_inputs`` on the tensors' byte ranges ``(first, one past the last)``."""
    written = [span for span, out in zip(spans, outputs) if out]
    return [i for i, ((lo, hi), out) in enumerate(zip(spans, outputs))
            if not out and any(lo < w_hi and w_lo < hi for w_lo, w_hi in written)]


def _span(t) -> tuple:
    """[first byte, one past the last byte) of the memory holding ``t``'s elements; empty when
    it has none."""
    lo = t.data_ptr()
    if t.is_contiguous():
        return lo, lo + t.nbytes
    if t.numel() == 0:
        return lo, lo
    size = t.element_size()
    hi = lo
    for n, stride in zip(t.shape, t.stride()):
        step = (n - 1) * stride * size
        if step > 0:
            hi += step
        else:
            lo += step
    return lo, hi + size


def _grad_enabled() -> bool:
    import torch

    return torch.is_grad_enabled()
