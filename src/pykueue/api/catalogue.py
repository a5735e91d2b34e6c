"""Registers every served kind with :mod:`pykueue.api.kinds`.

Owns the *identity* of each kind (group, versions, names, scope, subresources, printer columns)
and wires in the per-kind hooks (schemas, defaulting, validation, conversion) that live in the
sibling modules. Imported lazily by ``kinds._ensure_loaded``; the API server and the CRD renderer
read the records through ``all_kinds()`` / ``find_kind()``.

Invariant: every record is registered exactly once, storage version first; Kueue's kinds serve
v1beta2 (storage) and v1beta1 (deprecated, with Kueue's warning text).
"""

from __future__ import annotations

from collections.abc import Callable

from pykueue.api import builtin_kinds, hooks
from pykueue.api.kinds import FieldError, JSONDict, KindInfo, PrinterColumn, register
from pykueue.api.schemas import LazySchemas

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSIONS = ("v1beta2", "v1beta1")
DEPRECATION_WARNING = "This version is deprecated. Use v1beta2 instead."

_AGE = PrinterColumn("Age", "date", ".metadata.creationTimestamp")


def _both(*columns: PrinterColumn, v1beta1: tuple[PrinterColumn, ...] | None = None,
          ) -> dict[str, tuple[PrinterColumn, ...]]:
    return {"v1beta2": columns, "v1beta1": columns if v1beta1 is None else v1beta1}


def _kueue(kind: str, plural: str, *, namespaced: bool, short_names: tuple[str, ...],
           status: bool, columns: dict[str, tuple[PrinterColumn, ...]] | None = None,
           selectable: tuple[str, ...] = ()) -> KindInfo:
    validate: Callable[[JSONDict, JSONDict | None], list[FieldError]] = hooks.validator(KUEUE_GROUP, kind)
    return register(KindInfo(
        group=KUEUE_GROUP, kind=kind, plural=plural, singular=kind.lower(), versions=KUEUE_VERSIONS,
        namespaced=namespaced, short_names=short_names, subresources=("status",) if status else (),
        printer_columns=columns or {},
        schema=LazySchemas(KUEUE_GROUP, kind, KUEUE_VERSIONS),
        deprecated_versions={"v1beta1": DEPRECATION_WARNING}, is_crd=True,
        selectable_fields=selectable, default=hooks.defaulter(KUEUE_GROUP, kind),
        validate=validate, convert=hooks.converter(KUEUE_GROUP, kind),
    ))


_kueue("ResourceFlavor", "resourceflavors", namespaced=False, short_names=("flavor", "flavors", "rf"),
       status=False)
_kueue("ClusterQueue", "clusterqueues", namespaced=False, short_names=("cq",), status=True,
       columns=_both(
           PrinterColumn("Cohort", "string", ".spec.cohortName", description="Cohort that this ClusterQueue "
                         "belongs to"),
           PrinterColumn("Strategy", "string", ".spec.queueingStrategy", priority=1,
                         description="The queueing strategy used to prioritize workloads"),
           PrinterColumn("Pending Workloads", "integer", ".status.pendingWorkloads",
                         description="Number of pending workloads"),
           PrinterColumn("Admitted Workloads", "integer", ".status.admittedWorkloads", priority=1,
                         description="Number of admitted workloads that haven't finished yet"),
           v1beta1=(
               PrinterColumn("Cohort", "string", ".spec.cohort",
                             description="Cohort that this ClusterQueue belongs to"),
               PrinterColumn("Strategy", "string", ".spec.queueingStrategy", priority=1,
                             description="The queueing strategy used to prioritize workloads"),
               PrinterColumn("Pending Workloads", "integer", ".status.pendingWorkloads",
                             description="Number of pending workloads"),
               PrinterColumn("Admitted Workloads", "integer", ".status.admittedWorkloads", priority=1,
                             description="Number of admitted workloads that haven't finished yet"),
           )))
