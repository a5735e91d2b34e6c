"""client-go fidelity against ``pykueue up``: server-side apply through /status, an ordinary install
manifest of built-in kinds, and Events posted through events.k8s.io/v1, with the real kubectl and the
official ``kubernetes`` Python client."""

from __future__ import annotations

import json
from typing import Any

import yaml
from kubernetes import client, config

from tests.e2e.harness import QUICKSTART, Pykueue

CQ_FILE = str(QUICKSTART / "cluster-queue.yaml")
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
APPLY = "application/apply-patch+yaml"


def _condition(kind: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "reason": "Checked",
        "message": f"{kind} holds",
        "lastTransitionTime": "2027-01-15T08:00:00Z",
    }


def _apply_entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"]["managedFields"] if e["operation"] == "Apply"}


def test_status_apply_through_the_python_client(kueue_api: Pykueue) -> None:
    api_only = kueue_api  # a bare cluster serves ClusterQueues once Kueue's CRDs are applied
    api_only.kubectl("apply", "-f", CQ_FILE)
    api: Any = client.CustomObjectsApi(config.new_client_from_config(config_file=str(api_only.kubeconfig)))

    def apply(manager: str, status: dict[str, Any]) -> dict[str, Any]:
        body = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue", "namespace": "default"},
            "status": status,
        }
        result: dict[str, Any] = api.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            "default",
            "localqueues",
            "user-queue",
            body,
            field_manager=manager,
            force=True,
            _content_type=APPLY,
        )
        return result

    apply("alpha", {"conditions": [_condition("Alpha")], "pendingWorkloads": 1})
    both = apply("beta", {"conditions": [_condition("Beta")]})
    assert [c["type"] for c in both["status"]["conditions"]] == ["Alpha", "Beta"]
    entries = _apply_entries(both)
    assert entries["alpha"]["subresource"] == "status"
    assert entries["beta"]["subresource"] == "status"

    after = apply("alpha", {"pendingWorkloads": 1})  # alpha stops applying its condition
    assert [c["type"] for c in after["status"]["conditions"]] == ["Beta"]
    assert after["status"]["pendingWorkloads"] == 1
    stored = api.get_namespaced_custom_object(GROUP, VERSION, "default", "localqueues", "user-queue")
    assert [c["type"] for c in stored["status"]["conditions"]] == ["Beta"]


def _status_manifest(*conditions: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": "cluster-queue"},
            "status": {"conditions": [_condition(c) for c in conditions]},
        }
    )


def test_status_apply_with_kubectl_subresource(kueue_api: Pykueue) -> None:
    api_only = kueue_api  # a bare cluster serves ClusterQueues once Kueue's CRDs are applied
    api_only.kubectl("apply", "-f", CQ_FILE)
    for manager, condition in (("alpha", "Alpha"), ("beta", "Beta")):
        api_only.kubectl(
            "apply",
            "--server-side",
            "--subresource=status",
            f"--field-manager={manager}",
            "-f",
            "-",
            input=_status_manifest(condition),
        )
    obj = json.loads(api_only.kubectl("get", "cq", "cluster-queue", "-o", "json", "--show-managed-fields").stdout)
    assert [c["type"] for c in obj["status"]["conditions"]] == ["Alpha", "Beta"]
    assert _apply_entries(obj)["alpha"]["subresource"] == "status"
    assert obj["spec"]["resourceGroups"]  # the spec was not touched by the status applies

    conflict = api_only.kubectl(
        "apply",
        "--server-side",
        "--subresource=status",
        "--field-manager=beta",
        "-f",
        "-",
        input=_status_manifest("Alpha").replace("Alpha holds", "changed"),
        check=False,
    )
    assert conflict.returncode != 0
    assert 'conflict with "alpha" with subresource "status"' in conflict.stderr

    api_only.kubectl(
        "apply",
        "--server-side",
        "--subresource=status",
        "--field-manager=alpha",
        "-f",
        "-",
        input=yaml.safe_dump(
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "ClusterQueue",
                "metadata": {"name": "cluster-queue"},
                "status": {},
            }
        ),
    )
    obj = json.loads(api_only.kubectl("get", "cq", "cluster-queue", "-o", "json").stdout)
    assert [c["type"] for c in obj["status"]["conditions"]] == ["Beta"]


