"""``pykueue bench core --saturated`` and the engine costs it watches: output, arithmetic, growth.

Speed itself is never asserted (the machine is shared); what is asserted are counts that do not
depend on it: how many times the engine touches the quota tree or searches for preemption
victims, which grow with the work and not with the number of cohorts around it.
"""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from pykueue.bench.saturated import SaturatedResult, run_saturated, run_saturated_size
from pykueue.cli.bench import bench_app
from pykueue.scheduler.algorithm import cycle, preemption
from pykueue.scheduler.state import cohort_tree


def _fake(cost_per_cycle_ms: Any) -> Any:
    def measure(cqs: int, depth: float) -> SaturatedResult:
        return SaturatedResult(
            cqs,
            10 * cqs,
            10,
            19 * cqs // 2,
            9 * cqs // 2,
            cost_per_cycle_ms(cqs) * 10 / 1000,
            cost_per_cycle_ms(cqs) * 20 / 1000,
            11_200.0,
        )

    return measure


def test_report_rows_and_linear_verdict() -> None:
    lines: list[str] = []
    rows = run_saturated((1000, 100, 2000), out=lines.append, measure=_fake(lambda n: n * 0.5))
    assert [r.cqs for r in rows] == [100, 1000, 2000]
    assert rows[0].cpu_ms_per_cycle == pytest.approx(50.0)
    assert rows[1].decisions == 14_000
    assert rows[1].decisions_per_cpu_s == pytest.approx(14_000 / 5.0)
    assert "cost per cycle per ClusterQueue, 1000 vs 100: 1.000 (at most linear)" in lines
    assert "cost per cycle per ClusterQueue, 2000 vs 100: 1.000 (at most linear)" in lines
    assert lines[-1] == f"decisions/s: {28_000 / 20.0:.1f}"


def test_report_flags_quadratic_growth() -> None:
    lines: list[str] = []
    run_saturated((100, 1000), out=lines.append, measure=_fake(lambda n: n * n / 100))
    assert "cost per cycle per ClusterQueue, 1000 vs 100: 10.000 (WORSE THAN LINEAR)" in lines


def test_real_size_is_saturated_and_admits_everything() -> None:
    r = run_saturated_size(100, depth=0.5)
    assert r.cqs == 100
    assert r.admissions >= r.workloads  # every workload admitted at least once (evicted ones again)
    assert r.preemptions > 0  # the cohort is full: larger workloads get in by preemption
    assert r.cycles > 0
    assert r.engine_cpu_s > 0


def test_cqs_must_be_whole_cohorts() -> None:
    with pytest.raises(ValueError, match="multiple of 100"):
        run_saturated_size(150)
    result = CliRunner().invoke(bench_app, ["core", "--saturated", "--cqs", "150"])
    assert result.exit_code == 2
    assert "--saturated needs --cqs a multiple of 1000" in result.output


def _count_tree_updates(cqs: int, monkeypatch: pytest.MonkeyPatch) -> int:
    calls = [0]
    original = cohort_tree.ResourceNode.add_usage

    def counting(self: cohort_tree.ResourceNode, usage: dict[Any, int], sign: int = 1) -> None:
        calls[0] += 1
        original(self, usage, sign)

    with monkeypatch.context() as m:
        m.setattr(cohort_tree.ResourceNode, "add_usage", counting)
        run_saturated_size(cqs, depth=0.5)
    return calls[0]


def test_quota_tree_updates_grow_with_the_cohorts_not_faster(monkeypatch: pytest.MonkeyPatch) -> None:
    """A round's victims in one cohort are not removed and restored for every entry of every other
    cohort: three times the cohorts cost three times the quota-tree updates (it was ~quadratic)."""
    one = _count_tree_updates(100, monkeypatch)
    three = _count_tree_updates(300, monkeypatch)
    assert three <= 3.3 * one, (one, three)


def test_a_nomination_asks_each_preemption_question_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flavor assigner's oracle and the nomination's own target search share one answer."""
    seen: set[tuple[Any, ...]] = set()
    repeats: list[tuple[Any, ...]] = []
    searches = [0]
    original_assign = cycle.Round._assign
    original_search = preemption.classic_targets  # type: ignore[attr-defined]  # patched where it is looked up

    def assign(self: cycle.Round, *args: Any, **kwargs: Any) -> Any:
        seen.clear()
        return original_assign(self, *args, **kwargs)

    def search(ctx: preemption.PreemptionCtx, **kwargs: Any) -> Any:
        searches[0] += 1
        key = (ctx.wl.key, ctx.cq.name, frozenset(ctx.requests.items()), frozenset(ctx.frs_need))
        if key in seen:
            repeats.append(key)
        seen.add(key)
        return original_search(ctx, **kwargs)

    monkeypatch.setattr(cycle.Round, "_assign", assign)
    monkeypatch.setattr(preemption, "classic_targets", search)
    run_saturated_size(100, depth=0.5)
    assert searches[0] > 0
    assert repeats == []


def test_repeats_report_the_least_disturbed_run() -> None:
    costs = iter([30.0, 10.0, 20.0, 500.0, 400.0, 600.0])

    def measure(cqs: int, depth: float) -> SaturatedResult:
        return SaturatedResult(cqs, 10 * cqs, 10, cqs, cqs, next(costs), 1.0, 11_200.0)

    lines: list[str] = []
    rows = run_saturated((100, 1000), out=lines.append, repeats=3, measure=measure)
    assert [r.engine_cpu_s for r in rows] == [10.0, 400.0]
    assert "cost per cycle per ClusterQueue, 1000 vs 100: 4.000 (WORSE THAN LINEAR)" in lines
