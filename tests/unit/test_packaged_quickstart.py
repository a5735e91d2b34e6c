"""The quickstart shipped inside the package (used by ``pykueue demo``) is the shared one, unchanged."""

from __future__ import annotations

import pytest
from tests.e2e.harness import PACKAGED_QUICKSTART, SHARED


@pytest.mark.parametrize("name", ["cluster-queue.yaml", "sample-job.yaml"])
def test_packaged_quickstart_matches_shared(name: str) -> None:
    shared = SHARED / "examples" / "quickstart" / name
    if not shared.exists():
        pytest.skip("../shared is not beside this checkout")
    assert (PACKAGED_QUICKSTART / name).read_text() == shared.read_text()
