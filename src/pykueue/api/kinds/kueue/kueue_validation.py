"""Kueue's validating-webhook rules for ClusterQueue, Cohort and ResourceFlavor.

Owns the rules the CRD schema cannot express: quota sizes and non-negativity, the order of
``resources`` against ``coveredResources``, flavors and resources appearing in one group only,
borrowing/lending limits needing a cohort (or a parent), ``lendingLimit ≤ nominalQuota``,
fair-sharing weights, admission-check ``onFlavors``, ``concurrentAdmissionPolicy``, and label /
taint / toleration syntax. Runs on v1beta2 (hub) objects, after the schema validator, from
:mod:`pykueue.api.schema.object_validation`. Never raises on bad input.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta import names
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.lenient_json import hashable_key
from pykueue.api.meta.quantity import QuantityError, parse_quantity

__all__ = ["validate_cluster_queue", "validate_cohort", "validate_resource_flavor"]

_MAX_FLAVORS = 256
_MAX_RESOURCES = 256
_MAX_FLAVOR_RESOURCES_PER_GROUP = 512
_MIN_WEIGHT = Decimal("1e-9")


def _quantity(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError):
        return None  # the schema validator already reported it


def _non_negative(value: Any, path: str) -> list[FieldError]:
    amount = _quantity(value)
    if amount is not None and amount < 0:
        return [fe.invalid(path, value, "must be greater than or equal to 0")]
    return []


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _as_dict(value: Any) -> JSONDict:
    return value if isinstance(value, dict) else {}


def validate_resource_groups(
    groups: Any, path: str, *, has_parent: bool, parent_word: str, check_lending_vs_nominal: bool
) -> list[FieldError]:
    """Shared by ClusterQueue (parent = cohort) and Cohort (parent = parentName)."""
    errors: list[FieldError] = []
    seen_flavors: set[str] = set()
    seen_resources: set[str] = set()
    total_flavors = 0
    total_resources = 0
    for gi, group in enumerate(_as_list(groups)):
        group = _as_dict(group)
        group_path = f"{path}[{gi}]"
        covered = [r for r in _as_list(group.get("coveredResources")) if isinstance(r, str)]
        flavors = [_as_dict(f) for f in _as_list(group.get("flavors"))]
        total_flavors += len(flavors)
        total_resources += len(covered)
        if len(flavors) * len(covered) > _MAX_FLAVOR_RESOURCES_PER_GROUP:
            errors.append(fe.too_many(group_path, len(flavors) * len(covered), _MAX_FLAVOR_RESOURCES_PER_GROUP))
        for ri, resource in enumerate(covered):
            resource_path = f"{group_path}.coveredResources[{ri}]"
            errors.extend(fe.invalid(resource_path, resource, msg) for msg in names.qualified_name_errors(resource))
            if resource in seen_resources:
                errors.append(fe.duplicate(resource_path, resource))
            seen_resources.add(resource)
        for fi, flavor in enumerate(flavors):
            flavor_path = f"{group_path}.flavors[{fi}]"
            name = flavor.get("name")
            if isinstance(name, str):
                if name in seen_flavors:
                    errors.append(fe.duplicate(f"{flavor_path}.name", name))
                seen_flavors.add(name)
            for qi, quota in enumerate(_as_list(flavor.get("resources"))):
                quota = _as_dict(quota)
                quota_path = f"{flavor_path}.resources[{qi}]"
                if qi < len(covered) and quota.get("name") != covered[qi]:
                    expected = fe.render_value(covered[qi])
                    errors.append(
                        fe.invalid(
                            f"{quota_path}.name",
                            quota.get("name"),
                            f"must match the name in coveredResources[{qi}] ({expected})",
                        )
                    )
                errors.extend(
                    _validate_quota(
                        quota,
                        quota_path,
                        has_parent=has_parent,
                        parent_word=parent_word,
                        check_lending_vs_nominal=check_lending_vs_nominal,
                    )
                )
    if total_flavors > _MAX_FLAVORS:
        errors.append(fe.too_many(path, total_flavors, _MAX_FLAVORS))
    if total_resources > _MAX_RESOURCES:
        errors.append(fe.too_many(path, total_resources, _MAX_RESOURCES))
    return errors


def _validate_quota(
    quota: JSONDict, path: str, *, has_parent: bool, parent_word: str, check_lending_vs_nominal: bool
) -> list[FieldError]:
    errors: list[FieldError] = []
    for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
        errors.extend(_non_negative(quota.get(key), f"{path}.{key}"))
    for key in ("borrowingLimit", "lendingLimit"):
        if quota.get(key) is not None and not has_parent:
            errors.append(fe.invalid(f"{path}.{key}", quota[key], f"must be nil when {parent_word} is empty"))
    if check_lending_vs_nominal:
        lending = _quantity(quota.get("lendingLimit"))
        nominal = _quantity(quota.get("nominalQuota"))
        if lending is not None and nominal is not None and lending > nominal:
            errors.append(
                fe.invalid(
                    f"{path}.lendingLimit", quota.get("lendingLimit"), "must be less than or equal to the nominalQuota"
                )
            )
    return errors


def validate_fair_sharing(fair: Any, path: str) -> list[FieldError]:
    weight = _as_dict(fair).get("weight")
    amount = _quantity(weight)
    if amount is None:
        return []
    if amount < 0:
        return [fe.invalid(f"{path}.weight", weight, "must be greater than or equal to 0")]
    if 0 < amount <= _MIN_WEIGHT:
        return [fe.invalid(f"{path}.weight", weight, "must be greater than 1e-9 (or exactly 0)")]
    return []


def _flavor_names(spec: JSONDict) -> list[str]:
    return [
        str(_as_dict(f).get("name"))
        for g in _as_list(spec.get("resourceGroups"))
        for f in _as_list(_as_dict(g).get("flavors"))
    ]


def _validate_on_flavors(spec: JSONDict, old_spec: JSONDict | None) -> list[FieldError]:
    errors: list[FieldError] = []
    flavors = set(_flavor_names(spec))
    rules = _as_list(_as_dict(spec.get("admissionChecksStrategy")).get("admissionChecks"))
    old_rules = {}
    if old_spec is not None:
        old_rules = {
            hashable_key(_as_dict(r).get("name")): r
            for r in _as_list(_as_dict(old_spec.get("admissionChecksStrategy")).get("admissionChecks"))
        }
    for ri, rule in enumerate(rules):
        rule = _as_dict(rule)
        if old_spec is not None and old_rules.get(hashable_key(rule.get("name"))) == rule:
            continue  # unchanged rules are not re-checked on update (Kueue's default)
        for fi, flavor in enumerate(_as_list(rule.get("onFlavors"))):
            if hashable_key(flavor) not in flavors:
                errors.append(
                    fe.invalid(
                        f"spec.admissionChecksStrategy.admissionChecks[{ri}].onFlavors[{fi}]",
                        flavor,
                        "must be one of the ClusterQueue's flavors",
                    )
                )
    return errors


def _validate_concurrent_admission(spec: JSONDict, old_spec: JSONDict | None) -> list[FieldError]:
    policy = spec.get("concurrentAdmissionPolicy")
    path = "spec.concurrentAdmissionPolicy"
    errors: list[FieldError] = []
    if old_spec is not None and old_spec.get("concurrentAdmissionPolicy") != policy:
        errors.append(fe.invalid(path, policy, "field is immutable"))
    if policy is None:
        return errors
    groups = _as_list(spec.get("resourceGroups"))
    if len(groups) != 1:
        errors.append(fe.invalid(path, policy, "requires exactly one resource group"))
    elif len(_as_list(_as_dict(groups[0]).get("flavors"))) > 16:
        errors.append(fe.invalid(path, policy, "requires at most 16 flavors in the resource group"))
    if spec.get("queueingStrategy") == "StrictFIFO":
        errors.append(fe.invalid(path, policy, "cannot be used with the StrictFIFO queueingStrategy"))
    migration = _as_dict(_as_dict(policy).get("migration"))
    last = _as_dict(migration.get("constraints")).get("lastAcceptableFlavorName")
    if last is not None:
        last_path = f"{path}.migration.constraints.lastAcceptableFlavorName"
        if migration.get("mode") != "TryPreferredFlavors":
            errors.append(fe.invalid(last_path, last, "can only be set when mode is TryPreferredFlavors"))
        elif last not in _flavor_names(spec):
            errors.append(fe.invalid(last_path, last, "must be one of the ClusterQueue's flavors"))
    return errors


def validate_cluster_queue(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = _as_dict(obj.get("spec"))
    old_spec = _as_dict(old.get("spec")) if old is not None else None
    has_cohort = bool(spec.get("cohortName"))
    errors = validate_resource_groups(
        spec.get("resourceGroups"),
        "spec.resourceGroups",
        has_parent=has_cohort,
        parent_word="cohortName",
        check_lending_vs_nominal=True,
    )
    errors.extend(names.validate_label_selector(spec.get("namespaceSelector"), "spec.namespaceSelector"))
    errors.extend(validate_fair_sharing(spec.get("fairSharing"), "spec.fairSharing"))
    errors.extend(_validate_on_flavors(spec, old_spec))
    errors.extend(_validate_concurrent_admission(spec, old_spec))
    return errors


def validate_cohort(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = _as_dict(obj.get("spec"))
    has_parent = bool(spec.get("parentName"))
    errors = validate_resource_groups(
        spec.get("resourceGroups"),
        "spec.resourceGroups",
        has_parent=has_parent,
        parent_word="parent",
        check_lending_vs_nominal=False,
    )
    errors.extend(validate_fair_sharing(spec.get("fairSharing"), "spec.fairSharing"))
    name = _as_dict(obj.get("metadata")).get("name")
    if name and spec.get("parentName") == name:
        errors.append(fe.invalid("spec.parentName", name, "cannot be the Cohort itself"))
    return errors


def validate_resource_flavor(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = _as_dict(obj.get("spec"))
    errors = names.validate_labels(spec.get("nodeLabels"), "spec.nodeLabels")
    seen: set[tuple[Any, Any]] = set()
    for index, taint in enumerate(_as_list(spec.get("nodeTaints"))):
        taint = _as_dict(taint)
        path = f"spec.nodeTaints[{index}]"
        key = taint.get("key")
        if isinstance(key, str):
            errors.extend(fe.invalid(f"{path}.key", key, msg) for msg in names.qualified_name_errors(key))
        value = taint.get("value")
        if isinstance(value, str):
            errors.extend(fe.invalid(f"{path}.value", value, msg) for msg in names.label_value_errors(value))
        marker = (hashable_key(key), hashable_key(taint.get("effect")))
        if marker in seen:
            errors.append(fe.duplicate(path, {"key": key, "effect": taint.get("effect")}))
        seen.add(marker)
    for index, toleration in enumerate(_as_list(spec.get("tolerations"))):
        key = _as_dict(toleration).get("key")
        if isinstance(key, str) and key:
            errors.extend(
                fe.invalid(f"spec.tolerations[{index}].key", key, msg) for msg in names.qualified_name_errors(key)
            )
    return errors
