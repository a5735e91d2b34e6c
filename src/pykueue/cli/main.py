"""The ``pykueue`` command line (typer). Subcommands live in their own modules under ``cli/``."""

from __future__ import annotations

import typer

from pykueue.cli.bench import bench_app
from pykueue.cli.demo import demo
from pykueue.cli.up import up

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Kueue-compatible job queueing, with an embedded Kubernetes-compatible API server.")
app.command()(up)
app.command()(demo)
app.add_typer(bench_app, name="bench", help="Benchmarks (pykueue bench core | apiserver | scheduler).")


@app.command()
def version() -> None:
    """Print pykueue's version."""
    from pykueue import __version__

    typer.echo(__version__)


def main() -> None:
    app()
