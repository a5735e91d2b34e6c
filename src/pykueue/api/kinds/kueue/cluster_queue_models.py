"""Typed v1beta2 models of ClusterQueue and Cohort (pydantic, API boundary only).

Owns the field-by-field shape of the quota-bearing kinds as Kueue declares them: resource groups,
flavor fungibility, preemption policies, admission-check strategies, fair sharing, stop policy and
the status counters the queue controllers write. Descriptions, defaults, enums, bounds and CEL
rules follow Kueue's API; rules that need Go-side logic live in :mod:`pykueue.api.kinds.kueue.kueue_validation`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from pykueue.api.kinds.kueue.kueue_types import Condition as _Condition
from pykueue.api.kinds.kueue.kueue_types import CoreRef as _Core
from pykueue.api.kinds.kueue.kueue_types import (
    DNSSubdomain,
    FairSharing,
    FairSharingStatus,
    FlavorUsage,
    Int32,
    KueueModel,
    ResourceGroup,
    StopPolicy,
    cel,
    condition_list,
    list_map,
)

__all__ = ["ClusterQueue", "Cohort"]


# ---------------------------------------------------------------- ClusterQueue


class FlavorFungibility(KueueModel):
    """FlavorFungibility determines whether a workload should try the next flavor before borrowing or
    preempting in current flavor."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && "
                    "self.whenCanPreempt == 'TryNextFlavor')",
                    "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
                )
            )
        }
    )

    whenCanBorrow: Literal["MayStopSearch", "TryNextFlavor"] = "MayStopSearch"
    """whenCanBorrow determines whether a workload should try the next flavor before borrowing in
    current flavor. MayStopSearch (default): stop the search for candidate flavors if workload fits
    or requires borrowing to fit. TryNextFlavor: try next flavor if workload requires borrowing to
    fit."""
    whenCanPreempt: Literal["MayStopSearch", "TryNextFlavor"] = "TryNextFlavor"
    """whenCanPreempt determines whether a workload should try the next flavor before preempting in
    current flavor. MayStopSearch: stop the search for candidate flavors if workload fits or requires
    preemption to fit. TryNextFlavor (default): try next flavor if workload requires preemption to fit
    in current flavor."""
    preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = None
    """preference guides the choosing of the flavor for admission in case all candidate flavors
    require either preemption, borrowing, or both. BorrowingOverPreemption (default behaviour) or
    PreemptionOverBorrowing. Can only be set when both whenCanBorrow and whenCanPreempt are
    TryNextFlavor."""


class BorrowWithinCohort(KueueModel):
    """BorrowWithinCohort contains configuration which allows to preempt workloads within cohort while
    borrowing. It only works with Classical Preemption, not with Fair Sharing."""

    policy: Literal["Never", "LowerPriority"] = "Never"
    """policy determines the policy for preemption to reclaim quota within cohort while borrowing.
    Never (default): do not allow for preemption, in other ClusterQueues within the cohort, for a
    borrowing workload. LowerPriority: allow preemption, in other ClusterQueues within the cohort,
    for a borrowing workload, but only if the preempted workloads are of lower priority."""
    maxPriorityThreshold: Int32 | None = None
    """maxPriorityThreshold allows to restrict the set of workloads which might be preempted by a
    borrowing workload, to only workloads with priority less than or equal to the specified
    threshold priority."""


class ClusterQueuePreemption(KueueModel):
    """ClusterQueuePreemption contains policies to preempt Workloads from this ClusterQueue or the
    ClusterQueue's cohort."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) && "
                    "self.borrowWithinCohort.policy != 'Never')",
                    "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
                )
            )
        }
    )

    reclaimWithinCohort: Literal["Never", "LowerPriority", "Any"] = "Never"
    """reclaimWithinCohort determines whether a pending Workload can preempt Workloads from other
    ClusterQueues in the cohort that are using more than their nominal quota. Never (default),
    LowerPriority or Any."""
    borrowWithinCohort: BorrowWithinCohort | None = Field(default=None, json_schema_extra={"default": {}})
    """borrowWithinCohort determines whether a pending Workload can preempt Workloads from other
    ClusterQueues in the cohort if the workload requires borrowing. May only be configured with
    Classical Preemption, and not with Fair Sharing."""
    withinClusterQueue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"
    """withinClusterQueue determines whether a pending Workload that doesn't fit within the nominal
    quota for its ClusterQueue, can preempt active Workloads in the ClusterQueue. Never (default),
    LowerPriority, or LowerOrNewerEqualPriority."""


class AdmissionCheckStrategyRule(KueueModel):
    """AdmissionCheckStrategyRule defines rules for a single AdmissionCheck"""

    name: Annotated[str, Field(min_length=1, max_length=316)]
    """name is an AdmissionCheck's name."""
    onFlavors: list[DNSSubdomain] | None = Field(
        default=None, max_length=64, json_schema_extra={"x-kubernetes-list-type": "set"}
    )
    """onFlavors is a list of ResourceFlavors' names that this AdmissionCheck should run for. If
    empty, the AdmissionCheck will run for all workloads submitted to the ClusterQueue."""


