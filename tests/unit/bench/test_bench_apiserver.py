"""``pykueue bench apiserver`` at tiny sizes: the table is complete and every count adds up.

Runs the real thing (API server and reference server in subprocesses, HTTPS on loopback); no
assertion looks at a speed, only at counts, structure and the summary line.
"""

from __future__ import annotations

import asyncio
import re

import pytest
import typer
from typer.testing import CliRunner

from pykueue.bench.apiserver import Row, run_apiserver
from pykueue.cli.bench_apiserver import apiserver, parse_watchers

pytestmark = pytest.mark.timeout(300)


def test_tiny_run_counts_add_up() -> None:
    lines: list[str] = []
    result = run_apiserver(
        objects=50,
        list_objects=80,
        watchers=(2, 1, 2),
        events=20,
        concurrency=8,
        runs=2,
        duration=60.0,
        out=lines.append,
        workloads=10,
    )
    assert result.errors == 0
    assert result.dropped == 0
    names = [r.name for r in result.rows]
    assert names == [
        "creates (POST configmaps)",
        "creates (POST workloads)",
        "list 80 (full)",
        "list 80 (limit=500)",
        "watch 1 watcher (20 writes)",
        "watch 2 watchers (20 writes)",
    ]
    creates, workloads, full, paged, watch1, watch2 = result.rows
    assert [r.count for r in result.rows] == [50, 10, 2, 2, 20, 40]  # every watcher expects every write
    for row in (creates, workloads, watch1, watch2):
        assert min(row.per_s, row.ref_per_s, row.ratio) > 0
    for row in (full, paged):
        assert min(row.p50_ms, row.ref_p50_ms) > 0
        assert row.p99_ms >= row.p50_ms
    assert result.creates_per_s == creates.per_s
    assert result.watch_per_s == watch2.per_s  # phases run in ascending order; the largest is the headline
    assert min(result.creates_per_cpu_s, result.watch_per_cpu_s) > 0
    header = next(i for i, line in enumerate(lines) if line.startswith("phase"))
    table = lines[header + 1 : header + 1 + len(result.rows)]
    for line, row in zip(table, result.rows, strict=True):
        assert line.startswith(row.name)
        assert line.split()[-1] == str(row.dropped)
    summary = lines[-1]
    assert re.fullmatch(
        r"summary: creates/s \d+ \(target 2000: (met|MISSED)\), watch events/s \d+ "
        r"\(target 20000: (met|MISSED)\), dropped 0, errors 0; per server CPU-second: \d+ creates, "
        r"\d+ watch events \(load average [\d. ]+\)",
        summary,
    ), summary


def test_ratio_uses_rates_then_latencies() -> None:
    rate = Row(
        "r",
        1,
        per_s=500.0,
        p50_ms=0.0,
        p99_ms=0.0,
        server_us=100.0,
        server_cpu=0.5,
        client_cpu=0.1,
        ref_per_s=1000.0,
        ref_us=25.0,
    )
    assert (rate.ratio, rate.cpu_ratio) == (0.5, 0.25)
    latency = Row(
        "l", 1, per_s=0.0, p50_ms=40.0, p99_ms=50.0, server_us=0.0, server_cpu=0.0, client_cpu=0.0, ref_p50_ms=10.0
    )
    assert (latency.ratio, latency.cpu_ratio) == (0.25, 0.0)


def test_watchers_option_parsing() -> None:
    assert parse_watchers("1,10") == [1, 10]
    assert parse_watchers("3") == [3]
    for bad in ("", "a", "0", "1,-2"):
        with pytest.raises(typer.BadParameter):
            parse_watchers(bad)


def test_cli_command_runs_and_prints_the_summary() -> None:
    app = typer.Typer()
    app.command()(apiserver)
    result = CliRunner().invoke(
        app,
        [
            "--objects",
            "20",
            "--list-objects",
            "20",
            "--watchers",
            "1",
            "--events",
            "10",
            "--runs",
            "1",
            "--concurrency",
            "4",
            "--workloads",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1].startswith("summary: creates/s ")
    assert "watch 1 watcher (10 writes)" in result.output
    assert "creates (POST workloads)" not in result.output  # --workloads 0 skips the phase


async def test_concurrent_runs_each_index_once_with_bounded_concurrency() -> None:
    from pykueue.bench.apiserver import _concurrent

    seen: list[int] = []
    in_flight = [0, 0]  # current, peak

    async def op(i: int) -> bool:
        in_flight[0] += 1
        in_flight[1] = max(in_flight[1], in_flight[0])
        await asyncio.sleep(0)
        seen.append(i)
        in_flight[0] -= 1
        return i % 5 != 0  # every fifth fails

    _, latencies, failures = await _concurrent(23, 4, op)
    assert sorted(seen) == list(range(23))
    assert len(latencies) == 23
    assert failures == 5  # 0, 5, 10, 15, 20
    assert in_flight[1] == 4


def test_percentiles_are_in_milliseconds_from_sorted_samples() -> None:
    from pykueue.bench.apiserver import _pct

    samples = [0.004, 0.001, 0.003, 0.002]
    assert _pct(samples, 0.5) == 3.0
    assert _pct(samples, 0.99) == 4.0
    assert _pct([], 0.5) == 0.0
