"""Kueue's scheduler-benchmark generator config as a trace (``--format kueue``).

Owns turning the expanded generator plan (``pykueue.bench.scheduler.config``) into tasks, and the
objects the generator creates into a :class:`Configuration` (used when no ``--objects`` is given),
built by the same functions ``bench scheduler`` sends, so the replay and the benchmark run the very
same objects and workloads. Each task carries its workload class as the label ``class``.

Who calls it: the CLI. Invariant: tasks keep the generator's order (creation time, then stream),
which is the order ``bench scheduler --virtual-time`` creates them in.
"""

from __future__ import annotations

from pathlib import Path

from pykueue.bench.scheduler.config import ConfigError, Plan, expand, load_config
from pykueue.bench.scheduler.objects import cluster_queue, local_queue, namespace, resource_flavor
from pykueue.simulate.model import PodSetSpec, SimulateError, Task
from pykueue.simulate.objects import Configuration

__all__ = ["load_plan", "plan_configuration", "plan_tasks"]


def load_plan(path: Path) -> Plan:
    try:
        return expand(load_config(path))
    except ConfigError as exc:
        raise SimulateError(f"{path}: invalid generator config: " + "; ".join(exc.problems)) from exc
    except OSError as exc:
        raise SimulateError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def plan_tasks(plan: Plan) -> list[Task]:
    return [
        Task(
            name=w.name,
            submit_s=w.created_ms / 1000,
            runtime_s=w.runtime_ms / 1000,
            pod_sets=(PodSetSpec("main", w.pod_count, (("cpu", w.request),)),),
            namespace=w.namespace,
            queue=w.namespace,
            priority=w.priority,
            labels=(("class", w.class_name),),
        )
        for w in plan.workloads
    ]


def plan_configuration(plan: Plan, name: str) -> Configuration:
    conf = Configuration(name)
    conf.of("ResourceFlavor").append(resource_flavor(plan.resource_flavor))
    for cq in plan.cluster_queues:
        conf.of("Namespace").append(namespace(cq.name))
        conf.of("ClusterQueue").append(cluster_queue(cq, plan.resource_flavor))
        conf.of("LocalQueue").append(local_queue(cq.name))
    return conf
