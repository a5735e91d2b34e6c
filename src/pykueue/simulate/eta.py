"""Start-time estimates: fork the live engine state and simulate forward with runtime estimates.

Owns :func:`estimate`: from a configuration and the Workloads as the API serves them, a fresh
engine in virtual time starting *now* is given the objects, every workload holding quota (finishing
``runtime − elapsed`` from now) and every pending one (running ``runtime`` once admitted); the
replay runs until each pending workload is admitted or the horizon passes. A workload's runtime
estimate comes, in this order, from:

1. the annotation ``pykueue.io/expected-runtime`` (a duration: ``90s``, ``15m``, ``2h``, ``1h30m``,
   or plain seconds) — ``annotation``;
2. ``spec.maximumExecutionTimeSeconds`` (an upper bound, so the estimate is pessimistic) —
   ``maximumExecutionTime``;
3. the median runtime of the finished workloads of its LocalQueue (admission to ``Finished``) —
   ``history``; for the accuracy measurement, the runtimes observed so far are passed in;
4. the median of all finished workloads, else one hour — ``default``.

The engine runs with the settings the cluster runs with (fair sharing, admission fair sharing),
which the caller looks up (``pykueue.cli.running_config``) and passes in as a ``SchedulerConfig``.

Who calls it: ``simulate eta`` (via :func:`cluster_estimates`, any kubeconfig, the project's
``HttpClient``; with ``--annotate --every`` :func:`refresh_annotations` each round), ``explain``
(:func:`estimate_one`) and the accuracy measurement (``accuracy``). Invariant: the live cluster is only
read (``--annotate`` writes the two annotations, nothing else); the fork is a separate engine, so
estimating never changes a decision.
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass
from typing import Any

from pykueue.api.meta.clock import format_time, parse_time
from pykueue.bench.scheduler.vcluster import Observer, VirtualCluster
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.http import HttpClient
from pykueue.scheduler import Admit, Pending, SchedulerConfig
from pykueue.simulate.model import EXPECTED_RUNTIME_ANNOTATION
from pykueue.simulate.objects import KINDS, Configuration, read_cluster

__all__ = [
    "BASIS_ANNOTATION",
    "DEFAULT_RUNTIME_S",
    "ESTIMATE_ANNOTATION",
    "Estimate",
    "annotate_estimates",
    "cluster_estimates",
    "estimate",
    "estimate_one",
    "observed_runtimes",
    "parse_duration",
    "refresh_annotations",
    "when_text",
]

ESTIMATE_ANNOTATION = "pykueue.io/estimated-start"
"""Written by ``simulate eta --annotate``: RFC 3339 time, or ``unknown`` (not within the horizon)."""
BASIS_ANNOTATION = "pykueue.io/estimated-start-basis"
"""How it was made: ``<runtime basis>, estimated at <RFC 3339 time>``."""

DEFAULT_RUNTIME_S = 3600.0
_WORKLOADS = GroupVersionResource("kueue.x-k8s.io", "v1beta2", "workloads")
HORIZON_S = 90 * 86400.0
_PART = re.compile(r"(\d+(?:\.\d+)?)(h|m|s|ms)")


@dataclass(frozen=True, slots=True)
class Estimate:
    namespace: str
    name: str
    queue: str
    cluster_queue: str
    start_s: float | None
    """Estimated admission time (Unix seconds); None: not within the horizon."""
    runtime_s: float
    basis: str
    """Where the runtime estimate came from: annotation, maximumExecutionTime, history, default."""
    reason: str = ""
    """For ``start_s is None``: the engine's last pending reason and message."""


def parse_duration(text: str) -> float | None:
    text = text.strip()
    try:
        value = float(text)
        return value if value >= 0 else None
    except ValueError:
        pass
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    unit = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * unit[u] for n, u in parts)


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind and cond.get("status") == "True":
            return dict(cond)
    return None


def _lq(obj: dict[str, Any]) -> str:
    return f"{obj['metadata'].get('namespace', 'default')}/{(obj.get('spec') or {}).get('queueName', '')}"


