"""Client-side rate limiting: client-go's token bucket (``clientConnection.qps`` / ``burst``).

Owned by ``client/``; :class:`~pykueue.client.http.HttpClient` awaits :meth:`TokenBucket.acquire`
before each request when a QPS is configured (``pykueue controller``); watches are not limited,
as in client-go. The bucket holds at most ``burst`` tokens and gains ``qps`` per second; a request
takes one, and when none is left it reserves the next and sleeps until it is due, so waiting
requests go out in order at ``qps``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"qps must be positive and burst at least 1 (got qps={qps}, burst={burst})")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def reserve(self) -> float:
        """Take a token; returns how many seconds to wait before using it (0: at once)."""
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def acquire(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)
