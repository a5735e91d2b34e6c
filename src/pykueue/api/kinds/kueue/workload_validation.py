"""Kueue's validating-webhook rules for Workload, on create, update and status update.

Owns what the Workload CRD schema cannot say: the reserved ``pods`` resource and non-negative
quantities in pod templates, the fields frozen while the workload holds a quota reservation
(podSets, queueName, priorityClassRef) or is admitted (maximumExecutionTimeSeconds), the
admission's immutability and its per-pod-set shape, reclaimable pods, admission-check pod-set
updates, MultiKueue cluster names and the priority-boost / admission-gated-by annotations.
Runs on v1beta2 (hub) objects from :mod:`pykueue.api.schema.object_validation`; never raises on bad input.
"""

from __future__ import annotations

import re
from typing import Any

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta import names
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.lenient_json import dict_or_empty, hashable_key, list_or_empty
from pykueue.api.meta.quantity import QuantityError, parse_quantity, to_amount

__all__ = ["validate_workload"]

_ELASTIC = "kueue.x-k8s.io/elastic-job"
_PRIORITY_BOOST = "kueue.x-k8s.io/priority-boost"
_GATED_BY = "kueue.x-k8s.io/admission-gated-by"
_SIGNED_INT = re.compile(r"^[+-]?\d+$")
_IMMUTABLE = "field is immutable"


def has_condition(obj: JSONDict | None, condition_type: str) -> bool:
    if obj is None:
        return False
    return any(
        dict_or_empty(c).get("type") == condition_type and dict_or_empty(c).get("status") == "True"
        for c in list_or_empty(dict_or_empty(obj.get("status")).get("conditions"))
    )


