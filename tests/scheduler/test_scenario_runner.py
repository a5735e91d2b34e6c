"""The scenario runner itself: malformed files fail loudly, wrong expectations are reported.

A runner that silently passes would make every scenario worthless, so each ``want`` key is shown
to produce a mismatch when the expectation is wrong.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from pykueue.testing import Scenario, ScenarioFormatError, load_scenario_file, run_scenario
from pykueue.testing.scenario_driver import build_config

NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
RF = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}}
CQ = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ClusterQueue",
    "metadata": {"name": "cq"},
    "spec": {
        "namespaceSelector": {},
        "preemption": {"withinClusterQueue": "LowerPriority"},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "2"}]}],
            }
        ],
    },
}
LQ = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "LocalQueue",
    "metadata": {"name": "lq", "namespace": "ns"},
    "spec": {"clusterQueue": "cq"},
}


def _wl(name: str, cpu: str, priority: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "queueName": "lq",
            "priority": priority,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}},
                }
            ],
        },
    }


GOOD_WANT: dict[str, Any] = {
    "admitted": {
        "ns/a": {
            "clusterQueue": "cq",
            "flavors": {"main": {"cpu": "default"}},
            "counts": {"main": 1},
            "borrowing": False,
            "admissionChecks": [],
        }
    },
    "admittedOrder": ["ns/a"],
    "preempted": {},
    "pending": {"ns/b": {"reason": "WaitingForQuota", "messageContains": "insufficient unused quota"}},
    "notAdmitted": ["ns/b"],
    "state": {"ns/a": "admitted", "ns/b": "pending"},
    "holding": {"cq": 1},
    "usage": {"cq": {"default": {"cpu": "2"}}},
    "pendingOrder": {"cq": ["ns/b"]},
    "active": {"cq": {"active": True, "reason": "Ready"}},
}


def _scenario(want: dict[str, Any]) -> Scenario:
    return Scenario(
        "t",
        "3.3",
        "runner self-test",
        {},
        [NS, RF, CQ, LQ, _wl("a", "2"), _wl("b", "2")],
        [{"cycle": True, "want": want}],
    )


def test_correct_expectations_pass() -> None:
    assert run_scenario(_scenario(GOOD_WANT)) == []


@pytest.mark.parametrize(
    ("key", "wrong"),
    [
        ("admitted", {"ns/b": {}}),
        ("admitted", {"ns/a": {"clusterQueue": "other"}}),
        ("admitted", {"ns/a": {"flavors": {"main": {"cpu": "spot"}}}}),
        ("admitted", {"ns/a": {"counts": {"main": 2}}}),
        ("admitted", {"ns/a": {"borrowing": True}}),
        ("admitted", {"ns/a": {"admissionChecks": ["x"]}}),
        ("admittedOrder", ["ns/b"]),
        ("preempted", {"ns/a": {}}),
        ("pending", {"ns/b": {"reason": "NoMatchingFlavor"}}),
        ("pending", {"ns/b": {"messageContains": "no such text"}}),
        ("pending", {"ns/a": {}}),
        ("notAdmitted", ["ns/a"]),
        ("state", {"ns/a": "pending"}),
        ("holding", {"cq": 2}),
        ("usage", {"cq": {"default": {"cpu": "3"}}}),
        ("pendingOrder", {"cq": []}),
        ("active", {"cq": {"active": False}}),
        ("weightedShare", {"ClusterQueue/cq": 7}),
    ],
)
def test_every_want_key_reports_a_wrong_expectation(key: str, wrong: Any) -> None:
    want = copy.deepcopy(GOOD_WANT)
    want[key] = wrong
    failures = run_scenario(_scenario(want))
    assert failures, f"a wrong `{key}` expectation went unnoticed"
    assert all(f.startswith("steps[0]") for f in failures)


def test_events_drive_the_engine() -> None:
    """finish/evict/advance/apply/delete/repeat feed the engine like the workload controller."""
    steps: list[dict[str, Any]] = [
        {"cycle": True, "want": {"admitted": {"ns/a": {}}, "holding": {"cq": 1}}},
        {"apply": [_wl("high", "2", priority=10)]},
        {
            "cycle": True,
            "want": {
                "preempted": {"ns/a": {"reason": "InClusterQueue", "by": "ns/high"}},
                "state": {"ns/a": "evicting"},
            },
        },
        {"evict": ["ns/a"]},
        {"advance": 1},
        {"cycle": True, "want": {"admitted": {"ns/high": {}}, "state": {"ns/a": "pending"}}},
        {"finish": [{"clusterQueue": "cq", "count": 1}]},
        {"repeat": 2, "steps": [{"advance": 1}, {"cycle": True}]},
        {"cycle": True, "want": {"state": {"ns/high": "finished", "ns/a": "admitted"}}},
        {"delete": ["Workload/ns/a"]},
        {"cycle": True, "want": {"admitted": {}, "holding": {"cq": 0}}},
    ]
    sc = Scenario("events", "3.2", "events", {}, [NS, RF, CQ, LQ, _wl("a", "2")], steps)
    assert run_scenario(sc) == []


def test_config_maps_camel_case_to_scheduler_config() -> None:
    cfg = build_config({"headsPerCycle": 1, "fairSharing": {"preemptionStrategies": ["LessThanInitialShare"]}})
    assert cfg.heads_per_cycle == 1
    assert cfg.fair_sharing is not None
    assert tuple(cfg.fair_sharing.preemption_strategies) == ("LessThanInitialShare",)
    with pytest.raises(ValueError, match="no field"):
        build_config({"noSuchSetting": True})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("scenarios: 3", "`scenarios` list"),
        ("scenarios: [{name: x, topic: queue-order, description: d, steps: [], typo: 1}]", "unknown keys"),
        ("scenarios: [{name: x, topic: queue-order, steps: []}]", "missing"),
        ("scenarios: [{name: x, topic: '3.1', description: d, steps: []}]", "is not one of"),
        (
            "scenarios: [{name: x, topic: queue-order, description: d, steps: [{cycle: true, want: {admited: {}}}]}]",
            "unknown want keys",
        ),
        (
            "scenarios: [{name: x, topic: queue-order, description: d, steps: [{finish: [], advance: 1}]}]",
            "exactly one",
        ),
        ("scenarios: [{name: x, topic: queue-order, description: d, steps: [{advance: 1, want: {}}]}]", "only follows"),
        (
            "scenarios: [{name: x, topic: queue-order, description: d, objects: [{kind: Pod, metadata: {name: p}}], "
            "steps: []}]",
            "kind in",
        ),
        (
            "scenarios: [{name: x, topic: queue-order, description: d, steps: []}, "
            "{name: x, topic: queue-order, description: d, steps: []}]",
            "duplicate",
        ),
    ],
)
def test_malformed_files_are_rejected(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioFormatError, match=message):
        load_scenario_file(path)
