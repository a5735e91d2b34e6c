"""The metrics port of ``pykueue controller``: which certificate it serves, and serving it.

Owned by ``cli/``; :mod:`pykueue.cli.controller_run` calls :func:`start_metrics`. As Kueue's
controller-manager (controller-runtime's secure serving), the port is HTTPS only:

- with ``--metrics-cert-dir`` its ``tls.crt`` and ``tls.key`` (cert-manager's, mounted; Kueue reads
  them from ``/etc/kueue/metrics/certs`` when its internal certificate management is off), re-read when
  they change (:mod:`pykueue.cli.cert_files`);
- otherwise a self-signed certificate made at start for ``localhost``, ``127.0.0.1`` and ``::1``
  (controller-runtime's fallback, which Kueue serves with its internal certificate management): the
  connection is encrypted and a scraper skips verification, as Kueue's ServiceMonitor does then.

Requests are authenticated and authorised with the API server (:mod:`pykueue.metrics.secure_endpoint`)
unless ``--metrics-authentication=false``, which needs a loopback ``metrics.bindAddress``.
"""

from __future__ import annotations

import shutil
import ssl
import tempfile
from pathlib import Path

from aiohttp import web
from prometheus_client import CollectorRegistry

from pykueue.client import Client
from pykueue.metrics.delegated_auth import DelegatedAuth
from pykueue.metrics.secure_endpoint import serve_secure_metrics
from pykueue.webhooks.certs import new_bundle
from pykueue.webhooks.server import server_ssl_context

__all__ = ["SELF_SIGNED_NAMES", "cert_dir_problem", "metrics_ssl_context", "parse_bool", "start_metrics"]

SELF_SIGNED_NAMES = ("localhost", "127.0.0.1", "::1")
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(text: str, flag: str) -> bool:
    """A boolean flag value as Go's flag package reads it (``true``, ``false``, ``1``, ``0``, ...)."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{flag} {text!r}: use true or false")


def cert_dir_problem(cert_dir: Path) -> str | None:
    """Why ``--metrics-cert-dir`` cannot be served from (None: both files are there)."""
    missing = [name for name in ("tls.crt", "tls.key") if not (cert_dir / name).is_file()]
    if missing:
        return f"--metrics-cert-dir {cert_dir}: no {' or '.join(missing)} there"
    return None


def metrics_ssl_context(cert_dir: Path | None) -> ssl.SSLContext:
    """The metrics port's TLS context: ``cert_dir``'s certificate, or a new self-signed one."""
    if cert_dir is not None:
        return server_ssl_context(cert_dir / "tls.crt", cert_dir / "tls.key")
    bundle = new_bundle(SELF_SIGNED_NAMES)
    # the ssl module loads a key pair from files only: a private directory, removed at once
    scratch = Path(tempfile.mkdtemp(prefix="pykueue-metrics-cert-"))
    try:
        (scratch / "tls.crt").write_bytes(bundle.tls_crt + bundle.ca_crt)
        (scratch / "tls.key").write_bytes(bundle.tls_key)
        return server_ssl_context(scratch / "tls.crt", scratch / "tls.key")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def start_metrics(
    registry: CollectorRegistry,
    client: Client,
    *,
    host: str,
    port: int,
    cert_dir: Path | None,
    authentication: bool,
) -> tuple[web.AppRunner, int, ssl.SSLContext]:
    """Serve ``registry`` at ``https://host:port/metrics``; the runner, the bound port and the TLS context
    (a certificate loaded into it is served from the next handshake)."""
    auth = DelegatedAuth(client) if authentication else None
    context = metrics_ssl_context(cert_dir)
    runner, bound = await serve_secure_metrics(registry, host, port, ssl_context=context, auth=auth)
    return runner, bound, context
