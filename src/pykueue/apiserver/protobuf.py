"""Decoding of ``application/vnd.kubernetes.protobuf`` request bodies, for the kinds clients send that way.

Owned by ``apiserver/``; called by ``resources`` for request bodies with the protobuf media type, and by
``access_reviews`` for the reviews' (``kubectl auth can-i`` and ``whoami`` send theirs as protobuf).
kubectl's typed subcommands (``create namespace|configmap|secret|priorityclass|job``) and client-go's
typed clients (controllers, the event recorder, leader election) send built-in objects, and the
``DeleteOptions`` of typed deletes, as Kubernetes protobuf and do not fall back to JSON on a 415.
Everything else kubectl sends (apply, create -f, patch, label, edit) is JSON, and responses are
always JSON (the clients accept it). So this module decodes the envelope (``k8s\\x00`` +
``runtime.Unknown``) and the messages of those kinds into the JSON dicts the registry takes.

The message layouts (field numbers from Kubernetes' ``generated.proto``) are a table in a small
notation (:mod:`pykueue.apiserver.protobuf_layout`), parsed once at import. Output follows the Go
JSON encoding of the same object: camelCase names, empty non-pointer scalars omitted (gogo-protobuf
writes them, ``omitempty`` drops them), pointer scalars kept even when zero, quantities as strings,
times as RFC 3339 (MicroTimes with microseconds).

Invariant: a body is decoded completely or rejected: 400 for malformed bytes or a field number the
table does not know (data is never dropped silently), 415 for a kind or a field we do not decode.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, NamedTuple

from pykueue.api.meta.clock import format_time
from pykueue.api.meta.errors import BadRequest, UnsupportedMediaType

from .protobuf_layout import KINDS, LAYOUT

__all__ = ["PROTOBUF", "decode_delete_options", "decode_protobuf"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"
_GO_ZERO_TIME = -62135596800  # time.Time{} (0001-01-01T00:00:00Z) in Unix seconds: JSON writes it as null
_USE_JSON = "send YAML or JSON instead (kubectl create -f / kubectl apply -f)"

_SCALARS = frozenset({"s", "i", "b", "t", "mt", "q", "ios", "y", "{s}", "{y}", "{q}", "-", "~"})


class _Field(NamedTuple):
    name: str
    kind: str
    repeated: bool
    keep_zero: bool
    inline: bool


def _parse_layout(layout: dict[str, str]) -> dict[str, dict[int, _Field]]:
    table: dict[str, dict[int, _Field]] = {}
    for message, text in layout.items():
        fields: dict[int, _Field] = {}
        for item in text.split(","):
            number, spec = item.split()
            if spec.startswith("^"):
                fields[int(number)] = _Field("", spec[1:], False, False, True)
                continue
            name, _, kind = spec.partition(":")
            fields[int(number)] = _Field(name.rstrip("*?"), kind or "s", "*" in name, "?" in name, False)
        table[message] = fields
    missing = {f.kind for fields in table.values() for f in fields.values()} - _SCALARS - set(table)
    if missing:
        raise RuntimeError(f"protobuf layout refers to undefined messages: {sorted(missing)}")
    return table


_TABLE = _parse_layout(LAYOUT)


class _Malformed(ValueError):
    """The bytes are not a valid encoding of the expected message (becomes a 400)."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise _Malformed("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & 0xFFFF_FFFF_FFFF_FFFF, pos
        shift += 7
        if shift > 63:
            raise _Malformed("varint longer than 10 bytes")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) in order: an int for varints, bytes otherwise."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _Malformed("field number 0")
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire in (1, 2, 5):
            if wire == 2:
                length, pos = _varint(data, pos)
            else:
                length = 8 if wire == 1 else 4
            if pos + length > len(data):
                raise _Malformed(f"field {number} runs past the end of its message")
            value, pos = data[pos : pos + length], pos + length
        else:
            raise _Malformed(f"unsupported wire type {wire} for field {number}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(raw: bytes) -> str:
    return raw.decode("utf-8")


def _time(raw: bytes, *, micro: bool = False) -> str | None:
    """A Time ({seconds, nanos}) as Kubernetes writes it in JSON: whole seconds, or microseconds for a
    MicroTime ("2027-01-15T08:00:00.123456Z"); None for the zero time."""
    seconds = nanos = 0
    for number, wire, value in _fields(raw):
        if number not in (1, 2) or wire != 0:
            raise _Malformed(f"a Time has unexpected field {number}")
        if number == 1:
            seconds = _signed(value)
        else:
            nanos = _signed(value)
    if seconds in (0, _GO_ZERO_TIME) and not nanos:
        return None
    text = format_time(float(seconds))
    if not micro:
        return text
    if not 0 <= nanos < 1_000_000_000:
        raise _Malformed(f"a MicroTime has nanos {nanos} out of range")
    return f"{text[:-1]}.{nanos // 1000:06d}Z"


def _quantity(raw: bytes) -> str:
    text = ""
    for number, wire, value in _fields(raw):
        if number != 1 or wire != 2:
            raise _Malformed(f"a Quantity has field {number}, expected only 1 (string)")
        text = _text(value)
    return text


def _int_or_string(raw: bytes) -> int | str:
    values: dict[int, Any] = {}
    for number, wire, value in _fields(raw):
        if number not in (1, 2, 3) or wire != (2 if number == 3 else 0):
            raise _Malformed(f"an IntOrString has unexpected field {number}")
        values[number] = value
    return _text(values.get(3, b"")) if values.get(1) == 1 else _signed(values.get(2, 0))


def _map_entry(raw: bytes, kind: str) -> tuple[str, Any]:
    key, value = "", b""
    for number, wire, data in _fields(raw):
        if number not in (1, 2) or wire != 2:
            raise _Malformed(f"a map entry has unexpected field {number}")
        if number == 1:
            key = _text(data)
        else:
            value = data
    if kind == "{y}":
        return key, base64.b64encode(value).decode()
    return key, _quantity(value) if kind == "{q}" else _text(value)


def _is_zero(value: Any) -> bool:
    """Go's omitempty zero for what a non-repeated field decodes to (False == 0; a message is never zero)."""
    return value is None or (not isinstance(value, dict) and value in ("", 0))


def _value(field: _Field, wire: int, raw: Any, where: str) -> list[Any]:
    """The JSON value(s) of one occurrence of a field: several for a packed repeated int."""
    if field.kind in ("i", "b"):
        if wire == 0:
            numbers = [raw]
        elif wire == 2 and field.repeated:  # packed encoding of a repeated scalar
            numbers, pos = [], 0
            while pos < len(raw):
                number, pos = _varint(raw, pos)
                numbers.append(number)
        else:
            raise _Malformed(f"{where} has wire type {wire}, expected a varint")
        return [_signed(n) if field.kind == "i" else n != 0 for n in numbers]
    if wire != 2:
        raise _Malformed(f"{where} has wire type {wire}, expected length-delimited")
    data = bytes(raw)
    if field.kind == "s":
        return [_text(data)]
    if field.kind == "t":
        return [_time(data)]
    if field.kind == "mt":
        return [_time(data, micro=True)]
    if field.kind == "y":
        return [base64.b64encode(data).decode()]
    if field.kind == "q":
        return [_quantity(data)]
    if field.kind == "ios":
        return [_int_or_string(data)]
    return [_decode(field.kind, data, where)]


def _decode(message: str, data: bytes, path: str) -> dict[str, Any]:
    """One message as its JSON dict; ``path`` (JSON path of the message) only names errors."""
    table = _TABLE[message]
    out: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        field = table.get(number)
        if field is None:
            raise _Malformed(f"{message} has no field number {number} (at {path or 'the top level'})")
        where = f"{path}.{field.name}" if path else field.name
        if field.kind == "~" and wire == 2 and not raw:
            continue  # an empty non-pointer struct: gogo writes it even when the object has none
        if field.kind in ("-", "~"):
            raise UnsupportedMediaType(
                f"{where} ({message} field {number}) is not decoded from protobuf bodies: {_USE_JSON}"
            )
        if field.inline:
            if wire != 2:
                raise _Malformed(f"{path or message} has wire type {wire} for field {number}")
            out.update(_decode(field.kind, bytes(raw), path))
        elif field.kind.startswith("{"):
            if wire != 2:
                raise _Malformed(f"{where} has wire type {wire}, expected a map entry")
            key, value = _map_entry(bytes(raw), field.kind)
            out.setdefault(field.name, {})[key] = value
        elif field.repeated:
            where = f"{where}[{len(out.get(field.name, []))}]"
            out.setdefault(field.name, []).extend(_value(field, wire, raw, where))
        else:
            (value,) = _value(field, wire, raw, where)
            if _is_zero(value) and not field.keep_zero:
                out.pop(field.name, None)  # Go's omitempty; the last occurrence of a field wins
            else:
                out[field.name] = value
    return out


def _envelope(data: bytes) -> tuple[tuple[str, str], bytes]:
    """((apiVersion, kind), raw message) of a ``k8s\\x00`` + ``runtime.Unknown`` body."""
    if not data.startswith(_MAGIC):
        raise BadRequest("protobuf body without the k8s envelope")
    type_meta: dict[str, Any] = {}
    raw = b""
    for number, wire, value in _fields(data[len(_MAGIC) :]):
        if number not in (1, 2, 3, 4) or wire != 2:
            raise _Malformed(f"the runtime.Unknown envelope has unexpected field {number}")
        if number == 1:
            type_meta = _decode("TypeMeta", bytes(value), "")
        elif number == 2:
            raw = bytes(value)
        elif number == 3 and value:
            raise UnsupportedMediaType(
                f"protobuf bodies with contentEncoding {_text(value)!r} are not understood: {_USE_JSON}"
            )
    return (type_meta.get("apiVersion", ""), type_meta.get("kind", "")), raw


def decode_protobuf(data: bytes, kinds: Mapping[tuple[str, str], str] = KINDS) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object, or 400 (malformed) / 415 (a kind kube-apiserver does
    not take as protobuf either: custom resources, or a field not decoded). ``kinds``: the (apiVersion,
    kind) the caller takes -> their messages (the stored built-in kinds unless told)."""
    try:
        key, raw = _envelope(data)
        message = kinds.get(key)
        if message is None:
            named = f"{key[1]} ({key[0]})" if key[1] else "an object without a kind"
            raise UnsupportedMediaType(
                f"the body of the request was in an unknown format: {named} is not a built-in kind served as "
                "protobuf - accepted media types include: application/json, application/yaml"
            )
        obj = _decode(message, raw, "")
    except (ValueError, UnicodeDecodeError) as err:
        raise BadRequest(f"malformed protobuf body: {err}") from None
    obj["apiVersion"], obj["kind"] = key
    return obj


def decode_delete_options(data: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf ``DeleteOptions`` body (client-go sends it with the client's group
    version, "meta.k8s.io/v1" or the resource's, as its apiVersion)."""
    try:
        (api_version, kind), raw = _envelope(data)
        if kind != "DeleteOptions" or not api_version.endswith("v1"):
            raise BadRequest(f"the body of a DELETE must be DeleteOptions, not {kind or 'an unnamed kind'}")
        obj = _decode("DeleteOptions", raw, "")
    except (ValueError, UnicodeDecodeError) as err:
        raise BadRequest(f"malformed protobuf body: {err}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}
