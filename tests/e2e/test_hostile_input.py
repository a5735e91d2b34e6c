"""Hostile request bodies and parameters sent over HTTPS to a running ``pykueue up``.

Each request gets the 4xx documented in ``docs/contracts.md`` ("Request bodies and their limits")
within a second, with a one-line ``Status`` message; ``/healthz`` is polled from another thread the
whole time and must keep answering; at the end the server's log holds no traceback and the process
still runs.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from tests.e2e.harness import Pykueue
from tests.waiting import eventually_blocking

pytestmark = pytest.mark.timeout(300)

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
JSON = "application/json"
YAML = "application/yaml"
ANSWER_WITHIN = 1.0
"""Seconds: every hostile request is refused at least this fast."""


@dataclass
class HealthPoller:
    """GET /healthz in a loop on its own connection until stopped; records every failure."""

    url: str
    ca: str
    answered: int = 0
    failures: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> HealthPoller:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        session = requests.Session()
        while not self._stop.is_set():
            try:
                response = session.get(self.url + "/healthz", verify=self.ca, timeout=5)
                if response.status_code == 200 and response.text == "ok":
                    self.answered += 1
                else:
                    self.failures.append(f"{response.status_code} {response.text[:200]}")
            except requests.RequestException as err:
                self.failures.append(str(err))
            self._stop.wait(0.05)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)


@dataclass
class Target:
    server: Pykueue
    session: requests.Session
    health: HealthPoller

    def send(
        self, method: str, path: str, body: bytes | None = None, content_type: str | None = JSON, **params: str
    ) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.server.token}"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        started = time.monotonic()
        response = self.session.request(
            method,
            self.server.url + path,
            data=body,
            headers=headers,
            params=params,
            verify=str(self.server.data_dir / "ca.crt"),
            timeout=10,
        )
        took = time.monotonic() - started
        assert took < ANSWER_WITHIN, f"{method} {path} took {took:.2f} s"
        return response


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    base: Path = tmp_path_factory.mktemp("hostile")
    server = Pykueue(base / "data", base / "kubeconfig").start()
    health = HealthPoller(server.url, str(server.data_dir / "ca.crt")).start()
    try:
        yield Target(server, requests.Session(), health)
        health.stop()
        assert not health.failures, health.failures[:5]
        assert health.answered > 0
        assert server.process is not None
        assert server.process.poll() is None, "the server died"
        log = "".join(server.output)
        assert "Traceback" not in log, log[-5000:]
    finally:
        health.stop()
        server.stop()


def _status(response: requests.Response, code: int, reason: str, *fragments: str) -> dict[str, object]:
    assert response.status_code == code, response.text[:2000]
    assert response.headers["Content-Type"].startswith("application/json")
    status = response.json()
    assert status["kind"] == "Status"
    assert status["code"] == code
    assert status["reason"] == reason
    message = str(status["message"])
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    return dict(status)


def _configmap(name: str, data: object) -> bytes:
    return json.dumps({"metadata": {"name": name}, "data": data}).encode()


def _job(name: str, parallelism: str) -> bytes:
    """A Job whose ``spec.parallelism`` (an int32) is the literal JSON ``parallelism``."""
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    body = json.dumps({"metadata": {"name": name}, "spec": {"parallelism": "@P@", "template": template}})
    return body.replace('"@P@"', parallelism).encode()


# ---------------------------------------------------------------------- YAML


def test_a_yaml_alias_bomb_is_refused(target: Target) -> None:
    bomb = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\nx:\n  a: &a ["lol","lol","lol","lol","lol"]\n'
    previous = "a"
    for level in "bcdefghi":
        bomb += f"  {level}: &{level} [{','.join(['*' + previous] * 9)}]\n"
        previous = level
    response = target.send("POST", CONFIGMAPS, bomb.encode(), YAML)
    _status(response, 400, "BadRequest", "aliases are not allowed")


def test_yaml_nested_past_the_limit_is_refused_before_it_is_built(target: Target) -> None:
    deep = b"metadata: {name: deep}\ndata: " + b"[" * 100_000 + b"]" * 100_000  # crashed libyaml's composer
    _status(target.send("POST", CONFIGMAPS, deep, YAML), 400, "BadRequest", "nested more than 200 levels")


def test_a_yaml_body_still_creates_an_object(target: Target) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain-yaml\ndata:\n  when: 2024-01-01\n"
    response = target.send("POST", CONFIGMAPS, body, YAML)
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"when": "2024-01-01"}


# ---------------------------------------------------------------------- JSON


@pytest.mark.parametrize("depth", [201, 10_000, 1_000_000])
def test_a_deeply_nested_json_body_is_refused(target: Target, depth: int) -> None:
    body = b'{"metadata":{"name":"deep"},"data":' + b"[" * depth + b"]" * depth + b"}"
    _status(target.send("POST", CONFIGMAPS, body), 400, "BadRequest", "error decoding body")


def test_nesting_up_to_the_limit_is_served(target: Target) -> None:
    """The limit is where Python's recursive code stops being safe, not below what objects need:
    a custom resource may carry free-form JSON nested to just under it."""
    nested: object = "leaf"
    for _ in range(190):
        nested = {"k": nested}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "blobs.hostile.example.com"},
        "spec": {
            "group": "hostile.example.com",
            "scope": "Namespaced",
            "names": {"plural": "blobs", "singular": "blob", "kind": "Blob", "listKind": "BlobList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                        }
                    },
                }
            ],
        },
    }
    created = target.send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.dumps(crd).encode())
    assert created.status_code == 201, created.text
    path = "/apis/hostile.example.com/v1/namespaces/default/blobs"
    body = json.dumps(
        {"apiVersion": "hostile.example.com/v1", "kind": "Blob", "metadata": {"name": "b"}, "spec": nested}
    ).encode()
    eventually_blocking(lambda: target.send("GET", path).status_code == 200, within=30)
    response = target.send("POST", path, body)
    assert response.status_code == 201, response.text[:2000]
    patched = target.send(
        "PATCH", path + "/b", json.dumps({"spec": {"k": {"k": "changed"}}}).encode(), "application/merge-patch+json"
    )
    assert patched.status_code == 200, patched.text[:2000]
    applied = target.send("PATCH", path + "/b", body, "application/apply-patch+yaml", fieldManager="t", force="true")
    assert applied.status_code == 200, applied.text[:2000]


@pytest.mark.parametrize("value", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_nan_and_infinity_are_not_json(target: Target, value: bytes) -> None:
    body = b'{"metadata":{"name":"nan"},"data":{"a":' + value + b"}}"
    _status(target.send("POST", CONFIGMAPS, body), 400, "BadRequest", "error decoding body")


@pytest.mark.parametrize("text", [b'"\xff\xfe"', b'"\xc3\x28"', b'"\\ud800"', b'"\\udc00x"'])
def test_invalid_utf8_and_lone_surrogates_are_refused(target: Target, text: bytes) -> None:
    body = b'{"metadata":{"name":"utf"},"data":{"a":' + text + b"}}"
    _status(target.send("POST", CONFIGMAPS, body), 400, "BadRequest", "error decoding body")


def test_a_body_over_3_mib_is_413(target: Target) -> None:
    body = _configmap("big", {"a": "x" * (4 * 1024 * 1024)})
    _status(target.send("POST", CONFIGMAPS, body), 413, "RequestEntityTooLarge", "limit is 3145728")


# ---------------------------------------------------------------------- media types


@pytest.mark.parametrize(
    ("method", "path", "content_type"),
    [
        ("POST", CONFIGMAPS, "text/plain"),
        ("POST", CONFIGMAPS, "application/x-www-form-urlencoded"),
        ("POST", CONFIGMAPS, "application/merge-patch+json"),
        ("POST", CONFIGMAPS, "application/cbor"),
        ("PUT", CONFIGMAPS + "/x", "text/yaml"),
        ("PATCH", CONFIGMAPS + "/x", JSON),
        ("PATCH", CONFIGMAPS + "/x", "text/plain"),
        ("PATCH", CONFIGMAPS + "/x", None),
    ],
)
def test_unknown_media_types_are_415(target: Target, method: str, path: str, content_type: str | None) -> None:
    response = target.send(method, path, _configmap("x", {}), content_type)
    _status(response, 415, "UnsupportedMediaType", "accepted media types include")


def test_protobuf_garbage_is_400(target: Target) -> None:
    garbage = bytes(range(256)) * 8
    _status(target.send("POST", CONFIGMAPS, garbage, "application/vnd.kubernetes.protobuf"), 400, "BadRequest")
    enveloped = b"k8s\x00" + garbage
    _status(target.send("POST", CONFIGMAPS, enveloped, "application/vnd.kubernetes.protobuf"), 400, "BadRequest")


# ---------------------------------------------------------------------- parameters and numbers


@pytest.mark.parametrize("selector", ["(" * 10_000, "a in (" + "(" * 10_000, "!" * 10_000, "a=" + "b" * 10_000])
def test_a_10000_deep_label_selector_is_400(target: Target, selector: str) -> None:
    _status(target.send("GET", CONFIGMAPS, None, None, labelSelector=selector), 400, "BadRequest")


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("2147483648", "int32"),
        ("-2147483649", "int32"),
        ("1208925819614629174706176", "integer"),
        ("1.2e29", "integer"),
        ("1e308", "integer"),
        ("-1e308", "integer"),
        ("1.5", "integer"),
        ('"3"', "integer"),
    ],
)
def test_huge_and_fractional_numbers_in_int32_fields_are_400(target: Target, value: str, kind: str) -> None:
    response = target.send("POST", JOBS, _job("numbers", value))
    _status(response, 400, "BadRequest", "spec.parallelism", f"of type {kind}" if kind == "int32" else "integer")


def test_a_negative_int32_in_range_reaches_validation(target: Target) -> None:
    _status(target.send("POST", JOBS, _job("negative", "-1")), 422, "Invalid", "spec.parallelism")


def test_unknown_fields_under_strict_validation_are_400(target: Target) -> None:
    body = json.dumps({"metadata": {"name": "strict", "bogus": 1}, "data": {}, "extra": True}).encode()
    response = target.send("POST", CONFIGMAPS, body, fieldValidation="Strict")
    _status(response, 400, "BadRequest", 'unknown field "extra"', 'unknown field "metadata.bogus"')


def test_a_cr_or_lf_in_an_unknown_field_name_is_an_escaped_warning(target: Target) -> None:
    body = b'{"metadata":{"name":"crlf"},"data":{},"bad\\rkey\\nX-Injected: 1":1}'
    response = target.send("POST", CONFIGMAPS, body)
    assert response.status_code == 201, response.text
    assert "X-Injected" not in response.headers
    assert response.headers["Warning"] == '299 - "unknown field \\"bad\\rkey\\nX-Injected: 1\\""'


@pytest.mark.parametrize("name", ["..", ".", "a/b", "a\u0000b", "../../etc", "A"])
def test_names_with_dots_slashes_and_nul_are_invalid(target: Target, name: str) -> None:
    response = target.send("POST", CONFIGMAPS, _configmap(name, {}))
    _status(response, 422, "Invalid", "metadata.name")


@pytest.mark.parametrize("segment", ["%2e%2e", "%2E.", "a%2fb", "a%00b"])  # a raw ".." is resolved by the client
def test_odd_names_in_the_path_are_4xx(target: Target, segment: str) -> None:
    response = target.send("GET", f"{CONFIGMAPS}/{segment}")
    assert 400 <= response.status_code < 500, response.text[:500]
