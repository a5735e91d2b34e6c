"""Public records of the scheduler engine: settings in, decisions and read-side views out.

Owns the vocabulary shared by the engine and its callers (the workload controller, the
simulator, the scenario tests). Everything here is a frozen dataclass so a decision can be
handed to another layer without fear of it changing underneath.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AdmissionFairSharingConfig",
    "Admit",
    "CycleResult",
    "FairSharingConfig",
    "InvalidObject",
    "Pending",
    "PendingInfo",
    "Preempt",
    "QueueUsage",
    "ResourceTransformation",
    "SchedulerConfig",
    "SchedulerStats",
]

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


class InvalidObject(ValueError):
    """An object given to ``upsert_*`` cannot be scheduled (bad quantity, missing name...).

    The engine is left unchanged. Callers answer the user with a 400 BadRequest carrying
    ``str(exc)``; the engine says what is wrong with the object and leaves the HTTP answer
    (a ``pykueue.api.meta.errors`` error) to them.
    """

    def __init__(self, kind: str, name: str, reason: str) -> None:
        super().__init__(f"{kind} {name!r} cannot be scheduled: {reason}")
        self.kind = kind
        self.name = name


@dataclass(frozen=True, slots=True)
class FairSharingConfig:
    """`fairSharing` of Kueue's configuration; its presence turns fair sharing on."""

    preemption_strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)
    """Kueue's default when the list is absent or empty: both strategies, in this order."""


@dataclass(frozen=True, slots=True)
class AdmissionFairSharingConfig:
    """`admissionFairSharing` of Kueue's configuration."""

    usage_half_life_seconds: float = 0.0
    """0 means consumption never accumulates (alpha = 0), as in Kueue."""
    usage_sampling_interval_seconds: float = 300.0
    """Kueue's default sampling interval is 5 minutes."""
    resource_weights: dict[str, float] = field(default_factory=dict)
    """Per-resource weight in the LQ usage sum; a missing resource weighs 1."""


@dataclass(frozen=True, slots=True)
class ResourceTransformation:
    """`resources.transformations[]`: each unit of ``input`` also requests ``outputs``."""

    input: str
    outputs: dict[str, str]
    """resource -> quantity per (rounded-up) unit of the input."""
    strategy: str = "Retain"
    """Retain keeps the input resource; Replace drops it."""


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """Engine settings. Defaults reproduce Kueue's defaults except ``heads_per_cycle``."""

    heads_per_cycle: int = 0
    """0 = keep taking heads from every ClusterQueue while they are admitted (pykueue's default,
    equivalent to running Kueue's one-head cycles back to back); 1 = Kueue's behaviour."""
    fair_sharing: FairSharingConfig | None = None
    """None = classic preemption and ordering; set = DRS, tournament and fair-sharing preemption."""
    admission_fair_sharing: AdmissionFairSharingConfig | None = None
    """None = Admission Fair Sharing off even for CQs that ask for it."""
    partial_admission: bool = True
    """Gate PartialAdmission (Beta, on)."""
    flavor_fungibility: bool = True
    """Gate FlavorFungibility (Beta, on)."""
    ignore_undeclared_resources: bool = False
    """`resources.quotaCheckStrategy: IgnoreUndeclared`."""
    exclude_resource_prefixes: tuple[str, ...] = ()
    resource_transformations: tuple[ResourceTransformation, ...] = ()
    """Applied to per-pod requests before excluded prefixes are dropped."""
    """`resources.excludeResourcePrefixes`: requests with these prefixes are ignored."""
    equivalence_hashing: bool = True
    """Gate SchedulingEquivalenceHashing (Beta, on): a BestEffortFIFO NoFit parks every queued
    workload of the same shape until the next inadmissible requeue of the CQ."""
    block_admission_until_pods_ready: bool = False
    """`waitForPodsReady.blockAdmission`: no admission while a workload holding quota has pods
    that are not ready (Kueue blocks its loop; this engine reports WaitingForPodsReady instead)."""
    pods_ready_requeue_by_eviction: bool = True
    """`waitForPodsReady.requeuingStrategy.timestamp: Eviction` (the default)."""


@dataclass(frozen=True, slots=True)
class Admit:
    namespace: str
    name: str
    cluster_queue: str
    admission: dict[str, Any]
    borrowing: bool
    admission_checks: list[str]


@dataclass(frozen=True, slots=True)
class Preempt:
    namespace: str
    name: str
    preemptor_namespace: str
    preemptor_name: str
    reason: str
    message: str
    preemptor_cluster_queue: str = ""


@dataclass(frozen=True, slots=True)
class Pending:
    namespace: str
    name: str
    reason: str
    message: str
    resource_requests: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class CycleResult:
    admitted: list[Admit]
    preempted: list[Preempt]
    pending: list[Pending]


@dataclass(frozen=True, slots=True)
class SchedulerStats:
    """Work counters since the engine was created (for benchmarks and flatness tests)."""

    rounds: int
    """Kueue cycles run (several per ``schedule()`` call in multi-head mode)."""
    nominations: int
    """Heads evaluated (flavor assignment + preemption search)."""
    queue_operations: int
    """Heap pushes, including re-placing an equivalence group."""


@dataclass(frozen=True, slots=True)
class PendingInfo:
    """One pending workload as Kueue's visibility API shows it."""

    namespace: str
    name: str
    uid: str
    local_queue: str
    priority: int
    creation_timestamp: str
    position_in_cluster_queue: int
    position_in_local_queue: int
    owner_references: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class QueueUsage:
    """What a ClusterQueue's (or LocalQueue's) status shows about quota use.

    ``reservation``/``usage`` map flavor -> resource -> (total, borrowed) amounts; ``usage``
    only counts Admitted workloads. Amounts are integers (cpu in milli); format them with
    ``pykueue.api.meta.quantity.format_amount``.
    """

    reservation: dict[str, dict[str, tuple[int, int]]]
    usage: dict[str, dict[str, tuple[int, int]]]
    pending_workloads: int
    reserving_workloads: int
    admitted_workloads: int
