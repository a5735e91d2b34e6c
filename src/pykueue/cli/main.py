"""The ``pykueue`` command line (typer). Subcommands live in their own modules under ``cli/``."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="Kueue-compatible job queueing, with an embedded Kubernetes-compatible API server.")


@app.command()
def version() -> None:
    """Print pykueue's version."""
    from pykueue import __version__

    typer.echo(__version__)


def main() -> None:
    app()
