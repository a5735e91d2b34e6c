"""Steps and expectations of a scheduling scenario.

Owns: executing a scenario's ``steps`` on a ``ScenarioDriver`` and comparing each ``want`` with
what happened; ``run_scenario`` runs a whole scenario on a fresh driver.
Invariant: every key of a ``want`` is checked (unknown keys are rejected by the loader), and a
mismatch is reported with the step path and both values, never swallowed.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta.quantity import to_amount
from pykueue.testing.scenario_driver import ScenarioDriver, workload_state
from pykueue.testing.scenario_format import Scenario

__all__ = ["run_scenario", "run_steps"]


def run_scenario(scenario: Scenario) -> list[str]:
    """Run every step; return the list of mismatches (empty = the scenario holds)."""
    driver = ScenarioDriver(scenario)
    run_steps(driver, scenario.steps, path="steps")
    return driver.failures


def run_steps(driver: ScenarioDriver, steps: list[dict[str, Any]], path: str) -> None:
    for i, step in enumerate(steps):
        where = f"{path}[{i}]"
        if "cycle" in step:
            count = 1 if step["cycle"] is True else int(step["cycle"])
            results = []
            for _ in range(count):
                result = driver.scheduler.schedule()
                driver.apply_result(result)
                results.append(result)
            if "want" in step:
                check_want(driver, results, step["want"], where)
        elif "finish" in step:
            for item in step["finish"]:
                if isinstance(item, dict):
                    driver.finish_oldest(item["clusterQueue"], int(item.get("count", 1)))
                else:
                    driver.finish(item)
        elif "evict" in step:
            for item in step["evict"]:
                if item == {"preempted": True}:
                    for key in sorted(driver.workloads):
                        if workload_state(driver.workloads[key]) == "evicting":
                            driver.evict(key)
                elif isinstance(item, dict):
                    driver.evict(item["workload"], item.get("reason", "Preempted"), item.get("requeueAfter"))
                else:
                    driver.evict(item)
        elif "advance" in step:
            driver.advance(float(step["advance"]))
        elif "apply" in step:
            for obj in step["apply"]:
                driver.apply(obj)
        elif "delete" in step:
            for ref in step["delete"]:
                driver.delete(ref)
        elif "checks" in step:
            for key, states in step["checks"].items():
                driver.set_checks(key, states)
        elif "repeat" in step:
            for n in range(int(step["repeat"])):
                run_steps(driver, step["steps"], f"{where}.repeat[{n}]")


def _fail(driver: ScenarioDriver, where: str, what: str) -> None:
    driver.failures.append(f"{where}: {what}")


def check_want(driver: ScenarioDriver, results: list[Any], want: dict[str, Any], where: str) -> None:
    admits = {f"{a.namespace}/{a.name}": a for r in results for a in r.admitted}
    admit_order = [f"{a.namespace}/{a.name}" for r in results for a in r.admitted]
    preempts = {f"{p.namespace}/{p.name}": p for r in results for p in r.preempted}
    pendings = {f"{p.namespace}/{p.name}": p for r in results for p in r.pending}
    if "admitted" in want:
        _check_admitted(driver, admits, want["admitted"] or {}, where)
    if "admittedOrder" in want:
        order = [k for k in admit_order if k in want["admittedOrder"]]
        if order != list(want["admittedOrder"]):
            _fail(driver, where, f"admission order {order}, want {want['admittedOrder']}")
    if "preempted" in want:
        _check_preempted(driver, preempts, want["preempted"] or {}, where)
    for key, exp in (want.get("pending") or {}).items():
        holder = driver.workloads.get(key)
        if key in admits or (holder is not None and driver.holding_cq(holder) is not None):
            _fail(driver, where, f"{key} holds quota, want pending")
            continue
        exp = exp or {}
        got = pendings.get(key)
        if got is None:
            if exp.get("reason") or exp.get("messageContains"):
                _fail(driver, where, f"{key}: no Pending decision, want {exp}")
            continue
        if "reason" in exp and got.reason != exp["reason"]:
            _fail(driver, where, f"{key}: pending reason {got.reason!r} ({got.message!r}), want {exp['reason']!r}")
        if "messageContains" in exp and exp["messageContains"] not in got.message:
            _fail(driver, where, f"{key}: pending message {got.message!r} lacks {exp['messageContains']!r}")
    for key in want.get("notAdmitted") or []:
        wl = driver.workloads.get(key)
        if key in admits or (wl is not None and driver.holding_cq(wl) is not None):
            _fail(driver, where, f"{key} holds quota, want not admitted")
    _check_views(driver, want, where)


def _check_admitted(driver: ScenarioDriver, admits: dict[str, Any], want: dict[str, Any], where: str) -> None:
    if set(admits) != set(want):
        _fail(driver, where, f"admitted {sorted(admits)}, want {sorted(want)}")
    for key, exp in want.items():
        got = admits.get(key)
        if got is None or not exp:
            continue
        if "clusterQueue" in exp and got.cluster_queue != exp["clusterQueue"]:
            _fail(driver, where, f"{key}: admitted in {got.cluster_queue}, want {exp['clusterQueue']}")
        psas = {p["name"]: p for p in got.admission.get("podSetAssignments", [])}
        for ps, flavors in (exp.get("flavors") or {}).items():
            have = psas.get(ps, {}).get("flavors", {})
            if have != flavors:
                _fail(driver, where, f"{key}: pod set {ps} flavors {have}, want {flavors}")
        for ps, count in (exp.get("counts") or {}).items():
            have_count = psas.get(ps, {}).get("count")
            if have_count != count:
                _fail(driver, where, f"{key}: pod set {ps} count {have_count}, want {count}")
        if "borrowing" in exp and bool(got.borrowing) != bool(exp["borrowing"]):
            _fail(driver, where, f"{key}: borrowing {got.borrowing}, want {exp['borrowing']}")
        if "admissionChecks" in exp and sorted(got.admission_checks) != sorted(exp["admissionChecks"]):
            _fail(driver, where, f"{key}: admission checks {got.admission_checks}, want {exp['admissionChecks']}")


def _check_preempted(driver: ScenarioDriver, preempts: dict[str, Any], want: dict[str, Any], where: str) -> None:
    if set(preempts) != set(want):
        _fail(driver, where, f"preempted {sorted(preempts)}, want {sorted(want)}")
    for key, exp in want.items():
        got = preempts.get(key)
        if got is None or not exp:
            continue
        if "reason" in exp and got.reason != exp["reason"]:
            _fail(driver, where, f"{key}: preemption reason {got.reason!r}, want {exp['reason']!r}")
        by = f"{got.preemptor_namespace}/{got.preemptor_name}"
        if "by" in exp and by != exp["by"]:
            _fail(driver, where, f"{key}: preempted by {by}, want {exp['by']}")
        if "messageContains" in exp and exp["messageContains"] not in got.message:
            _fail(driver, where, f"{key}: preemption message {got.message!r} lacks {exp['messageContains']!r}")


def _nonzero(usage: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    trimmed = {f: {r: a for r, a in res.items() if a} for f, res in usage.items()}
    return {f: res for f, res in trimmed.items() if res}


def _check_views(driver: ScenarioDriver, want: dict[str, Any], where: str) -> None:
    for key, state in (want.get("state") or {}).items():
        wl = driver.workloads.get(key)
        got = workload_state(wl) if wl is not None else "absent"
        if got != state:
            _fail(driver, where, f"{key}: state {got}, want {state}")
    if want.get("holding"):
        counts: dict[str, int] = {}
        for wl in driver.workloads.values():
            cq = driver.holding_cq(wl)
            if cq is not None:
                counts[cq] = counts.get(cq, 0) + 1
        for cq, n in want["holding"].items():
            if counts.get(cq, 0) != n:
                _fail(driver, where, f"{cq}: {counts.get(cq, 0)} workloads hold quota, want {n}")
    if want.get("usage"):
        usage = driver.usage()
        for cq, flavors in want["usage"].items():
            want_use = _nonzero({f: {r: to_amount(r, q) for r, q in res.items()} for f, res in flavors.items()})
            got_use = _nonzero(usage.get(cq, {}))
            if got_use != want_use:
                _fail(driver, where, f"{cq}: usage {got_use}, want {want_use} (amounts; cpu in milli)")
    for cq, order in (want.get("pendingOrder") or {}).items():
        got_order = [f"{p.namespace}/{p.name}" for p in driver.scheduler.pending_workloads(cq)]
        if got_order != list(order):
            _fail(driver, where, f"{cq}: pending order {got_order}, want {order}")
    for cq, exp in (want.get("active") or {}).items():
        active, reason, message = driver.scheduler.cluster_queue_active(cq)
        if "active" in exp and active != exp["active"]:
            _fail(driver, where, f"{cq}: active {active} ({reason}: {message}), want {exp['active']}")
        if "reason" in exp and reason != exp["reason"]:
            _fail(driver, where, f"{cq}: Active reason {reason!r}, want {exp['reason']!r}")
    for ref, value in (want.get("weightedShare") or {}).items():
        kind, _, name = ref.partition("/")
        got_share = driver.scheduler.weighted_share(kind, name)
        if got_share != value:
            _fail(driver, where, f"{ref}: weighted share {got_share}, want {value}")
