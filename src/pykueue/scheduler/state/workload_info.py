"""Workload records: a Workload dict parsed once, at upsert, into a slotted record.

Owns the derivation of a workload's scheduling state from its API object (finished, holding
quota, pending, parked), its effective priority, queue-order timestamp and per-pod requests
(Kueue's Workload conditions; docs/scheduler-api.md "Workload states"). The engine calls ``parse_workload`` on
every upsert; cycles only read the record, so no dict walking happens on the hot path.

Cost model: a status-only update (same spec and identity metadata as the previous record) copies
the spec part and walks only the status; pod sets are parsed once per distinct ``spec.podSets``
(``ShapeCache``) and shared, read-only, by every record of that shape. Invariant: a record is
never mutated through a shared part, so a fast parse always equals a full one
(tests/scheduler/unit/test_workload_parse.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import Any

import orjson

from pykueue.api.meta.clock import parse_time

from .resource_amounts import NO_POLICY, FlavorResource, RequestPolicy, Requests, pod_requests, quantity_string
from .resource_amounts import amount_of as to_amount

__all__ = [
    "PodSetInfo",
    "ShapeCache",
    "StatusUpdate",
    "WorkloadInfo",
    "WorkloadKey",
    "WorkloadState",
    "finished_update",
    "parse_workload",
    "refresh_reservation",
    "status_only_update",
]

WorkloadKey = tuple[str, str]
"""(namespace, name)."""


class WorkloadState(IntEnum):
    """Where a workload stands for the scheduler (read from its status at every upsert)."""

    PENDING = 0
    """Waits for quota (queued, parked, or held back by a gate or ``active: false``)."""
    RESERVED = 1
    """Holds quota in a ClusterQueue (admitted or waiting for its admission checks)."""
    FINISHED = 2
    """Done: holds nothing and is forgotten by the engine."""


PENDING, RESERVED, FINISHED = WorkloadState.PENDING, WorkloadState.RESERVED, WorkloadState.FINISHED
"""Module globals: hot-path comparisons skip the enum attribute lookup."""

ADMISSION_GATED_BY = "kueue.x-k8s.io/admission-gated-by"
PRIORITY_BOOST = "kueue.x-k8s.io/priority-boost"


class PodSetInfo:
    """One pod set: per-pod requests and the pod-template bits flavor matching needs."""

    __slots__ = (
        "affinity_terms",
        "count",
        "match_key",
        "min_count",
        "name",
        "node_selector",
        "per_pod",
        "reclaimable",
        "tolerations",
    )

    def __init__(
        self,
        name: str,
        count: int,
        min_count: int | None,
        per_pod: Requests,
        tolerations: list[dict[str, Any]],
        node_selector: dict[str, str],
        affinity_terms: list[list[dict[str, Any]]] | None,
        reclaimable: int,
    ) -> None:
        self.name = name
        self.count = count
        self.min_count = min_count
        self.per_pod = per_pod
        self.tolerations = tolerations
        self.node_selector = node_selector
        self.affinity_terms = affinity_terms
        self.reclaimable = reclaimable
        self.match_key = (
            repr((tolerations, sorted(node_selector.items()), affinity_terms))
            if (tolerations or node_selector or affinity_terms)
            else ""
        )

    @property
    def effective_count(self) -> int:
        return max(0, self.count - self.reclaimable)


class WorkloadInfo:
    """Everything the scheduler needs about one Workload, computed once per upsert."""

    __slots__ = (
        "active",
        "admission",
        "admitted",
        "cq_name",
        "creation",
        "creation_str",
        "evicted",
        "failed_checks",
        "gated",
        "key",
        "lq_key",
        "name",
        "namespace",
        "obj",
        "owner_references",
        "pods_ready",
        "podsets",
        "preemption_gated",
        "priority",
        "queue_name",
        "quota_reserved_time",
        "requests_status",
        "requeue_at",
        "requeued_false",
        "shape_hash",
        "state",
        "timestamp",
        "uid",
        "usage",
    )

    def __init__(self) -> None:
        self.namespace = ""
        self.name = ""
        self.key: WorkloadKey = ("", "")
        self.uid = ""
        self.obj: Mapping[str, Any] = {}
        self.queue_name = ""
        self.lq_key: tuple[str, str] = ("", "")
        """(namespace, spec.queueName): the LocalQueue's key, built once per record."""
        self.priority = 0
        self.creation = 0.0
        self.creation_str = ""
        self.timestamp = 0.0
        self.podsets: list[PodSetInfo] = []
        self.state = PENDING
        self.active = True
        self.gated = False
        self.requeued_false = False
        self.requeue_at: float | None = None
        self.failed_checks = False
        self.pods_ready = False
        self.preemption_gated = False
        self.admission: Mapping[str, Any] | None = None
        self.admitted = False
        self.evicted = False
        self.cq_name = ""
        self.usage: dict[FlavorResource, int] = {}
        self.quota_reserved_time = 0.0
        self.owner_references: list[dict[str, Any]] = []
        self.requests_status: list[dict[str, Any]] | None = None
        self.shape_hash = 0

    def is_queueable(self, now: float) -> bool:
        """Pending and allowed to enter a heap right now (not parked by backoff)."""
        return (
            self.state == PENDING
            and self.active
            and not self.gated
            and not self.requeued_false
            and (self.requeue_at is None or self.requeue_at <= now)
        )

    def total_requests(self, counts: list[int] | None = None) -> list[Requests]:
        """Per pod set: per-pod requests × count (``counts`` overrides for partial admission)."""
        out: list[Requests] = []
        for i, ps in enumerate(self.podsets):
            n = ps.effective_count if counts is None else counts[i]
            out.append({r: v * n for r, v in ps.per_pod.items()})
        return out

    def resource_requests(self) -> list[dict[str, Any]]:
        """`status.resourceRequests`: total requests of each pod set, as quantity strings."""
        if self.requests_status is None:
            self.requests_status = self._resource_requests()
        return self.requests_status

    def _resource_requests(self) -> list[dict[str, Any]]:
        return [
            {
                "name": ps.name,
                "resources": {r: quantity_string(r, v * ps.effective_count) for r, v in sorted(ps.per_pod.items())},
            }
            for ps in self.podsets
        ]


