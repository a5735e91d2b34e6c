"""WorkQueue and run_workers: client-go semantics (dedup, one worker per key, dirty re-add, backoff)."""

from __future__ import annotations

import asyncio

import pytest
from tests.waiting import eventually

from pykueue.client import QueueShutDown, WorkQueue, run_workers
from pykueue.client.workqueue import BASE_DELAY, MAX_DELAY


async def test_add_deduplicates_waiting_keys() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("a")
    q.add("b")
    assert len(q) == 2
    assert await q.get() == "a"
    assert await q.get() == "b"
    assert len(q) == 0


async def test_key_added_while_processing_is_requeued_on_done_not_before() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    key = await q.get()
    q.add("a")
    assert len(q) == 0, "a key being processed must not be handed to a second worker"
    q.done(key)
    assert len(q) == 1
    assert await q.get() == "a"


async def test_done_without_re_add_does_not_requeue() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.done(await q.get())
    assert len(q) == 0


async def test_get_waits_for_an_add() -> None:
    q: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not getter.done()
    q.add("x")
    assert await asyncio.wait_for(getter, 1) == "x"


async def test_add_after_delays_and_keeps_earliest() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add_after("a", 30)
    q.add_after("a", 0.01)
    q.add_after("a", 60)
    assert len(q) == 0
    assert await asyncio.wait_for(q.get(), 5) == "a"


async def test_rate_limited_backoff_doubles_and_forget_resets() -> None:
    q: WorkQueue[str] = WorkQueue()
    loop = asyncio.get_running_loop()
    delays = []
    for _ in range(4):
        before = loop.time()
        q.add_rate_limited("k")
        when, _handle = q._delayed.pop("k")
        _handle.cancel()
        delays.append(round(when - before, 3))
    assert delays == [BASE_DELAY, BASE_DELAY * 2, BASE_DELAY * 4, BASE_DELAY * 8]
    assert q.num_requeues("k") == 4
    q.forget("k")
    assert q.num_requeues("k") == 0
    for _ in range(60):
        q.add_rate_limited("k")
    when, handle = q._delayed.pop("k")
    handle.cancel()
    assert when - loop.time() <= MAX_DELAY


async def test_shutdown_wakes_getters() -> None:
    q: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.shutdown()
    with pytest.raises(QueueShutDown):
        await asyncio.wait_for(getter, 1)
    q.add("late")
    assert len(q) == 0


async def test_run_workers_never_runs_one_key_twice_concurrently() -> None:
    q: WorkQueue[str] = WorkQueue()
    running: set[str] = set()
    overlaps: list[str] = []
    calls: dict[str, int] = {}
    release = asyncio.Event()

    async def reconcile(key: str) -> float | None:
        if key in running:
            overlaps.append(key)
        running.add(key)
        calls[key] = calls.get(key, 0) + 1
        await release.wait()
        running.discard(key)
        return None

    workers = asyncio.create_task(run_workers(q, reconcile, workers=4))
    q.add("a")
    await asyncio.sleep(0.01)
    q.add("a")  # while "a" is in flight: must wait, then run once more
    q.add("b")
    await asyncio.sleep(0.01)
    release.set()
    await eventually(lambda: calls.get("a") == 2 and calls.get("b") == 1, what="a ran twice, b once")
    q.shutdown()
    await asyncio.wait_for(workers, 2)
    assert overlaps == []
    assert calls == {"a": 2, "b": 1}


async def test_run_workers_requeues_failures_and_honours_requeue_after() -> None:
    q: WorkQueue[str] = WorkQueue()
    attempts: list[str] = []

    async def reconcile(key: str) -> float | None:
        attempts.append(key)
        if key == "flaky" and attempts.count("flaky") < 3:
            raise RuntimeError("transient")
        if key == "again" and attempts.count("again") < 2:
            return 0.01
        return None

    workers = asyncio.create_task(run_workers(q, reconcile))
    q.add("flaky")
    q.add("again")
    await eventually(lambda: attempts.count("flaky") == 3 and attempts.count("again") == 2, what="retries done")
    q.shutdown()
    await asyncio.wait_for(workers, 2)
    assert attempts.count("flaky") == 3
    assert attempts.count("again") == 2
    assert q.num_requeues("flaky") == 0, "success forgets the failure count"


async def test_a_cancelled_getter_does_not_strand_a_key() -> None:
    q: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("k")  # wakes the first getter...
    first.cancel()  # ...which is cancelled before it runs: the key must reach the second one
    assert await asyncio.wait_for(second, 1) == "k"
    with pytest.raises(asyncio.CancelledError):
        await first
