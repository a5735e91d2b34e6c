"""Fixtures for registry tests: a real in-memory Store and a Registry over the real catalogue."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.meta.clock import ManualClock
from pykueue.api.meta.kind_info import KindInfo
from pykueue.registry import Registry
from pykueue.store import Store


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1_800_000_000.0)


@pytest.fixture
def store() -> Store:
    return Store()


@pytest.fixture
def registry(store: Store, clock: ManualClock) -> Registry:
    return Registry(store, clock=clock)


def kind(registry: Registry, group: str, version: str, plural: str) -> KindInfo:
    return registry.kind_for(group, version, plural)


def configmap(name: str, namespace: str = "default", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "data": {"k": "v"},
    }


def flavor(name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name, **meta}}


def cluster_queue(name: str, cohort: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
            }
        ],
    }
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}
