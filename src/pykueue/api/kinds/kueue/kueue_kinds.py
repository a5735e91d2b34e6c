"""The records of Kueue's kinds, served as CustomResourceDefinitions, with their hooks.

Owned by ``api/kinds/kueue``. Owns the *identity* of each kind (versions, names, scope,
subresources, printer columns, selectable fields) and wires in its hooks: schemas generated from
the typed models (:mod:`pykueue.api.kinds.kueue.kueue_schemas`), the schema's defaults plus
Kueue's Workload defaulting, the validating webhooks' rules, and conversion through the hub.

Invariant: storage version first; Kueue's kinds serve v1beta2 (storage) and v1beta1 (deprecated,
with Kueue's warning text).
"""

from __future__ import annotations

from dataclasses import replace

from pykueue.api.kinds.kueue import kueue_validation, workload_validation
from pykueue.api.kinds.kueue.kueue_conversion import HUB, KUEUE_GROUP, converter
from pykueue.api.kinds.kueue.workload_defaults import default_workload
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo, PrinterColumn
from pykueue.api.schema.lazy_schemas import LazySchemas
from pykueue.api.schema.object_validation import KindRule, with_checks

__all__ = ["DEFAULTING_WEBHOOKS", "DEPRECATION_WARNING", "KUEUE_VERSIONS", "VALIDATING_WEBHOOKS", "kinds"]

KUEUE_VERSIONS = ("v1beta2", "v1beta1")
DEPRECATION_WARNING = "This version is deprecated. Use v1beta2 instead."

_AGE = PrinterColumn("Age", "date", ".metadata.creationTimestamp")


def _both(
    *columns: PrinterColumn,
    v1beta1: tuple[PrinterColumn, ...] | None = None,
) -> dict[str, tuple[PrinterColumn, ...]]:
    return {"v1beta2": columns, "v1beta1": columns if v1beta1 is None else v1beta1}


def _cohort_column(path: str) -> PrinterColumn:
    """The ClusterQueue's Cohort column: v1beta1 names the field ``cohort``, v1beta2 ``cohortName``."""
    return PrinterColumn("Cohort", "string", path, description="Cohort that this ClusterQueue belongs to")


_CLUSTER_QUEUE_COLUMNS = (
    PrinterColumn(
        "Strategy",
        "string",
        ".spec.queueingStrategy",
        priority=1,
        description="The queueing strategy used to prioritize workloads",
    ),
    PrinterColumn(
        "Pending Workloads", "integer", ".status.pendingWorkloads", description="Number of pending workloads"
    ),
    PrinterColumn(
        "Admitted Workloads",
        "integer",
        ".status.admittedWorkloads",
        priority=1,
        description="Number of admitted workloads that haven't finished yet",
    ),
)
"""The ClusterQueue's columns after Cohort, the same in both versions."""


def _schema(kind: str, version: str) -> JSONDict:
    # deferred, not a cycle: the typed models take ~0.5 s to import; only a schema read needs them
    from pykueue.api.kinds.kueue import kueue_schemas

    return kueue_schemas.schema(kind, version)


_RULES: dict[str, tuple[KindRule, str]] = {
    "ClusterQueue": (kueue_validation.validate_cluster_queue, "vclusterqueue.kb.io"),
    "Cohort": (kueue_validation.validate_cohort, "vcohort.kb.io"),
    "ResourceFlavor": (kueue_validation.validate_resource_flavor, "vresourceflavor.kb.io"),
    "Workload": (workload_validation.validate_workload, "vworkload.kb.io"),
}
"""Kind -> (Kueue's validating-webhook rules, the webhook's name). What they find reaches the client
as a webhook denial (403), not as a schema error (422). They read the hub version."""

VALIDATING_WEBHOOKS: dict[str, str] = {kind: webhook for kind, (_, webhook) in _RULES.items()}
"""Kind -> the name of Kueue's validating webhook for it: ``pykueue install`` registers one each."""

DEFAULTING_WEBHOOKS: dict[str, str] = {"Workload": "mworkload.kb.io"}
"""Kind -> the name of Kueue's defaulting webhook, for the kinds with defaults beyond their schema's
(on a cluster the API server applies only the schema's: ``pykueue install`` registers these)."""