def observed_runtimes(workloads: list[dict[str, Any]]) -> dict[str, list[float]]:
    """LocalQueue (``namespace/name``) -> runtimes of its finished workloads (QuotaReserved to Finished)."""
    out: dict[str, list[float]] = {}
    for obj in workloads:
        done, held = _condition(obj, "Finished"), _condition(obj, "QuotaReserved")
        if done is None or held is None:
            continue
        try:
            runtime = parse_time(done["lastTransitionTime"]) - parse_time(held["lastTransitionTime"])
        except (KeyError, ValueError):
            continue
        out.setdefault(_lq(obj), []).append(max(0.0, runtime))
    return out


def _runtime(obj: dict[str, Any], history: dict[str, list[float]], fallback: float) -> tuple[float, str]:
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(EXPECTED_RUNTIME_ANNOTATION)
    if raw is not None and (value := parse_duration(str(raw))) is not None:
        return value, "annotation"
    limit = (obj.get("spec") or {}).get("maximumExecutionTimeSeconds")
    if isinstance(limit, int) and limit > 0:
        return float(limit), "maximumExecutionTime"
    seen = history.get(_lq(obj))
    if seen:
        return statistics.median(seen), "history"
    return fallback, "default"


class _Watch(Observer):
    def __init__(self, wanted: set[str]) -> None:
        self.wanted = wanted
        self.starts: dict[str, tuple[int, str]] = {}
        self.reasons: dict[str, str] = {}

    def admitted(self, key: str, now_ms: int, admit: Admit) -> None:
        if key in self.wanted and key not in self.starts:
            self.starts[key] = (now_ms, admit.cluster_queue)

    def pending(self, now_ms: int, pending: Pending) -> None:
        self.reasons[f"{pending.namespace}/{pending.name}"] = f"{pending.reason}: {pending.message}"

    def done(self) -> bool:
        return len(self.starts) == len(self.wanted)


