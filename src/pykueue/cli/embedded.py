"""Assembles the embedded cluster that ``pykueue up`` and ``pykueue demo`` run in one process.

Owns start-up order and shutdown: store -> registry -> API server -> controllers -> cluster parts,
and the reverse on stop, so no component ever sees a half-built neighbour. It is the only place
that knows every layer; each layer below knows only the ones beneath it.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from prometheus_client import CollectorRegistry

from pykueue.api.catalogue import build_catalogue
from pykueue.api.meta.clock import SystemClock
from pykueue.api.meta.errors import AlreadyExists, ApiError
from pykueue.apiserver import Server, serve
from pykueue.apiserver.audit import AuditLog
from pykueue.apiserver.bearer_token import load_or_create_token
from pykueue.apiserver.certs import ensure_certificates
from pykueue.apiserver.visibility import EngineBackend, RemoteBackend
from pykueue.cli.controller_process import ControllerProcess
from pykueue.cli.kubeconfig import write_kubeconfig
from pykueue.cli.running_config import CONFIG_MAPS, stored_config_map
from pykueue.client import LocalClient
from pykueue.client.group_version_resource import NAMESPACES
from pykueue.cluster import EmbeddedCluster, NodeSpec, default_nodes
from pykueue.controllers.config import KueueConfig, embedded_default, embedded_default_document
from pykueue.controllers.manager import ControllerManager
from pykueue.install.options import CONFIG_MAP
from pykueue.metrics import MetricsEndpoint, RemoteSource
from pykueue.registry import Registry
from pykueue.registry.suspend import UserInfo
from pykueue.store import Store

__all__ = ["Embedded", "EmbeddedOptions", "is_loopback"]

log = logging.getLogger(__name__)


def is_loopback(address: str) -> bool:
    if address in ("localhost", "127.0.0.1", "::1"):
        return True
    return address.startswith("127.")


@dataclass(slots=True)
class EmbeddedOptions:
    data_dir: Path | None = None
    """None keeps everything in memory (the demo); a folder makes state survive restarts."""
    address: str = "127.0.0.1"
    """Loopback by default: a non-loopback address is served over TLS only."""
    port: int = 6443
    kubeconfig: Path = field(default_factory=lambda: Path("pykueue.kubeconfig"))
    config: KueueConfig = field(default_factory=embedded_default)
    """Parsed (and so already validated) by the caller: bad files fail before anything starts."""
    nodes: list[NodeSpec] = field(default_factory=default_nodes)
    kueue: bool = True
    """False serves the API only (``--no-kueue``): no pykueue controllers, like a bare cluster."""
    controllers: str = "in-process"
    """"in-process" runs the controllers in the server's process; "process" in a child process of
    their own (:mod:`pykueue.cli.controller_process`), on the machine's other core."""
    config_path: Path | None = None
    """Where ``config`` was read from: the controller process reads it again."""
    config_text: str = ""
    """The YAML ``config`` was parsed from (``--config``); empty when ``config`` is the embedded
    default. Stored at start in the ConfigMap ``pykueue-manager-config`` of the Configuration's
    namespace, where ``explain`` and ``simulate eta`` read what the scheduler runs with."""
    cluster: bool = True
    """False skips the embedded Job controller, binder and node agents."""
    access_log: bool = False
    """Log one line per API request (``pykueue.apiserver.access``)."""
    log_level: str = "info"
    log_format: str = "text"
    """Passed on to the controller process (this process's logging is its command's choice)."""
    allow_root_pods: bool = False
    """Process nodes may run pods as root when pykueue is root (else they run as ``nobody``)."""
    durability: str = "fsync"
    """``fsync``: an acknowledged write survives power loss; ``os``: a process crash only (faster)."""
    users: dict[str, UserInfo] = field(default_factory=dict)
    """Further bearer tokens and their users (``--token-auth-file``, already parsed)."""
    audit_log: Path | None = None
    """Write one ``audit.k8s.io/v1`` Event per API request here, as JSON lines (``--audit-log``)."""


async def _record_configuration(client: LocalClient, opts: EmbeddedOptions) -> None:
    """Store the Configuration the controllers run with as a cluster installed by ``pykueue install``
    holds it (ConfigMap ``pykueue-manager-config`` in the Configuration's namespace, created if
    missing), replacing what an earlier start with another Configuration left (in any namespace).
    Like ``kubeadm-config``, it records what runs: editing it changes nothing until a restart."""
    text = opts.config_text or yaml.safe_dump(embedded_default_document(), sort_keys=False)
    config_map = stored_config_map(text, opts.config)
    namespace = opts.config.namespace
    with contextlib.suppress(AlreadyExists):
        await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    earlier, _ = await client.list(CONFIG_MAPS, field_selector=f"metadata.name={CONFIG_MAP}")
    for stale in earlier:
        if stale["metadata"].get("namespace") != namespace:
            await client.delete(CONFIG_MAPS, CONFIG_MAP, stale["metadata"].get("namespace", ""))
    await client.patch(CONFIG_MAPS, CONFIG_MAP, config_map, namespace=namespace, patch_type="apply", force=True)


