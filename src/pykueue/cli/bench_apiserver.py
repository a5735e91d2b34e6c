"""``pykueue bench apiserver``: the embedded API server's HTTP throughput next to raw aiohttp.

Owns the command-line surface only; the measuring lives in :mod:`pykueue.bench.apiserver`. The lead
registers :func:`apiserver` on the ``bench`` sub-app (``bench_app.command()(apiserver)``);
``python -m pykueue.cli.bench_apiserver`` runs it on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pykueue.cli.option_checks import durability_error

__all__ = ["apiserver", "parse_watchers"]


def parse_watchers(value: str) -> list[int]:
    """``"1,10"`` -> ``[1, 10]``: one watch phase per count, in order."""
    try:
        counts = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated watcher counts, got {value!r}") from None
    if not counts or any(c < 1 for c in counts):
        raise typer.BadParameter(f"watcher counts must be positive, got {value!r}")
    return counts


def apiserver(
    objects: int = typer.Option(5_000, "--objects", min=1, help="ConfigMaps created by concurrent POSTs."),
    workloads: int = typer.Option(
        1_000, "--workloads", min=0, help="Workloads created by concurrent POSTs (a CRD create); 0 skips."
    ),
    list_objects: int = typer.Option(
        10_000, "--list-objects", min=1, help="Objects in the listed namespace (topped up after the creates)."
    ),
    watchers: str = typer.Option("1,10", "--watchers", help="Watcher counts, one watch phase each: '1,10'."),
    events: int = typer.Option(
        2_000, "--events", min=2, help="Writes per watch phase (half creates, half merge patches)."
    ),
    concurrency: int = typer.Option(32, "--concurrency", min=1, help="Requests in flight."),
    runs: int = typer.Option(5, "--runs", min=1, help="List traversals per list phase (p50/p99 over them)."),
    duration: float = typer.Option(
        60.0,
        "--duration",
        min=1.0,
        help="Seconds a watcher may wait for its events; what has not arrived by then counts as dropped.",
    ),
    durability: Annotated[
        str, typer.Option(help="The API server's store durability, as pykueue up's: 'fsync' or 'os'.")
    ] = "fsync",
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile", help="Run the API server under cProfile (CPU time) and write its stats to this file."
        ),
    ] = None,
) -> None:
    """Creates/s, list latency and watch events/s of the embedded API server over HTTPS, each next to a
    raw aiohttp handler doing the same work. The last line is ``summary: ...`` with the targets; the exit
    status is 1 if a request failed or a watch event was dropped, 2 if a server failed."""
    import aiohttp

    from pykueue.bench.apiserver import run_apiserver

    if (problem := durability_error(durability)) is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    counts = parse_watchers(watchers)
    try:
        result = run_apiserver(
            objects,
            list_objects,
            counts,
            events,
            concurrency,
            runs,
            duration,
            profile,
            out=typer.echo,
            workloads=workloads,
            durability=durability,
        )
    except (aiohttp.ClientError, RuntimeError, TimeoutError, OSError) as err:
        # a server that died or never came up: one line, not a stack trace
        typer.echo(f"bench apiserver failed: {type(err).__name__}: {err}", err=True)
        raise typer.Exit(2) from None
    if result.errors or result.dropped:
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(apiserver)
