"""Request body bytes into JSON values, chosen by the request's ``Content-Type`` as kube-apiserver does.

Owned by ``registry/``; the API server calls :func:`decode_object` for create/update bodies and
:func:`media_type` to pick a decoder, the patcher calls :func:`decode_bytes` with the patch's media
type. This module is where hostile bodies stop, before any recursive code sees them:

- JSON media types (``application/json``, the three JSON patch types) are decoded by orjson alone:
  NaN, Infinity, lone surrogates and invalid UTF-8 are 400s, never a YAML fallback;
- YAML only for ``application/yaml`` and ``application/apply-patch+yaml``, with libyaml's safe
  loader; aliases are refused (a 400, not capped: Kubernetes manifests never need them, and an alias
  is how a few hundred bytes become gigabytes) and the document is scanned as a stream of events
  before it is built, so a body nested past the limit never reaches libyaml's recursive composer;
- every value nested deeper than :data:`MAX_DEPTH` levels is a 400 (kube's decoders stop at 10,000;
  pykueue's validators, pruning, patching and field ownership recurse in Python, so the limit is
  lower and the same for every media type);
- any other media type is a 415 naming the accepted ones (protobuf is the API server's, in
  :mod:`pykueue.apiserver.protobuf`).

Invariant: never raises anything but ``BadRequest`` / ``UnsupportedMediaType``, and never lets a
traceback out: every message is one line.
"""

from __future__ import annotations

import base64
import datetime
import math
from typing import Any

import orjson
import yaml

from pykueue.api.meta.errors import BadRequest, UnsupportedMediaType

__all__ = [
    "JSON",
    "JSON_TYPES",
    "MAX_DEPTH",
    "YAML",
    "YAML_TYPES",
    "decode_bytes",
    "decode_json",
    "decode_object",
    "decode_yaml",
    "media_type",
    "unsupported",
]

JSON = "application/json"
YAML = "application/yaml"
JSON_TYPES = frozenset(
    {JSON, "application/merge-patch+json", "application/json-patch+json", "application/strategic-merge-patch+json"}
)
YAML_TYPES = frozenset({YAML, "application/apply-patch+yaml"})
MAX_DEPTH = 200
"""How deep objects and arrays may nest in a request body (a Pod is ~12 levels deep)."""


def media_type(content_type: str) -> str:
    """The media type of a ``Content-Type`` header, lower-cased, without parameters; an empty header
    means JSON, as kube-apiserver reads it."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media or JSON


def unsupported(accepted: list[str] | tuple[str, ...]) -> UnsupportedMediaType:
    return UnsupportedMediaType(
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}"
    )


def decode_bytes(data: bytes, media: str = JSON) -> Any:
    """Decode ``data`` as ``media`` (see :func:`media_type`): a JSON or YAML media type, else a 415."""
    if media in JSON_TYPES:
        return decode_json(data)
    if media in YAML_TYPES:
        return decode_yaml(data)
    raise unsupported([JSON, YAML])


def decode_object(data: bytes, media: str = JSON) -> dict[str, Any]:
    value = decode_bytes(data, media)
    if not isinstance(value, dict):
        raise BadRequest("the body of the request must be a JSON or YAML object")
    return value


# ---------------------------------------------------------------------- JSON


def decode_json(data: bytes) -> Any:
    """Strict JSON (RFC 8259: no NaN/Infinity, valid UTF-8, no lone surrogates), depth-limited."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise BadRequest(f"error decoding body: {_one_line(str(err))}") from None
    # A body can only nest past the limit if it holds that many brackets: most never need the walk.
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH:
        _check_depth(value)
    return value


def _check_depth(value: Any) -> None:
    """Iteratively: a recursive walk is what the limit protects."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadRequest(f"error decoding body: the object is nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values() if isinstance(child, (dict, list)))
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node if isinstance(child, (dict, list)))


# ---------------------------------------------------------------------- YAML


class _Loader(yaml.CSafeLoader):
    """libyaml's safe loader, read as Kubernetes reads YAML (sigs.k8s.io/yaml over go-yaml v2): a
    timestamp-looking scalar stays the string it was written as; an alias is refused."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects or node in self.recursive_objects:
            raise BadRequest("error converting YAML to JSON: YAML aliases are not allowed")
        return super().construct_object(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_OPENING = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSING = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def decode_yaml(data: bytes) -> Any:
    """One YAML document (JSON is YAML: a JSON body takes orjson's fast path) as plain JSON values."""
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            return decode_json(data)
        except BadRequest:
            pass  # flow-style YAML that is not JSON
    try:
        _scan(data)
        return _as_json(yaml.load(data, Loader=_Loader))  # a CSafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as err:
        raise BadRequest(f"error converting YAML to JSON: {_one_line(str(err))}") from None
    except (UnicodeDecodeError, ValueError, OverflowError) as err:
        raise BadRequest(f"error converting YAML to JSON: {_one_line(str(err))}") from None


def _scan(data: bytes) -> None:
    """Refuse aliases and deep nesting from the event stream, before libyaml composes a tree."""
    depth = 0
    for event in yaml.parse(data, Loader=yaml.CSafeLoader):
        if isinstance(event, _OPENING):
            depth += 1
            if depth > MAX_DEPTH:
                raise BadRequest(
                    f"error converting YAML to JSON: the document is nested more than {MAX_DEPTH} levels deep"
                )
        elif isinstance(event, _CLOSING):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            raise BadRequest("error converting YAML to JSON: YAML aliases are not allowed")


_INT64 = 2**63


def _as_json(value: Any) -> Any:
    """A YAML document's value as the JSON document Kubernetes converts it to before decoding:
    mapping keys become strings, integers beyond 64 bits become floats (as a JSON body's do),
    ``!!binary`` becomes its base64 text, an explicit ``!!timestamp`` its ISO text; NaN and
    infinities, which JSON cannot hold, are a 400. Depth is bounded by :func:`_scan`."""
    if isinstance(value, dict):
        return {_key_text(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else float(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise BadRequest(f"error converting YAML to JSON: json: unsupported value: {value}")
        return value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return _as_json(list(value)) if isinstance(value, (set, tuple)) else str(value)


def _text(value: str) -> str:
    try:
        value.encode()
    except UnicodeEncodeError:
        raise BadRequest("error converting YAML to JSON: invalid Unicode (a lone surrogate)") from None
    return value


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return _text(key)
    if isinstance(key, bool) or key is None:
        return "true" if key is True else "false" if key is False else "null"
    if isinstance(key, (int, float)):
        return str(key)
    raise BadRequest(f"error converting YAML to JSON: unsupported mapping key {_one_line(repr(key))[:200]}")


def _one_line(text: str) -> str:
    return " ".join(text.split())
