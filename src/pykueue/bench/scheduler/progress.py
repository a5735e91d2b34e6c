"""The live progress line of ``pykueue bench scheduler`` in real time.

Owns :class:`ProgressLine`: every ``interval`` seconds it rewrites one line on a stream
(``admitted 1204 · pending 5310 · finished 880 · elapsed 12.5 s``) from counts the driver keeps
anyway, and erases it when the run ends, so the report that follows starts on a clean line. It is
on when the stream is a terminal (CI logs stay clean), or when asked for (``--progress``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Counts", "ProgressLine", "wanted"]

Counts = tuple[int, int, int]
"""(admitted now, pending, finished)."""


def wanted(flag: bool | None, stream: TextIO) -> bool:
    """``--progress`` / ``--no-progress`` when given, else only on a terminal."""
    if flag is not None:
        return flag
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def render(counts: Counts, elapsed: float) -> str:
    admitted, pending, finished = counts
    return f"admitted {admitted} · pending {pending} · finished {finished} · elapsed {elapsed:.1f} s"


class ProgressLine:
    """Rewrites one status line on ``stream`` until :meth:`stop`."""

    def __init__(self, stream: TextIO, counts: Callable[[], Counts], *, interval: float = 0.5) -> None:
        self._stream = stream
        self._counts = counts
        self._interval = interval
        self._started = time.monotonic()
        self._task: asyncio.Task[None] | None = None
        self.lines = 0
        """How many times the line was drawn."""

    def start(self) -> None:
        self._started = time.monotonic()
        self._task = asyncio.create_task(self._run(), name="bench-progress")

    def draw(self) -> None:
        self._stream.write("\r\x1b[K" + render(self._counts(), time.monotonic() - self._started))
        self._stream.flush()
        self.lines += 1

    async def _run(self) -> None:
        while True:
            self.draw()
            await asyncio.sleep(self._interval)

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
        self._stream.write("\r\x1b[K")
        self._stream.flush()
