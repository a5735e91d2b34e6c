"""``bench scheduler`` (real time): Kueue's benchmark against a running pykueue, over HTTP.

Owns the generator, the runner and the recorder's event feed for a real cluster:

* **Server**: by default ``python -m pykueue up --port 0 --data-dir D --kubeconfig K`` as a
  subprocess (what a user runs; its CPU time comes from ``getrusage(RUSAGE_CHILDREN)`` after it
  exits); ``--kubeconfig`` uses a cluster that is already running instead.
* **Generator**: the ResourceFlavor, then per ClusterQueue its namespace, the CQ and the LocalQueue,
  then one task per (CQ, workload set) stream creating its workloads at their instants (absolute
  deadlines from the start of generation, so a slow create does not shift the rest), all streams
  concurrently like Kueue's generator.
* **Runner**: watches Workloads; ``runtimeMs`` after a workload is first seen Admitted (and not
  Evicted) it adds ``Finished=True`` reason ``ByTest`` through the status subresource; a workload
  evicted before that restarts its full runtime when admitted again. ``--finish-with patch`` (the
  default) sends a JSON patch appending the condition, so nothing else in the status is
  overwritten; ``--finish-with apply`` does what Kueue's own runner does: a server-side apply to
  ``/status`` with field manager ``kueue-job-controller-Finished``, ``force=true`` and the
  resourceVersion last seen (with the UID) in the body, re-read and retried on a 409 Conflict.
  Releasing an evicted workload's quota is the workload controller's job (it owns workloads no job integration owns).
* **Recorder feed**: Workload transitions (created when the create request is sent, admitted,
  evicted, finished) and ClusterQueue status events (``flavorsUsage[0].resources[0].total``,
  pending/reserving counts, Active), all timed on this process's monotonic clock.
* **Stop**: generation done and no active ClusterQueue has pending or reserving workloads (Kueue's
  rule), and every workload finished or 5 s since the queues looked drained (a status write that
  lags behind the last create cannot end the run early).

Who calls it: the CLI. Invariant: ``wallMs`` runs from the start of generation to the stop
detection; server start-up is reported apart (``serverStartMs``), so the wall compares with the
theoretical lower bound directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pykueue.api.meta.clock import format_time
from pykueue.bench.scheduler.bound import Bound
from pykueue.bench.scheduler.config import Plan, WorkloadPlan
from pykueue.bench.scheduler.objects import (
    CLASS_LABEL,
    cluster_queue,
    local_queue,
    namespace,
    resource_flavor,
    workload,
)
from pykueue.bench.scheduler.progress import Counts, ProgressLine
from pykueue.bench.scheduler.recorder import CQSample, Recorder
from pykueue.bench.scheduler.report import RunStats, summarize
from pykueue.eventloop import run as run_loop

__all__ = ["RealtimeError", "Runner", "run_realtime"]

CREATE_CONCURRENCY = 64
FINISH_MODES = ("patch", "apply")
FINISH_FIELD_MANAGER = "kueue-job-controller-Finished"
FINISH_APPLY_ATTEMPTS = 5
"""Server-side apply of Finished: the first try plus re-reads after a 409 Conflict."""
STARTUP_TIMEOUT_S = 60.0
DRAIN_GRACE_S = 5.0


class RealtimeError(Exception):
    """The real-time run could not start or talk to the cluster."""


class Runner:
    """Which admitted workload finishes when (pure; times in seconds on any clock)."""

    def __init__(self) -> None:
        self._due: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []

    def admitted(self, key: str, now: float, runtime_s: float) -> None:
        """First observation of this admission starts the clock; repeats keep it."""
        if key not in self._due:
            self._due[key] = now + runtime_s
            heapq.heappush(self._heap, (now + runtime_s, key))

    def evicted(self, key: str) -> None:
        """The runtime restarts in full at the next admission."""
        self._due.pop(key, None)

    finished = evicted

    def due(self, key: str) -> float | None:
        return self._due.get(key)

    def next_due(self) -> float | None:
        while self._heap and self._due.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)  # stale: evicted since
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> list[str]:
        out = []
        while (at := self.next_due()) is not None and at <= now:
            _, key = heapq.heappop(self._heap)
            del self._due[key]
            out.append(key)
        return out


def finished_condition(now_s: float) -> dict[str, Any]:
    return {
        "type": "Finished",
        "status": "True",
        "reason": "ByTest",
        "message": "finished by the benchmark runner",
        "lastTransitionTime": format_time(now_s),
    }


def finish_apply_body(
    namespace: str, name: str, uid: str, resource_version: str, condition: dict[str, Any]
) -> dict[str, Any]:
    """The apply configuration Kueue's runner sends to ``/status``: identity, the resourceVersion it
    read (so a stale write is a 409, not a silent overwrite) and the one condition it owns."""
    from pykueue.client.group_version_resource import WORKLOADS

    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid:
        meta["uid"] = uid
    if resource_version:
        meta["resourceVersion"] = resource_version
    return {
        "apiVersion": WORKLOADS.api_version,
        "kind": "Workload",
        "metadata": meta,
        "status": {"conditions": [condition]},
    }


def _cond(obj: dict[str, Any], kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or ()
    )


class _Driver:
    def __init__(self, client: Any, plan: Plan, out: Callable[[str], None], finish_with: str = "patch") -> None:
        from pykueue.client.group_version_resource import CLUSTER_QUEUES, WORKLOADS

        self.client = client
        self.finish_with = finish_with
        self.seen: dict[str, tuple[str, str]] = {}
        """key -> (uid, resourceVersion) of the latest object the watch delivered (for ``apply``)."""
        self.finish_conflicts = 0
        self.plan = plan
        self.out = out
        self.rec = Recorder()
        self.runner = Runner()
        self.t0 = time.monotonic()
        self.plans = {f"{w.namespace}/{w.name}": w for w in plan.workloads}
        self.state: dict[str, str] = {}  # key -> admitted | pending | finished
        self.wake = asyncio.Event()
        self.drained_at: float | None = None
        self.finish_errors = 0
        self.create_errors: list[str] = []
        self.admissions = self.evictions = 0
        self.finishing: set[asyncio.Task[None]] = set()
        self.res_wl, self.res_cq = WORKLOADS, CLUSTER_QUEUES

    def ms(self) -> float:
        return (time.monotonic() - self.t0) * 1000

    def counts(self) -> Counts:
        """(admitted now, pending, finished) for the progress line."""
        admitted = finished = 0
        for state in self.state.values():
            if state == "admitted":
                admitted += 1
            elif state == "finished":
                finished += 1
        return admitted, len(self.rec.workloads) - admitted - finished, finished

    # ------------------------------------------------------------------------------ watch feed

    def on_workload(self, kind: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        w = self.plans.get(key)
        if w is None or key not in self.rec.workloads or kind == "DELETED":
            return
        self.seen[key] = (meta.get("uid") or "", meta.get("resourceVersion") or "")
        now = self.ms()
        before = self.state.get(key, "pending")
        if _cond(obj, "Finished"):
            if before != "finished":
                self.state[key] = "finished"
                self.rec.finished(key, now)
                self.runner.finished(key)
        elif _cond(obj, "Admitted") and not _cond(obj, "Evicted"):
            if before != "admitted":
                self.state[key] = "admitted"
                self.admissions += 1
                self.rec.admitted(key, now)
                self.runner.admitted(key, now / 1000, w.runtime_ms / 1000)
                self.wake.set()
        elif before == "admitted":
            self.state[key] = "pending"
            self.evictions += 1
            self.rec.evicted(key, now)
            self.runner.evicted(key)

    def on_cluster_queue(self, kind: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        meta = obj.get("metadata") or {}
        cls = (meta.get("labels") or {}).get(CLASS_LABEL)
        if cls is None or kind == "DELETED":
            return
        status = obj.get("status") or {}
        usage = 0
        flavors = status.get("flavorsUsage") or []
        if flavors and flavors[0].get("resources"):
            usage = _milli(flavors[0]["resources"][0].get("total", "0"))
        nominal = 0
        groups = (obj.get("spec") or {}).get("resourceGroups") or []
        if groups and groups[0].get("flavors") and groups[0]["flavors"][0].get("resources"):
            nominal = _milli(groups[0]["flavors"][0]["resources"][0].get("nominalQuota", "0"))
        sample = CQSample(
            usage,
            nominal,
            int(status.get("pendingWorkloads") or 0),
            int(status.get("reservingWorkloads") or 0),
            _cond(obj, "Active"),
        )
        self.rec.cluster_queue(meta.get("name", ""), cls, self.ms(), sample)
        self.wake.set()

    # ------------------------------------------------------------------------------ generator

    async def setup(self) -> None:
        from pykueue.api.meta.errors import AlreadyExists
        from pykueue.client.group_version_resource import CLUSTER_QUEUES, LOCAL_QUEUES, NAMESPACES, RESOURCE_FLAVORS

        with contextlib.suppress(AlreadyExists):
            await self.client.create(RESOURCE_FLAVORS, resource_flavor(self.plan.resource_flavor))
        sem = asyncio.Semaphore(CREATE_CONCURRENCY)

        async def one(cq: Any) -> None:
            async with sem:
                for res, obj in (
                    (NAMESPACES, namespace(cq.name)),
                    (CLUSTER_QUEUES, cluster_queue(cq, self.plan.resource_flavor)),
                    (LOCAL_QUEUES, local_queue(cq.name)),
                ):
                    try:
                        await self.client.create(res, obj)
                    except AlreadyExists as exc:
                        raise RealtimeError(
                            f"{res.plural} {cq.name} already exists: run against a fresh cluster "
                            "(or delete the objects labelled "
                            "kueue.x-k8s.io/performance-scheduler-cleanup)"
                        ) from exc

        await asyncio.gather(*(one(cq) for cq in self.plan.cluster_queues))

    async def generate(self) -> None:
        streams: dict[int, list[WorkloadPlan]] = {}
        for w in self.plan.workloads:
            streams.setdefault(w.stream, []).append(w)
        start = time.monotonic()
        # At most CREATE_CONCURRENCY creates in flight: thousands of streams due at once (1,000 CQs)
        # would otherwise queue in the client's connection pool until its timeout fails them. A
        # workload's creation time is when its request is sent, as Kueue's recorder reads the
        # server's creationTimestamp.
        in_flight = asyncio.Semaphore(CREATE_CONCURRENCY)

        async def stream(items: list[WorkloadPlan]) -> None:
            for w in items:
                delay = start + w.created_ms / 1000 - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                key = f"{w.namespace}/{w.name}"
                async with in_flight:
                    self.rec.created(key, w.class_name, self.ms())
                    try:
                        await self.client.create(self.res_wl, workload(w))
                    except Exception as exc:
                        self.create_errors.append(f"{key}: {exc!r}")
                        del self.rec.workloads[key]

        await asyncio.gather(*(stream(items) for items in streams.values()))
        self.rec.generation_done = True
        self.wake.set()

    # ------------------------------------------------------------------------------ runner

    async def finish_loop(self) -> None:
        while True:
            at = self.runner.next_due()
            self.wake.clear()
            timeout = None if at is None else max(0.0, at - self.ms() / 1000)
            if timeout is None or timeout > 0:
                await _wait(self.wake, timeout)
            for key in self.runner.pop_due(self.ms() / 1000):
                task = asyncio.get_running_loop().create_task(self._finish(key))
                self.finishing.add(task)  # held until done, so it is never garbage-collected mid-flight
                task.add_done_callback(self.finishing.discard)

    async def _finish(self, key: str) -> None:
        ns, _, name = key.partition("/")
        cond = finished_condition(time.time())
        try:
            if self.finish_with == "apply":
                await self._finish_apply(key, ns, name, cond)
                return
            await self.client.patch(
                self.res_wl,
                name,
                [{"op": "add", "path": "/status/conditions/-", "value": cond}],
                namespace=ns,
                patch_type="json",
                subresource="status",
            )
        except Exception:
            self.finish_errors += 1

    async def _finish_apply(self, key: str, ns: str, name: str, cond: dict[str, Any]) -> None:
        from pykueue.api.meta.errors import Conflict

        uid, version = self.seen.get(key, ("", ""))
        for attempt in range(FINISH_APPLY_ATTEMPTS):
            body = finish_apply_body(ns, name, uid, version, cond)
            try:
                await self.client.patch(
                    self.res_wl,
                    name,
                    body,
                    namespace=ns,
                    patch_type="apply",
                    subresource="status",
                    field_manager=FINISH_FIELD_MANAGER,
                    force=True,
                )
                return
            except Conflict:
                self.finish_conflicts += 1
                if attempt == FINISH_APPLY_ATTEMPTS - 1:
                    raise
                meta = (await self.client.get(self.res_wl, name, namespace=ns)).get("metadata") or {}
                uid, version = meta.get("uid") or uid, meta.get("resourceVersion") or ""

    def done(self) -> bool:
        if not self.rec.done():
            self.drained_at = None
            return False
        if all(self.state.get(k) == "finished" for k in self.rec.workloads):
            return True
        now = time.monotonic()
        if self.drained_at is None:
            self.drained_at = now
        return now - self.drained_at >= DRAIN_GRACE_S


async def _wait(event: asyncio.Event, seconds: float | None) -> None:
    """Wait for ``event`` at most ``seconds``. ``asyncio.timeout``, not ``wait_for``: on Python 3.11
    ``wait_for`` can swallow a cancellation that races with the event, and the loop would never end."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()


