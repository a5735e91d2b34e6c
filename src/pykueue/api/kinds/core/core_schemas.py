"""OpenAPI v3 schemas of the built-in kinds, derived from the official Kubernetes client's models.

Owns the translation of ``kubernetes.client`` model classes (pydantic models carrying
``openapi_types``, ``attribute_map`` and per-field descriptions) into structural, ``$ref``-free
JSON schemas. Called through :mod:`pykueue.api.schema.lazy_schemas` (kubectl explain, unknown-field detection,
type validation) and by :mod:`pykueue.api.kinds.kueue.kueue_schemas` for the PodTemplateSpec that Workloads and
JobSets embed.

Invariant: every object node lists its ``properties`` (so unknown fields are detectable) and has a
description when the client documents one; quantities are int-or-string with Kubernetes' pattern.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from pykueue.api.kinds.core.merge_keys import merge_keys_for
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy

__all__ = ["QUANTITY_PATTERN", "model_schema", "quantity_schema", "schema", "shared_model_schema"]

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)"
    r"|(\.[0-9]+))))?$"
)

_MANIFEST_KINDS: dict[tuple[str, str, str], str] = {
    ("apps", "v1", "Deployment"): "V1Deployment",
    ("apps", "v1", "StatefulSet"): "V1StatefulSet",
    ("", "v1", "Service"): "V1Service",
    ("", "v1", "ServiceAccount"): "V1ServiceAccount",
    ("", "v1", "LimitRange"): "V1LimitRange",
    ("node.k8s.io", "v1", "RuntimeClass"): "V1RuntimeClass",
    ("rbac.authorization.k8s.io", "v1", "Role"): "V1Role",
    ("rbac.authorization.k8s.io", "v1", "RoleBinding"): "V1RoleBinding",
    ("rbac.authorization.k8s.io", "v1", "ClusterRole"): "V1ClusterRole",
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"): "V1ClusterRoleBinding",
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"): "V1MutatingWebhookConfiguration",
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"): "V1ValidatingWebhookConfiguration",
    ("discovery.k8s.io", "v1", "EndpointSlice"): "V1EndpointSlice",
    ("events.k8s.io", "v1", "Event"): "EventsV1Event",
}
"""The built-in kinds an install manifest carries (:mod:`pykueue.api.kinds.core.builtin_kinds`):
(group, version, kind) -> the ``kubernetes.client`` model class its schema is read from."""


_KINDS: dict[tuple[str, str, str], str] = {
    ("", "v1", "Namespace"): "V1Namespace",
    ("", "v1", "Pod"): "V1Pod",
    ("", "v1", "Node"): "V1Node",
    ("", "v1", "Event"): "CoreV1Event",
    ("", "v1", "ConfigMap"): "V1ConfigMap",
    ("", "v1", "Secret"): "V1Secret",
    ("", "v1", "PodTemplate"): "V1PodTemplate",
    ("batch", "v1", "Job"): "V1Job",
    ("scheduling.k8s.io", "v1", "PriorityClass"): "V1PriorityClass",
    ("coordination.k8s.io", "v1", "Lease"): "V1Lease",
}

# Maps whose values are resource quantities (the client types them as plain strings).
_QUANTITY_MAPS = frozenset(
    {"requests", "limits", "overhead", "capacity", "allocatable", "hard", "used", "allocatedResources"}
)
_QUANTITY_SCALARS = frozenset({"divisor", "sizeLimit", "storage"})
_INT_OR_STRING = frozenset({"port", "targetPort", "maxUnavailable", "maxSurge"})

_LIST_RE = re.compile(r"^List\[(?P<item>.+)\]$")
_DICT_RE = re.compile(r"^Dict\[str, (?P<value>.+)\]$")


def quantity_schema(description: str = "") -> JSONDict:
    out: JSONDict = {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
    }
    if description:
        out["description"] = description
    return out


def _class_description(cls: type) -> str:
    doc = (cls.__doc__ or "").strip()
    first = doc.split("\n\n", 1)[0].strip()
    if first.startswith("Attributes:") or "openapi_types" in first:
        return ""
    return " ".join(first.split())


def _models() -> Any:
    import kubernetes.client.models as models  # deferred, not a cycle: ~0.25 s, paid on the first schema read

    return models


def _type_schema(type_name: str, json_name: str, stack: tuple[str, ...]) -> JSONDict:
    if type_name == "str":
        return quantity_schema() if json_name in _QUANTITY_SCALARS else {"type": "string"}
    if type_name == "int":
        return {"type": "integer", "format": "int64" if json_name.endswith("Seconds") else "int32"}
    if type_name == "bool":
        return {"type": "boolean"}
    if type_name == "float":
        return {"type": "number", "format": "double"}
    if type_name == "datetime":
        return {"type": "string", "format": "date-time"}
    if type_name == "bytes":
        return {"type": "string", "format": "byte"}
    if type_name == "object":
        # The client types IntOrString and free-form JSON (managedFields' fieldsV1, ...) alike.
        if json_name in _INT_OR_STRING:
            return {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    match = _LIST_RE.match(type_name)
    if match:
        return {"type": "array", "items": _type_schema(match["item"], "", stack)}
    match = _DICT_RE.match(type_name)
    if match:
        if json_name in _QUANTITY_MAPS and match["value"] == "str":
            return {"type": "object", "additionalProperties": quantity_schema()}
        return {"type": "object", "additionalProperties": _type_schema(match["value"], "", stack)}
    return _model_schema(type_name, stack)


def _model_schema(class_name: str, stack: tuple[str, ...]) -> JSONDict:
    if class_name in stack:
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    cls = getattr(_models(), class_name)
    stack = (*stack, class_name)
    properties: dict[str, JSONDict] = {}
    required: list[str] = []
    fields = getattr(cls, "model_fields", {})
    for attr, type_name in cls.openapi_types.items():
        json_name = cls.attribute_map[attr]
        prop = _type_schema(type_name, json_name, stack)
        info = fields.get(attr)
        description = getattr(info, "description", None) if info is not None else None
        if description:
            prop = {"description": " ".join(str(description).split()), **prop}
        properties[json_name] = prop
        if info is not None and info.is_required():
            required.append(json_name)
    out: JSONDict = {"type": "object"}
    description = _class_description(cls)
    if description:
        out["description"] = description
    out["properties"] = properties
    if required:
        out["required"] = required
    return out


@cache
def _cached_model_schema(class_name: str) -> JSONDict:
    return _model_schema(class_name, ())


def shared_model_schema(class_name: str) -> JSONDict:
    """The cached schema of a client model class; callers must not mutate it."""
    return _cached_model_schema(class_name)


def model_schema(class_name: str) -> JSONDict:
    """A fresh copy of the schema of one client model class (e.g. "V1PodTemplateSpec")."""
    return json_copy(_cached_model_schema(class_name))


def schema(group: str, version: str, kind: str) -> JSONDict:
    """The whole-object schema of a built-in kind; a permissive object schema for unknown ones."""
    class_name = _KINDS.get((group, version, kind)) or _MANIFEST_KINDS.get((group, version, kind))
    if class_name is None:
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    out = model_schema(class_name)
    out["x-kubernetes-group-version-kind"] = [{"group": group, "version": version, "kind": kind}]
    for path, key in merge_keys_for(group, kind).items():
        node = _node_at(out, path)
        if node is not None and node.get("type") == "array":
            # What kube publishes from patchStrategy/patchMergeKey tags; kubectl apply builds SMPs from it.
            node["x-kubernetes-patch-strategy"] = "merge"
            node["x-kubernetes-patch-merge-key"] = key.split(",", 1)[0]  # SMP merges by the first key
    return out


def _node_at(schema: JSONDict, path: str) -> JSONDict | None:
    """The schema node of a dotted path whose ``[]`` segments step into array items."""
    node: JSONDict | None = schema
    for part in path.split("."):
        items = part.endswith("[]")
        name = part[:-2] if items else part
        node = ((node or {}).get("properties") or {}).get(name)
        if node is None:
            return None
        if items:
            node = node.get("items")
    return node
