"""``pykueue simulate``: what-if replays of workload traces, starting configurations, start-time estimates.

Owns the command line only (typer sub-app ``simulate_app``); the work lives in
``pykueue.simulate``. Commands:

* ``init --nodes NODES.csv [--teams N] -o OBJECTS.yaml``
* ``run --objects OBJECTS.yaml [--objects ...] --trace TRACE [--format openb|jsonl|csv|kueue]
  [--mapping MAP.yaml] [--from-cluster --kubeconfig K [--config CONFIG.yaml]] [--report DIR] [-o text|json]
  [--realtime --kubeconfig K --time-scale S] [--eviction-latency S] [--finish-latency S]``
* ``eta --kubeconfig K [-n NS] [WORKLOAD] [-o text|json] [--config CONFIG.yaml] [--annotate [--every S [--rounds N]]]``
* ``accuracy --objects OBJECTS.yaml --trace TRACE [--samples N] [--waited-only]``

Exit codes: 0 success, 2 bad input (a one-line ``error: ...`` on stderr, never a traceback),
1 the cluster could not be read.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from pykueue.cli.running_config import RunningConfig
    from pykueue.client.http import HttpClient
    from pykueue.simulate.model import Task
    from pykueue.simulate.objects import Configuration
    from pykueue.simulate.replay import Replay

__all__ = ["client_for", "fail", "simulate_app"]

simulate_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="What-if replays of workload traces on the scheduler engine, in virtual time.",
)

FORMATS = ("auto", "openb", "jsonl", "csv", "kueue")


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@simulate_app.callback()
def _group() -> None:
    """What-if replays of workload traces, starting configurations, start-time estimates."""


@simulate_app.command()
def init(
    nodes: Annotated[Path, typer.Option("--nodes", help="Node list CSV (openb: sn,cpu_milli,memory_mib,gpu,model).")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the YAML here (default: stdout).")
    ] = None,
    teams: Annotated[
        int,
        typer.Option(
            "--teams", min=1, max=1000, help="Team ClusterQueues in one cohort (1: a single shared ClusterQueue)."
        ),
    ] = 4,
    preemption: Annotated[
        bool, typer.Option("--preemption/--no-preemption", help="Reclaim lent quota and preempt lower priorities.")
    ] = True,
    fair_sharing: Annotated[
        bool,
        typer.Option(
            "--fair-sharing",
            help="Add a Kueue Configuration document turning fair sharing on (and borrowWithinCohort).",
        ),
    ] = False,
    capacity_scale: Annotated[
        float,
        typer.Option(
            "--capacity-scale",
            min=1e-6,
            help="Multiply every quota (study contention on a trace that loads its cluster lightly).",
        ),
    ] = 1.0,
    mapping: Annotated[
        Path | None, typer.Option("--mapping", help="openb mapping YAML (flavor names, GPU resource, node label).")
    ] = None,
) -> None:
    """Derive a starting configuration from a node list: one flavor per GPU model, a CPU flavor, N team
    queues in one cohort, as YAML to edit and kubectl apply."""
    from pykueue.simulate.init import init_objects, render
    from pykueue.simulate.model import SimulateError
    from pykueue.simulate.openb import load_mapping, read_nodes

    try:
        objects = init_objects(
            read_nodes(nodes),
            teams=teams,
            mapping=load_mapping(mapping),
            preemption=preemption,
            fair_sharing=fair_sharing,
            capacity_scale=capacity_scale,
        )
    except SimulateError as exc:
        raise fail(str(exc)) from None
    header = (
        f"pykueue simulate init --nodes {nodes.name} --teams {teams}"
        + ("" if preemption else " --no-preemption")
        + (" --fair-sharing" if fair_sharing else "")
        + (f" --capacity-scale {capacity_scale:g}" if capacity_scale != 1.0 else "")
    )
    if fair_sharing:
        header += (
            "\nThe first document (a Kueue Configuration) is for pykueue simulate and pykueue up --config;"
            "\nremove it before kubectl apply."
        )
    text = render(objects, header)
    if output is None:
        typer.echo(text, nl=False)
    else:
        try:
            output.write_text(text)
        except OSError as exc:
            raise fail(f"{output}: cannot write: {exc.strerror or exc}") from None
        typer.echo(f"wrote {len(objects)} objects to {output}", err=True)


def _detect(trace: Path) -> str:
    from pykueue.simulate.model import SimulateError

    suffix = trace.suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix in (".yaml", ".yml"):
        return "kueue"
    if suffix == ".csv":
        try:
            with trace.open() as handle:
                header = handle.readline()
        except OSError:
            return "openb"
        return "openb" if "gpu_spec" in header or "num_gpu" in header else "csv"
    raise SimulateError(f"{trace}: cannot tell the trace format from the name; give --format openb|jsonl|csv|kueue")


def _load_trace(
    trace: Path, fmt: str, mapping: Path | None
) -> tuple[list[Task], Configuration | None, tuple[str, ...]]:
    from pykueue.simulate import generic, kueue_trace, openb

    if not trace.is_file():
        from pykueue.simulate.model import SimulateError

        raise SimulateError(f"{trace}: no such file")
    if fmt == "openb":
        m = openb.load_mapping(mapping)
        return openb.read_pods(trace, m), None, m.queues
    if fmt == "jsonl":
        return generic.read_jsonl(trace), None, ()
    if fmt == "csv":
        return generic.read_csv(trace), None, ()
    plan = kueue_trace.load_plan(trace)
    return kueue_trace.plan_tasks(plan), kueue_trace.plan_configuration(plan, trace.stem), ()


@simulate_app.command()
def run(
    trace: Annotated[Path, typer.Option("--trace", help="The workload trace.")],
    objects: Annotated[
        list[Path] | None,
        typer.Option(
            "--objects", help="Kueue objects YAML; give it several times to compare configurations side by side."
        ),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option("--format", help="openb | jsonl | csv | kueue (generator config); default: from the file name."),
    ] = "auto",
    mapping: Annotated[
        Path | None, typer.Option("--mapping", help="openb mapping YAML (see docs/simulate.md).")
    ] = None,
    from_cluster: Annotated[
        bool,
        typer.Option(
            "--from-cluster", help="Also simulate the configuration a running cluster has (read with --kubeconfig)."
        ),
    ] = False,
    kubeconfig: Annotated[Path | None, typer.Option("--kubeconfig", help="Kubeconfig for --from-cluster.")] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="With --from-cluster: the Kueue Configuration (config.kueue.x-k8s.io) the cluster's controller "
            "runs with. Default: the one in the cluster's ConfigMap pykueue-manager-config or kueue-manager-config, "
            "else Kueue's defaults. (For --objects files, put the Configuration document in the file.)",
        ),
    ] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write CSV/JSON, plots and index.html here.")] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="text | json")] = "text",
    realtime: Annotated[
        bool,
        typer.Option(
            "--realtime",
            help="Play the trace in real time against the cluster of --kubeconfig instead (fidelity check): "
            "the objects are created there, workloads at their (scaled) submit times.",
        ),
    ] = False,
    time_scale: Annotated[
        float, typer.Option("--time-scale", min=1e-3, help="--realtime: trace seconds per real second.")
    ] = 1.0,
    eviction_latency: Annotated[
        float,
        typer.Option(
            "--eviction-latency",
            min=0.0,
            help="Replay: trace seconds a preempted workload keeps its quota before it is released "
            "(a real cluster's; --realtime measures it as measuredLatencies.evictionTraceSeconds).",
        ),
    ] = 0.0,
    finish_latency: Annotated[
        float,
        typer.Option(
            "--finish-latency",
            min=0.0,
            help="Replay: trace seconds a workload holds its quota past its runtime "
            "(a real cluster's; --realtime measures it as measuredLatencies.finishTraceSeconds).",
        ),
    ] = 0.0,
    jitter: Annotated[
        float,
        typer.Option(
            "--jitter",
            min=0.0,
            help="Replay: delay each creation by a random 0 to SECONDS trace seconds, as a real cluster's "
            "varying reaction time does (see docs/simulate.md, Fidelity); seeded, so repeatable.",
        ),
    ] = 0.0,
    timestamp_resolution: Annotated[
        float,
        typer.Option(
            "--timestamp-resolution",
            min=0.0,
            help="Replay: stamp creations (and the conditions queues order by) in steps of SECONDS trace "
            "seconds, ties in queue order broken by random (seeded) uids, as a real-time run at "
            "--time-scale S does (whole real seconds: S trace seconds; measuredLatencies.timeScale).",
        ),
    ] = 0.0,
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            min=1,
            help="Replay: with --jitter or --timestamp-resolution, replay N seeds and add each figure's "
            "mean/min/max over them (the band a real-time run is compared with); the rest of the output "
            "is seed 0's.",
        ),
    ] = 1,
) -> None:
    """Replay a trace on the scheduler engine in virtual time, for each configuration; print waits,
    utilisation, admitted / preempted / never-admitted counts and shares."""
    from pykueue.simulate.metrics import summarize
    from pykueue.simulate.model import SimulateError
    from pykueue.simulate.objects import load_objects
    from pykueue.simulate.replay import replay
    from pykueue.simulate.report import dump_json, text_table, write_report
    from pykueue.simulate.samples import spread

    if output not in ("text", "json"):
        raise fail(f"--output must be text or json, not {output!r}")
    if fmt not in FORMATS:
        raise fail(f"--format must be one of {', '.join(FORMATS[1:])}, not {fmt!r}")
    if samples > 1 and jitter == 0 and timestamp_resolution == 0:
        raise fail(
            "--samples needs --jitter or --timestamp-resolution: without them every sample replays the same instants"
        )
    if realtime and (jitter > 0 or samples > 1 or timestamp_resolution > 0):
        raise fail("--jitter, --timestamp-resolution and --samples are for the replay; a real-time run has its own")
    if config is not None and not from_cluster:
        raise fail("--config is the cluster's Configuration, for --from-cluster; put it in an --objects file instead")
    cluster_settings: RunningConfig | None = None
    try:
        fmt = _detect(trace) if fmt == "auto" else fmt
        tasks, own, queues = _load_trace(trace, fmt, mapping)
        configs = [load_objects([p]) for p in objects or ()]
        if from_cluster:
            from_the_cluster, cluster_settings = _cluster_configuration(kubeconfig, config)
            configs.append(from_the_cluster)
        if not configs and own is not None:
            configs = [own]
        if not configs:
            raise SimulateError("give --objects (or --from-cluster): the configuration(s) to simulate")
        names = [c.name for c in configs]
        if len(set(names)) != len(names):
            raise SimulateError(f"two configurations share a name ({', '.join(names)}): rename a file")
        started = time.perf_counter()
        if realtime:
            if len(configs) != 1 or from_cluster:
                raise SimulateError("--realtime plays one --objects configuration against --kubeconfig's cluster")
            replays = [_realtime(kubeconfig, configs[0], tasks, time_scale)]
            docs = [summarize(r) for r in replays]
        else:
            replays, docs = [], []
            for c in configs:
                runs = [
                    replay(
                        c,
                        tasks,
                        queues=queues,
                        eviction_s=eviction_latency,
                        finish_s=finish_latency,
                        jitter_s=jitter,
                        stamp_s=timestamp_resolution,
                        seed=seed,
                    )
                    for seed in range(samples)
                ]
                summaries = [summarize(r) for r in runs]
                doc = summaries[0]
                if samples > 1:
                    doc["samples"] = spread(summaries, jitter, timestamp_resolution)
                replays.append(runs[0])
                docs.append(doc)
    except SimulateError as exc:
        raise fail(str(exc)) from None
    if cluster_settings is not None:
        typer.echo(f"Scheduler configuration of cluster: {cluster_settings.describe()}", err=True)
        for doc in docs:
            if doc.get("configuration") == "cluster":
                doc["schedulerConfiguration"] = cluster_settings.as_json()
    typer.echo(dump_json(docs) if output == "json" else text_table(docs), nl=False)
    if report is not None:
        try:
            page = write_report(report, replays, docs)
        except OSError as exc:
            raise fail(f"{report}: cannot write the report: {exc.strerror or exc}") from None
        typer.echo(f"report: {page}", err=True)
    elapsed = time.perf_counter() - started
    typer.echo(
        f"replayed {len(tasks)} tasks x {len(configs)} configuration(s) in {elapsed:.1f} s "
        f"(engine {sum(r.engine_s for r in replays):.1f} s)",
        err=True,
    )


@simulate_app.command()
def accuracy(
    trace: Annotated[Path, typer.Option("--trace", help="The workload trace.")],
    objects: Annotated[Path, typer.Option("--objects", help="Kueue objects YAML (one configuration).")],
    fmt: Annotated[str, typer.Option("--format", help="openb | jsonl | csv | kueue; default: from the name.")] = "auto",
    mapping: Annotated[Path | None, typer.Option("--mapping", help="openb mapping YAML.")] = None,
    samples: Annotated[int, typer.Option("--samples", min=1, help="Predictions per runtime mode.")] = 200,
    waited_only: Annotated[
        bool, typer.Option("--waited-only", help="Sample only workloads that waited in the replay.")
    ] = False,
    output: Annotated[str, typer.Option("--output", "-o", help="text | json")] = "text",
) -> None:
    """Measure start-time estimates on a replay: predict at sampled submissions from what was known then
    (runtimes exact, and estimated from history) and compare with the replayed start."""
    from pykueue.simulate.accuracy import measure
    from pykueue.simulate.model import SimulateError
    from pykueue.simulate.objects import load_objects
    from pykueue.simulate.replay import replay

    if output not in ("text", "json"):
        raise fail(f"--output must be text or json, not {output!r}")
    if fmt not in FORMATS:
        raise fail(f"--format must be one of {', '.join(FORMATS[1:])}, not {fmt!r}")
    try:
        fmt = _detect(trace) if fmt == "auto" else fmt
        tasks, _, queues = _load_trace(trace, fmt, mapping)
        result = replay(load_objects([objects]), tasks, queues=queues)
        found = measure(result, samples=samples, waited_only=waited_only)
    except SimulateError as exc:
        raise fail(str(exc)) from None
    if output == "json":
        typer.echo(json.dumps([r.as_dict() for r in found], indent=2, sort_keys=True))
        return
    for r in found:
        typer.echo(
            f"{r.mode}: {r.samples} predictions, median |error| {r.median_abs_error_s:.0f} s, "
            f"{r.within_25:.1%} within ±25 %; of the {r.waited_samples} that waited: median |error| "
            f"{r.waited_median_abs_error_s:.0f} s, {r.waited_within_25:.1%} within ±25 %"
        )


def client_for(kubeconfig: Path | None) -> HttpClient:
    from pykueue.client.http import HttpClient
    from pykueue.simulate.model import SimulateError

    try:
        return HttpClient.from_kubeconfig(kubeconfig)
    except (OSError, ValueError) as exc:
        raise SimulateError(f"kubeconfig: {' '.join(str(exc).split())}") from exc


def _cluster_configuration(kubeconfig: Path | None, config: Path | None) -> tuple[Configuration, RunningConfig]:
    """The cluster's objects, with the scheduler settings its controller runs with (``config``, else
    the Configuration in its ConfigMap, else the defaults), and where those came from."""
    from pykueue.cli.running_config import ConfigLookupError, from_file, read_running_config
    from pykueue.simulate.model import SimulateError
    from pykueue.simulate.objects import read_cluster

    async def read() -> tuple[Configuration, RunningConfig]:
        client = client_for(kubeconfig)
        try:
            settings = from_file(config) if config is not None else await read_running_config(client)
            conf, _ = await read_cluster(client)
            conf.scheduler = settings.scheduler
            return conf, settings
        finally:
            await client.close()

    try:
        conf, settings = asyncio.run(read())
    except SimulateError:
        raise
    except ConfigLookupError as exc:
        raise SimulateError(str(exc)) from exc
    except Exception as exc:
        raise SimulateError(f"cannot read the cluster: {' '.join(str(exc).split()) or type(exc).__name__}") from exc
    conf.check()
    return conf, settings


def _realtime(kubeconfig: Path | None, conf: Configuration, tasks: list[Task], time_scale: float) -> Replay:
    from pykueue.simulate.model import SimulateError
    from pykueue.simulate.realtime import run_realtime

    async def play() -> Replay:
        client = client_for(kubeconfig)
        try:
            return await run_realtime(client, conf, tasks, time_scale=time_scale)
        finally:
            await client.close()

    try:
        return asyncio.run(play())
    except SimulateError:
        raise
    except Exception as exc:  # any failure to reach or drive the cluster is one line for the user
        raise SimulateError(f"real-time run: {' '.join(str(exc).split()) or type(exc).__name__}") from exc


if __name__ == "__main__":
    simulate_app(sys.argv[1:])
