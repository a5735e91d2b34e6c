"""``pykueue bench scheduler``: Kueue's scheduler performance test run on pykueue.

Owns the command line only; the measuring lives in ``pykueue.bench.scheduler``. The lead registers
:func:`scheduler` on the ``bench`` sub-app; ``python -m pykueue.cli.bench_scheduler ...`` runs it
alone. Exit codes: 0 success, 1 a range of ``--check`` violated (or the real-time run failed),
2 bad input (config, rangespec, options).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pykueue.cli.controller_process import mode_error

if TYPE_CHECKING:
    from pykueue.bench.scheduler.config import GeneratorConfig
    from pykueue.scheduler import SchedulerConfig

__all__ = ["CONFIGS", "resolve", "scheduler"]

CONFIGS = Path(__file__).resolve().parent.parent / "bench" / "configs"


def resolve(value: str, file_name: str) -> Path:
    """A path, or a packaged scenario: ``baseline`` (its ``file_name``) or ``baseline/kueue-rangespec.yaml``."""
    path = Path(value)
    if path.exists():
        return path
    packaged = CONFIGS / value
    if packaged.is_file():
        return packaged
    if "/" not in value and not value.endswith(".yaml"):
        return packaged / file_name
    return path


def scheduler(
    config: Annotated[
        str,
        typer.Option(
            "--config",
            "-c",
            help="Generator YAML (Kueue's format) or a packaged "
            "scenario name: baseline, large-scale, saturated-large, "
            "saturated-large-full, smoke.",
        ),
    ] = "baseline",
    virtual_time: Annotated[
        bool,
        typer.Option(
            "--virtual-time/--real-time",
            help="Drive the scheduler engine in "
            "virtual time (fast, deterministic) instead of a real pykueue up "
            "over HTTP.",
        ),
    ] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write DIR/summary.yaml here.")] = None,
    check: Annotated[
        str | None,
        typer.Option(
            "--check",
            help="Kueue rangespec YAML (or scenario name) to check the run against; exit 1 naming each violated range.",
        ),
    ] = None,
    summary_file: Annotated[
        Path | None, typer.Option("--summary", help="Check this existing summary.yaml instead of running.")
    ] = None,
    scale: Annotated[float, typer.Option("--scale", min=0.001, help="Multiply every workload set's count.")] = 1.0,
    growth: Annotated[
        bool,
        typer.Option(
            "--growth", help="Run at 1x, 2x and 4x --scale (virtual time) and print cost per workload as ratios."
        ),
    ] = False,
    heads_per_cycle: Annotated[
        int,
        typer.Option(
            "--heads-per-cycle",
            min=0,
            help="0 = pykueue (many heads per ClusterQueue per cycle), 1 = Kueue's one head.",
        ),
    ] = 0,
    kubeconfig: Annotated[
        Path | None,
        typer.Option("--kubeconfig", help="Real time: use this running cluster instead of starting pykueue up."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1.0, help="Real time: give up after this many seconds.")
    ] = 600.0,
    controllers: Annotated[
        str,
        typer.Option(
            "--controllers",
            help="Real time: start pykueue up with its "
            "controllers in a second process ('process', like Kueue's "
            "controller-manager) or in the server's ('in-process').",
        ),
    ] = "in-process",
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="Real time: a live line "
            "(admitted / pending / finished / elapsed) on stderr; default: "
            "only when stderr is a terminal.",
        ),
    ] = None,
    finish_with: Annotated[
        str,
        typer.Option(
            "--finish-with",
            help="Real time: how the runner marks a workload "
            "Finished: 'patch' (a JSON patch to /status) or 'apply' (server-side "
            "apply to /status with the resourceVersion, as Kueue's runner does).",
        ),
    ] = "patch",
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile",
            help="Run under cProfile (CPU time) and write its stats to this file: "
            "in virtual time the simulation (the top functions are printed), in real time the "
            "pykueue up server the benchmark starts (its own process: API server, store and "
            "in-process controllers; roughly doubles the server's CPU per request).",
        ),
    ] = None,
) -> None:
    """Kueue's scheduler benchmark (generator, runner, recorder, checker) on pykueue; prints the wall time
    beside the theoretical lower bound and writes Kueue's summary.yaml fields."""
    from pykueue.bench.scheduler import ConfigError, check_summary, load_config, load_rangespec, load_summary
    from pykueue.scheduler import SchedulerConfig

    if (problem := mode_error(controllers)) is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    if finish_with not in ("patch", "apply"):
        typer.echo(f"error: --finish-with must be 'patch' or 'apply', not {finish_with!r}", err=True)
        raise typer.Exit(2)
    try:
        spec = load_rangespec(resolve(check, "rangespec.yaml")) if check else None
        if summary_file is not None:
            summary = load_summary(summary_file)
        else:
            generator = load_config(resolve(config, "generator.yaml"), scale=scale)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if summary_file is None:
        sched_config = SchedulerConfig(heads_per_cycle=heads_per_cycle)
        if growth:
            if not virtual_time:
                typer.echo("error: --growth runs in virtual time only; add --virtual-time", err=True)
                raise typer.Exit(2)
            from pykueue.bench.scheduler.growth import run_growth

            run_growth(generator, sched_config, typer.echo)
            return
        if profile is not None and not virtual_time and kubeconfig is not None:
            typer.echo("error: --profile profiles the pykueue up this command starts, not a running cluster", err=True)
            raise typer.Exit(2)
        summary = _run(
            generator,
            sched_config,
            virtual_time=virtual_time,
            kubeconfig=kubeconfig,
            timeout=timeout,
            controllers=controllers,
            progress=progress,
            finish_with=finish_with,
            profile=profile,
        )
        if output is not None:
            from pykueue.bench.scheduler.report import write_summary

            typer.echo(f"summary: {write_summary(summary, output)}")
    if spec is not None:
        problems = check_summary(summary, spec)
        for problem in problems:
            typer.echo(f"FAIL {problem}", err=True)
        if problems:
            raise typer.Exit(1)
        typer.echo(f"check: all ranges of {check} hold")


