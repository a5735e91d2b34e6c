"""Validation of the built-in kinds an install manifest carries (workloads, services, RBAC, webhooks).

Owned by ``api/``. The embedded cluster stores these kinds without acting on them, but refuses what
kube-apiserver refuses for the essentials, with the same field paths: a Deployment or StatefulSet
whose selector does not match its template's labels, a Service port without a port number or with
a duplicate name, an RBAC rule without verbs, a binding whose roleRef is not a Role/ClusterRole,
a webhook without a client config or side-effects class. The schema (types, unknown fields) is
checked before these rules by :mod:`pykueue.api.schema.object_validation`.

Pure functions ``(obj, old) -> [FieldError]``; never raise on user input.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pykueue.api.kinds.core import core_validation
from pykueue.api.meta import field_errors as fe
from pykueue.api.meta import names
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.lenient_json import dict_or_empty, list_or_empty

__all__ = ["RULES"]

_IMMUTABLE = "field is immutable"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_PROTOCOLS = ("TCP", "UDP", "SCTP")


def _non_negative(spec: JSONDict, path: str, *fields: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for name in fields:
        value = spec.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errors.append(fe.invalid(f"{path}.{name}", value, "must be greater than or equal to 0"))
    return errors


def _selected_template(spec: JSONDict, path: str, restart_policies: tuple[str, ...]) -> list[FieldError]:
    """A required, non-empty selector that matches the template's labels, and a valid pod template."""
    errors: list[FieldError] = []
    selector = spec.get("selector")
    template = dict_or_empty(spec.get("template"))
    labels = dict_or_empty(dict_or_empty(template.get("metadata")).get("labels"))
    if not isinstance(selector, dict):
        errors.append(fe.required(f"{path}.selector", ""))
    else:
        errors.extend(names.validate_label_selector(selector, f"{path}.selector"))
        if not dict_or_empty(selector.get("matchLabels")) and not list_or_empty(selector.get("matchExpressions")):
            errors.append(fe.invalid(f"{path}.selector", selector, "empty selector is invalid for deployment"))
        elif not core_validation._selector_matches(selector, labels):
            errors.append(
                fe.invalid(f"{path}.template.metadata.labels", labels, "`selector` does not match template `labels`")
            )
    errors.extend(names.validate_labels(labels, f"{path}.template.metadata.labels"))
    if not template.get("spec"):
        errors.append(fe.required(f"{path}.template.spec.containers", ""))
    else:
        errors.extend(
            core_validation.validate_pod_spec(
                dict_or_empty(template.get("spec")), f"{path}.template.spec", restart_policies=restart_policies
            )
        )
    return errors


