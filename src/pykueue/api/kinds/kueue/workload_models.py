"""Typed v1beta2 model of Kueue's Workload (pydantic, API boundary only).

Owns the field-by-field shape of ``Workload`` as Kueue declares it: pod sets with their pod
templates and topology requests, queue/priority references, and the status the scheduler and the
workload controller write (admission, admission checks, requeue state, reclaimable pods ...).
Self-contained rules are CEL (``x-kubernetes-validations``) as in Kueue's CRD; rules that compare
with the stored object or need Go-side logic live in :mod:`pykueue.api.kinds.kueue.workload_validation`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from pykueue.api.kinds.kueue.kueue_types import Condition as _Condition
from pykueue.api.kinds.kueue.kueue_types import CoreRef as _Core
from pykueue.api.kinds.kueue.kueue_types import (
    DNSLabel,
    DNSSubdomain,
    Int32,
    KueueModel,
    Quantity,
    Time,
    cel,
    condition_list,
    list_map,
)

__all__ = ["Workload"]

_QUOTA_RESERVED = (
    "has(self.status) && has(self.status.conditions) && "
    "self.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True')"
)


class PodSetTopologyConstraint(KueueModel):
    topology: Annotated[str, Field(min_length=1, max_length=63)]
    """topology is the topology level (node label) a slice must be placed within."""
    size: Annotated[int, Field(ge=1)]
    """size is the number of pods in one slice."""


class PodSetTopologyRequest(KueueModel):
    """PodSetTopologyRequest defines the topology request for a PodSet."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    "has(self.podSetSliceRequiredTopology) == has(self.podSetSliceSize)",
                    "podSetSliceSize must be set if and only if podSetSliceRequiredTopology is set",
                ),
            )
        }
    )

    required: Annotated[str, Field(max_length=63)] | None = None
    """required indicates the topology level required by the PodSet, as indicated by the
    `kueue.x-k8s.io/podset-required-topology` PodSet annotation."""
    preferred: Annotated[str, Field(max_length=63)] | None = None
    """preferred indicates the topology level preferred by the PodSet, as indicated by the
    `kueue.x-k8s.io/podset-preferred-topology` PodSet annotation."""
    unconstrained: bool | None = None
    """unconstrained indicates that Kueue has the freedom to schedule the PodSet within the entire
    available capacity, without constraints on the compactness of the placement."""
    podIndexLabel: Annotated[str, Field(max_length=317)] | None = None
    """podIndexLabel indicates the name of the label indexing the pods."""
    subGroupIndexLabel: Annotated[str, Field(max_length=317)] | None = None
    """subGroupIndexLabel indicates the name of the label indexing the instances of replicated Jobs
    (groups) within a PodSet."""
    subGroupCount: Annotated[int, Field(ge=0)] | None = None
    """subGroupCount indicates the count of replicated Jobs (groups) within a PodSet."""
    podSetGroupName: Annotated[str, Field(max_length=256)] | None = None
    """podSetGroupName indicates the name of the group of PodSets to which this PodSet belongs to.
    PodSets with the same podSetGroupName should be assigned the same ResourceFlavor."""
    podSetSliceRequiredTopology: Annotated[str, Field(max_length=63)] | None = None
    """podSetSliceRequiredTopology indicates the topology level required by the PodSet slice."""
    podSetSliceSize: Annotated[int, Field(ge=1)] | None = None
    """podSetSliceSize indicates the size of a subgroup of pods in a PodSet for which Kueue finds a
    requested topology domain on a level defined in podSetSliceRequiredTopology."""
    podsetSliceRequiredTopologyConstraints: list[PodSetTopologyConstraint] | None = Field(default=None, max_length=3)
    """podsetSliceRequiredTopologyConstraints lists up to 3 slice layers, each a topology level and
    a slice size."""


