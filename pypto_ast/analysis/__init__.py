"""Lint rules over the kernel model: one rule per module under ``rules/``."""