_TIMES: dict[str, float] = {}


def _time(value: Any, default: float) -> float:
    """parse_time, memoised: many objects share their timestamps (second precision)."""
    if not value:
        return default
    text = str(value)
    found = _TIMES.get(text)
    if found is not None:
        return found
    try:
        found = parse_time(text)
    except ValueError:
        return default
    if len(_TIMES) > 100_000:
        _TIMES.clear()
    _TIMES[text] = found
    return found


def _affinity_terms(spec: Mapping[str, Any]) -> list[list[dict[str, Any]]] | None:
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if not terms:
        return None
    return [list(t.get("matchExpressions") or ()) for t in terms]


def _parse_usage(admission: Mapping[str, Any], reclaimable: dict[str, int]) -> dict[FlavorResource, int]:
    usage: dict[FlavorResource, int] = {}
    for psa in admission.get("podSetAssignments") or ():
        flavors = psa.get("flavors") or {}
        count = psa.get("count")
        reclaim = reclaimable.get(psa.get("name", "main"), 0)
        for res, qty in (psa.get("resourceUsage") or {}).items():
            flavor = flavors.get(res)
            if flavor is None:
                continue
            amount = to_amount(res, qty)
            if reclaim and count:
                amount = amount * max(0, count - reclaim) // count
            fr = (flavor, res)
            usage[fr] = usage.get(fr, 0) + amount
    return usage


