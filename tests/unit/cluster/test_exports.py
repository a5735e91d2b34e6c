"""The public surface of pykueue.cluster is chosen, not accidental."""

from __future__ import annotations

import pykueue.cluster


def test_cluster_exports() -> None:
    assert set(pykueue.cluster.__all__) == {
        "DEFAULT_CAPACITY",
        "DURATION_ANNOTATION",
        "EXIT_CODE_ANNOTATION",
        "EmbeddedCluster",
        "NodeSpec",
        "default_nodes",
        "load_nodes",
        "parse_nodes",
    }
    for name in pykueue.cluster.__all__:
        assert getattr(pykueue.cluster, name) is not None
