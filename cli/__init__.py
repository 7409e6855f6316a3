"""Command-line entry points (installed as the ``pypto_ast.cli`` package): parsing flags,
choosing output and exit codes. The work itself lives in ``pypto_ast``."""
