"""One scheduling round, as Kueue's scheduler runs one scheduling cycle, read as a sequence of named steps.

Owns: taking one head per ClusterQueue (``_heads``), nominating each (``_nominate``: checks,
flavor assignment, preemption targets, partial admission), ordering them (classic sort or the
fair-sharing tournament), processing them against the mutable snapshot with Kueue's skip rules
(``_process``), admitting (assume in the cache at once) and requeueing the rest (``_requeue``).

The "snapshot" is the live quota tree plus an undo log (``_overlay``) of usage that only lives
for this round (preemptors waiting for their victims, reservations of quota for entries without
candidates); it is reverted at the end of the round. Admissions are committed to the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum

from ..state.cache import Cache
from ..state.clusterqueue import ANY, BEST_EFFORT_FIFO, STRICT_FIFO, ClusterQueue
from ..state.cohort_tree import CohortNode, ResourceNode
from ..state.pending_queues import QueueManager
from ..state.resource_amounts import FlavorResource
from ..state.workload_info import RESERVED, WorkloadInfo, WorkloadKey
from ..types import Admit, Pending, Preempt, SchedulerConfig
from .fair_sharing import Share, share_key
from .flavor_assigner import Assignment, FlavorAssigner, Mode, plain_fit, plain_no_fit
from .partial_admission import partial_counts
from .preemption import Preemptor, Target, preemption_message, queue_path

__all__ = ["Entry", "EntryStatus", "Round", "RoundContext"]

NO_FIT, PREEMPT, FIT = Mode.NO_FIT, Mode.PREEMPT, Mode.FIT  # module globals: enum attribute lookups are slow


class EntryStatus(IntEnum):
    """Where a head stands in this round."""

    NOMINATED = 0
    """Has an assignment and waits for its turn in ``_process``."""
    FAILED = 1
    """Not admissible now (checks failed, no fit, no preemption candidates, gated)."""
    SKIPPED = 2
    """Would have fit, but something earlier in this round took what it needed."""
    ASSUMED = 3
    """Admitted: its quota is reserved in the cache."""
    PREEMPTING = 4
    """Waits for the victims it (or an earlier entry) preempts to release their quota."""


NOMINATED, FAILED, SKIPPED = EntryStatus.NOMINATED, EntryStatus.FAILED, EntryStatus.SKIPPED
ASSUMED, PREEMPTING = EntryStatus.ASSUMED, EntryStatus.PREEMPTING

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
OVERLAPPING = "Workload has overlapping preemption targets with another workload"
BYPASSED = "Bypassed scheduling evaluation because an equivalent workload recently failed"
WAITING_PODS_READY = "waiting for all admitted workloads to be in PodsReady condition"
DEFERRED_FIT = (
    "Workload has overlapping preemption targets with another workload, but will fit after these preemptions complete"
)


_NO_TARGETS: list[Target] = []
"""Shared by entries and assignments without preemption targets (target lists are never mutated)."""


class Entry:
    __slots__ = ("assignment", "cq", "immediate", "message", "reason", "requeue_reason", "status", "targets", "wl")

    def __init__(self, wl: WorkloadInfo, cq: ClusterQueue) -> None:
        self.wl = wl
        self.cq = cq
        self.assignment: Assignment | None = None
        self.targets: list[Target] = _NO_TARGETS
        self.status: EntryStatus = NOMINATED
        self.reason = ""
        self.message = ""
        self.immediate = False
        self.requeue_reason = ""

    def fail(self, reason: str, message: str, immediate: bool) -> None:
        self.status = FAILED
        self.reason = reason
        self.message = message
        self.immediate = immediate


@dataclass(frozen=True, slots=True)
class RoundContext:
    """What a round reads and the few records it writes: built once by the engine, shared by its rounds.

    A round changes the quota tree (admissions are assumed in ``cache``), the queues (heads popped,
    failures requeued), ``expectations`` (victims it reports) and ``assumed`` (admissions it made);
    everything else it only reads.
    """

    config: SchedulerConfig
    cache: Cache
    queues: QueueManager
    preemptor: Preemptor
    eligibility: dict[tuple[str, str], str | None]
    """Flavor eligibility per (ClusterQueue, pod-set shape), cleared by the engine when flavors change."""
    expectations: set[WorkloadKey]
    """Victims already reported, until they release their quota."""
    assumed: dict[WorkloadKey, str]
    """Admitted by this engine, status not yet echoed: key -> resourceVersion it was read at."""
    namespace_matches: Callable[[ClusterQueue, str], bool]
    afs_usage: Callable[[WorkloadInfo], float]
    on_assumed: Callable[[WorkloadInfo], None]
    """Charges an admission to its LocalQueue's Admission Fair Sharing usage."""
    now: Callable[[], float]


