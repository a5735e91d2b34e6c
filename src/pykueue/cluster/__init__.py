"""Embedded stand-ins for the parts of Kubernetes a cluster normally supplies.

A Job controller, a JobSet controller, a pod binder and node agents (``process``: runs container
commands locally; ``simulated``: pods run for a declared duration). Used by ``pykueue up``.
"""

from __future__ import annotations

from pykueue.cluster.embedded import EmbeddedCluster
from pykueue.cluster.nodes import DEFAULT_CAPACITY, NodeSpec, default_nodes, load_nodes, parse_nodes
from pykueue.cluster.simulated import DURATION_ANNOTATION, EXIT_CODE_ANNOTATION

__all__ = [
    "DEFAULT_CAPACITY",
    "DURATION_ANNOTATION",
    "EXIT_CODE_ANNOTATION",
    "EmbeddedCluster",
    "NodeSpec",
    "default_nodes",
    "load_nodes",
    "parse_nodes",
]
