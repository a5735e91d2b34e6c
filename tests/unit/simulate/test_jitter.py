"""Why one replay and one real-time run of a saturated trace disagree, and ``--jitter`` / ``--samples``.

One ClusterQueue of 4 cpu, no preemption. ``run`` (4 cpu, 100 s) starts at 0; ``low`` (4 cpu,
priority 10, 1,000 s) queues at 50; ``high`` (4 cpu, priority 100, 10 s) is created at 100, the
instant ``run`` finishes. By hand: the cycle after that instant sees both, ``high`` starts at 100
(wait 0) and ``low`` at 110 (wait 60). Had ``high`` been seen one second later, ``low`` would
have taken the slot alone at 100 and ``high`` would start at 1,100 (wait 1,000). A real cluster
sees every creation a few milliseconds late, a varying amount: trace seconds at the time scales a
real-time run uses. That is the openb slice's disagreement in small (docs/simulate.md, Fidelity).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pykueue.cli.main import app
from pykueue.simulate.generic import read_jsonl
from pykueue.simulate.objects import load_objects
from pykueue.simulate.replay import replay
from pykueue.simulate.samples import spread

from .conftest import write_four_cpu_case

TASKS = (("run", 0, 100, 0), ("low", 50, 1000, 10), ("high", 100, 10, 100))
"""(name, submit s, runtime s, priority)."""


def _write(tmp_path: Path, high_submit: float = 100) -> tuple[Path, Path]:
    tasks = [
        (name, high_submit if name == "high" else submit, runtime, priority)
        for name, submit, runtime, priority in TASKS
    ]
    return write_four_cpu_case(tmp_path, tasks, preempt_lower_priority=False)


def _waits(objects: Path, trace: Path, **kwargs: float) -> dict[str, float]:
    result = replay(load_objects([objects]), read_jsonl(trace), **kwargs)  # type: ignore[arg-type]
    return {
        key.split("/")[1]: (r.admitted_ms - r.submit_ms) / 1000
        for key, r in result.records.items()
        if r.admitted_ms is not None
    }


def test_one_second_decides_who_gets_the_freed_slot(tmp_path: Path) -> None:
    on_time = _waits(*_write(tmp_path))
    assert on_time == {"run": 0, "low": 60, "high": 0}
    late = _waits(*_write(tmp_path, high_submit=101))
    assert late == {"run": 0, "low": 50, "high": 999}  # high waits for low's 1,000 s


def test_jitter_delays_creations_and_the_wait_counts_from_the_trace(tmp_path: Path) -> None:
    objects, trace = _write(tmp_path)
    result = replay(load_objects([objects]), read_jsonl(trace), jitter_s=5, seed=3)
    run = result.records["team/run"]
    assert run.submit_ms == 0  # the trace's instant, as a real run records its creation
    assert run.admitted_ms is not None
    assert 0 < run.admitted_ms <= 5000  # seen (and admitted) late
    assert run.finished_ms == run.admitted_ms + 100_000
    again = replay(load_objects([objects]), read_jsonl(trace), jitter_s=5, seed=3)
    assert {k: r.admitted_ms for k, r in again.records.items()} == {
        k: r.admitted_ms for k, r in result.records.items()
    }  # seeded: repeatable


def test_jittered_seeds_show_both_outcomes(tmp_path: Path) -> None:
    """Draws of up to 5 s move ``high`` before or after ``run``'s finish: over ten seeds both
    outcomes of the first test appear, waits of 0 to 5 s or of about 1,000 s for ``high``."""
    objects, trace = _write(tmp_path)
    high = [_waits(objects, trace, jitter_s=5, seed=seed)["high"] for seed in range(10)]
    assert all(w <= 5 or 990 <= w <= 1005 for w in high)
    assert any(w <= 5 for w in high)
    assert any(w >= 990 for w in high)


def test_spread_is_mean_min_max_over_the_seeds() -> None:
    def doc(wait: float, high: float, preemptions: int, util: float) -> dict[str, object]:
        return {
            "waitSeconds": {"mean": wait},
            "priorityClasses": {"high": {"waitSeconds": {"mean": high}}},
            "clusterQueues": {"cq": {"waitSeconds": {"mean": wait}}},
            "preemptions": preemptions,
            "flavors": {"default": {"utilisation": util}},
        }

    band = spread([doc(10, 1, 4, 0.5), doc(20, 3, 2, 0.7), doc(30, 2, 3, 0.6)], 5.0)
    assert band["count"] == 3
    assert band["jitterSeconds"] == 5.0
    assert band["meanWaitSeconds"] == {"mean": 20, "min": 10, "max": 30}
    assert band["priorityClassMeanWaitSeconds"] == {"high": {"mean": 2, "min": 1, "max": 3}}
    assert band["clusterQueueMeanWaitSeconds"] == {"cq": {"mean": 20, "min": 10, "max": 30}}
    assert band["preemptions"] == {"mean": 3, "min": 2, "max": 4}
    assert band["flavorUtilisation"] == {"default": {"mean": 0.6, "min": 0.5, "max": 0.7}}
    # a class admitted in some samples only has no band (its mean is not defined in every sample)
    partial = spread([doc(10, 1, 4, 0.5), {**doc(20, 3, 2, 0.7), "priorityClasses": {}}], 5.0)
    assert partial["priorityClassMeanWaitSeconds"] == {}


def test_cli_samples_report_the_band_and_seed_zero(tmp_path: Path) -> None:
    objects, trace = _write(tmp_path)
    args = ["simulate", "run", "--objects", str(objects), "--trace", str(trace), "-o", "json", "--jitter", "5"]
    one = CliRunner().invoke(app, args)
    many = CliRunner().invoke(app, [*args, "--samples", "10"])
    assert one.exit_code == 0, one.output
    assert many.exit_code == 0, many.output
    single, banded = json.loads(one.stdout), json.loads(many.stdout)
    band = banded.pop("samples")
    assert banded == single  # the rest of the output is seed 0's replay
    high = band["priorityClassMeanWaitSeconds"]["priority-100"]
    assert band["count"] == 10
    assert high["min"] <= 5
    assert high["max"] >= 990
    assert high["min"] <= high["mean"] <= high["max"]
    text = CliRunner().invoke(app, [*args[:-4], "--jitter", "5", "--samples", "10"])
    assert text.exit_code == 0
    assert "samples (jitter s, stamp s): mean [min-max]" in text.stdout
    assert "mean wait s, priority class priority-100" in text.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--samples", "3"], "--samples needs --jitter"),
        (["--realtime", "--jitter", "2"], "are for the replay; a real-time run has its own"),
        (["--jitter", "-1"], ""),
    ],
)
def test_cli_rejects_samples_it_cannot_honour(tmp_path: Path, extra: list[str], message: str) -> None:
    objects, trace = _write(tmp_path)
    out = CliRunner().invoke(app, ["simulate", "run", "--objects", str(objects), "--trace", str(trace), *extra])
    assert out.exit_code != 0
    assert "Traceback" not in out.output
    assert message in out.output
