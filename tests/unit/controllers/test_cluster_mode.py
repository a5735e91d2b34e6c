"""Without the embedded admission hooks (cluster mode, no webhooks) the controllers still hold jobs
back and keep queues and flavors protected by their finalizer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from pykueue.controllers.config import KueueConfig
from pykueue.controllers.resources import CLUSTER_QUEUES, JOBS, RESOURCE_FLAVORS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, eventually, make_job

NS = "team-a"
FINALIZER = "kueue.x-k8s.io/resource-in-use"


@pytest.fixture
async def bare() -> AsyncIterator[Env]:
    env = Env(KueueConfig(), hooks=False)
    await env.start()
    try:
        yield env
    finally:
        await env.stop()


async def test_finalizers_are_added_by_the_controllers(bare: Env) -> None:
    cq = await bare.create(CLUSTER_QUEUES, make_cluster_queue("cq").quota("f", "cpu", 1).obj())
    rf = await bare.create(RESOURCE_FLAVORS, make_flavor("f").obj())
    assert FINALIZER not in (cq["metadata"].get("finalizers") or [])
    assert FINALIZER not in (rf["metadata"].get("finalizers") or [])

    async def protected() -> bool:
        cq = await bare.get(CLUSTER_QUEUES, "cq")
        rf = await bare.get(RESOURCE_FLAVORS, "f")
        return FINALIZER in (cq["metadata"].get("finalizers") or []) and FINALIZER in (
            rf["metadata"].get("finalizers") or [])

    await eventually(protected, what="finalizers added without a webhook")


async def test_an_unsuspended_job_is_stopped_until_admitted(bare: Env) -> None:
    await bare.setup_queues(make_flavor("f").obj(), make_cluster_queue("cq").quota("f", "cpu", 4).obj(),
                            make_local_queue("lq", NS, "cq").obj())
    await bare.create(JOBS, make_job("first", NS, queue="lq", cpu="3"))
    second = await bare.create(JOBS, make_job("second", NS, queue="lq", cpu="3"))
    assert second["spec"]["suspend"] is False, "no webhook suspended it"

    async def states() -> Any:
        jobs = [await bare.get(JOBS, n, NS) for n in ("first", "second")]
        suspended = sorted(bool(j["spec"]["suspend"]) for j in jobs if j)
        return suspended if suspended == [False, True] else None

    await eventually(states, what="one job runs, the other was stopped and waits")
    wls = [await bare.workload_of_job(n, NS) for n in ("first", "second")]
    assert sorted(cond(w, "Admitted").get("status") == "True" for w in wls) == [False, True]