def _free_port(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address if address != "localhost" else "127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Embedded:
    """One embedded cluster. ``await start()``, then use :attr:`url` / :attr:`token`; ``await stop()``."""

    def __init__(self, options: EmbeddedOptions) -> None:
        self.options = options
        self.clock = SystemClock()
        self.token = ""
        self.url = ""
        self._cluster: EmbeddedCluster | None = None
        self._manager: ControllerManager | None = None
        self.controller_process: ControllerProcess | None = None
        self._store: Store | None = None
        self._server: Server | None = None
        self._remote_visibility: RemoteBackend | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.metrics = MetricsEndpoint(CollectorRegistry())
        """What the API server's ``/metrics`` serves: its own registry, plus the controller process's."""

    async def start(self) -> None:
        opts = self.options
        db_path: str | None = None
        if opts.data_dir is not None:
            # Made owner-only when pykueue creates it; an existing folder (".", a home) keeps its mode:
            # the secrets inside are 0600 files of their own.
            opts.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            db_path = str(opts.data_dir / "state.db")
        self.token = load_or_create_token(opts.data_dir)
        self._store = Store(db_path, auto_flush=False, durability=opts.durability)
        self._store.claim_writer()  # a second `pykueue up` on this data dir fails here, before serving
        # A bare cluster (--no-kueue) serves no Kueue or JobSet kinds until their CRDs are applied.
        registry = Registry(self._store, clock=self.clock, kinds=build_catalogue(kueue=opts.kueue))
        # Always TLS: kubectl (client-go) never sends a bearer token over plain HTTP, and the
        # token is how every request is authenticated. Loopback or not, the CA is in the kubeconfig.
        if opts.data_dir is not None:
            cert_dir = opts.data_dir
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="pykueue-certs-")
            cert_dir = Path(self._tmp.name)
        tls = ensure_certificates(cert_dir, opts.address)
        port = opts.port if opts.port else _free_port(opts.address)
        if opts.kueue:
            # in-process, the controllers' metrics join the server's registry; in process mode the
            # child serves its own and /metrics fetches them (see the controller_process module)
            in_process = opts.controllers != "process"
            self._manager = ControllerManager(
                LocalClient(registry),
                opts.config,
                self.clock,
                metrics_registry=self.metrics.registry if in_process else None,
            )
            for hook in self._manager.admission_hooks():
                registry.add_admission_hook(hook)
            try:
                await _record_configuration(LocalClient(registry, field_manager="pykueue-up"), opts)
            except ApiError as exc:  # e.g. a webhook on ConfigMaps that is down: serve anyway, and say so
                log.warning(
                    "could not store the Configuration in ConfigMap %s/%s (explain and simulate eta do not "
                    "see the one in use; pass them --config): %s",
                    opts.config.namespace,
                    CONFIG_MAP,
                    exc,
                )
        self._server = await serve(
            registry,
            opts.address,
            port,
            token=self.token,
            tls_cert=str(tls.cert),
            tls_key=str(tls.key),
            tls_options=opts.config.tls,
            metrics=self.metrics,
            access_log=opts.access_log,
            users=opts.users,
            audit_log=AuditLog(opts.audit_log) if opts.audit_log is not None else None,
        )
        self._server.add_readiness_check("store", self._store.health)
        host = opts.address if ":" not in opts.address else f"[{opts.address}]"
        self.url = f"https://{host}:{self._server.port}"
        write_kubeconfig(opts.kubeconfig, server=self.url, token=self.token, ca_cert=tls.ca_cert)
        if opts.cluster:
            log_root = opts.data_dir / "logs" if opts.data_dir is not None else None  # kubectl logs survive restarts
            self._cluster = EmbeddedCluster(
                LocalClient(registry), opts.nodes, self.clock, log_root=log_root, allow_root_pods=opts.allow_root_pods
            )
            await self._cluster.start()
            self._server.set_pod_log_handler(self._cluster.open_pod_log)
        if self._manager is not None:
            if opts.controllers == "process":
                await self._manager.start_admission_caches()  # the webhooks stay here
                self.controller_process = process = ControllerProcess(
                    opts.kubeconfig, opts.config_path, log_level=opts.log_level, log_format=opts.log_format
                )
                self.metrics.add_source(RemoteSource(lambda: process.metrics_url, self.token))
                self._server.add_readiness_check("controllers", process.health)
                await self.controller_process.start()
                self._remote_visibility = RemoteBackend(self.controller_process.visibility_address)
                self._server.set_visibility_backend(self._remote_visibility)
            else:
                self._server.add_readiness_check("controllers", self._manager.health)
                await self._manager.start()
                self._server.set_visibility_backend(EngineBackend(self._manager.scheduler))

    async def stop(self) -> None:
        """Reverse order of start; a part that fails to stop must not keep the others running."""
        for part in (self.controller_process, self._manager, self._cluster):
            if part is not None:
                with contextlib.suppress(Exception):
                    await part.stop()
        self._manager = self._cluster = None
        self.controller_process = None
        if self._remote_visibility is not None:
            await self._remote_visibility.close()
            self._remote_visibility = None
        if self._server is not None:
            await self._server.close()
            self._server = None
        await self.metrics.close()
        if self._store is not None:
            self._store.flush()
            self._store.close()
            self._store = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
