"""The public surface of pykueue.client is chosen, not accidental."""

from __future__ import annotations

import pykueue.client


def test_client_exports() -> None:
    assert set(pykueue.client.__all__) == {
        "PATCH_CONTENT_TYPES",
        "BatchingClient",
        "Client",
        "ConnectionConfig",
        "Handler",
        "HttpClient",
        "Informer",
        "LocalClient",
        "QueueShutDown",
        "GroupVersionResource",
        "WatchEvent",
        "WorkQueue",
        "in_cluster_config",
        "key_of",
        "load_connection",
        "load_kubeconfig",
        "run_workers",
        "split_key",
    }
    for name in pykueue.client.__all__:
        assert getattr(pykueue.client, name) is not None
