"""``pypto-lint``: check PyPTO kernels, print findings like ruff, optionally fix them.

Exit codes (ruff's): 0 nothing left to report, 1 diagnostics remain (also after ``--fix``),
2 we could not do the job — bad flags or config, a missing path, an unreadable file, a file
``--fix`` could not or may not write (read-only), an internal error (PTO999), or no input
parsed at all.  Findings go to stdout, summaries and errors to stderr.  Only click and
stdlib-only pypto_ast modules are imported at start; the engine (and with it libcst and the
rules) loads inside the commands.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from pathlib import Path

import click

from pypto_ast import __version__
from pypto_ast.cli.runner import Mode, Report, lint_data, lint_paths
from pypto_ast.config import ConfigError, Overrides, display_path, normalize_code, resolve
from pypto_ast.diagnostics import Applicability, Diagnostic, Severity
from pypto_ast.files import PathError, discover
from pypto_ast.render import FORMATS, render, render_concise, render_statistics

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2


class Fatal(click.ClickException):
    """We could not run: exit 2 with a one-line reason."""

    exit_code = EXIT_ERROR

    def show(self, file=None) -> None:
        click.echo(f"pypto-lint: error: {self.format_message()}", err=True)


class DefaultGroup(click.Group):
    """``pypto-lint [OPTIONS] PATHS`` means ``pypto-lint check ...``; subcommand names win,
    so a directory called ``rules`` is linted with ``pypto-lint check rules`` or ``./rules``."""

    default_command = "check"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] != "--version"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _codes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    try:
        return tuple(normalize_code(code) for code in _split(values))
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def _globs(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    return _split(values)


_version = click.version_option(__version__, "--version", prog_name="pypto-lint", message="%(prog)s %(version)s")


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@_version
def main() -> None:
    """Lint PyPTO kernels."""
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 PID` prints where a stuck run is, then it goes on
        try:
            faulthandler.register(signal.SIGUSR1, all_threads=True)
        except (AttributeError, ValueError, OSError, RuntimeError):  # stderr is no real file (CliRunner)
            pass


@main.command(
    "check",
    epilog="Other commands: `pypto-lint rules` lists the rules, `pypto-lint rule CODE` explains one.",
)
@click.argument("paths", nargs=-1)
@click.option("--select", multiple=True, callback=_codes, metavar="CODES",
              help="Rule codes or prefixes to enable, comma-separated (replaces the config's).")
@click.option("--extend-select", multiple=True, callback=_codes, metavar="CODES",
              help="Enable these in addition.")
@click.option("--ignore", multiple=True, callback=_codes, metavar="CODES",
              help="Disable these (added to the config's).")
@click.option("--config", "config_path", metavar="PATH",
              help="Read settings from this file instead of the nearest pyproject.toml.")
@click.option("--exclude", multiple=True, callback=_globs, metavar="GLOBS",
              help="Globs to skip when walking directories (replaces the defaults).")
@click.option("--extend-exclude", multiple=True, callback=_globs, metavar="GLOBS",
              help="Globs to skip in addition.")
@click.option("--force-exclude", is_flag=True,
              help="Apply exclusions to files named on the command line too (for pre-commit).")
@click.option("--output-format", type=click.Choice(FORMATS), default="full", show_default=True)
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of each diagnostic.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--diff", is_flag=True, help="Print the diffs --fix would apply; write nothing.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None,
              help="Also apply fixes that may change behaviour.")
@click.option("--target", type=click.Choice(["0.2.0", "head"]), default=None,
              help="The pypto version rules follow where versions differ (default 0.2.0, the latest "
                   "release on PyPI; head: hicann/pypto's main branch).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when diagnostics remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when --fix changed any file.")
@click.option("--stdin-filename", metavar="NAME",
              help="The name to report (and match config globs) for stdin.")
@click.option("-q", "--quiet", is_flag=True, help="Print diagnostics only, no summary.")
@_version
@click.pass_context
def check(ctx: click.Context, paths: tuple[str, ...], **opts) -> None:
    """Check PATHS (default: `.`; `-` reads stdin)."""
    ctx.exit(run_check(paths, **opts))


def run_check(
    paths: tuple[str, ...],
    *,
    select: tuple[str, ...] = (),
    extend_select: tuple[str, ...] = (),
    ignore: tuple[str, ...] = (),
    config_path: str | None = None,
    exclude: tuple[str, ...] = (),
    extend_exclude: tuple[str, ...] = (),
    force_exclude: bool = False,
    output_format: str = "full",
    statistics: bool = False,
    fix: bool = False,
    diff: bool = False,
    unsafe_fixes: bool | None = None,
    target: str | None = None,
    exit_zero: bool = False,
    exit_non_zero_on_fix: bool = False,
    stdin_filename: str | None = None,
    quiet: bool = False,
) -> int:
    cwd = Path.cwd()
    use_stdin = paths == ("-",) or (not paths and stdin_filename is not None)
    if "-" in paths and not use_stdin:
        raise click.UsageError("`-` (stdin) cannot be combined with other paths")
    overrides = Overrides(
        select or None, extend_select, ignore, exclude or None, extend_exclude, unsafe_fixes, target
    )
    try:
        resolved = resolve(paths, overrides, config_path=config_path, cwd=cwd, stdin_filename=stdin_filename)
    except ConfigError as exc:
        raise Fatal(str(exc)) from None
    settings = resolved.settings
    mode = Mode(fix=fix, diff=diff, unsafe=settings.unsafe_fixes)
    if use_stdin:
        name = display_path(stdin_filename, cwd) if stdin_filename else "-"
        data = sys.stdin.buffer.read()
        reports = [lint_data(data, name, settings, mode)]
    else:
        try:
            files = discover(
                paths or (".",), settings, root=resolved.root, cwd=cwd, force_exclude=force_exclude, warn=_warn
            )
        except PathError as exc:
            raise Fatal(str(exc)) from None
        if not files and not quiet:
            click.echo("pypto-lint: warning: no Python files found under the given paths", err=True)
        reports = lint_paths(files, settings, mode)

    stdin_fix = use_stdin and fix and not diff
    _print_problems(reports)
    diagnostics = [d for r in reports if r.result for d in r.result.diagnostics]
    if diff:
        for report in reports:
            click.echo(report.diff, nl=False)
        for bug in (d for d in diagnostics if d.severity is Severity.BUG):
            click.echo(render_concise(bug), err=True)
    else:
        stream = sys.stderr if stdin_fix else sys.stdout
        color = stream.isatty() and "NO_COLOR" not in os.environ
        if statistics:
            text = render_statistics(diagnostics, unsafe=mode.unsafe, as_json=output_format == "json")
        else:
            sources = {r.result.path: r.result.text for r in reports if r.result}
            text = render(output_format, diagnostics, sources, color=color, rules=_rules(output_format))
        click.echo(text, nl=False, err=stdin_fix, color=color)
    if stdin_fix:
        out = sys.stdout.buffer
        out.write(reports[0].fixed_bytes if reports[0].fixed_bytes is not None else data)
        out.flush()
    if not quiet:
        for line in _summary(reports, diagnostics, mode):
            click.echo(line, err=True)
    return _exit_code(reports, diagnostics, mode, exit_zero, exit_non_zero_on_fix)


def _warn(message: str) -> None:
    click.echo(f"pypto-lint: warning: {message}", err=True)


def _rules(output_format: str) -> list:
    if output_format != "sarif":
        return []
    from pypto_ast.analysis.registry import RULES

    return list(RULES)


def _print_problems(reports: list[Report]) -> None:
    """Read/write errors, stale files and crash tracebacks: stderr, whatever -q says."""
    for report in reports:
        if report.error:
            click.echo(f"pypto-lint: error: {report.error}", err=True)
        if report.warning:
            click.echo(f"pypto-lint: warning: {report.warning}", err=True)
        if report.result is not None and report.result.failure:
            click.echo(f"pypto-lint: internal error while checking {report.path}:\n{report.result.failure}", err=True)
    parsed = [r.result.parsed for r in reports if r.result is not None]
    if parsed and not any(parsed):
        click.echo("pypto-lint: error: no input could be parsed, so nothing else was checked", err=True)


def _errors(n: int) -> str:
    return f"{n} error" if n == 1 else f"{n} errors"


def _summary(reports: list[Report], remaining: list[Diagnostic], mode: Mode) -> list[str]:
    fixed = sum(r.fixed for r in reports)
    hidden = 0 if mode.unsafe else sum(
        1 for d in remaining if d.fix is not None and d.fix.applicability is Applicability.UNSAFE
    )
    lines = []
    if mode.diff:
        lines.append(f"Would fix {_errors(fixed)}." if fixed else "No errors would be fixed.")
    else:
        total = len(remaining) + fixed
        if total == 0:
            lines.append("All checks passed!")
        elif mode.fix:
            lines.append(f"Found {_errors(total)} ({fixed} fixed, {len(remaining)} remaining).")
        else:
            lines.append(f"Found {_errors(total)}.")
            fixable = sum(1 for d in remaining if d.fix_applies(mode.unsafe))
            if fixable:
                lines.append(f"[*] {fixable} fixable with --fix.")
    if hidden:
        lines.append(f"({hidden} more fixable with --fix --unsafe-fixes.)")
    return lines


def _exit_code(
    reports: list[Report], diagnostics: list[Diagnostic], mode: Mode, exit_zero: bool, exit_non_zero_on_fix: bool
) -> int:
    parsed = [r.result.parsed for r in reports if r.result is not None]
    if (
        any(r.error for r in reports)
        or any(d.severity is Severity.BUG for d in diagnostics)
        or (parsed and not any(parsed))
    ):
        return EXIT_ERROR
    if exit_zero:
        return EXIT_CLEAN
    if mode.diff:
        return EXIT_FOUND if any(r.diff for r in reports) else EXIT_CLEAN
    if diagnostics:
        return EXIT_FOUND
    if exit_non_zero_on_fix and any(r.changed or r.fixed for r in reports):
        return EXIT_FOUND
    return EXIT_CLEAN


@main.command("server")
def server_command() -> None:
    """Run as a Language Server on stdin/stdout (needs the `[lsp]` extra: pip install 'pypto-ast[lsp]')."""
    try:
        from pypto_ast.cli.server import main as serve
    except ImportError as exc:
        raise Fatal(f"`pypto-lint server` needs pygls ({exc.name or exc} is missing): "
                    "pip install 'pypto-ast[lsp]'") from None
    serve()


@main.command("rules")
def rules_command() -> None:
    """List every rule: code, name, fix availability, summary; then pypto-transpile's codes."""
    from pypto_ast.analysis.registry import RULES
    from pypto_ast.frontend.errors import CODES

    rows = [("code", "name", "fix", "summary")] + [
        (r.code, r.name, r.fix_availability, r.summary) for r in RULES
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
    click.echo("\npypto-transpile diagnostics (`pypto-lint rule CODE` explains one):")
    width = max(len(c.name) for c in CODES.values())
    for c in CODES.values():
        click.echo(f"{c.code}  {c.name.ljust(width)}  {c.summary}")


@main.command("rule")
@click.argument("code")
def rule_command(code: str) -> None:
    """Explain one rule (by code, e.g. PTO001, or by name)."""
    from pypto_ast.analysis.registry import RULES

    wanted = code.strip()
    for rule in RULES:
        if wanted.upper() == rule.code or wanted == rule.name:
            click.echo(f"# {rule.name} ({rule.code})\n")
            click.echo(rule.docs() or rule.summary)
            click.echo(f"\nFix availability: {rule.fix_availability}.")
            return
    from pypto_ast.frontend.errors import CODES

    for c in CODES.values():
        if wanted.upper() == c.code or wanted == c.name:
            click.echo(f"# {c.name} ({c.code}), a pypto-transpile diagnostic\n")
            click.echo(c.doc)
            return
    raise Fatal(f"unknown rule {code!r}; `pypto-lint rules` lists them")


if __name__ == "__main__":
    main()
