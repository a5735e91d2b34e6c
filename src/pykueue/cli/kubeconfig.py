"""Writing the kubeconfig that points the real ``kubectl`` at ``pykueue up``.

The file holds the bearer token, so it is written owner-only (0600) and atomically: a reader never
sees a half-written file. The context is named ``pykueue``.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

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
        "contexts": [{"name": "pykueue",
                      "context": {"cluster": "pykueue", "user": "pykueue-admin", "namespace": "default"}}],
        "current-context": "pykueue",
        "preferences": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
    os.chmod(tmp, 0o600)
    tmp.replace(path)