def _validate_resources(resources: JSONDict, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for kind in ("requests", "limits"):
        for name, value in dict_or_empty(resources.get(kind)).items():
            item_path = f"{path}.{kind}[{name}]"
            if name == "pods":
                errors.append(
                    fe.invalid(item_path, name, 'the resource name "pods" is reserved and cannot be requested by a pod')
                )
            try:
                if parse_quantity(value) < 0:
                    errors.append(fe.invalid(item_path, value, "must be greater than or equal to 0"))
            except (QuantityError, TypeError):
                pass  # reported by the schema validator
    return errors


def _validate_pod_sets(spec: JSONDict) -> list[FieldError]:
    errors: list[FieldError] = []
    for pi, pod_set in enumerate(list_or_empty(spec.get("podSets"))):
        template = dict_or_empty(dict_or_empty(pod_set).get("template"))
        errors.extend(
            names.validate_labels(
                dict_or_empty(template.get("metadata")).get("labels"), f"spec.podSets[{pi}].template.metadata.labels"
            )
        )
        pod_spec = dict_or_empty(template.get("spec"))
        for key in ("initContainers", "containers"):
            for ci, container in enumerate(list_or_empty(pod_spec.get(key))):
                resources = dict_or_empty(dict_or_empty(container).get("resources"))
                errors.extend(_validate_resources(resources, f"spec.podSets[{pi}].template.spec.{key}[{ci}].resources"))
        overhead = dict_or_empty(pod_spec.get("overhead"))
        for name, value in overhead.items():
            try:
                if parse_quantity(value) < 0:
                    errors.append(
                        fe.invalid(
                            f"spec.podSets[{pi}].template.spec.overhead[{name}]",
                            value,
                            "must be greater than or equal to 0",
                        )
                    )
            except (QuantityError, TypeError):
                pass
    return errors


def _pod_sets_changed(new: list[Any], old: list[Any], elastic: bool) -> bool:
    if new == old:
        return False
    if not elastic or len(new) != len(old):
        return True
    for n, o in zip(new, old, strict=True):
        n_rest = {k: v for k, v in dict_or_empty(n).items() if k != "count"}
        o_rest = {k: v for k, v in dict_or_empty(o).items() if k != "count"}
        if n_rest != o_rest or dict_or_empty(n).get("count", 1) > dict_or_empty(o).get("count", 1):
            return True
    return False


def _validate_spec_update(obj: JSONDict, old: JSONDict) -> list[FieldError]:
    errors: list[FieldError] = []
    spec, old_spec = dict_or_empty(obj.get("spec")), dict_or_empty(old.get("spec"))
    if has_condition(old, "QuotaReserved"):
        elastic = dict_or_empty(dict_or_empty(obj.get("metadata")).get("annotations")).get(_ELASTIC) == "true"
        if _pod_sets_changed(list_or_empty(spec.get("podSets")), list_or_empty(old_spec.get("podSets")), elastic):
            errors.append(fe.invalid("spec.podSets", "podSets", _IMMUTABLE))
        if (spec.get("queueName") or "") != (old_spec.get("queueName") or ""):
            errors.append(fe.invalid("spec.queueName", spec.get("queueName") or "", _IMMUTABLE))
        ref, old_ref = spec.get("priorityClassRef"), old_spec.get("priorityClassRef")
        if (ref is None) != (old_ref is None):
            errors.append(fe.invalid("spec.priorityClassRef", ref, _IMMUTABLE))
        elif isinstance(ref, dict) and isinstance(old_ref, dict):
            for key in ("group", "kind"):
                if ref.get(key) != old_ref.get(key):
                    errors.append(fe.invalid(f"spec.priorityClassRef.{key}", ref.get(key), _IMMUTABLE))
            if old_ref.get("kind") == "PriorityClass" and ref.get("name") != old_ref.get("name"):
                errors.append(fe.invalid("spec.priorityClassRef.name", ref.get("name"), _IMMUTABLE))
    if has_condition(old, "Admitted") and spec.get("maximumExecutionTimeSeconds") != old_spec.get(
        "maximumExecutionTimeSeconds"
    ):
        errors.append(
            fe.invalid("spec.maximumExecutionTimeSeconds", spec.get("maximumExecutionTimeSeconds"), _IMMUTABLE)
        )
    return errors


def _strip_tas(admission: JSONDict) -> JSONDict:
    out = dict(admission)
    out["podSetAssignments"] = [
        {k: v for k, v in dict_or_empty(a).items() if k not in ("topologyAssignment", "delayedTopologyRequest")}
        for a in list_or_empty(admission.get("podSetAssignments"))
    ]
    return out


def _validate_admission(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    errors: list[FieldError] = []
    status = dict_or_empty(obj.get("status"))
    admission = status.get("admission")
    if has_condition(obj, "QuotaReserved") and admission is None:
        errors.append(fe.required("status.admission", "must be set while the workload holds a quota reservation"))
    if old is not None:
        old_admission = dict_or_empty(old.get("status")).get("admission")
        if admission == old_admission and dict_or_empty(obj.get("spec")).get("podSets") == dict_or_empty(
            old.get("spec")
        ).get("podSets"):
            # what follows reads only the admission and the pod sets: unchanged (every status write
            # after admission, e.g. Finished), they keep the stored object's verdict, which passed
            return errors
        if (
            isinstance(admission, dict)
            and isinstance(old_admission, dict)
            and _strip_tas(admission) != _strip_tas(old_admission)
        ):
            errors.append(fe.invalid("status.admission", "admission", _IMMUTABLE))
    if not isinstance(admission, dict):
        return errors
    pod_set_names = [
        dict_or_empty(p).get("name", "main") for p in list_or_empty(dict_or_empty(obj.get("spec")).get("podSets"))
    ]
    for ai, assignment in enumerate(list_or_empty(admission.get("podSetAssignments"))):
        assignment = dict_or_empty(assignment)
        path = f"status.admission.podSetAssignments[{ai}]"
        name = assignment.get("name", "main")
        if name not in pod_set_names:
            errors.append(fe.invalid(f"{path}.name", name, "must match one of the workload's podSets"))
        count = assignment.get("count")
        for resource, value in dict_or_empty(assignment.get("resourceUsage")).items():
            item_path = f"{path}.resourceUsage[{resource}]"
            try:
                amount = to_amount(str(resource), value)
            except (QuantityError, TypeError):
                continue
            if amount < 0:
                errors.append(fe.invalid(item_path, value, "must be greater than or equal to 0"))
            elif isinstance(count, int) and count > 0 and amount % count != 0:
                errors.append(fe.invalid(item_path, value, f"must be a multiple of count ({count})"))
    return errors


def _validate_reclaimable(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    errors: list[FieldError] = []
    counts = {
        hashable_key(dict_or_empty(p).get("name", "main")): dict_or_empty(p).get("count", 1)
        for p in list_or_empty(dict_or_empty(obj.get("spec")).get("podSets"))
    }
    old_counts: dict[Any, Any] = {}
    if old is not None and has_condition(old, "QuotaReserved"):
        old_counts = {
            hashable_key(dict_or_empty(r).get("name")): dict_or_empty(r).get("count", 0)
            for r in list_or_empty(dict_or_empty(old.get("status")).get("reclaimablePods"))
        }
    for ri, item in enumerate(list_or_empty(dict_or_empty(obj.get("status")).get("reclaimablePods"))):
        item = dict_or_empty(item)
        name, count = hashable_key(item.get("name")), item.get("count", 0)
        path = f"status.reclaimablePods[{ri}]"
        if name not in counts:
            errors.append(FieldError(f"{path}.name", f"Not found: {fe.render_value(name)}", "FieldValueNotFound"))
            continue
        if isinstance(count, int) and isinstance(counts[name], int) and count > counts[name]:
            errors.append(fe.invalid(f"{path}.count", count, f"should be less or equal to {counts[name]}"))
        previous = old_counts.get(name)
        if isinstance(previous, int) and isinstance(count, int) and count < previous:
            errors.append(
                fe.invalid(
                    f"{path}.count",
                    count,
                    f"cannot be less than {previous} while the workload holds a quota reservation",
                )
            )
    if has_condition(old, "QuotaReserved"):
        new_names = {
            hashable_key(dict_or_empty(r).get("name"))
            for r in list_or_empty(dict_or_empty(obj.get("status")).get("reclaimablePods"))
        }
        for name in old_counts:
            if name not in new_names:
                errors.append(
                    fe.forbidden(
                        "status.reclaimablePods", f"cannot remove {name!r} while the workload holds a quota reservation"
                    )
                )
    return errors


def _validate_admission_checks(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    if old is None:
        return []
    old_checks = {
        hashable_key(dict_or_empty(c).get("name")): dict_or_empty(c)
        for c in list_or_empty(dict_or_empty(old.get("status")).get("admissionChecks"))
    }
    errors: list[FieldError] = []
    for ci, check in enumerate(list_or_empty(dict_or_empty(obj.get("status")).get("admissionChecks"))):
        check = dict_or_empty(check)
        previous = old_checks.get(hashable_key(check.get("name")))
        if (
            previous
            and previous.get("state") == "Ready"
            and check.get("state") == "Ready"
            and previous.get("podSetUpdates") != check.get("podSetUpdates")
        ):
            errors.append(
                fe.invalid(
                    f"status.admissionChecks[{ci}].podSetUpdates",
                    "podSetUpdates",
                    "cannot change when the admission check state is Ready",
                )
            )
    return errors


def _validate_cluster_names(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    status = dict_or_empty(obj.get("status"))
    cluster, nominated = status.get("clusterName"), status.get("nominatedClusterNames")
    errors: list[FieldError] = []
    if cluster and nominated:
        errors.append(fe.forbidden("status", "clusterName and nominatedClusterNames are mutually exclusive"))
    if old is not None:
        old_status = dict_or_empty(old.get("status"))
        old_cluster = old_status.get("clusterName")
        if old_cluster and cluster and cluster != old_cluster:
            errors.append(fe.invalid("status.clusterName", cluster, _IMMUTABLE))
        old_nominated = list_or_empty(old_status.get("nominatedClusterNames"))
        if cluster and not old_cluster and old_nominated and cluster not in old_nominated:
            errors.append(
                fe.invalid("status.clusterName", cluster, "must be one of the previously nominated cluster names")
            )
    return errors


def _validate_annotations(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    annotations = dict_or_empty(dict_or_empty(obj.get("metadata")).get("annotations"))
    errors: list[FieldError] = []
    boost = annotations.get(_PRIORITY_BOOST)
    if boost is not None and not _SIGNED_INT.match(str(boost)):
        errors.append(fe.invalid(f"metadata.annotations[{_PRIORITY_BOOST}]", boost, "must be a signed integer"))
    if old is not None:
        old_gates = dict_or_empty(dict_or_empty(old.get("metadata")).get("annotations")).get(_GATED_BY)
        new_gates = annotations.get(_GATED_BY)
        before = {g.strip() for g in str(old_gates or "").split(",") if g.strip()}
        after = {g.strip() for g in str(new_gates or "").split(",") if g.strip()}
        if not after <= before:
            errors.append(
                fe.invalid(
                    f"metadata.annotations[{_GATED_BY}]",
                    new_gates or "",
                    "gates can only be removed after creation, not added",
                )
            )
    return errors


def validate_workload(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = dict_or_empty(obj.get("spec"))
    # the pod-set rules read only the spec: an unchanged spec (every status write) gets the stored
    # object's verdict, which passed them
    errors = _validate_pod_sets(spec) if old is None or dict_or_empty(old.get("spec")) != spec else []
    if old is not None:
        errors.extend(_validate_spec_update(obj, old))
    errors.extend(_validate_admission(obj, old))
    errors.extend(_validate_reclaimable(obj, old))
    errors.extend(_validate_admission_checks(obj, old))
    errors.extend(_validate_cluster_names(obj, old))
    errors.extend(_validate_annotations(obj, old))
    return errors
