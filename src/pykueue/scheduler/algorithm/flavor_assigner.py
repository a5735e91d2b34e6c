"""Flavor assignment: which ResourceFlavor each requested resource of each pod set gets (Kueue's flavor assignment).

Owns resource groups walked in flavor order, taint/affinity eligibility, the per-(flavor,
resource) quota check with granular modes (fit > reclaim > preempt > noCandidates > noFit),
borrowing levels, flavor fungibility, and Kueue's explanatory messages with numbers. Called by
the cycle (nominate) and by partial admission; asks the preemption oracle when quota could be
freed by preemption. Reads the quota tree; never mutates it.

``plain_fit`` is the fast path the cycle tries first: one pod set fitting the first eligible
flavor of one resource group without borrowing, planned once per (pod set, CQ spec);
``plain_no_fit`` is its failing counterpart (the same shape, one flavor, short of unused quota).
Invariant: when either answers, its ``Assignment`` equals ``FlavorAssigner.assign()``'s field by
field (tests/scheduler/unit/test_plain_fit.py); when it cannot tell, it returns None. Assignments
are read-only once returned (plain fits share their plan's dicts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import IntEnum
from typing import Any

from ..state.clusterqueue import PREEMPTION_OVER_BORROWING, TRY_NEXT_FLAVOR, ClusterQueue, ResourceGroup
from ..state.cohort_tree import find_height_of_lowest_subtree_that_fits
from ..state.resource_amounts import FlavorResource, quantity_string
from ..state.selectors import find_untolerated_taint, flavor_matches_affinity, taint_string
from ..state.workload_info import PodSetInfo, WorkloadInfo

__all__ = ["Assignment", "FlavorAssigner", "Granular", "Mode", "PodSetAssignment", "plain_fit", "plain_no_fit"]

NO_MATCHING_FLAVOR = "NoMatchingFlavor"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
WAITING_FOR_QUOTA = "WaitingForQuota"
_SEVERITY = {"": 0, "TopologyPlacementFailed": 1, WAITING_FOR_QUOTA: 2, EXCEEDS_MAX_QUOTA: 3, NO_MATCHING_FLAVOR: 4}


def most_severe(a: str, b: str) -> str:
    return a if _SEVERITY.get(a, 0) >= _SEVERITY.get(b, 0) else b


class Mode(IntEnum):
    """Public assignment mode, ordered from worst to best."""

    NO_FIT = 0
    PREEMPT = 1
    DEFERRED_FIT = 2
    FIT = 3


class Granular(IntEnum):
    """Preemption mode inside the assigner, ordered from worst to best."""

    NO_FIT = 0
    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4

    @property
    def public(self) -> Mode:
        if self == Granular.FIT:
            return Mode.FIT
        if self == Granular.NO_FIT:
            return Mode.NO_FIT
        return Mode.PREEMPT


GranularMode = tuple[Granular, int]
"""(preemption mode, borrowing level)."""
WORST: GranularMode = (Granular.NO_FIT, 1 << 62)
BEST: GranularMode = (Granular.FIT, 0)
_FIT: tuple[Granular, int, str, str] = (Granular.FIT, 0, "", "")

Oracle = Callable[[ClusterQueue, WorkloadInfo, FlavorResource, int], tuple[Granular, int]]
"""Simulates preemption for one fr needing ``val``: (NO_CANDIDATES|PREEMPT|RECLAIM, borrow)."""


def is_preferred(a: GranularMode, b: GranularMode, preference: str | None) -> bool:
    """Is mode ``a`` better than ``b`` under the CQ's fungibility preference?"""
    if a[0] == Granular.NO_FIT:
        return False
    if b[0] == Granular.NO_FIT:
        return True
    a_none = a[0] == Granular.NO_CANDIDATES
    b_none = b[0] == Granular.NO_CANDIDATES
    if a_none != b_none:
        return not a_none
    if preference == PREEMPTION_OVER_BORROWING:
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