def estimate(
    conf: Configuration,
    workloads: list[dict[str, Any]],
    now_s: float,
    history: dict[str, list[float]] | None = None,
    *,
    only: set[str] | None = None,
) -> list[Estimate]:
    """Estimates for every pending workload in ``workloads`` (sorted by namespace, name); with
    ``only`` (``namespace/name`` keys) just those, and the forward run stops once they are placed."""
    history = observed_runtimes(workloads) if history is None else history
    everything = [r for runs in history.values() for r in runs]
    fallback = statistics.median(everything) if everything else DEFAULT_RUNTIME_S
    cq_of = conf.cluster_queue_of()
    pending: dict[str, tuple[dict[str, Any], float, str]] = {}
    running: list[tuple[dict[str, Any], float]] = []
    for live in sorted(workloads, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"])):
        # without its resourceVersion: the fork's own status writes must not look like replays of it
        obj = {
            **live,
            "metadata": {k: v for k, v in live["metadata"].items() if k not in ("resourceVersion", "managedFields")},
        }
        if _condition(obj, "Finished") is not None or obj["metadata"].get("deletionTimestamp"):
            continue
        runtime, basis = _runtime(obj, history, fallback)
        held = _condition(obj, "QuotaReserved")
        if held is not None and (obj.get("status") or {}).get("admission"):
            try:
                elapsed = now_s - parse_time(held["lastTransitionTime"])
            except (KeyError, ValueError):
                elapsed = 0.0
            running.append((obj, max(0.0, runtime - elapsed)))
        elif (obj.get("spec") or {}).get("active", True) is not False:
            key = f"{obj['metadata'].get('namespace', 'default')}/{obj['metadata']['name']}"
            pending[key] = (obj, runtime, basis)
    watch = _Watch(set(pending) if only is None else set(pending) & only)
    cluster = VirtualCluster(conf.scheduler, watch, start_s=now_s, meter_cpu=False)
    conf.feed(cluster.engine, cluster.apply)
    for obj, remaining in running:
        cluster.admit_running(obj, round(remaining * 1000))
    for obj, runtime, _ in pending.values():
        cluster.load_pending(obj, round(runtime * 1000))
    cluster.tick(0)
    cluster.run(lambda: not watch.done(), until_ms=round(HORIZON_S * 1000), stop=watch.done)
    out: list[Estimate] = []
    for key, (obj, runtime, basis) in pending.items():
        if key not in watch.wanted:
            continue
        ns, _, name = key.partition("/")
        queue = (obj.get("spec") or {}).get("queueName", "")
        found = watch.starts.get(key)
        cq = found[1] if found else cq_of.get((ns, queue), "")
        start = now_s + found[0] / 1000 if found else None
        out.append(Estimate(ns, name, queue, cq, start, runtime, basis, "" if found else watch.reasons.get(key, "")))
    return out


def when_text(start: float | None, now: float) -> str:
    """An estimate for people: ``<RFC 3339> (in 9.8m)``, ``(now)``, or ``not within 90 days``."""
    if start is None:
        return "not within 90 days"
    delta = max(0.0, start - now)
    if delta < 1:
        return f"{format_time(start)} (now)"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if delta >= size:
            return f"{format_time(start)} (in {delta / size:.1f}{unit})"
    return f"{format_time(start)} (in {delta:.0f}s)"


def estimate_one(
    objects: list[dict[str, Any]], namespace: str, name: str, now_s: float, scheduler: SchedulerConfig | None = None
) -> Estimate | None:
    """The estimate for one pending Workload, from the objects ``explain`` read (each with its
    ``kind``: the configuration's kinds and every Workload) and the engine settings the cluster runs
    with (``scheduler``; None: the defaults); None when it is not pending."""
    conf = Configuration("cluster", scheduler=scheduler or SchedulerConfig())
    workloads: list[dict[str, Any]] = []
    for obj in objects:
        kind = obj.get("kind")
        if kind == "Workload":
            workloads.append(obj)
        elif kind in KINDS:
            conf.objects[str(kind)].append(obj)
    found = estimate(conf, workloads, now_s, only={f"{namespace}/{name}"})
    return found[0] if found else None


async def cluster_estimates(
    client: HttpClient, now_s: float | None = None, scheduler: SchedulerConfig | None = None
) -> list[Estimate]:
    """Every pending workload's estimate, the engine run with ``scheduler`` (the settings the cluster
    runs with, which the caller looked up; None: the defaults)."""
    conf, workloads = await read_cluster(client, with_workloads=True)
    conf.scheduler = scheduler or SchedulerConfig()
    return estimate(conf, workloads, time.time() if now_s is None else now_s)


async def refresh_annotations(
    client: HttpClient, now_s: float | None = None, scheduler: SchedulerConfig | None = None
) -> tuple[list[Estimate], int]:
    """One round of keeping the annotations fresh: every pending workload's estimate written anew,
    and the two annotations removed from workloads that are no longer pending (admitted, finished,
    deactivated), so none shows a stale estimate. Returns the estimates and how many were cleared."""
    now = time.time() if now_s is None else now_s
    conf, workloads = await read_cluster(client, with_workloads=True)
    conf.scheduler = scheduler or SchedulerConfig()
    found = estimate(conf, workloads, now)
    await annotate_estimates(client, found, now)
    pending = {(e.namespace, e.name) for e in found}
    cleared = 0
    for obj in workloads:
        meta = obj["metadata"]
        if ESTIMATE_ANNOTATION not in (meta.get("annotations") or {}):
            continue
        if (meta.get("namespace", ""), meta["name"]) in pending or meta.get("deletionTimestamp"):
            continue
        patch = {"metadata": {"annotations": {ESTIMATE_ANNOTATION: None, BASIS_ANNOTATION: None}}}
        await client.patch(_WORKLOADS, meta["name"], patch, namespace=meta.get("namespace", ""), patch_type="merge")
        cleared += 1
    return found, cleared


async def annotate_estimates(client: HttpClient, estimates: list[Estimate], now_s: float | None = None) -> None:
    """Write each estimate on its Workload (a merge patch of two annotations; nothing else changes)."""
    when = format_time(time.time() if now_s is None else now_s)
    workloads = _WORKLOADS
    for e in estimates:
        start = "unknown" if e.start_s is None else format_time(e.start_s)
        patch = {
            "metadata": {
                "annotations": {ESTIMATE_ANNOTATION: start, BASIS_ANNOTATION: f"{e.basis}, estimated at {when}"}
            }
        }
        await client.patch(workloads, e.name, patch, namespace=e.namespace, patch_type="merge")
