"""Small readers for objects fetched with ``kubectl -o json`` in end-to-end tests."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.harness import Pykueue


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c.get("type") == kind), {})


def is_true(obj: dict[str, Any], kind: str) -> bool:
    return condition(obj, kind).get("status") == "True"


def get(server: Pykueue, *args: str) -> dict[str, Any]:
    return dict(json.loads(server.kubectl("get", *args, "-o", "json").stdout))


def items(server: Pykueue, *args: str) -> list[dict[str, Any]]:
    return list(get(server, *args)["items"])


def owner_name(obj: dict[str, Any]) -> str:
    return str((obj["metadata"].get("ownerReferences") or [{}])[0].get("name", ""))


def workload_of(server: Pykueue, job: str, namespace: str = "default") -> dict[str, Any] | None:
    return next((w for w in items(server, "workloads", "-n", namespace) if owner_name(w) == job), None)


def job_manifest(
    name: str,
    queue: str,
    *,
    cpu: str = "1",
    command: str = "sleep 600",
    namespace: str = "default",
    parallelism: int = 1,
    labels: dict[str, str] | None = None,
    extra_requests: dict[str, str] | None = None,
) -> str:
    all_labels = {"kueue.x-k8s.io/queue-name": queue, **(labels or {})}
    requests = {"cpu": cpu, **(extra_requests or {})}
    return json.dumps(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "labels": all_labels},
            "spec": {
                "parallelism": parallelism,
                "completions": parallelism,
                "backoffLimit": 0,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "main",
                                "image": "busybox",
                                "command": ["sh", "-c", command],
                                "resources": {"requests": requests},
                            }
                        ],
                    }
                },
            },
        }
    )


def cpu_queue(cpu: int, *, cluster_queue: str = "cq", local_queue: str = "lq", namespace: str = "default") -> str:
    """A ResourceFlavor, a ClusterQueue with ``cpu`` cores of quota, and a LocalQueue pointing at it."""
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cluster_queue}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: {cpu}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {local_queue}, namespace: {namespace}}}
spec: {{clusterQueue: {cluster_queue}}}
"""