class PodSetAssignment:
    __slots__ = ("count", "flavors", "formatted", "modes", "name", "no_fit_reason", "reasons", "requests")

    def __init__(self, name: str, count: int, requests: dict[str, int]) -> None:
        self.formatted: dict[str, str] | None = None
        """``resourceUsage`` as quantity strings when known in advance (a plain fit's plan; shared, read-only)."""
        self.name = name
        self.count = count
        self.requests = requests
        self.flavors: dict[str, str] = {}
        self.modes: dict[str, Granular] = {}
        self.reasons: list[str] = []
        self.no_fit_reason = ""

    @property
    def mode(self) -> Mode:
        if not self.reasons:
            return Mode.FIT
        if not self.flavors:
            return Mode.NO_FIT
        return min(m.public for m in self.modes.values())

    def message(self) -> str:
        return ", ".join(sorted(self.reasons))


class Assignment:
    __slots__ = ("_mode", "borrowing", "podsets", "usage")

    def __init__(self) -> None:
        self.podsets: list[PodSetAssignment] = []
        self.borrowing = 0
        self.usage: dict[FlavorResource, int] = {}
        self._mode: Mode | None = None

    @property
    def mode(self) -> Mode:
        """Worst pod-set mode; computed once (an assignment is not changed after ``assign``)."""
        mode = self._mode
        if mode is None:
            podsets = self.podsets
            if not podsets:
                mode = Mode.NO_FIT
            elif len(podsets) == 1:
                mode = podsets[0].mode
            else:
                mode = min(ps.mode for ps in podsets)
            self._mode = mode
        return mode

    @property
    def no_fit_reason(self) -> str:
        reason = ""
        for ps in self.podsets:
            if ps.mode == Mode.NO_FIT:
                reason = most_severe(reason, ps.no_fit_reason or NO_MATCHING_FLAVOR)
        return reason or WAITING_FOR_QUOTA

    def message(self) -> str:
        parts = [f"couldn't assign flavors to pod set {ps.name}: {ps.message()}" for ps in self.podsets if ps.reasons]
        return "; ".join(parts)

    def nominated(self) -> dict[tuple[int, str], str]:
        """(pod set index, resource) -> flavor chosen, to pin a recomputation."""
        return {(i, res): flavor for i, ps in enumerate(self.podsets) for res, flavor in ps.flavors.items()}

    def preempt_frs(self) -> set[FlavorResource]:
        """FRs assigned in a Preempt mode: only victims using them help."""
        out: set[FlavorResource] = set()
        for ps in self.podsets:
            for res, mode in ps.modes.items():
                if mode != Granular.FIT and ps.requests.get(res, 0) > 0:
                    out.add((ps.flavors[res], res))
        return out

    def to_admission(self, cq_name: str) -> dict[str, Any]:
        return {
            "clusterQueue": cq_name,
            "podSetAssignments": [
                {
                    "name": ps.name,
                    "flavors": dict(ps.flavors),
                    "resourceUsage": dict(ps.formatted)
                    if ps.formatted is not None
                    else {r: quantity_string(r, ps.requests.get(r, 0)) for r in ps.flavors},
                    "count": ps.count,
                }
                for ps in self.podsets
            ],
        }