class AdmissionChecksStrategy(KueueModel):
    """AdmissionChecksStrategy defines a strategy for a AdmissionCheck."""

    admissionChecks: list[AdmissionCheckStrategyRule] = Field(
        min_length=1, max_length=64, json_schema_extra=list_map("name")
    )
    """admissionChecks is a list of strategies for AdmissionChecks"""


class AdmissionScope(KueueModel):
    admissionMode: Literal["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"]
    """admissionMode indicates which mode for AdmissionFairSharing should be used in the
    AdmissionScope. UsageBasedAdmissionFairSharing or NoAdmissionFairSharing."""


class ConcurrentAdmissionConstraints(KueueModel):
    lastAcceptableFlavorName: DNSSubdomain | None = None
    """lastAcceptableFlavorName defines the last acceptable flavor a Workload can migrate to. It can
    only be used if the Mode is TryPreferredFlavors."""


class ConcurrentAdmissionMigration(KueueModel):
    mode: Literal["TryPreferredFlavors", "RetainFirstAdmission"]
    """mode defines the mode of Workload's migration: TryPreferredFlavors or RetainFirstAdmission."""
    constraints: ConcurrentAdmissionConstraints | None = None
    """constraints defines the constraints of Workload's migration."""


class ConcurrentAdmissionPolicy(KueueModel):
    migration: ConcurrentAdmissionMigration
    """migration defines the constraints on Workload's migration."""


_BORROWING_NEEDS_COHORT = (
    "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
    "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true",
    "borrowingLimit must be nil when cohort is empty",
)


class ClusterQueueSpec(KueueModel):
    """ClusterQueueSpec defines the desired state of ClusterQueue"""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": cel(_BORROWING_NEEDS_COHORT)})

    resourceGroups: list[ResourceGroup] | None = Field(
        default=None, max_length=16, json_schema_extra={"x-kubernetes-list-type": "atomic"}
    )
    """resourceGroups describes groups of resources. Each resource group defines the list of resources
    and a list of flavors that provide quotas for these resources. Each resource and each flavor can
    only form part of one resource group. resourceGroups can be up to 16, with a max of 256 total
    flavors across all groups."""
    cohortName: DNSSubdomain | None = None
    """cohortName that this ClusterQueue belongs to. CQs that belong to the same cohort can borrow
    unused resources from each other. If empty, this ClusterQueue cannot borrow from any other
    ClusterQueue and vice versa."""
    queueingStrategy: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"
    """queueingStrategy indicates the queueing strategy of the workloads across the queues in this
    ClusterQueue. StrictFIFO: workloads are ordered strictly by creation time; older workloads that
    can't be admitted will block admitting newer workloads even if they fit available quota.
    BestEffortFIFO: workloads are ordered by creation time, however older workloads that can't be
    admitted will not block admitting newer workloads that fit existing quota."""
    namespaceSelector: _Core("V1LabelSelector") | None = None  # type: ignore[valid-type]
    """namespaceSelector defines which namespaces are allowed to submit workloads to this
    clusterQueue. Defaults to null which is a nothing selector (no namespaces eligible). If set to an
    empty selector `{}`, then all namespaces are eligible."""
    flavorFungibility: FlavorFungibility | None = Field(default=None, json_schema_extra={"default": {}})
    """flavorFungibility defines whether a workload should try the next flavor before borrowing or
    preempting in the flavor being evaluated."""
    preemption: ClusterQueuePreemption | None = Field(default=None, json_schema_extra={"default": {}})
    """preemption defines the preemption policies."""
    admissionChecksStrategy: AdmissionChecksStrategy | None = None
    """admissionChecksStrategy defines a list of strategies to determine which ResourceFlavors require
    AdmissionChecks."""
    stopPolicy: StopPolicy = "None"
    """stopPolicy - if set to a value different from None, the ClusterQueue is considered Inactive, no
    new reservation being made. None - Workloads are admitted. HoldAndDrain - Admitted workloads are
    evicted and Reserving workloads will cancel the reservation. Hold - Admitted workloads will run
    to completion and Reserving workloads will cancel the reservation."""
    fairSharing: FairSharing | None = None
    """fairSharing defines the properties of the ClusterQueue when participating in FairSharing. The
    values are only relevant if FairSharing is enabled in the Kueue configuration."""
    admissionScope: AdmissionScope | None = None
    """admissionScope indicates whether ClusterQueue uses the Admission Fair Sharing"""
    concurrentAdmissionPolicy: ConcurrentAdmissionPolicy | None = None
    """concurrentAdmissionPolicy defines the configuration for the ConcurrentAdmission feature
    (alpha): Workloads pursue multiple flavors at the same time and may migrate to more preferable
    flavors after admission."""


