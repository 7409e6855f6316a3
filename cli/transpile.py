"""``pypto-transpile FILE``: lower a kernel to the control/compute IR, print it, or run it.

    pypto-transpile FILE --list                                   # every kernel: location, kind, name
    pypto-transpile FILE --emit ir|python|dot [-o OUT] [--kernel NAME] [--shape NAME=64x128[:fp16]]...
    pypto-transpile FILE --emit ascendc -o DIR [--soc SOC]        # kernels, control.cpp, manifest.json
    pypto-transpile FILE --emit cost|swimlane [--soc SOC]         # the static cost model's estimate
    pypto-transpile FILE --build --backend host|npu [-o DIR] [--soc SOC]   # compile them; prints the library
    pypto-transpile FILE --run [--backend interp|host] [--soc SOC] [--kernel NAME]
    pypto-transpile doctor [--backend interp|host|npu] [--json]  # what a backend needs here, with fixes

The kernel is read from FILE's source and never executed, except by ``--run``, which imports
the module for its ``example_inputs()`` and ``reference()`` (and still lowers from source).

Exit status: 0 done (``--run``: every output matches the reference), 1 the kernel has
errors or (``--run``) an output differs, 2 it could not run (a missing
``example_inputs``/``reference``, an import failure, our own bug: PTO999).
"""

from __future__ import annotations

import sys
from typing import Optional

import click

from pypto_ast import __version__
from pypto_ast.diagnostics import Diagnostic
from pypto_ast.emit.soc import DEFAULT_SOC, SOCS
from pypto_ast.render import render

BACKENDS = ("interp", "host", "npu")

EMITTERS = ("ir", "python", "dot", "ascendc", "cost", "swimlane")


def _display(path: Optional[str]) -> Optional[str]:
    """Paths as the user would write them: relative to the working directory when inside it."""
    if not path:
        return path
    import os

    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _diagnostic(path: str, message: str, span, code="PTO100", name=None) -> Diagnostic:
    from pypto_ast.errors import finding_diagnostic  # only on the way out with an error

    return finding_diagnostic(_display(path), message, span, code, name)


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


_DTYPE_ALIASES = {
    "float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
    "float64": "double", "fp64": "double",
}
_DTYPES = ("fp32", "fp16", "bf16", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "bool", "double")


def _dtype(text: str) -> str:
    name = text.strip().lower()
    if name.startswith("dt_"):
        name = name[3:]
    name = _DTYPE_ALIASES.get(name, name)
    if name not in _DTYPES:
        raise ValueError(f"unknown dtype {text!r} (one of {', '.join(_DTYPES)})")
    return name


def _scalar(text: str):
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    try:
        return int(text, 0)
    except ValueError:
        return float(text)


def _shapes(ctx: click.Context, param: click.Parameter, values: tuple) -> dict:
    """``NAME=64x128[:dtype]`` (a tensor's shape, dims separated by x or ,) or ``NAME=VALUE``
    (a build-time scalar; a tensor parameter given one number is one-dimensional)."""
    shapes: dict = {}
    for value in values:
        name, sep, spec = value.partition("=")
        name, spec = name.strip(), spec.strip()
        if not sep or not name.isidentifier() or not spec:
            raise click.BadParameter(f"{value!r}: expected NAME=64x128, NAME=64x128:fp16 or NAME=VALUE", ctx, param)
        try:
            dims, colon, dt = spec.partition(":")
            if colon or "x" in dims.lower() or "," in dims or dims in ("[]", "()"):
                parts = [d for d in dims.lower().replace(",", "x").strip("[]()").split("x") if d.strip()]
                shape = tuple(int(d) for d in parts)
                if any(d < 0 for d in shape):
                    raise ValueError("dims must not be negative")
                shapes[name] = (shape, _dtype(dt) if colon else None)
            else:
                shapes[name] = _scalar(spec)
        except ValueError as exc:
            raise click.BadParameter(f"{value!r}: {exc}", ctx, param) from None
    return shapes


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--backend", default="npu", type=click.Choice(list(BACKENDS)), show_default=True,
              help="the backend whose needs decide the exit status")