class PodSet(KueueModel):
    """PodSet is a set of pods that share a pod template and resource requests."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    "!has(self.minCount) || self.minCount <= self.count",
                    "minCount should be positive and less or equal to count",
                ),
            )
        }
    )

    name: DNSLabel = "main"
    """name is the PodSet name."""
    template: _Core("V1PodTemplateSpec")  # type: ignore[valid-type]
    """template is the Pod template. The only allowed fields in template.metadata are labels and
    annotations. If requests are omitted for a container or initContainer, they default to the
    limits if they are explicitly specified for the container or initContainer. During admission,
    the rules in nodeSelector and nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution that
    match the keys in the nodeLabels from the ResourceFlavors considered for this Workload are used
    to filter the ResourceFlavors that can be assigned to this podSet."""
    count: Annotated[int, Field(ge=0)] = 1
    """count is the number of pods for the spec."""
    minCount: Annotated[int, Field(ge=1)] | None = None
    """minCount is the minimum number of pods for the spec acceptable if the workload supports
    partial admission. If not provided, partial admission for the current PodSet is not enabled.
    Only one podSet within the workload can use this."""
    topologyRequest: PodSetTopologyRequest | None = None
    """topologyRequest defines the topology request for the PodSet."""


class PriorityClassRef(KueueModel):
    """PriorityClassRef references a WorkloadPriorityClass or a PriorityClass."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    "self.group == 'scheduling.k8s.io' ? self.kind == 'PriorityClass' : true",
                    "kind must be PriorityClass when group is scheduling.k8s.io",
                ),
                (
                    "self.group == 'kueue.x-k8s.io' ? self.kind == 'WorkloadPriorityClass' : true",
                    "kind must be WorkloadPriorityClass when group is kueue.x-k8s.io",
                ),
            )
        }
    )

    group: Literal["kueue.x-k8s.io", "scheduling.k8s.io"]
    """group is the API group of the priority class: kueue.x-k8s.io or scheduling.k8s.io."""
    kind: Literal["WorkloadPriorityClass", "PriorityClass"]
    """kind is the kind of the priority class: WorkloadPriorityClass or PriorityClass."""
    name: Annotated[
        str,
        Field(
            min_length=1, max_length=253, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
        ),
    ]
    """name is the name of the priority class."""


class PreemptionGate(KueueModel):
    name: Annotated[str, Field(min_length=1, max_length=63)]
    """name of the preemption gate."""


class WorkloadSpec(KueueModel):
    """WorkloadSpec defines the desired state of Workload"""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    "!has(self.priorityClassRef) || has(self.priority)",
                    "priority should not be nil when priorityClassRef is set",
                ),
            )
        }
    )

    podSets: list[PodSet] = Field(
        min_length=1,
        max_length=18,
        json_schema_extra=list_map(
            "name",
            **{
                "x-kubernetes-validations": cel(
                    ("self.filter(p, has(p.minCount)).size() <= 1", "at most one podSet can use minCount")
                )
            },
        ),
    )
    """podSets is a list of sets of homogeneous pods, each described by a Pod spec and a count. There
    must be at least one element and at most 18. podSets cannot be changed while the workload holds
    a quota reservation."""
    queueName: DNSSubdomain | None = None
    """queueName is the name of the LocalQueue the Workload is associated with. queueName cannot be
    changed while .status.admission is not null."""
    priorityClassRef: PriorityClassRef | None = None
    """priorityClassRef references a WorkloadPriorityClass (kueue.x-k8s.io) or a PriorityClass
    (scheduling.k8s.io) from which the workload's priority was taken."""
    priority: Int32 | None = None
    """priority determines the order of access to the resources managed by the ClusterQueue where
    the workload is queued. The priority value is populated from the priority class. The higher the
    value, the higher the priority. Must be set if priorityClassRef is set."""
    active: bool = True
    """active determines if a workload can be admitted into a queue. Changing active from true to
    false will evict any running workloads. Defaults to true."""
    maximumExecutionTimeSeconds: Annotated[int, Field(ge=1)] | None = None
    """maximumExecutionTimeSeconds if provided, determines the maximum time, in seconds, the workload
    can be admitted before it's automatically deactivated. It cannot change while admitted."""
    preemptionGates: list[PreemptionGate] | None = Field(default=None, max_length=8, json_schema_extra=list_map("name"))
    """preemptionGates are gates that block the workload from issuing preemptions."""


class TopologyIndividualValues(KueueModel):
    prefix: str | None = None
    """prefix is a common prefix of the values of the domains at this level."""
    suffix: str | None = None
    """suffix is a common suffix of the values of the domains at this level."""
    roots: list[str] = Field(min_length=1)
    """roots are the values of the domains with the prefix and suffix removed, one per domain."""


class TopologyAssignmentValues(KueueModel):
    """The node-label values of one topology level for the domains of a slice."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                ("has(self.universal) != has(self.individual)", "exactly one of universal, individual must be set"),
            )
        }
    )

    universal: str | None = None
    """universal is the value shared by every domain at this level."""
    individual: TopologyIndividualValues | None = None
    """individual holds per-domain values, as prefix, suffix and roots."""


class TopologyPodCounts(KueueModel):
    """The number of pods per domain of a slice."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                ("has(self.universal) != has(self.individual)", "exactly one of universal, individual must be set"),
            )
        }
    )

    universal: Annotated[int, Field(ge=1)] | None = None
    """universal is the pod count of every domain of the slice."""
    individual: list[Annotated[int, Field(ge=0)]] | None = None
    """individual lists the pod count of each domain of the slice."""


