"""Shared building blocks of Kueue's typed API (v1beta2): names, quantities, conditions, markers.

Owns the small vocabulary every Kueue kind model uses: reference types with Kueue's patterns
and lengths, the int-or-string quantity, ``metav1.Condition``, and helpers that attach the
structural-schema markers (list-map keys, CEL rules) through ``json_schema_extra``. Core types a
Kueue kind embeds (LabelSelector, PodTemplateSpec, Taint, Toleration) are referenced by
placeholder and expanded from the Kubernetes client's models by :mod:`pykueue.api.kinds.kueue.kueue_schemas`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from pykueue.api.kinds.core.core_schemas import quantity_schema

__all__ = [
    "DNS_LABEL",
    "DNS_SUBDOMAIN",
    "CoreRef",
    "DNSLabel",
    "DNSSubdomain",
    "KueueModel",
    "Quantity",
    "ResourceName",
    "StopPolicy",
    "Time",
    "cel",
    "condition_list",
    "list_map",
]

DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
PLACEHOLDER = "x-pykueue-core-model"


class KueueModel(BaseModel):
    """Base of every Kueue API model: unknown fields forbidden, attribute docstrings = descriptions."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, populate_by_name=True)


DNSSubdomain = Annotated[str, Field(max_length=253, pattern=DNS_SUBDOMAIN)]
DNSLabel = Annotated[str, Field(max_length=63, pattern=DNS_LABEL)]
ResourceName = str
Time = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
Quantity = Annotated[int | str, WithJsonSchema(quantity_schema())]
Int32 = Annotated[int, WithJsonSchema({"type": "integer", "format": "int32"})]
Int64 = Annotated[int, WithJsonSchema({"type": "integer", "format": "int64"})]
StopPolicy = Literal["None", "Hold", "HoldAndDrain"]


def CoreRef(class_name: str) -> Any:
    """A field typed by a Kubernetes client model (expanded to its full schema later)."""
    return Annotated[dict[str, Any], WithJsonSchema({PLACEHOLDER: class_name})]


def list_map(*keys: str, **extra: Any) -> dict[str, Any]:
    return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(keys), **extra}


def cel(*rules: tuple[str, str] | tuple[str, str, str]) -> Any:
    """CEL rules as ``x-kubernetes-validations`` entries: (rule, message[, fieldPath])."""
    out: list[dict[str, str]] = []
    for entry in rules:
        item = {"rule": entry[0], "message": entry[1]}
        if len(entry) == 3:
            item["fieldPath"] = entry[2]
        out.append(item)
    return out


