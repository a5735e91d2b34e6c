"""The public surface of pykueue.client and pykueue.cluster is chosen, not accidental."""

from __future__ import annotations

import pykueue.client
import pykueue.cluster


def test_client_exports() -> None:
    assert set(pykueue.client.__all__) == {
        "PATCH_CONTENT_TYPES", "Client", "ConnectionConfig", "Handler", "HttpClient", "Informer", "LocalClient",
        "QueueShutDown", "Res", "WatchEvent", "WorkQueue", "in_cluster_config", "key_of", "load_kubeconfig",
        "run_workers", "split_key"}
    for name in pykueue.client.__all__:
        assert getattr(pykueue.client, name) is not None


def test_cluster_exports() -> None:
    assert set(pykueue.cluster.__all__) == {
        "DEFAULT_CAPACITY", "DURATION_ANNOTATION", "EXIT_CODE_ANNOTATION", "EmbeddedCluster", "NodeSpec",
        "default_nodes", "load_nodes", "parse_nodes"}
    for name in pykueue.cluster.__all__:
        assert getattr(pykueue.cluster, name) is not None