class ClusterQueueStatus(KueueModel):
    """ClusterQueueStatus defines the observed state of ClusterQueue"""

    conditions: list[_Condition] | None = condition_list(
        "conditions hold the latest available observations of the ClusterQueue current state."
    )
    flavorsReservation: list[FlavorUsage] | None = Field(
        default=None, max_length=64, json_schema_extra=list_map("name")
    )
    """flavorsReservation are the reserved quotas, by flavor, currently in use by the workloads
    assigned to this ClusterQueue."""
    flavorsUsage: list[FlavorUsage] | None = Field(default=None, max_length=64, json_schema_extra=list_map("name"))
    """flavorsUsage are the used quotas, by flavor, currently in use by the workloads admitted in this
    ClusterQueue."""
    pendingWorkloads: Int32 | None = None
    """pendingWorkloads is the number of workloads currently waiting to be admitted to this
    clusterQueue."""
    reservingWorkloads: Int32 | None = None
    """reservingWorkloads is the number of workloads currently reserving quota in this
    clusterQueue."""
    admittedWorkloads: Int32 | None = None
    """admittedWorkloads is the number of workloads currently admitted to this clusterQueue and
    haven't finished yet."""
    fairSharing: FairSharingStatus | None = None
    """fairSharing contains the current state for this ClusterQueue when participating in Fair
    Sharing."""


class ClusterQueue(KueueModel):
    """ClusterQueue is the Schema for the clusterQueue API."""

    spec: ClusterQueueSpec | None = None
    """spec is the specification of the ClusterQueue."""
    status: ClusterQueueStatus | None = None
    """status is the status of the ClusterQueue."""


# ---------------------------------------------------------------- Cohort


class CohortSpec(KueueModel):
    """CohortSpec defines the desired state of Cohort"""

    parentName: DNSSubdomain | None = None
    """parentName references this Cohort's parent, if any. It satisfies one of three cases: unset
    (this Cohort is the root of its Cohort tree); references a non-existent Cohort (an implicit
    default Cohort is assumed); or references an existing Cohort."""
    resourceGroups: list[ResourceGroup] | None = Field(
        default=None, max_length=16, json_schema_extra={"x-kubernetes-list-type": "atomic"}
    )
    """resourceGroups describes groupings of Resources and Flavors. Each ResourceGroup defines a list
    of Resources and a list of Flavors which provide quotas for these Resources. Quota defined here
    is extra capacity shared by the Cohort's members, on top of the members' own quota."""
    fairSharing: FairSharing | None = None
    """fairSharing defines the properties of the Cohort when participating in FairSharing."""


class CohortStatus(KueueModel):
    """CohortStatus defines the observed state of Cohort."""

    conditions: list[_Condition] | None = condition_list("conditions hold the latest observations of the Cohort.")
    fairSharing: FairSharingStatus | None = None
    """fairSharing contains the current state for this Cohort when participating in Fair Sharing."""


class Cohort(KueueModel):
    """Cohort defines the Cohorts API. Hierarchical Cohorts (any Cohort which has a parent) are
    compatible with Fair Sharing."""

    spec: CohortSpec | None = None
    """spec is the specification of the Cohort."""
    status: CohortStatus | None = None
    """status is the status of the Cohort."""
