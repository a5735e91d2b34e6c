"""Runs a ``Scenario`` against the scheduler engine, playing the workload controller's part.

Owns: the "API server" copy of every object in a scenario, the translation of engine decisions
into the status writes the workload controller and job integration would make, and the checks of
each step's ``want``.
Who calls it: ``tests/scheduler/test_scenarios.py``; users checking their own queue setups.
Invariant: the driver's view of who holds quota is computed from the statuses it wrote, never read
back from the engine, so ``holding``/``usage``/``state`` checks are independent of the engine's
bookkeeping.

How decisions are applied (after every cycle, in order):
* Admit   -> ``status.admission``, QuotaReserved=True; Admitted=True if no admission checks apply,
  else Admitted=False (UnsatisfiedAdmissionChecks) and each check listed as ``Pending``.
* Preempt -> Evicted=True (Preempted) + Preempted=True (the variant reason); the victim keeps its
  quota ("evicting") until a later ``evict`` step completes the eviction.
* Pending -> QuotaReserved=False with the reason, message and ``resourceRequests``.
Each write is fed back with ``upsert_workload``. Objects without ``metadata.uid`` get a uid that
sorts in creation order; workloads without ``creationTimestamp`` get one second apart, in order,
ending one second before the scenario starts (objects applied later get the current time).
"""

from __future__ import annotations

import copy
import dataclasses
import re
import typing
from typing import Any

from pykueue.api.meta.clock import ManualClock, format_time
from pykueue.api.meta.quantity import to_amount
from pykueue.testing.scenario_format import Scenario

__all__ = ["START", "ScenarioDriver", "build_config", "workload_state"]

START = 1_700_000_000.0
Key = str  # "namespace/name"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def build_config(raw: dict[str, Any]) -> Any:
    """Scenario ``config`` (camelCase, like Kueue's configuration file) -> ``SchedulerConfig``."""
    from pykueue.scheduler import SchedulerConfig

    return _build_dataclass(SchedulerConfig, raw)


def _build_dataclass(cls: Any, raw: dict[str, Any]) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(cls)}
    for key, value in raw.items():
        attr = _snake(key)
        if attr not in names:
            raise ValueError(f"{cls.__name__} has no field {attr!r} (from {key!r})")
        target = hints.get(attr)
        nested = [t for t in typing.get_args(target) if dataclasses.is_dataclass(t)] or (
            [target] if dataclasses.is_dataclass(target) else []
        )
        if nested and isinstance(value, dict):
            kwargs[attr] = _build_dataclass(nested[0], value)
        else:
            kwargs[attr] = tuple(value) if isinstance(value, list) else value
    return cls(**kwargs)


def _key(obj: dict[str, Any]) -> Key:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


def _set_condition(wl: dict[str, Any], ctype: str, status: str, reason: str, message: str, now: float) -> None:
    conds = wl.setdefault("status", {}).setdefault("conditions", [])
    for cond in conds:
        if cond["type"] == ctype:
            if cond["status"] != status:
                cond["lastTransitionTime"] = format_time(now)
            cond.update(status=status, reason=reason, message=message)
            return
    conds.append(
        {"type": ctype, "status": status, "reason": reason, "message": message, "lastTransitionTime": format_time(now)}
    )


def _cond(wl: dict[str, Any], ctype: str) -> bool:
    return any(c["type"] == ctype and c["status"] == "True" for c in wl.get("status", {}).get("conditions", []))


def workload_state(wl: dict[str, Any]) -> str:
    """finished | evicting | admitted | reserved | pending, from the conditions alone."""
    if _cond(wl, "Finished"):
        return "finished"
    if _cond(wl, "QuotaReserved") and wl.get("status", {}).get("admission"):
        if _cond(wl, "Evicted"):
            return "evicting"
        return "admitted" if _cond(wl, "Admitted") else "reserved"
    return "pending"


