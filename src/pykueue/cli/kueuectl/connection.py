"""How ``pykueue``'s kueuectl verbs (and ``kubectl kueue``) reach a cluster.

Owned by ``cli/kueuectl``. Uses the official ``kubernetes`` client and its kubeconfig loader
(``--kubeconfig``, else ``$KUBECONFIG``, else ``~/.kube/config``; ``--context``; the context's
namespace unless ``-n`` is given), so the verbs work against any Kubernetes API server with Kueue,
not only pykueue's. :class:`Cluster` is one generic JSON request method over the client's REST
layer: Kueue's kinds, pods and the visibility API's subresource paths all go through it.

Every failure becomes a :class:`CommandError` carrying the one line the user sees (kubectl's
``Error from server (NotFound): ...`` shape for API errors); nothing prints a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pykueue.api.meta.json_types import JSONDict

__all__ = ["KUEUE", "Cluster", "CommandError", "connect"]

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"


class CommandError(Exception):
    """A one-line message for the user; the command exits with code 1."""


@dataclass(frozen=True, slots=True)
class ApiFailure(CommandError):
    status: int
    reason: str
    message: str

    def __str__(self) -> str:
        return f"Error from server ({self.reason}): {self.message}"


class Cluster:
    """An API server reached through a kubeconfig (``namespace``: the one commands default to)."""

    def __init__(self, api_client: Any, namespace: str) -> None:
        self._client = api_client
        self.namespace = namespace

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> JSONDict:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        params = self._client.param_serialize(
            method,
            path,
            query_params=list((query or {}).items()) or None,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        try:
            response = self._client.call_api(*params)
            response.read()
        except Exception as exc:  # urllib3 / SSL / connection errors
            raise CommandError(f"error: cannot reach the cluster: {_first_line(exc)}") from None
        text = (response.data or b"").decode("utf-8", errors="replace")
        try:
            parsed = json.loads(text) if text else {}
        except ValueError:
            parsed = {"message": text.strip()}
        if response.status >= 400:
            if not isinstance(parsed, dict):
                parsed = {}
            raise ApiFailure(
                int(response.status),
                str(parsed.get("reason") or "Unknown"),
                str(parsed.get("message") or f"HTTP {response.status}"),
            )
        if not isinstance(parsed, dict):
            raise CommandError(f"error: unexpected answer from {path}")
        return parsed

    # -- convenience paths ------------------------------------------------------------------
    @staticmethod
    def kueue_path(plural: str, name: str = "", namespace: str = "") -> str:
        path = KUEUE + (f"/namespaces/{quote(namespace)}" if namespace else "") + f"/{plural}"
        return path + (f"/{quote(name)}" if name else "")

    def list_all(self, path: str, *, query: dict[str, str] | None = None) -> list[JSONDict]:
        """Every item of a list, following ``continue`` tokens."""
        items: list[JSONDict] = []
        params = dict(query or {})
        params.setdefault("limit", "500")
        while True:
            page = self.request("GET", path, query=params)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            params["continue"] = token


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def connect(kubeconfig: str | None, context: str | None, namespace: str | None) -> Cluster:
    """Load the kubeconfig like kubectl; a missing or broken one is a :class:`CommandError`."""
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    try:
        client = config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig or None, context=context or None, persist_config=False
        )
        contexts, active = config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=kubeconfig or None
        )
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise CommandError(f"error: cannot load the kubeconfig: {_first_line(exc)}") from None
    if context:
        active = next((c for c in contexts or [] if c.get("name") == context), active)
    default_ns = str(((active or {}).get("context") or {}).get("namespace") or "default")
    return Cluster(client, namespace or default_ns)
