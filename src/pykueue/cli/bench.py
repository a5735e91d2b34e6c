"""``pykueue bench``: benchmarks of pykueue's own parts (typer sub-app ``bench_app``).

Owns the command-line surface of the benchmarks; the measuring lives in ``pykueue.bench``. The
lead registers ``bench_app`` in ``cli/main.py``; ``python -m pykueue.cli.bench core`` works on its
own too.
"""

from __future__ import annotations

import typer

bench_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Benchmarks: scheduler engine, API server, Kueue's scheduler scenarios.",
)


@bench_app.callback()
def _group() -> None:
    """Benchmarks: scheduler engine throughput and Kueue's baseline shape."""


@bench_app.command()
def core(
    workloads: int = typer.Option(100_000, "--workloads", min=1, help="Pending 1-cpu workloads (largest run)."),
    cqs: int = typer.Option(1_000, "--cqs", min=1, help="ClusterQueues (4 cpu nominal each)."),
    cohorts: int = typer.Option(10, "--cohorts", min=1, help="Cohorts the ClusterQueues are spread over."),
    baseline_scale: float = typer.Option(
        1.0,
        "--baseline-scale",
        min=0.001,
        max=1.0,
        help="Fraction of the workload counts of Kueue's scheduler baseline to run.",
    ),
    saturated: bool = typer.Option(
        False,
        "--saturated",
        help="Instead: saturated-large's full cohorts of 100 "
        "ClusterQueues at --cqs/10, --cqs and 2x --cqs ClusterQueues; prints the cost "
        "per cycle and how it grows.",
    ),
    depth: float = typer.Option(
        1.0, "--depth", min=0.1, help="--saturated: multiply the workloads per ClusterQueue (deeper queues)."
    ),
    repeats: int = typer.Option(
        3, "--repeats", min=1, help="--saturated: runs per size; the one with the least engine CPU is reported."
    ),
) -> None:
    """Admission decisions per second of the scheduler engine at N/10 .. N pending workloads,
    the per-decision cost ratio, and Kueue's baseline shape in virtual time. The last line is
    ``decisions/s: <number>`` for the full-size run."""
    if saturated:
        from pykueue.bench.saturated import COHORT_SIZE, run_saturated

        if cqs % COHORT_SIZE or cqs < 10 * COHORT_SIZE:
            typer.echo(
                f"error: --saturated needs --cqs a multiple of {10 * COHORT_SIZE} (whole cohorts of "
                f"{COHORT_SIZE} at a tenth of it): {cqs}",
                err=True,
            )
            raise typer.Exit(2)
        run_saturated((cqs // 10, cqs, 2 * cqs), depth=depth, out=typer.echo, isolate=True, repeats=repeats)
        return
    from pykueue.bench.core import run_core

    run_core(workloads, cqs, cohorts, baseline_scale=baseline_scale, out=typer.echo, isolate=True)


def _register() -> None:
    from pykueue.cli.bench_apiserver import apiserver
    from pykueue.cli.bench_scheduler import scheduler

    bench_app.command("apiserver")(apiserver)
    bench_app.command("scheduler")(scheduler)


_register()


if __name__ == "__main__":
    bench_app()
