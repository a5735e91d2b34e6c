"""Structural OpenAPI v3 schemas of Kueue's kinds, generated from the pydantic models.

Owns the translation pydantic JSON Schema -> Kubernetes structural schema: every ``$ref`` inlined,
``Optional`` unions collapsed, titles and null defaults dropped, placeholders for core types
expanded from the Kubernetes client's models, and the object envelope (apiVersion, kind,
metadata) added. The v1beta1 schemas are derived from v1beta2 by the renames between Kueue's two
API versions (:mod:`pykueue.api.kinds.kueue.kueue_v1beta1`). Handed to
:class:`~pykueue.api.schema.lazy_schemas.LazySchemas` by the kind records; the CRD renderer and
the validators read the result, which is cached and must be treated as read-only.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel

from pykueue.api.kinds.core import core_schemas
from pykueue.api.kinds.kueue import cluster_queue_models, kueue_models, kueue_v1beta1, workload_models
from pykueue.api.kinds.kueue.kueue_types import PLACEHOLDER
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy

__all__ = ["MODELS", "schema", "to_structural"]

MODELS: dict[str, type[BaseModel]] = {
    "ResourceFlavor": kueue_models.ResourceFlavor,
    "ClusterQueue": cluster_queue_models.ClusterQueue,
    "Cohort": cluster_queue_models.Cohort,
    "LocalQueue": kueue_models.LocalQueue,
    "Workload": workload_models.Workload,
    "WorkloadPriorityClass": kueue_models.WorkloadPriorityClass,
    "AdmissionCheck": kueue_models.AdmissionCheck,
    "Topology": kueue_models.Topology,
}

_ENVELOPE: JSONDict = {
    "apiVersion": {
        "type": "string",
        "description": (
            "APIVersion defines the versioned schema of this representation of an object. Servers should "
            "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
            "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
            "#resources"
        ),
    },
    "kind": {
        "type": "string",
        "description": (
            "Kind is a string value representing the REST resource this object represents. Servers may "
            "infer this from the endpoint the client submits requests to. Cannot be updated. In "
            "CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
            "api-conventions.md#types-kinds"
        ),
    },
    "metadata": {"type": "object"},
}


def _resolve(node: Any, defs: JSONDict) -> Any:
    if isinstance(node, list):
        return [_resolve(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[1]]
        merged = {**_resolve(target, defs), **{k: v for k, v in node.items() if k != "$ref"}}
        return _resolve(merged, defs)
    if PLACEHOLDER in node:
        expanded = core_schemas.model_schema(node[PLACEHOLDER])
        extra = {k: _resolve(v, defs) for k, v in node.items() if k != PLACEHOLDER}
        return {**expanded, **extra}
    out: JSONDict = {}
    for key, value in node.items():
        if key in ("title", "$defs"):
            continue
        if key in ("properties", "patternProperties"):
            out[key] = {name: _resolve(sub, defs) for name, sub in value.items()}
        elif key == "description" and isinstance(value, str):
            out[key] = " ".join(value.split())
        else:
            out[key] = _resolve(value, defs)
    return _collapse(out)


def _collapse(node: JSONDict) -> JSONDict:
    """Drop ``null`` from unions (Kubernetes has no nullable fields here) and pydantic-isms."""
    any_of = node.get("anyOf")
    if isinstance(any_of, list) and any(b.get("type") == "null" for b in any_of):
        rest = [b for b in any_of if b.get("type") != "null"]
        node = {k: v for k, v in node.items() if k != "anyOf"}
        if len(rest) == 1:
            node = {**rest[0], **node}
        else:
            node["anyOf"] = rest
    if "default" in node and node["default"] is None:
        del node["default"]
    if node.get("additionalProperties") is False:
        del node["additionalProperties"]
    if node.get("additionalProperties") is True:
        del node["additionalProperties"]
        node["x-kubernetes-preserve-unknown-fields"] = True
    if (
        node.get("type") == "object"
        and "properties" not in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        node["x-kubernetes-preserve-unknown-fields"] = True
    return node


def _integers_are_int32(node: Any) -> None:
    """Give every integer without a format Kueue's ``format: int32``, in place.

    Kueue's API types declare their counts, sizes and seconds as Go ``int32`` (``weightedShare`` is
    the one ``int64``, typed as such), so its CRDs say ``format: int32`` and the API server refuses
    2^31 there. Built-in sub-schemas (pod templates) already carry kube's own formats, and the
    integer branch of an int-or-string (a quantity) is not an int32, so neither is touched.
    """
    if isinstance(node, list):
        for item in node:
            _integers_are_int32(item)
        return
    if not isinstance(node, dict) or node.get("x-kubernetes-int-or-string"):
        return
    if node.get("type") == "integer" and "format" not in node:
        node["format"] = "int32"
    for key in ("properties", "patternProperties"):
        for sub in node.get(key, {}).values():
            _integers_are_int32(sub)
    for key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
        if key in node:
            _integers_are_int32(node[key])


def to_structural(model: type[BaseModel]) -> JSONDict:
    """The structural schema of one pydantic model, with the Kubernetes object envelope."""
    raw = model.model_json_schema(mode="validation")
    defs = raw.get("$defs", {})
    body: JSONDict = _resolve(raw, defs)
    _integers_are_int32(body)
    body["properties"] = {**json_copy(_ENVELOPE), **body.get("properties", {})}
    body["type"] = "object"
    return body


@cache
def _v1beta2(kind: str) -> JSONDict:
    return to_structural(MODELS[kind])


def schema(kind: str, version: str) -> JSONDict:
    """The schema of a Kueue kind in ``version`` (v1beta2 or v1beta1); a fresh copy."""
    if kind not in MODELS:
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    base = json_copy(_v1beta2(kind))
    if version == "v1beta1":
        return kueue_v1beta1.derive_schema(kind, base)
    return base
