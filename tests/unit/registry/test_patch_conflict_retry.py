"""A PATCH that meets a concurrent write is re-applied to the newer object, as kube-apiserver does
(up to five times), unless the patch itself named a resourceVersion: then it is a 409.

The race is made deterministic: the patcher's read of the stored object is wrapped so that another
writer updates the object right after the patch has read it (what happens in the server while a
patch waits for an admission webhook)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from pykueue.api.meta.errors import Conflict
from pykueue.registry import Registry
from pykueue.registry.patch_verb import MAX_PATCH_CONFLICT_RETRIES

from .conftest import configmap, kind

MERGE = "application/merge-patch+json"


def _race(registry: Registry, writes: int) -> list[int]:
    """After each of the patch's first ``writes`` reads, another client updates the object."""
    cm = kind(registry, "", "v1", "configmaps")
    patcher: Any = registry._patcher  # the read is what the race follows
    read: Callable[..., Any] = patcher._get_stored
    done = [0]

    def racing_read(k: Any, ns: str, name: str) -> Any:
        current = read(k, ns, name)
        if done[0] < writes:
            done[0] += 1
            other = registry.get(cm, ns, name, version="v1")
            body = {**other, "data": {**other.get("data", {}), f"other{done[0]}": "x"}}
            registry.update(cm, ns, name, body, version="v1")
        return current

    patcher._get_stored = racing_read
    return done


def _patch(registry: Registry, body: dict[str, Any]) -> dict[str, Any]:
    cm = kind(registry, "", "v1", "configmaps")
    obj, _ = registry.patch(cm, "default", "a", orjson.dumps(body), MERGE, version="v1")
    return obj


def test_a_patch_without_resource_version_is_reapplied_to_the_newer_object(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a"), version="v1")
    done = _race(registry, writes=2)
    obj = _patch(registry, {"data": {"mine": "y"}})
    assert done[0] == 2
    assert obj["data"] == {"k": "v", "other1": "x", "other2": "x", "mine": "y"}  # nobody's write is lost


def test_a_patch_that_names_a_resource_version_gets_409_when_it_is_stale(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    created, _ = registry.create(cm, "default", configmap("a"), version="v1")
    _race(registry, writes=1)
    rv = created["metadata"]["resourceVersion"]
    with pytest.raises(Conflict):
        _patch(registry, {"metadata": {"resourceVersion": rv}, "data": {"mine": "y"}})
    stored = registry.get(cm, "default", "a", version="v1")
    assert "mine" not in stored["data"]


def test_a_patch_gives_up_after_five_retries(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a"), version="v1")
    done = _race(registry, writes=MAX_PATCH_CONFLICT_RETRIES + 1)
    with pytest.raises(Conflict):
        _patch(registry, {"data": {"mine": "y"}})
    assert done[0] == MAX_PATCH_CONFLICT_RETRIES + 1
