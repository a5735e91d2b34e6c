"""The options every kueuectl verb takes (kubectl's own names), and running a verb's body.

Owned by ``cli/kueuectl``. Each verb declares these as its own options, so they may come anywhere
on the line (``kubectl kueue list workload -n team-a``), as with kubectl. :func:`run` turns a
:class:`~.connection.CommandError` into its one line on stderr and exit code 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

import typer

from .connection import Cluster, CommandError, connect

__all__ = ["AllNamespaces", "Context", "Kubeconfig", "Namespace", "Output", "Target", "aliases", "run"]

Kubeconfig = Annotated[str, typer.Option("--kubeconfig", help="Path to the kubeconfig file to use.")]
Context = Annotated[str, typer.Option("--context", help="The name of the kubeconfig context to use.")]
Namespace = Annotated[str, typer.Option("--namespace", "-n", help="The namespace scope for this request.")]
AllNamespaces = Annotated[
    bool, typer.Option("--all-namespaces", "-A", help="List the requested object(s) across all namespaces.")
]
Output = Annotated[str, typer.Option("--output", "-o", help="Output format: yaml, json, wide or name.")]
DryRun = Annotated[str, typer.Option("--dry-run", help='Must be "none", "server", or "client".')]

T = TypeVar("T")


class Target:
    """Where a verb talks to: resolved lazily so that argument errors come before connection errors."""

    def __init__(self, kubeconfig: str, context: str, namespace: str) -> None:
        self._args = (kubeconfig, context, namespace)
        self._cluster: Cluster | None = None

    @property
    def cluster(self) -> Cluster:
        if self._cluster is None:
            self._cluster = connect(*self._args)
        return self._cluster


def aliases(app: typer.Typer, names: tuple[str, ...]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register a verb's command under ``names[0]`` and, hidden, under Kueue's aliases."""

    def register(func: Callable[..., None]) -> Callable[..., None]:
        app.command(names[0])(func)
        for alias in names[1:]:
            app.command(alias, hidden=True)(func)
        return func

    return register


def check_dry_run(value: str) -> str:
    if value not in ("none", "server", "client", ""):
        raise CommandError(f'error: Invalid dry-run value ({value}). Must be "none", "server", or "client".')
    return value or "none"


def run(body: Callable[[], T]) -> T:
    """Run a verb; a CommandError is printed as one line and exits with code 1."""
    try:
        return body()
    except CommandError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(1) from None
