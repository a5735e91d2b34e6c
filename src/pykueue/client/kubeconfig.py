"""Reading connection settings from a kubeconfig file or from a pod's service account.

Owned by ``client/``; used by :class:`~pykueue.client.http.HttpClient`. Supports what ``pykueue up``
writes and what common clusters (kind, k3s, cloud providers with static tokens) use: server URL,
bearer token or token file, client certificate, CA data or file, ``insecure-skip-tls-verify``,
the current (or a named) context and its default namespace. Exec/auth-provider plugins are not
supported: such a kubeconfig raises a clear ``ValueError`` naming the user entry.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ConnectionConfig", "in_cluster_config", "load_kubeconfig"]

_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True, slots=True)
class ConnectionConfig:
    """Everything needed to open connections to one API server."""

    server: str
    token: str = ""
    ca_data: bytes | None = None
    """PEM bytes of the CA that signed the server certificate (None: system trust store)."""
    insecure: bool = False
    client_cert: bytes | None = None
    client_key: bytes | None = None
    namespace: str = "default"
    auth: Callable[[], str] | None = None
    """The current ``Authorization`` header value, for credentials that change (an exec plugin's
    expiring token, a rotated service-account token); None: ``token`` never changes."""

    def ssl_context(self) -> ssl.SSLContext | bool:
        """The ``ssl`` argument for aiohttp: False for plain http or skip-verify, else a context."""
        if not self.server.startswith("https"):
            return False
        if self.insecure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif self.ca_data:
            ctx = ssl.create_default_context(cadata=self.ca_data.decode())
        else:
            ctx = ssl.create_default_context()
        if self.client_cert and self.client_key:
            _load_cert_chain(ctx, self.client_cert, self.client_key)
        return ctx


def _load_cert_chain(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """``ssl`` only loads certificates from files: write them to private temporary files briefly."""
    with tempfile.TemporaryDirectory(prefix="pykueue-cert-") as tmp:
        cert_path, key_path = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        cert_path.write_bytes(cert)
        key_path.touch(mode=0o600)
        key_path.write_bytes(key)
        ctx.load_cert_chain(str(cert_path), str(key_path))


def _data_or_file(entry: dict[str, Any], key: str, base: Path) -> bytes | None:
    data = entry.get(f"{key}-data")
    if data:
        return base64.b64decode(str(data))
    path = entry.get(key)
    if path:
        return (base / str(path)).read_bytes()
    return None


def _named(items: list[dict[str, Any]] | None, name: str, what: str) -> dict[str, Any]:
    for item in items or []:
        if item.get("name") == name:
            return dict(item.get(what) or {})
    raise ValueError(f"kubeconfig has no {what} named {name!r}")


def load_kubeconfig(path: str | os.PathLike[str] | None = None, *, context: str = "") -> ConnectionConfig:
    """Read ``path`` (default: ``$KUBECONFIG``'s first entry, then ``~/.kube/config``)."""
    if path is None:
        env = os.environ.get("KUBECONFIG", "")
        path = env.split(os.pathsep)[0] if env else Path.home() / ".kube" / "config"
    file = Path(path).expanduser()
    doc = yaml.safe_load(file.read_text()) or {}
    if not isinstance(doc, dict):
        raise ValueError(f"{file}: not a kubeconfig (expected a mapping)")
    context_name = context or doc.get("current-context") or ""
    if not context_name:
        raise ValueError(f"{file}: no current-context set and no context given")
    ctx = _named(doc.get("contexts"), context_name, "context")
    cluster = _named(doc.get("clusters"), ctx.get("cluster", ""), "cluster")
    user = _named(doc.get("users"), ctx["user"], "user") if ctx.get("user") else {}
    if "exec" in user or "auth-provider" in user:
        raise ValueError(f"{file}: user {ctx.get('user')!r} uses an exec/auth-provider plugin, "
                         "which pykueue does not support; use a token or client certificate")
    base = file.parent
    token = str(user.get("token") or "")
    if not token and user.get("tokenFile"):
        token = (base / user["tokenFile"]).read_text().strip()
    server = str(cluster.get("server") or "")
    if not server:
        raise ValueError(f"{file}: cluster {ctx.get('cluster')!r} has no server")
    return ConnectionConfig(
        server=server.rstrip("/"),
        token=token,
        ca_data=_data_or_file(cluster, "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        client_cert=_data_or_file(user, "client-certificate", base),
        client_key=_data_or_file(user, "client-key", base),
        namespace=str(ctx.get("namespace") or "default"),
    )


def in_cluster_config() -> ConnectionConfig:
    """The service account a pod runs as (``pykueue controller`` deployed in a cluster)."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        raise ValueError("not running in a cluster: KUBERNETES_SERVICE_HOST is not set")
    if ":" in host:
        host = f"[{host}]"
    namespace_file = _SA_DIR / "namespace"
    return ConnectionConfig(
        server=f"https://{host}:{port}",
        token=(_SA_DIR / "token").read_text().strip(),
        ca_data=(_SA_DIR / "ca.crt").read_bytes(),
        namespace=namespace_file.read_text().strip() if namespace_file.exists() else "default",
    )
