"""``pykueue controller``: the controllers, the scheduler and Kueue's webhooks against any API server.

Owned by ``cli/``. What Kueue's controller-manager Deployment runs, as pykueue: connect with the
official kubeconfig loader (``--kubeconfig``, ``--context``, in a pod the service account), read
Kueue's ``Configuration`` (``--config``), then on every replica

1. with internal certificate management (the default) keep the webhook certificate in the Secret
   ``pykueue-webhook-server-cert`` and inject its CA into the webhook configurations and CRDs
   (``--webhook-url`` also points them at that URL instead of the Service), re-checked every few
   seconds so configurations applied later get it too; otherwise use the certificate
   mounted in ``--cert-dir`` (cert-manager's);
2. serve the webhooks over HTTPS (``--webhook-port``, or the ``--webhook-url`` address), the probes
   ``/healthz`` and ``/readyz`` (``--health-port``) and Kueue's metrics over HTTPS (``--metrics-port``),
   each scrape authenticated and authorised with the API server (:mod:`pykueue.cli.controller_metrics`);
3. wait to lead on the Lease ``pykueue-controller-leader`` (``--no-leader-elect``: lead at once),
   then run the scheduler and the controllers; a leader that cannot renew its Lease exits with code 1
   at once, as controller-runtime's managers do, so its replacement starts clean.

Lines on stdout announce the bound addresses, then that this replica leads
(:mod:`pykueue.cli.controller_run`). Errors: a bad flag or Configuration is one line and exit
2; a missing or unusable kubeconfig one line and exit 1.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
import yaml

from pykueue.cli.controller_metrics import cert_dir_problem, parse_bool
from pykueue.cli.controller_settings import read_settings
from pykueue.cli.option_checks import port_error
from pykueue.metrics.secure_endpoint import unauthenticated_bind_problem

__all__ = ["controller"]

log = logging.getLogger(__name__)


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _webhook_address(url: str | None, port: int) -> tuple[str, int, str | None]:
    """(bind host, port, host the certificate must also cover) for the webhook server."""
    if url is None:
        return "0.0.0.0", port, None
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.path not in ("", "/") or parts.query:
        raise ValueError(f"--webhook-url {url!r}: must be https://HOST:PORT (no path)")
    return parts.hostname, parts.port or 443, parts.hostname


def controller(
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the pod's service account)."),
    ] = None,
    context: Annotated[str, typer.Option(help="Kubeconfig context (default: its current context).")] = "",
    config: Annotated[
        Path | None,
        typer.Option(
            help="Kueue's Configuration YAML (as pykueue up --config).", envvar="PYKUEUE_CONFIG", show_envvar=True
        ),
    ] = None,
    namespace: Annotated[
        str, typer.Option(help="The namespace pykueue is installed in (Secret, Lease, webhook Service).")
    ] = "pykueue-system",
    webhook_port: Annotated[int | None, typer.Option(help="HTTPS port of the webhooks (default: 9443).")] = None,
    webhook_url: Annotated[
        str | None,
        typer.Option(
            help="Serve the webhooks at this https://HOST:PORT and point the webhook configurations and CRDs "
            "at it instead of the Service (a controller outside the cluster)."
        ),
    ] = None,
    health_port: Annotated[
        int | None, typer.Option(help="Port of /healthz and /readyz (plain HTTP) (default: 8081; 0 = any free port).")
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(help="HTTPS port of /metrics (default: 8443, or metrics.bindAddress's; 0 = any free port)."),
    ] = None,
    metrics_authentication: Annotated[
        str,
        typer.Option(
            metavar="true|false",
            help="Authenticate and authorise /metrics requests with the API server (TokenReview, "
            "SubjectAccessReview; scrapers need get on the non-resource URL /metrics). false needs "
            "metrics.bindAddress to be an explicit loopback IP and port; HTTPS either way.",
        ),
    ] = "true",
    metrics_cert_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where the metrics certificate files are (tls.crt, tls.key), re-read when they change "
            "(default: a self-signed certificate made at start)."
        ),
    ] = None,
    cert_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where the webhook certificate files are (tls.crt, "
            "tls.key): written here with internal certificate "
            "management, read from here without."
        ),
    ] = None,
    no_leader_elect: Annotated[
        bool, typer.Option("--no-leader-elect", help="Lead at once (a single replica), without a Lease.")
    ] = False,
) -> None:
    """Run pykueue's controllers, scheduler and webhooks against a Kubernetes API server (Kueue's
    controller-manager)."""
    from pykueue.api.meta.errors import ApiError, NotFound
    from pykueue.client.connection import load_connection
    from pykueue.client.leader import LeaseConfig
    from pykueue.controllers.config import ConfigError, parse_config
    from pykueue.controllers.frameworks import DEFAULT_FRAMEWORKS

    for value, flag in (
        (webhook_port, "--webhook-port"),
        (health_port, "--health-port"),
        (metrics_port, "--metrics-port"),
    ):
        if value is not None and (problem := port_error(value)) is not None:
            raise _fail(problem.replace("--port", flag), 2)
    try:
        doc: Any = yaml.safe_load(config.read_text()) if config is not None else {}
    except (OSError, yaml.YAMLError) as exc:
        raise _fail(f"--config {config}: {' '.join(str(exc).split())}", 2) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise _fail(f"--config {config}: not a Configuration (expected a mapping)", 2)
    try:
        # without --config, the integrations pykueue up enables (and pykueue install configures)
        defaults = {} if config is not None else {"integrations": {"frameworks": list(DEFAULT_FRAMEWORKS)}}
        kueue_config = parse_config({"namespace": namespace, **defaults, **doc})
        settings = read_settings(doc)
        host, port, cert_host = _webhook_address(
            webhook_url, webhook_port if webhook_port is not None else settings.webhook_port
        )
        timings = LeaseConfig(
            name=settings.lease_name,
            namespace=namespace,
            identity="",
            lease_duration=settings.lease_duration,
            renew_deadline=settings.renew_deadline,
            retry_period=settings.retry_period,
        )
        if (problem := timings.problem()) is not None:
            raise ValueError(f"leaderElection: {problem}")
        authenticate_metrics = parse_bool(metrics_authentication, "--metrics-authentication")
        if not authenticate_metrics and (problem := unauthenticated_bind_problem(settings.metrics_host)):
            raise ValueError(problem)
        if metrics_cert_dir is not None and (problem := cert_dir_problem(metrics_cert_dir)):
            raise ValueError(problem)
    except (ConfigError, ValueError) as exc:
        raise _fail(str(exc), 2) from None
    if not settings.internal_certs and cert_dir is None:
        raise _fail("internalCertManagement.enable is false: give --cert-dir with the mounted tls.crt and tls.key", 2)
    try:
        connection = load_connection(kubeconfig, context=context)
    except ValueError as exc:
        raise _fail(str(exc), 1) from None
    from pykueue.cli.controller_run import ControllerOptions, run_controller

    options = ControllerOptions(
        namespace=namespace,
        settings=settings,
        webhook_host=host,
        webhook_port=port,
        webhook_url=webhook_url,
        cert_host=cert_host,
        health_port=health_port if health_port is not None else settings.health_port,
        metrics_port=metrics_port if metrics_port is not None else settings.metrics_port,
        metrics_host=settings.metrics_host,
        metrics_authentication=authenticate_metrics,
        metrics_cert_dir=metrics_cert_dir,
        cert_dir=cert_dir,
        leader_elect=settings.leader_elect and not no_leader_elect,
        probe_host="127.0.0.1" if webhook_url is not None else "0.0.0.0",
    )
    from pykueue.eventloop import run as run_loop

    try:
        code = run_loop(run_controller(connection, kueue_config, options))
    except OSError as exc:  # a port in use, an unreachable server at start
        raise _fail(str(exc), 1) from None
    except ApiError as exc:  # the server refused a start-up step: its namespace or Kueue's CRDs missing, RBAC
        hint = " (is pykueue installed there? see pykueue install)" if isinstance(exc, NotFound) else ""
        raise _fail(f"{exc}{hint}", 1) from None
    if code:
        raise typer.Exit(code)
