"""The Client interface controllers use, its two implementations, informers and the work queue.

``HttpClient`` talks to any Kubernetes API server; ``LocalClient`` calls the embedded registry in
process; ``BatchingClient`` is ``HttpClient`` with writes batched, for pykueue's own server. All
satisfy :class:`Client` and pass the same contract tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykueue.client.batching import BatchingClient
from pykueue.client.connection import in_cluster_config, load_connection, load_kubeconfig
from pykueue.client.group_version_resource import GroupVersionResource, key_of, split_key
from pykueue.client.http import HttpClient
from pykueue.client.informer import Handler, Informer
from pykueue.client.kubeconfig import ConnectionConfig
from pykueue.client.protocol import PATCH_CONTENT_TYPES, Client, WatchEvent
from pykueue.client.workqueue import QueueShutDown, WorkQueue, run_workers

if TYPE_CHECKING:
    from pykueue.client.local import LocalClient

__all__ = [
    "PATCH_CONTENT_TYPES",
    "BatchingClient",
    "Client",
    "ConnectionConfig",
    "GroupVersionResource",
    "Handler",
    "HttpClient",
    "Informer",
    "LocalClient",
    "QueueShutDown",
    "WatchEvent",
    "WorkQueue",
    "in_cluster_config",
    "key_of",
    "load_connection",
    "load_kubeconfig",
    "run_workers",
    "split_key",
]


def __getattr__(name: str) -> Any:
    # LocalClient imports the registry; load it only when asked for, so HTTP-only users
    # (``pykueue controller`` against a real cluster) never import the embedded server's layers.
    if name == "LocalClient":
        from pykueue.client.local import LocalClient

        return LocalClient
    raise AttributeError(name)
