"""How good are start-time estimates? Measured on a replay, never assumed.

Owns the measurement: a trace is replayed once (the "truth": each workload's replayed first
admission). Then, at the submission of sampled workloads, the state *known at that instant* is
rebuilt from the replay (workloads admitted and not yet finished hold their first admission;
workloads submitted and not yet admitted are pending) and handed to :func:`eta.estimate`, exactly
as ``simulate eta`` hands it a live cluster's state. The estimate for the new workload is compared
with its replayed admission. Two runtime modes:

* ``exact``: every workload carries its true runtime (``pykueue.io/expected-runtime``);
* ``history``: no annotation; runtimes are the median of the LocalQueue's workloads finished
  before that instant (else of all finished, else one hour), as ``simulate eta`` does.

Figures: the median absolute error of the predicted wait, and the share of predictions within
±25 % of the replayed wait (a floor of 1 s, so a zero wait predicted as zero counts as exact),
over all samples and over those that waited at all.

Who calls it: ``simulate accuracy`` and the tests. Invariant: deterministic (samples are every
k-th submission in trace order). Approximation, stated: a preempted workload is taken as running
from its first admission to its finish.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from pykueue.api.meta.clock import format_time
from pykueue.bench.scheduler.vcluster import START_S
from pykueue.simulate.eta import HORIZON_S, estimate
from pykueue.simulate.model import EXPECTED_RUNTIME_ANNOTATION
from pykueue.simulate.replay import Replay

__all__ = ["AccuracyResult", "measure"]


@dataclass(frozen=True, slots=True)
class AccuracyResult:
    mode: str
    samples: int
    median_abs_error_s: float
    within_25: float
    waited_samples: int
    waited_median_abs_error_s: float
    waited_within_25: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "samples": self.samples,
            "medianAbsErrorSeconds": round(self.median_abs_error_s, 3),
            "within25Percent": round(self.within_25, 4),
            "waitedSamples": self.waited_samples,
            "waitedMedianAbsErrorSeconds": round(self.waited_median_abs_error_s, 3),
            "waitedWithin25Percent": round(self.waited_within_25, 4),
        }


def _status(admission: dict[str, Any], at_ms: int) -> dict[str, Any]:
    when = format_time(START_S + at_ms / 1000)
    return {
        "admission": admission,
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "",
                "lastTransitionTime": when,
            },
            {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "", "lastTransitionTime": when},
        ],
    }


def _state_at(replay: Replay, t_ms: int, exact: bool) -> tuple[list[dict[str, Any]], dict[str, list[float]]]:
    workloads: list[dict[str, Any]] = []
    history: dict[str, list[float]] = {}
    for key, rec in replay.records.items():
        if rec.submit_ms > t_ms:
            continue
        if rec.finished_ms is not None and rec.finished_ms <= t_ms:
            if rec.admitted_ms is not None:
                history.setdefault(rec.local_queue, []).append((rec.finished_ms - rec.admitted_ms) / 1000)
            continue
        base = replay.objects[key]
        meta = {**base["metadata"], "creationTimestamp": format_time(START_S + rec.submit_ms / 1000), "uid": key}
        if not exact:
            meta["annotations"] = {
                k: v for k, v in meta.get("annotations", {}).items() if k != EXPECTED_RUNTIME_ANNOTATION
            }
        obj = {**base, "metadata": meta}
        if rec.admitted_ms is not None and rec.admitted_ms < t_ms and rec.admission is not None:
            obj["status"] = _status(rec.admission, rec.admitted_ms)
        workloads.append(obj)
    return workloads, history


def _summary(mode: str, rows: list[tuple[float, float]]) -> AccuracyResult:
    def stats(pairs: list[tuple[float, float]]) -> tuple[float, float]:
        if not pairs:
            return 0.0, 0.0
        errors = [abs(p - a) for p, a in pairs]
        within = sum(1 for p, a in pairs if abs(p - a) <= max(0.25 * a, 1.0))
        return statistics.median(errors), within / len(pairs)

    waited = [(p, a) for p, a in rows if a > 0]
    med, share = stats(rows)
    wmed, wshare = stats(waited)
    return AccuracyResult(mode, len(rows), med, share, len(waited), wmed, wshare)


def measure(
    replay: Replay, *, samples: int = 200, modes: tuple[str, ...] = ("exact", "history"), waited_only: bool = False
) -> list[AccuracyResult]:
    """Predict at ``samples`` evenly spaced submissions (of workloads that waited, with ``waited_only``)."""
    admitted = sorted(
        (r for r in replay.records.values() if r.admitted_ms is not None), key=lambda r: (r.submit_ms, r.key)
    )
    if waited_only:
        admitted = [r for r in admitted if r.admitted_ms is not None and r.admitted_ms > r.submit_ms]
    step = max(1, len(admitted) // max(1, samples))
    chosen = admitted[::step][:samples]
    results: list[AccuracyResult] = []
    for mode in modes:
        rows: list[tuple[float, float]] = []
        for rec in chosen:
            workloads, history = _state_at(replay, rec.submit_ms, mode == "exact")
            now_s = START_S + rec.submit_ms / 1000
            found = estimate(replay.configuration, workloads, now_s, history, only={rec.key})
            actual = ((rec.admitted_ms or 0) - rec.submit_ms) / 1000
            if found and found[0].start_s is not None:
                rows.append((max(0.0, found[0].start_s - now_s), actual))
            else:
                rows.append((HORIZON_S, actual))
        results.append(_summary(mode, rows))
    return results
