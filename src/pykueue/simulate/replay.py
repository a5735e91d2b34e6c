"""The replay driver: one configuration, one trace, the production engine in virtual time.

Owns turning tasks into Workloads of the configuration (queue assignment, priority classes
resolved to values) and running them through :class:`~pykueue.bench.scheduler.vcluster.VirtualCluster`
(the loop ``bench scheduler --virtual-time`` uses: creations at their submit instants, finishes a
runtime after admission, preempted workloads requeued and restarted), with a
:class:`~pykueue.simulate.recorder.ReplayRecorder` watching.

A real cluster does not act on a creation at the trace's instant: the API server, the watch and
the scheduler loop take a few milliseconds each, a few trace seconds at the time scales a real-time
run uses, and the amount varies from one workload to the next. On a saturated configuration that
matters more than it seems: whether a queued ``low`` task or a just-created ``high`` one gets a slot
freed a second earlier flips on it, and one flip changes every decision after it. ``jitter_s``
models that: each creation is delayed by its own uniform draw between 0 and ``jitter_s`` trace seconds
(its wait still counts from the trace's submission, as a real run's does), drawn from ``seed``;
replaying several seeds gives the spread of outcomes a real cluster can produce (``samples``).

A real-time run at a time scale of S also stamps each Workload's ``creationTimestamp`` in whole
real seconds, S trace seconds: workloads of one priority created within one such second tie in
queue order (priority, then that timestamp), and the tie is broken by their uids, which a real API
server draws at random. ``stamp_s`` models that: creation timestamps in steps of ``stamp_s`` trace
seconds (starting at a seeded offset, as a real run's seconds start wherever its clock was) and
random (seeded) uids; 0 keeps the trace's own instants and uids that follow the names.

Who calls it: the CLI (``simulate run``) and the ETA accuracy measurement. Invariant:
deterministic: the same configuration, trace, jitter and seed give the same records (tasks are
submitted in trace order, queue assignment is a stable hash, the jitter comes from a seeded
generator, nothing reads the wall clock but the meters).
"""

from __future__ import annotations

import random
import time
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any

from pykueue.bench.scheduler.vcluster import VirtualCluster
from pykueue.simulate.model import SimulateError, Task, workload_object
from pykueue.simulate.objects import Configuration
from pykueue.simulate.recorder import ReplayRecorder, WorkloadRecord

__all__ = ["Replay", "assign_queue", "replay"]


@dataclass(slots=True)
class Replay:
    configuration: Configuration
    recorder: ReplayRecorder
    records: dict[str, WorkloadRecord]
    simulated_ms: int
    cycles: int
    admissions: int
    preemptions: int
    wall_s: float
    engine_s: float
    objects: dict[str, dict[str, Any]]
    """The Workload each task became (no status), by ``namespace/name``."""
    latencies: dict[str, float] = field(default_factory=dict)
    """A real-time run's measured latencies (median, real seconds; see ``realtime``); empty for a replay."""


def assign_queue(task: Task, queues: list[tuple[str, str]]) -> tuple[str, str]:
    """The task's (namespace, LocalQueue): its own, else ``queues[crc32(name) % len(queues)]``."""
    if task.queue is not None:
        return task.namespace or "default", task.queue
    return queues[zlib.crc32(task.name.encode()) % len(queues)]


def _class_name(task: Task, priority: int) -> str:
    return task.priority_class or f"priority-{priority}"


def _targets(conf: Configuration, tasks: list[Task], queue_list: tuple[str, ...]) -> list[tuple[str, str]]:
    if queue_list:
        out = []
        for item in queue_list:
            ns, _, name = item.partition("/")
            out.append((ns, name))
        known = set(conf.local_queues())
        unknown = [f"{ns}/{n}" for ns, n in out if (ns, n) not in known]
        if unknown:
            raise SimulateError(f"{conf.name}: the mapping names LocalQueue(s) the objects lack: {', '.join(unknown)}")
        return out
    return conf.local_queues()


def replay(
    conf: Configuration,
    tasks: list[Task],
    *,
    queues: tuple[str, ...] = (),
    eviction_s: float = 0.0,
    finish_s: float = 0.0,
    jitter_s: float = 0.0,
    stamp_s: float = 0.0,
    seed: int = 0,
) -> Replay:
    """Replay ``tasks`` against ``conf`` to the end; ``queues`` restricts where queue-less tasks go.

    ``eviction_s`` and ``finish_s`` model a real cluster's latencies (trace seconds): how long a
    preempted workload keeps its quota, and how long past its runtime a workload holds its quota
    (see :class:`~pykueue.bench.scheduler.vcluster.VirtualCluster`); 0 is the ideal cluster.
    ``jitter_s`` delays each creation by a uniform draw between 0 and ``jitter_s`` trace seconds from a
    generator seeded with ``seed`` (see the module's docstring); 0 replays the trace's instants.
    ``stamp_s`` coarsens creation timestamps to steps of that many trace seconds and draws the uids
    that break the ties from ``seed`` too (the module's docstring); 0 stamps each creation's instant."""
    w0 = time.perf_counter()
    targets = _targets(conf, tasks, queues)
    priorities = conf.priorities()
    cq_of = conf.cluster_queue_of()
    records: dict[str, WorkloadRecord] = {}
    recorder = ReplayRecorder(records, sorted(cq["metadata"]["name"] for cq in conf.of("ClusterQueue")))
    cluster = VirtualCluster(
        conf.scheduler,
        recorder,
        meter_cpu=False,
        eviction_ms=round(eviction_s * 1000),
        finish_ms=round(finish_s * 1000),
        stamp_ms=round(stamp_s * 1000),
        stamp_phase_ms=random.Random(f"stamp-phase/{seed}").randrange(max(1, round(stamp_s * 1000))),
    )
    uids = random.Random(f"uids/{seed}") if stamp_s > 0 else None
    conf.feed(cluster.engine, cluster.apply)
    pending: list[tuple[int, dict[str, Any], int]] = []
    objects: dict[str, dict[str, Any]] = {}
    draws = random.Random(seed)
    for task in tasks:
        ns, lq = assign_queue(task, targets)
        priority = task.priority if task.priority is not None else priorities.get(task.priority_class or "", 0)
        obj = workload_object(task, ns, lq, priority)
        if uids is not None:
            obj["metadata"]["uid"] = str(uuid.UUID(int=uids.getrandbits(128), version=4))
        key = f"{ns}/{task.name}"
        if key in records:
            raise SimulateError(f"task {task.name} appears twice in namespace {ns}")
        klass = dict(task.labels).get("class", "")
        records[key] = WorkloadRecord(
            key,
            f"{ns}/{lq}",
            cq_of.get((ns, lq), ""),
            _class_name(task, priority),
            klass,
            round(task.submit_s * 1000),
            round(task.runtime_s * 1000),
        )
        delay_s = draws.uniform(0.0, jitter_s) if jitter_s > 0 else 0.0
        pending.append((round((task.submit_s + delay_s) * 1000), obj, round(task.runtime_s * 1000)))
        objects[key] = obj
    for at_ms, obj, runtime_ms in pending:
        cluster.submit(at_ms, obj, runtime_ms)

    # no timed requeues in a replay (no waitForPodsReady backoff): once no event is left, nothing changes
    last = cluster.run(lambda: False)
    recorder.close(int(last))
    return Replay(
        conf,
        recorder,
        records,
        recorder.end_ms,
        cluster.cycles,
        cluster.admissions,
        cluster.preemptions,
        time.perf_counter() - w0,
        cluster.meter.wall,
        objects,
    )
