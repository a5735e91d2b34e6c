"""Clock-driven timers: never early, earliest registration wins, no growth with repeats."""

from __future__ import annotations

from pykueue.api.meta.clock import ManualClock
from pykueue.controllers.timers import Timers


def test_fires_at_the_earliest_due_time_once() -> None:
    clock = ManualClock(start=100.0)
    fired: list[str] = []
    timers: Timers[str] = Timers(clock, fired.append)
    timers.at(110.0, "a")
    for _ in range(50):
        timers.at(120.0, "a")  # later: no-op
    timers.at(105.0, "a")  # earlier: wins
    assert timers.pending() == 1
    clock.advance(4)
    assert timers.fire_due() == 0
    clock.advance(1)
    assert timers.fire_due() == 1
    clock.advance(100)
    assert timers.fire_due() == 0, "superseded registrations never fire"
    assert fired == ["a"]


def test_after_uses_the_injected_clock() -> None:
    clock = ManualClock(start=0.0)
    fired: list[int] = []
    timers: Timers[int] = Timers(clock, fired.append)
    timers.after(30, 1)
    timers.after(10, 2)
    clock.advance(10)
    timers.fire_due()
    assert fired == [2]
    clock.advance(20)
    timers.fire_due()
    assert fired == [2, 1]