class Round:
    """One Kueue cycle over a chosen set of ClusterQueues."""

    def __init__(self, ctx: RoundContext) -> None:
        self.ctx = ctx
        self.nominations = 0
        self.admitted: list[Admit] = []
        self.preempted: list[Preempt] = []
        self.pending: list[Pending] = []
        self.changed_trees: set[str] = set()
        self._overlay: list[tuple[ClusterQueue, dict[FlavorResource, int]]] = []
        self._victims: dict[tuple[str, str], WorkloadInfo] = {}
        self._victims_by_tree: dict[str, list[WorkloadInfo]] = {}
        self._lifted: set[str] = set()
        """Cohort trees whose victims' usage is currently subtracted from the live quota tree."""
        self.now = ctx.now()

    # -- step 1: heads -------------------------------------------------------------------------
    def run(self, cq_names: Iterable[str]) -> None:
        preemptor = self.ctx.preemptor
        preemptor.committed = True  # nothing of this round is on the quota tree before the first process
        try:
            entries = [self._nominate(wl, cq) for wl, cq in self._heads(cq_names)]
        finally:
            preemptor.committed = False
        settle_each = self.ctx.config.fair_sharing is not None  # the tournament reads usage between entries
        for entry in self._order(entries):
            self._process(entry)
            if settle_each and self._lifted:
                self._settle_all()
        self._settle_all()
        self._revert_overlay()
        self._requeue(entries)

    def _heads(self, cq_names: Iterable[str]) -> list[tuple[WorkloadInfo, ClusterQueue]]:
        ctx = self.ctx
        heads: list[tuple[WorkloadInfo, ClusterQueue]] = []
        queues = ctx.queues.cqs
        cqs = ctx.cache.cqs
        afs_on = ctx.config.admission_fair_sharing is not None
        for name in cq_names:
            q = queues.get(name)
            cq = cqs.get(name)
            if q is None or cq is None:
                continue
            wl = q.pop(ctx.afs_usage if (afs_on and cq.afs) else None)
            if wl is not None:
                heads.append((wl, cq))
        return heads

    # -- step 2/3: nominate ----------------------------------------------------------------------
    def _nominate(self, wl: WorkloadInfo, cq: ClusterQueue) -> Entry:
        ctx = self.ctx
        self.nominations += 1
        entry = Entry(wl, cq)
        strict = cq.strategy == STRICT_FIFO
        if wl.failed_checks:
            entry.fail("PendingEvaluation", "The workload has failed admission checks", strict)
            return entry
        if not ctx.namespace_matches(cq, wl.namespace):
            entry.fail("Misconfigured", "Workload namespace doesn't match ClusterQueue selector", False)
            return entry
        plain = plain_fit(wl, cq, ctx.eligibility)
        if plain is not None:  # the common case: fits as it is, no targets, nothing partial to try
            entry.assignment = plain
            return entry
        assignment, targets = self._assign(wl, cq, None, plain=False)
        if (
            ctx.config.partial_admission
            and (assignment.mode == NO_FIT or (assignment.mode == PREEMPT and not targets))
            and any(ps.min_count is not None and ps.min_count < ps.count for ps in wl.podsets)
        ):
            found = partial_counts(wl, lambda counts: self._viable(wl, cq, counts))
            if found is not None:
                assignment, targets = self._assign(wl, cq, found)
        entry.assignment = assignment
        entry.targets = targets
        return entry

    def _assign(
        self,
        wl: WorkloadInfo,
        cq: ClusterQueue,
        counts: list[int] | None,
        pin: dict[tuple[int, str], str] | None = None,
        plain: bool = True,
    ) -> tuple[Assignment, list[Target]]:
        ctx = self.ctx
        if plain and counts is None and pin is None:
            fast = plain_fit(wl, cq, ctx.eligibility)
            if fast is not None:
                return fast, _NO_TARGETS
        fair_sharing = ctx.config.fair_sharing is not None
        preemptor = ctx.preemptor
        preemptor.memo = {}  # nothing below changes the quota tree: equal searches give equal answers
        try:
            assignment = (
                plain_no_fit(wl, cq, ctx.eligibility, preemptor.oracle, fair_sharing=fair_sharing)
                if counts is None and pin is None
                else None
            )
            if assignment is None:
                assigner = FlavorAssigner(
                    wl,
                    cq,
                    ctx.cache.flavors,
                    preemptor.oracle,
                    fungibility=ctx.config.flavor_fungibility,
                    fair_sharing=fair_sharing,
                    ignore_undeclared=ctx.config.ignore_undeclared_resources,
                    eligibility=ctx.eligibility,
                    pin=pin,
                )
                assignment = assigner.assign(counts)
            targets = _NO_TARGETS
            if assignment.mode == PREEMPT and preemptor.may_preempt(cq):
                search = preemptor.context(wl, cq, assignment.usage, assignment.preempt_frs())
                targets = preemptor.targets(search)
        finally:
            preemptor.memo = None
        return assignment, targets

    def _viable(self, wl: WorkloadInfo, cq: ClusterQueue, counts: list[int]) -> bool:
        assignment, targets = self._assign(wl, cq, counts)
        return assignment.mode == FIT or (assignment.mode == PREEMPT and bool(targets))

    # -- step 4: order ---------------------------------------------------------------------------
    def _order(self, entries: list[Entry]) -> Iterable[Entry]:
        nominated = [e for e in entries if e.status == NOMINATED and e.assignment is not None]
        if self.ctx.config.fair_sharing is None:
            nominated.sort(
                key=lambda e: (e.assignment.borrowing if e.assignment else 0, -e.wl.priority, e.wl.timestamp, e.wl.uid)
            )
            return nominated
        return self._tournament(nominated)

    def _tournament(self, entries: list[Entry]) -> Iterable[Entry]:
        by_tree: dict[str, list[Entry]] = {}
        for e in entries:
            by_tree.setdefault(self.ctx.cache.tree_key(e.cq), []).append(e)
        for key in sorted(by_tree):
            pending = by_tree[key]
            while pending:
                best = pending[0] if len(pending) == 1 else self._tournament_pick(pending)
                pending.remove(best)
                yield best

    def _tournament_pick(self, entries: list[Entry]) -> Entry:
        values: dict[int, dict[int, tuple[bool, Share]]] = {}
        for e in entries:
            usage = e.assignment.usage if e.assignment else {}
            frs = list(usage)
            per_node: dict[int, tuple[bool, Share]] = {}
            node: ResourceNode | None = e.cq
            while node is not None and node.parent is not None:
                borrowing = any(node.usage.get(fr, 0) + usage.get(fr, 0) > node.subtree.get(fr, 0) for fr in frs)
                per_node[id(node)] = (borrowing, share_key(node, usage))
                node = node.parent
            values[id(e)] = per_node
        by_cq: dict[str, Entry] = {}
        for e in entries:
            current = by_cq.get(e.cq.name)
            if current is None or _classic_key(e) < _classic_key(current):
                by_cq[e.cq.name] = e
        root = entries[0].cq.root()

        def winner(node: ResourceNode) -> Entry | None:
            if isinstance(node, ClusterQueue):
                return by_cq.get(node.name)
            assert isinstance(node, CohortNode)
            best: Entry | None = None
            best_key: tuple[bool, Share, int, float, str] | None = None
            for child in node.children():
                cand = winner(child)
                if cand is None:
                    continue
                borrowing, share = values[id(cand)].get(id(child), (False, (0, 0.0, 0)))
                key = (borrowing, share, -cand.wl.priority, cand.wl.timestamp, cand.wl.uid)
                if best_key is None or key < best_key:
                    best, best_key = cand, key
            return best

        chosen = winner(root)
        return chosen if chosen is not None else entries[0]

    # -- step 5: process -------------------------------------------------------------------------
    def _process(self, e: Entry) -> None:
        ctx = self.ctx
        assignment = e.assignment
        assert assignment is not None
        cq = e.cq
        strict = cq.strategy == STRICT_FIFO
        mode = assignment.mode
        if mode == NO_FIT:
            e.status = FAILED
            e.reason, e.message, e.immediate = assignment.no_fit_reason, assignment.message(), strict
            e.requeue_reason = "NoFit"
            return
        if mode == PREEMPT and not e.targets:
            e.status = FAILED
            e.reason, e.message, e.immediate = "WaitingForQuota", assignment.message(), strict
            e.requeue_reason = "PreemptionNoCandidates"
            if cq.reclaim_within_cohort != ANY:
                self._settle(cq.tree_key)  # reserves against usage with this round's victims still counted
                self._add_overlay(cq, self._to_reserve(e, cq))
            return
        if mode == PREEMPT and e.wl.preemption_gated:
            e.status = FAILED
            e.reason, e.message, e.immediate = (
                "BlockedOnPreemptionGates",
                "Workload requires preemption, but it's gated",
                strict,
            )
            return
        if e.targets and self._victims and any(t.wl.key in self._victims for t in e.targets):
            if not self._recompute(e):
                return
            assignment = e.assignment
            assert assignment is not None
            mode = assignment.mode
        if not self._fits(cq, assignment.usage, e.targets):
            e.status = SKIPPED
            e.reason, e.message, e.immediate = "WaitingForQuota", NO_LONGER_FITS, True
            return
        if e.targets:
            self._add_victims(cq.tree_key, e.targets)
        if mode == PREEMPT:
            self._add_overlay(cq, assignment.usage)
            self._issue(e)
            return
        if ctx.config.block_admission_until_pods_ready and ctx.cache.not_ready:
            e.status = SKIPPED
            e.reason, e.message, e.immediate = "WaitingForPodsReady", WAITING_PODS_READY, True
            return
        self._admit(e)

    def _recompute(self, e: Entry) -> bool:
        """RecomputeAssignmentUponPreemptionTargetsOverlap: with this cycle's victims removed and
        the nominated flavors pinned, look for other targets. True = continue processing."""
        ctx = self.ctx
        assert e.assignment is not None
        counts = [ps.count for ps in e.assignment.podsets]
        self._lift(e.cq.tree_key)  # only victims of this tree can change what this entry sees
        ctx.preemptor.excluded = {wl.key for wl in self._victims_by_tree.get(e.cq.tree_key, ())}
        try:
            assignment, targets = self._assign(e.wl, e.cq, counts, pin=e.assignment.nominated())
        finally:
            ctx.preemptor.excluded = set()
        if assignment.mode == FIT:
            # DeferredFit: it fits once the victims chosen earlier in this cycle are gone
            self._add_overlay(e.cq, assignment.usage)
            e.status = PREEMPTING
            e.reason, e.message, e.immediate = "WaitingForPreemptedWorkloads", DEFERRED_FIT, True
            return False
        if assignment.mode == PREEMPT and targets and not any(t.wl.key in self._victims for t in targets):
            e.assignment, e.targets = assignment, targets
            return True
        e.status = SKIPPED
        e.reason, e.message, e.immediate = "WaitingForQuota", OVERLAPPING, True
        return False

    def _fits(self, cq: ClusterQueue, usage: dict[FlavorResource, int], targets: list[Target]) -> bool:
        """Does ``usage`` fit in ``cq`` with this round's victims and ``targets`` gone?

        The victims of ``cq``'s tree stay subtracted from the quota tree between entries (``_lift``)
        instead of being removed and restored for each entry: in a saturated cohort a round issues
        hundreds of preemptions, and undoing them per entry made the round quadratic in them.
        Victims of other trees cannot change what ``cq`` sees and are left alone.
        """
        tree = cq.tree_key
        if not targets and tree not in self._victims_by_tree:
            available = cq.available
            for fr, amount in usage.items():  # noqa: SIM110 - a loop: no generator frame on the hot path
                if amount > available(fr):
                    return False
            return True
        self._lift(tree)
        victims = self._victims
        extra = [t.wl for t in targets if t.wl.key not in victims]
        cqs = self.ctx.cache.cqs
        for wl in extra:
            cqs[wl.cq_name].add_usage(wl.usage, -1)
        try:
            return all(amount <= cq.available(fr) for fr, amount in usage.items())
        finally:
            for wl in extra:
                cqs[wl.cq_name].add_usage(wl.usage, 1)

    def _add_victims(self, tree: str, targets: list[Target]) -> None:
        victims = self._victims
        listed = self._victims_by_tree.setdefault(tree, [])
        lifted = tree in self._lifted
        cqs = self.ctx.cache.cqs
        for t in targets:
            wl = t.wl
            if wl.key in victims:
                continue
            victims[wl.key] = wl
            listed.append(wl)
            if lifted:
                cqs[wl.cq_name].add_usage(wl.usage, -1)

    def _lift(self, tree: str) -> None:
        """Subtract the usage of ``tree``'s victims (kept so until ``_settle``)."""
        if tree in self._lifted:
            return
        self._lifted.add(tree)
        cqs = self.ctx.cache.cqs
        for wl in self._victims_by_tree.get(tree, ()):
            cqs[wl.cq_name].add_usage(wl.usage, -1)

    def _settle(self, tree: str) -> None:
        """Count ``tree``'s victims' usage again (the live state outside ``_fits``/``_recompute``)."""
        if tree not in self._lifted:
            return
        self._lifted.discard(tree)
        cqs = self.ctx.cache.cqs
        for wl in self._victims_by_tree.get(tree, ()):
            cqs[wl.cq_name].add_usage(wl.usage, 1)

    def _settle_all(self) -> None:
        for tree in list(self._lifted):
            self._settle(tree)

    @staticmethod
    def _to_reserve(e: Entry, cq: ClusterQueue) -> dict[FlavorResource, int]:
        assert e.assignment is not None
        out: dict[FlavorResource, int] = {}
        for fr, amount in e.assignment.usage.items():
            q = cq.quotas.get(fr)
            nominal = q.nominal if q is not None else 0
            used = cq.usage.get(fr, 0)
            if e.assignment.borrowing > 0:
                if q is None or q.borrowing_limit is None:
                    out[fr] = amount
                else:
                    out[fr] = min(amount, nominal + q.borrowing_limit - used)
            else:
                out[fr] = max(0, min(amount, nominal - used))
        return out

    def _add_overlay(self, cq: ClusterQueue, usage: dict[FlavorResource, int]) -> None:
        cq.add_usage(usage, 1)
        self._overlay.append((cq, usage))

    def _revert_overlay(self) -> None:
        for cq, usage in reversed(self._overlay):
            cq.add_usage(usage, -1)
        self._overlay.clear()

    def _issue(self, e: Entry) -> None:
        ctx = self.ctx
        assert e.assignment is not None
        new = 0
        preemptor_path = queue_path(e.cq)
        for t in e.targets:
            victim = t.wl
            if victim.key in ctx.expectations:
                continue
            new += 1
            ctx.expectations.add(victim.key)
            victim_cq = ctx.cache.cqs.get(victim.cq_name)
            if victim_cq is not None:
                victim_cq.touched()  # issued victims go first in the next searches of the tree
            message = preemption_message(e.wl, t.reason, preemptor_path, queue_path(victim_cq) if victim_cq else "")
            self.preempted.append(
                Preempt(victim.namespace, victim.name, e.wl.namespace, e.wl.name, t.reason, message, e.cq.name)
            )
        e.status = PREEMPTING
        e.reason = "WaitingForPreemptedWorkloads"
        base = e.assignment.message()
        e.message = (
            f"{base}. Pending the preemption of {len(e.targets)} workload(s)"
            if base
            else f"Pending the preemption of {len(e.targets)} workload(s)"
        )
        e.immediate = True
        if e.cq.strategy == BEST_EFFORT_FIFO:
            q = ctx.queues.cqs.get(e.cq.name)
            if q is not None:
                q.sticky = e.wl.key
        if new:
            self.changed_trees.add(ctx.cache.tree_key(e.cq))

    def _admit(self, e: Entry) -> None:
        ctx = self.ctx
        assert e.assignment is not None
        wl = e.wl
        cq = e.cq
        checks = (
            cq.checks_for({f for ps in e.assignment.podsets for f in ps.flavors.values()})
            if cq.admission_checks
            else []
        )
        admission = e.assignment.to_admission(cq.name)
        ctx.queues.forget_taken(wl)  # popped as this round's head: only its location is left
        ctx.preemptor.forget(wl.key)
        meta = wl.obj.get("metadata")
        version = meta.get("resourceVersion") if meta else None
        if version:
            ctx.assumed[wl.key] = version
        wl.state = RESERVED
        wl.cq_name = cq.name
        wl.usage = e.assignment.usage  # read-only everywhere (a plain fit's is shared by its plan)
        wl.admission = admission
        wl.admitted = not checks
        wl.evicted = False
        wl.quota_reserved_time = self.now
        ctx.cache.add_reserved(wl)
        if cq.afs:
            ctx.on_assumed(wl)
        e.status = ASSUMED
        self.admitted.append(Admit(wl.namespace, wl.name, cq.name, admission, e.assignment.borrowing > 0, checks))
        self.changed_trees.add(cq.tree_key)

    # -- step 6: requeue -------------------------------------------------------------------------
    def _requeue(self, entries: list[Entry]) -> None:
        ctx = self.ctx
        for e in entries:
            if e.status == ASSUMED:
                continue
            q = ctx.queues.cqs.get(e.cq.name)
            if e.status != PREEMPTING and q is not None and q.sticky == e.wl.key:
                q.sticky = None
            self.pending.append(Pending(e.wl.namespace, e.wl.name, e.reason, e.message, e.wl.resource_requests()))
            if not e.immediate:
                self.changed_trees.add(ctx.cache.tree_key(e.cq))
            if (
                e.requeue_reason
                and not e.immediate
                and q is not None
                and ctx.config.equivalence_hashing
                and e.cq.strategy == BEST_EFFORT_FIFO
                and e.wl.key in ctx.queues.location
            ):
                # park the whole shape, this head included (it already got its own message)
                q.push(e.wl, quiet=True)
                for moved in q.bulk_move(e.wl.shape_hash, e.reason):
                    if moved is not e.wl:
                        self.pending.append(
                            Pending(moved.namespace, moved.name, e.reason, BYPASSED, moved.resource_requests())
                        )
            else:
                ctx.queues.requeue(e.wl, e.immediate)


def _classic_key(e: Entry) -> tuple[int, float, str]:
    return (-e.wl.priority, e.wl.timestamp, e.wl.uid)


NowFn = Callable[[], float]
