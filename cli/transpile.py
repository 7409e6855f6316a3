"""``pypto-transpile FILE``: lower a kernel to the control/compute IR, print it, or run it.

    pypto-transpile FILE --emit ir|python|dot [-o OUT] [--kernel NAME] [--merge-loop1]
    pypto-transpile FILE --emit ascendc -o DIR [--soc SOC]        # kernels, control.cpp, manifest.json
    pypto-transpile FILE --build --backend host [-o DIR] [--soc SOC]   # compile them; prints the library
    pypto-transpile FILE --run [--backend interp|host] [--soc SOC] [--kernel NAME]

Exit status: 0 done (``--run``: every output matches the reference), 1 the kernel has
errors or (``--run``) an output differs, 2 it could not run (our bug, a missing
``example_inputs``/``reference``, an import failure).
"""

from __future__ import annotations

import sys
from typing import Optional

import click

from pypto_ast import __version__
from pypto_ast.diagnostics import Diagnostic, Pos, Severity, Span
from pypto_ast.emit.soc import DEFAULT_SOC, SOCS
from pypto_ast.render import render

BACKENDS = ("interp", "host")

EMITTERS = ("ir", "python", "dot", "ascendc")


def _display(path: Optional[str]) -> Optional[str]:
    """Paths as the user would write them: relative to the working directory when inside it."""
    if not path:
        return path
    import os

    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _diagnostic(path: str, message: str, span, code="PTO100", name="cannot-lower") -> Diagnostic:
    path = _display(path)
    if span is None:
        where = Span(path or "<unknown>", Pos(1, 0), Pos(1, 0))
    elif isinstance(span, tuple):
        where = Span(path, Pos(span[0], span[1]), Pos(span[0], span[1] + 1))
    else:
        end = Pos(span.end_line, span.end_col) if (span.end_line, span.end_col) > (span.line, span.col) \
            else Pos(span.line, span.col + 1)
        where = Span(path, Pos(span.line, span.col), end)
    return Diagnostic(code, name, message, where, Severity.ERROR)


def _report(diags, sources) -> None:
    click.echo(render("full", diags, sources, color=sys.stderr.isatty()), err=True, nl=False)


def _source(path: Optional[str]) -> dict:
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            return {_display(path): handle.read()}
    except OSError:
        return {}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pypto-transpile")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--emit", "emit", type=click.Choice(EMITTERS),
              help="print a stage: the IR, explicit PyPTO, graphviz; ascendc writes the Ascend C files into -o DIR")
@click.option("-o", "--output", type=click.Path(),
              help="write the emitted text here instead of stdout (a directory for --emit ascendc / --build)")
@click.option("--run", "do_run", is_flag=True, help="run example_inputs() through a backend and compare with reference()")
@click.option("--build", "do_build", is_flag=True, help="compile the emitted Ascend C (needs --backend host)")
@click.option("--backend", default="interp", type=click.Choice(list(BACKENDS)), show_default=True,
              help="interp: the torch interpreter; host: emitted Ascend C compiled with g++ on the CPU model")
@click.option("--soc", default=DEFAULT_SOC, type=click.Choice(list(SOCS), case_sensitive=False), show_default=True,
              help="the SoC whose memory sizes bound the emitted buffers (UB budget)")
@click.option("--kernel", "kernel_name", help="the kernel to use when the file has several")
@click.option("--merge-loop1", is_flag=True, help="merge consecutive loop(1) regions (the PTO012 fix)")
@click.option("--no-spans", is_flag=True, help="leave source locations out of the printed IR and #line directives out of the Ascend C")
@click.option("-q", "--quiet", is_flag=True, help="no progress lines on stderr (compiler runs of --build/--run)")
def main(file, emit, output, do_run, do_build, backend, soc, kernel_name, merge_loop1, no_spans, quiet) -> None:
    """Lower the PyPTO kernel in FILE to the control/compute IR."""
    from pypto_ast import live, pipeline

    soc = soc.lower()
    if do_build and backend != "host":
        raise click.UsageError("--build needs --backend host")
    if sum(map(bool, (emit, do_run, do_build))) > 1:
        raise click.UsageError("choose one of --emit, --run, --build")
    if emit == "ascendc" and not output:
        raise click.UsageError("--emit ascendc writes several files: give the directory with -o DIR")
    if not emit and not do_run and not do_build:
        emit = "ir"
    progress = None if quiet else (lambda line: click.echo(line, err=True))
    try:
        module = live.load_module(file)
        kernel = live.find_kernel(module, kernel_name)
        inputs = module.example_inputs() if hasattr(module, "example_inputs") else {}
        if not isinstance(inputs, dict):
            raise pipeline.PipelineError("example_inputs() must return a dict of arguments by parameter name", file)
        if do_run:
            from pypto_ast.runner import run_and_compare

            code = run_and_compare(module, kernel, inputs, backend=backend, merge_loop1=merge_loop1,
                                   echo=click.echo, soc=soc, progress=progress)
            raise SystemExit(code)
        program = pipeline.lower(kernel, inputs, merge_loop1=merge_loop1)
        if do_build:
            library = pipeline.build_host(program, soc=soc, out_dir=output, progress=progress)
            click.echo(f"built {program.name} for {soc} (host backend): {_display(str(library))}")
            return
        if emit == "ascendc":
            files = pipeline.emit(program, "ascendc", soc=soc, spans=not no_spans)
            for path in pipeline.write_files(files, output):
                click.echo(f"wrote {_display(path)}")
            return
        text = pipeline.emit(program, emit, spans=not no_spans, source_path=file)
    except pipeline.KernelErrors as exc:
        path = exc.path or file
        _report([_diagnostic(path, m, s) for m, s in exc.findings], _source(path))
        raise SystemExit(1)
    except pipeline.PipelineError as exc:
        path = exc.path or file
        _report([_diagnostic(path, exc.message, exc.span, "PTO103", "cannot-run")], _source(path))
        raise SystemExit(2)
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        click.echo(text, nl=False)


if __name__ == "__main__":
    main()
