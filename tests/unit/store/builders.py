"""Builders for the store tests' objects."""

from __future__ import annotations

from typing import Any


def pod(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": ""}}


def cq(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {"cohortName": ""},
    }


def rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


def names(items: list[dict[str, Any]]) -> list[str]:
    return [i["metadata"]["name"] for i in items]
