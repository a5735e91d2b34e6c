"""``pykueue bench core`` at tiny sizes: output format and arithmetic, never speed.

The clocks read around engine calls are injected: a ``_Ticker`` advances by a fixed power-of-two
step on every read, so every call costs exactly one step and every printed number is an exact
function of how many engine calls the run made. (The old version re-derived rates from wall
seconds printed to 3 decimals; with a few milliseconds of wall the rounding exceeded its
tolerance whenever the true value fell just above a rounding boundary, so it failed at random.)
"""

from __future__ import annotations

import gc
import re

import pytest
from typer.testing import CliRunner

from pykueue.bench.core import BASELINE_LOWER_BOUND_S, ScaleResult, _Meter, run_baseline, run_core, run_scale
from pykueue.cli.bench import bench_app

ROW = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
    r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$"
)
WALL_STEP = 2.0**-10  # exact in binary: sums of steps carry no float error
CPU_STEP = 2.0**-11


class _Ticker:
    """A clock that advances ``step`` on every read: one engine call = one step."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0

    def __call__(self) -> float:
        value = self.now
        self.now += self.step
        return value


def _row(r: ScaleResult) -> str:
    return (
        f"{r.workloads:>10} {r.decisions:>10} {r.cycles:>7} {r.wall_s:>9.3f} {r.cpu_s:>9.3f} "
        f"{r.per_second:>12.1f} {r.wall_us:>12.2f} {r.cpu_us:>16.2f} {r.schedule_cpu_us:>16.2f} "
        f"{r.upsert_cpu_us:>14.2f} {r.gc_cpu_us:>10.2f} {r.gc_outside_cpu_us:>10.2f}"
    )


def test_scale_run_charges_exactly_the_engine_calls() -> None:
    r = run_scale(120, 4, 1, wall_clock=_Ticker(WALL_STEP), cpu_clock=_Ticker(CPU_STEP))
    assert r.decisions == 120  # the stream drains: every workload is admitted once
    assert r.cycles >= 120 / (4 * 4)  # at most 4 CQs x 4 cpu admitted per cycle
    # one schedule() per cycle, then one timed call with that cycle's write-backs (the previous
    # cycle's finishes and this cycle's admitted statuses: never empty while the stream drains)
    assert r.schedule_cpu_s == r.cycles * CPU_STEP
    assert r.upsert_cpu_s == r.cycles * CPU_STEP
    assert r.cpu_s == r.schedule_cpu_s + r.upsert_cpu_s
    assert r.wall_s == 2 * r.cycles * WALL_STEP
    assert r.gc_outside_cpu_s >= 0.0
    assert r.per_second == r.decisions / r.wall_s
    assert r.cpu_per_second == r.decisions / r.cpu_s
    assert r.wall_us == r.wall_s * 1e6 / r.decisions
    assert r.cpu_us == r.schedule_cpu_us + r.upsert_cpu_us
    assert r.gc_cpu_s >= 0.0


def test_frozen_run_leaves_the_collector_unfrozen() -> None:
    before = gc.get_freeze_count()
    r = run_scale(60, 4, 1, freeze_gc=True)
    assert r.decisions == 60
    assert gc.get_freeze_count() == before


def test_meter_charges_collections_only_inside_engine_calls() -> None:
    meter = _Meter(wall=_Ticker(WALL_STEP), cpu=_Ticker(CPU_STEP))
    with meter:
        gc.collect()  # outside any call: reported apart, not charged
        assert meter.gc_cpu == 0.0
        outside = meter.gc_outside_cpu
        assert outside > 0.0
        meter.call("upsert", gc.collect)
    assert meter.gc_cpu > 0.0
    assert meter.gc_outside_cpu == outside
    assert meter._on_gc not in gc.callbacks


def test_core_report_rows_ratio_and_last_line_are_exact() -> None:
    gc.disable()  # the GC column is real process time (not an injected clock): keep it out of the way
    try:
        _report_rows_ratio_and_last_line_are_exact()
    finally:
        gc.enable()


def _report_rows_ratio_and_last_line_are_exact() -> None:
    lines: list[str] = []
    rate = run_core(
        400, 8, 2, baseline_scale=0.02, out=lines.append, wall_clock=_Ticker(WALL_STEP), cpu_clock=_Ticker(CPU_STEP)
    )
    expected = [
        run_scale(n, 8, 2, wall_clock=_Ticker(WALL_STEP), cpu_clock=_Ticker(CPU_STEP)) for n in (40, 80, 200, 400)
    ]
    rows = [line for line in lines if ROW.match(line)]
    assert rows == [_row(r) for r in expected]  # N/10, N/5, N/2, N; the same calls give the same numbers
    for r in expected:
        assert r.decisions == r.workloads
    first, last = expected[0], expected[-1]
    assert (
        f"per-decision cost ratio 400 vs 40: wall {last.wall_us / first.wall_us:.3f}, "
        f"cpu {last.cpu_us / first.cpu_us:.3f}"
    ) in lines
    assert lines[-1] == f"decisions/s: {last.per_second:.1f}"  # the unfrozen run leads
    frozen = run_scale(400, 8, 2, wall_clock=_Ticker(WALL_STEP), cpu_clock=_Ticker(CPU_STEP), freeze_gc=True)
    assert frozen.decisions == 400
    assert lines[-2] == f"decisions/s with gc.freeze() after setup: {frozen.per_second:.1f}"
    assert any(
        line.startswith("with gc.freeze() after setup") and f"cpu_us/decision {frozen.cpu_us:.2f}" in line
        for line in lines
    )
    assert rate == last.per_second
    assert (
        f"decisions per cpu second (400 workloads; wall also counts other processes): "
        f"{last.cpu_per_second:.1f}" in lines
    )


def test_core_command_output_format() -> None:
    result = CliRunner().invoke(
        bench_app, ["core", "--workloads", "400", "--cqs", "8", "--cohorts", "2", "--baseline-scale", "0.02"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert re.fullmatch(r"decisions/s: \d+\.\d", lines[-1])
    assert re.fullmatch(r"decisions/s with gc.freeze\(\) after setup: \d+\.\d", lines[-2])
    table = [m.groups() for m in map(ROW.match, lines) if m]
    assert [int(r[0]) for r in table] == [40, 80, 200, 400]
    assert all(int(r[1]) == int(r[0]) for r in table)
    assert re.search(r"per-decision cost ratio 400 vs 40: wall [\d.]+, cpu [\d.]+", result.output)
    assert "baseline shape (Kueue's scheduler baseline, scale 0.02): 5 cohorts x 6 CQs, 300 workloads" in result.output
    for cls in ("small", "medium", "large"):
        assert re.search(rf"class {cls}: avg time to admission \d+ ms", result.output)


@pytest.mark.slow
def test_baseline_never_beats_the_theoretical_lower_bound() -> None:
    """The lower bound: no schedule finishes the full baseline before 66.84 s; every workload gets admitted."""
    b = run_baseline(scale=1.0)
    assert b.workloads == 15_000
    assert b.admissions >= b.workloads
    assert b.makespan_s >= BASELINE_LOWER_BOUND_S
    assert 0 < b.cq_usage_pct <= 100.0