@click.option("--json", "as_json", is_flag=True, help="print the checks as JSON")
def doctor(backend, as_json) -> None:
    """Check what a backend needs on this machine (CANN, driver, device, torch_npu, g++), with a fix for each
    failure; exit 0 when everything --backend needs is there."""
    import json

    from pypto_ast import doctor as checks

    found = checks.run_checks()
    if as_json:
        click.echo(json.dumps(checks.as_json(found, backend), indent=1))
    else:
        click.echo(checks.render(found, backend), nl=False)
    raise SystemExit(0 if checks.ready(found, backend) else 1)


class _TranspileCommand(click.Command):
    """``pypto-transpile FILE ...``, and ``pypto-transpile doctor ...`` (a file named ``doctor`` is
    given as ``./doctor``)."""

    def main(self, args=None, prog_name=None, **kwargs):
        import sys

        argv = list(sys.argv[1:] if args is None else args)
        if argv[:1] == ["doctor"]:
            return doctor.main(argv[1:], prog_name=f"{prog_name or 'pypto-transpile'} doctor", **kwargs)
        return super().main(argv, prog_name=prog_name, **kwargs)


@click.command(cls=_TranspileCommand, context_settings={"help_option_names": ["-h", "--help"]},
               epilog="pypto-transpile doctor [--backend interp|host|npu] [--json]: what a backend needs on this "
                      "machine, with a fix for each failure.")
@click.version_option(__version__, prog_name="pypto-transpile")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--emit", "emit", type=click.Choice(EMITTERS),
              help="print a stage: the IR, explicit PyPTO, graphviz; ascendc writes the Ascend C files into -o DIR; "
                   "cost / swimlane: the static cost model's cycle report / Chrome trace (an estimate)")
@click.option("-o", "--output", type=click.Path(),
              help="write the emitted text here instead of stdout (a directory for --emit ascendc / --build)")
@click.option("--run", "do_run", is_flag=True, help="run example_inputs() through a backend and compare with reference()")
@click.option("--build", "do_build", is_flag=True,
              help="compile the emitted Ascend C (--backend host: g++ on the CPU model; npu: CANN's bisheng)")
@click.option("--backend", default="interp", type=click.Choice(list(BACKENDS)), show_default=True,
              help="interp: the torch interpreter; host: emitted Ascend C compiled with g++ on the CPU model; "
                   "npu: compiled with CANN's bisheng, launched through torch_npu")
@click.option("--soc", default=DEFAULT_SOC, type=click.Choice(list(SOCS), case_sensitive=False), show_default=True,
              help="the SoC whose memory sizes bound the emitted buffers (UB budget)")
@click.option("--list", "do_list", is_flag=True, help="list the file's kernels (location, kind, the name --kernel takes)")
@click.option("--kernel", "kernel_name", help="the kernel to use when the file has several (see --list)")
@click.option("--shape", "shapes", multiple=True, callback=_shapes, metavar="NAME=64x128[:DT]",
              help="a parameter's shape (and dtype) or a scalar's value (NAME=VALUE), for shapes bound at the call; repeatable")
