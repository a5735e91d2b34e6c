"""The one ``eventually`` helper: returns the first truthy value, waits for async checks too, and when
the deadline passes fails with what was awaited and the last value seen."""

from __future__ import annotations

import itertools

import pytest
from tests.waiting import ConditionNotMet, eventually, eventually_blocking, stays_true


async def test_returns_the_first_truthy_value() -> None:
    calls = itertools.count()
    assert await eventually(lambda: next(calls) >= 3 and "ready") == "ready"


async def test_awaits_an_async_check() -> None:
    calls = itertools.count()

    async def check() -> dict[str, int] | None:
        n = next(calls)
        return {"n": n} if n == 2 else None

    assert await eventually(check) == {"n": 2}


async def test_the_failure_names_what_was_awaited_and_the_last_value() -> None:
    queue = [3, 1]
    with pytest.raises(ConditionNotMet, match=r"never held within 0\.05s: the queue drained; last value: False"):
        await eventually(lambda: queue == [], within=0.05, what="the queue drained")


async def test_a_check_without_a_name_is_named_by_its_function() -> None:
    def nothing_yet() -> None:
        return None

    with pytest.raises(ConditionNotMet, match="nothing_yet; last value: None"):
        await eventually(nothing_yet, within=0.01)


def test_the_blocking_twin_behaves_the_same() -> None:
    calls = itertools.count()
    assert eventually_blocking(lambda: next(calls) == 2, interval=0.001) is True
    with pytest.raises(ConditionNotMet, match=r"never held within 0\.01s: never; last value: 0"):
        eventually_blocking(lambda: 0, within=0.01, interval=0.001, what="never")


async def test_stays_true_fails_as_soon_as_the_condition_breaks() -> None:
    values = iter([True, True, False])
    with pytest.raises(AssertionError, match="stopped holding: flag; value: False"):
        await stays_true(lambda: next(values, True), settle=5.0, interval=0.001, what="flag")
    await stays_true(lambda: True, settle=0.01, interval=0.001)
