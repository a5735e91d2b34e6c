"""``pykueue install``: print the manifests that run pykueue on a cluster (``kubectl apply --server-side -f -``).

Owned by ``cli/``; the objects come from :mod:`pykueue.install`. Bad options (a namespace that is no
DNS label, an unreadable or invalid ``--config``, an unknown integration) are one line on stderr and
exit code 2; nothing is printed then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import yaml

__all__ = ["install"]


def install(
    namespace: Annotated[str, typer.Option(help="Namespace pykueue runs in.")] = "pykueue-system",
    image: Annotated[str, typer.Option(help="Container image of the controller (default: pykueue:<version>).")] = "",
    replicas: Annotated[int, typer.Option(help="Controller replicas (one leads, all serve the webhooks).")] = 2,
    config: Annotated[
        Path | None, typer.Option(help="Kueue's Configuration YAML for the controller (as pykueue up --config).")
    ] = None,
    integrations: Annotated[
        list[str] | None,
        typer.Option(
            "--integrations",
            help="Enabled integration (Kueue's framework name, e.g. batch/job); repeatable or "
            "comma-separated (default: the Configuration's, else batch/job, "
            "jobset.x-k8s.io/jobset, pod).",
        ),
    ] = None,
    cert_manager: Annotated[
        bool,
        typer.Option(
            "--cert-manager",
            help="Let cert-manager issue the webhook certificate and inject its CA (default: the controller does).",
        ),
    ] = False,
    no_namespace: Annotated[
        bool, typer.Option("--no-namespace", help="Leave the Namespace object out (it exists already).")
    ] = False,
) -> None:
    """Print every object a cluster needs to run pykueue (multi-document YAML, in apply order)."""
    from pykueue.install import install_options, render

    try:
        text = config.read_text() if config is not None else None
    except OSError as exc:
        typer.echo(f"error: --config {config}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    frameworks = [f.strip() for item in integrations or [] for f in item.split(",") if f.strip()]
    try:
        options = install_options(
            namespace=namespace,
            image=image,
            replicas=replicas,
            config_text=text,
            integrations=frameworks or None,
            cert_manager=cert_manager,
        )
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(yaml.safe_dump_all(render(options, with_namespace=not no_namespace), sort_keys=False), nl=False)