class TopologyAssignmentSlice(KueueModel):
    domainCount: Annotated[int, Field(ge=1)]
    """domainCount is the number of domains in this slice."""
    valuesPerLevel: list[TopologyAssignmentValues] | None = Field(default=None, max_length=16)
    """valuesPerLevel holds, for each topology level, the domain values."""
    podCounts: TopologyPodCounts | None = None
    """podCounts holds the pod counts per domain, universal or individual."""


class TopologyAssignment(KueueModel):
    levels: list[str] = Field(min_length=1, max_length=16)
    """levels is an ordered list of keys denoting the levels of the assigned topology."""
    slices: list[TopologyAssignmentSlice] | None = Field(default=None, max_length=1000)
    """slices represent topology assignments for subsets of pods of a workload."""


class PodSetAssignment(KueueModel):
    name: DNSLabel = "main"
    """name is the name of the podSet. It should match one of the names in .spec.podSets."""
    flavors: dict[str, DNSSubdomain] | None = None
    """flavors are the flavors assigned to the workload for each resource."""
    resourceUsage: dict[str, Quantity] | None = None
    """resourceUsage keeps track of the total resources all the pods in the podset need to run.
    Beside what is provided in podSet's specs, this calculation takes into account the LimitRange
    defaults and RuntimeClass overheads at the moment of admission."""
    count: Annotated[int, Field(ge=0)] | None = None
    """count is the number of pods taken into account at admission time."""
    topologyAssignment: TopologyAssignment | None = None
    """topologyAssignment indicates the topology assignment divided into topology domains
    corresponding to the lowest level of the topology."""
    delayedTopologyRequest: Literal["Pending", "Ready"] | None = None
    """delayedTopologyRequest indicates the topology assignment is delayed. Topology assignment
    might be delayed in case there is ProvisioningRequest AdmissionCheck used."""


class Admission(KueueModel):
    clusterQueue: DNSSubdomain
    """clusterQueue is the name of the ClusterQueue that admitted this workload."""
    podSetAssignments: list[PodSetAssignment] = Field(max_length=18, json_schema_extra=list_map("name"))
    """podSetAssignments hold the admission results for each of the .spec.podSets entries."""


class RequeueState(KueueModel):
    count: Annotated[int, Field(ge=0)] | None = None
    """count records the number of times a workload has been re-queued. When a deactivated
    (`.spec.activate`=`false`) workload is reactivated (`.spec.activate`=`true`), this count would
    be reset to null."""
    requeueAt: Time | None = None
    """requeueAt records the time when a workload will be re-queued."""


class ReclaimablePod(KueueModel):
    name: DNSLabel
    """name is the PodSet name."""
    count: Annotated[int, Field(ge=0)]
    """count is the number of pods for which the requested resources are no longer needed."""


class PodSetUpdate(KueueModel):
    name: DNSLabel
    """name of the PodSet to modify. Should match to one of the Workload's PodSets."""
    labels: dict[str, str] | None = None
    """labels to add to the pods of the podSet."""
    annotations: dict[str, str] | None = None
    """annotations to add to the pods of the podSet."""
    nodeSelector: dict[str, str] | None = None
    """nodeSelector to add to the pods of the podSet."""
    tolerations: list[_Core("V1Toleration")] | None = Field(default=None, max_length=8)  # type: ignore[valid-type]
    """tolerations to add to the pods of the podSet."""


class AdmissionCheckState(KueueModel):
    name: str
    """name identifies the admission check."""
    state: Literal["Pending", "Ready", "Retry", "Rejected"]
    """state of the admissionCheck, one of Pending, Ready, Retry, Rejected"""
    lastTransitionTime: Time
    """lastTransitionTime is the last time the condition transitioned from one status to another."""
    message: Annotated[str, Field(max_length=32768)]
    """message is a human readable message indicating details about the transition."""
    requeueAfterSeconds: Annotated[int, Field(ge=0)] | None = None
    """requeueAfterSeconds indicates how long to wait at least before retrying to admit the
    workload."""
    retryCount: Annotated[int, Field(ge=0)] | None = None
    """retryCount keeps track of the number of retries for this admission check."""
    podSetUpdates: list[PodSetUpdate] | None = Field(default=None, max_length=18, json_schema_extra=list_map("name"))
    """podSetUpdates contains a list of pod set modifications suggested by AdmissionChecks."""