def parse_workload(
    obj: Mapping[str, Any],
    policy: RequestPolicy = NO_POLICY,
    requeue_by_eviction: bool = True,
    previous: WorkloadInfo | None = None,
    shapes: ShapeCache | None = None,
) -> WorkloadInfo:
    """Build the record; raises QuantityError/ValueError/TypeError on malformed input.

    ``previous`` (the record of the last upsert) makes a status-only update cheap: most upserts
    are status writes (the admission echoed back, Finished), and when the spec and the metadata
    the record derives from are unchanged, everything but the status part is copied from it.
    """
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    raw_reclaimable = status.get("reclaimablePods")
    reclaimable = {r.get("name", "main"): int(r.get("count") or 0) for r in raw_reclaimable} if raw_reclaimable else {}
    if previous is not None and _same_spec_part(previous, meta, spec) and _same_reclaimable(previous, reclaimable):
        info = _copy_spec_part(previous, obj)
        _parse_status(info, spec, status, reclaimable, requeue_by_eviction, previous)
        return info
    info = WorkloadInfo()
    info.obj = obj
    info.namespace = meta.get("namespace") or "default"
    info.name = meta["name"]
    info.key = (info.namespace, info.name)
    info.uid = meta.get("uid") or f"{info.namespace}/{info.name}"
    info.queue_name = spec.get("queueName") or ""
    info.lq_key = (info.namespace, info.queue_name)
    annotations = meta.get("annotations") or {}
    priority = int(spec.get("priority") or 0)
    boost = annotations.get(PRIORITY_BOOST)
    if boost:
        priority += int(boost)
    info.priority = priority
    info.creation_str = meta.get("creationTimestamp") or ""
    info.creation = _time(info.creation_str, 0.0)
    owners = meta.get("ownerReferences")
    info.owner_references = list(owners) if owners else _NO_OWNERS
    info.active = spec.get("active") is not False
    info.gated = bool(annotations.get(ADMISSION_GATED_BY))
    if previous is not None and _same_shape(previous, spec, annotations, reclaimable):
        info.podsets = previous.podsets
        info.shape_hash = previous.shape_hash
        info.requests_status = previous.requests_status
    else:
        _parse_podsets(info, spec, reclaimable, policy, shapes)
    _parse_status(info, spec, status, reclaimable, requeue_by_eviction, None)
    return info


_NO_OWNERS: list[dict[str, Any]] = []
"""Shared by records without owners (read-only, like every list a record holds)."""


def finished_update(previous: WorkloadInfo, obj: Mapping[str, Any]) -> bool:
    """Is ``obj`` the record of ``previous`` with only its status changed, to Finished=True?

    Such an upsert needs no new record: the engine releases the quota and forgets the workload.
    """
    status = obj.get("status")
    if not status:
        return False
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Finished":
            if cond.get("status") != "True":
                return False
            break
    else:
        return False
    return _same_spec_part(previous, obj.get("metadata") or {}, obj.get("spec") or {})