class Condition(KueueModel):
    """Condition contains details for one aspect of the current state of this API Resource."""

    type: Annotated[
        str,
        Field(
            max_length=316,
            pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*"
            r"[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
            r"[A-Za-z0-9])$",
        ),
    ]
    """type of condition in CamelCase or in foo.example.com/CamelCase."""
    status: Literal["True", "False", "Unknown"]
    """status of the condition, one of True, False, Unknown."""
    observedGeneration: Annotated[int, Field(ge=0)] | None = None
    """observedGeneration represents the .metadata.generation that the condition was set based upon."""
    lastTransitionTime: Time
    """lastTransitionTime is the last time the condition transitioned from one status to another."""
    reason: Annotated[str, Field(min_length=1, max_length=1024, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")]
    """reason contains a programmatic identifier indicating the reason for the condition's last
    transition."""
    message: Annotated[str, Field(max_length=32768)]
    """message is a human readable message indicating details about the transition."""


def condition_list(description: str) -> Any:
    return Field(default=None, max_length=16, description=description, json_schema_extra=list_map("type"))


class FairSharing(KueueModel):
    """FairSharing contains the properties of the ClusterQueue or Cohort, when participating in
    FairSharing."""

    weight: Quantity | None = None
    """weight gives a comparative advantage to this ClusterQueue or Cohort when competing for unused
    resources in the Cohort. The share is based on the dominant resource usage above nominal quotas
    for each resource, divided by the weight. Admission prioritizes scheduling workloads from
    ClusterQueues and Cohorts with the lowest share and preempting workloads from the ClusterQueues
    and Cohorts with the highest share. A zero weight implies infinite share value, meaning that this
    Node will always be at disadvantage against other ClusterQueues and Cohorts. When not 0, Weight
    must be greater than 10^-9. Defaults to 1."""


class FairSharingStatus(KueueModel):
    """FairSharingStatus contains the information about the current status of Fair Sharing."""

    weightedShare: Int64
    """weightedShare represents the maximum of the ratios of usage above nominal quota to the lendable
    resources in the Cohort, among all the resources provided by the Node, and divided by the weight.
    If zero, it means that the usage of the Node is below the nominal quota. If the Node has a weight
    of zero and is borrowing, this will return 9223372036854775807, the maximum possible share value."""
    admissionFairSharingStatus: AdmissionFairSharingStatus | None = None
    """admissionFairSharingStatus represents information relevant to the Admission Fair Sharing"""


class AdmissionFairSharingStatus(KueueModel):
    consumedResources: dict[str, Quantity]
    """consumedResources represents the aggregated usage of resources over time, with decaying
    function applied. The value is populated if usage consumption functionality is enabled in Kueue
    config."""
    lastUpdate: Time
    """lastUpdate is the time when share and consumed resources were updated."""


class ResourceQuota(KueueModel):
    name: ResourceName
    """name of this resource."""
    nominalQuota: Quantity
    """nominalQuota is the quantity of this resource that is available for Workloads admitted by this
    ClusterQueue at a point in time. The nominalQuota must be non-negative."""
    borrowingLimit: Quantity | None = None
    """borrowingLimit is the maximum amount of quota for the [flavor, resource] combination that this
    ClusterQueue is allowed to borrow from the unused quota of other ClusterQueues in the same cohort.
    If null, it means that there is no borrowing limit. If not null, it must be non-negative.
    borrowingLimit must be null if spec.cohortName is empty."""
    lendingLimit: Quantity | None = None
    """lendingLimit is the maximum amount of unused quota for the [flavor, resource] combination that
    this ClusterQueue can lend to other ClusterQueues in the same cohort. If null, all the nominalQuota
    can be borrowed by other clusterQueues in the cohort. If not null, it must be non-negative and
    not greater than nominalQuota. lendingLimit must be null if spec.cohortName is empty."""


class FlavorQuotas(KueueModel):
    name: DNSSubdomain
    """name of this flavor. The name should match the .metadata.name of a ResourceFlavor. If a
    matching ResourceFlavor does not exist, the ClusterQueue will have an Active condition set to
    False."""
    resources: list[ResourceQuota] = Field(min_length=1, max_length=64, json_schema_extra=list_map("name"))
    """resources is the list of quotas for this flavor per resource. There could be up to 64
    resources."""


class ResourceGroup(KueueModel):
    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": cel(
                (
                    "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
                    "flavors must have the same number of resources as the coveredResources",
                )
            )
        }
    )

    coveredResources: list[ResourceName] = Field(min_length=1, max_length=64)
    """coveredResources is the list of resources covered by the flavors in this group. Examples: cpu,
    memory, vendor.com/gpu. The list cannot be empty and it can contain up to 64 resources."""
    flavors: list[FlavorQuotas] = Field(min_length=1, max_length=64, json_schema_extra=list_map("name"))
    """flavors is the list of flavors that provide the resources of this group. Each flavor MUST list
    all the resources listed for this group in the same order as the .resources field. The list
    cannot be empty and it can contain up to 64 flavors."""


class FlavorUsage(KueueModel):
    name: DNSSubdomain
    """name of the flavor."""
    resources: list[ResourceUsage] = Field(max_length=64, json_schema_extra=list_map("name"))
    """resources lists the quota usage for the resources in this flavor."""


class ResourceUsage(KueueModel):
    name: ResourceName
    """name of the resource"""
    total: Quantity | None = None
    """total is the total quantity of used quota, including the amount borrowed from the cohort."""
    borrowed: Quantity | None = None
    """borrowed is quantity of quota that is borrowed from the cohort. In other words, it's the used
    quota that is over the nominalQuota."""


for _model in (FairSharingStatus, FlavorUsage):
    _model.model_rebuild()
