"""Kueue's job label/annotation rules (the keys users set on jobs): one case per rule, exact field path."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pykueue.api.kinds.kueue.job_webhook import job_pod_count, validate_managed_job
from pykueue.testing.builders.raw_specs import job

Q = "kueue.x-k8s.io/queue-name"
PC = "kueue.x-k8s.io/priority-class"
MAX = "kueue.x-k8s.io/max-exec-time-seconds"
MIN = "kueue.x-k8s.io/job-min-parallelism"
SYNC = "kueue.x-k8s.io/job-completions-equal-parallelism"
GATES = "kueue.x-k8s.io/admission-gated-by"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"


def _job(
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    obj = job(**spec)
    obj["metadata"]["labels"] = dict(labels or {})
    obj["metadata"]["annotations"] = dict(annotations or {})
    return obj


CASES = [
    ("bad queue name", _job({Q: "Team_A"}), None, f"metadata.labels[{Q}]", "RFC 1123 subdomain"),
    (
        "queue name frozen while running",
        _job({Q: "b"}, suspend=False),
        _job({Q: "a"}, suspend=False),
        f"metadata.labels[{Q}]",
        "field is immutable",
    ),
    (
        "queue label added to a running job",
        _job({Q: "b"}, suspend=False),
        _job(suspend=False),
        f"metadata.labels[{Q}]",
        "field is immutable",
    ),
    (
        "priority class removed",
        _job(suspend=True),
        _job({PC: "high"}, suspend=True),
        f"metadata.labels[{PC}]",
        "WorkloadPriorityClass cannot be removed from a workload",
    ),
    (
        "priority class added to a running job",
        _job({PC: "high"}, suspend=False),
        _job(suspend=False),
        f"metadata.labels[{PC}]",
        "WorkloadPriorityClass cannot be added to a non-suspended workload",
    ),
    ("max exec time not an integer", _job({MAX: "soon"}), None, f"metadata.labels[{MAX}]", "must be an integer"),
    ("max exec time not positive", _job({MAX: "0"}), None, f"metadata.labels[{MAX}]", "greater than 0"),
    (
        "max exec time frozen once started",
        _job({MAX: "60"}, suspend=False),
        _job({MAX: "30"}, suspend=True),
        f"metadata.labels[{MAX}]",
        "field is immutable",
    ),
    (
        "min parallelism too large",
        _job(annotations={MIN: "3"}, parallelism=3),
        None,
        f"metadata.annotations[{MIN}]",
        "should be between 0 and 2",
    ),
    (
        "min parallelism zero",
        _job(annotations={MIN: "0"}, parallelism=3),
        None,
        f"metadata.annotations[{MIN}]",
        "should be between 0 and 2",
    ),
    (
        "min parallelism garbage",
        _job(annotations={MIN: "two"}, parallelism=3),
        None,
        f"metadata.annotations[{MIN}]",
        "must be an integer",
    ),
    (
        "completions sync needs Indexed",
        _job(annotations={SYNC: "true"}, parallelism=2, completions=2),
        None,
        f"metadata.annotations[{SYNC}]",
        "only supported for Indexed Jobs",
    ),
    (
        "completions sync needs equal counts",
        _job(annotations={SYNC: "true"}, completionMode="Indexed", parallelism=2, completions=4),
        None,
        f"metadata.annotations[{SYNC}]",
        "requires parallelism to equal completions",
    ),
    (
        "gates may only shrink",
        _job(annotations={GATES: "a,b"}),
        _job(annotations={GATES: "a"}),
        f"metadata.annotations[{GATES}]",
        "only be removed",
    ),
    (
        "prebuilt workload name immutable",
        _job({PREBUILT: "wl-2"}),
        _job({PREBUILT: "wl-1"}),
        f"metadata.labels[{PREBUILT}]",
        "field is immutable",
    ),
]


@pytest.mark.parametrize(("name", "obj", "old", "want_field", "want_message"), CASES, ids=[c[0] for c in CASES])
def test_job_rule(
    name: str, obj: dict[str, Any], old: dict[str, Any] | None, want_field: str, want_message: str
) -> None:
    errors = validate_managed_job(copy.deepcopy(obj), copy.deepcopy(old) if old else None)
    matching = [e for e in errors if e.field == want_field]
    assert matching, f"{name}: {errors}"
    assert any(want_message in e.message for e in matching), matching


def test_allowed_changes() -> None:
    # while suspended the queue may change; priority class value may change on a running job
    assert validate_managed_job(_job({Q: "b"}, suspend=True), _job({Q: "a"}, suspend=True)) == []
    assert validate_managed_job(_job({PC: "low"}, suspend=False), _job({PC: "high"}, suspend=False)) == []
    assert validate_managed_job(_job({MAX: "60"}, suspend=True), _job({MAX: "30"}, suspend=True)) == []
    assert validate_managed_job(_job(annotations={GATES: "a"}), _job(annotations={GATES: "a,b"})) == []
    assert validate_managed_job(_job({Q: "user-queue", MAX: "600"}, annotations={MIN: "1"}, parallelism=4), None) == []


def test_pod_count() -> None:
    assert job_pod_count(job()) == 1
    assert job_pod_count(job(parallelism=5)) == 5
    assert job_pod_count(job(parallelism=5, completions=3)) == 3
