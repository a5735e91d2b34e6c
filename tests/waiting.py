"""Waiting for a condition in tests: the one ``eventually`` helper (and its twins for blocking code
and for "stays true"), so no test sleeps a fixed time and then asserts.

``eventually(check)`` calls ``check`` (plain or async) until it returns something truthy and returns
that value. The bound (``within``, seconds) is a bound that only stops a hung test: it is never what a test asserts, so
a loaded machine makes a test slower, not red. When the bound is reached the failure names what was
awaited and the last value ``check`` returned.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, overload

__all__ = ["ConditionNotMet", "eventually", "eventually_blocking", "stays_true"]

T = TypeVar("T")


class ConditionNotMet(AssertionError):
    """The awaited condition did not hold before the deadline."""


def _describe(check: object, what: str) -> str:
    return what or getattr(check, "__qualname__", repr(check))


def _failure(check: object, what: str, within: float, last: object) -> ConditionNotMet:
    return ConditionNotMet(f"never held within {within:g}s: {_describe(check, what)}; last value: {last!r}")


@overload
async def eventually(
    check: Callable[[], Awaitable[T | None]], *, within: float = 30.0, interval: float = 0.01, what: str = ""
) -> T: ...


@overload
async def eventually(
    check: Callable[[], T | None], *, within: float = 30.0, interval: float = 0.01, what: str = ""
) -> T: ...


async def eventually(
    check: Callable[[], object], *, within: float = 30.0, interval: float = 0.01, what: str = ""
) -> object:
    """Await until ``check()`` (sync or async) is truthy; return its value (never None, so its type
    drops the ``None`` of ``check``'s)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        result = check()
        last = await result if inspect.isawaitable(result) else result
        if last:
            return last
        if loop.time() >= deadline:
            raise _failure(check, what, within, last)
        await asyncio.sleep(interval)


def eventually_blocking(
    check: Callable[[], T | None], *, within: float = 60.0, interval: float = 0.3, what: str = ""
) -> T:
    """:func:`eventually` for code that is not async (end-to-end tests driving kubectl)."""
    deadline = time.monotonic() + within
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise _failure(check, what, within, last)
        time.sleep(interval)


async def stays_true(
    check: Callable[[], object | Awaitable[object]], *, settle: float = 0.3, interval: float = 0.02, what: str = ""
) -> None:
    """Assert ``check()`` holds at every look for ``settle`` seconds (for "stays pending" rules)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settle
    while loop.time() < deadline:
        result = check()
        value = await result if inspect.isawaitable(result) else result
        assert value, f"stopped holding: {_describe(check, what)}; value: {value!r}"
        await asyncio.sleep(interval)
