"""Typed v1beta2 models of Kueue's cluster-scoped kinds and LocalQueue (pydantic, API boundary only).

Owns the field-by-field shape of ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
WorkloadPriorityClass, AdmissionCheck and Topology as Kueue declares them (descriptions taken from
Kueue's API docs, kubebuilder defaults, enums, bounds and CEL rules). The JSON schemas generated
from them (:mod:`pykueue.api.kueue_schemas`) are what the API server validates with and serves;
hot paths never instantiate these models.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from pykueue.api.kueue_types import Condition as _Condition
from pykueue.api.kueue_types import CoreRef as _Core
from pykueue.api.kueue_types import (
    DNSSubdomain,
    FairSharing,
    FairSharingStatus,
    FlavorUsage,
    Int32,
    KueueModel,
    Quantity,
    ResourceGroup,
    cel,
    condition_list,
    list_map,
)

StopPolicy = Literal["None", "Hold", "HoldAndDrain"]
_EFFECTS = "['NoSchedule', 'PreferNoSchedule', 'NoExecute']"


# ---------------------------------------------------------------- ResourceFlavor

class ResourceFlavorSpec(KueueModel):
    """ResourceFlavorSpec defines the desired state of the ResourceFlavor"""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": cel(
        ("!has(self.topologyName) || (has(self.nodeLabels) && size(self.nodeLabels) >= 1)",
         "at least one nodeLabel is required when topology is set"),
        ("!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == oldSelf.topologyName)",
         "field is immutable"),
    )})

    nodeLabels: dict[str, str] | None = Field(default=None, json_schema_extra={"maxProperties": 8})
    """nodeLabels are labels that associate the ResourceFlavor with Nodes that have the same labels.
    When a Workload is admitted, its podsets can only get assigned ResourceFlavors whose nodeLabels
    match the nodeSelector and nodeAffinity fields. Once a ResourceFlavor is assigned to a podSet,
    the ResourceFlavor's nodeLabels should be injected into the pods of the Workload by the
    controller that integrates with the Workload object. nodeLabels can be up to 8 elements."""
    nodeTaints: list[_Core("V1Taint")] | None = Field(  # type: ignore[valid-type]
        default=None, max_length=8, json_schema_extra={"x-kubernetes-validations": cel(
            (f"self.all(x, x.effect in {_EFFECTS})",
             "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"))})
    """nodeTaints are taints that the nodes associated with this ResourceFlavor have. Workloads'
    podsets must have tolerations for these nodeTaints in order to get assigned this ResourceFlavor
    during admission. Only the 'NoSchedule' and 'NoExecute' taint effects are evaluated, while
    'PreferNoSchedule' is ignored. An example of a nodeTaint is
    cloud.provider.com/preemptible="true":NoSchedule. nodeTaints can be up to 8 elements."""
    tolerations: list[_Core("V1Toleration")] | None = Field(  # type: ignore[valid-type]
        default=None, max_length=8, json_schema_extra={"x-kubernetes-validations": cel(
            ("self.all(x, !has(x.key) || x.key == '' ? (has(x.operator) && x.operator == 'Exists') : true)",
             "operator must be Exists when 'key' is empty, which means 'match all values and all keys'"),
            ("self.all(x, has(x.tolerationSeconds) ? (has(x.effect) && x.effect == 'NoExecute') : true)",
             "effect must be 'NoExecute' when 'tolerationSeconds' is set"),
            ("self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])",
             "supported toleration values: 'Equal'(default), 'Exists'"),
            ("self.all(x, has(x.operator) && x.operator == 'Exists' ? (!has(x.value) || x.value == '') : true)",
             "a value must be empty when 'operator' is 'Exists'"),
            (f"self.all(x, !has(x.effect) || x.effect == '' || x.effect in {_EFFECTS})",
             "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"),
        )})
    """tolerations are extra tolerations that will be added to the pods admitted in the quota
    associated with this resource flavor. An example of a toleration is
    cloud.provider.com/preemptible="true":NoSchedule. tolerations can be up to 8 elements."""
    topologyName: DNSSubdomain | None = None
    """topologyName indicates topology for the TAS ResourceFlavor. When specified, it enables scraping
    of the topology information from the nodes matching to the Resource Flavor node labels. Once set
    it cannot be changed or removed."""


class ResourceFlavor(KueueModel):
    """ResourceFlavor is the Schema for the resourceflavors API."""

    spec: ResourceFlavorSpec | None = None
    """spec is the specification of the ResourceFlavor."""


# ---------------------------------------------------------------- ClusterQueue

class FlavorFungibility(KueueModel):
    """FlavorFungibility determines whether a workload should try the next flavor before borrowing or
    preempting in current flavor."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": cel(
        ("!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && "
         "self.whenCanPreempt == 'TryNextFlavor')",
         "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"))})

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

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": cel(
        ("!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) && "
         "self.borrowWithinCohort.policy != 'Never')",
         "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"))})

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
        default=None, max_length=64, json_schema_extra={"x-kubernetes-list-type": "set"})
    """onFlavors is a list of ResourceFlavors' names that this AdmissionCheck should run for. If
    empty, the AdmissionCheck will run for all workloads submitted to the ClusterQueue."""