def _milli(value: Any) -> int:
    from pykueue.api.meta.quantity import QuantityError, to_amount

    try:
        return to_amount("cpu", value)
    except QuantityError:
        return 0


async def _drive(
    client: Any,
    plan: Plan,
    bound: Bound,
    limit_s: float,
    out: Callable[[str], None],
    server_start_ms: float,
    server: subprocess.Popen[bytes] | None,
    progress: bool = False,
    finish_with: str = "patch",
) -> dict[str, Any]:
    from pykueue.client.group_version_resource import CLUSTER_QUEUES, WORKLOADS
    from pykueue.client.informer import Informer

    d = _Driver(client, plan, out, finish_with)
    await d.setup()
    cq_informer = Informer(client, CLUSTER_QUEUES, label_selector=CLASS_LABEL)
    wl_informer = Informer(client, WORKLOADS, label_selector=CLASS_LABEL)
    cq_informer.add_handler(d.on_cluster_queue)
    wl_informer.add_handler(d.on_workload)
    await cq_informer.start()
    await wl_informer.start()
    c0 = time.process_time()
    d.t0 = time.monotonic()
    out(f"generating {len(plan.workloads)} workloads over {plan.workloads[-1].created_ms / 1000:.1f} s ...")
    tasks = [asyncio.create_task(d.generate()), asyncio.create_task(d.finish_loop())]
    line = ProgressLine(sys.stderr, d.counts) if progress else None
    if line is not None:
        line.start()
    timed_out = False
    try:
        deadline = time.monotonic() + limit_s
        while not d.done():
            if time.monotonic() > deadline:
                timed_out = True
                break
            d.wake.clear()
            await _wait(d.wake, 1.0)
            if tasks[0].done() and tasks[0].exception() is not None:
                raise RealtimeError(f"generation failed: {tasks[0].exception()}")
            if server is not None and server.poll() is not None:
                raise RealtimeError(f"pykueue up exited with code {server.returncode} during the run")
    finally:
        wall_ms = d.ms()
        if line is not None:
            await line.stop()
        for task in [*tasks, *d.finishing]:
            task.cancel()
        await asyncio.gather(*tasks, *d.finishing, return_exceptions=True)
        await wl_informer.stop()
        await cq_informer.stop()
    stats = RunStats(
        "real-time",
        wall_ms,
        wall_ms / 1000,
        time.process_time() - c0,
        d.admissions,
        d.evictions,
        0,
        extra={
            "serverStartMs": int(server_start_ms),
            "timedOut": timed_out,
            "createErrors": len(d.create_errors),
            "finishErrors": d.finish_errors,
            "finishWith": finish_with,
            "finishConflicts": d.finish_conflicts,
        },
    )
    for err in d.create_errors[:5]:
        out(f"create failed: {err}")
    return summarize(d.rec, bound, stats)


