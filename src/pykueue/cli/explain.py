"""``pykueue explain workload NAME`` (also ``kubectl kueue explain workload NAME``).

Owned by ``cli/``. Reads the cluster's Kueue objects (namespaces, ResourceFlavors, Cohorts,
ClusterQueues, LocalQueues, every Workload) through the kubeconfig, rebuilds the scheduler engine
from them (:func:`pykueue.scheduler.explain.load_engine`) and prints its explanation
(:func:`pykueue.scheduler.explain.explain_workload`) as plain sentences, or ``-o json``. The
engine runs with the settings the cluster's controller runs with (fair sharing, admission fair
sharing): ``--config FILE``, else the Configuration in the cluster's ConfigMap, else Kueue's
defaults (:mod:`pykueue.cli.running_config`); the answer ends with which one it used
(``schedulerConfiguration`` in ``-o json``). For a pending workload it adds the estimated start:
the same objects and settings forked into a virtual-time engine and run forward
(:func:`pykueue.simulate.eta.estimate_one`, what ``simulate eta`` does), with the source of its
runtime estimate.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote

import typer

from pykueue.cli.kueuectl.connection import ApiFailure, Cluster, CommandError
from pykueue.cli.kueuectl.options import Context, Kubeconfig, Namespace, Output, Target, run

if TYPE_CHECKING:
    from pykueue.cli.running_config import RunningConfig
    from pykueue.scheduler import SchedulerConfig

__all__ = ["explain_app", "read_objects", "running_config", "start_estimate"]

_BASIS = {
    "annotation": "its annotation pykueue.io/expected-runtime",
    "maximumExecutionTime": "its spec.maximumExecutionTimeSeconds (an upper bound)",
    "history": "the median runtime of its LocalQueue's finished workloads",
    "default": "no runtime known: the median of all finished workloads, else one hour",
}

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


def running_config(cluster: Cluster) -> RunningConfig:
    """The Configuration the cluster runs with (:func:`pykueue.cli.running_config.search`, driven
    over the kueuectl connection); a found but unusable one is a :class:`CommandError`."""
    from pykueue.cli.running_config import Answer, ConfigLookupError, search

    steps = search()
    lookup = next(steps)
    while True:
        try:
            if lookup.namespace:
                path = f"/api/v1/namespaces/{quote(lookup.namespace)}/configmaps/{quote(lookup.name)}"
                answer = Answer([cluster.request("GET", path)])
            else:
                query = {"fieldSelector": f"metadata.name={lookup.name}"}
                answer = Answer(cluster.list_all("/api/v1/configmaps", query=query))
        except ApiFailure as exc:
            if exc.status not in (403, 404):
                raise
            answer = Answer(status=exc.status)
        try:
            lookup = steps.send(answer)
        except StopIteration as done:
            result: RunningConfig = done.value
            return result
        except ConfigLookupError as exc:
            raise CommandError(f"error: {exc}") from None


def start_estimate(
    objects: list[dict[str, Any]], namespace: str, name: str, now: float, scheduler: SchedulerConfig | None = None
) -> dict[str, Any] | None:
    """``estimatedStart`` of a pending workload's answer and the sentence that says it (None: no estimate)."""
    from pykueue.api.meta.clock import format_time
    from pykueue.simulate.eta import estimate_one, when_text
    from pykueue.simulate.model import SimulateError

    try:
        found = estimate_one(objects, namespace, name, now, scheduler)
    except SimulateError as exc:  # an object the engine refuses: explained without an estimate
        return {"sentence": f"No start estimate: {exc}"}
    if found is None:
        return None
    basis = _BASIS.get(found.basis, found.basis)
    runtime = f"runtime {found.runtime_s:.0f}s from {basis}"
    if found.start_s is None:
        sentence = f"Estimated start: not within 90 days of simulating the cluster forward ({runtime})"
        if found.reason:
            sentence += f"; it would still be pending: {found.reason}"
    else:
        sentence = (
            f"Estimated start: {when_text(found.start_s, now)}, from the cluster's state simulated forward "
            f"with each workload's runtime estimate ({runtime})"
        )
    return {
        "time": None if found.start_s is None else format_time(found.start_s),
        "waitSeconds": None if found.start_s is None else round(max(0.0, found.start_s - now), 1),
        "runtimeSeconds": found.runtime_s,
        "runtimeBasis": found.basis,
        "sentence": sentence,
    }


@explain_app.command("workload")
def explain_workload_command(
    name: Annotated[str, typer.Argument(help="The Workload's name.")],
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
    config: Annotated[
        str,
        typer.Option(
            "--config",
            help="The Kueue Configuration (config.kueue.x-k8s.io) the cluster's controller runs with. Default: the "
            "one in the cluster's ConfigMap pykueue-manager-config or kueue-manager-config, else Kueue's defaults.",
        ),
    ] = "",
) -> None:
    """Why is this workload pending (each flavor's numbers, who holds the quota, whether preemption
    could help, its position, the smallest change that admits it), how was it admitted, or who
    evicted it. Answered with the cluster's scheduler configuration (fair sharing, admission fair
    sharing), whose source the last line names."""
    from pykueue.cli.running_config import ConfigLookupError, from_file
    from pykueue.scheduler.explain import explain_workload, load_engine

    def body() -> None:
        if output not in ("", "json", "text"):
            raise CommandError(f'error: unknown output format "{output}": use json or leave it out')
        try:
            given = from_file(Path(config)) if config else None
        except ConfigLookupError as exc:
            raise CommandError(f"error: {exc}") from None
        cluster = Target(kubeconfig, context, namespace).cluster
        settings = given or running_config(cluster)
        objects = read_objects(cluster)
        now = float(int(time.time()))  # whole seconds, like the timestamps it is compared with
        engine, refused = load_engine(objects, now, settings.scheduler)
        try:
            answer = explain_workload(engine, objects, cluster.namespace, name)
        except KeyError:
            raise CommandError(f'Error from server (NotFound): workloads.kueue.x-k8s.io "{name}" not found') from None
        if refused:
            answer["ignoredObjects"] = refused
        if answer.get("state") == "pending" and (
            eta := start_estimate(objects, cluster.namespace, name, now, settings.scheduler)
        ):
            answer["sentences"].append(eta.pop("sentence"))
            if eta:
                answer["estimatedStart"] = eta
        answer["schedulerConfiguration"] = settings.as_json()
        if output == "json":
            typer.echo(json.dumps(answer, indent=2))
            return
        typer.echo(f"Workload {cluster.namespace}/{name}: {answer['state']}")
        for sentence in answer["sentences"]:
            typer.echo(f"  {sentence}")
        typer.echo(f"Scheduler configuration: {settings.describe()}")

    run(body)