def _same_spec_part(previous: WorkloadInfo, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    """Do spec and the metadata fields a record reads equal those ``previous`` was parsed from?"""
    old = previous.obj
    old_spec = old.get("spec") or {}
    if old_spec is not spec and old_spec != spec:
        return False
    old_meta = old.get("metadata") or {}
    if old_meta is meta:
        return True
    return (
        old_meta.get("annotations") == meta.get("annotations")
        and old_meta.get("uid") == meta.get("uid")
        and old_meta.get("creationTimestamp") == meta.get("creationTimestamp")
        and old_meta.get("ownerReferences") == meta.get("ownerReferences")
    )


def _same_reclaimable(previous: WorkloadInfo, reclaimable: dict[str, int]) -> bool:
    podsets = previous.podsets
    if not reclaimable:
        return all(not ps.reclaimable for ps in podsets) if len(podsets) != 1 else not podsets[0].reclaimable
    return len(reclaimable) <= len(podsets) and all(ps.reclaimable == reclaimable.get(ps.name, 0) for ps in podsets)


def _copy_spec_part(previous: WorkloadInfo, obj: Mapping[str, Any]) -> WorkloadInfo:
    info = WorkloadInfo.__new__(WorkloadInfo)
    info.obj = obj
    info.namespace = previous.namespace
    info.name = previous.name
    info.key = previous.key
    info.uid = previous.uid
    info.queue_name = previous.queue_name
    info.lq_key = previous.lq_key
    info.priority = previous.priority
    info.creation_str = previous.creation_str
    info.creation = previous.creation
    info.owner_references = previous.owner_references
    info.active = previous.active
    info.gated = previous.gated
    info.podsets = previous.podsets
    info.shape_hash = previous.shape_hash
    info.requests_status = previous.requests_status
    return info


def _parse_podsets(
    info: WorkloadInfo,
    spec: Mapping[str, Any],
    reclaimable: dict[str, int],
    policy: RequestPolicy,
    shapes: ShapeCache | None,
) -> None:
    raw = spec.get("podSets") or ()
    parsed = shapes.lookup(raw, reclaimable) if shapes is not None else None
    if parsed is None:
        parsed = _build_podsets(raw, reclaimable, policy)
        if shapes is not None:
            shapes.store(raw, reclaimable, parsed)
    info.podsets, inner_hash, info.requests_status = parsed
    info.shape_hash = hash((info.priority, inner_hash))


Parsed = tuple[list[PodSetInfo], int, list[dict[str, Any]]]
"""Pod sets, the hash of their scheduling shape, and their ``status.resourceRequests``."""


def _build_podsets(raw: Any, reclaimable: dict[str, int], policy: RequestPolicy) -> Parsed:
    podsets: list[PodSetInfo] = []
    for ps in raw:
        template_spec = (ps.get("template") or {}).get("spec") or {}
        name = ps.get("name") or "main"
        count = int(ps.get("count", 1))
        min_count = ps.get("minCount")
        podsets.append(
            PodSetInfo(
                name=name,
                count=count,
                min_count=int(min_count) if min_count is not None else None,
                per_pod=pod_requests(template_spec, policy),
                tolerations=list(template_spec.get("tolerations") or ()),
                node_selector=dict(template_spec.get("nodeSelector") or {}),
                affinity_terms=_affinity_terms(template_spec),
                reclaimable=reclaimable.get(name, 0),
            )
        )
    inner = hash(
        tuple(
            (ps.name, ps.count, ps.min_count, tuple(sorted(ps.per_pod.items())), ps.reclaimable, ps.match_key)
            for ps in podsets
        )
    )
    requests = [
        {
            "name": ps.name,
            "resources": {r: quantity_string(r, v * ps.effective_count) for r, v in sorted(ps.per_pod.items())},
        }
        for ps in podsets
    ]
    return podsets, inner, requests


class ShapeCache:
    """Parsed pod sets per distinct ``spec.podSets`` (+ reclaimable pods), shared between workloads.

    Workloads of one job template repeat the same pod sets; parsing them (quantities, init
    containers, overhead) once per shape instead of once per workload saves most of the upsert
    cost and the per-workload objects. The key is the exact JSON text of the pod sets
    (sorted keys): equal text means equal input, so the result is equal. The same list object
    seen again is found by identity first (it is kept referenced, so its id is not reused).
    Records share what is returned: nothing in the engine mutates parsed pod sets.
    """

    __slots__ = ("_by_id", "_by_text", "limit")

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._by_id: dict[tuple[int, tuple[tuple[str, int], ...]], tuple[Any, Parsed]] = {}
        self._by_text: dict[tuple[bytes, tuple[tuple[str, int], ...]], Parsed] = {}

    def lookup(self, raw: Any, reclaimable: dict[str, int]) -> Parsed | None:
        extra = tuple(sorted(reclaimable.items())) if reclaimable else ()
        found = self._by_id.get((id(raw), extra))
        if found is not None and found[0] is raw:
            return found[1]
        text = _fingerprint(raw)
        if text is None:
            return None
        parsed = self._by_text.get((text, extra))
        if parsed is not None:
            self._remember(raw, extra, parsed)
        return parsed

    def store(self, raw: Any, reclaimable: dict[str, int], parsed: Parsed) -> None:
        text = _fingerprint(raw)
        if text is None:
            return
        extra = tuple(sorted(reclaimable.items())) if reclaimable else ()
        if len(self._by_text) >= self.limit:
            self._by_text.clear()
        self._by_text[(text, extra)] = parsed
        self._remember(raw, extra, parsed)

    def _remember(self, raw: Any, extra: tuple[tuple[str, int], ...], parsed: Parsed) -> None:
        if len(self._by_id) >= self.limit:
            self._by_id.clear()
        self._by_id[(id(raw), extra)] = (raw, parsed)


def _fingerprint(raw: Any) -> bytes | None:
    try:
        return orjson.dumps(raw, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None  # not plain JSON: parse it every time


def _same_shape(
    previous: WorkloadInfo, spec: Mapping[str, Any], annotations: Mapping[str, Any], reclaimable: dict[str, int]
) -> bool:
    old_meta = previous.obj.get("metadata") or {}
    old_spec = previous.obj.get("spec") or {}
    return (
        (old_spec is spec or old_spec == spec)
        and (old_meta.get("annotations") or {}) == annotations
        and len(reclaimable) <= len(previous.podsets)
        and all(ps.reclaimable == reclaimable.get(ps.name, 0) for ps in previous.podsets)
    )


def _parse_status(
    info: WorkloadInfo,
    spec: Mapping[str, Any],
    status: Mapping[str, Any],
    reclaimable: dict[str, int],
    requeue_by_eviction: bool,
    previous: WorkloadInfo | None,
) -> None:
    """Set every status-derived field (a copied record carries none of the old ones)."""
    _apply_status(info, _read_status(info, spec, status, reclaimable, requeue_by_eviction, previous))


StatusFields = tuple[
    bool, float, bool, float | None, bool, WorkloadState, Any, str, dict[FlavorResource, int], bool, bool, bool, float
]


def _read_status(
    info: WorkloadInfo,
    spec: Mapping[str, Any],
    status: Mapping[str, Any],
    reclaimable: dict[str, int],
    requeue_by_eviction: bool,
    previous: WorkloadInfo | None,
) -> StatusFields:
    """Everything the status says, read without writing ``info`` (malformed input raises here,
    before any field changed: the in-place refresh relies on it). Reads ``info.creation`` only."""
    gates = spec.get("preemptionGates")
    if gates:
        opened = {g.get("name") for g in status.get("preemptionGates") or () if g.get("position") == "Open"}
        preemption_gated = any(g.get("name") not in opened for g in gates)
    else:
        preemption_gated = False
    finished = quota_reserved = admitted = pods_ready = False
    evicted: Mapping[str, Any] | None = None
    requeued: Mapping[str, Any] | None = None
    reserved_cond: Mapping[str, Any] | None = None
    for cond in status.get("conditions") or ():
        kind = cond.get("type")
        if kind == "QuotaReserved":
            reserved_cond = cond
            quota_reserved = cond.get("status") == "True"
        elif kind == "Admitted":
            admitted = cond.get("status") == "True"
        elif kind == "Finished":
            finished = cond.get("status") == "True"
        elif kind == "Evicted":
            evicted = cond
        elif kind == "PodsReady":
            pods_ready = cond.get("status") == "True"
        elif kind == "Requeued":
            requeued = cond
    is_evicted = evicted is not None and evicted.get("status") == "True"
    creation = info.creation
    timestamp = creation
    if is_evicted:
        assert evicted is not None
        reason = evicted.get("reason")
        if (reason == "PodsReadyTimeout" and requeue_by_eviction) or reason == "AdmissionCheck":
            timestamp = _time(evicted.get("lastTransitionTime"), creation)
    requeued_false = requeued is not None and requeued.get("status") == "False"
    requeue_state = status.get("requeueState")
    raw_requeue_at = requeue_state.get("requeueAt") if requeue_state else None
    requeue_at = _time(raw_requeue_at, 0.0) if raw_requeue_at else None
    checks = status.get("admissionChecks") or ()
    failed_checks = any(c.get("state") in ("Retry", "Rejected") for c in checks) if checks else False

    admission = status.get("admission")
    if finished:
        return (
            preemption_gated,
            timestamp,
            requeued_false,
            requeue_at,
            failed_checks,
            FINISHED,
            None,
            "",
            {},
            False,
            False,
            False,
            0.0,
        )
    if quota_reserved and admission:
        if (
            previous is not None
            and previous.admission is not None
            and previous.state == RESERVED
            and (previous.admission is admission or previous.admission == admission)
        ):
            usage = previous.usage  # same admission, same reclaimable pods: same usage
        else:
            usage = _parse_usage(admission, reclaimable)
        return (
            preemption_gated,
            timestamp,
            requeued_false,
            requeue_at,
            failed_checks,
            RESERVED,
            admission,
            admission.get("clusterQueue", ""),
            usage,
            admitted,
            is_evicted,
            pods_ready,
            _time((reserved_cond or {}).get("lastTransitionTime"), creation),
        )
    return (
        preemption_gated,
        timestamp,
        requeued_false,
        requeue_at,
        failed_checks,
        PENDING,
        None,
        "",
        {},
        False,
        False,
        False,
        0.0,
    )


def _apply_status(info: WorkloadInfo, f: StatusFields) -> None:
    (
        info.preemption_gated,
        info.timestamp,
        info.requeued_false,
        info.requeue_at,
        info.failed_checks,
        info.state,
        info.admission,
        info.cq_name,
        info.usage,
        info.admitted,
        info.evicted,
        info.pods_ready,
        info.quota_reserved_time,
    ) = f


class StatusUpdate(IntEnum):
    """What ``status_only_update`` made of an upsert of a known workload."""

    REPARSE = 0
    """Anything else: the caller parses a new record (``info`` untouched)."""
    FINISHED = 1
    """The status says Finished=True: the engine releases the workload (``info`` untouched)."""
    REFRESHED = 2
    """The echo of the reservation already held: ``info`` updated in place."""


def status_only_update(
    info: WorkloadInfo, obj: Mapping[str, Any], may_refresh: bool = True, requeue_by_eviction: bool = True
) -> StatusUpdate:
    """One pass for the two frequent upserts of a known workload: only its status changed and

    * it says Finished=True -> ``StatusUpdate.FINISHED`` (the engine releases it; ``info`` untouched), or
    * it still reserves the same admission -> ``StatusUpdate.REFRESHED``: ``info`` updated in place
      (only if ``may_refresh``: the engine's own record, held by nothing else across upserts),

    else ``StatusUpdate.REPARSE`` with ``info`` untouched (the caller parses a new record). Malformed input raises like
    ``parse_workload``, also with ``info`` untouched (the status is read fully before any write).
    Saves the allocation and field copy of a new record on the most frequent upsert.
    """
    status = obj.get("status")
    if not status:
        return StatusUpdate.REPARSE
    if not _same_spec_part(info, obj.get("metadata") or {}, obj.get("spec") or {}):
        return StatusUpdate.REPARSE
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Finished":
            if cond.get("status") == "True":
                return StatusUpdate.FINISHED
            break
    if not may_refresh or info.state != RESERVED or status.get("reclaimablePods"):
        return StatusUpdate.REPARSE
    admission = status.get("admission")
    old_admission = info.admission
    if not admission or old_admission is None or (admission is not old_admission and admission != old_admission):
        return StatusUpdate.REPARSE
    if any(ps.reclaimable for ps in info.podsets):
        return StatusUpdate.REPARSE
    fields = _read_status(info, obj.get("spec") or {}, status, {}, requeue_by_eviction, info)
    if fields[5] != RESERVED:
        return StatusUpdate.REPARSE
    info.obj = obj
    _apply_status(info, fields)
    return StatusUpdate.REFRESHED


def refresh_reservation(info: WorkloadInfo, obj: Mapping[str, Any], requeue_by_eviction: bool = True) -> bool:
    """Update ``info`` in place when ``obj`` is its object with only the status changed and still
    reserving the same admission (the echo of an Admit); False and ``info`` untouched otherwise."""
    return status_only_update(info, obj, True, requeue_by_eviction) == StatusUpdate.REFRESHED