class AdmissionChecksStrategy(KueueModel):
    """AdmissionChecksStrategy defines a strategy for a AdmissionCheck."""

    admissionChecks: list[AdmissionCheckStrategyRule] = Field(
        min_length=1, max_length=64, json_schema_extra=list_map("name"))
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

    resourceGroups: list[ResourceGroup] | None = Field(default=None, max_length=16)
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
        "conditions hold the latest available observations of the ClusterQueue current state.")
    flavorsReservation: list[FlavorUsage] | None = Field(
        default=None, max_length=64, json_schema_extra=list_map("name"))
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
    resourceGroups: list[ResourceGroup] | None = Field(default=None, max_length=16)
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


# ---------------------------------------------------------------- LocalQueue

class LocalQueueSpec(KueueModel):
    """LocalQueueSpec defines the desired state of LocalQueue"""

    clusterQueue: DNSSubdomain | None = Field(default=None, json_schema_extra={
        "x-kubernetes-validations": cel(("self == oldSelf", "field is immutable"))})
    """clusterQueue is a reference to a clusterQueue that backs this localQueue. The field is
    immutable."""
    stopPolicy: StopPolicy = "None"
    """stopPolicy - if set to a value different from None, the LocalQueue is considered Inactive, no
    new reservation being made. HoldAndDrain - Admitted workloads are evicted and Reserving workloads
    will cancel the reservation. Hold - Admitted workloads will run to completion and Reserving
    workloads will cancel the reservation."""
    fairSharing: FairSharing | None = None
    """fairSharing defines the properties of the LocalQueue when participating in AdmissionFairSharing.
    The values are only relevant if AdmissionFairSharing is enabled in the Kueue configuration."""


class LocalQueueResourceUsage(KueueModel):
    name: str
    """name of the resource."""
    total: Quantity | None = None
    """total is the total quantity of used quota."""


class LocalQueueFlavorUsage(KueueModel):
    name: DNSSubdomain
    """name of the flavor."""
    resources: list[LocalQueueResourceUsage] | None = Field(
        default=None, max_length=64, json_schema_extra=list_map("name"))
    """resources lists the quota usage for the resources in this flavor."""


class LocalQueueStatus(KueueModel):
    """LocalQueueStatus defines the observed state of LocalQueue"""

    conditions: list[_Condition] | None = condition_list(
        "conditions hold the latest available observations of the LocalQueue current state.")
    pendingWorkloads: Int32 | None = None
    """pendingWorkloads is the number of Workloads in the LocalQueue not yet admitted to a
    ClusterQueue"""
    reservingWorkloads: Int32 | None = None
    """reservingWorkloads is the number of workloads in this LocalQueue reserving quota in a
    ClusterQueue and that haven't finished yet."""
    admittedWorkloads: Int32 | None = None
    """admittedWorkloads is the number of workloads in this LocalQueue admitted to a ClusterQueue and
    that haven't finished yet."""
    flavorsReservation: list[LocalQueueFlavorUsage] | None = Field(
        default=None, max_length=64, json_schema_extra=list_map("name"))
    """flavorsReservation are the reserved quotas, by flavor currently in use by the workloads
    assigned to this LocalQueue."""
    flavorsUsage: list[LocalQueueFlavorUsage] | None = Field(
        default=None, max_length=64, json_schema_extra=list_map("name"))
    """flavorsUsage are the used quotas, by flavor currently in use by the workloads assigned to this
    LocalQueue."""
    fairSharing: FairSharingStatus | None = None
    """fairSharing contains the information about the current status of fair sharing."""


