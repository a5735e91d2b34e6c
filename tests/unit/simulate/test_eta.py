"""Start-time estimates from a forked engine: runtime sources and the forward simulation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pykueue.api.meta.clock import format_time
from pykueue.simulate.eta import estimate, parse_duration
from pykueue.simulate.objects import load_objects

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90.0),
        ("90s", 90.0),
        ("15m", 900.0),
        ("1h30m", 5400.0),
        ("2.5h", 9000.0),
        ("1m-", None),
        ("soon", None),
        ("-5", None),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == seconds


def _wl(
    name: str,
    cpu: int,
    created: float,
    *,
    runtime: str | None = None,
    max_exec: int | None = None,
    reserved_at: float | None = None,
    finished_at: float | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "team",
        "creationTimestamp": format_time(created),
        "uid": name,
        "resourceVersion": "7",
    }
    if runtime is not None:
        meta["annotations"] = {"pykueue.io/expected-runtime": runtime}
    spec: dict[str, Any] = {
        "queueName": "lq",
        "priority": 0,
        "podSets": [
            {
                "name": "main",
                "count": 1,
                "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": str(cpu)}}}]}},
            }
        ],
    }
    if max_exec is not None:
        spec["maximumExecutionTimeSeconds"] = max_exec
    obj: dict[str, Any] = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": meta, "spec": spec}
    if reserved_at is not None:
        conds = [
            {"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": format_time(reserved_at)}
            for t in ("QuotaReserved", "Admitted")
        ]
        if finished_at is not None:
            conds.append(
                {
                    "type": "Finished",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": "",
                    "lastTransitionTime": format_time(finished_at),
                }
            )
        obj["status"] = {
            "conditions": conds,
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": str(cpu)}, "count": 1}
                ],
            },
        }
    return obj


def test_forward_simulation_with_each_runtime_source(objects_file: Path) -> None:
    conf = load_objects([objects_file])  # one ClusterQueue with 4 cpu
    workloads = [
        _wl("done", 1, NOW - 2000, reserved_at=NOW - 1500, finished_at=NOW - 1000),  # observed runtime 500 s
        _wl("running", 4, NOW - 200, runtime="5m", reserved_at=NOW - 100),  # 200 s left
        _wl("b", 2, NOW - 50, runtime="60s"),
        _wl("c", 4, NOW - 40, max_exec=120),
        _wl("d", 4, NOW - 30),
    ]
    got = {e.name: e for e in estimate(conf, workloads, NOW)}
    assert sorted(got) == ["b", "c", "d"]  # only pending workloads are estimated
    assert (got["b"].basis, got["c"].basis, got["d"].basis) == ("annotation", "maximumExecutionTime", "history")
    assert (got["b"].runtime_s, got["c"].runtime_s, got["d"].runtime_s) == (60.0, 120.0, 500.0)
    # b starts when "running" ends (200 s), c when b ends (260 s), d when c ends (380 s)
    assert got["b"].start_s == NOW + 200
    assert got["c"].start_s == NOW + 260
    assert got["d"].start_s == NOW + 380
    assert got["b"].cluster_queue == "cq"


def test_never_fitting_workload_has_no_estimate_but_a_reason(objects_file: Path) -> None:
    conf = load_objects([objects_file])
    [e] = estimate(conf, [_wl("huge", 9, NOW)], NOW)
    assert e.start_s is None
    assert e.reason.startswith("ExceedsMaxQuota")


def test_default_runtime_without_any_history(objects_file: Path) -> None:
    conf = load_objects([objects_file])
    got = {e.name: e for e in estimate(conf, [_wl("a", 4, NOW - 10), _wl("b", 4, NOW - 5)], NOW)}
    assert (got["a"].basis, got["a"].runtime_s, got["a"].start_s) == ("default", 3600.0, NOW)
    assert got["b"].start_s == NOW + 3600