class ScenarioDriver:
    """One scenario run: engine + objects + the workload controller's side effects."""

    def __init__(self, scenario: Scenario) -> None:
        from pykueue.scheduler import Scheduler

        self.scenario = scenario
        self.clock = ManualClock(start=START)
        self.scheduler = Scheduler(build_config(scenario.config), clock=self.clock)
        self.workloads: dict[Key, dict[str, Any]] = {}
        self.admit_seq: dict[Key, int] = {}
        self._uid_counter = 0
        self._seq = 0
        self.failures: list[str] = []
        n_wl = sum(1 for o in scenario.objects if o["kind"] == "Workload")
        self._initial_ts = START - n_wl
        for obj in scenario.objects:
            self.apply(obj, initial=True)

    # --- objects -------------------------------------------------------------------------
    def apply(self, raw: dict[str, Any], *, initial: bool = False) -> None:
        obj = copy.deepcopy(raw)
        meta = obj.setdefault("metadata", {})
        self._uid_counter += 1
        meta.setdefault("uid", f"{self._uid_counter:06d}-{meta.get('namespace', '')}-{meta['name']}")
        kind = obj["kind"]
        s = self.scheduler
        if kind == "Namespace":
            meta.setdefault("labels", {}).setdefault("kubernetes.io/metadata.name", meta["name"])
            s.upsert_namespace(obj)
        elif kind == "ResourceFlavor":
            s.upsert_resource_flavor(obj)
        elif kind == "Cohort":
            s.upsert_cohort(obj)
        elif kind == "ClusterQueue":
            s.upsert_cluster_queue(obj)
        elif kind == "LocalQueue":
            s.upsert_local_queue(obj)
        elif kind == "Workload":
            if "creationTimestamp" not in meta:
                if initial:
                    meta["creationTimestamp"] = format_time(self._initial_ts)
                    self._initial_ts += 1
                else:
                    meta["creationTimestamp"] = format_time(self.clock.now())
            key = _key(obj)
            old = self.workloads.get(key)
            if old is not None and "uid" not in raw.get("metadata", {}):
                meta["uid"] = old["metadata"]["uid"]
            self.workloads[key] = obj
            if workload_state(obj) in ("admitted", "reserved", "evicting") and key not in self.admit_seq:
                self._seq += 1
                self.admit_seq[key] = self._seq
            s.upsert_workload(obj)
        else:  # pragma: no cover - the loader rejects other kinds
            raise ValueError(f"unsupported kind {kind}")

    def delete(self, ref: str) -> None:
        kind, _, rest = ref.partition("/")
        s = self.scheduler
        if kind == "Workload":
            ns, name = rest.split("/")
            self.workloads.pop(rest, None)
            s.delete_workload(ns, name)
        elif kind == "LocalQueue":
            ns, name = rest.split("/")
            s.delete_local_queue(ns, name)
        else:
            {
                "Namespace": s.delete_namespace,
                "ResourceFlavor": s.delete_resource_flavor,
                "Cohort": s.delete_cohort,
                "ClusterQueue": s.delete_cluster_queue,
            }[kind](rest)

    def _write(self, key: Key) -> None:
        self.scheduler.upsert_workload(copy.deepcopy(self.workloads[key]))

    # --- the workload controller's reactions to decisions ---------------------------------
    def apply_result(self, result: Any) -> None:
        now = self.clock.now()
        for adm in result.admitted:
            key = f"{adm.namespace}/{adm.name}"
            wl = self.workloads[key]
            st = wl.setdefault("status", {})
            st["admission"] = copy.deepcopy(adm.admission)
            _set_condition(
                wl, "QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {adm.cluster_queue}", now
            )
            for ctype in ("Evicted", "Preempted"):
                if any(c["type"] == ctype for c in st.get("conditions", [])):
                    _set_condition(wl, ctype, "False", "QuotaReserved", "Previously evicted", now)
            if adm.admission_checks:
                st["admissionChecks"] = [
                    {"name": c, "state": "Pending", "message": "", "lastTransitionTime": format_time(now)}
                    for c in adm.admission_checks
                ]
                _set_condition(
                    wl,
                    "Admitted",
                    "False",
                    "UnsatisfiedAdmissionChecks",
                    "The workload has not all admission checks",
                    now,
                )
            else:
                _set_condition(wl, "Admitted", "True", "Admitted", "The workload is admitted", now)
            self._seq += 1
            self.admit_seq[key] = self._seq
            self._write(key)
        for pre in result.preempted:
            key = f"{pre.namespace}/{pre.name}"
            wl = self.workloads[key]
            _set_condition(wl, "Evicted", "True", "Preempted", pre.message, now)
            _set_condition(wl, "Preempted", "True", pre.reason, pre.message, now)
            self._write(key)
        admitted_now = {f"{a.namespace}/{a.name}" for a in result.admitted}
        for pend in result.pending:
            key = f"{pend.namespace}/{pend.name}"
            pending_wl = self.workloads.get(key)
            if pending_wl is None or key in admitted_now or workload_state(pending_wl) != "pending":
                continue
            _set_condition(pending_wl, "QuotaReserved", "False", pend.reason, pend.message, now)
            pending_wl["status"]["resourceRequests"] = copy.deepcopy(pend.resource_requests)
            self._write(key)

    def finish(self, key: Key) -> None:
        wl = self.workloads[key]
        _set_condition(wl, "Finished", "True", "Succeeded", "Job finished successfully", self.clock.now())
        self._write(key)

    def finish_oldest(self, cluster_queue: str, count: int) -> None:
        holders = sorted(
            (self.admit_seq.get(k, 0), k) for k, wl in self.workloads.items() if self.holding_cq(wl) == cluster_queue
        )
        for _, key in holders[:count]:
            self.finish(key)

    def evict(self, key: Key, reason: str = "Preempted", requeue_after: float | None = None) -> None:
        """The eviction completes: the job stopped, admission cleared, the workload requeued."""
        now = self.clock.now()
        wl = self.workloads[key]
        st = wl.setdefault("status", {})
        if not _cond(wl, "Evicted"):
            _set_condition(wl, "Evicted", "True", reason, f"Evicted: {reason}", now)
        st.pop("admission", None)
        st.pop("admissionChecks", None)
        _set_condition(wl, "QuotaReserved", "False", "PendingEvaluation", "The workload is evicted", now)
        _set_condition(wl, "Admitted", "False", "NoReservation", "The workload has no reservation", now)
        if requeue_after:
            count = int(st.get("requeueState", {}).get("count", 0)) + 1
            st["requeueState"] = {"count": count, "requeueAt": format_time(now + requeue_after)}
            _set_condition(wl, "Requeued", "False", reason, f"Evicted: {reason}", now)
        else:
            _set_condition(wl, "Requeued", "True", reason, f"Evicted: {reason}", now)
        self.admit_seq.pop(key, None)
        self._write(key)

    def advance(self, seconds: float) -> None:
        """Move time; backoffs that expired get Requeued=True (BackoffFinished) like the controller does."""
        self.clock.advance(seconds)
        now = self.clock.now()
        for key, wl in self.workloads.items():
            st = wl.get("status", {})
            at = st.get("requeueState", {}).get("requeueAt")
            requeued_false = any(c["type"] == "Requeued" and c["status"] == "False" for c in st.get("conditions", []))
            if at and requeued_false and to_epoch(at) <= now:
                _set_condition(wl, "Requeued", "True", "BackoffFinished", "The workload backoff was finished", now)
                self._write(key)

    def set_checks(self, key: Key, states: dict[str, str]) -> None:
        wl = self.workloads[key]
        now = self.clock.now()
        for check in wl.get("status", {}).get("admissionChecks", []):
            if check["name"] in states:
                check["state"] = states[check["name"]]
                check["lastTransitionTime"] = format_time(now)
        checks = wl.get("status", {}).get("admissionChecks", [])
        if checks and all(c["state"] == "Ready" for c in checks) and workload_state(wl) == "reserved":
            _set_condition(wl, "Admitted", "True", "Admitted", "The workload is admitted", now)
        self._write(key)

    # --- the driver's own view ------------------------------------------------------------
    @staticmethod
    def holding_cq(wl: dict[str, Any]) -> str | None:
        if workload_state(wl) in ("admitted", "reserved", "evicting"):
            return str(wl["status"]["admission"]["clusterQueue"])
        return None

    def usage(self, *, include_evicting: bool = True) -> dict[str, dict[str, dict[str, int]]]:
        """Per CQ, flavor, resource: amounts held, summed from the admissions the driver wrote.

        ``include_evicting=False`` leaves out preempted victims whose eviction is still running.
        """
        out: dict[str, dict[str, dict[str, int]]] = {}
        for wl in self.workloads.values():
            cq = self.holding_cq(wl)
            if cq is None or (not include_evicting and workload_state(wl) == "evicting"):
                continue
            for psa in wl["status"]["admission"]["podSetAssignments"]:
                for res, qty in psa.get("resourceUsage", {}).items():
                    flavor = psa.get("flavors", {}).get(res)
                    if flavor is None:
                        continue
                    per = out.setdefault(cq, {}).setdefault(flavor, {})
                    per[res] = per.get(res, 0) + to_amount(res, qty)
        return out


def to_epoch(text: str) -> float:
    from pykueue.api.meta.clock import parse_time

    return parse_time(text)
