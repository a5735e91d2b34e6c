"""``pykueue bench scheduler``: generator config, bound, recorder arithmetic, virtual time, checker.

Every expected number here is computed by hand in the comments; nothing asserts on real time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from pykueue.bench.scheduler import (
    ConfigError,
    CQSample,
    Recorder,
    check_summary,
    expand,
    load_config,
    load_rangespec,
    parse_config,
    simulate,
    theoretical_bound,
)
from pykueue.bench.scheduler.bound import Bound
from pykueue.bench.scheduler.realtime import Runner
from pykueue.bench.scheduler.report import RunStats, summarize
from pykueue.cli.bench_scheduler import CONFIGS, scheduler


def _config(
    workloads_sets: list[dict[str, Any]], *, cqs: int = 2, nominal: Any = 1, borrowing: Any = 0, within: str = "Never"
) -> dict[str, Any]:
    return {
        "cohorts": [
            {
                "className": "co",
                "count": 1,
                "queuesSets": [
                    {
                        "className": "cq",
                        "count": cqs,
                        "nominalQuota": nominal,
                        "borrowingLimit": borrowing,
                        "reclaimWithinCohort": "Never",
                        "withinClusterQueue": within,
                        "workloadsSets": workloads_sets,
                    }
                ],
            }
        ]
    }


# 2 CQs of 1 cpu (no borrowing), each gets 3 one-cpu workloads at 1 s, 2 s, 3 s running 2.5 s:
# admitted at 1.0, 3.5, 6.0 -> waits 0, 1500, 3000 ms (avg 1500); each CQ busy 1 cpu from 1.0 to 8.5 s.
THREE = _config(
    [
        {
            "count": 3,
            "creationIntervalMs": 1000,
            "workloads": [{"className": "w", "runtimeMs": 2500, "priority": 0, "request": 1}],
        }
    ]
)


# ------------------------------------------------------------------------------------------ config


def test_expansion_names_and_creation_instants() -> None:
    plan = expand(
        parse_config(
            _config(
                [
                    {
                        "count": 2,
                        "creationIntervalMs": 100,
                        "workloads": [
                            {"className": "a", "runtimeMs": 1, "request": "500m"},
                            {"className": "b", "runtimeMs": 1, "request": 2, "podCount": 3},
                        ],
                    }
                ]
            )
        )
    )
    assert plan.cohorts == ("co-0",)
    assert [cq.name for cq in plan.cluster_queues] == ["cq-0-0-co-0", "cq-0-1-co-0"]
    mine = [(w.name, w.created_ms, w.cpu_milli) for w in plan.workloads if w.namespace == "cq-0-0-co-0"]
    # the generator sleeps one interval before every template of every iteration
    assert mine == [("a-0-0-0", 100, 500), ("b-0-0-1", 200, 6000), ("a-0-1-0", 300, 500), ("b-0-1-1", 400, 6000)]


def test_packaged_baseline_shape_and_scale() -> None:
    config = load_config(CONFIGS / "baseline" / "generator.yaml")
    plan = expand(config)
    assert (len(plan.cohorts), len(plan.cluster_queues), len(plan.workloads)) == (5, 30, 15_000)
    assert {cq.nominal_milli for cq in plan.cluster_queues} == {20_000}
    assert len(expand(config.scaled(2)).workloads) == 30_000
    assert len(expand(load_config(CONFIGS / "baseline" / "generator.yaml", scale=0.1)).workloads) == 1_500


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: c["cohorts"][0].pop("count"), "cohorts[0].count: must be a positive integer"),
        (
            lambda c: c["cohorts"][0]["queuesSets"][0].update(nominalQuota="lots"),
            "cohorts[0].queuesSets[0].nominalQuota: 'lots' is not a cpu quantity",
        ),
        (
            lambda c: c["cohorts"][0]["queuesSets"][0].update(withinClusterQueue="Sometimes"),
            "cohorts[0].queuesSets[0].withinClusterQueue: must be one of",
        ),
        (
            lambda c: c["cohorts"][0]["queuesSets"][0]["workloadsSets"][0]["workloads"][0].update(request=0),
            "workloadsSets[0].workloads[0].request: must be positive",
        ),
        (
            lambda c: c["cohorts"][0]["queuesSets"][0]["workloadsSets"][0]["workloads"][0].update(runtimMs=3),
            "workloads[0].runtimMs: unknown field",
        ),
        (
            lambda c: c["cohorts"][0]["queuesSets"][0]["workloadsSets"][0]["workloads"][0].update(tasLevel="rack"),
            "workloads[0].tasLevel: TAS/DRA configs are not supported",
        ),
        (
            lambda c: c["cohorts"][0]["queuesSets"][0].update(workloadsSets=[]),
            "cohorts[0].queuesSets[0].workloadsSets: must be a non-empty list",
        ),
        (lambda c: c["cohorts"][0].update(className="Big_Name"), "cohorts[0].className: must be a lowercase DNS label"),
        (lambda c: c.update(cohorts="five"), "config.cohorts: must be a non-empty list"),
    ],
)
def test_bad_configs_name_the_field(mutate: Any, message: str) -> None:
    data = yaml.safe_load(yaml.safe_dump(THREE))
    mutate(data)
    with pytest.raises(ConfigError) as err:
        parse_config(data, "gen.yaml")
    assert message in str(err.value)
    assert str(err.value).startswith("gen.yaml: invalid generator config")


def test_every_problem_is_reported_at_once_and_files_are_checked(tmp_path: Path) -> None:
    data = yaml.safe_load(yaml.safe_dump(THREE))
    data["cohorts"][0]["count"] = 0
    data["cohorts"][0]["queuesSets"][0]["count"] = -1
    with pytest.raises(ConfigError) as err:
        parse_config(data)
    assert len(err.value.problems) == 2
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("cohorts: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(tmp_path / "bad.yaml")


# ------------------------------------------------------------------------------------------ bound


def test_baseline_bound_is_66_84_s() -> None:
    bound = theoretical_bound(expand(load_config(CONFIGS / "baseline" / "generator.yaml")))
    # the theoretical lower bound: 1.2 + (7,920 - 43.2) / 120 — set at the first large arrival
    assert bound.ms == pytest.approx(66_840, abs=10)
    assert bound.instant_ms == 1200
    assert bound.pool.startswith("cohort-")


def test_bound_terms() -> None:
    # pool of 2 cpu, 15 cpu·s arriving from 1 s: 1 + 15/2 = 8.5 s
    assert theoretical_bound(expand(parse_config(THREE))).ms == pytest.approx(8_500)
    # one CQ with 1 cpu nominal and no borrowing, a second CQ idle: the CQ's ceiling binds (1 + 7.5)
    one = _config(
        [{"count": 3, "creationIntervalMs": 1000, "workloads": [{"className": "w", "runtimeMs": 2500, "request": 1}]}],
        cqs=1,
    )
    one["cohorts"][0]["queuesSets"].append(
        {
            **one["cohorts"][0]["queuesSets"][0],
            "className": "idle",
            "workloadsSets": [{"count": 1, "workloads": [{"className": "x", "runtimeMs": 1, "request": "1m"}]}],
        }
    )
    bound = theoretical_bound(expand(parse_config(one)))
    assert bound.ms == pytest.approx(8_500)
    assert bound.pool == "cq/cq-0-0-co-0"
    # a single long workload: its own creation + runtime
    long = _config(
        [
            {
                "count": 1,
                "creationIntervalMs": 10,
                "workloads": [{"className": "w", "runtimeMs": 60_000, "request": "1m"}],
            }
        ],
        nominal=100,
        borrowing=None,
    )
    assert theoretical_bound(expand(parse_config(long))).ms == pytest.approx(60_010)


# ------------------------------------------------------------------------------------------ recorder


def test_recorder_readmission_overwrites_and_never_admitted_counts_zero() -> None:
    rec = Recorder()
    rec.created("a", "c", 0)
    rec.created("b", "c", 0)
    rec.created("z", "c", 100)
    rec.admitted("a", 100)
    rec.evicted("a", 200)
    rec.evicted("a", 250)  # still the same eviction
    rec.admitted("a", 700)
    rec.admitted("b", 400)
    rec.finished("a", 900)
    s = rec.workload_classes()["c"]
    # (700 + 400 + 0) // 3 = 366
    assert (s["count"], s["admitted"], s["totalEvictions"], s["averageTimeToAdmissionMs"]) == (3, 2, 1, 366)
    assert s["averageTimeToFinishMs"] == 300
    assert s["finished"] == 1


def test_recorder_integrates_cluster_queue_usage() -> None:
    rec = Recorder()
    rec.cluster_queue("q1", "cq", 0, CQSample(0, 4000, 1, 0))
    rec.cluster_queue("q1", "cq", 1000, CQSample(2000, 4000, 0, 1))
    rec.cluster_queue("q1", "cq", 3000, CQSample(0, 4000, 0, 0))
    rec.cluster_queue("q2", "cq", 500, CQSample(4000, 4000, 0, 1))
    assert rec.expect_more()
    rec.cluster_queue("q2", "cq", 4000, CQSample(0, 4000, 0, 0))
    assert not rec.expect_more()
    g = rec.cluster_queue_classes()["cq"]
    # q1: 2000m x 2000 ms; q2: 4000m x 3500 ms; quota 8000m over 0..4000 ms
    assert g["cpuUsed"] == 2000 * 2000 + 4000 * 3500
    assert g["usagePercent"] == pytest.approx((4e6 + 14e6) * 100 / (8000 * 4000), abs=0.01)
    assert (g["firstEventMs"], g["lastEventMs"], g["nominalQuota"]) == (0, 4000, 8000)


# ------------------------------------------------------------------------------------------ virtual time


def test_virtual_time_hand_computed_case() -> None:
    plan = expand(parse_config(THREE))
    r = simulate(plan)
    s = summarize(
        r.recorder,
        theoretical_bound(plan),
        RunStats("virtual-time", r.wall_ms, 0.0, 0.0, r.admissions, r.preemptions, r.cycles),
    )
    assert s["wallMs"] == 8_500
    assert s["wallToBound"] == 1.0
    w = s["workloadClasses"]["w"]
    assert (w["count"], w["averageTimeToAdmissionMs"], w["p50TimeToAdmissionMs"], w["p99TimeToAdmissionMs"]) == (
        6,
        1500,
        1500,
        3000,
    )
    assert w["averageTimeToFinishMs"] == (2500 + 4000 + 5500) // 3
    cq = s["clusterQueueClasses"]["cq"]
    assert cq["cpuUsed"] == 2 * 1000 * 7500
    assert cq["usagePercent"] == pytest.approx(15e6 * 100 / (2000 * 8500), abs=0.01)  # 88.24 %
    assert (r.admissions, r.preemptions, r.stuck) == (6, 0, 0)


def test_virtual_time_preempted_workload_restarts_its_full_runtime() -> None:
    # one CQ of 1 cpu: low (10 s) created at 1 s; high (1 s) at 2 s preempts it (LowerPriority);
    # low is admitted again at 3 s and runs its whole 10 s again: done at 13 s, waited 2 s
    config = _config(
        [
            {
                "count": 1,
                "creationIntervalMs": 1000,
                "workloads": [{"className": "low", "runtimeMs": 10_000, "priority": 0, "request": 1}],
            },
            {
                "count": 1,
                "creationIntervalMs": 2000,
                "workloads": [{"className": "high", "runtimeMs": 1000, "priority": 100, "request": 1}],
            },
        ],
        cqs=1,
        within="LowerPriority",
    )
    r = simulate(expand(parse_config(config)))
    classes = r.recorder.workload_classes()
    assert r.wall_ms == 13_000
    assert (classes["low"]["totalEvictions"], classes["low"]["averageTimeToAdmissionMs"]) == (1, 2000)
    assert classes["high"]["averageTimeToAdmissionMs"] == 0
    assert (r.admissions, r.preemptions) == (3, 1)


def test_runner_restart_rule() -> None:
    runner = Runner()
    assert runner.due("a") is None
    runner.admitted("a", 10.0, 2.0)
    runner.admitted("a", 11.0, 2.0)  # repeated observation keeps the first admission
    assert runner.due("a") == 12.0
    runner.evicted("a")
    assert runner.due("a") is None
    runner.admitted("a", 20.0, 2.0)  # re-admitted: the full runtime again
    assert runner.due("a") == 22.0


# ------------------------------------------------------------------------------------------ checker + CLI


SPEC = {
    "cmd": {"maxWallMs": 10_000},
    "clusterQueueClassesMinUsage": {"cq": 50},
    "wlClassesMaxAvgTimeToAdmissionMs": {"w": 2_000},
}


def _summary(wall: int, used: int, wait: int) -> dict[str, Any]:
    return {
        "wallMs": wall,
        "clusterQueueClasses": {"cq": {"cpuUsed": used, "nominalQuota": 1000, "firstEventMs": 0, "lastEventMs": 1000}},
        "workloadClasses": {"w": {"averageTimeToAdmissionMs": wait}},
    }


def test_checker_pass_and_each_violation_named() -> None:
    assert check_summary(_summary(10_000, 500_000, 2_000), SPEC) == []
    problems = check_summary(_summary(10_001, 499_000, 2_001), SPEC)
    assert [p.split(":")[0] for p in problems] == [
        "cmd.maxWallMs",
        "clusterQueueClassesMinUsage.cq",
        "wlClassesMaxAvgTimeToAdmissionMs.w",
    ]
    extra = _summary(1, 900_000, 1)
    extra["workloadClasses"]["other"] = {"averageTimeToAdmissionMs": 0}
    del extra["clusterQueueClasses"]["cq"]
    assert check_summary(extra, SPEC) == [
        "clusterQueueClassesMinUsage.cq: class missing from the summary",
        "wlClassesMaxAvgTimeToAdmissionMs.other: unexpected workload class (no range for it)",
    ]


def test_rangespec_validation(tmp_path: Path) -> None:
    assert load_rangespec(CONFIGS / "baseline" / "rangespec.yaml")["cmd"]["maxWallMs"] == 80_000
    bad = tmp_path / "r.yaml"
    bad.write_text("cmd: {maxWallMs: fast}\nwlClassesMaxAvgTimeToAdmissionMs: {a: -1}\nextra: 1\n")
    with pytest.raises(ConfigError) as err:
        load_rangespec(bad)
    assert sorted(p.split(":")[0] for p in err.value.problems) == [
        "cmd.maxWallMs",
        "extra",
        "wlClassesMaxAvgTimeToAdmissionMs.a",
    ]
    assert str(err.value).startswith(f"{bad}: invalid rangespec:")


def test_packaged_scenarios_resolve_by_name() -> None:
    from pykueue.cli.bench_scheduler import resolve

    assert resolve("baseline", "rangespec.yaml") == CONFIGS / "baseline" / "rangespec.yaml"
    assert resolve("baseline/kueue-rangespec.yaml", "rangespec.yaml") == CONFIGS / "baseline" / "kueue-rangespec.yaml"
    assert load_rangespec(resolve("large-scale", "rangespec.yaml"))["cmd"]["maxWallMs"] == 1_416_000
    assert resolve("no/such.yaml", "generator.yaml") == Path("no/such.yaml")


def _cli(*args: str) -> Any:
    import typer

    app = typer.Typer()
    app.command()(scheduler)
    return CliRunner().invoke(app, list(args))


def test_cli_virtual_run_writes_summary_and_checks(tmp_path: Path) -> None:
    gen = tmp_path / "gen.yaml"
    gen.write_text(yaml.safe_dump(THREE))
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    result = _cli("--config", str(gen), "--virtual-time", "--output", str(tmp_path / "out"), "--check", str(spec))
    # wall 8.5 s passes, usage 88 % passes, average wait 1500 ms passes
    assert result.exit_code == 0, result.output
    assert "theoretical bound 8.50 s" in result.output
    assert "wall/bound 1.000" in result.output
    summary = yaml.safe_load((tmp_path / "out" / "summary.yaml").read_text())
    assert summary["wallMs"] == 8_500
    assert summary["boundMs"] == 8_500
    assert summary["workloadClasses"]["w"]["averageTimeToAdmissionMs"] == 1_500
    assert summary["clusterQueueClasses"]["cq"]["usagePercent"] == pytest.approx(88.24, abs=0.01)
    # the same summary against a tighter spec fails, naming the range
    spec.write_text(yaml.safe_dump({**SPEC, "wlClassesMaxAvgTimeToAdmissionMs": {"w": 1_000}}))
    failed = _cli("--summary", str(tmp_path / "out" / "summary.yaml"), "--check", str(spec))
    assert failed.exit_code == 1
    assert "wlClassesMaxAvgTimeToAdmissionMs.w: average wait for admission 1500 ms" in failed.output


def test_cli_bad_config_exits_2_with_the_field(tmp_path: Path) -> None:
    gen = tmp_path / "gen.yaml"
    gen.write_text("cohorts: [{className: co, count: 1}]\n")
    result = _cli("--config", str(gen), "--virtual-time")
    assert result.exit_code == 2
    assert "cohorts[0].queuesSets: must be a non-empty list" in result.output


def test_cli_growth_prints_ratios(tmp_path: Path) -> None:
    gen = tmp_path / "gen.yaml"
    gen.write_text(yaml.safe_dump(THREE))
    result = _cli("--config", str(gen), "--virtual-time", "--growth")
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines() if line.strip().endswith(tuple("0123456789"))]
    assert [row[:2] for row in rows] == [["1x", "6"], ["2x", "12"], ["4x", "24"]]
    assert rows[0][-2:] == ["1.000", "1.000"]


def test_bound_object_in_summary() -> None:
    rec = Recorder()
    s = summarize(rec, Bound(0.0, "", 0), RunStats("virtual-time", 0.0, 0.0, 0.0))
    assert s["wallToBound"] is None
    assert s["workloads"] == 0


# ------------------------------------------------------------------------------------------ real-time feed


def _wl_obj(name: str, *conds: str) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "cq-0-0-co-0", "name": name},
        "status": {"conditions": [{"type": c, "status": "True"} for c in conds]},
    }


def test_realtime_feed_turns_watch_events_into_recorder_transitions() -> None:
    from pykueue.bench.scheduler.realtime import _Driver

    plan = expand(parse_config(THREE))
    d = _Driver(None, plan, print)
    key = "cq-0-0-co-0/w-0-0-0"
    d.rec.created(key, "w", 0)
    d.on_workload("ADDED", _wl_obj("w-0-0-0"), None)
    assert d.runner.due(key) is None
    d.on_workload("MODIFIED", _wl_obj("w-0-0-0", "QuotaReserved", "Admitted"), None)
    d.on_workload("MODIFIED", _wl_obj("w-0-0-0", "QuotaReserved", "Admitted"), None)  # a status echo
    assert d.admissions == 1
    assert d.runner.due(key) is not None
    # evicted while still holding quota: the run restarts in full at the next admission
    d.on_workload("MODIFIED", _wl_obj("w-0-0-0", "QuotaReserved", "Admitted", "Evicted"), None)
    d.on_workload("MODIFIED", _wl_obj("w-0-0-0", "Evicted"), None)
    assert d.runner.due(key) is None
    d.on_workload("MODIFIED", _wl_obj("w-0-0-0", "QuotaReserved", "Admitted"), None)
    d.on_workload("MODIFIED", _wl_obj("w-0-0-0", "QuotaReserved", "Admitted", "Finished"), None)
    assert (d.admissions, d.evictions) == (2, 1)
    assert d.state[key] == "finished"
    assert d.rec.workload_classes()["w"]["totalEvictions"] == 1
    # workloads the generator did not create are ignored
    d.on_workload("ADDED", {"metadata": {"namespace": "other", "name": "x"}}, None)
    assert len(d.rec.workloads) == 1


def test_realtime_feed_reads_cluster_queue_status() -> None:
    from pykueue.bench.scheduler.objects import cluster_queue
    from pykueue.bench.scheduler.realtime import _Driver

    plan = expand(parse_config(THREE))
    d = _Driver(None, plan, print)
    cq = cluster_queue(plan.cluster_queues[0], "rf")
    active = [{"type": "Active", "status": "True"}]
    cq["status"] = {
        "pendingWorkloads": 2,
        "reservingWorkloads": 1,
        "conditions": active,
        "flavorsUsage": [{"name": "rf", "resources": [{"name": "cpu", "total": "500m"}]}],
    }
    d.on_cluster_queue("ADDED", cq, None)
    d.rec.generation_done = True
    assert not d.rec.done()  # pending work in an active queue
    last = d.rec.cqs[plan.cluster_queues[0].name].last
    assert (last.cpu_usage_milli, last.nominal_milli, last.pending, last.reserving) == (500, 1000, 2, 1)
    cq["status"] = {"pendingWorkloads": 0, "reservingWorkloads": 0, "conditions": active}
    d.on_cluster_queue("MODIFIED", cq, None)
    assert d.rec.done()
    assert d.done()  # nothing created, so nothing left to finish


def test_realtime_run_against_a_real_pykueue_up(tmp_path: Path) -> None:
    """End to end: `pykueue up` as a subprocess, objects over HTTP, the runner finishing workloads;
    ``--profile`` leaves the server's cProfile stats (its write paths, not the benchmark's client)."""
    gen = tmp_path / "gen.yaml"
    gen.write_text(
        yaml.safe_dump(
            _config(
                [
                    {
                        "count": 3,
                        "creationIntervalMs": 100,
                        "workloads": [{"className": "w", "runtimeMs": 300, "request": 1}],
                    }
                ],
                cqs=1,
            )
        )
    )
    profile = tmp_path / "server.prof"
    result = _cli("--config", str(gen), "--output", str(tmp_path / "out"), "--timeout", "60", "--profile", str(profile))
    assert result.exit_code == 0, result.output
    assert "pykueue is up at https://127.0.0.1:" in result.output
    import pstats

    functions = {(Path(func[0]).name, func[2]) for func in pstats.Stats(str(profile)).stats}  # type: ignore[attr-defined]
    assert {("resource_registry.py", "update_stored"), ("resource_registry.py", "create_stored")} <= functions
    assert ("realtime.py", "_finish") not in functions  # the benchmark's own process is not profiled
    summary = yaml.safe_load((tmp_path / "out" / "summary.yaml").read_text())
    assert summary["mode"] == "real-time"
    assert summary["timedOut"] is False
    assert (summary["createErrors"], summary["finishErrors"]) == (0, 0)
    assert summary["finishWith"] == "patch"  # the default runner: a JSON patch to /status
    w = summary["workloadClasses"]["w"]
    assert (w["count"], w["admitted"], w["finished"], w["totalEvictions"]) == (3, 3, 3, 0)
    assert summary["boundMs"] == 1_000  # 0.1 s + 3 x 0.3 s of one cpu
    assert summary["clusterQueueClasses"]["cq"]["nominalQuota"] == 1_000
    assert summary["serverUserMs"] > 0


def test_bench_check_gate_passes_today_and_names_a_regression(tmp_path: Path) -> None:
    """``make bench-check``: the virtual-time baseline against its regression gate. The run is
    deterministic, so this fails exactly when the scheduling decisions get worse."""
    out = tmp_path / "out"
    result = _cli(
        "--config", "baseline", "--virtual-time", "--output", str(out), "--check", "baseline/virtual-rangespec.yaml"
    )
    assert result.exit_code == 0, result.output
    summary = yaml.safe_load((out / "summary.yaml").read_text())
    assert summary["wallMs"] <= 80_000
    tighter = tmp_path / "tighter.yaml"
    spec = load_rangespec(CONFIGS / "baseline" / "virtual-rangespec.yaml")
    medium = summary["workloadClasses"]["medium"]["averageTimeToAdmissionMs"]
    tighter.write_text(
        yaml.safe_dump(
            {
                **spec,
                "wlClassesMaxAvgTimeToAdmissionMs": {**spec["wlClassesMaxAvgTimeToAdmissionMs"], "medium": medium - 1},
            }
        )
    )
    failed = _cli("--summary", str(out / "summary.yaml"), "--check", str(tighter))
    assert failed.exit_code == 1
    assert "wlClassesMaxAvgTimeToAdmissionMs.medium" in failed.output