INSTALL_MANIFEST = """
apiVersion: v1
kind: ServiceAccount
metadata: {name: operator, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: operator}
rules:
- apiGroups: [""]
  resources: [pods, events]
  verbs: [get, list, watch, create, patch]
- apiGroups: [apps]
  resources: [deployments]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: operator}
subjects:
- {kind: ServiceAccount, name: operator, namespace: default}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: operator, namespace: default, labels: {app: operator}}
spec:
  replicas: 2
  selector: {matchLabels: {app: operator}}
  template:
    metadata: {labels: {app: operator}}
    spec:
      serviceAccountName: operator
      containers:
      - name: manager
        image: example.com/operator:v1
        ports: [{containerPort: 9443, name: webhook}]
---
apiVersion: v1
kind: Service
metadata: {name: operator-webhook, namespace: default}
spec:
  selector: {app: operator}
  ports: [{port: 443, targetPort: 9443}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: operator}
webhooks:
- name: validate.operator.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  # The operator's webhook never runs here: with Fail, re-applying the Deployment would be refused
  # ("failed calling webhook"), as kube-apiserver refuses it while a webhook is unreachable.
  failurePolicy: Ignore
  clientConfig:
    service: {name: operator-webhook, namespace: default, path: /validate}
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
"""


def test_an_install_manifest_applies_server_side(api_only: Pykueue) -> None:
    out = api_only.kubectl("apply", "--server-side", "-f", "-", input=INSTALL_MANIFEST).stdout
    for line in (
        "serviceaccount/operator serverside-applied",
        "clusterrole.rbac.authorization.k8s.io/operator serverside-applied",
        "clusterrolebinding.rbac.authorization.k8s.io/operator serverside-applied",
        "deployment.apps/operator serverside-applied",
        "service/operator-webhook serverside-applied",
        "validatingwebhookconfiguration.admissionregistration.k8s.io/operator serverside-applied",
    ):
        assert line in out
    again = api_only.kubectl("apply", "--server-side", "-f", "-", input=INSTALL_MANIFEST)
    assert again.returncode == 0
    deployment = json.loads(api_only.kubectl("get", "deploy", "operator", "-o", "json").stdout)
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"]["type"] == "RollingUpdate"  # kube's default
    assert deployment["metadata"]["generation"] == 1  # the second apply changed nothing
    service = json.loads(api_only.kubectl("get", "svc", "operator-webhook", "-o", "json").stdout)
    assert service["spec"]["ports"][0]["protocol"] == "TCP"
    explained = api_only.kubectl("explain", "deployment.spec.replicas").stdout
    assert "Number of desired pods" in explained
    bad = INSTALL_MANIFEST.replace("selector: {matchLabels: {app: operator}}", "selector: {matchLabels: {app: x}}")
    refused = api_only.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=bad, check=False)
    assert refused.returncode != 0
    assert "spec.template.metadata.labels" in refused.stderr


WORKLOADS = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: example.com/db:1}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: example.com/web:1}]
---
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: default}
spec:
  limits:
  - type: Container
    default: {cpu: 500m}
"""


def test_kubectl_deletes_all_workloads_and_limit_ranges(api_only: Pykueue) -> None:
    api_only.kubectl("apply", "-f", "-", input=WORKLOADS)
    listed = api_only.kubectl("get", "statefulsets,deployments,limitranges", "-n", "default", "-o", "name").stdout
    assert set(listed.split()) == {"statefulset.apps/db", "deployment.apps/web", "limitrange/defaults"}
    out = api_only.kubectl("delete", "statefulsets,deployments,limitranges", "--all", "-n", "default").stdout
    assert 'statefulset.apps "db" deleted' in out
    assert 'limitrange "defaults" deleted' in out
    left = api_only.kubectl("get", "statefulsets,deployments,limitranges", "-n", "default", "-o", "name").stdout
    assert left.strip() == ""


def test_kubectl_get_events_lists_an_events_v1_event(api_only: Pykueue) -> None:
    events = client.EventsV1Api(config.new_client_from_config(config_file=str(api_only.kubeconfig)))
    event = client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="operator.1", namespace="default"),
        event_time="2027-01-15T08:00:00.000000Z",  # type: ignore[arg-type]  # sent as written
        reporting_controller="example.com/operator",
        reporting_instance="operator-0",
        action="Reconcile",
        reason="Provisioned",
        type="Normal",
        note="provisioned the queue",
        regarding=client.V1ObjectReference(kind="Pod", name="p1", namespace="default"),
    )
    events.create_namespaced_event("default", event)
    out = api_only.kubectl("get", "events", "-n", "default").stdout
    row = next(line for line in out.splitlines() if "Provisioned" in line)
    assert "pod/p1" in row
    assert "provisioned the queue" in row
    v1 = json.loads(api_only.kubectl("get", "events.v1.events.k8s.io", "operator.1", "-o", "json").stdout)
    assert v1["note"] == "provisioned the queue"
