"""The process's garbage-collector policy while ``pykueue up`` serves: freeze, then sweep rarely.

Why: the server's memory is mostly Kubernetes objects as plain JSON dicts (the store's and the
informers' caches, the engine's records) — acyclic data that reference counting frees on its own.
CPython's cyclic collector still rescans all of it: in the full-size scheduler benchmark, 62
full collections took 15.9 s of the server's 85 s of CPU (≈ 250 ms pauses at 1 GB). ``gc.freeze()``
moves every object alive now out of the collector's view (refcounting still frees them), so later
collections look only at what was allocated since.

The cost of freezing is that a reference cycle alive at a freeze and dropped later is not collected
until the next sweep; so every ``sweep_every`` seconds everything is unfrozen, collected once and
frozen again — one full pause per sweep instead of one every few seconds under load.

Freezing is O(1) (the collector's lists are spliced) and resets the young count, so it runs every
second: young collections then almost never start. They used to, every ~0.5 s while the scheduler
benchmark drained (20-30 ms each, ~50,000 young objects scanned, 0 found: the server's new objects
are decoded JSON and request state, not cycles), 5-7 % of the CPU; a whole baseline run leaves
~2,000 cyclic objects for the sweep to find.

Who calls it: ``cli/up.py`` (a process-wide choice, made by the process, never by a library layer).
"""

from __future__ import annotations

import asyncio
import gc

__all__ = ["FREEZE_EVERY", "SWEEP_EVERY", "YOUNG_THRESHOLD", "run_gc_policy"]

FREEZE_EVERY = 1.0
SWEEP_EVERY = 600.0
YOUNG_THRESHOLD = 200_000
"""Net allocations between young collections (CPython's default 700). With a freeze every second
this is a safety valve for a burst that allocates more than this within a second; at 700 (or the
former 20,000) the collector rescanned thousands of live request and cache objects to find nothing."""


async def run_gc_policy(freeze_every: float = FREEZE_EVERY, sweep_every: float = SWEEP_EVERY) -> None:
    """Freeze survivors every ``freeze_every`` s; unfreeze, collect and refreeze every ``sweep_every`` s."""
    loop = asyncio.get_running_loop()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    next_sweep = loop.time() + sweep_every
    while True:
        await asyncio.sleep(freeze_every)
        if loop.time() >= next_sweep:
            gc.unfreeze()
            gc.collect()
            next_sweep = loop.time() + sweep_every
        gc.freeze()