class PodSetRequest(KueueModel):
    name: DNSLabel = "main"
    """name is the name of the podSet. It should match one of the names in .spec.podSets."""
    resources: dict[str, Quantity] | None = None
    """resources is the total resources all the pods in the podset need to run."""


class WorkloadSchedulingStatsEviction(KueueModel):
    reason: str
    """reason specifies the programmatic identifier for the eviction cause."""
    underlyingCause: str
    """underlyingCause specifies a finer-grained explanation that complements the eviction reason."""
    count: Annotated[int, Field(ge=0)]
    """count tracks the number of evictions for this reason and detailed reason."""


class SchedulingStats(KueueModel):
    evictions: list[WorkloadSchedulingStatsEviction] | None = Field(
        default=None, max_length=256, json_schema_extra=list_map("reason", "underlyingCause")
    )
    """evictions tracks eviction statistics by reason and detailed reason."""


class UnhealthyNode(KueueModel):
    name: str
    """name is the name of the unhealthy node."""


class PreemptionGateState(KueueModel):
    name: Annotated[str, Field(min_length=1, max_length=63)]
    """name of the preemption gate."""
    position: Literal["Closed", "Open"]
    """position of the gate: Closed blocks preemptions, Open allows them."""
    lastTransitionTime: Time
    """lastTransitionTime is the last time the gate changed position."""


class WorkloadStatus(KueueModel):
    """WorkloadStatus defines the observed state of Workload"""

    conditions: list[_Condition] | None = condition_list(
        "conditions hold the latest available observations of the Workload current state. The type "
        "of the condition could be: Admitted, QuotaReserved, Finished, PodsReady, Evicted, Preempted, "
        "Requeued, DeactivationTarget."
    )
    admission: Admission | None = None
    """admission holds the parameters of the admission of the workload by a ClusterQueue. admission
    can be set back to null, but its fields cannot be changed once set."""
    requeueState: RequeueState | None = None
    """requeueState holds the re-queue state when a workload meets Eviction with PodsReadyTimeout
    reason."""
    reclaimablePods: list[ReclaimablePod] | None = Field(
        default=None, max_length=18, json_schema_extra=list_map("name")
    )
    """reclaimablePods keeps track of the number pods within a podset for which the resource
    reservation is no longer needed."""
    admissionChecks: list[AdmissionCheckState] | None = Field(
        default=None, max_length=8, json_schema_extra=list_map("name")
    )
    """admissionChecks list all the admission checks required by the workload and the current
    status"""
    resourceRequests: list[PodSetRequest] | None = Field(
        default=None, max_length=18, json_schema_extra=list_map("name")
    )
    """resourceRequests provides a detailed view of the resources that were requested by a
    non-admitted workload when it was considered for admission."""
    accumulatedPastExecutionTimeSeconds: Int32 | None = None
    """accumulatedPastExecutionTimeSeconds holds the total time, in seconds, the workload spent in
    Admitted state, in the previous `Admit` - `Evict` cycles."""
    schedulingStats: SchedulingStats | None = None
    """schedulingStats tracks scheduling statistics"""
    nominatedClusterNames: list[str] | None = Field(
        default=None, max_length=20, json_schema_extra={"x-kubernetes-list-type": "set"}
    )
    """nominatedClusterNames specifies the list of cluster names that have been nominated for
    scheduling (MultiKueue). Mutually exclusive with clusterName."""
    clusterName: Annotated[str, Field(max_length=256)] | None = None
    """clusterName is the name of the cluster where the workload is currently assigned
    (MultiKueue). Once set it cannot change."""
    unhealthyNodes: list[UnhealthyNode] | None = Field(default=None, max_length=8, json_schema_extra=list_map("name"))
    """unhealthyNodes holds the failed nodes running at least one pod of this workload when
    Topology-Aware Scheduling is used."""
    preemptionGates: list[PreemptionGateState] | None = Field(
        default=None, max_length=8, json_schema_extra=list_map("name")
    )
    """preemptionGates hold the state of the workload's preemption gates."""


class Workload(KueueModel):
    """Workload is the Schema for the workloads API"""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    f"{_QUOTA_RESERVED} && has(self.status.admission) ? "
                    "size(self.spec.podSets) == size(self.status.admission.podSetAssignments) : true",
                    "podSetAssignments must have the same number of podSets as the spec",
                ),
            )
        }
    )

    spec: WorkloadSpec | None = None
    """spec is the specification of the Workload."""
    status: WorkloadStatus | None = None
    """status is the status of the Workload."""
