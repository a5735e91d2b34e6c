"""Protobuf bodies for Job and Pod (and what they embed), decoded into what the JSON API would receive.

The messages here are built with a tiny protobuf encoder written for this file (independent of the
decoder), laid out the way gogo-protobuf writes them: non-pointer fields present even when empty.
The kubectl tests run the real binary against the real server.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pykueue.api.meta.errors import BadRequest, UnsupportedMediaType
from pykueue.apiserver.protobuf import PROTOBUF, decode_protobuf

from . import test_apiserver_kubectl as kubectl_tests
from .conftest import Api

kubectl = kubectl_tests.kubectl  # the fixture: a TLS server plus the real kubectl
Kubectl = kubectl_tests.Kubectl


# --- a minimal protobuf encoder --------------------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int32/int64 are sent as 10-byte two's complement
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _bool(number: int, value: bool) -> bytes:
    return _int(number, int(value))


def _bytes(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _str(number: int, text: str) -> bytes:
    return _bytes(number, text.encode())


def _msg(number: int, *parts: bytes) -> bytes:
    return _bytes(number, b"".join(parts))


def _entry(number: int, key: str, value: str) -> bytes:
    return _msg(number, _str(1, key), _str(2, value))


def _quantity(number: int, key: str, value: str) -> bytes:
    return _msg(number, _str(1, key), _msg(2, _str(1, value)))


def _envelope(api_version: str, kind: str, *parts: bytes) -> bytes:
    return b"k8s\x00" + _msg(1, _str(1, api_version), _str(2, kind)) + _msg(2, *parts)


def _meta(name: str, *extra: bytes) -> bytes:
    """ObjectMeta as gogo writes it: empty strings, generation 0 and an empty creationTimestamp."""
    return _msg(1, _str(1, name), _str(2, ""), _str(3, ""), _str(6, ""), _int(7, 0), _msg(8), *extra)


def _container(name: str, *extra: bytes, number: int = 2) -> bytes:
    return _msg(
        number,
        _str(1, name),
        _str(2, "busybox"),
        _str(5, ""),
        _msg(8),
        _str(13, ""),
        _str(14, ""),
        _bool(16, False),
        _bool(17, False),
        _bool(18, False),
        _str(20, ""),
        *extra,
    )


def _pod_spec(*parts: bytes) -> bytes:
    """PodSpec with the non-pointer fields kubectl always writes (first: a later occurrence of a field wins)."""
    return _msg(
        2,
        _str(6, ""),
        _str(8, ""),
        _str(9, ""),
        _str(10, ""),
        _bool(11, False),
        _bool(12, False),
        _bool(13, False),
        _str(16, ""),
        _str(17, ""),
        _str(19, ""),
        _str(24, ""),
        *parts,
    )


def _job(*spec: bytes, meta: bytes | None = None) -> bytes:
    status = _msg(3, _int(4, 0), _int(5, 0), _int(6, 0), _str(7, ""))
    return _envelope("batch/v1", "Job", meta or _meta("hello"), _msg(2, *spec), status)


def _pod(*spec: bytes, status: bytes = b"") -> bytes:
    return _envelope("v1", "Pod", _meta("p"), _pod_spec(*spec), _msg(3, _str(1, ""), *([status] if status else [])))


def _template(*spec: bytes) -> bytes:
    return _msg(6, _msg(1, _msg(8)), _pod_spec(*spec))


# --- decoding ----------------------------------------------------------------------------------------


def test_job_as_kubectl_create_job_sends_it() -> None:
    body = _job(_template(_container("hello", _str(3, "echo"), _str(3, "hi")), _str(3, "Never")))
    assert decode_protobuf(body) == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "hello"},
        "spec": {
            "template": {
                "metadata": {},
                "spec": {
                    "containers": [{"name": "hello", "image": "busybox", "command": ["echo", "hi"], "resources": {}}],
                    "restartPolicy": "Never",
                },
            }
        },
        "status": {},
    }


def test_job_spec_pointer_fields_keep_their_zero_values() -> None:
    selector = _msg(4, _entry(1, "app", "x"), _msg(2, _str(1, "tier"), _str(2, "In"), _str(3, "a"), _str(3, "b")))
    body = _job(
        _int(1, 0),
        _int(2, 3),
        _int(3, 600),
        selector,
        _bool(5, True),
        _template(_container("c")),
        _int(7, 0),
        _int(8, 0),
        _str(9, "Indexed"),
        _bool(10, False),
        _int(12, 1),
        _str(15, "kueue.x-k8s.io/x"),
    )
    spec = decode_protobuf(body)["spec"]
    assert {k: v for k, v in spec.items() if k != "template"} == {
        "parallelism": 0,
        "completions": 3,
        "activeDeadlineSeconds": 600,
        "selector": {
            "matchLabels": {"app": "x"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
        },
        "manualSelector": True,
        "backoffLimit": 0,
        "ttlSecondsAfterFinished": 0,
        "completionMode": "Indexed",
        "suspend": False,
        "backoffLimitPerIndex": 1,
        "managedBy": "kueue.x-k8s.io/x",
    }


def test_metadata_maps_owner_references_finalizers_and_times() -> None:
    owner = _msg(13, _str(5, "v1"), _str(1, "Pod"), _str(3, "owner"), _str(4, "uid-1"), _bool(6, True), _bool(7, False))
    meta = _msg(
        1,
        _str(1, ""),
        _str(2, "gen-"),
        _str(3, "team"),
        _int(7, 0),
        _msg(8, _int(1, 1_800_000_000), _int(2, 5)),
        _entry(11, "a", "1"),
        _entry(11, "empty", ""),
        _entry(12, "note", "hi there"),
        owner,
        _str(14, "example.com/f"),
    )
    assert decode_protobuf(_job(meta=meta))["metadata"] == {
        "generateName": "gen-",
        "namespace": "team",
        "creationTimestamp": "2027-01-15T08:00:00Z",
        "labels": {"a": "1", "empty": ""},
        "annotations": {"note": "hi there"},
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "owner",
                "uid": "uid-1",
                "controller": True,
                "blockOwnerDeletion": False,
            }
        ],
        "finalizers": ["example.com/f"],
    }


def test_container_env_resources_ports_and_mounts() -> None:
    lor = _msg(1, _str(1, "settings"))
    env = [
        _msg(7, _str(1, "X"), _str(2, "1")),
        _msg(7, _str(1, "FROM_CM"), _str(2, ""), _msg(3, _msg(3, lor, _str(2, "k"), _bool(3, False)))),
        _msg(7, _str(1, "FROM_SECRET"), _msg(3, _msg(4, lor, _str(2, "pw")))),
        _msg(7, _str(1, "NAME"), _msg(3, _msg(1, _str(1, ""), _str(2, "metadata.name")))),
        _msg(7, _str(1, "CPU"), _msg(3, _msg(2, _str(1, ""), _str(2, "limits.cpu"), _msg(3, _str(1, "1m"))))),
    ]
    resources = _msg(
        8,
        _quantity(1, "cpu", "1"),
        _quantity(1, "memory", "1Gi"),
        _quantity(2, "cpu", "100m"),
        _quantity(2, "nvidia.com/gpu", "2"),
    )
    container = _msg(
        2,
        _str(1, "main"),
        _str(2, "busybox"),
        _str(3, "sh"),
        _str(4, ""),
        _str(4, "x"),
        _str(5, "/work"),
        _msg(6, _str(1, "http"), _int(2, 0), _int(3, 8080), _str(4, "TCP"), _str(5, "")),
        *env,
        resources,
        _msg(9, _str(1, "data"), _bool(2, True), _str(3, "/data"), _str(4, ""), _str(6, "")),
        _str(13, "/dev/termination-log"),
        _str(14, "IfNotPresent"),
        _bool(16, True),
        _bool(17, False),
        _bool(18, True),
        _msg(19, _str(1, "CFG_"), _msg(2, lor)),
        _str(20, "File"),
    )
    decoded = decode_protobuf(_pod(container))["spec"]["containers"]
    assert decoded == [
        {
            "name": "main",
            "image": "busybox",
            "command": ["sh"],
            "args": ["", "x"],
            "workingDir": "/work",
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [
                {"name": "X", "value": "1"},
                {
                    "name": "FROM_CM",
                    "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "k", "optional": False}},
                },
                {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "settings", "key": "pw"}}},
                {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}},
            ],
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "100m", "nvidia.com/gpu": "2"}},
            "volumeMounts": [{"name": "data", "readOnly": True, "mountPath": "/data"}],
            "terminationMessagePath": "/dev/termination-log",
            "imagePullPolicy": "IfNotPresent",
            "stdin": True,
            "tty": True,
            "envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "settings"}}],
            "terminationMessagePolicy": "File",
        }
    ]


def test_pod_spec_scheduling_fields() -> None:
    node_term = _msg(1, _msg(1, _str(1, "zone"), _str(2, "In"), _str(3, "a")))
    affinity = _msg(
        18,
        _msg(1, _msg(1, node_term), _msg(2, _int(1, 10), _msg(2, _msg(1, _str(1, "ssd"), _str(2, "Exists"))))),
        _msg(3, _msg(1, _msg(1, _entry(1, "app", "web")), _str(3, "kubernetes.io/hostname"))),
    )
    spec = decode_protobuf(
        _pod(
            _container("c"),
            _container("init", number=20),
            _str(3, "OnFailure"),
            _int(4, 0),
            _int(5, 60),
            _entry(7, "disk", "ssd"),
            _str(8, "runner"),
            _str(10, "node-1"),
            _bool(11, True),
            _msg(14, _int(4, 1000), _bytes(4, _varint(2000) + _varint(3000))),
            affinity,
            _msg(22, _str(1, "k"), _str(2, "Exists"), _str(3, ""), _str(4, "NoExecute"), _int(5, 0)),
            _str(24, "high"),
            _int(25, -5),
            _quantity(32, "cpu", "250m"),
            _msg(38, _str(1, "kueue.x-k8s.io/admission")),
        )
    )["spec"]
    assert {k: v for k, v in spec.items() if k not in ("containers", "initContainers")} == {
        "restartPolicy": "OnFailure",
        "terminationGracePeriodSeconds": 0,
        "activeDeadlineSeconds": 60,
        "nodeSelector": {"disk": "ssd"},
        "serviceAccountName": "runner",
        "nodeName": "node-1",
        "hostNetwork": True,
        "securityContext": {"supplementalGroups": [1000, 2000, 3000]},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}
                ],
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            },
        },
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}],
        "priorityClassName": "high",
        "priority": -5,
        "overhead": {"cpu": "250m"},
        "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
    }
    assert [c["name"] for c in spec["initContainers"]] == ["init"]


def test_volumes_decode_their_inline_source() -> None:
    items = _msg(2, _str(1, "k"), _str(2, "file"), _int(3, 0o400))
    volumes = [
        _msg(1, _str(1, "scratch"), _msg(2, _msg(2, _str(1, "")))),
        _msg(1, _str(1, "mem"), _msg(2, _msg(2, _str(1, "Memory"), _msg(2, _str(1, "64Mi"))))),
        _msg(1, _str(1, "cfg"), _msg(2, _msg(19, _msg(1, _str(1, "settings")), items, _int(3, 420)))),
        _msg(1, _str(1, "sec"), _msg(2, _msg(6, _str(1, "creds"), _bool(4, True)))),
        _msg(1, _str(1, "claim"), _msg(2, _msg(10, _str(1, "pvc"), _bool(2, False)))),
        _msg(1, _str(1, "token"), _msg(2, _msg(26, _msg(1, _msg(4, _str(1, ""), _int(2, 3600), _str(3, "token")))))),
    ]
    assert decode_protobuf(_pod(*volumes, _container("c")))["spec"]["volumes"] == [
        {"name": "scratch", "emptyDir": {}},
        {"name": "mem", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
        {
            "name": "cfg",
            "configMap": {"name": "settings", "items": [{"key": "k", "path": "file", "mode": 256}], "defaultMode": 420},
        },
        {"name": "sec", "secret": {"secretName": "creds", "optional": True}},
        {"name": "claim", "persistentVolumeClaim": {"claimName": "pvc"}},
        {
            "name": "token",
            "projected": {"sources": [{"serviceAccountToken": {"expirationSeconds": 3600, "path": "token"}}]},
        },
    ]


def test_probes_int_or_string_ports_and_lifecycle() -> None:
    container = _container(
        "c",
        _msg(10, _msg(1, _msg(2, _str(1, "/healthz"), _msg(2, _int(1, 0), _int(2, 8080)))), _int(2, 5), _int(3, 0)),
        _msg(11, _msg(1, _msg(3, _msg(1, _int(1, 1), _str(3, "http"))))),
        _msg(12, _msg(2, _msg(4, _int(1, 3)))),
    )
    decoded = decode_protobuf(_pod(container))["spec"]["containers"][0]
    assert decoded["livenessProbe"] == {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5}
    assert decoded["readinessProbe"] == {"tcpSocket": {"port": "http"}}
    assert decoded["lifecycle"] == {"preStop": {"sleep": {"seconds": 3}}}


def test_pod_status_times_and_conditions() -> None:
    status = b"".join(
        [
            _str(1, "Running"),
            _msg(2, _str(1, "Ready"), _str(2, "True"), _msg(3), _msg(4, _int(1, 1_800_000_000))),
            _msg(7, _int(1, 1_800_000_060)),
            _str(9, "BestEffort"),
        ]
    )
    assert decode_protobuf(_pod(_container("c"), status=status))["status"] == {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2027-01-15T08:00:00Z"}],
        "startTime": "2027-01-15T08:01:00Z",
        "qosClass": "BestEffort",
    }


def test_zero_times_are_omitted_like_null() -> None:
    for zero in (_msg(8), _msg(8, _int(1, 0), _int(2, 0)), _msg(8, _int(1, -62135596800), _int(2, 0))):
        assert decode_protobuf(_job(meta=_msg(1, _str(1, "j"), zero)))["metadata"] == {"name": "j"}


def test_the_last_occurrence_of_a_field_wins() -> None:
    assert decode_protobuf(_job(meta=_msg(1, _str(1, "a"), _str(1, ""))))["metadata"] == {}
    assert decode_protobuf(_job(meta=_msg(1, _str(1, ""), _str(1, "b"))))["metadata"] == {"name": "b"}


def test_earlier_kinds_keep_their_shape() -> None:
    pc = decode_protobuf(
        _envelope("scheduling.k8s.io/v1", "PriorityClass", _meta("low"), _int(2, 0), _bool(3, False), _str(4, ""))
    )
    assert pc == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "low"},
        "value": 0,
    }
    cm = decode_protobuf(_envelope("v1", "ConfigMap", _meta("cm"), _entry(2, "a", "b"), _bool(4, False)))
    assert cm["data"] == {"a": "b"}
    assert cm["immutable"] is False


# --- rejection ---------------------------------------------------------------------------------------

_GOOD_JOB = _job(_template(_container("hello", _str(3, "echo")), _str(3, "Never")))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            _job(_template(_container("c", _str(99, "surprise")))),
            r"Container has no field number 99 \(at spec.template.spec.containers\[0\]\)",
            id="unknown-field",
        ),
        pytest.param(
            _job(meta=_msg(1, _str(50, "x"))),
            r"ObjectMeta has no field number 50 \(at metadata\)",
            id="unknown-meta-field",
        ),
        pytest.param(_job(meta=_msg(1, _int(1, 5))), "metadata.name has wire type 0", id="wrong-wire-type"),
        pytest.param(_job(_int(6, 1)), "spec.template has wire type 0", id="varint-for-message"),
        pytest.param(_job(meta=_msg(1, _str(1, "x") + b"\x0b")), "unsupported wire type 3", id="group-wire-type"),
        pytest.param(_job(meta=_msg(1, _bytes(1, b"\xff\xfe"))), "malformed protobuf body", id="invalid-utf8"),
        pytest.param(
            _job(meta=_msg(1, _msg(11, _str(1, "a"), _str(3, "b")))),
            "map entry has unexpected field 3",
            id="bad-map-entry",
        ),
        pytest.param(
            _pod(_container("c", _msg(8, _msg(1, _str(1, "cpu"), _msg(2, _str(1, "1"), _int(2, 1)))))),
            "Quantity has field 2",
            id="bad-quantity",
        ),
        pytest.param(_job(meta=_msg(1, _msg(8, _str(1, "x")))), "Time has unexpected field 1", id="bad-time"),
        pytest.param(
            b"k8s\x00" + _msg(1, _str(1, "batch/v1"), _str(2, "Job")) + _int(9, 1), "envelope", id="bad-envelope"
        ),
        pytest.param(
            _job(meta=_msg(1, _varint(1 << 3) + b"\xff" * 11)), "varint longer than 10 bytes", id="overlong-varint"
        ),
    ],
)
def test_malformed_bodies_are_400_naming_the_problem(body: bytes, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        decode_protobuf(body)


def test_every_truncation_of_the_object_is_400() -> None:
    object_start = len(b"k8s\x00" + _msg(1, _str(1, "batch/v1"), _str(2, "Job")))
    for cut in range(object_start + 1, len(_GOOD_JOB)):
        with pytest.raises(BadRequest, match="malformed protobuf body"):
            decode_protobuf(_GOOD_JOB[:cut])
    assert decode_protobuf(_GOOD_JOB)["metadata"] == {"name": "hello"}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        pytest.param(_job(_msg(11, _msg(1, _str(1, "FailJob")))), "spec.podFailurePolicy", id="podFailurePolicy"),
        pytest.param(_job(_msg(16)), "spec.successPolicy", id="successPolicy"),
        pytest.param(
            _pod(_msg(1, _str(1, "v"), _msg(2, _msg(28, _str(1, "driver"))))), "spec.volumes[0].csi", id="csi-volume"
        ),
        pytest.param(
            _pod(_container("c", _msg(25, _str(1, "Restart")))),
            "spec.containers[0].restartPolicyRules",
            id="restartPolicyRules",
        ),
        pytest.param(
            _envelope("v1", "Pod", _msg(1, _str(1, "p"), _msg(17, _str(1, "kubectl")))),
            "metadata.managedFields",
            id="managedFields",
        ),
    ],
)
def test_known_but_undecoded_fields_are_415_naming_the_field(body: bytes, path: str) -> None:
    with pytest.raises(UnsupportedMediaType, match=f"{re.escape(path)} .*send YAML or JSON instead"):
        decode_protobuf(body)


def test_custom_resources_are_415_naming_the_kind() -> None:
    with pytest.raises(UnsupportedMediaType, match=r"JobSet \(jobset.x-k8s.io/v1alpha2\) is not a built-in kind"):
        decode_protobuf(_envelope("jobset.x-k8s.io/v1alpha2", "JobSet", _meta("d")))


# --- through the HTTP server -----------------------------------------------------------------------


async def test_protobuf_job_and_pod_are_created_over_http(api: Api) -> None:
    status, job, _ = await api.request(
        "POST", "/apis/batch/v1/namespaces/default/jobs", raw=_GOOD_JOB, content_type=PROTOBUF
    )
    assert status == 201, job
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo"]
    assert job["spec"]["backoffLimit"] == 6  # defaulted by the registry, as for a JSON body
    status, pod, _ = await api.request(
        "POST", "/api/v1/namespaces/default/pods", raw=_pod(_container("c"), _str(3, "Never")), content_type=PROTOBUF
    )
    assert status == 201, pod
    assert pod["spec"]["containers"][0]["image"] == "busybox"


async def test_rejected_protobuf_stores_nothing(api: Api) -> None:
    body = _envelope("v1", "Pod", _meta("bad"), _pod_spec(_container("c", _str(99, "x"))))
    status, error, _ = await api.request("POST", "/api/v1/namespaces/default/pods", raw=body, content_type=PROTOBUF)
    assert status == 400
    assert error["reason"] == "BadRequest"
    assert "Container has no field number 99" in error["message"]
    status, _, _ = await api.request("GET", "/api/v1/namespaces/default/pods/bad")
    assert status == 404


# --- the real kubectl --------------------------------------------------------------------------------


def _comparable(job: dict[str, Any]) -> dict[str, Any]:
    """A Job's spec without what differs between two creations (uids in selector and template labels).

    JSON clients send the template's zero creationTimestamp as null; the decoder omits it (same meaning).
    """
    spec = json.loads(json.dumps(job["spec"]))
    spec.pop("selector", None)
    template_meta = spec["template"]["metadata"]
    template_meta.pop("labels", None)
    if template_meta.get("creationTimestamp", "") is None:
        del template_meta["creationTimestamp"]
    return dict(spec)


@pytest.mark.skipif(kubectl_tests.KUBECTL is None, reason="no kubectl in .cache/kubectl or on PATH: run `make kubectl`")
async def test_kubectl_create_job_matches_the_json_path(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("create", "job", "hello", "--image=busybox", "--", "echo", "hi")
    assert out.strip() == "job.batch/hello created"
    await kubectl.run("create", "namespace", "team")
    _, out, _ = await kubectl.run("create", "job", "j2", "-n", "team", "--image=busybox", "--", "sh", "-c", "sleep 1")
    assert out.strip() == "job.batch/j2 created"
    _, out, _ = await kubectl.run("get", "job", "j2", "-n", "team", "-o", "json")
    j2 = json.loads(out)
    assert j2["metadata"]["namespace"] == "team"
    assert j2["spec"]["template"]["spec"]["containers"][0]["command"] == ["sh", "-c", "sleep 1"]
    _, out, _ = await kubectl.run("get", "job", "hello", "-o", "json")
    via_protobuf = json.loads(out)
    container = via_protobuf["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"], container["command"]) == ("hello", "busybox", ["echo", "hi"])
    assert via_protobuf["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    # The same command rendered as JSON and sent with create -f must store the same spec.
    await kubectl.run("create", "namespace", "other")
    _, rendered, _ = await kubectl.run(
        "create", "job", "hello", "--image=busybox", "--dry-run=client", "-o", "json", "--", "echo", "hi"
    )
    await kubectl.run("create", "-n", "other", "-f", "-", stdin=rendered)
    _, out, _ = await kubectl.run("get", "job", "hello", "-n", "other", "-o", "json")
    assert _comparable(json.loads(out)) == _comparable(via_protobuf)


@pytest.mark.skipif(kubectl_tests.KUBECTL is None, reason="no kubectl in .cache/kubectl or on PATH: run `make kubectl`")
async def test_kubectl_run_pod(kubectl: Kubectl) -> None:
    """kubectl 1.32 sends ``run`` as JSON (seen with -v=8); this guards the user-visible command."""
    overrides = '{"spec":{"containers":[{"name":"p","resources":{"requests":{"cpu":"100m"}}}]}}'
    _, out, _ = await kubectl.run(
        "run",
        "p",
        "--image=busybox",
        "--restart=Never",
        "--labels=a=b",
        "--env=X=1",
        f"--overrides={overrides}",
        "--override-type=strategic",
        "--",
        "echo",
        "hi",
    )
    assert out.strip() == "pod/p created"
    _, out, _ = await kubectl.run("get", "pod", "p", "-o", "json")
    pod = json.loads(out)
    assert pod["metadata"]["labels"] == {"a": "b"}
    container = pod["spec"]["containers"][0]
    assert container["args"] == ["echo", "hi"]
    assert container["env"] == [{"name": "X", "value": "1"}]
    assert container["resources"]["requests"] == {"cpu": "100m"}
    assert pod["spec"]["restartPolicy"] == "Never"
