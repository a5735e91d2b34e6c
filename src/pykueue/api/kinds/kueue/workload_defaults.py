"""Kueue's defaulting webhook for Workload: what its schema's defaults cannot say.

Owned by ``api/kinds/kueue``. In a Workload's pod templates a container's requests default to its
limits, as for real pods. :func:`default_workload` runs after the schema's defaults on the
object the registry is about to store, and copies the spec only when it changes something.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy

__all__ = ["default_requests", "default_workload"]


def _dicts(value: Any) -> list[JSONDict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dict(value: Any) -> JSONDict:
    return value if isinstance(value, dict) else {}


def _limited_resources(workload: JSONDict) -> Iterator[JSONDict]:
    """The ``resources`` of every pod-template container of a Workload that sets ``limits``."""
    for pod_set in _dicts(_dict(workload.get("spec")).get("podSets")):
        spec = _dict(_dict(pod_set.get("template")).get("spec"))
        for key in ("containers", "initContainers"):
            for container in _dicts(spec.get(key)):
                resources = container.get("resources")
                if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
                    yield resources


def default_requests(workload: JSONDict) -> None:
    """Fill each pod-template container's missing requests from its limits, in place."""
    for resources in _limited_resources(workload):
        requests = resources.setdefault("requests", {})
        if isinstance(requests, dict):
            for name, limit in resources["limits"].items():
                requests.setdefault(name, limit)


def _requests_missing(obj: JSONDict) -> bool:
    """Would :func:`default_requests` copy a limit into requests anywhere? (Read-only.)"""
    for resources in _limited_resources(obj):
        requests = resources.get("requests")
        if requests is None or (
            isinstance(requests, dict) and any(name not in requests for name in resources["limits"])
        ):
            return True
    return False


def default_workload(original: JSONDict, out: JSONDict) -> JSONDict:
    """Kueue's Workload defaults on ``out`` (``original`` defaulted by schema, sharing untouched
    fields with it): the spec is copied before it is edited, so ``original`` is never mutated."""
    if _requests_missing(out):
        if out.get("spec") is original.get("spec"):
            out["spec"] = json_copy(out["spec"])
        default_requests(out)
    return out