class FlavorAssigner:
    """One assignment computation for one workload against one ClusterQueue."""

    def __init__(
        self,
        wl: WorkloadInfo,
        cq: ClusterQueue,
        flavors: Mapping[str, Mapping[str, Any]],
        oracle: Oracle | None,
        *,
        fungibility: bool = True,
        fair_sharing: bool = False,
        ignore_undeclared: bool = False,
        resume: Mapping[tuple[int, str], int] | None = None,
        eligibility: dict[tuple[str, str], str | None] | None = None,
        pin: Mapping[tuple[int, str], str] | None = None,
    ) -> None:
        self.wl = wl
        self.cq = cq
        self.flavors = flavors
        self.oracle = oracle
        self.fungibility = fungibility
        self.fair_sharing = fair_sharing
        self.ignore_undeclared = ignore_undeclared
        self.resume = resume or {}
        self.eligibility = eligibility if eligibility is not None else {}
        self.pin = pin
        """(pod set index, resource) -> flavor: a recomputation sticks to the nominated flavors."""

    def assign(self, counts: list[int] | None = None) -> Assignment:
        cq = self.cq
        assignment = Assignment()
        covers_pods = "pods" in cq.rg_by_resource
        for index, ps in enumerate(self.wl.podsets):
            count = ps.effective_count if counts is None else counts[index]
            requests = {r: v * count for r, v in ps.per_pod.items()}
            if covers_pods:
                requests["pods"] = count
            psa = PodSetAssignment(ps.name, count, requests)
            assignment.podsets.append(psa)
            failed = self._assign_podset(index, ps, psa, assignment)
            for res, flavor in psa.flavors.items():
                amount = requests.get(res, 0)
                if amount:
                    fr = (flavor, res)
                    assignment.usage[fr] = assignment.usage.get(fr, 0) + amount
            if failed:
                psa.flavors = {}
                psa.modes = {}
                return assignment
        return assignment

    def _assign_podset(self, index: int, ps: PodSetInfo, psa: PodSetAssignment, assignment: Assignment) -> bool:
        cq = self.cq
        requests = psa.requests
        rg_by_resource = cq.rg_by_resource
        for res in sorted(requests) if len(requests) > 1 else requests:
            if res in psa.flavors:
                continue
            group = rg_by_resource.get(res)
            if group is None:
                if requests[res] == 0 or self.ignore_undeclared:
                    continue
                psa.reasons.append(f"resource {res} unavailable in ClusterQueue")
                psa.no_fit_reason = NO_MATCHING_FLAVOR
                return True
            covered = group.covered
            group_requests = requests if len(requests) == 1 else {r: v for r, v in requests.items() if r in covered}
            chosen, mode, reasons, reason, _last = self._find_flavor(index, ps, group, group_requests, assignment.usage)
            if chosen is None:
                psa.reasons.extend(reasons)
                psa.no_fit_reason = reason
                return True
            if mode[0] != Granular.FIT:
                psa.reasons.extend(reasons)
            for r, (flavor, granular, borrow) in chosen.items():
                psa.flavors[r] = flavor
                psa.modes[r] = granular
                if borrow > assignment.borrowing:
                    assignment.borrowing = borrow
        return False

    def _find_flavor(
        self,
        index: int,
        ps: PodSetInfo,
        group: ResourceGroup,
        requests: dict[str, int],
        usage: dict[FlavorResource, int],
    ) -> tuple[dict[str, tuple[str, Granular, int]] | None, GranularMode, list[str], str, int]:
        cq = self.cq
        reasons: list[str] = []
        best: dict[str, tuple[str, Granular, int]] | None = None
        best_mode = WORST
        no_fit_reason = ""
        names = sorted(requests) if len(requests) > 1 else list(requests)
        first_res = names[0]
        start = self.resume.get((index, first_res), -1) + 1 if self.fungibility and self.resume else 0
        flavors = group.flavors
        attempted = -1
        min_reason = ""
        memo = self.eligibility
        for idx in range(start, len(flavors)):
            attempted = idx
            fname = flavors[idx]
            if self.pin is not None and self.pin.get((index, first_res)) != fname:
                reasons.append(
                    f"skipping flavor {fname} as it is not found in the nomination mapping for resource {first_res}"
                )
                continue
            memo_key = (ps.match_key, fname)
            blocked = memo[memo_key] if memo_key in memo else self.ineligibility(ps, fname)
            if blocked is not None:
                reasons.append(blocked)
                min_reason = _min_reason(min_reason, NO_MATCHING_FLAVOR)
                continue
            chosen: dict[str, tuple[str, Granular, int]] = {}
            rep = BEST
            flavor_reason = ""
            for rname in names:
                val = requests[rname]
                fr = (fname, rname)
                fit = self._fits(fr, usage.get(fr, 0), val)
                if fit is _FIT:  # the best outcome changes nothing in ``rep``
                    chosen[rname] = (fname, Granular.FIT, 0)
                    continue
                mode, borrow, msg, reason = fit
                if msg:
                    reasons.append(msg)
                    flavor_reason = most_severe(flavor_reason, reason)
                gm: GranularMode = (mode, borrow)
                if is_preferred(rep, gm, cq.preference):
                    rep = gm
                if rep[0] == Granular.NO_FIT:
                    break
                chosen[rname] = (fname, mode, borrow)
            if rep[0] == Granular.NO_FIT:
                min_reason = _min_reason(min_reason, flavor_reason or WAITING_FOR_QUOTA)
            if rep is BEST:  # a plain fit ends the search in both fungibility modes
                best, best_mode = chosen, rep
                break
            if self.fungibility:
                if not self._should_try_next(rep):
                    best, best_mode = chosen, rep
                    break
                if is_preferred(rep, best_mode, cq.preference):
                    best, best_mode = chosen, rep
            elif rep[0] > best_mode[0]:
                best, best_mode = chosen, rep
                if rep[0] == Granular.FIT:
                    break
        last = -1 if attempted == len(flavors) - 1 else attempted
        no_fit_reason = min_reason or NO_MATCHING_FLAVOR
        if best is None or best_mode[0] == Granular.NO_FIT:
            return None, best_mode, reasons, no_fit_reason, last
        return best, best_mode, reasons, no_fit_reason, last

    def ineligibility(self, ps: PodSetInfo, fname: str) -> str | None:
        """Why the flavor cannot host this pod set (taints, affinity), or None. Memoised per
        (pod-template matching shape, flavor); the engine clears the memo when flavors change."""
        memo_key = (ps.match_key, fname)
        memo = self.eligibility
        if memo_key in memo:
            return memo[memo_key]
        rf = self.flavors.get(fname)
        reason: str | None = None
        if rf is None:
            reason = f"flavor {fname} not found"
        else:
            spec = rf.get("spec") or {}
            taint = find_untolerated_taint(
                spec.get("nodeTaints") or (), list(ps.tolerations) + list(spec.get("tolerations") or ())
            )
            if taint is not None:
                reason = f"untolerated taint {taint_string(taint)} in flavor {fname}"
            elif not flavor_matches_affinity(ps.node_selector, ps.affinity_terms, spec.get("nodeLabels") or {}):
                reason = f"flavor {fname} doesn't match node affinity"
        memo[memo_key] = reason
        return reason

    def _should_try_next(self, mode: GranularMode) -> bool:
        cq = self.cq
        if mode[0] in (Granular.NO_FIT, Granular.NO_CANDIDATES):
            return True
        if mode[0] in (Granular.PREEMPT, Granular.RECLAIM) and cq.when_can_preempt == TRY_NEXT_FLAVOR:
            return True
        return mode[1] > 0 and cq.when_can_borrow == TRY_NEXT_FLAVOR

    def _fits(self, fr: FlavorResource, assumed: int, request: int) -> tuple[Granular, int, str, str]:
        """fitsResourceQuota: (mode, borrowing level, message or "", no-fit reason)."""
        cq = self.cq
        flavor, res = fr
        val = assumed + request
        available = cq.available(fr)
        if val <= available:
            if cq.parent is None or cq.usage.get(fr, 0) + val <= cq.subtree.get(fr, 0):
                return _FIT
            return Granular.FIT, find_height_of_lowest_subtree_that_fits(cq, fr, val)[0], "", ""
        max_capacity = cq.potential_available(fr)
        if val > max_capacity:
            return (
                Granular.NO_FIT,
                0,
                f"insufficient quota for {res} in flavor {flavor}, previously considered podsets "
                f"requests ({quantity_string(res, assumed)}) + current podset request "
                f"({quantity_string(res, request)}) > "
                f"maximum capacity ({quantity_string(res, max_capacity)})",
                EXCEEDS_MAX_QUOTA,
            )
        borrow, may_reclaim = find_height_of_lowest_subtree_that_fits(cq, fr, val)
        msg = _insufficient_unused(res, flavor, val - available)
        if self.oracle is not None and (
            cq.nominal(fr) >= val or may_reclaim or _can_preempt_while_borrowing(cq, self.fair_sharing)
        ):
            mode, borrow_after = self.oracle(cq, self.wl, fr, val)
            return mode, borrow_after, msg, ""
        return Granular.NO_FIT, borrow, msg, WAITING_FOR_QUOTA