def _run(
    generator: GeneratorConfig,
    sched_config: SchedulerConfig,
    *,
    virtual_time: bool,
    kubeconfig: Path | None,
    timeout: float,
    controllers: str = "in-process",
    progress: bool | None = None,
    finish_with: str = "patch",
    profile: Path | None = None,
) -> dict[str, Any]:
    from pykueue.bench.scheduler import expand, simulate, theoretical_bound
    from pykueue.bench.scheduler.report import RunStats, format_report, summarize
    from pykueue.cli.cpu_profile import profiled

    plan = expand(generator)
    bound = theoretical_bound(plan)
    typer.echo(
        f"{len(plan.cluster_queues)} ClusterQueues in {len(plan.cohorts)} cohorts, {len(plan.workloads)} "
        f"workloads; theoretical bound {bound.ms / 1000:.2f} s"
    )
    if virtual_time:
        r = (
            simulate(plan, sched_config)
            if profile is None
            else profiled(profile, lambda: simulate(plan, sched_config), typer.echo)
        )
        stats = RunStats(
            "virtual-time",
            r.wall_ms,
            r.run_wall_s,
            r.run_cpu_s,
            r.admissions,
            r.preemptions,
            r.cycles,
            r.engine_wall_s,
            r.engine_cpu_s,
        )
        summary = summarize(r.recorder, bound, stats)
    else:
        import sys

        from pykueue.bench.scheduler.progress import wanted
        from pykueue.bench.scheduler.realtime import RealtimeError, run_realtime

        try:
            summary = run_realtime(
                plan,
                bound,
                kubeconfig=kubeconfig,
                timeout=timeout,
                out=typer.echo,
                controllers=controllers,
                progress=wanted(progress, sys.stderr),
                finish_with=finish_with,
                server_profile=profile,
            )
        except RealtimeError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
    format_report(summary, typer.echo)
    return summary


if __name__ == "__main__":
    typer.run(scheduler)
