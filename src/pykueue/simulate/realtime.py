"""A trace played in real time against a running cluster (``simulate run --realtime``): the fidelity check.

Owns driving a real API server (``pykueue up`` with its simulated nodes, or any cluster running
pykueue's or Kueue's controllers) with the same configuration and trace a virtual replay uses:
it creates the configuration's objects, creates each task's Workload at ``submit ÷ time_scale``
seconds after the start, and, as the benchmark runner does, marks a Workload ``Finished`` (a JSON
patch on its status) ``runtime ÷ time_scale`` seconds after it is first seen Admitted; a workload
evicted before that restarts its runtime at its next admission. What it observes (admissions,
evictions, finishes, pending reasons) feeds the same :class:`ReplayRecorder`, with real elapsed
time multiplied back by ``time_scale``, so the summary is directly comparable with the replay's.

Who calls it: the CLI. Invariant: the cluster's scheduler decides everything; this driver only
creates, observes and finishes. A run stops when every task has finished, or when nothing was
admitted or finished for ``idle_s`` seconds after the last creation (the rest never admitted).
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from typing import Any

from pykueue.api.meta.clock import format_time
from pykueue.api.meta.errors import AlreadyExists
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.http import HttpClient
from pykueue.client.informer import Informer
from pykueue.scheduler import Admit, Preempt
from pykueue.simulate.model import Task, workload_object
from pykueue.simulate.objects import RESOURCES, Configuration
from pykueue.simulate.recorder import ReplayRecorder, WorkloadRecord
from pykueue.simulate.replay import Replay, assign_queue

__all__ = ["run_realtime"]

WORKLOADS = GroupVersionResource("kueue.x-k8s.io", "v1beta2", "workloads")
CREATES_IN_FLIGHT = 32
SETTLE_S = 5.0
"""After the last finish, how long to wait for the watch to show the last Finished writes."""
_ORDER = ("Namespace", "WorkloadPriorityClass", "ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue")


def _true(obj: dict[str, Any], kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or ()
    )


def _has(obj: dict[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind for c in (obj.get("status") or {}).get("conditions") or ())


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace", "labels", "annotations")}
    return {k: v for k, v in obj.items() if k != "status"} | {"metadata": meta}


class _Driver:
    def __init__(self, client: HttpClient, conf: Configuration, tasks: list[Task], scale: float) -> None:
        self.client, self.conf, self.scale = client, conf, scale
        targets = conf.local_queues()
        priorities = conf.priorities()
        cq_of = conf.cluster_queue_of()
        self.records: dict[str, WorkloadRecord] = {}
        self.plan: list[tuple[float, dict[str, Any], float]] = []
        self.base_s = min((t.submit_s for t in tasks), default=0.0)
        """The first submission: the run starts there, not at the trace's time 0."""
        for task in tasks:
            ns, lq = assign_queue(task, targets)
            priority = task.priority if task.priority is not None else priorities.get(task.priority_class or "", 0)
            key = f"{ns}/{task.name}"
            self.records[key] = WorkloadRecord(
                key,
                f"{ns}/{lq}",
                cq_of.get((ns, lq), ""),
                task.priority_class or f"priority-{priority}",
                dict(task.labels).get("class", ""),
                round(task.submit_s * 1000),
                round(task.runtime_s * 1000),
            )
            self.plan.append(
                ((task.submit_s - self.base_s) / scale, workload_object(task, ns, lq, priority), task.runtime_s / scale)
            )
        self.runtime = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": r for _, o, r in self.plan}
        self.recorder = ReplayRecorder(self.records, sorted(cq["metadata"]["name"] for cq in conf.of("ClusterQueue")))
        self.t0 = time.monotonic()
        self.state: dict[str, str] = {}
        self.due: dict[str, asyncio.TimerHandle] = {}
        self.last_progress = time.monotonic()
        self.created = 0
        self.finished = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.evicting: dict[str, float] = {}
        self.eviction_s: list[float] = []
        """Per eviction: from seeing Evicted=True to seeing the quota released (the workload controller)."""
        self.create_lag_s: list[float] = []
        """Per creation: how late the create returned against its scheduled instant (does the machine keep up?)."""
        self.create_sent: dict[str, float] = {}
        self.reaction_s: list[float] = []
        """Per workload: from sending its creation to seeing the scheduler's first word on it (its
        admission or its pending condition): how late the cluster acts on a creation."""
        self.finish_sent: dict[str, float] = {}
        self.finish_s: list[float] = []
        self.settled = asyncio.Event()
        """Set when every Finished sent has been seen in the watch."""
        """Per finish: from sending Finished to seeing it in the watch (what the scheduler loop sees too)."""

    def trace_ms(self) -> int:
        return round((self.base_s + (time.monotonic() - self.t0) * self.scale) * 1000)

    async def setup(self) -> None:
        namespaces = [_clean(o) for o in self.conf.of("Namespace")]
        known = {o["metadata"]["name"] for o in namespaces}
        namespaces += [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            for ns in sorted({ns for ns, _ in self.conf.local_queues()} - known)
        ]
        for ns_obj in namespaces:
            with contextlib.suppress(AlreadyExists):
                await self.client.create(RESOURCES["Namespace"], ns_obj)
        for kind in _ORDER[1:]:
            for obj in self.conf.of(kind):
                with contextlib.suppress(AlreadyExists):
                    await self.client.create(RESOURCES[kind], _clean(obj), obj["metadata"].get("namespace", ""))

    def on_workload(self, kind: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        if key not in self.records or kind == "DELETED" or key not in self.state:
            return
        before, now = self.state[key], self.trace_ms()
        if key in self.create_sent and _has(obj, "QuotaReserved"):
            self.reaction_s.append(time.monotonic() - self.create_sent.pop(key))
        if _true(obj, "Finished"):
            if (sent := self.finish_sent.pop(key, None)) is not None:
                self.finish_s.append(time.monotonic() - sent)
                if not self.finish_sent:
                    self.settled.set()
            return
        admission = (obj.get("status") or {}).get("admission")
        if _true(obj, "Admitted") and not _true(obj, "Evicted") and admission:
            if before != "admitted":
                self.state[key] = "admitted"
                self.last_progress = time.monotonic()
                ns, name = key.split("/", 1)
                self.recorder.admitted(
                    key, now, Admit(ns, name, admission.get("clusterQueue", ""), admission, False, [])
                )
                loop = asyncio.get_running_loop()
                self.due[key] = loop.call_later(self.runtime[key], self._spawn_finish, key)
        elif before == "admitted":
            self.state[key] = "pending"
            handle = self.due.pop(key, None)
            if handle is not None:
                handle.cancel()
            ns, name = key.split("/", 1)
            self.recorder.evicted(key, now, Preempt(ns, name, "", "", "Evicted", ""))
            if admission:  # Evicted, quota still held: time how long until it is released
                self.evicting[key] = time.monotonic()
            else:
                self.eviction_s.append(0.0)
        else:
            if not admission and (since := self.evicting.pop(key, None)) is not None:
                self.eviction_s.append(time.monotonic() - since)
            for cond in (obj.get("status") or {}).get("conditions") or ():
                if cond.get("type") == "QuotaReserved" and cond.get("status") == "False":
                    self.records[key].reason = cond.get("reason", "")
                    self.records[key].message = cond.get("message", "")

    def _spawn_finish(self, key: str) -> None:
        task = asyncio.get_running_loop().create_task(self._finish(key))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _finish(self, key: str) -> None:
        self.due.pop(key, None)
        if self.state.get(key) != "admitted":
            return
        self.state[key] = "finished"
        self.recorder.finished(key, self.trace_ms())
        self.finished += 1
        self.last_progress = time.monotonic()
        ns, name = key.split("/", 1)
        cond = {
            "type": "Finished",
            "status": "True",
            "reason": "ByTest",
            "message": "finished by pykueue simulate",
            "lastTransitionTime": format_time(time.time()),
        }
        self.finish_sent[key] = time.monotonic()
        self.settled.clear()
        with contextlib.suppress(Exception):
            await self.client.patch(
                WORKLOADS,
                name,
                [{"op": "add", "path": "/status/conditions/-", "value": cond}],
                namespace=ns,
                patch_type="json",
                subresource="status",
            )

    async def generate(self) -> None:
        """Each creation is sent at its instant without waiting for the previous one to return (at
        most ``CREATES_IN_FLIGHT`` at once), so one slow request does not delay the ones after it."""
        slots = asyncio.Semaphore(CREATES_IN_FLIGHT)
        sent: list[asyncio.Task[None]] = []

        failed: list[BaseException] = []

        async def create(at_s: float, obj: dict[str, Any]) -> None:
            try:
                await self.client.create(WORKLOADS, obj, obj["metadata"]["namespace"])
            except Exception as exc:
                failed.append(exc)
                raise
            finally:
                slots.release()
            self.created += 1
            self.create_lag_s.append(time.monotonic() - self.t0 - at_s)

        try:
            for at_s, obj, _ in self.plan:
                delay = self.t0 + at_s - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                await slots.acquire()
                key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
                self.state[key] = "pending"
                self.create_sent[key] = time.monotonic()
                self.recorder.created(key, self.trace_ms())
                if failed:
                    raise failed[0]
                sent.append(asyncio.get_running_loop().create_task(create(at_s, obj)))
            for task in sent:
                await task  # a failed create ends the run with its error
        finally:
            for task in sent:
                task.cancel()


async def run_realtime(
    client: HttpClient,
    conf: Configuration,
    tasks: list[Task],
    *,
    time_scale: float,
    idle_s: float = 30.0,
    timeout_s: float = 3600.0,
) -> Replay:
    driver = _Driver(client, conf, tasks, time_scale)
    await driver.setup()
    informer = Informer(client, WORKLOADS)
    informer.add_handler(driver.on_workload)
    await informer.start()
    w0 = time.perf_counter()
    driver.t0 = time.monotonic()
    generator = asyncio.create_task(driver.generate())
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            if generator.done():
                generator.result()  # a failed create ends the run with its error
                if driver.finished == len(driver.plan):
                    # the last Finished writes are still on their way back through the watch: let them
                    # land (bounded), so every finish is a latency sample
                    if driver.finish_sent:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(driver.settled.wait(), SETTLE_S)
                    break
                if time.monotonic() - driver.last_progress > idle_s and not driver.due:
                    break
    finally:
        generator.cancel()
        for handle in driver.due.values():
            handle.cancel()
        await asyncio.gather(generator, *driver.tasks, return_exceptions=True)
        await informer.stop()
    end_ms = max([r.finished_ms or 0 for r in driver.records.values()] + [0])
    driver.recorder.close(end_ms)
    evictions = sum(r.evictions for r in driver.records.values())
    admissions = sum(1 for r in driver.records.values() if r.admitted_ms is not None)
    return Replay(
        conf,
        driver.recorder,
        driver.records,
        driver.recorder.end_ms,
        0,
        admissions,
        evictions,
        time.perf_counter() - w0,
        0.0,
        {},
        _latencies(driver),
    )


def _latencies(driver: _Driver) -> dict[str, float]:
    """Medians in real seconds, and in trace seconds (× the time scale): what to give the virtual
    replay's ``--eviction-latency`` and ``--finish-latency`` to model this cluster.

    ``eviction``: from seeing a workload ``Evicted`` to seeing its quota released. ``finish``: a
    workload holds its quota past its runtime for two write-to-watch trips (the admission reaching
    this driver, its ``Finished`` reaching the scheduler); one trip is measured as the time from
    sending ``Finished`` to seeing it in the watch, and the figure is twice that. ``createLag``: how
    late creations returned against the schedule; a machine that keeps up with the time scale keeps
    it far below the trace's waits ÷ the time scale. ``reaction``: from sending a creation to seeing
    the scheduler's first word on it (admitted, or its pending condition), with its 90th percentile
    too: it varies from workload to workload, and the replay's ``--jitter`` models that spread (a
    uniform delay between 0 and J has the median J ÷ 2)."""
    out: dict[str, float] = {"timeScale": driver.scale}
    for name, values, trips in (
        ("eviction", driver.eviction_s, 1),
        ("finish", driver.finish_s, 2),
        ("reaction", driver.reaction_s, 1),
    ):
        if values:
            mid = statistics.median(values) * trips
            out[f"{name}RealSeconds"] = round(mid, 4)
            out[f"{name}TraceSeconds"] = round(mid * driver.scale, 3)
            out[f"{name}Samples"] = len(values)
    if driver.reaction_s:
        ordered = sorted(driver.reaction_s)
        out["reactionTraceSecondsP90"] = round(ordered[int(0.9 * (len(ordered) - 1))] * driver.scale, 3)
    if driver.create_lag_s:
        lags = sorted(driver.create_lag_s)
        out["createLagRealSecondsMedian"] = round(statistics.median(lags), 4)
        out["createLagRealSecondsMax"] = round(lags[-1], 4)
    return out