def _can_preempt_while_borrowing(cq: ClusterQueue, fair_sharing: bool) -> bool:
    return cq.borrow_within_cohort != "Never" or (fair_sharing and cq.reclaim_within_cohort != "Never")


def _insufficient_unused(res: str, flavor: str, missing: int) -> str:
    return f"insufficient unused quota for {res} in flavor {flavor}, {quantity_string(res, missing)} more needed"


_UNKNOWN = object()
_MODE_FIT = Mode.FIT  # a module global: enum attribute lookups are slow
_PLANS_LIMIT = 1024

Plan = tuple[
    str,
    list[tuple[FlavorResource, int]],
    dict[str, int],
    dict[str, str],
    dict[str, Granular],
    dict[FlavorResource, int],
    dict[str, str],
]
"""What ``plain_fit`` needs of one (pod set, CQ spec): the first flavor of the group, the (fr,
amount) checks, and the assignment's parts (requests, flavors, modes, usage, formatted usage),
shared read-only by every assignment made from the plan."""


def _plan(ps: PodSetInfo, cq: ClusterQueue) -> Plan | None:
    """The static part of ``plain_fit`` (depends only on the pod set and the CQ's groups), or
    None when the shape is not a plain one (resources spread over groups, uncovered, none)."""
    count = ps.effective_count
    requests = {r: v * count for r, v in ps.per_pod.items()}
    rg_by_resource = cq.rg_by_resource
    if "pods" in rg_by_resource:
        requests["pods"] = count
    if not requests:
        return None
    names = sorted(requests) if len(requests) > 1 else list(requests)
    group = rg_by_resource.get(names[0])
    if group is None or not group.flavors or any(rg_by_resource.get(r) is not group for r in names):
        return None
    fname = group.flavors[0]
    checks = [((fname, r), requests[r]) for r in names]
    return (
        fname,
        checks,
        requests,
        dict.fromkeys(names, fname),
        dict.fromkeys(names, Granular.FIT),
        {fr: val for fr, val in checks if val},
        {r: quantity_string(r, requests[r]) for r in names},
    )


