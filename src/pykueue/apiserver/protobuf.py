"""Decoding of ``application/vnd.kubernetes.protobuf`` request bodies, for the few kinds that need it.

Owned by ``apiserver/``. kubectl's typed clients (``kubectl create namespace|configmap|secret|
priorityclass``) send built-in objects as Kubernetes protobuf and do not fall back to JSON on a
415. Everything else kubectl sends (apply, create -f, patch, label, edit) is JSON, and responses
are always JSON (the clients accept it). So this module decodes just the envelope
(``k8s\\x00`` + ``runtime.Unknown``) and the messages of those kinds into the JSON dicts the
registry takes; any other kind is a 415 that says to use ``-f`` with YAML or JSON.

Invariant: a body is decoded completely or rejected with a 400/415; never half-decoded.
"""

from __future__ import annotations

import base64
from typing import Any

from pykueue.api.clock import format_time
from pykueue.api.errors import BadRequest, UnsupportedMediaType

__all__ = ["PROTOBUF", "decode_protobuf"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"

# message -> field number -> (JSON name, type, repeated). Types: "string", "bytes", "int", "bool",
# "time", "map:string", "map:bytes", or another message name.
_Field = tuple[str, str, bool]
_MESSAGES: dict[str, dict[int, _Field]] = {
    "Unknown": {1: ("typeMeta", "TypeMeta", False), 2: ("raw", "bytes", False),
                3: ("contentEncoding", "string", False), 4: ("contentType", "string", False)},
    "TypeMeta": {1: ("apiVersion", "string", False), 2: ("kind", "string", False)},
    "ObjectMeta": {
        1: ("name", "string", False), 2: ("generateName", "string", False), 3: ("namespace", "string", False),
        5: ("uid", "string", False), 6: ("resourceVersion", "string", False), 7: ("generation", "int", False),
        8: ("creationTimestamp", "time", False), 9: ("deletionTimestamp", "time", False),
        10: ("deletionGracePeriodSeconds", "int", False), 11: ("labels", "map:string", False),
        12: ("annotations", "map:string", False), 13: ("ownerReferences", "OwnerReference", True),
        14: ("finalizers", "string", True)},
    "OwnerReference": {1: ("kind", "string", False), 3: ("name", "string", False), 4: ("uid", "string", False),
                       5: ("apiVersion", "string", False), 6: ("controller", "bool", False),
                       7: ("blockOwnerDeletion", "bool", False)},
    "Time": {1: ("seconds", "int", False), 2: ("nanos", "int", False)},
    "Namespace": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "NamespaceSpec", False)},
    "NamespaceSpec": {1: ("finalizers", "string", True)},
    "ConfigMap": {1: ("metadata", "ObjectMeta", False), 2: ("data", "map:string", False),
                  3: ("binaryData", "map:bytes", False), 4: ("immutable", "bool", False)},
    "Secret": {1: ("metadata", "ObjectMeta", False), 2: ("data", "map:bytes", False),
               3: ("type", "string", False), 4: ("stringData", "map:string", False),
               5: ("immutable", "bool", False)},
    "PriorityClass": {1: ("metadata", "ObjectMeta", False), 2: ("value", "int", False),
                      3: ("globalDefault", "bool", False), 4: ("description", "string", False),
                      5: ("preemptionPolicy", "string", False)},
}
_OMIT_ZERO = frozenset({"generation", "globalDefault"})
_KINDS = {("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Secret"),
          ("scheduling.k8s.io/v1", "PriorityClass")}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) in order; length-delimited values as bytes."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated field")
            value, pos = data[pos:pos + length], pos + length
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, value: Any) -> Any:
    if kind == "string":
        return bytes(value).decode("utf-8")
    if kind == "bytes":
        return bytes(value)
    if kind == "int":
        return _signed(int(value))
    if kind == "bool":
        return bool(value)
    if kind == "time":
        seconds = _message("Time", bytes(value)).get("seconds", 0)
        return format_time(float(seconds)) if seconds else None
    return _message(kind, bytes(value))


def _map_entry(data: bytes, binary: bool) -> tuple[str, Any]:
    key, value = "", b""
    for number, _, raw in _fields(data):
        if number == 1:
            key = bytes(raw).decode("utf-8")
        elif number == 2:
            value = bytes(raw)
    return key, (base64.b64encode(value).decode() if binary else value.decode("utf-8"))


def _message(name: str, data: bytes) -> dict[str, Any]:
    schema = _MESSAGES[name]
    out: dict[str, Any] = {}
    for number, _, raw in _fields(data):
        field = schema.get(number)
        if field is None:
            continue
        json_name, kind, repeated = field
        if kind.startswith("map:"):
            key, value = _map_entry(bytes(raw), kind == "map:bytes")
            out.setdefault(json_name, {})[key] = value
            continue
        value = _scalar(kind, raw)
        if value is None:
            continue
        if repeated:
            out.setdefault(json_name, []).append(value)
        else:
            out[json_name] = value
    # Go's JSON omitempty: gogo-protobuf writes non-pointer fields even when empty.
    return {k: v for k, v in out.items()
            if v not in ("", [], {}) and not (k in _OMIT_ZERO and v in (0, False))}


def decode_protobuf(data: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object, or 400 (malformed) / 415 (kind not decodable)."""
    if not data.startswith(_MAGIC):
        raise BadRequest("protobuf body without the k8s envelope")
    try:
        envelope = _message("Unknown", data[len(_MAGIC):])
        type_meta = envelope.get("typeMeta") or {}
        key = (type_meta.get("apiVersion", ""), type_meta.get("kind", ""))
        if key not in _KINDS:
            raise UnsupportedMediaType(
                f"protobuf bodies are only understood for Namespace, ConfigMap, Secret and PriorityClass, not "
                f"{key[1] or 'this kind'}: send YAML or JSON instead (kubectl create -f / kubectl apply -f)")
        obj = _message(key[1], envelope.get("raw") or b"")
    except (ValueError, UnicodeDecodeError) as err:
        raise BadRequest(f"malformed protobuf body: {err}") from None
    obj["apiVersion"], obj["kind"] = key
    return obj
