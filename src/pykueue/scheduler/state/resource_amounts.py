"""Resource amounts: per-pod requests computed like kube-scheduler, and (flavor, resource) keys.

Owns the one translation from a pod template to integer amounts (cpu in milli, others in base
units, via ``pykueue.api.meta.quantity``). Called once per workload at upsert time, never per cycle,
so the hot path only adds and compares ints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pykueue.api.meta.quantity import UNLIMITED, QuantityError, format_amount, to_amount

__all__ = [
    "NO_POLICY",
    "UNLIMITED",
    "FlavorResource",
    "RequestPolicy",
    "Requests",
    "add_into",
    "amount_of",
    "pod_requests",
    "quantity_map",
    "quantity_string",
]

FlavorResource = tuple[str, str]
"""(flavor, resource): the unit in which quota is granted and used."""

Requests = dict[str, int]


_FORMATTED: dict[tuple[str, int], str] = {}


def quantity_string(resource: str, amount: int) -> str:
    """Quantity string of an amount, as Kueue prints it in messages and `resourceUsage` (memoised:
    every admission formats its usage and the same few amounts recur)."""
    key = (resource, amount)
    found = _FORMATTED.get(key)
    if found is None:
        found = format_amount(resource, amount)
        if len(_FORMATTED) > 50_000:
            _FORMATTED.clear()
        _FORMATTED[key] = found
    return found


_AMOUNTS: dict[tuple[str, Any], int] = {}


def amount_of(resource: str, value: Any) -> int:
    """``to_amount`` memoised: workloads repeat the same few quantity strings endlessly."""
    key = (resource, value)
    found = _AMOUNTS.get(key)
    if found is None:
        found = to_amount(resource, value)
        if len(_AMOUNTS) > 50_000:
            _AMOUNTS.clear()
        _AMOUNTS[key] = found
    return found


def quantity_map(values: Mapping[str, Any] | None) -> Requests:
    """Convert a ResourceList dict to amounts; a malformed quantity raises QuantityError."""
    if not values:
        return {}
    return {name: amount_of(name, value) for name, value in values.items()}


def add_into(target: dict[Any, int], other: Mapping[Any, int], sign: int = 1) -> None:
    for key, value in other.items():
        target[key] = target.get(key, 0) + sign * value


def _container_requests(container: Mapping[str, Any]) -> Requests:
    res = container.get("resources") or {}
    requests = quantity_map(res.get("requests"))
    # Kubernetes defaults a missing request to its limit; do the same here.
    for name, amount in quantity_map(res.get("limits")).items():
        requests.setdefault(name, amount)
    return requests


class RequestPolicy:
    """`resources` of Kueue's configuration: transformations, then excluded prefixes."""

    __slots__ = ("exclude_prefixes", "transformations")

    def __init__(
        self, exclude_prefixes: tuple[str, ...] = (), transformations: tuple[tuple[str, bool, dict[str, str]], ...] = ()
    ) -> None:
        self.exclude_prefixes = exclude_prefixes
        self.transformations = transformations
        """(input, replace input?, outputs resource -> factor quantity)."""

    def apply(self, requests: Requests) -> Requests:
        for source, replace, outputs in self.transformations:
            value = requests.get(source)
            if value is None:
                continue
            units = -(-value // 1000) if source == "cpu" else value  # Quantity.Value(): rounded up
            for out, factor in outputs.items():
                requests[out] = requests.get(out, 0) + amount_of(out, factor) * units
            if replace:
                del requests[source]
        if self.exclude_prefixes:
            requests = {k: v for k, v in requests.items() if not k.startswith(self.exclude_prefixes)}
        return requests


NO_POLICY = RequestPolicy()


def pod_requests(spec: Mapping[str, Any], policy: RequestPolicy = NO_POLICY) -> Requests:
    """Requests of one pod: Σ containers, max'ed with init containers (sidecars add), + overhead.

    Pod-level ``spec.resources`` win for the resources they name, as in kube-scheduler.
    """
    total: Requests = {}
    for container in spec.get("containers") or ():
        add_into(total, _container_requests(container))
    sidecars: Requests = {}
    init_peak: Requests = {}
    for container in spec.get("initContainers") or ():
        req = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            add_into(total, req)
            add_into(sidecars, req)
            candidate = dict(sidecars)
        else:
            candidate = dict(sidecars)
            add_into(candidate, req)
        for name, amount in candidate.items():
            if amount > init_peak.get(name, 0):
                init_peak[name] = amount
    for name, amount in init_peak.items():
        if amount > total.get(name, 0):
            total[name] = amount
    pod_level = spec.get("resources") or {}
    if pod_level:
        level = quantity_map(pod_level.get("requests"))
        for name, amount in quantity_map(pod_level.get("limits")).items():
            level.setdefault(name, amount)
        total.update(level)
    add_into(total, quantity_map(spec.get("overhead")))
    if policy.transformations or policy.exclude_prefixes:
        total = policy.apply(total)
    return {k: max(0, v) for k, v in total.items()}


__all__ += ["QuantityError"]
