"""Pure workload-controller rules on plain dicts: checks, stop policies, unqueueable reasons, deadlines."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.meta.clock import format_time
from pykueue.controllers.config import WaitForPodsReady
from pykueue.controllers.workload_decisions import (
    QueueVerdict,
    drain_eviction,
    max_execution_deadline,
    pods_ready_deadline,
    required_checks,
    unadmitted_release,
    unqueueable,
)

T0 = 1_700_000_000.0


def _wl(*conds: tuple[str, str, str, float], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "wl", "namespace": "ns"},
        "spec": {"queueName": "lq", **spec},
        "status": {
            "conditions": [
                {"type": t, "status": s, "reason": r, "message": "", "lastTransitionTime": format_time(at)}
                for t, s, r, at in conds
            ],
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "main", "flavors": {"cpu": "spot"}}]},
        },
    }


def _queue(policy: str = "None", **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "q", **meta}, "spec": {"stopPolicy": policy}}


def test_required_checks_follow_on_flavors() -> None:
    cq = {
        "spec": {
            "admissionChecksStrategy": {
                "admissionChecks": [
                    {"name": "always"},
                    {"name": "spot-only", "onFlavors": ["spot"]},
                    {"name": "od-only", "onFlavors": ["od"]},
                ]
            }
        }
    }
    assert required_checks(_wl(), cq) == ["always", "spot-only"]


@pytest.mark.parametrize(
    ("lq", "cq", "want"),
    [
        (_queue(), _queue(), None),
        (_queue("Hold"), _queue(), None),
        (
            _queue("HoldAndDrain"),
            _queue("HoldAndDrain"),
            QueueVerdict("LocalQueueStopped", "The LocalQueue is stopped"),
        ),
        (_queue(), _queue("HoldAndDrain"), QueueVerdict("ClusterQueueStopped", "The ClusterQueue is stopped")),
    ],
)
def test_drain_evicts_only_for_hold_and_drain(lq: Any, cq: Any, want: QueueVerdict | None) -> None:
    assert drain_eviction(lq, cq) == want


@pytest.mark.parametrize(
    ("lq", "cq", "want"),
    [
        (_queue(), _queue(), None),
        (_queue("Hold"), _queue(), "LocalQueue lq is stopped"),
        (_queue(), _queue("Hold"), "ClusterQueue cq is stopped"),
        (_queue(), None, "ClusterQueue cq is terminating or missing"),
        (_queue(), _queue(deletionTimestamp="2026-01-01T00:00:00Z"), "ClusterQueue cq is terminating or missing"),
    ],
)
def test_unadmitted_reservations_are_released_when_the_queue_stops(lq: Any, cq: Any, want: str | None) -> None:
    verdict = unadmitted_release(_wl(), lq, cq, "cq")
    assert (verdict.message if verdict else None) == want
    assert verdict is None or verdict.reason == "Suspended"


@pytest.mark.parametrize(
    ("lq", "cq", "active", "want"),
    [
        (None, None, False, ("Misconfigured", "LocalQueue lq doesn't exist")),
        (_queue("Hold"), _queue(), True, ("Suspended", "LocalQueue lq is inactive")),
        (_queue(), None, False, ("Misconfigured", "ClusterQueue cq doesn't exist")),
        (_queue(), _queue(), False, ("Suspended", "ClusterQueue cq is inactive")),
        (_queue(), _queue(), True, None),
    ],
)
def test_unqueueable_reasons(lq: Any, cq: Any, active: bool, want: tuple[str, str] | None) -> None:
    verdict = unqueueable(_wl(), lq, cq, "cq", active)
    assert ((verdict.reason, verdict.message) if verdict else None) == want


def test_pods_ready_deadline_from_admission_then_from_recovery() -> None:
    cfg = WaitForPodsReady(timeout_seconds=60, recovery_timeout_seconds=30)
    admitted = _wl(("Admitted", "True", "Admitted", T0))
    deadline = pods_ready_deadline(admitted, cfg, T0)
    assert deadline is not None
    assert (deadline.due, deadline.cause) == (T0 + 60, "WaitForStart")
    recovering = _wl(("Admitted", "True", "Admitted", T0), ("PodsReady", "False", "WaitForRecovery", T0 + 100))
    deadline = pods_ready_deadline(recovering, cfg, T0)
    assert deadline is not None
    assert (deadline.due, deadline.cause) == (T0 + 130, "WaitForRecovery")
    ready = _wl(("Admitted", "True", "Admitted", T0), ("PodsReady", "True", "Started", T0 + 5))
    assert pods_ready_deadline(ready, cfg, T0) is None
    assert pods_ready_deadline(admitted, WaitForPodsReady(enable=False), T0) is None


def test_max_execution_deadline_subtracts_past_execution() -> None:
    wl = _wl(("Admitted", "True", "Admitted", T0), maximumExecutionTimeSeconds=100)
    wl["status"]["accumulatedPastExecutionTimeSeconds"] = 40
    deadline = max_execution_deadline(wl)
    assert deadline is not None
    assert deadline.due == T0 + 60
    assert max_execution_deadline(_wl(("Admitted", "True", "Admitted", T0))) is None
