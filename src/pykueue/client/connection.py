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

__all__ = ["AUTH_REFRESH_S", "load_connection"]

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
                cached[0], cached[1] = now, str(value)
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


def _in_cluster() -> ConnectionConfig:
    from kubernetes import client
    from kubernetes.config import incluster_config

    configuration = client.Configuration()
    loader = incluster_config.InClusterConfigLoader(  # type: ignore[no-untyped-call]
        token_filename=str(_SA_DIR / "token"), cert_filename=str(_SA_DIR / "ca.crt"), try_refresh_token=True
    )
    loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
    namespace_file = _SA_DIR / "namespace"
    namespace = namespace_file.read_text().strip() if namespace_file.exists() else "default"
    return _from_configuration(configuration, namespace)


def load_connection(path: str | os.PathLike[str] | None = None, *, context: str = "") -> ConnectionConfig:
    """Connection settings from ``path`` (None: ``$KUBECONFIG``, ``~/.kube/config``, else in-cluster)."""
    import yaml
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    try:
        if path is None and not os.environ.get("KUBECONFIG") and not Path("~/.kube/config").expanduser().exists():
            if not os.environ.get("KUBERNETES_SERVICE_HOST"):
                raise ValueError(
                    "no kubeconfig given (--kubeconfig or KUBECONFIG), none at ~/.kube/config, "
                    "and not running in a cluster"
                )
            return _in_cluster()
        if path is not None and not Path(path).is_file():
            raise ValueError(f"kubeconfig {path}: no such file")
        configuration = client.Configuration()
        # read $KUBECONFIG now (the package reads it once, at import); a list is merged as kubectl merges it
        default = os.environ.get("KUBECONFIG") or str(Path("~/.kube/config").expanduser())
        file = str(path) if path is not None else default
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=file, context=context or None, client_configuration=configuration, persist_config=False
        )
        contexts, active = config.list_kube_config_contexts(config_file=file)  # type: ignore[no-untyped-call]
        chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
        namespace = str(((chosen or {}).get("context") or {}).get("namespace") or "")
        return _from_configuration(configuration, namespace)
    except ValueError:
        raise
    except (ConfigException, yaml.YAMLError) as exc:
        raise ValueError(f"{_where(path)}: {' '.join(str(exc).split())}") from None
    except OSError as exc:
        raise ValueError(f"{_where(path)}: {exc.strerror or exc}") from None
    except Exception as exc:  # a malformed entry the loader trips over (a list where a map belongs, ...)
        raise ValueError(f"{_where(path)}: not a usable kubeconfig ({type(exc).__name__}: {exc})") from None


def _where(path: str | os.PathLike[str] | None) -> str:
    return f"kubeconfig {path}" if path is not None else "kubeconfig"