def plain_fit(
    wl: WorkloadInfo, cq: ClusterQueue, eligibility: Mapping[tuple[str, str], str | None]
) -> Assignment | None:
    """The overwhelmingly common case, without the mode/preference machinery: one pod set whose
    resources all belong to one resource group, whose first flavor is known to be eligible
    (memoised ``ineligibility`` said None) and has the whole request free without borrowing.

    Returns exactly what ``FlavorAssigner(...).assign()`` returns for that case (no resume, no
    pin, no partial counts; fungibility and fair sharing do not matter because a plain fit in the
    first flavor ends the search in every mode), or None when the case does not apply and the
    caller must run the general path (tests/scheduler/unit/test_plain_fit.py proves both). The
    static part is planned once per (pod set, CQ spec): pod sets are shared by every workload of
    a shape (``ShapeCache``), so a plan serves a whole job template, and its dicts are shared by
    the assignments (nothing mutates an assignment once ``assign`` returned it).
    """
    found = _eligible_plan(wl, cq, eligibility)
    if found is None:
        return None
    ps, plan = found
    _fname, checks, requests, flavors, modes, usage, formatted = plan
    available = cq.available
    if cq.parent is None:
        for fr, val in checks:
            if val > available(fr):
                return None
    else:
        cq_usage = cq.usage
        subtree = cq.subtree
        for fr, val in checks:
            if val > available(fr) or cq_usage.get(fr, 0) + val > subtree.get(fr, 0):
                return None
    psa = PodSetAssignment.__new__(PodSetAssignment)
    psa.name = ps.name
    psa.count = ps.effective_count
    psa.requests = requests
    psa.flavors = flavors
    psa.modes = modes
    psa.reasons = _NO_REASONS
    psa.no_fit_reason = ""
    psa.formatted = formatted
    assignment = Assignment.__new__(Assignment)
    assignment.podsets = [psa]
    assignment.borrowing = 0
    assignment.usage = usage
    assignment._mode = _MODE_FIT
    return assignment


_NO_REASONS: list[str] = []
"""Shared by plain fits (read-only: a plain fit has no reasons)."""