@click.option("--merge-loop1", is_flag=True, help="merge consecutive loop(1) regions (the PTO012 fix)")
@click.option("--no-spans", is_flag=True, help="leave source locations out of the printed IR and #line directives out of the Ascend C")
@click.option("-q", "--quiet", is_flag=True, help="no progress lines on stderr (compiler runs of --build/--run)")
def main(file, emit, output, do_run, do_build, backend, soc, do_list, kernel_name, shapes, merge_loop1, no_spans,
         quiet) -> None:
    """Lower the PyPTO kernel in FILE to the control/compute IR (FILE is read, never run, except by --run)."""
    from pypto_ast import pipeline
    from pypto_ast.errors import BackendUnavailable

    soc = soc.lower()
    if do_build and backend not in ("host", "npu"):
        raise click.UsageError("--build needs --backend host or --backend npu")
    if sum(map(bool, (emit, do_run, do_build, do_list))) > 1:
        raise click.UsageError("choose one of --list, --emit, --run, --build")
    if emit == "ascendc" and not output:
        raise click.UsageError("--emit ascendc writes several files: give the directory with -o DIR")
    if not emit and not do_run and not do_build and not do_list:
        emit = "ir"
    progress = None if quiet else (lambda line: click.echo(line, err=True))
    try:
        if do_list:
            _list(file)
            return
        if do_run:
            raise SystemExit(_run(file, kernel_name, shapes, backend, soc, merge_loop1, progress))
        program = pipeline.lower_file(file, kernel_name, shapes=shapes, merge_loop1=merge_loop1)
        if do_build:
            build = pipeline.build_npu if backend == "npu" else pipeline.build_host
            library = build(program, soc=soc, out_dir=output, progress=progress)
            click.echo(f"built {program.name} for {soc} ({backend} backend): {_display(str(library))}")
            return
        if emit == "ascendc":
            files = pipeline.emit(program, "ascendc", soc=soc, spans=not no_spans)
            for path in pipeline.write_files(files, output):
                click.echo(f"wrote {_display(path)}")
            return
        text = pipeline.emit(program, emit, spans=not no_spans, source_path=file, soc=soc, shapes=shapes)
    except pipeline.KernelErrors as exc:
        path = exc.path or file
        _report([_diagnostic(path, m, s, exc.code) for m, s in exc.findings], _source(path))
        raise SystemExit(1)
    except pipeline.PipelineError as exc:
        path = exc.path or file
        _report([_diagnostic(path, exc.message, exc.span, "PTO103")], _source(path))
        raise SystemExit(2)
    except (SystemExit, KeyboardInterrupt, click.ClickException):
        raise
    except BackendUnavailable as exc:
        _report([_diagnostic(file, str(exc), None, "PTO103")], _source(file))
        raise SystemExit(2)
    except Exception as exc:  # our bug: one located line, never a traceback (PYPTO_AST_TRACEBACK=1 shows it)
        import os

        if os.environ.get("PYPTO_AST_TRACEBACK"):
            raise
        message = (f"pypto-transpile failed: {type(exc).__name__}: {exc}; this is a pypto-ast bug, please report "
                   "it (PYPTO_AST_TRACEBACK=1 prints the traceback)")
        _report([_diagnostic(file, message, None, "PTO999", "internal-error")], _source(file))
        raise SystemExit(2)
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        click.echo(text, nl=False)


def _list(file: str) -> None:
    """One line per kernel: ``path:line:col  kind  name`` (the name is what --kernel takes)."""
    from pypto_ast import pipeline

    kernels = pipeline.list_kernels(pipeline.read_source(file))
    if not kernels:
        click.echo(f"{_display(file)}: no kernels", err=True)
        return
    width = max(len(k.kind) for k in kernels)
    for k in kernels:
        click.echo(f"{_display(file)}:{k.line}:{getattr(k.node, 'col_offset', 0) + 1}  {k.kind.ljust(width)}  {k.name}")


def _run(file, kernel_name, shapes, backend, soc, merge_loop1, progress) -> int:
    """Import the module (the only place the file runs) for its inputs and reference, lower the
    kernel from its source for those inputs' shapes, run it and compare."""
    import os

    from pypto_ast import live, pipeline
    from pypto_ast.runner import run_and_compare

    if "torch" not in sys.modules:  # a torch_npu without CANN would break the module's `import torch` (design §20)
        os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    module = live.load_module(file)
    if not hasattr(module, "example_inputs"):
        raise pipeline.PipelineError("--run needs the module to define example_inputs() (a dict of arguments by "
                                     "parameter name) and reference(**inputs)", file)
    inputs = live.call_user(module, "example_inputs")
    if not isinstance(inputs, dict):
        raise pipeline.PipelineError("example_inputs() must return a dict of arguments by parameter name", file)
    program = pipeline.lower_file(file, kernel_name, shapes=shapes, inputs=inputs, merge_loop1=merge_loop1)
    return run_and_compare(module, program, inputs, backend=backend, echo=click.echo, soc=soc, progress=progress)


if __name__ == "__main__":
    main()
