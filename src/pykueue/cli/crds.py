"""``pykueue crds``: print the CustomResourceDefinitions of Kueue's and JobSet's kinds as YAML.

Owned by ``cli/``. The same objects ``pykueue up`` stores at start, so a bare cluster
(``pykueue up --no-kueue``) or a real one gets Kueue's kinds with
``pykueue crds | kubectl apply --server-side -f -``.
"""

from __future__ import annotations

from typing import Annotated

import typer
import yaml

from pykueue.api.crds import custom_resource_definitions

__all__ = ["crds"]

_GROUPS = ("kueue.x-k8s.io", "jobset.x-k8s.io")


def crds(
    group: Annotated[
        list[str] | None,
        typer.Option("--group", help="Only this API group's CRDs (kueue.x-k8s.io, jobset.x-k8s.io); repeatable."),
    ] = None,
) -> None:
    """Print the CRDs of Kueue's and JobSet's kinds (multi-document YAML)."""
    unknown = sorted(set(group or ()) - set(_GROUPS))
    if unknown:
        typer.echo(f"error: unknown group {unknown[0]!r} (choose from {', '.join(_GROUPS)})", err=True)
        raise typer.Exit(2)
    documents = custom_resource_definitions(groups=tuple(group) if group else None)
    typer.echo(yaml.safe_dump_all(documents, sort_keys=False), nl=False)
