"""Writing the kubeconfig that points the real ``kubectl`` at ``pykueue up``.

The file holds the bearer token, so it is written owner-only (0600), atomically and durably (fsynced):
a reader never sees a half-written file. The context is named ``pykueue``.
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from pykueue.apiserver.private_files import write_atomically

__all__ = ["write_kubeconfig"]


def write_kubeconfig(path: Path, *, server: str, token: str, ca_cert: Path | None = None) -> None:
    cluster: dict[str, object] = {"server": server}
    if ca_cert is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_cert.read_bytes()).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "pykueue", "cluster": cluster}],
        "users": [{"name": "pykueue-admin", "user": {"token": token}}],
        "contexts": [
            {"name": "pykueue", "context": {"cluster": "pykueue", "user": "pykueue-admin", "namespace": "default"}}
        ],
        "current-context": "pykueue",
        "preferences": {},
    }
    write_atomically(path, yaml.safe_dump(config, sort_keys=False).encode())