def _kueue(
    kind: str,
    plural: str,
    *,
    namespaced: bool,
    short_names: tuple[str, ...],
    status: bool,
    columns: dict[str, tuple[PrinterColumn, ...]] | None = None,
    selectable: tuple[str, ...] = (),
) -> KindInfo:
    info = KindInfo(
        group=KUEUE_GROUP,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        versions=KUEUE_VERSIONS,
        namespaced=namespaced,
        short_names=short_names,
        subresources=("status",) if status else (),
        printer_columns=columns or {},
        schema=LazySchemas(KUEUE_GROUP, kind, KUEUE_VERSIONS, lambda version: _schema(kind, version)),
        deprecated_versions={"v1beta1": DEPRECATION_WARNING},
        is_crd=True,
        selectable_fields=selectable,
        convert=converter(kind),
    )
    rule, webhook = _RULES.get(kind, (None, ""))
    checked = with_checks(info, rule=rule, webhook=webhook, rule_version=HUB, schema_defaults=True)
    if kind not in DEFAULTING_WEBHOOKS:
        return checked
    by_schema = checked.default

    def default(obj: JSONDict) -> JSONDict:
        return default_workload(obj, by_schema(obj))

    return replace(checked, default=default)


def kinds() -> list[KindInfo]:
    """The records, in the order discovery lists them."""
    return [
        _kueue(
            "ResourceFlavor", "resourceflavors", namespaced=False, short_names=("flavor", "flavors", "rf"), status=False
        ),
        _kueue(
            "ClusterQueue",
            "clusterqueues",
            namespaced=False,
            short_names=("cq",),
            status=True,
            columns={
                "v1beta2": (_cohort_column(".spec.cohortName"), *_CLUSTER_QUEUE_COLUMNS),
                "v1beta1": (_cohort_column(".spec.cohort"), *_CLUSTER_QUEUE_COLUMNS),
            },
        ),
        _kueue("Cohort", "cohorts", namespaced=False, short_names=("co",), status=True),
        _kueue(
            "LocalQueue",
            "localqueues",
            namespaced=True,
            short_names=("queue", "queues", "lq"),
            status=True,
            columns=_both(
                PrinterColumn("ClusterQueue", "string", ".spec.clusterQueue", description="Backing ClusterQueue"),
                PrinterColumn(
                    "Pending Workloads",
                    "integer",
                    ".status.pendingWorkloads",
                    description="Number of pending workloads",
                ),
                PrinterColumn(
                    "Admitted Workloads",
                    "integer",
                    ".status.admittedWorkloads",
                    description="Number of admitted workloads that haven't finished yet",
                ),
            ),
        ),
        _kueue(
            "Workload",
            "workloads",
            namespaced=True,
            short_names=("kwl", "kueueworkload", "kueueworkloads"),
            status=True,
            selectable=(".status.admission.clusterQueue",),
            columns=_both(
                PrinterColumn(
                    "Queue", "string", ".spec.queueName", description="Name of the queue this workload was submitted to"
                ),
                PrinterColumn(
                    "Reserved in",
                    "string",
                    ".status.admission.clusterQueue",
                    description="Name of the ClusterQueue where the workload is reserving quota",
                ),
                PrinterColumn(
                    "Admitted",
                    "string",
                    ".status.conditions[?(@.type=='Admitted')].status",
                    description="Admission status",
                ),
                PrinterColumn(
                    "Finished",
                    "string",
                    ".status.conditions[?(@.type=='Finished')].status",
                    description="Workload finished",
                ),
                _AGE,
            ),
        ),
        _kueue(
            "WorkloadPriorityClass",
            "workloadpriorityclasses",
            namespaced=False,
            short_names=("wpc",),
            status=False,
            columns=_both(
                PrinterColumn("Value", "integer", ".value", description="Value of workloadPriorityClass's Priority"),
            ),
        ),
        _kueue("AdmissionCheck", "admissionchecks", namespaced=False, short_names=("ac",), status=True),
        _kueue("Topology", "topologies", namespaced=False, short_names=("topo",), status=False),
    ]
