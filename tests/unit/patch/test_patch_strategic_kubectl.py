"""Differential test: our strategic merge patch against the real ``kubectl patch --local``.

kubectl applies strategic merge patches with apimachinery's own implementation and the built-in
Deployment schema, offline. Skipped when kubectl is not on PATH.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from typing import Any

import pytest
from tests.e2e.harness import find_kubectl

from pykueue.registry.patch import apply_strategic_merge_patch

KUBECTL = find_kubectl()
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="no kubectl in .cache/kubectl or on PATH: run `make kubectl`")

KEYS = {  # the Deployment's patchMergeKeys, as its Go struct tags declare them
    "spec.template.spec.containers": "name",
    "spec.template.spec.containers.env": "name",
    "spec.template.spec.containers.ports": "containerPort",
    "spec.template.spec.containers.volumeMounts": "mountPath",
    "spec.template.spec.volumes": "name",
    "spec.template.spec.initContainers": "name",
}

LIVE: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "demo", "labels": {"app": "nginx", "tier": "fe"}, "finalizers": ["a", "b"]},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "nginx"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx",
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                        "ports": [{"containerPort": 80}, {"containerPort": 443}],
                        "args": ["x", "y"],
                    },
                    {"name": "side", "image": "redis"},
                ],
                "tolerations": [{"key": "k", "operator": "Exists"}],
                "volumes": [{"name": "v1", "emptyDir": {}}],
            },
        },
    },
}


def pod(patch: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": patch}}}


PATCHES = [
    pytest.param(pod({"containers": [{"name": "new", "image": "x"}]}), id="add-container"),
    pytest.param(pod({"containers": [{"name": "side", "image": "redis:7"}]}), id="change-second"),
    pytest.param(pod({"containers": [{"name": "web", "$patch": "delete"}]}), id="delete-container"),
    pytest.param(pod({"containers": [{"name": "z", "image": "z"}, {"$patch": "replace"}]}), id="replace-list"),
    pytest.param(
        pod({"containers": [{"name": "web", "env": [{"name": "C", "value": "3"}, {"name": "A", "value": "9"}]}]}),
        id="env-merge",
    ),
    pytest.param(pod({"containers": [{"name": "web", "args": ["z"]}]}), id="atomic-args"),
    pytest.param(pod({"containers": [{"name": "web", "ports": [{"containerPort": 8080}]}]}), id="ports"),
    pytest.param(pod({"tolerations": [{"key": "other", "operator": "Exists"}]}), id="tolerations-replaced"),
    pytest.param(pod({"$setElementOrder/containers": [{"name": "side"}, {"name": "web"}]}), id="set-order"),
    pytest.param(
        pod(
            {
                "$setElementOrder/containers": [{"name": "web"}, {"name": "n"}, {"name": "side"}],
                "containers": [{"name": "n", "image": "n"}],
            }
        ),
        id="set-order-with-new",
    ),
    pytest.param(
        pod({"containers": [{"name": "web", "$setElementOrder/env": [{"name": "B"}, {"name": "A"}]}]}),
        id="set-order-nested",
    ),
    pytest.param({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, id="retain-keys"),
    pytest.param({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}, id="delete-primitive"),
    pytest.param({"metadata": {"finalizers": ["c", "a"]}}, id="finalizers-union"),
    pytest.param({"metadata": {"labels": {"tier": None, "new": "1"}}}, id="label-null"),
    pytest.param({"metadata": {"labels": {"$patch": "replace", "only": "1"}}}, id="map-replace"),
    pytest.param({"spec": {"replicas": 5, "minReadySeconds": 3}}, id="scalars"),
    pytest.param(
        pod({"volumes": [{"name": "v2", "configMap": {"name": "cm"}}, {"name": "v1", "$patch": "delete"}]}),
        id="volumes-add-delete",
    ),
    pytest.param(
        pod(
            {
                "$setElementOrder/containers": [{"name": "web"}],
                "containers": [{"name": "web", "image": "nginx:2"}, {"name": "side", "$patch": "delete"}],
            }
        ),
        id="kubectl-apply-3way",
    ),
    pytest.param({"spec": {"strategy": {"$patch": "delete"}}}, id="map-delete"),
    pytest.param(
        pod({"initContainers": [{"name": "i", "image": "b"}, {"name": "gone", "$patch": "delete"}]}),
        id="new-list-with-directives",
    ),
    pytest.param(pod({"containers": None}), id="null-merging-list"),
    pytest.param(pod({"containers": []}), id="empty-merging-list"),
    pytest.param(
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": None}}},
        id="retain-keys-with-null",
    ),
    pytest.param(
        {"metadata": {"$setElementOrder/finalizers": ["b", "c", "a"], "finalizers": ["c"]}},
        id="set-order-primitive-add",
    ),
    pytest.param(
        pod({"containers": [{"name": "side", "image": "1"}, {"name": "side", "args": ["q"]}]}),
        id="same-key-twice-in-patch",
    ),
]


def kubectl_patch(live: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    assert KUBECTL is not None
    out = subprocess.run(
        [KUBECTL, "patch", "--local", "-f", "-", "--type", "strategic", "-o", "json", "-p", json.dumps(patch)],
        input=json.dumps(live),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "KUBECONFIG": os.devnull},
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


@pytest.mark.parametrize("patch", PATCHES)
def test_matches_kubectl(patch: dict[str, Any]) -> None:
    want = kubectl_patch(LIVE, patch)
    got = apply_strategic_merge_patch(copy.deepcopy(LIVE), patch, KEYS)
    assert got == want
