"""Connection settings through the official ``kubernetes`` package's loaders, for ``pykueue controller``.

Owned by ``client/``. :func:`load_connection` delegates everything kubeconfig-shaped to
``kubernetes.config``: merged ``KUBECONFIG`` lists, ``--context``, exec credential plugins (as GKE,
EKS and AKS use), client certificates, CA data or files, ``insecure-skip-tls-verify``; with no
kubeconfig at all (``path`` None and none in the environment) and inside a pod, the in-cluster
service account. The result is a :class:`~pykueue.client.kubeconfig.ConnectionConfig` for pykueue's
aiohttp client whose ``auth`` asks the loader for the current ``Authorization`` value, so an exec
plugin's expiring token is fetched again and a bound service-account token is re-read as the
kubelet rotates it (the loaders' own refresh hooks decide when).

Fails closed: every problem (no file, unreadable YAML, unknown context, a plugin that fails) is a
``ValueError`` with a one-line message.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pykueue.client.kubeconfig import ConnectionConfig

__all__ = ["AUTH_REFRESH_S", "in_cluster_config", "load_connection", "load_kubeconfig"]

AUTH_REFRESH_S = 1.0
"""At most one call into the loader's refresh hook per this many seconds (it reads files, may run a plugin)."""
_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def _auth_source(configuration: Any) -> Callable[[], str]:
    """The current ``Authorization`` header value, refreshed through the loader's hook."""
    lock = threading.Lock()
    cached: list[Any] = [0.0, ""]

    def auth() -> str:
        now = time.monotonic()
        if now - cached[0] >= AUTH_REFRESH_S:
            with lock:
                value = configuration.get_api_key_with_prefix("BearerToken", alias="authorization") or ""
                cached[0], cached[1] = now, str(value).strip()  # a token file's line end is not the token
        return str(cached[1])

    return auth


def _read(path: str | None) -> bytes | None:
    return Path(path).read_bytes() if path else None


def _from_configuration(configuration: Any, namespace: str) -> ConnectionConfig:
    auth = _auth_source(configuration)
    header = auth()
    scheme, _, token = header.partition(" ")
    return ConnectionConfig(
        server=str(configuration.host).rstrip("/"),
        token=token if scheme.lower() == "bearer" else "",
        ca_data=_read(configuration.ssl_ca_cert),
        insecure=not configuration.verify_ssl,
        client_cert=_read(configuration.cert_file),
        client_key=_read(configuration.key_file),
        namespace=namespace or "default",
        auth=auth if header else None,
    )


def in_cluster_config() -> ConnectionConfig:
    """The service account of the pod this runs in (``ValueError`` outside a pod)."""
    if not os.environ.get("KUBERNETES_SERVICE_HOST"):
        raise ValueError("not running in a cluster: KUBERNETES_SERVICE_HOST is not set")
    from kubernetes import client
    from kubernetes.config import incluster_config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    try:
        loader = incluster_config.InClusterConfigLoader(  # type: ignore[no-untyped-call]
            token_filename=str(_SA_DIR / "token"), cert_filename=str(_SA_DIR / "ca.crt"), try_refresh_token=True
        )
        loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
        namespace_file = _SA_DIR / "namespace"
        namespace = namespace_file.read_text().strip() if namespace_file.exists() else "default"
    except (ConfigException, OSError) as exc:
        raise ValueError(f"in-cluster configuration: {' '.join(str(exc).split())}") from None
    return _from_configuration(configuration, namespace)


def _plugin_without_credentials(file: str, user: str) -> None:
    """The loader logs a failing exec or auth-provider plugin and goes on without credentials: refuse that."""
    from kubernetes.config import kube_config

    for node in kube_config.KubeConfigMerger(file).config.value.get("users") or []:  # type: ignore[no-untyped-call]
        entry = getattr(node, "value", node)  # the merger wraps each list entry in a ConfigNode
        if isinstance(entry, dict) and entry.get("name") == user:
            fields = entry.get("user") or {}
            if isinstance(fields, dict) and ("exec" in fields or "auth-provider" in fields):
                raise ValueError(
                    f"user {user!r}: its credential plugin gave no credentials (its error is logged above)"
                )


def _default_kubeconfig() -> str:
    # read $KUBECONFIG now (the package reads it once, at import); a list is merged as kubectl merges it
    return os.environ.get("KUBECONFIG") or str(Path("~/.kube/config").expanduser())


def load_connection(path: str | os.PathLike[str] | None = None, *, context: str = "") -> ConnectionConfig:
    """Connection settings from ``path`` (None: ``$KUBECONFIG``, ``~/.kube/config``, else in-cluster)."""
    if path is None and not os.environ.get("KUBECONFIG") and not Path(_default_kubeconfig()).exists():
        if not os.environ.get("KUBERNETES_SERVICE_HOST"):
            raise ValueError(
                "no kubeconfig given (--kubeconfig or KUBECONFIG), none at ~/.kube/config, and not running in a cluster"
            )
        return in_cluster_config()
    return load_kubeconfig(path, context=context)


def load_kubeconfig(path: str | os.PathLike[str] | None = None, *, context: str = "") -> ConnectionConfig:
    """A kubeconfig's settings (None: ``$KUBECONFIG``, a list merged, else ``~/.kube/config``)."""
    import yaml
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    where = f"kubeconfig {path}" if path is not None else "kubeconfig"
    if path is not None and not Path(path).is_file():
        raise ValueError(f"{where}: no such file")
    file = str(path) if path is not None else _default_kubeconfig()
    configuration = client.Configuration()
    try:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=file, context=context or None, client_configuration=configuration, persist_config=False
        )
        contexts, active = config.list_kube_config_contexts(config_file=file)  # type: ignore[no-untyped-call]
        chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
        namespace = str(((chosen or {}).get("context") or {}).get("namespace") or "")
        connection = _from_configuration(configuration, namespace)
        if connection.auth is None and connection.client_cert is None:
            _plugin_without_credentials(file, str(((chosen or {}).get("context") or {}).get("user") or ""))
        return connection
    except (ConfigException, yaml.YAMLError) as exc:
        raise ValueError(f"{where}: {' '.join(str(exc).split())}") from None
    except OSError as exc:
        raise ValueError(f"{where}: {exc.strerror or exc}") from None
    except Exception as exc:  # a malformed entry the loader trips over (a list where a map belongs, ...)
        raise ValueError(f"{where}: not a usable kubeconfig ({type(exc).__name__}: {exc})") from None
