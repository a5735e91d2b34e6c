"""``pykueue explain workload NAME`` (also ``kubectl kueue explain workload NAME``).

Owned by ``cli/``. Reads the cluster's Kueue objects (namespaces, ResourceFlavors, Cohorts,
ClusterQueues, LocalQueues, every Workload) through the kubeconfig, rebuilds the scheduler engine
from them (:func:`pykueue.scheduler.explain.load_engine`) and prints its explanation
(:func:`pykueue.scheduler.explain.explain_workload`) as plain sentences, or ``-o json``. The
engine runs with Kueue's default configuration: a cluster configured for fair sharing or with
other scheduler options is explained as if it had the defaults (docs/differences.md).
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer

from pykueue.cli.kueuectl.connection import Cluster, CommandError
from pykueue.cli.kueuectl.options import Context, Kubeconfig, Namespace, Output, Target, run

__all__ = ["explain_app", "read_objects"]

explain_app = typer.Typer(no_args_is_help=True, help="Explain why a workload is pending, admitted or evicted.")


def read_objects(cluster: Cluster) -> list[dict[str, Any]]:
    """Everything the engine needs, each item with its ``kind`` (lists may leave it out)."""
    sources = [
        ("Namespace", "/api/v1/namespaces"),
        ("ResourceFlavor", cluster.kueue_path("resourceflavors")),
        ("Cohort", cluster.kueue_path("cohorts")),
        ("ClusterQueue", cluster.kueue_path("clusterqueues")),
        ("LocalQueue", cluster.kueue_path("localqueues")),
        ("Workload", cluster.kueue_path("workloads")),
    ]
    out: list[dict[str, Any]] = []
    for kind, path in sources:
        for item in cluster.list_all(path):
            out.append({**item, "kind": kind})
    return out


@explain_app.command("workload")
def explain_workload_command(
    name: Annotated[str, typer.Argument(help="The Workload's name.")],
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """Why is this workload pending (each flavor's numbers, who holds the quota, whether preemption
    could help, its position, the smallest change that admits it), how was it admitted, or who
    evicted it."""
    from pykueue.scheduler.explain import explain_workload, load_engine

    def body() -> None:
        if output not in ("", "json", "text"):
            raise CommandError(f'error: unknown output format "{output}": use json or leave it out')
        cluster = Target(kubeconfig, context, namespace).cluster
        objects = read_objects(cluster)
        engine, refused = load_engine(objects, time.time())
        try:
            answer = explain_workload(engine, objects, cluster.namespace, name)
        except KeyError:
            raise CommandError(f'Error from server (NotFound): workloads.kueue.x-k8s.io "{name}" not found') from None
        if refused:
            answer["ignoredObjects"] = refused
        if output == "json":
            typer.echo(json.dumps(answer, indent=2))
            return
        typer.echo(f"Workload {cluster.namespace}/{name}: {answer['state']}")
        for sentence in answer["sentences"]:
            typer.echo(f"  {sentence}")

    run(body)