class LocalQueue(KueueModel):
    """LocalQueue is the Schema for the localQueues API"""

    spec: LocalQueueSpec | None = None
    """spec is the specification of the LocalQueue."""
    status: LocalQueueStatus | None = None
    """status is the status of the LocalQueue."""


# ---------------------------------------------------------------- WorkloadPriorityClass

class WorkloadPriorityClass(KueueModel):
    """WorkloadPriorityClass is the Schema for the workloadPriorityClass API"""

    value: Int32
    """value represents the integer value of this workloadPriorityClass. This is the actual priority
    that workloads receive when jobs have the name of this class in their workloadPriorityClass
    label. Changing the value of workloadPriorityClass doesn't affect the priority of workloads that
    were already created."""
    description: Annotated[str, Field(max_length=2048)] | None = None
    """description is an arbitrary string that usually provides guidelines on when this
    workloadPriorityClass should be used."""


# ---------------------------------------------------------------- AdmissionCheck

class AdmissionCheckParametersReference(KueueModel):
    apiGroup: Annotated[str, Field(min_length=1, max_length=253,
                                   pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")]
    """apiGroup is the group for the resource being referenced."""
    kind: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$")]
    """kind is the type of the resource being referenced."""
    name: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")]
    """name is the name of the resource being referenced."""


class AdmissionCheckSpec(KueueModel):
    """AdmissionCheckSpec defines the desired state of AdmissionCheck"""

    controllerName: Annotated[str, Field(min_length=1, max_length=253)] = Field(json_schema_extra={
        "x-kubernetes-validations": cel(("self == oldSelf", "field is immutable"))})
    """controllerName identifies the controller that processes the AdmissionCheck, not necessarily a
    Kubernetes Pod or Deployment name. Cannot be empty. The field is immutable."""
    parameters: AdmissionCheckParametersReference | None = None
    """parameters identifies a configuration with additional parameters for the check."""


class AdmissionCheckStatus(KueueModel):
    """AdmissionCheckStatus defines the observed state of AdmissionCheck"""

    conditions: list[_Condition] | None = condition_list(
        "conditions hold the latest available observations of the AdmissionCheck current state.")


class AdmissionCheck(KueueModel):
    """AdmissionCheck is the Schema for the admissionchecks API"""

    spec: AdmissionCheckSpec
    """spec is the specification of the AdmissionCheck."""
    status: AdmissionCheckStatus | None = None
    """status is the status of the AdmissionCheck."""


# ---------------------------------------------------------------- Topology

_HOSTNAME = "kubernetes.io/hostname"


class TopologyLevel(KueueModel):
    """TopologyLevel defines the desired state of TopologyLevel"""

    nodeLabel: Annotated[str, Field(min_length=1, max_length=316, pattern=(
        r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
        r"[A-Za-z0-9])$"))]
    """nodeLabel indicates the name of the node label for a specific topology level. Examples:
    cloud.provider.com/topology-block, cloud.provider.com/topology-rack."""


class TopologySpec(KueueModel):
    """TopologySpec defines the desired state of Topology"""

    levels: list[TopologyLevel] = Field(min_length=1, max_length=16, json_schema_extra={
        "x-kubernetes-validations": cel(
            ("size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0", "must be unique"),
            (f"size(self.filter(i, i.nodeLabel == '{_HOSTNAME}')) == 0 || "
             f"self[size(self) - 1].nodeLabel == '{_HOSTNAME}'",
             "the kubernetes.io/hostname label can only be used at the lowest level of topology"),
            (f"self == oldSelf || (self[size(self) - 1].nodeLabel == '{_HOSTNAME}' && "
             f"oldSelf[size(oldSelf) - 1].nodeLabel == '{_HOSTNAME}')",
             "field is immutable"),
        )})
    """levels define the levels of topology."""


class Topology(KueueModel):
    """Topology is the Schema for the topology API"""

    spec: TopologySpec
    """spec is the specification of the Topology."""


__all__ = [
    "AdmissionCheck",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "ResourceFlavor",
    "Topology",
    "WorkloadPriorityClass",
]
