"""``pykueue bench core`` at tiny sizes: output format and arithmetic, never speed."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from pykueue.bench.core import BASELINE_LOWER_BOUND_S, run_baseline, run_scale
from pykueue.cli.bench import bench_app

ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$")


def test_core_command_output_format_and_arithmetic() -> None:
    result = CliRunner().invoke(bench_app, ["core", "--workloads", "400", "--cqs", "8", "--cohorts", "2",
                                            "--baseline-scale", "0.02"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert re.fullmatch(r"decisions/s: \d+\.\d", lines[-1])
    rows = [ROW.match(line) for line in lines]
    table = [[float(x) for x in m.groups()] for m in rows if m]
    assert [int(r[0]) for r in table] == [40, 80, 200, 400]  # N/10, N/5, N/2, N
    for n, decisions, cycles, wall, _cpu, per_s, us, _cpu_us in table:
        assert decisions == n  # the stream drains: every workload gets admitted once
        assert cycles >= n / (8 * 4)  # at most 8 CQs x 4 cpu admitted per cycle
        if wall > 0:  # wall is printed to 3 decimals: allow exactly that rounding (+ the rate's own)
            tolerance = 0.0005 / wall + 0.002
            assert abs(per_s - decisions / wall) <= tolerance * decisions / wall + 0.1
            assert abs(us - wall * 1e6 / decisions) <= tolerance * wall * 1e6 / decisions + 0.01
    ratio = re.search(r"per-decision cost ratio 400 vs 40: wall ([\d.]+), cpu ([\d.]+)", result.output)
    assert ratio is not None
    assert abs(float(ratio.group(1)) - table[-1][6] / table[0][6]) <= 0.05 * float(ratio.group(1)) + 0.01
    assert float(lines[-1].split(": ")[1]) == table[-1][5]
    assert "baseline shape (spec 6.3, scale 0.02): 5 cohorts x 6 CQs, 300 workloads" in result.output
    for cls in ("small", "medium", "large"):
        assert re.search(rf"class {cls}: avg time to admission \d+ ms", result.output)


def test_scale_run_counts_every_decision() -> None:
    r = run_scale(workloads=120, cqs=4, cohorts=1)
    assert r.decisions == 120
    assert r.wall_s > 0
    assert r.cpu_s >= 0
    assert r.per_second == r.decisions / r.wall_s


@pytest.mark.slow
def test_baseline_never_beats_the_theoretical_lower_bound() -> None:
    """§6.4: no schedule finishes the full baseline before 66.84 s; every workload gets admitted."""
    b = run_baseline(scale=1.0)
    assert b.workloads == 15_000
    assert b.admissions >= b.workloads
    assert b.makespan_s >= BASELINE_LOWER_BOUND_S
    assert 0 < b.cq_usage_pct <= 100.0
