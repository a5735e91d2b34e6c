"""Node declarations for the embedded cluster: :class:`NodeSpec` and the ``--nodes FILE`` loader.

Owned by ``cluster/``; read by ``pykueue up`` (through :func:`load_nodes`) and by
:class:`~pykueue.cluster.embedded.EmbeddedCluster`, which starts one agent per spec.

Capacity is *accounting* in embedded mode: a ``process`` node advertises what its spec says
(default 64 cpu, 256Gi memory, 110 pods) whatever the host has, so a quickstart asking for
2 x 3 cpu works on a 2-core laptop. Processes are not confined to their requests; a container's
memory *limit* becomes its data-size rlimit, and pods run as ``user`` (see :mod:`.pod_user`).

File format (YAML)::

    nodes:
      - name: gpu-node-1
        kind: simulated            # or "process"
        capacity: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8"}
        labels: {cloud.provider.com/accelerator: a100}
        taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
        defaultDuration: 30        # simulated nodes: seconds a pod runs without the annotation
        user: nobody               # process nodes: NAME, UID or UID:GID pods run as (when pykueue is root)
        count: 4                   # optional: gpu-node-1-0 .. gpu-node-1-3
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from pykueue.api.meta.quantity import QuantityError, parse_quantity

__all__ = ["DEFAULT_CAPACITY", "NodeKind", "NodeSpec", "default_nodes", "load_nodes", "parse_nodes"]

NodeKind = Literal["process", "simulated"]

DEFAULT_CAPACITY: dict[str, str] = {"cpu": "64", "memory": "256Gi", "pods": "110"}
"""What a node advertises when its spec says nothing: generous, because requests are accounting only."""


@dataclass(frozen=True, slots=True)
class NodeSpec:
    name: str
    kind: NodeKind = "process"
    capacity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, str]] = field(default_factory=list)
    default_duration: float = 10.0
    """Simulated nodes: seconds a pod "runs" when it has no ``pykueue.io/simulated-duration`` annotation."""
    user: str | None = None
    """Process nodes: who pods run as when pykueue runs as root (None: ``nobody``; root needs
    ``--allow-root-pods``)."""

    def node_labels(self) -> dict[str, str]:
        """The labels the Node object carries: the well-known ones, then the spec's."""
        return {
            "kubernetes.io/hostname": self.name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": os.uname().machine.replace("x86_64", "amd64").replace("aarch64", "arm64"),
            "pykueue.io/node-kind": self.kind,
            **self.labels,
        }


def default_nodes() -> list[NodeSpec]:
    """One ``process`` node named after the host."""
    host = socket.gethostname().split(".")[0].lower() or "localhost"
    return [NodeSpec(name=host)]


def load_nodes(path: str | os.PathLike[str] | None) -> list[NodeSpec]:
    """Read a ``--nodes`` file; None means :func:`default_nodes`. Bad input raises ``ValueError``."""
    if path is None:
        return default_nodes()
    doc = yaml.safe_load(Path(path).read_text())
    return parse_nodes(doc, source=str(path))


def parse_nodes(doc: Any, *, source: str = "nodes") -> list[NodeSpec]:
    entries = doc.get("nodes") if isinstance(doc, dict) else doc
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{source}: expected a non-empty list under 'nodes'")
    specs: list[NodeSpec] = []
    for i, entry in enumerate(entries):
        where = f"{source}: nodes[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected a mapping")
        specs.extend(_parse_entry(entry, where))
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{source}: duplicate node names {duplicates}")
    return specs


def _parse_entry(entry: dict[str, Any], where: str) -> list[NodeSpec]:
    unknown = set(entry) - {"name", "kind", "capacity", "labels", "taints", "defaultDuration", "user", "count"}
    if unknown:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.name: required")
    kind = entry.get("kind", "process")
    if kind not in ("process", "simulated"):
        raise ValueError(f"{where}.kind: must be 'process' or 'simulated', not {kind!r}")
    capacity = {**DEFAULT_CAPACITY, **{str(k): str(v) for k, v in (entry.get("capacity") or {}).items()}}
    for resource, value in capacity.items():
        try:
            parse_quantity(value)
        except QuantityError as exc:
            raise ValueError(f"{where}.capacity.{resource}: {exc}") from None
    labels = {str(k): str(v) for k, v in (entry.get("labels") or {}).items()}
    taints = []
    for j, taint in enumerate(entry.get("taints") or []):
        if not isinstance(taint, dict) or not taint.get("key"):
            raise ValueError(f"{where}.taints[{j}].key: required")
        effect = taint.get("effect", "NoSchedule")
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise ValueError(f"{where}.taints[{j}].effect: must be NoSchedule, PreferNoSchedule or NoExecute")
        taints.append({"key": str(taint["key"]), "value": str(taint.get("value", "")), "effect": effect})
    try:
        duration = float(entry.get("defaultDuration", 10.0))
    except (TypeError, ValueError):
        raise ValueError(f"{where}.defaultDuration: must be a number of seconds") from None
    user = entry.get("user")
    if user is not None and (not isinstance(user, (str, int)) or isinstance(user, bool) or str(user) == ""):
        raise ValueError(f"{where}.user: must be a user name, a uid or uid:gid")
    user = str(user) if user is not None else None
    count = entry.get("count")
    if count is None:
        return [NodeSpec(name, kind, capacity, labels, taints, duration, user)]
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"{where}.count: must be a positive integer")
    return [
        NodeSpec(f"{name}-{i}", kind, dict(capacity), dict(labels), list(taints), duration, user) for i in range(count)
    ]
