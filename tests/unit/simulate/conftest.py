"""Small traces and configurations the simulate tests write themselves (never a file outside the repository)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

OBJECTS = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: batch}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  queueingStrategy: BestEffortFIFO
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
"""


def cpu_task(name: str, submit: float, runtime: float, cpu: int, **fields: object) -> dict[str, object]:
    """One task of a JSONL trace: one pod of ``cpu`` cpu in LocalQueue ``team/lq``; ``fields`` add its
    priority (``priority`` or ``priorityClass``)."""
    return {
        "name": name,
        "submit": submit,
        "runtime": runtime,
        "namespace": "team",
        "queue": "lq",
        **fields,
        "podSets": [{"name": "main", "count": 1, "requests": {"cpu": str(cpu)}}],
    }


def write_trace(path: Path, tasks: Iterable[dict[str, object]]) -> Path:
    """Write ``tasks`` (see :func:`cpu_task`) as a JSONL trace at ``path``."""
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return path


FOUR_CPU_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}{preemption}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {{name: cpu, nominalQuota: 4}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: team}}
spec: {{clusterQueue: cq}}
"""


def write_four_cpu_case(
    directory: Path, tasks: Iterable[tuple[str, float, float, int]], *, preempt_lower_priority: bool
) -> tuple[Path, Path]:
    """Write one ClusterQueue of 4 cpu (LocalQueue ``team/lq``) and a JSONL trace of whole-queue tasks.

    The latency and jitter tests reason by hand about who holds the only slot when; they differ
    only in whether the queue preempts lower priorities. ``tasks`` are (name, submit s, runtime s,
    priority), each asking for all 4 cpu."""
    preemption = "\n  preemption: {withinClusterQueue: LowerPriority}" if preempt_lower_priority else ""
    objects = directory / "objects.yaml"
    objects.write_text(FOUR_CPU_QUEUE.format(preemption=preemption))
    trace = write_trace(
        directory / "trace.jsonl",
        (cpu_task(name, submit, runtime, 4, priority=priority) for name, submit, runtime, priority in tasks),
    )
    return objects, trace


# (name, cpu, submit s, runtime s): hand-computed in test_metrics.py
TEN_TASKS = [
    ("t01", 2, 0, 10),
    ("t02", 2, 0, 20),
    ("t03", 2, 5, 10),
    ("t04", 4, 6, 5),
    ("t05", 1, 7, 5),
    ("t06", 1, 30, 10),
    ("t07", 3, 30, 10),
    ("t08", 5, 31, 10),
    ("t09", 2, 35, 5),
    ("t10", 2, 35, 5),
]


@pytest.fixture
def objects_file(tmp_path: Path) -> Path:
    path = tmp_path / "one-queue.yaml"
    path.write_text(OBJECTS)
    return path


@pytest.fixture
def ten_task_trace(tmp_path: Path) -> Path:
    return write_trace(
        tmp_path / "ten.jsonl",
        (cpu_task(name, submit, runtime, cpu, priorityClass="batch") for name, cpu, submit, runtime in TEN_TASKS),
    )


OPENB_PODS = """\
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
pod-a,4000,8192,1,500,,LS,Running,0,100,0
pod-b,8000,16384,2,1000,V100M16|T4,BE,Running,10,200,20
pod-c,1000,1024,0,0,,Burstable,Succeeded,5,50,5
pod-d,2000,2048,1,1000,,Guaranteed,Pending,30,90,
pod-e,2000,2048,1,250,,SomethingElse,Failed,40,60,45
pod-f,1000,1024,1,1000,T4,LS,Running,50,70,50
"""

OPENB_NODES = """sn,cpu_milli,memory_mib,gpu,model
n0,32000,65536,2,T4
n1,32000,65536,2,T4
n2,64000,131072,8,V100M16
n3,16000,32768,0,
"""


@pytest.fixture
def openb_pods(tmp_path: Path) -> Path:
    path = tmp_path / "openb_pod_list_small.csv"
    path.write_text(OPENB_PODS)
    return path


@pytest.fixture
def openb_nodes(tmp_path: Path) -> Path:
    path = tmp_path / "openb_node_list_small.csv"
    path.write_text(OPENB_NODES)
    return path
