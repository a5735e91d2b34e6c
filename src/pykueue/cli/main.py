"""The ``pykueue`` command line (typer). Subcommands live in their own modules under ``cli/``.

Global options (``--version``, ``--log-level``, ``--log-format``) come before the command; every
option that has an environment variable shows it in ``--help`` (``PYKUEUE_<OPTION>``); shell
completion is typer's (``pykueue --install-completion``).

Usage errors (an unknown option, ``--port abc``) are one line on stderr and exit code 2, like
every other argument error of pykueue's, instead of typer's framed panel.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from typer.exceptions import TyperException

from pykueue.cli.bench import bench_app
from pykueue.cli.controller import controller
from pykueue.cli.crds import crds
from pykueue.cli.demo import demo
from pykueue.cli.install import install
from pykueue.cli.kueuectl.actions import version
from pykueue.cli.kueuectl.app import add_verbs, hoist_flags, passthrough
from pykueue.cli.rbac_check import rbac_check
from pykueue.cli.simulate import simulate_app
from pykueue.cli.simulate_eta import eta
from pykueue.cli.up import up

app = typer.Typer(
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    help="Kueue-compatible job queueing, with an embedded Kubernetes-compatible API server.",
)


def _print_version(value: bool) -> None:
    if value:
        from pykueue import __version__

        typer.echo(f"pykueue {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print pykueue's version and exit."),
    ] = False,
    log_level: Annotated[
        str,
        typer.Option(
            envvar="PYKUEUE_LOG_LEVEL",
            show_envvar=True,
            help="Least severe log records shown: debug, info, warning, error.",
        ),
    ] = "info",
    log_format: Annotated[
        str,
        typer.Option(
            envvar="PYKUEUE_LOG_FORMAT", show_envvar=True, help="Log lines as 'text' or 'json' (one object per line)."
        ),
    ] = "text",
) -> None:
    from pykueue.cli.logsetup import configure_logging, log_option_error

    if (problem := log_option_error(log_level, log_format)) is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    configure_logging(log_level, log_format)
    ctx.obj = {"log_level": log_level.lower(), "log_format": log_format.lower()}


app.command()(up)
app.command()(demo)
app.command()(crds)
app.command()(controller)
app.command()(install)
app.command("rbac-check")(rbac_check)
app.add_typer(bench_app, name="bench", help="Benchmarks (pykueue bench core | apiserver | scheduler).")
simulate_app.command("eta")(eta)  # here, not in cli/simulate.py: simulate_eta imports that module
app.add_typer(
    simulate_app,
    name="simulate",
    help="What-if trace replays and start-time estimates (pykueue simulate init | run | eta).",
)
add_verbs(app)  # kueuectl's verbs (create, list, stop, resume, delete, get/describe/edit/patch) and explain
app.command()(version)


def main() -> None:
    args = hoist_flags(sys.argv[1:])
    passthrough(args)
    try:
        code = app(args=args, standalone_mode=False, prog_name="pykueue")  # typer.Exit(n) comes back as n
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(1)
    except TyperException as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if message:  # an empty one (no arguments: help was printed) needs no second line
            ctx = getattr(exc, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            typer.echo(f"error: {message}{hint}", err=True)
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
