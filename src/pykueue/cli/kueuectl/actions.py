"""``stop | resume workload | localqueue | clusterqueue``, ``delete workload`` and ``version``.

Owned by ``cli/kueuectl``. Stopping a workload deactivates it (``spec.active: false``, Kueue evicts
it if it was admitted); stopping a queue sets its ``stopPolicy`` to ``HoldAndDrain`` (admitted
workloads are evicted) or, with ``--keep-already-running``, ``Hold``; resuming undoes either. Each
is one merge patch. ``delete workload`` deletes the workload's job (after a confirmation unless
``--yes``), whose garbage collection removes the workload, or the workload itself when it has no
owner — Kueue's kueuectl behaviour.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pykueue.api.meta.json_types import JSONDict

from .connection import ApiFailure, Cluster, CommandError
from .options import AllNamespaces, Context, DryRun, Kubeconfig, Namespace, Output, Target, aliases, check_dry_run, run
from .printing import check_output, print_objects

__all__ = ["delete_app", "resume_app", "stop_app", "version"]

MERGE = "application/merge-patch+json"

stop_app = typer.Typer(no_args_is_help=True, help="Stop a Workload, LocalQueue or ClusterQueue.")
resume_app = typer.Typer(no_args_is_help=True, help="Resume a Workload, LocalQueue or ClusterQueue.")
delete_app = typer.Typer(no_args_is_help=True, help="Delete a Workload and its job.")

KeepRunning = Annotated[
    bool, typer.Option("--keep-already-running", help="Hold: let admitted workloads finish instead of evicting them.")
]


def _patch(target: Target, plural: str, name: str, patch: JSONDict, output: str, verb: str, namespaced: bool) -> None:
    check_output(output)
    cluster = target.cluster
    path = cluster.kueue_path(plural, name, cluster.namespace if namespaced else "")
    obj = cluster.request("PATCH", path, body=patch, content_type=MERGE)
    if output in ("yaml", "json", "name"):
        typer.echo(print_objects([obj], output, single=True), nl=False)
    else:
        typer.echo(f"{str(obj.get('kind', plural)).lower()}.kueue.x-k8s.io/{name} {verb}")


@aliases(stop_app, ("workload", "workloads", "wl"))
def stop_workload(
    name: str, output: Output = "", kubeconfig: Kubeconfig = "", context: Context = "", namespace: Namespace = ""
) -> None:
    """Deactivate a Workload (spec.active: false); an admitted one is evicted."""
    run(
        lambda: _patch(
            Target(kubeconfig, context, namespace),
            "workloads",
            name,
            {"spec": {"active": False}},
            output,
            "stopped",
            True,
        )
    )


@aliases(resume_app, ("workload", "workloads", "wl"))
def resume_workload(
    name: str, output: Output = "", kubeconfig: Kubeconfig = "", context: Context = "", namespace: Namespace = ""
) -> None:
    """Activate a Workload again (spec.active: true)."""
    run(
        lambda: _patch(
            Target(kubeconfig, context, namespace),
            "workloads",
            name,
            {"spec": {"active": True}},
            output,
            "resumed",
            True,
        )
    )


def _stop_policy(keep: bool) -> str:
    return "Hold" if keep else "HoldAndDrain"


@aliases(stop_app, ("localqueue", "localqueues", "lq"))
def stop_local_queue(
    name: str,
    keep_already_running: KeepRunning = False,
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """Stop a LocalQueue: its workloads are not admitted (and admitted ones evicted, unless kept)."""
    run(
        lambda: _patch(
            Target(kubeconfig, context, namespace),
            "localqueues",
            name,
            {"spec": {"stopPolicy": _stop_policy(keep_already_running)}},
            output,
            "stopped",
            True,
        )
    )


@aliases(resume_app, ("localqueue", "localqueues", "lq"))
def resume_local_queue(
    name: str, output: Output = "", kubeconfig: Kubeconfig = "", context: Context = "", namespace: Namespace = ""
) -> None:
    """Resume a stopped LocalQueue."""
    run(
        lambda: _patch(
            Target(kubeconfig, context, namespace),
            "localqueues",
            name,
            {"spec": {"stopPolicy": "None"}},
            output,
            "resumed",
            True,
        )
    )


@aliases(stop_app, ("clusterqueue", "clusterqueues", "cq"))
def stop_cluster_queue(
    name: str,
    keep_already_running: KeepRunning = False,
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """Put a ClusterQueue on hold (and evict its admitted workloads, unless kept)."""
    run(
        lambda: _patch(
            Target(kubeconfig, context, namespace),
            "clusterqueues",
            name,
            {"spec": {"stopPolicy": _stop_policy(keep_already_running)}},
            output,
            "stopped",
            False,
        )
    )


@aliases(resume_app, ("clusterqueue", "clusterqueues", "cq"))
def resume_cluster_queue(
    name: str, output: Output = "", kubeconfig: Kubeconfig = "", context: Context = "", namespace: Namespace = ""
) -> None:
    """Resume a stopped ClusterQueue."""
    run(
        lambda: _patch(
            Target(kubeconfig, context, namespace),
            "clusterqueues",
            name,
            {"spec": {"stopPolicy": "None"}},
            output,
            "resumed",
            False,
        )
    )


# ---------------------------------------------------------------------- delete workload


def _owner_path(owner: JSONDict, namespace: str) -> tuple[str, str]:
    """(API path, ``resource.group/name`` as printed) of an owner reference."""
    api_version = str(owner.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    plural = str(owner.get("kind", "")).lower() + "s"  # job, jobset, pod, rayjob...: regular plurals
    base = f"/apis/{api_version}" if group else f"/api/{version}"
    shown = f"{plural}.{group}" if group else plural
    return f"{base}/namespaces/{namespace}/{plural}/{owner.get('name')}", f"{shown}/{owner.get('name')}"


def _confirm(message: str) -> bool:
    typer.echo(message + "Do you want to proceed (y/n)? ", nl=False)
    answer = sys.stdin.readline().strip()
    return answer.lower() == "y"


def _delete(
    cluster: Cluster, names: list[str], everything: bool, all_namespaces: bool, yes: bool, dry_run: str
) -> bool:
    """Returns False if a named workload did not exist."""
    dry = check_dry_run(dry_run)
    if not everything and not names:
        raise CommandError("error: requires at least 1 arg(s), only received 0")
    if everything and names:
        raise CommandError("error: name cannot be provided when --all is specified")
    if all_namespaces and names:
        raise CommandError("error: a resource cannot be retrieved by name across all namespaces")
    found_all = True
    wls: list[JSONDict] = []
    if everything:
        wls = cluster.list_all(cluster.kueue_path("workloads", namespace="" if all_namespaces else cluster.namespace))
    for name in names:
        try:
            wls.append(cluster.request("GET", cluster.kueue_path("workloads", name, cluster.namespace)))
        except ApiFailure as failure:
            if failure.status != 404:
                raise
            typer.echo(str(failure), err=True)
            found_all = False
    owned = [(wl, (wl.get("metadata") or {}).get("ownerReferences") or []) for wl in wls]
    if dry == "none" and not yes and any(owners for _, owners in owned):
        lines = [
            f"  - {', '.join(_owner_path(o, wl['metadata']['namespace'])[1] for o in owners)} associated "
            f"with the {wl['metadata']['namespace']}/{wl['metadata']['name']} workload\n"
            for wl, owners in owned
            if owners
        ]
        if not _confirm("This operation will also delete:\n" + "".join(lines)):
            typer.echo("Deletion is canceled")
            return found_all
    query = {"dryRun": "All"} if dry == "server" else None
    suffix = {"server": " (server dry run)", "client": " (dry run)"}.get(dry, "")
    for wl, owners in owned:
        ns = wl["metadata"]["namespace"]
        for owner in owners:
            path, shown = _owner_path(owner, ns)
            body = {
                "kind": "DeleteOptions",
                "apiVersion": "v1",
                "propagationPolicy": "Background",
                "preconditions": {"uid": owner.get("uid")},
            }
            if dry != "client":
                try:
                    cluster.request("DELETE", path, body=body, query=query)
                except ApiFailure as failure:
                    if failure.status != 404:
                        raise
            typer.echo(f"{shown} deleted{suffix}")
        if not owners:
            if dry != "client":
                try:
                    cluster.request("DELETE", cluster.kueue_path("workloads", wl["metadata"]["name"], ns), query=query)
                except ApiFailure as failure:
                    if failure.status != 404:
                        raise
            typer.echo(f"workload.kueue.x-k8s.io/{wl['metadata']['name']} deleted{suffix}")
    return found_all


@aliases(delete_app, ("workload", "workloads", "wl"))
def delete_workload(
    names: Annotated[list[str] | None, typer.Argument(help="Workload names.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Answer yes to the confirmation.")] = False,
    everything: Annotated[bool, typer.Option("--all", help="Delete every Workload of the namespace.")] = False,
    all_namespaces: AllNamespaces = False,
    dry_run: DryRun = "none",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """Delete Workloads and their jobs (the workload then goes with its job)."""

    def body() -> bool:
        return _delete(
            Target(kubeconfig, context, namespace).cluster, list(names or []), everything, all_namespaces, yes, dry_run
        )

    if not run(body):
        raise typer.Exit(1)


# ---------------------------------------------------------------------- version


def version(kubeconfig: Kubeconfig = "", context: Context = "", namespace: Namespace = "") -> None:
    """Print the client version and the Kueue controller manager image, if one is installed."""
    from pykueue import __version__

    typer.echo(f"Client Version: {__version__}")
    try:
        cluster = Target(kubeconfig, context, "").cluster
        deployment = cluster.request(
            "GET", f"/apis/apps/v1/namespaces/{namespace or 'kueue-system'}/deployments/kueue-controller-manager"
        )
    except CommandError:  # no cluster, or no Kueue deployment (pykueue runs Kueue inside its server)
        return
    containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    for container in containers:
        if container.get("name") == "manager":
            typer.echo(f"Kueue Controller Manager Image: {container.get('image')}")
            break
