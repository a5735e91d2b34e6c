"""``pykueue simulate eta``: estimated start of pending workloads, read from a running cluster.

Owns the command line of the estimate (registered on ``simulate_app`` by ``cli/simulate.py``); the
estimating lives in ``pykueue.simulate.eta``. Exit codes: 0 success, 1 the cluster could not be
read, its Configuration is unusable or the named workload is not pending, 2 bad options (an
unusable ``--config`` file included). ``--annotate --every S`` keeps the annotations fresh: a round
every ``S`` seconds (``--rounds N`` stops after N).

The forward run uses the scheduler settings the cluster runs with: ``--config FILE``, else the
Configuration in the cluster's ConfigMap, else Kueue's defaults (:mod:`pykueue.cli.running_config`).
Which one is said on stderr (``Scheduler configuration: ...``) and, with ``-o json``, in each
estimate's ``schedulerConfiguration``.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pykueue.cli.simulate import client_for, fail

if TYPE_CHECKING:
    from pykueue.cli.running_config import RunningConfig
    from pykueue.simulate.eta import Estimate

__all__ = ["eta"]


def eta(
    workload: Annotated[str | None, typer.Argument(help="Only this Workload.")] = None,
    kubeconfig: Annotated[
        Path | None, typer.Option("--kubeconfig", help="Cluster to read (default: $KUBECONFIG or ~/.kube/config).")
    ] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="Only this namespace.")] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="text | json")] = "text",
    annotate: Annotated[
        bool,
        typer.Option(
            "--annotate",
            help="Also write each estimate on its Workload (annotations pykueue.io/estimated-start and "
            "pykueue.io/estimated-start-basis), where kubectl describe shows it.",
        ),
    ] = False,
    every: Annotated[
        float | None,
        typer.Option(
            "--every",
            min=1.0,
            help="With --annotate: keep the annotations fresh, re-estimating every this many seconds (and "
            "removing them from workloads no longer pending) until interrupted or --rounds are done.",
        ),
    ] = None,
    rounds: Annotated[int, typer.Option("--rounds", min=0, help="With --every: stop after this many (0: never).")] = 0,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="The Kueue Configuration (config.kueue.x-k8s.io) the cluster's controller runs with. Default: the "
            "one in the cluster's ConfigMap pykueue-manager-config or kueue-manager-config, else Kueue's defaults.",
        ),
    ] = None,
) -> None:
    """Estimated start of pending workloads: the live state forked and simulated forward with runtime
    estimates (annotation pykueue.io/expected-runtime, maximumExecutionTimeSeconds, or the LocalQueue's
    observed runtimes), run with the scheduler configuration the cluster runs with (fair sharing,
    admission fair sharing; see --config)."""
    from pykueue.cli.running_config import ConfigLookupError, from_file, read_running_config
    from pykueue.simulate.eta import annotate_estimates, cluster_estimates
    from pykueue.simulate.eta import when_text as _when
    from pykueue.simulate.model import SimulateError

    if output not in ("text", "json"):
        raise fail(f"--output must be text or json, not {output!r}")
    try:
        given = from_file(config) if config is not None else None
    except ConfigLookupError as exc:
        raise fail(str(exc)) from None
    if every is not None:
        if not annotate:
            raise fail("--every keeps the annotations fresh: give --annotate too")
        _keep_fresh(kubeconfig, every, rounds, given)
        return
    now = float(int(time.time()))  # whole seconds, like the timestamps it is compared with

    def wanted(e: Estimate) -> bool:
        return (namespace is None or e.namespace == namespace) and (workload is None or e.name == workload)

    async def read() -> tuple[list[Estimate], RunningConfig]:
        client = client_for(kubeconfig)
        try:
            settings = given or await read_running_config(client)
            found = [e for e in await cluster_estimates(client, now, settings.scheduler) if wanted(e)]
            if annotate:
                await annotate_estimates(client, found)
            return found, settings
        finally:
            await client.close()

    try:
        chosen, settings = asyncio.run(read())
    except SimulateError as exc:
        raise fail(str(exc)) from None
    except ConfigLookupError as exc:  # the cluster's Configuration is unusable: never a silent fall-back
        raise fail(str(exc), 1) from None
    except Exception as exc:  # any failure to reach the cluster is one line for the user
        raise fail(f"cannot read the cluster: {' '.join(str(exc).split()) or type(exc).__name__}", 1) from None
    if workload is not None and not chosen:
        raise fail(f"no pending workload {workload!r}" + (f" in namespace {namespace}" if namespace else ""), 1)
    typer.echo(f"Scheduler configuration: {settings.describe()}", err=True)
    if output == "json":
        from pykueue.api.meta.clock import format_time

        typer.echo(
            json.dumps(
                [
                    {
                        "namespace": e.namespace,
                        "name": e.name,
                        "queueName": e.queue,
                        "clusterQueue": e.cluster_queue,
                        "estimatedStart": None if e.start_s is None else format_time(e.start_s),
                        "estimatedWaitSeconds": None if e.start_s is None else round(max(0.0, e.start_s - now), 1),
                        "runtimeSeconds": e.runtime_s,
                        "runtimeBasis": e.basis,
                        "reason": e.reason,
                        "schedulerConfiguration": settings.as_json(),
                    }
                    for e in chosen
                ],
                indent=2,
            )
        )
        return
    if not chosen:
        typer.echo("No pending workloads.", err=True)
        return
    rows = [("NAMESPACE", "NAME", "QUEUE", "CLUSTERQUEUE", "ESTIMATED START", "RUNTIME", "BASIS")]
    rows += [
        (
            e.namespace,
            e.name,
            e.queue,
            e.cluster_queue or "-",
            _when(e.start_s, now),
            f"{e.runtime_s:.0f}s",
            e.basis,
        )
        for e in chosen
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        typer.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    unplaced = [e for e in chosen if e.start_s is None and e.reason]
    for e in unplaced:
        typer.echo(f"{e.namespace}/{e.name}: {e.reason}", err=True)


def _keep_fresh(kubeconfig: Path | None, every: float, rounds: int, given: RunningConfig | None) -> None:
    """``--annotate --every``: one line per round; a cluster that cannot be read ends it (exit 1). The
    cluster's Configuration is looked up each round (a restarted controller may run another one) and
    said on stderr whenever it changes."""
    from pykueue.api.meta.clock import format_time
    from pykueue.cli.running_config import ConfigLookupError, read_running_config
    from pykueue.simulate.eta import refresh_annotations
    from pykueue.simulate.model import SimulateError

    async def loop() -> None:
        client = client_for(kubeconfig)
        said = ""
        try:
            done = 0
            while True:
                started = time.monotonic()
                now = float(int(time.time()))
                settings = given or await read_running_config(client)
                if settings.describe() != said:
                    said = settings.describe()
                    typer.echo(f"Scheduler configuration: {said}", err=True)
                found, cleared = await refresh_annotations(client, now, settings.scheduler)
                typer.echo(f"{format_time(now)} estimated {len(found)} pending workload(s), cleared {cleared}")
                done += 1
                if rounds and done >= rounds:
                    return
                await asyncio.sleep(max(0.0, every - (time.monotonic() - started)))
        finally:
            await client.close()

    try:
        asyncio.run(loop())
    except KeyboardInterrupt:
        return
    except SimulateError as exc:
        raise fail(str(exc)) from None
    except ConfigLookupError as exc:
        raise fail(str(exc), 1) from None
    except Exception as exc:  # any failure to reach the cluster is one line for the user
        raise fail(f"cannot read the cluster: {' '.join(str(exc).split()) or type(exc).__name__}", 1) from None
