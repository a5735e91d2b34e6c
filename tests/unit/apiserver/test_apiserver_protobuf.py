"""Protobuf request bodies (what kubectl's typed ``create`` subcommands send)."""

from __future__ import annotations

import pytest

from pykueue.api.meta.errors import BadRequest, UnsupportedMediaType
from pykueue.apiserver.protobuf import decode_protobuf

from .conftest import Api


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _entry(number: int, key: str, value: str | bytes) -> bytes:
    return _field(number, _field(1, key) + _field(2, value))


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + _field(1, _field(1, api_version) + _field(2, kind)) + _field(2, raw)


def _meta(name: str, **labels: str) -> bytes:
    body = _field(1, name) + _field(2, "") + _field(7, 0) + _field(8, b"")
    for key, value in labels.items():
        body += _entry(11, key, value)
    return _field(1, body)


def test_decodes_configmap_and_secret() -> None:
    cm = decode_protobuf(_envelope("v1", "ConfigMap", _meta("cm", app="x") + _entry(2, "a", "b")))
    assert cm == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "labels": {"app": "x"}},
        "data": {"a": "b"},
    }
    secret = decode_protobuf(_envelope("v1", "Secret", _meta("s") + _entry(2, "pw", b"x") + _field(3, "Opaque")))
    assert secret["data"] == {"pw": "eA=="}
    assert secret["type"] == "Opaque"


def test_other_kinds_are_415_and_garbage_is_400() -> None:
    with pytest.raises(UnsupportedMediaType, match="accepted media types include: application/json"):
        decode_protobuf(_envelope("kueue.x-k8s.io/v1beta2", "Workload", _meta("j")))
    with pytest.raises(BadRequest):
        decode_protobuf(b"not protobuf")
    with pytest.raises(BadRequest):
        decode_protobuf(b"k8s\x00\x0a\xff")


async def test_create_namespace_from_protobuf(api: Api) -> None:
    body = _envelope("v1", "Namespace", _meta("team"))
    status, created, _ = await api.request(
        "POST", "/api/v1/namespaces", raw=body, content_type="application/vnd.kubernetes.protobuf"
    )
    assert status == 201
    assert created["metadata"]["name"] == "team"
    assert created["status"] == {"phase": "Active"}
    assert "generateName" not in created["metadata"]
    status, error, _ = await api.request("POST", "/api/v1/namespaces", raw=b"{}", content_type="application/cbor")
    assert status == 415
    assert error["reason"] == "UnsupportedMediaType"
