"""The ``pykueue`` command line (typer). Subcommands live in their own modules under ``cli/``."""

from __future__ import annotations

import sys

import typer

from pykueue.cli.bench import bench_app
from pykueue.cli.demo import demo
from pykueue.cli.kueuectl.actions import version
from pykueue.cli.kueuectl.app import add_verbs, hoist_flags, passthrough
from pykueue.cli.up import up

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Kueue-compatible job queueing, with an embedded Kubernetes-compatible API server.")
app.command()(up)
app.command()(demo)
app.add_typer(bench_app, name="bench", help="Benchmarks (pykueue bench core | apiserver | scheduler).")
add_verbs(app)  # kueuectl's verbs (create, list, stop, resume, delete, get/describe/edit/patch) and explain
app.command()(version)


def main() -> None:
    args = hoist_flags(sys.argv[1:])
    passthrough(args)
    app(args=args)
