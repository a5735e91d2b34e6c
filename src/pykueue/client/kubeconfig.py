"""``ConnectionConfig``: everything pykueue's HTTP client needs to reach one API server.

Owned by ``client/``; used by :class:`~pykueue.client.http.HttpClient`. Filled in by
:mod:`pykueue.client.connection`, which reads kubeconfigs and a pod's service account through the
official ``kubernetes`` package's loaders (pykueue has no kubeconfig parser of its own), or built
directly from a server URL and a token.
"""

from __future__ import annotations

import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ConnectionConfig"]


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