def _start_server(
    workdir: Path, out: Callable[[str], None], controllers: str = "in-process", profile: Path | None = None
) -> tuple[subprocess.Popen[bytes], Path, float]:
    """Start ``pykueue up`` with its output in a log file (a pipe nobody reads would block it);
    with ``profile``, under cProfile (``pykueue up --profile``)."""
    kubeconfig = workdir / "kubeconfig"
    (workdir / "data").mkdir(exist_ok=True)
    log_path = workdir / "server.log"
    t0 = time.monotonic()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pykueue",
                "up",
                "--port",
                "0",
                "--data-dir",
                str(workdir / "data"),
                "--kubeconfig",
                str(kubeconfig),
                "--controllers",
                controllers,
                *(["--profile", str(profile.resolve())] if profile is not None else []),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )  # a signal to our process group (Ctrl-C) must not stop it mid-run
    while time.monotonic() - t0 < STARTUP_TIMEOUT_S and proc.poll() is None:
        for line in log_path.read_text(errors="replace").splitlines():
            if line.startswith("pykueue is up at"):
                out(line)
                return proc, kubeconfig, (time.monotonic() - t0) * 1000
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    tail = log_path.read_text(errors="replace").splitlines()[-20:]
    raise RealtimeError("pykueue up did not start:\n  " + "\n  ".join(tail))


