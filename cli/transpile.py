"""``pypto-transpile``: lowering to the control/compute IR and Ascend C emission.

Not implemented yet: the command exists so the console script is stable; it says so and
exits 2 (the "could not run" status every pypto-ast command uses).
"""

from __future__ import annotations

import click

from pypto_ast import __version__


@click.command(context_settings={"help_option_names": ["-h", "--help"], "ignore_unknown_options": True})
@click.version_option(__version__, prog_name="pypto-transpile")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def main(args) -> None:
    """Transpile PyPTO kernels (not yet available)."""
    click.echo("pypto-transpile: not yet implemented: lowering to the control/compute IR "
               "arrives in a later release; use pypto-lint to check kernels today", err=True)
    raise SystemExit(2)


if __name__ == "__main__":
    main()
