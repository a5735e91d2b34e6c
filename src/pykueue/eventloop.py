"""The event loop pykueue's long-running processes run on: the stdlib's, or uvloop on request.

``pykueue up``, its controller process and the real-time scheduler benchmark start their loop here.
``PYKUEUE_LOOP`` chooses: ``asyncio`` (the default: the stdlib loop), ``uvloop`` (an error if it is
missing) or ``auto`` (uvloop if it can be imported, the stdlib loop if not). Child processes inherit
the variable, so one setting covers a server and the processes it starts. The default stays the
stdlib loop because uvloop was not measurably faster here (``docs/performance.md``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["ENV", "EventLoopError", "loop_factory", "loop_name", "run"]

ENV = "PYKUEUE_LOOP"
_CHOICES = ("asyncio", "uvloop", "auto")
T = TypeVar("T")


class EventLoopError(ValueError):
    """``PYKUEUE_LOOP`` names no loop, or names uvloop where it is not installed."""


def loop_factory(choice: str | None = None) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory for ``choice`` (default: ``$PYKUEUE_LOOP`` or ``asyncio``); ``None`` is the stdlib loop."""
    choice = (choice if choice is not None else os.environ.get(ENV, "")).strip().lower() or "asyncio"
    if choice not in _CHOICES:
        raise EventLoopError(f"{ENV}={choice!r}: expected one of {', '.join(_CHOICES)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise EventLoopError(f"{ENV}=uvloop but uvloop is not installed (pip install uvloop)") from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def loop_name(choice: str | None = None) -> str:
    """The name of the loop :func:`run` would start: "uvloop" or "asyncio"."""
    return "asyncio" if loop_factory(choice) is None else "uvloop"


def run(main: Coroutine[Any, Any, T], *, choice: str | None = None) -> T:
    """``asyncio.run(main)`` on the chosen loop (raises :class:`EventLoopError` for a bad choice)."""
    try:
        factory = loop_factory(choice)
    except EventLoopError:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