def validate_deployment(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = dict_or_empty(obj.get("spec"))
    errors = _selected_template(spec, "spec", ("Always",))
    errors.extend(_non_negative(spec, "spec", "replicas", "minReadySeconds", "revisionHistoryLimit"))
    strategy = dict_or_empty(spec.get("strategy"))
    kind = strategy.get("type")
    if kind is not None and kind not in ("Recreate", "RollingUpdate"):
        errors.append(fe.not_supported("spec.strategy.type", kind, ("Recreate", "RollingUpdate")))
    if kind == "Recreate" and strategy.get("rollingUpdate") is not None:
        errors.append(
            fe.forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")
        )
    if old is not None and dict_or_empty(old.get("spec")).get("selector") != spec.get("selector"):
        errors.append(fe.invalid("spec.selector", spec.get("selector"), _IMMUTABLE))
    return errors


def validate_stateful_set(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = dict_or_empty(obj.get("spec"))
    errors = _selected_template(spec, "spec", ("Always",))
    errors.extend(_non_negative(spec, "spec", "replicas", "minReadySeconds", "revisionHistoryLimit"))
    policy = spec.get("podManagementPolicy")
    if policy is not None and policy not in ("OrderedReady", "Parallel"):
        errors.append(fe.not_supported("spec.podManagementPolicy", policy, ("OrderedReady", "Parallel")))
    if old is not None:
        old_spec = dict_or_empty(old.get("spec"))
        mutable = (
            "replicas",
            "ordinals",
            "template",
            "updateStrategy",
            "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds",
        )
        if any(spec.get(k) != old_spec.get(k) for k in set(spec) | set(old_spec) if k not in mutable):
            errors.append(
                fe.forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', "
                    "'ordinals', 'template', 'updateStrategy', "
                    "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                    "forbidden",
                )
            )
    return errors


def validate_service(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    spec = dict_or_empty(obj.get("spec"))
    errors: list[FieldError] = []
    kind = spec.get("type") or "ClusterIP"
    types = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
    if kind not in types:
        errors.append(fe.not_supported("spec.type", kind, types))
    ports = list_or_empty(spec.get("ports"))
    if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
        errors.append(fe.required("spec.ports", ""))
    if kind == "ExternalName" and not spec.get("externalName"):
        errors.append(fe.required("spec.externalName", ""))
    seen_names: set[str] = set()
    seen_ports: set[tuple[Any, Any]] = set()
    for index, raw in enumerate(ports):
        port, path = dict_or_empty(raw), f"spec.ports[{index}]"
        name = port.get("name")
        if len(ports) > 1 and not name:
            errors.append(fe.required(f"{path}.name", ""))
        elif name:
            if not _DNS_LABEL.match(str(name)):
                errors.append(
                    fe.invalid(
                        f"{path}.name",
                        name,
                        "a lowercase RFC 1123 label must consist of lower "
                        "case alphanumeric characters or '-', and must start and end with an "
                        "alphanumeric character",
                    )
                )
            if name in seen_names:
                errors.append(fe.duplicate(f"{path}.name", name))
            seen_names.add(str(name))
        number = port.get("port")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= 65535:
            errors.append(
                fe.invalid(f"{path}.port", number, "must be between 1 and 65535, inclusive")
                if number is not None
                else fe.required(f"{path}.port", "")
            )
        protocol = port.get("protocol") or "TCP"
        if protocol not in _PROTOCOLS:
            errors.append(fe.not_supported(f"{path}.protocol", protocol, _PROTOCOLS))
        if (number, protocol) in seen_ports:
            errors.append(fe.duplicate(path, {"port": number, "protocol": protocol}))
        seen_ports.add((number, protocol))
        target = port.get("targetPort")
        if isinstance(target, int) and not isinstance(target, bool) and not 0 <= target <= 65535:
            errors.append(fe.invalid(f"{path}.targetPort", target, "must be between 1 and 65535, inclusive"))
    if old is not None:
        old_ip = dict_or_empty(old.get("spec")).get("clusterIP")
        if old_ip and spec.get("clusterIP") not in (None, "", old_ip) and kind != "ExternalName":
            errors.append(fe.invalid("spec.clusterIPs[0]", spec.get("clusterIP"), "may not change once set"))
    return errors


_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def validate_limit_range(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, raw in enumerate(list_or_empty(dict_or_empty(obj.get("spec")).get("limits"))):
        path = f"spec.limits[{index}]"
        kind = dict_or_empty(raw).get("type")
        if not kind:
            errors.append(fe.required(f"{path}.type", ""))
        elif kind not in _LIMIT_TYPES:
            errors.append(fe.not_supported(f"{path}.type", kind, _LIMIT_TYPES))
    return errors


def validate_runtime_class(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    handler = obj.get("handler")
    if not handler:
        return [fe.required("handler", "")]
    if not isinstance(handler, str) or not _DNS_LABEL.match(handler) or len(handler) > 63:
        return [
            fe.invalid(
                "handler",
                handler,
                "a lowercase RFC 1123 label must consist of lower case "
                "alphanumeric characters or '-', and must start and end with an alphanumeric "
                "character",
            )
        ]
    if old is not None and old.get("handler") != handler:
        return [fe.invalid("handler", handler, _IMMUTABLE)]
    return []


def _rules(obj: JSONDict, *, cluster: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, raw in enumerate(list_or_empty(obj.get("rules"))):
        rule, path = dict_or_empty(raw), f"rules[{index}]"
        if not list_or_empty(rule.get("verbs")):
            errors.append(fe.required(f"{path}.verbs", "verbs must contain at least one value"))
        urls = list_or_empty(rule.get("nonResourceURLs"))
        if urls:
            if not cluster:
                errors.append(
                    fe.invalid(f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs")
                )
            if (
                list_or_empty(rule.get("apiGroups"))
                or list_or_empty(rule.get("resources"))
                or list_or_empty(rule.get("resourceNames"))
            ):
                errors.append(
                    fe.invalid(
                        f"{path}.nonResourceURLs",
                        urls,
                        "rules cannot apply to both regular resources and non-resource URLs",
                    )
                )
            continue
        if not list_or_empty(rule.get("apiGroups")):
            errors.append(fe.required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
        if not list_or_empty(rule.get("resources")):
            errors.append(fe.required(f"{path}.resources", "resource rules must supply at least one resource"))
    return errors


def validate_role(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    return _rules(obj, cluster=False)


def validate_cluster_role(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    return _rules(obj, cluster=True)


_SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


def _binding(obj: JSONDict, old: JSONDict | None, *, cluster: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    ref = dict_or_empty(obj.get("roleRef"))
    allowed = ("ClusterRole",) if cluster else ("Role", "ClusterRole")
    if ref.get("apiGroup") != "rbac.authorization.k8s.io":
        errors.append(fe.not_supported("roleRef.apiGroup", ref.get("apiGroup"), ("rbac.authorization.k8s.io",)))
    if ref.get("kind") not in allowed:
        errors.append(fe.not_supported("roleRef.kind", ref.get("kind"), allowed))
    if not ref.get("name"):
        errors.append(fe.required("roleRef.name", ""))
    for index, raw in enumerate(list_or_empty(obj.get("subjects"))):
        subject, path = dict_or_empty(raw), f"subjects[{index}]"
        kind = subject.get("kind")
        if kind not in _SUBJECT_KINDS:
            errors.append(fe.not_supported(f"{path}.kind", kind, _SUBJECT_KINDS))
        if not subject.get("name"):
            errors.append(fe.required(f"{path}.name", ""))
        if kind == "ServiceAccount" and cluster and not subject.get("namespace"):
            errors.append(fe.required(f"{path}.namespace", ""))
    if old is not None and dict_or_empty(old.get("roleRef")) != ref:
        errors.append(fe.invalid("roleRef", ref, "cannot change roleRef"))
    return errors


def validate_role_binding(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    return _binding(obj, old, cluster=False)


def validate_cluster_role_binding(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    return _binding(obj, old, cluster=True)


_SIDE_EFFECTS = ("None", "NoneOnDryRun")
_FAILURE_POLICIES = ("Fail", "Ignore")
_OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")


def _webhooks(obj: JSONDict) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, raw in enumerate(list_or_empty(obj.get("webhooks"))):
        hook, path = dict_or_empty(raw), f"webhooks[{index}]"
        name = hook.get("name")
        if not name:
            errors.append(fe.required(f"{path}.name", ""))
        elif str(name).count(".") < 2:
            errors.append(
                fe.invalid(f"{path}.name", name, "should be a domain with at least three segments separated by dots")
            )
        elif name in seen:
            errors.append(fe.duplicate(f"{path}.name", name))
        seen.add(str(name))
        config = dict_or_empty(hook.get("clientConfig"))
        has_url, has_service = bool(config.get("url")), bool(config.get("service"))
        if has_url == has_service:
            errors.append(fe.required(f"{path}.clientConfig", "exactly one of url or service is required"))
        if has_service:
            service = dict_or_empty(config.get("service"))
            for key in ("namespace", "name"):
                if not service.get(key):
                    errors.append(fe.required(f"{path}.clientConfig.service.{key}", ""))
        if not list_or_empty(hook.get("admissionReviewVersions")):
            errors.append(fe.required(f"{path}.admissionReviewVersions", "must specify one of v1, v1beta1"))
        effects = hook.get("sideEffects")
        if effects not in _SIDE_EFFECTS:
            errors.append(
                fe.not_supported(f"{path}.sideEffects", effects, _SIDE_EFFECTS)
                if effects
                else fe.required(f"{path}.sideEffects", "")
            )
        policy = hook.get("failurePolicy")
        if policy is not None and policy not in _FAILURE_POLICIES:
            errors.append(fe.not_supported(f"{path}.failurePolicy", policy, _FAILURE_POLICIES))
        timeout = hook.get("timeoutSeconds")
        if isinstance(timeout, int) and not 1 <= timeout <= 30:
            errors.append(
                fe.invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds")
            )
        for rule_index, rule in enumerate(list_or_empty(hook.get("rules"))):
            for op_index, op in enumerate(list_or_empty(dict_or_empty(rule).get("operations"))):
                if op not in _OPERATIONS:
                    errors.append(
                        fe.not_supported(f"{path}.rules[{rule_index}].operations[{op_index}]", op, _OPERATIONS)
                    )
    return errors


def validate_webhook_configuration(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    return _webhooks(obj)


_ADDRESS_TYPES = ("IPv4", "IPv6", "FQDN")


def validate_endpoint_slice(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    errors: list[FieldError] = []
    address_type = obj.get("addressType")
    if not address_type:
        errors.append(fe.required("addressType", ""))
    elif address_type not in _ADDRESS_TYPES:
        errors.append(fe.not_supported("addressType", address_type, _ADDRESS_TYPES))
    for index, raw in enumerate(list_or_empty(obj.get("endpoints"))):
        addresses = list_or_empty(dict_or_empty(raw).get("addresses"))
        if not 1 <= len(addresses) <= 100:
            errors.append(
                fe.required(f"endpoints[{index}].addresses", "must contain at least 1 address")
                if not addresses
                else fe.too_many(f"endpoints[{index}].addresses", len(addresses), 100)
            )
    if old is not None and old.get("addressType") != address_type:
        errors.append(fe.invalid("addressType", address_type, _IMMUTABLE))
    return errors


_Rule = Callable[[JSONDict, JSONDict | None], list[FieldError]]

RULES: dict[tuple[str, str], _Rule] = {
    ("apps", "Deployment"): validate_deployment,
    ("apps", "StatefulSet"): validate_stateful_set,
    ("", "Service"): validate_service,
    ("", "LimitRange"): validate_limit_range,
    ("node.k8s.io", "RuntimeClass"): validate_runtime_class,
    ("rbac.authorization.k8s.io", "Role"): validate_role,
    ("rbac.authorization.k8s.io", "ClusterRole"): validate_cluster_role,
    ("rbac.authorization.k8s.io", "RoleBinding"): validate_role_binding,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): validate_cluster_role_binding,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): validate_webhook_configuration,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): validate_webhook_configuration,
    ("discovery.k8s.io", "EndpointSlice"): validate_endpoint_slice,
}
"""Kind rules by (group, kind); ServiceAccount has none beyond its name and schema."""
