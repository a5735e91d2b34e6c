"""The scheduler loop's bookkeeping around its own writes."""

from __future__ import annotations

import copy
from typing import Any, Literal

from tests.waiting import eventually

from pykueue.controllers.resource_names import WORKLOADS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue, make_workload

from .conftest import Env, cond

NS = "team-a"


async def _one_admitted(env: Env, name: str, quota: int) -> tuple[Any, Any]:
    """One 1-cpu workload ``name`` in a ClusterQueue of ``quota`` cpu: (as created, once admitted)."""
    await env.setup_queues(
        make_flavor("f").obj(),
        make_cluster_queue("cq").quota("f", "cpu", quota).obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    created = await env.create(WORKLOADS, make_workload(name, NS).queue("lq").request("cpu", 1).obj())

    async def admitted() -> Any:
        wl = await env.get(WORKLOADS, name, NS)
        return wl if cond(wl, "Admitted").get("status") == "True" else None

    return created, await eventually(admitted)


async def test_a_stale_echo_after_our_admission_does_not_unreserve(env: Env) -> None:
    created, _ = await _one_admitted(env, "w", 4)
    loop = env.manager.scheduling
    await env.manager.stop()  # no more informer traffic: we play the stale echo by hand
    stale = copy.deepcopy(created)
    # pretend our write is newer than anything the informer delivered so far
    loop._written_rv[(NS, "w")] = int(created["metadata"]["resourceVersion"]) + 1_000_000
    loop.on_workload("MODIFIED", stale, None)
    assert env.manager.scheduler.cluster_queue_usage("cq").reserving_workloads == 1
    await _restart(env)


async def test_a_write_answer_older_than_the_informer_does_not_roll_the_engine_back(env: Env) -> None:
    """Over HTTP our write's answer can arrive after the informer delivered a later write to the
    same workload (e.g. the workload controller's, reacting to ours). The engine keeps the newer
    state instead of going back to what our answer says."""
    _, current = await _one_admitted(env, "w", 4)
    loop = env.manager.scheduling
    await eventually(lambda: _informer_has(loop, current))
    await env.manager.stop()  # no more informer traffic: we play the late answer by hand
    late = copy.deepcopy(current)
    late["metadata"]["resourceVersion"] = str(int(current["metadata"]["resourceVersion"]) - 1)
    late["status"].pop("admission")  # an older state, without the reservation
    loop._told(late)
    assert env.manager.scheduler.cluster_queue_usage("cq").reserving_workloads == 1
    assert (NS, "w") not in loop._written_rv
    newer = copy.deepcopy(current)
    newer["metadata"]["resourceVersion"] = str(int(current["metadata"]["resourceVersion"]) + 1)
    newer["status"].pop("admission")
    loop._told(newer)  # an answer the informer has not delivered yet is applied at once
    assert env.manager.scheduler.cluster_queue_usage("cq").reserving_workloads == 0
    await _restart(env)


async def _informer_has(loop: Any, obj: Any) -> Any:
    seen = loop._workloads.get(obj["metadata"]["name"], NS)
    return (
        seen if seen is not None and seen["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"] else None
    )


async def test_the_loop_sleeps_when_nothing_changes(env: Env) -> None:
    """With a pending head and nothing changing, the loop parks on its wake-up event instead of
    spinning; one change runs one more cycle and it parks again."""
    import asyncio

    await env.setup_queues(
        make_flavor("f").obj(),
        make_cluster_queue("cq").quota("f", "cpu", 1).obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    await env.create(WORKLOADS, make_workload("fits", NS).queue("lq").request("cpu", 1).obj())
    await env.create(WORKLOADS, make_workload("waits", NS).queue("lq").request("cpu", 1).obj())

    async def settled() -> Any:
        wl = await env.get(WORKLOADS, "waits", NS)
        return wl if cond(wl, "QuotaReserved").get("reason") else None

    await eventually(settled)
    loop = env.manager.scheduling
    parked = asyncio.Event()

    class WakeUp(asyncio.Event):
        """The loop's wake-up event, telling when the loop waits on it while nobody has set it."""

        async def wait(self) -> Literal[True]:
            if not self.is_set():
                parked.set()
            return await super().wait()

    wake_up = WakeUp()
    if loop._dirty.is_set():
        wake_up.set()
    loop._dirty = wake_up
    await eventually(parked.is_set, what="the loop waits for a change")
    cycles = loop.cycles
    for _ in range(100):  # other tasks run; nothing that changed wakes the loop
        await asyncio.sleep(0)
    assert not wake_up.is_set()
    assert loop.cycles == cycles
    parked.clear()
    loop.wake()
    await eventually(lambda: loop.cycles > cycles and parked.is_set(), what="one change, one cycle, parked again")


async def test_a_bare_workload_is_preempted_and_released_without_a_job(env: Env) -> None:
    await env.setup_queues(
        make_flavor("f").obj(),
        make_cluster_queue("cq").quota("f", "cpu", 2).preemption(within_cluster_queue="LowerPriority").obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    await env.create(WORKLOADS, make_workload("low", NS).queue("lq").priority(1).request("cpu", 2).obj())

    async def state(name: str, ctype: str, status: str) -> Any:
        wl = await env.get(WORKLOADS, name, NS)
        return wl if cond(wl, ctype).get("status") == status else None

    await eventually(lambda: state("low", "Admitted", "True"))
    await env.create(WORKLOADS, make_workload("high", NS).queue("lq").priority(10).request("cpu", 2).obj())
    await eventually(lambda: state("high", "Admitted", "True"), what="high admitted after low was released")
    low = await eventually(lambda: state("low", "QuotaReserved", "False"))
    assert cond(low, "Evicted")["reason"] == "Preempted"
    assert cond(low, "Requeued")["status"] == "True"
    assert "admission" not in low["status"]


async def _stale_cache_of_a_waiting_workload(env: Env) -> tuple[Any, Any]:
    """'waits' pending behind 'fits'; then the loop's informers stop, so its cache goes stale."""
    await _one_admitted(env, "fits", 1)
    await env.create(WORKLOADS, make_workload("waits", NS).queue("lq").request("cpu", 1).obj())

    async def waiting() -> Any:
        wl = await env.get(WORKLOADS, "waits", NS)
        return wl if cond(wl, "QuotaReserved").get("reason") else None

    await eventually(waiting)
    fits = await env.get(WORKLOADS, "fits", NS)
    loop = env.manager.scheduling
    await env.manager.stop()
    return loop, fits


async def _restart(env: Env) -> None:
    env.manager = type(env.manager)(env.client, env.manager.config, env.clock)
    await env.manager.start()


async def test_an_admission_survives_a_concurrent_status_write(env: Env) -> None:
    """The cache lags a status write (ours, for the pending message, or anyone's): the admission is
    retried once on the stored object instead of being dropped and re-decided on the same stale view."""
    loop, fits = await _stale_cache_of_a_waiting_workload(env)
    await env.client.patch(
        WORKLOADS, "waits", {"status": {"resourceRequests": []}}, namespace=NS, subresource="status"
    )  # a status-only write the stopped informer never sees
    loop.on_workload("DELETED", fits, None)  # room for 'waits' in the engine
    result = loop.scheduler.schedule()
    assert [a.name for a in result.admitted] == ["waits"]
    assert await loop.apply(result) == 1
    stored = await env.get(WORKLOADS, "waits", NS)
    assert stored is not None
    assert stored["status"]["admission"]["clusterQueue"] == "cq"
    await _restart(env)


async def test_an_admission_decided_on_an_older_spec_is_not_written(env: Env) -> None:
    loop, fits = await _stale_cache_of_a_waiting_workload(env)
    await env.client.patch(
        WORKLOADS, "waits", {"metadata": {"labels": {"x": "y"}}, "spec": {"priority": 7}}, namespace=NS
    )
    loop.on_workload("DELETED", fits, None)
    result = loop.scheduler.schedule()
    assert [a.name for a in result.admitted] == ["waits"]
    assert await loop.apply(result) == 0
    stored = await env.get(WORKLOADS, "waits", NS)
    assert stored is not None
    assert "admission" not in (stored.get("status") or {})
    assert loop.scheduler.cluster_queue_usage("cq").reserving_workloads == 0  # the assumption is forgotten
    await _restart(env)


async def test_queue_status_writes_back_off_when_flushes_are_expensive(env: Env) -> None:
    """Under load every queue is dirty at every flush; the writer pauses BUDGET_FACTOR times as long
    as a flush took, so status writes cannot take over the event loop."""
    import asyncio
    import itertools

    from pykueue.controllers.queue_status import BUDGET_FACTOR

    writer = env.manager.queues
    starts: list[float] = []
    loop = asyncio.get_running_loop()

    async def slow_flush() -> None:  # the cost of writing many queues' status, without the writes
        starts.append(loop.time())
        await asyncio.sleep(0.05)

    writer.flush = slow_flush  # type: ignore[method-assign]

    def dirty_again() -> bool:
        writer.mark_all()  # always dirty again, as under load
        return len(starts) >= 3

    await eventually(dirty_again, what="three flushes while every queue stays dirty")
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.05 * (1 + BUDGET_FACTOR) * 0.9, gaps  # not the 100 ms idle interval


async def test_a_workloads_pending_condition_is_rewritten_at_most_once_per_refresh_interval(env: Env) -> None:
    """The first pending decision is written at once; later ones for the same workload wait until
    PENDING_REFRESH has passed since the last write, and only the latest is written."""
    import asyncio

    from pykueue.controllers.scheduling import PENDING_REFRESH
    from pykueue.scheduler.types import Pending

    loop, _ = await _stale_cache_of_a_waiting_workload(env)
    await env.manager.start()  # informers and writers again, on the same engine ...
    loop = env.manager.scheduling
    loop._tasks[0].cancel()  # ... but no scheduling cycles: only our decisions are written
    written: list[str] = []
    real_write = loop._write_pending

    async def recording(pending: Pending) -> None:
        written.append(pending.message)
        await real_write(pending)

    loop._write_pending = recording  # type: ignore[method-assign]
    await asyncio.sleep(PENDING_REFRESH)  # nothing written for 'waits' within the last interval
    stored = await env.get(WORKLOADS, "waits", NS)
    assert stored is not None
    requests = stored["status"].get("resourceRequests") or []
    for message in ("first", "second", "third"):
        loop._queue_pending(Pending(NS, "waits", "WaitingForQuota", message, requests))
        await asyncio.sleep(0.05)
    assert written == ["first"]
    await asyncio.sleep(PENDING_REFRESH)
    assert written == ["first", "third"]

    async def third() -> Any:
        wl = await env.get(WORKLOADS, "waits", NS)
        return wl if cond(wl, "QuotaReserved").get("message") == "third" else None

    await eventually(third)
