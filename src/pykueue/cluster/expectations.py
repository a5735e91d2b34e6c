"""Controller expectations: don't act twice on a cache that has not caught up with our own writes.

Owned by ``cluster/``; used by the Job and JobSet controllers (client-go's ControllerExpectations,
by name instead of by count). After creating or deleting children, a controller records their
names; until the informer shows every creation and every deletion (or a timeout passes), the
controller does not create or delete more, so a slow watch never causes duplicate pods.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Expectations"]

TIMEOUT = 30.0
"""Seconds after which an unmet expectation is dropped (a lost event must not wedge a controller)."""


@dataclass(slots=True)
class _Pending:
    adds: set[str] = field(default_factory=set)
    deletes: set[str] = field(default_factory=set)
    deadline: float = 0.0


class Expectations:
    def __init__(self) -> None:
        self._pending: dict[str, _Pending] = {}

    def expect(self, key: str, *, adds: Iterable[str] = (), deletes: Iterable[str] = ()) -> None:
        entry = self._pending.setdefault(key, _Pending())
        entry.adds.update(adds)
        entry.deletes.update(deletes)
        entry.deadline = time.monotonic() + TIMEOUT

    def observed_add(self, key: str, name: str) -> None:
        entry = self._pending.get(key)
        if entry is not None:
            entry.adds.discard(name)

    def expects_delete(self, key: str, name: str) -> bool:
        """True when ``name`` is a deletion this controller made and has not seen yet."""
        entry = self._pending.get(key)
        return entry is not None and name in entry.deletes

    def observed_delete(self, key: str, name: str) -> None:
        entry = self._pending.get(key)
        if entry is not None:
            entry.deletes.discard(name)

    def satisfied(self, key: str, present: set[str]) -> bool:
        """True when every expected child is in ``present`` and every expected deletion is not."""
        entry = self._pending.get(key)
        if entry is None:
            return True
        entry.adds &= {n for n in entry.adds if n not in present}
        entry.deletes &= present
        if (not entry.adds and not entry.deletes) or time.monotonic() > entry.deadline:
            del self._pending[key]
            return True
        return False

    def forget(self, key: str) -> None:
        self._pending.pop(key, None)
