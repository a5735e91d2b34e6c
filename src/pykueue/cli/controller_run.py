"""The body of ``pykueue controller`` once its options are checked: certificates, servers, leadership.

Owned by ``cli/``; :mod:`pykueue.cli.controller` parses and checks the command line, then runs
:func:`run_controller` on the event loop. Order on every replica: client, certificate (Secret, CA
injected), the configuration informers the webhooks read, the webhook server, the probes and the
metrics (HTTPS, each scrape reviewed by the API server: :mod:`pykueue.cli.controller_metrics`);
then leader election (on a client of its own, so renewals never wait behind the controllers'
requests in the QPS limiter); the leader alone starts the scheduler and the controllers. ``/readyz``
is 200 once the webhooks are served with synced caches; ``/healthz`` while the process runs (a leader
that loses its Lease exits).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
import ssl
import sys
import tempfile
import uuid
from pathlib import Path

from aiohttp import web
from prometheus_client import CollectorRegistry

from pykueue.cli.cert_files import FilesStamp, files_stamp, reload_when_changed
from pykueue.cli.controller_metrics import start_metrics
from pykueue.cli.controller_settings import ClusterSettings
from pykueue.client import HttpClient
from pykueue.client.kubeconfig import ConnectionConfig
from pykueue.client.leader import LeaderElector, LeaseConfig
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.manager import ControllerManager
from pykueue.listening import start_site
from pykueue.webhooks.catalogue import WEBHOOKS
from pykueue.webhooks.certs import CertBundle, serving_names
from pykueue.webhooks.injection import ensure_secret, inject_ca, refresh_certificate, write_bundle
from pykueue.webhooks.review import ReviewHandler
from pykueue.webhooks.server import serve_webhooks, server_ssl_context

__all__ = ["HEALTH_LINE", "LEADING_LINE", "METRICS_LINE", "WEBHOOK_LINE", "ControllerOptions", "run_controller"]

log = logging.getLogger(__name__)

WEBHOOK_LINE = "pykueue controller webhooks at "
HEALTH_LINE = "pykueue controller health probes at "
METRICS_LINE = "pykueue controller metrics at "
LEADING_LINE = "pykueue controller is leading"


class ControllerOptions:
    """The resolved settings of one ``pykueue controller`` run."""

    def __init__(
        self,
        *,
        namespace: str,
        settings: ClusterSettings,
        webhook_host: str,
        webhook_port: int,
        webhook_url: str | None,
        cert_host: str | None,
        health_port: int,
        metrics_port: int,
        cert_dir: Path | None,
        metrics_host: str = "",
        metrics_authentication: bool = True,
        metrics_cert_dir: Path | None = None,
        leader_elect: bool,
        probe_host: str,
    ) -> None:
        self.namespace = namespace
        self.settings = settings
        self.webhook_host = webhook_host
        self.webhook_port = webhook_port
        self.webhook_url = webhook_url
        self.cert_host = cert_host
        self.health_port = health_port
        self.metrics_port = metrics_port
        self.metrics_host = metrics_host or probe_host
        """Where /metrics is served: metrics.bindAddress's host, else where the probes are."""
        self.metrics_authentication = metrics_authentication
        self.metrics_cert_dir = metrics_cert_dir
        self.cert_dir = cert_dir
        self.leader_elect = leader_elect
        self.probe_host = probe_host
        self.identity = f"{socket.gethostname()}_{uuid.uuid4()}"

    def private_cert_dir(self) -> tuple[Path, bool]:
        """The certificate directory, and whether it is a temporary one made here (removed at exit)."""
        if self.cert_dir is not None:
            self.cert_dir.mkdir(parents=True, exist_ok=True)
            return self.cert_dir, False
        return Path(tempfile.mkdtemp(prefix="pykueue-webhook-certs-")), True


