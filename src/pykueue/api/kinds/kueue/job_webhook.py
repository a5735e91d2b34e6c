"""Kueue's validating-webhook rules for the labels and annotations users put on jobs.

Owns the checks Kueue's job webhooks make on a managed batch/v1 Job (and the shared ones for any
job kind): the ``queue-name`` label is a DNS subdomain and frozen while the job runs; the
``priority-class`` label cannot be added to a running job nor ever removed; ``max-exec-time-seconds``
is a positive integer frozen unless the job stays suspended; ``job-min-parallelism`` lies in
(0, pod count); ``job-completions-equal-parallelism`` needs an Indexed Job with parallelism ==
completions; ``admission-gated-by`` may only shrink; ``prebuilt-workload-name`` is immutable.
Pure functions: the job integration wires them into an admission hook (``registry`` AdmissionHook).
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta import names
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.lenient_json import dict_or_empty

__all__ = ["job_pod_count", "validate_job_labels", "validate_managed_job"]

QUEUE_NAME = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME = "kueue.x-k8s.io/max-exec-time-seconds"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
COMPLETIONS_EQUAL_PARALLELISM = "kueue.x-k8s.io/job-completions-equal-parallelism"
GATED_BY = "kueue.x-k8s.io/admission-gated-by"
_IMMUTABLE = "field is immutable"


def _meta(obj: JSONDict | None, key: str) -> JSONDict:
    return dict_or_empty(dict_or_empty(dict_or_empty(obj).get("metadata")).get(key)) if obj is not None else {}


def _suspended(obj: JSONDict | None) -> bool:
    return obj is not None and dict_or_empty(obj.get("spec")).get("suspend") is True


def _label_path(key: str) -> str:
    return f"metadata.labels[{key}]"


def _annotation_path(key: str) -> str:
    return f"metadata.annotations[{key}]"


def _int(value: Any) -> int | None:
    try:
        return int(str(value), 10)
    except ValueError:
        return None


def job_pod_count(obj: JSONDict) -> int:
    """A batch Job's pod count as Kueue computes it: min(parallelism, completions), defaults 1/parallelism."""
    spec = dict_or_empty(obj.get("spec"))
    parallelism = spec.get("parallelism")
    parallelism = parallelism if isinstance(parallelism, int) and not isinstance(parallelism, bool) else 1
    completions = spec.get("completions")
    if not isinstance(completions, int) or isinstance(completions, bool):
        return parallelism
    return min(parallelism, completions)


def validate_job_labels(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    """The rules every job kind shares (Kueue's jobframework webhook), on create (``old`` None) and update."""
    labels, annotations = _meta(obj, "labels"), _meta(obj, "annotations")
    errors: list[FieldError] = []
    queue = labels.get(QUEUE_NAME)
    if isinstance(queue, str):
        errors.extend(fe.invalid(_label_path(QUEUE_NAME), queue, msg) for msg in names.dns1123_subdomain_errors(queue))
    max_exec = labels.get(MAX_EXEC_TIME)
    if max_exec is not None:
        seconds = _int(max_exec)
        if seconds is None:
            errors.append(fe.invalid(_label_path(MAX_EXEC_TIME), max_exec, "must be an integer"))
        elif seconds <= 0:
            errors.append(fe.invalid(_label_path(MAX_EXEC_TIME), max_exec, "should be greater than 0"))
    prebuilt = labels.get(PREBUILT, annotations.get(PREBUILT))
    if isinstance(prebuilt, str):
        errors.extend(
            fe.invalid(_label_path(PREBUILT), prebuilt, msg) for msg in names.dns1123_subdomain_errors(prebuilt)
        )
    if old is not None:
        errors.extend(_validate_label_updates(obj, old))
    return errors


def _validate_label_updates(obj: JSONDict, old: JSONDict) -> list[FieldError]:
    labels, old_labels = _meta(obj, "labels"), _meta(old, "labels")
    annotations, old_annotations = _meta(obj, "annotations"), _meta(old, "annotations")
    errors: list[FieldError] = []
    running = not _suspended(old)
    if running and labels.get(QUEUE_NAME) != old_labels.get(QUEUE_NAME):
        errors.append(fe.invalid(_label_path(QUEUE_NAME), labels.get(QUEUE_NAME, ""), _IMMUTABLE))
    if PRIORITY_CLASS in old_labels and PRIORITY_CLASS not in labels:  # Kueue's messages, word for word
        errors.append(
            fe.invalid(_label_path(PRIORITY_CLASS), "", "WorkloadPriorityClass cannot be removed from a workload")
        )
    if PRIORITY_CLASS in labels and PRIORITY_CLASS not in old_labels and running:
        errors.append(
            fe.invalid(
                _label_path(PRIORITY_CLASS),
                labels[PRIORITY_CLASS],
                "WorkloadPriorityClass cannot be added to a non-suspended workload",
            )
        )
    if labels.get(MAX_EXEC_TIME) != old_labels.get(MAX_EXEC_TIME) and not (_suspended(old) and _suspended(obj)):
        errors.append(fe.invalid(_label_path(MAX_EXEC_TIME), labels.get(MAX_EXEC_TIME, ""), _IMMUTABLE))
    old_prebuilt = old_labels.get(PREBUILT, old_annotations.get(PREBUILT))
    if old_prebuilt is not None and labels.get(PREBUILT, annotations.get(PREBUILT)) != old_prebuilt:
        errors.append(fe.invalid(_label_path(PREBUILT), labels.get(PREBUILT, ""), _IMMUTABLE))
    before = {g.strip() for g in str(old_annotations.get(GATED_BY) or "").split(",") if g.strip()}
    after = {g.strip() for g in str(annotations.get(GATED_BY) or "").split(",") if g.strip()}
    if not after <= before:
        errors.append(
            fe.invalid(
                _annotation_path(GATED_BY),
                annotations.get(GATED_BY, ""),
                "gates can only be removed after creation, not added",
            )
        )
    return errors


def validate_managed_job(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    """Shared rules plus the batch/v1 Job annotations (partial admission, completions sync)."""
    errors = validate_job_labels(obj, old)
    annotations = _meta(obj, "annotations")
    minimum = annotations.get(MIN_PARALLELISM)
    if minimum is not None:
        value, count = _int(minimum), job_pod_count(obj)
        if value is None:
            errors.append(fe.invalid(_annotation_path(MIN_PARALLELISM), minimum, "must be an integer"))
        elif not 0 < value < count:
            errors.append(
                fe.invalid(_annotation_path(MIN_PARALLELISM), minimum, f"should be between 0 and {count - 1}")
            )
    if annotations.get(COMPLETIONS_EQUAL_PARALLELISM) == "true":
        spec = dict_or_empty(obj.get("spec"))
        path = _annotation_path(COMPLETIONS_EQUAL_PARALLELISM)
        if spec.get("completionMode") != "Indexed":
            errors.append(fe.invalid(path, "true", "only supported for Indexed Jobs"))
        elif spec.get("parallelism") != spec.get("completions"):
            errors.append(fe.invalid(path, "true", "requires parallelism to equal completions"))
    return errors