_kueue("Cohort", "cohorts", namespaced=False, short_names=("co",), status=True)
_kueue("LocalQueue", "localqueues", namespaced=True, short_names=("queue", "queues", "lq"), status=True,
       columns=_both(
           PrinterColumn("ClusterQueue", "string", ".spec.clusterQueue",
                         description="Backing ClusterQueue"),
           PrinterColumn("Pending Workloads", "integer", ".status.pendingWorkloads",
                         description="Number of pending workloads"),
           PrinterColumn("Admitted Workloads", "integer", ".status.admittedWorkloads",
                         description="Number of admitted workloads that haven't finished yet"),
       ))
_kueue("Workload", "workloads", namespaced=True, short_names=("kwl", "kueueworkload", "kueueworkloads"),
       status=True, selectable=(".status.admission.clusterQueue",),
       columns=_both(
           PrinterColumn("Queue", "string", ".spec.queueName", description="Name of the queue this workload "
                         "was submitted to"),
           PrinterColumn("Reserved in", "string", ".status.admission.clusterQueue",
                         description="Name of the ClusterQueue where the workload is reserving quota"),
           PrinterColumn("Admitted", "string", ".status.conditions[?(@.type=='Admitted')].status",
                         description="Admission status"),
           PrinterColumn("Finished", "string", ".status.conditions[?(@.type=='Finished')].status",
                         description="Workload finished"),
           _AGE,
       ))
_kueue("WorkloadPriorityClass", "workloadpriorityclasses", namespaced=False, short_names=("wpc",),
       status=False, columns=_both(
           PrinterColumn("Value", "integer", ".value",
                         description="Value of workloadPriorityClass's Priority"),
       ))
_kueue("AdmissionCheck", "admissionchecks", namespaced=False, short_names=("ac",), status=True)
_kueue("Topology", "topologies", namespaced=False, short_names=("topo",), status=False)


def _builtin(group: str, version: str, kind: str, plural: str, *, namespaced: bool,
             short_names: tuple[str, ...] = (), subresources: tuple[str, ...] = (),
             categories: tuple[str, ...] = (), is_crd: bool = False,
             columns: tuple[PrinterColumn, ...] = ()) -> KindInfo:
    return register(KindInfo(
        group=group, kind=kind, plural=plural, singular=kind.lower(), versions=(version,),
        namespaced=namespaced, short_names=short_names, categories=categories,
        subresources=subresources, schema=LazySchemas(group, kind, (version,)), is_crd=is_crd,
        printer_columns={version: columns} if columns else {},
        strategic_merge_keys=hooks.merge_keys(group, kind),
        default=hooks.defaulter(group, kind), validate=hooks.validator(group, kind),
        convert=hooks.converter(group, kind),
    ))


_builtin("", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",),
         subresources=("status",))
_builtin("", "v1", "Pod", "pods", namespaced=True, short_names=("po",), subresources=("status", "log"),
         categories=("all",))
_builtin("", "v1", "Node", "nodes", namespaced=False, short_names=("no",), subresources=("status",))
_builtin("", "v1", "Event", "events", namespaced=True, short_names=("ev",))
_builtin("", "v1", "ConfigMap", "configmaps", namespaced=True, short_names=("cm",))
_builtin("", "v1", "Secret", "secrets", namespaced=True)
_builtin("batch", "v1", "Job", "jobs", namespaced=True, subresources=("status",), categories=("all",))
_builtin("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", namespaced=False,
         short_names=("pc",))
_builtin("coordination.k8s.io", "v1", "Lease", "leases", namespaced=True)
_builtin("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", namespaced=True, subresources=("status",),
         is_crd=True, columns=(
             PrinterColumn("TerminalState", "string", ".status.terminalState",
                           description="Final state of JobSet"),
             PrinterColumn("Restarts", "string", ".status.restarts", description="Number of restarts"),
             PrinterColumn("Completed", "string", ".status.conditions[?(@.type==\"Completed\")].status",
                           description="JobSet completed"),
             PrinterColumn("Suspended", "string", ".spec.suspend", description="JobSet suspended"),
             _AGE,
         ))
for _info in builtin_kinds.kinds():
    register(_info)
