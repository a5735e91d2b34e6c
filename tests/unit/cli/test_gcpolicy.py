"""``pykueue up``'s collector policy: survivors are frozen, and a sweep still frees later cycles."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from collections.abc import Iterator

import pytest
from tests.waiting import eventually

from pykueue.cli.gcpolicy import YOUNG_THRESHOLD, run_gc_policy


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


@pytest.fixture
def restore_gc() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


async def test_survivors_are_frozen_and_a_sweep_frees_a_cycle_dropped_after_its_freeze(restore_gc: None) -> None:
    gc.unfreeze()
    node = _Node()
    alive = weakref.ref(node)
    policy = asyncio.create_task(run_gc_policy(freeze_every=0.02, sweep_every=0.3))
    try:
        await eventually(lambda: gc.get_freeze_count() > 0, what="a freeze")  # the cycle, alive until now, with it
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        del node
        gc.collect()
        assert alive() is not None  # frozen: an ordinary full collection cannot see it
        await eventually(lambda: alive() is None, what="the sweep unfroze, collected the cycle and froze again")
    finally:
        policy.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await policy
