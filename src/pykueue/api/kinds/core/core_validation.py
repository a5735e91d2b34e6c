"""Validation of the built-in kinds beyond their schema, worded as kube-apiserver words it.

Owns the Pod / PodSpec rules (container names and images, restart policy, requests ≤ limits,
non-negative quantities, what a pod update may change), batch/v1 Job rules (restart policy
Never/OnFailure, non-negative counters, Indexed completions, selector vs template labels, the
fields that are immutable and the scheduling directives that may change only while the Job is
suspended and not started — what Kueue relies on), PriorityClass and Namespace rules. Called by
:mod:`pykueue.api.schema.object_validation` after the structural schema check.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta import names
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.lenient_json import dict_or_empty, hashable_key, list_or_empty
from pykueue.api.meta.quantity import QuantityError, parse_quantity

__all__ = ["validate_job", "validate_jobset", "validate_pod", "validate_pod_spec", "validate_priority_class"]

_IMMUTABLE = "field is immutable"
_HIGHEST_USER_PRIORITY = 1_000_000_000
_SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}
_SCHEDULING_DIRECTIVES = ("nodeSelector", "tolerations", "affinity", "schedulingGates")


def _validate_container_resources(resources: JSONDict, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    parsed: dict[str, dict[str, Any]] = {"requests": {}, "limits": {}}
    for kind in ("requests", "limits"):
        for name, value in dict_or_empty(resources.get(kind)).items():
            try:
                amount = parse_quantity(value)
            except (QuantityError, TypeError):
                continue  # the schema validator reports the syntax
            parsed[kind][name] = amount
            if amount < 0:
                errors.append(fe.invalid(f"{path}.{kind}[{name}]", value, "must be greater than or equal to 0"))
    for name, request in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is not None and request > limit:
            errors.append(
                fe.invalid(
                    f"{path}.requests",
                    resources["requests"][name],
                    f"must be less than or equal to {name} limit of {resources['limits'][name]}",
                )
            )
    return errors


def validate_pod_spec(
    spec: JSONDict, path: str, *, restart_policies: tuple[str, ...] = ("Always", "OnFailure", "Never")
) -> list[FieldError]:
    errors: list[FieldError] = []
    containers = list_or_empty(spec.get("containers"))
    if "containers" in spec and not containers:
        errors.append(fe.required(f"{path}.containers"))
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for index, container in enumerate(list_or_empty(spec.get(key))):
            container = dict_or_empty(container)
            c_path = f"{path}.{key}[{index}]"
            name = container.get("name")
            if isinstance(name, str) and name:
                errors.extend(fe.invalid(f"{c_path}.name", name, msg) for msg in names.dns1123_label_errors(name))
                if name in seen:
                    errors.append(fe.duplicate(f"{c_path}.name", name))
                seen.add(name)
            if not container.get("image"):
                errors.append(fe.required(f"{c_path}.image"))
            for pi, port in enumerate(list_or_empty(container.get("ports"))):
                number = dict_or_empty(port).get("containerPort")
                if isinstance(number, int) and not 1 <= number <= 65535:
                    errors.append(
                        fe.invalid(
                            f"{c_path}.ports[{pi}].containerPort", number, "must be between 1 and 65535, inclusive"
                        )
                    )

            errors.extend(
                _validate_container_resources(dict_or_empty(container.get("resources")), f"{c_path}.resources")
            )
    errors.extend(_validate_volumes(spec, path))
    policy = spec.get("restartPolicy")
    if policy is None or policy == "":
        if restart_policies != ("Always", "OnFailure", "Never"):
            errors.append(
                fe.required(f"{path}.restartPolicy", "valid values: " + ", ".join(f'"{p}"' for p in restart_policies))
            )
    elif policy not in restart_policies:
        errors.append(fe.not_supported(f"{path}.restartPolicy", policy, restart_policies))
    for key in ("terminationGracePeriodSeconds", "activeDeadlineSeconds"):
        value = spec.get(key)
        if isinstance(value, int) and value < (1 if key == "activeDeadlineSeconds" else 0):
            bound = "greater than 0" if key == "activeDeadlineSeconds" else "greater than or equal to 0"
            errors.append(fe.invalid(f"{path}.{key}", value, f"must be {bound}"))
    errors.extend(names.validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector"))
    return errors


def _validate_volumes(spec: JSONDict, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    volumes: set[Any] = set()
    for index, volume in enumerate(list_or_empty(spec.get("volumes"))):
        name = hashable_key(dict_or_empty(volume).get("name"))
        if name in volumes:
            errors.append(fe.duplicate(f"{path}.volumes[{index}].name", name))
        volumes.add(name)
    for key in ("initContainers", "containers"):
        for ci, container in enumerate(list_or_empty(spec.get(key))):
            for mi, mount in enumerate(list_or_empty(dict_or_empty(container).get("volumeMounts"))):
                name = hashable_key(dict_or_empty(mount).get("name"))
                if name not in volumes:
                    errors.append(
                        FieldError(
                            f"{path}.{key}[{ci}].volumeMounts[{mi}].name",
                            f"Not found: {fe.render_value(name)}",
                            "FieldValueNotFound",
                        )
                    )
    return errors


def validate_pod(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = dict_or_empty(obj.get("spec"))
    errors = validate_pod_spec(spec, "spec")
    if old is not None:
        old_spec = dict_or_empty(old.get("spec"))

        # A pod still held by scheduling gates may gain nodeSelector entries (KEP-3838, GA in 1.30):
        # that is how Kueue injects a flavor's node labels into a gated pod before releasing it.
        gated = bool(list_or_empty(old_spec.get("schedulingGates")))
        mutable = ("activeDeadlineSeconds", "tolerations", "schedulingGates", "nodeName") + (
            ("nodeSelector",) if gated else ()
        )

        def comparable(s: JSONDict, other: JSONDict) -> JSONDict:
            out = {k: v for k, v in s.items() if k not in mutable}
            out["containers"] = [
                {k: v for k, v in dict_or_empty(c).items() if k != "image"} for c in list_or_empty(s.get("containers"))
            ]
            out["initContainers"] = [
                {k: v for k, v in dict_or_empty(c).items() if k != "image"}
                for c in list_or_empty(s.get("initContainers"))
            ]
            return out

        if comparable(spec, old_spec) != comparable(old_spec, spec):
            errors.append(
                fe.forbidden(
                    "spec",
                    "pod updates may not change fields other than "
                    "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                    "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it "
                    "to be set to 1 if it was previously negative)",
                )
            )
        if gated:
            old_selector, new_selector = (
                dict_or_empty(old_spec.get("nodeSelector")),
                dict_or_empty(spec.get("nodeSelector")),
            )
            if any(new_selector.get(key) != value for key, value in old_selector.items()):
                errors.append(
                    fe.forbidden(
                        "spec.nodeSelector",
                        "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                    )
                )
        if old_spec.get("nodeName") and spec.get("nodeName") != old_spec.get("nodeName"):
            errors.append(fe.invalid("spec.nodeName", spec.get("nodeName"), _IMMUTABLE))
        old_gates = {hashable_key(dict_or_empty(g).get("name")) for g in list_or_empty(old_spec.get("schedulingGates"))}
        new_gates = {hashable_key(dict_or_empty(g).get("name")) for g in list_or_empty(spec.get("schedulingGates"))}
        if not new_gates <= old_gates:
            errors.append(
                fe.forbidden("spec.schedulingGates", "only deletion is allowed, but found new scheduling gate")
            )
    return errors


def _selector_matches(selector: JSONDict, labels: JSONDict) -> bool:
    for label, value in dict_or_empty(selector.get("matchLabels")).items():
        if labels.get(label) != value:
            return False
    for raw in list_or_empty(selector.get("matchExpressions")):
        expr = dict_or_empty(raw)
        key, op, values = str(expr.get("key")), expr.get("operator"), list_or_empty(expr.get("values"))
        present = key in labels
        if (
            (op == "In" and (not present or labels[key] not in values))
            or (op == "NotIn" and present and labels[key] in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True


def validate_job(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = dict_or_empty(obj.get("spec"))
    template = dict_or_empty(spec.get("template"))
    errors: list[FieldError] = []
    if not template.get("spec"):
        errors.append(fe.required("spec.template.spec.containers"))
    errors.extend(
        validate_pod_spec(
            dict_or_empty(template.get("spec")), "spec.template.spec", restart_policies=("OnFailure", "Never")
        )
    )
    errors.extend(
        names.validate_labels(dict_or_empty(template.get("metadata")).get("labels"), "spec.template.metadata.labels")
    )
    for key in (
        "parallelism",
        "completions",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ):
        value = spec.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errors.append(fe.invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and deadline <= 0:
        errors.append(fe.invalid("spec.activeDeadlineSeconds", deadline, "must be greater than 0"))
    errors.extend(_validate_job_policies(spec, dict_or_empty(template.get("spec"))))
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errors.append(fe.not_supported("spec.completionMode", mode, ("NonIndexed", "Indexed")))
    if mode == "Indexed" and spec.get("completions") is None:
        errors.append(fe.required("spec.completions", "when completion mode is Indexed"))
    selector = spec.get("selector")
    if isinstance(selector, dict):
        errors.extend(names.validate_label_selector(selector, "spec.selector"))
        labels = dict_or_empty(dict_or_empty(template.get("metadata")).get("labels"))
        if not _selector_matches(selector, labels):
            errors.append(
                fe.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")
            )
    if old is not None:
        errors.extend(_validate_job_update(spec, dict_or_empty(old.get("spec")), dict_or_empty(old.get("status"))))
    return errors


def _validate_job_policies(spec: JSONDict, pod_spec: JSONDict) -> list[FieldError]:
    """backoffLimitPerIndex / maxFailedIndexes / successPolicy need Indexed Jobs; podFailurePolicy needs Never."""
    errors: list[FieldError] = []
    indexed = spec.get("completionMode") == "Indexed"
    if spec.get("backoffLimitPerIndex") is not None and not indexed:
        errors.append(
            fe.invalid("spec.backoffLimitPerIndex", spec["backoffLimitPerIndex"], "requires indexed completion mode")
        )
    max_failed = spec.get("maxFailedIndexes")
    if max_failed is not None:
        if spec.get("backoffLimitPerIndex") is None:
            errors.append(
                fe.invalid("spec.maxFailedIndexes", max_failed, "cannot be set when backoffLimitPerIndex is nil")
            )
        completions = spec.get("completions")
        if isinstance(max_failed, int) and isinstance(completions, int) and max_failed > completions:
            errors.append(fe.invalid("spec.maxFailedIndexes", max_failed, "must be less than or equal to completions"))
    if spec.get("successPolicy") is not None and not indexed:
        errors.append(fe.invalid("spec.successPolicy", "successPolicy", "requires indexed completion mode"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in ("TerminatingOrFailed", "Failed"):
        errors.append(fe.not_supported("spec.podReplacementPolicy", replacement, ("TerminatingOrFailed", "Failed")))
    if spec.get("podFailurePolicy") is not None:
        if pod_spec.get("restartPolicy") not in (None, "Never"):
            errors.append(
                fe.invalid(
                    "spec.template.spec.restartPolicy",
                    pod_spec.get("restartPolicy"),
                    'only "Never" is supported when podFailurePolicy is specified',
                )
            )
        if replacement not in (None, "Failed"):
            errors.append(fe.not_supported("spec.podReplacementPolicy", replacement, ("Failed",)))
    managed_by = spec.get("managedBy")
    if isinstance(managed_by, str) and len(managed_by) > 63:
        errors.append(fe.too_long("spec.managedBy", 63))
    return errors


def _validate_job_update(spec: JSONDict, old_spec: JSONDict, old_status: JSONDict) -> list[FieldError]:
    errors: list[FieldError] = []
    for key in (
        "selector",
        "completionMode",
        "manualSelector",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
    ):
        if spec.get(key) != old_spec.get(key):
            errors.append(fe.invalid(f"spec.{key}", spec.get(key), _IMMUTABLE))
    if spec.get("completions") != old_spec.get("completions") and not (
        spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")
    ):
        errors.append(fe.invalid("spec.completions", spec.get("completions"), _IMMUTABLE))
    template, old_template = dict_or_empty(spec.get("template")), dict_or_empty(old_spec.get("template"))
    if template == old_template:
        return errors
    mutable = bool(old_spec.get("suspend")) and not old_status.get("startTime")
    pod, old_pod = dict_or_empty(template.get("spec")), dict_or_empty(old_template.get("spec"))
    rest = {k: v for k, v in pod.items() if k not in _SCHEDULING_DIRECTIVES}
    old_rest = {k: v for k, v in old_pod.items() if k not in _SCHEDULING_DIRECTIVES}
    meta_changed = template.get("metadata") != old_template.get("metadata")
    directives_changed = any(pod.get(k) != old_pod.get(k) for k in _SCHEDULING_DIRECTIVES)
    if rest != old_rest or ((meta_changed or directives_changed) and not mutable):
        errors.append(fe.invalid("spec.template", "template", _IMMUTABLE))
    return errors


def validate_priority_class(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    errors: list[FieldError] = []
    name = str(dict_or_empty(obj.get("metadata")).get("name") or "")
    value = obj.get("value")
    if value is None:
        errors.append(fe.required("value"))
    elif isinstance(value, int) and name not in _SYSTEM_PRIORITY_CLASSES:
        if value > _HIGHEST_USER_PRIORITY:
            errors.append(fe.invalid("value", value, f"must be less than or equal to {_HIGHEST_USER_PRIORITY}"))
        if name.startswith("system-"):
            errors.append(
                fe.forbidden(
                    "metadata.name", "priority class names with 'system-' prefix are reserved for system use only"
                )
            )
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        errors.append(fe.not_supported("preemptionPolicy", policy, ("PreemptLowerPriority", "Never")))
    if old is not None:
        if obj.get("value") != old.get("value"):
            errors.append(fe.forbidden("value", "may not be changed in an update."))
        if obj.get("preemptionPolicy") != old.get("preemptionPolicy"):
            errors.append(fe.invalid("preemptionPolicy", policy, _IMMUTABLE))
    return errors


def validate_jobset(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    """Each replicated Job's pod template follows the batch Job rules; names fit into pod names."""
    errors: list[FieldError] = []
    name = str(dict_or_empty(obj.get("metadata")).get("name") or "")
    for index, replicated in enumerate(list_or_empty(dict_or_empty(obj.get("spec")).get("replicatedJobs"))):
        replicated = dict_or_empty(replicated)
        path = f"spec.replicatedJobs[{index}]"
        job_name = f"{name}-{replicated.get('name', '')}-0"
        if name and len(job_name) > 63:
            errors.append(
                fe.invalid(
                    f"{path}.name",
                    replicated.get("name"),
                    f"JobSet name and replicated job name together are too long: child Job "
                    f"name {job_name!r} must be no more than 63 characters",
                )
            )
        template = dict_or_empty(dict_or_empty(dict_or_empty(replicated.get("template")).get("spec")).get("template"))
        errors.extend(
            validate_pod_spec(
                dict_or_empty(template.get("spec")),
                f"{path}.template.spec.template.spec",
                restart_policies=("OnFailure", "Never"),
            )
        )
    return errors