def remove_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def exit_now(code: int) -> None:
    """Leave at once (leadership lost): nothing this process still has queued may reach the server."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


async def _serve(app: web.Application, host: str, port: int) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    return runner, await start_site(runner, host, port)


def _probes(ready: asyncio.Event) -> web.Application:
    async def healthz(_: web.Request) -> web.StreamResponse:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.StreamResponse:
        if ready.is_set():
            return web.Response(text="ok")
        return web.Response(status=503, text="not ready: webhooks not served yet")

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    return app


async def _keep_certificate(
    client: HttpClient,
    namespace: str,
    names: tuple[str, ...],
    bundle: CertBundle,
    cert_dir: Path,
    context: ssl.SSLContext,
    url: str | None,
) -> None:
    """Every few seconds: renew the certificate when due (or take the one another replica stored) and
    serve it at once, and re-inject the CA, so configurations and CRDs applied later get it too."""
    while True:
        await asyncio.sleep(INJECT_EVERY_S)
        try:
            bundle = await refresh_certificate(client, namespace, names, bundle, cert_dir, context)
            await inject_ca(client, bundle.ca_crt, url)
        except Exception as exc:  # the next round retries
            log.warning("webhook certificate refresh or CA injection failed: %r", exc)


INJECT_EVERY_S = 10.0


def _stamp(directory: Path) -> FilesStamp:
    return files_stamp(directory / "tls.crt", directory / "tls.key")


async def _reload(directory: Path, context: ssl.SSLContext, what: str, loaded: FilesStamp) -> None:
    await reload_when_changed(directory / "tls.crt", directory / "tls.key", context, what=what, loaded=loaded)


async def run_controller(connection: ConnectionConfig, config: KueueConfig, options: ControllerOptions) -> int:
    settings = options.settings
    client = HttpClient(
        connection, field_manager="pykueue", user_agent="pykueue-controller", qps=settings.qps, burst=settings.burst
    )
    registry = CollectorRegistry()
    manager = ControllerManager(client, config, metrics_registry=registry)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    cert_dir, temporary = options.private_cert_dir()
    runners: list[web.AppRunner] = []
    tasks: list[asyncio.Task[None]] = []
    ready = asyncio.Event()
    elector: LeaderElector | None = None
    try:
        bundle: CertBundle | None = None
        names = serving_names(
            settings.service_name, options.namespace, (options.cert_host,) if options.cert_host else ()
        )
        if settings.internal_certs:
            bundle = await ensure_secret(client, options.namespace, names)
            write_bundle(bundle, cert_dir)
            missing = await inject_ca(client, bundle.ca_crt, options.webhook_url)
            if missing:
                log.warning("not found yet (the CA is injected once they exist): %s", ", ".join(missing))
        webhook_files = _stamp(cert_dir)  # before the files are loaded: a renewal from now on is seen
        context = server_ssl_context(cert_dir / "tls.crt", cert_dir / "tls.key")
        if bundle is not None:
            tasks.append(
                asyncio.create_task(
                    _keep_certificate(client, options.namespace, names, bundle, cert_dir, context, options.webhook_url)
                )
            )
        await manager.start_webhook_caches()
        # every path is served, so a webhook configuration naming an integration that is off here
        # admits unchanged instead of failing every write of that kind (404)
        handler = ReviewHandler(manager.admission_hooks(), (i.name for i in manager.integrations))
        runner, port = await serve_webhooks(
            handler,
            list(WEBHOOKS),
            host=options.webhook_host,
            port=options.webhook_port,
            cert_file=cert_dir / "tls.crt",
            key_file=cert_dir / "tls.key",
            ssl_context=context,
        )
        runners.append(runner)
        print(f"{WEBHOOK_LINE}https://{options.webhook_host}:{port}", flush=True)
        ready.set()
        runner, port = await _serve(_probes(ready), options.probe_host, options.health_port)
        runners.append(runner)
        print(f"{HEALTH_LINE}http://{options.probe_host}:{port}", flush=True)
        metrics_files = _stamp(options.metrics_cert_dir) if options.metrics_cert_dir is not None else None
        runner, port, metrics_context = await start_metrics(
            registry,
            client,
            host=options.metrics_host,
            port=options.metrics_port,
            cert_dir=options.metrics_cert_dir,
            authentication=options.metrics_authentication,
        )
        runners.append(runner)
        # mounted certificates (cert-manager's) are re-read when the kubelet swaps the files
        if options.metrics_cert_dir is not None:
            tasks.append(
                asyncio.create_task(_reload(options.metrics_cert_dir, metrics_context, "metrics", metrics_files))
            )
        if bundle is None:
            tasks.append(asyncio.create_task(_reload(cert_dir, context, "webhook", webhook_files)))
        shown = f"[{options.metrics_host}]" if ":" in options.metrics_host else options.metrics_host
        print(f"{METRICS_LINE}https://{shown}:{port}/metrics", flush=True)
        if options.leader_elect:
            lease = LeaseConfig(
                name=settings.lease_name,
                namespace=settings.lease_namespace or options.namespace,
                identity=options.identity,
                lease_duration=settings.lease_duration,
                renew_deadline=settings.renew_deadline,
                retry_period=settings.retry_period,
            )
            # a client of its own: renewals never queue behind the controllers' requests in the QPS limiter
            election_client = HttpClient(connection, user_agent="pykueue-controller-leader-election")
            elector = LeaderElector(election_client, lease, on_lost=lambda: exit_now(1))
            acquiring = asyncio.create_task(elector.acquire())
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({acquiring, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not acquiring.done():
                acquiring.cancel()
                return 0
            tasks.append(asyncio.create_task(elector.renew_until_lost()))
        await manager.start()
        print(LEADING_LINE, flush=True)
        await stop.wait()
        return 0
    finally:
        for task in tasks:
            task.cancel()
        await manager.stop()
        if elector is not None:
            await elector.release()
            await elector.client.close()
        for runner in runners:
            await runner.cleanup()
        await client.close()
        if temporary:
            remove_dir(cert_dir)
        with contextlib.suppress(Exception):
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
