"""Typed v1beta2 models of Kueue's smaller kinds (pydantic, API boundary only).

Owns the field-by-field shape of ResourceFlavor, LocalQueue, WorkloadPriorityClass,
AdmissionCheck and Topology as Kueue declares them (descriptions taken from
Kueue's API docs, kubebuilder defaults, enums, bounds and CEL rules). The JSON schemas generated
from them (:mod:`pykueue.api.kinds.kueue.kueue_schemas`) are what the API server validates with and serves;
hot paths never instantiate these models.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from pykueue.api.kinds.kueue.kueue_types import Condition as _Condition
from pykueue.api.kinds.kueue.kueue_types import CoreRef as _Core
from pykueue.api.kinds.kueue.kueue_types import (
    DNSSubdomain,
    FairSharing,
    FairSharingStatus,
    Int32,
    KueueModel,
    Quantity,
    StopPolicy,
    cel,
    condition_list,
    list_map,
)

_EFFECTS = "['NoSchedule', 'PreferNoSchedule', 'NoExecute']"


# ---------------------------------------------------------------- ResourceFlavor


class ResourceFlavorSpec(KueueModel):
    """ResourceFlavorSpec defines the desired state of the ResourceFlavor"""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    "!has(self.topologyName) || (has(self.nodeLabels) && size(self.nodeLabels) >= 1)",
                    "at least one nodeLabel is required when topology is set",
                ),
                (
                    "!has(oldSelf.topologyName) || "
                    "(has(self.topologyName) && self.topologyName == oldSelf.topologyName)",
                    "field is immutable",
                ),
            )
        }
    )

    nodeLabels: dict[str, str] | None = Field(default=None, json_schema_extra={"maxProperties": 8})
    """nodeLabels are labels that associate the ResourceFlavor with Nodes that have the same labels.
    When a Workload is admitted, its podsets can only get assigned ResourceFlavors whose nodeLabels
    match the nodeSelector and nodeAffinity fields. Once a ResourceFlavor is assigned to a podSet,
    the ResourceFlavor's nodeLabels should be injected into the pods of the Workload by the
    controller that integrates with the Workload object. nodeLabels can be up to 8 elements."""
    nodeTaints: list[_Core("V1Taint")] | None = Field(  # type: ignore[valid-type]
        default=None,
        max_length=8,
        json_schema_extra={
            "x-kubernetes-list-type": "atomic",
            "x-kubernetes-validations": cel(
                (
                    f"self.all(x, x.effect in {_EFFECTS})",
                    "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
                )
            ),
        },
    )
    """nodeTaints are taints that the nodes associated with this ResourceFlavor have. Workloads'
    podsets must have tolerations for these nodeTaints in order to get assigned this ResourceFlavor
    during admission. Only the 'NoSchedule' and 'NoExecute' taint effects are evaluated, while
    'PreferNoSchedule' is ignored. An example of a nodeTaint is
    cloud.provider.com/preemptible="true":NoSchedule. nodeTaints can be up to 8 elements."""
    tolerations: list[_Core("V1Toleration")] | None = Field(  # type: ignore[valid-type]
        default=None,
        max_length=8,
        json_schema_extra={
            "x-kubernetes-list-type": "atomic",
            "x-kubernetes-validations": cel(
                (
                    "self.all(x, !has(x.key) || x.key == '' ? (has(x.operator) && x.operator == 'Exists') : true)",
                    "operator must be Exists when 'key' is empty, which means 'match all values and all keys'",
                ),
                (
                    "self.all(x, has(x.tolerationSeconds) ? (has(x.effect) && x.effect == 'NoExecute') : true)",
                    "effect must be 'NoExecute' when 'tolerationSeconds' is set",
                ),
                (
                    "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])",
                    "supported toleration values: 'Equal'(default), 'Exists'",
                ),
                (
                    "self.all(x, has(x.operator) && x.operator == 'Exists' ? (!has(x.value) || x.value == '') : true)",
                    "a value must be empty when 'operator' is 'Exists'",
                ),
                (
                    f"self.all(x, !has(x.effect) || x.effect == '' || x.effect in {_EFFECTS})",
                    "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
                ),
            ),
        },
    )
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


# ---------------------------------------------------------------- LocalQueue


class LocalQueueSpec(KueueModel):
    """LocalQueueSpec defines the desired state of LocalQueue"""

    clusterQueue: DNSSubdomain | None = Field(
        default=None, json_schema_extra={"x-kubernetes-validations": cel(("self == oldSelf", "field is immutable"))}
    )
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
        default=None, max_length=64, json_schema_extra=list_map("name")
    )
    """resources lists the quota usage for the resources in this flavor."""


class LocalQueueStatus(KueueModel):
    """LocalQueueStatus defines the observed state of LocalQueue"""

    conditions: list[_Condition] | None = condition_list(
        "conditions hold the latest available observations of the LocalQueue current state."
    )
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
        default=None, max_length=64, json_schema_extra=list_map("name")
    )
    """flavorsReservation are the reserved quotas, by flavor currently in use by the workloads
    assigned to this LocalQueue."""
    flavorsUsage: list[LocalQueueFlavorUsage] | None = Field(
        default=None, max_length=64, json_schema_extra=list_map("name")
    )
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
    apiGroup: Annotated[
        str,
        Field(
            min_length=1, max_length=253, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
        ),
    ]
    """apiGroup is the group for the resource being referenced."""
    kind: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$")]
    """kind is the type of the resource being referenced."""
    name: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")]
    """name is the name of the resource being referenced."""


class AdmissionCheckSpec(KueueModel):
    """AdmissionCheckSpec defines the desired state of AdmissionCheck"""

    controllerName: Annotated[str, Field(min_length=1, max_length=253)] = Field(
        json_schema_extra={"x-kubernetes-validations": cel(("self == oldSelf", "field is immutable"))}
    )
    """controllerName identifies the controller that processes the AdmissionCheck, not necessarily a
    Kubernetes Pod or Deployment name. Cannot be empty. The field is immutable."""
    parameters: AdmissionCheckParametersReference | None = None
    """parameters identifies a configuration with additional parameters for the check."""


class AdmissionCheckStatus(KueueModel):
    """AdmissionCheckStatus defines the observed state of AdmissionCheck"""

    conditions: list[_Condition] | None = condition_list(
        "conditions hold the latest available observations of the AdmissionCheck current state."
    )


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

    nodeLabel: Annotated[
        str,
        Field(
            min_length=1,
            max_length=316,
            pattern=(
                r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
                r"[A-Za-z0-9])$"
            ),
        ),
    ]
    """nodeLabel indicates the name of the node label for a specific topology level. Examples:
    cloud.provider.com/topology-block, cloud.provider.com/topology-rack."""


class TopologySpec(KueueModel):
    """TopologySpec defines the desired state of Topology"""

    levels: list[TopologyLevel] = Field(
        min_length=1,
        max_length=16,
        json_schema_extra={
            "x-kubernetes-validations": cel(
                ("size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0", "must be unique"),
                (
                    f"size(self.filter(i, i.nodeLabel == '{_HOSTNAME}')) == 0 || "
                    f"self[size(self) - 1].nodeLabel == '{_HOSTNAME}'",
                    "the kubernetes.io/hostname label can only be used at the lowest level of topology",
                ),
                (
                    f"self == oldSelf || (self[size(self) - 1].nodeLabel == '{_HOSTNAME}' && "
                    f"oldSelf[size(oldSelf) - 1].nodeLabel == '{_HOSTNAME}')",
                    "field is immutable",
                ),
            )
        },
    )
    """levels define the levels of topology."""


class Topology(KueueModel):
    """Topology is the Schema for the topology API"""

    spec: TopologySpec
    """spec is the specification of the Topology."""


__all__ = [
    "AdmissionCheck",
    "LocalQueue",
    "ResourceFlavor",
    "Topology",
    "WorkloadPriorityClass",
]