def _eligible_plan(
    wl: WorkloadInfo, cq: ClusterQueue, eligibility: Mapping[tuple[str, str], str | None]
) -> tuple[PodSetInfo, Plan] | None:
    """What both fast paths start from: the single pod set's plan, its flavor known eligible
    (memoised ``ineligibility`` said None), or None when a fast path cannot apply."""
    podsets = wl.podsets
    if len(podsets) != 1:
        return None
    ps = podsets[0]
    plan = _plan_for(ps, cq)
    if plan is None or eligibility.get((ps.match_key, plan[0]), _UNKNOWN) is not None:
        return None
    return ps, plan


def _plan_for(ps: PodSetInfo, cq: ClusterQueue) -> Plan | None:
    plans = cq.plans
    hit = plans.get(id(ps))
    if hit is not None and hit[0] is ps:
        known: Plan | None = hit[1]
        return known
    plan = _plan(ps, cq)
    if len(plans) >= _PLANS_LIMIT:
        plans.clear()
    plans[id(ps)] = (ps, plan)  # holding ps keeps its id from being reused
    return plan


def plain_no_fit(
    wl: WorkloadInfo,
    cq: ClusterQueue,
    eligibility: Mapping[tuple[str, str], str | None],
    oracle: Oracle | None,
    *,
    fair_sharing: bool = False,
) -> Assignment | None:
    """The common failure, as ``plain_fit`` is the common success: the plain shape with the only
    flavor of its group eligible, where each resource either fits without borrowing or is short
    of unused quota (within what the cohort could ever lend). Returns exactly the ``Assignment``
    ``FlavorAssigner(...).assign()`` returns then — NO_FIT with the reasons up to the first resource
    nothing can free, or the flavor with each short resource's oracle mode (preemption targets
    are the caller's, as for the general path) — or None for every other case (a plain fit,
    borrowing, exceeding the maximum capacity, several flavors). In a saturated queue this is every
    cycle's last head per ClusterQueue; tests/scheduler/unit/test_plain_fit.py proves the equality.
    """
    found = _eligible_plan(wl, cq, eligibility)
    if found is None:
        return None
    ps, plan = found
    _fname, checks, requests, flavors, _modes, usage, _formatted = plan
    group = cq.rg_by_resource.get(checks[0][0][1])
    if group is None or len(group.flavors) != 1:
        return None
    chosen: list[tuple[str, Granular, int]] = []
    reasons: list[str] = []
    no_fit = False
    for (flavor, res), val in checks:
        fr = (flavor, res)
        available = cq.available(fr)
        if val <= available:
            if cq.parent is not None and cq.usage.get(fr, 0) + val > cq.subtree.get(fr, 0):
                return None  # fits by borrowing: the general path weighs that
            chosen.append((res, Granular.FIT, 0))
            continue
        if val > cq.potential_available(fr):
            return None  # more than the cohort could ever give: the general path's wording
        borrow, may_reclaim = find_height_of_lowest_subtree_that_fits(cq, fr, val)
        reasons.append(_insufficient_unused(res, flavor, val - available))
        if oracle is not None and (
            cq.nominal(fr) >= val or may_reclaim or _can_preempt_while_borrowing(cq, fair_sharing)
        ):
            mode, borrow = oracle(cq, wl, fr, val)
            chosen.append((res, mode, borrow))
            continue
        no_fit = True
        break
    if not reasons:
        return None  # everything fits: plain_fit's case
    psa = PodSetAssignment(ps.name, ps.effective_count, requests)  # the plan's dicts: shared, read-only
    psa.reasons = reasons
    assignment = Assignment()
    assignment.podsets.append(psa)
    if no_fit:
        psa.no_fit_reason = WAITING_FOR_QUOTA
        return assignment
    # every resource got the flavor: the plan's flavors and usage, with each resource's own mode
    psa.flavors = flavors
    psa.modes = {res: mode for res, mode, _borrow in chosen}
    assignment.borrowing = max(borrow for _res, _mode, borrow in chosen)
    assignment.usage = usage
    return assignment


def _min_reason(current: str, new: str) -> str:
    """Among alternative flavors the least severe blocker is the one that counts."""
    if not current:
        return new
    return current if _SEVERITY.get(current, 0) <= _SEVERITY.get(new, 0) else new
