"""Injectable time. Every layer reads time through a ``Clock`` so tests and the simulator are deterministic.

Lives in the lowest layer because the scheduler (which may import only ``api/``) needs it too.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "ManualClock", "SystemClock", "format_time", "parse_time"]


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class ManualClock:
    """A clock that only moves when told to (tests, the virtual-time simulator)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time never goes backwards")
        self._now += seconds

    def set(self, when: float) -> None:
        if when < self._now:
            raise ValueError("time never goes backwards")
        self._now = when


_LAST_FORMATTED: tuple[int, str] = (0, "1970-01-01T00:00:00Z")
"""The latest (second, text) formatted: a busy server stamps thousands of writes within one second,
and ``strftime`` costs ~2.5 us a call. One tuple, replaced whole, so readers on any thread see a
consistent pair."""


def format_time(seconds: float) -> str:
    """RFC 3339 with second precision, as Kubernetes writes timestamps ("2026-11-30T09:30:00Z")."""
    global _LAST_FORMATTED
    second = int(seconds)
    last = _LAST_FORMATTED
    if last[0] == second:
        return last[1]
    text = datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _LAST_FORMATTED = (second, text)
    return text


def parse_time(text: str) -> float:
    """Parse a Kubernetes timestamp (RFC 3339, optional fraction) into epoch seconds."""
    cleaned = text.strip().replace("Z", "+00:00")
    return datetime.fromisoformat(cleaned).timestamp()
