"""``list clusterqueue | localqueue | workload | resourceflavor | pods``: kueuectl's list verbs.

Owned by ``cli/kueuectl``. Columns are Kueue's (``list workload`` shows ``POSITION IN QUEUE``, the
workload's position in its LocalQueue read from the visibility API, blank when the workload is not
pending or the API is not served); ``-o wide`` adds pykueue's extra columns, ``-o yaml|json`` the
objects as served. The row builders are pure functions of the objects, tested without a cluster.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from pykueue.api.meta.clock import parse_time
from pykueue.api.meta.json_types import JSONDict

from .connection import ApiFailure, Cluster, CommandError
from .options import AllNamespaces, Context, Kubeconfig, Namespace, Output, Target, aliases, run
from .printing import (
    age,
    check_output,
    condition,
    human_duration,
    is_true,
    print_objects,
    render_table,
    workload_status,
)

__all__ = ["cluster_queue_rows", "list_app", "local_queue_rows", "pod_rows", "workload_rows"]

VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2"
STATUSES = ("all", "pending", "quotareserved", "admitted", "finished")

list_app = typer.Typer(
    no_args_is_help=True, help="List ClusterQueues, LocalQueues, Workloads, ResourceFlavors or the pods of a job."
)

Selector = Annotated[str, typer.Option("--selector", "-l", help="Label selector to filter on.")]
FieldSelector = Annotated[str, typer.Option("--field-selector", help="Field selector to filter on.")]


def _meta(obj: JSONDict) -> JSONDict:
    return dict(obj.get("metadata") or {})


def _query(selector: str, field_selector: str) -> dict[str, str]:
    out = {}
    if selector:
        out["labelSelector"] = selector
    if field_selector:
        out["fieldSelector"] = field_selector
    return out


def _emit(
    objs: list[JSONDict],
    output: str,
    headers: list[str],
    rows: list[list[Any]],
    *,
    namespace: str,
    all_namespaces: bool,
) -> None:
    if output in ("yaml", "json", "name"):
        typer.echo(print_objects(objs, output), nl=False)
        return
    if not objs:
        typer.echo(
            "No resources found"
            if all_namespaces or not namespace
            else f"No resources found in {namespace} namespace.",
            err=True,
        )
        return
    typer.echo(render_table(headers, rows), nl=False)


# ---------------------------------------------------------------------- rows (pure)


def cluster_queue_rows(cqs: list[JSONDict], wide: bool, now: float | None = None) -> tuple[list[str], list[list[Any]]]:
    headers = ["Name", "Cohort", "Pending Workloads", "Admitted Workloads", "Active", "Age"]
    if wide:
        headers += ["Queueing Strategy", "Flavors"]
    rows = []
    for cq in cqs:
        spec, status = cq.get("spec") or {}, cq.get("status") or {}
        row: list[Any] = [
            _meta(cq).get("name"),
            spec.get("cohortName") or spec.get("cohort") or "",
            status.get("pendingWorkloads", 0),
            status.get("admittedWorkloads", 0),
            str(is_true(cq, "Active")).lower(),
            age(_meta(cq).get("creationTimestamp"), now),
        ]
        if wide:
            flavors = [f["name"] for g in spec.get("resourceGroups") or [] for f in g.get("flavors") or []]
            row += [spec.get("queueingStrategy") or "BestEffortFIFO", ",".join(flavors)]
        rows.append(row)
    return headers, rows


def local_queue_rows(
    lqs: list[JSONDict], all_namespaces: bool, now: float | None = None
) -> tuple[list[str], list[list[Any]]]:
    headers = (["Namespace"] if all_namespaces else []) + [
        "Name",
        "ClusterQueue",
        "Pending Workloads",
        "Admitted Workloads",
        "Age",
    ]
    rows = []
    for lq in lqs:
        status = lq.get("status") or {}
        row: list[Any] = [_meta(lq).get("namespace")] if all_namespaces else []
        row += [
            _meta(lq).get("name"),
            (lq.get("spec") or {}).get("clusterQueue", ""),
            status.get("pendingWorkloads", 0),
            status.get("admittedWorkloads", 0),
            age(_meta(lq).get("creationTimestamp"), now),
        ]
        rows.append(row)
    return headers, rows


def _exec_time(wl: JSONDict, now: float | None) -> str:
    admitted = condition(wl, "Admitted")
    if admitted is None or admitted.get("status") != "True" or not admitted.get("lastTransitionTime"):
        return ""
    end = time.time() if now is None else now
    finished = condition(wl, "Finished")
    if finished is not None and finished.get("status") == "True" and finished.get("lastTransitionTime"):
        end = parse_time(finished["lastTransitionTime"])
    return human_duration(end - parse_time(admitted["lastTransitionTime"]))


def workload_cluster_queue(wl: JSONDict, lq_targets: dict[tuple[str, str], str]) -> str:
    admission = (wl.get("status") or {}).get("admission") or {}
    if admission.get("clusterQueue"):
        return str(admission["clusterQueue"])
    return lq_targets.get((_meta(wl).get("namespace", ""), (wl.get("spec") or {}).get("queueName", "")), "")


def workload_rows(
    wls: list[JSONDict],
    lq_targets: dict[tuple[str, str], str],
    positions: dict[tuple[str, str], JSONDict],
    all_namespaces: bool,
    wide: bool,
    now: float | None = None,
) -> tuple[list[str], list[list[Any]]]:
    headers = (["Namespace"] if all_namespaces else []) + [
        "Name",
        "Job Type",
        "Job Name",
        "LocalQueue",
        "ClusterQueue",
        "Status",
        "Position in Queue",
        "Exec Time",
        "Age",
    ]
    if wide:
        headers += ["Priority", "Position in ClusterQueue"]
    rows = []
    for wl in wls:
        meta = _meta(wl)
        owners = meta.get("ownerReferences") or []
        types = sorted({_job_type(o) for o in owners})
        pending = positions.get((meta.get("namespace", ""), meta.get("name", "")))
        row: list[Any] = [meta.get("namespace")] if all_namespaces else []
        row += [
            meta.get("name"),
            ", ".join(types),
            ", ".join(sorted({str(o.get("name")) for o in owners})),
            (wl.get("spec") or {}).get("queueName", ""),
            workload_cluster_queue(wl, lq_targets),
            workload_status(wl).upper(),
            "" if pending is None else pending["positionInLocalQueue"],
            _exec_time(wl, now),
            age(meta.get("creationTimestamp"), now),
        ]
        if wide:
            row += [
                (wl.get("spec") or {}).get("priority", 0),
                "" if pending is None else pending["positionInClusterQueue"],
            ]
        rows.append(row)
    return headers, rows


def _job_type(owner: JSONDict) -> str:
    group = str(owner.get("apiVersion") or "").rpartition("/")[0]
    text = f"{str(owner.get('kind', '')).lower()}.{group}" if group else str(owner.get("kind", "")).lower()
    return text if len(text) <= 20 else text[:20] + "..."


def pod_rows(pods: list[JSONDict], all_namespaces: bool, now: float | None = None) -> tuple[list[str], list[list[Any]]]:
    headers = (["Namespace"] if all_namespaces else []) + ["Name", "Ready", "Status", "Restarts", "Age"]
    rows = []
    for pod in pods:
        status = pod.get("status") or {}
        statuses = status.get("containerStatuses") or []
        total = len((pod.get("spec") or {}).get("containers") or statuses)
        ready = sum(1 for c in statuses if c.get("ready"))
        restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
        row: list[Any] = [_meta(pod).get("namespace")] if all_namespaces else []
        row += [
            _meta(pod).get("name"),
            f"{ready}/{total}",
            status.get("reason") or status.get("phase") or "Unknown",
            restarts,
            age(_meta(pod).get("creationTimestamp"), now),
        ]
        rows.append(row)
    return headers, rows


# ---------------------------------------------------------------------- reading the cluster


def pending_positions(cluster: Cluster, cq_names: set[str]) -> dict[tuple[str, str], JSONDict]:
    """(namespace, name) -> PendingWorkload for every pending workload of ``cq_names`` (visibility API)."""
    out: dict[tuple[str, str], JSONDict] = {}
    for cq in sorted(cq_names):
        try:
            summary = cluster.request(
                "GET", f"{VISIBILITY}/clusterqueues/{cq}/pendingworkloads", query={"limit": "100000"}
            )
        except ApiFailure as failure:
            if failure.status in (404, 503):  # not served here, or the ClusterQueue is gone
                continue
            raise
        for item in summary.get("items") or []:
            meta = item.get("metadata") or {}
            out[(meta.get("namespace", ""), meta.get("name", ""))] = item
    return out


def _scope(cluster: Cluster, plural: str, all_namespaces: bool) -> str:
    return cluster.kueue_path(plural, namespace="" if all_namespaces else cluster.namespace)


@aliases(list_app, ("clusterqueue", "clusterqueues", "cq"))
def list_cluster_queues(
    active: Annotated[str, typer.Option(help="Filter by active status: true or false.")] = "",
    selector: Selector = "",
    field_selector: FieldSelector = "",
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """List ClusterQueues."""

    def body() -> None:
        check_output(output)
        if active not in ("", "true", "false"):
            raise CommandError(f'error: invalid --active value "{active}": use true or false')
        cluster = Target(kubeconfig, context, namespace).cluster
        cqs = cluster.list_all(cluster.kueue_path("clusterqueues"), query=_query(selector, field_selector))
        if active:
            cqs = [cq for cq in cqs if str(is_true(cq, "Active")).lower() == active]
        headers, rows = cluster_queue_rows(cqs, output == "wide")
        _emit(cqs, output, headers, rows, namespace="", all_namespaces=True)

    run(body)


@aliases(list_app, ("localqueue", "localqueues", "lq"))
def list_local_queues(
    clusterqueue: Annotated[str, typer.Option("--clusterqueue", "-c", help="Only those of this ClusterQueue.")] = "",
    all_namespaces: AllNamespaces = False,
    selector: Selector = "",
    field_selector: FieldSelector = "",
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """List LocalQueues."""

    def body() -> None:
        check_output(output)
        cluster = Target(kubeconfig, context, namespace).cluster
        lqs = cluster.list_all(_scope(cluster, "localqueues", all_namespaces), query=_query(selector, field_selector))
        if clusterqueue:
            lqs = [lq for lq in lqs if (lq.get("spec") or {}).get("clusterQueue") == clusterqueue]
        headers, rows = local_queue_rows(lqs, all_namespaces)
        _emit(lqs, output, headers, rows, namespace=cluster.namespace, all_namespaces=all_namespaces)

    run(body)


@aliases(list_app, ("workload", "workloads", "wl"))
def list_workloads(
    clusterqueue: Annotated[str, typer.Option("--clusterqueue", "-c", help="Only those of this ClusterQueue.")] = "",
    localqueue: Annotated[str, typer.Option("--localqueue", "-q", help="Only those of this LocalQueue.")] = "",
    status: Annotated[
        list[str] | None, typer.Option(help="all, pending, quotareserved, admitted or finished (repeatable).")
    ] = None,
    for_object: Annotated[str, typer.Option("--for", help="Only the workload of TYPE[.GROUP]/NAME.")] = "",
    all_namespaces: AllNamespaces = False,
    selector: Selector = "",
    field_selector: FieldSelector = "",
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """List Workloads, with their position in their LocalQueue while pending."""

    def body() -> None:
        check_output(output)
        wanted = {s.lower() for s in status or []}
        bad = sorted(wanted - set(STATUSES))
        if bad:
            raise CommandError(
                f'error: invalid status value ({bad[0]}). Must be "all", "pending", '
                '"quotareserved", "admitted" or "finished"'
            )
        cluster = Target(kubeconfig, context, namespace).cluster
        wls = cluster.list_all(_scope(cluster, "workloads", all_namespaces), query=_query(selector, field_selector))
        if for_object:
            kind, _, name = _parse_for(for_object)
            wls = [
                w
                for w in wls
                if any(
                    str(o.get("kind", "")).lower() == kind and o.get("name") == name
                    for o in _meta(w).get("ownerReferences") or []
                )
            ]
        lq_targets = {
            (_meta(lq).get("namespace", ""), _meta(lq).get("name", "")): (lq.get("spec") or {}).get("clusterQueue", "")
            for lq in cluster.list_all(_scope(cluster, "localqueues", all_namespaces))
        }
        wls = [
            w
            for w in wls
            if (not localqueue or (w.get("spec") or {}).get("queueName") == localqueue)
            and (
                not clusterqueue
                or ((w.get("status") or {}).get("admission") or {}).get("clusterQueue") == clusterqueue
                or (
                    not (w.get("status") or {}).get("admission")
                    and workload_cluster_queue(w, lq_targets) == clusterqueue
                )
            )
            and (not wanted or "all" in wanted or workload_status(w) in wanted)
        ]
        pending_cqs = {workload_cluster_queue(w, lq_targets) for w in wls if workload_status(w) == "pending"}
        positions = pending_positions(cluster, {c for c in pending_cqs if c}) if output in ("", "wide") else {}
        headers, rows = workload_rows(wls, lq_targets, positions, all_namespaces, output == "wide")
        _emit(wls, output, headers, rows, namespace=cluster.namespace, all_namespaces=all_namespaces)

    run(body)


@aliases(list_app, ("resourceflavor", "resourceflavors", "rf"))
def list_resource_flavors(
    selector: Selector = "",
    field_selector: FieldSelector = "",
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """List ResourceFlavors."""

    def body() -> None:
        check_output(output)
        cluster = Target(kubeconfig, context, namespace).cluster
        rfs = cluster.list_all(cluster.kueue_path("resourceflavors"), query=_query(selector, field_selector))
        rows = [
            [
                _meta(rf).get("name"),
                ", ".join(f"{k}={v}" for k, v in sorted(((rf.get("spec") or {}).get("nodeLabels") or {}).items())),
                age(_meta(rf).get("creationTimestamp")),
            ]
            for rf in rfs
        ]
        _emit(rfs, output, ["Name", "Node Labels", "Age"], rows, namespace="", all_namespaces=True)

    run(body)


def _parse_for(value: str) -> tuple[str, str, str]:
    """``TYPE[.GROUP]/NAME`` -> (kind in lower case, group, name)."""
    kind, slash, name = value.partition("/")
    if not slash or not kind or not name:
        raise CommandError("error: --for must be in resource/name form")
    kind, _, group = kind.lower().partition(".")
    kind = {"jobs": "job", "jobsets": "jobset", "workloads": "workload", "wl": "workload"}.get(kind, kind)
    return kind, group, name


def pod_selector(cluster: Cluster, kind: str, name: str) -> str:
    """The label selector of the pods that belong to ``kind/name`` in the current namespace."""
    ns = cluster.namespace
    if kind == "workload":
        wl = cluster.request("GET", cluster.kueue_path("workloads", name, ns))
        owners = _meta(wl).get("ownerReferences") or []
        if not owners:
            raise CommandError(f'error: workload "{name}" has no owner whose pods could be listed')
        return pod_selector(cluster, str(owners[0].get("kind", "")).lower(), str(owners[0].get("name", "")))
    if kind == "job":
        job = cluster.request("GET", f"/apis/batch/v1/namespaces/{ns}/jobs/{name}")
        labels = ((job.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        if not labels:
            return f"batch.kubernetes.io/job-name={name}"
        return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    if kind == "jobset":
        cluster.request("GET", f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets/{name}")
        return f"jobset.sigs.k8s.io/jobset-name={name}"
    if kind == "pod":
        return f"kueue.x-k8s.io/pod-group-name={name}"
    raise CommandError(f"error: --for {kind}/{name}: the type must be job, jobset, workload or pod")


@aliases(list_app, ("pods", "pod", "po"))
def list_pods(
    for_object: Annotated[str, typer.Option("--for", help="TYPE[.GROUP]/NAME of the job (required).")] = "",
    all_namespaces: AllNamespaces = False,
    selector: Selector = "",
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """List the pods of a job (job, jobset, a workload's job, or a pod group)."""

    def body() -> None:
        check_output(output)
        if not for_object:
            raise CommandError('error: required flag(s) "for" not set')
        kind, _, name = _parse_for(for_object)
        cluster = Target(kubeconfig, context, namespace).cluster
        labels = pod_selector(cluster, kind, name)
        if selector:
            labels += "," + selector
        pods = cluster.list_all(f"/api/v1/namespaces/{cluster.namespace}/pods", query={"labelSelector": labels})
        headers, rows = pod_rows(pods, all_namespaces)
        _emit(pods, output, headers, rows, namespace=cluster.namespace, all_namespaces=all_namespaces)

    run(body)