def _stop_server(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # RUSAGE_CHILDREN counts the server and what it waited for: its controller process too.
    return {
        "serverUserMs": int((after.ru_utime - before.ru_utime) * 1000),
        "serverSysMs": int((after.ru_stime - before.ru_stime) * 1000),
        "serverMaxRssKb": after.ru_maxrss,
        "serverStopMs": int((time.monotonic() - t0) * 1000),
    }


def run_realtime(
    plan: Plan,
    bound: Bound,
    *,
    kubeconfig: Path | None,
    timeout: float,
    out: Callable[[str], None],
    controllers: str = "in-process",
    progress: bool = False,
    finish_with: str = "patch",
    server_profile: Path | None = None,
) -> dict[str, Any]:
    """Run the benchmark in real time; the summary has the same fields as the virtual-time one.
    ``server_profile``: the ``pykueue up`` it starts runs under cProfile and writes its stats there."""
    from pykueue.client.http import HttpClient

    async def main(path: Path, start_ms: float, server: subprocess.Popen[bytes] | None = None) -> dict[str, Any]:
        client = HttpClient.from_kubeconfig(path, field_manager="pykueue-bench")
        try:
            return await _drive(client, plan, bound, timeout, out, start_ms, server, progress, finish_with)
        finally:
            await client.close()
            await asyncio.sleep(0.25)  # TLS transports finish closing (aiohttp's advice), no socket left to GC

    if kubeconfig is not None:
        return run_loop(main(kubeconfig, 0.0))
    with tempfile.TemporaryDirectory(prefix="pykueue-bench-") as tmp:
        proc, path, start_ms = _start_server(Path(tmp), out, controllers, server_profile)
        try:
            summary = run_loop(main(path, start_ms, proc))
        except RealtimeError as exc:
            tail = (Path(tmp) / "server.log").read_text(errors="replace").splitlines()[-10:]
            raise RealtimeError(f"{exc}\n  server log (last lines):\n    " + "\n    ".join(tail)) from None
        finally:
            server = _stop_server(proc)
        summary.update(server)
        summary["controllers"] = controllers
        if server_profile is not None:
            out(f"cProfile stats of the server: {server_profile} (python -m pstats {server_profile})")
        return summary
