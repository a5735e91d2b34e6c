"""Suite-wide fixtures.

Every test ends with a garbage collection, so an object a test leaks (an unclosed socket or
transport) is reported against that test, not against whichever later test happens to trigger
the collector.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _collect_leaks_here() -> Iterator[None]:
    yield
    gc.collect()
