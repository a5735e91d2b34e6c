"""Without the embedded admission hooks (cluster mode, no webhooks) the controllers still hold jobs
back and keep queues and flavors protected by their finalizer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.waiting import eventually

from pykueue.controllers.config import KueueConfig
from pykueue.controllers.resource_names import CLUSTER_QUEUES, JOBS, RESOURCE_FLAVORS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, make_job

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
            rf["metadata"].get("finalizers") or []
        )

    await eventually(protected, what="finalizers added without a webhook")


async def test_an_unsuspended_job_is_stopped_until_admitted(bare: Env) -> None:
    await bare.setup_queues(
        make_flavor("f").obj(),
        make_cluster_queue("cq").quota("f", "cpu", 4).obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    await bare.create(JOBS, make_job("first", NS, queue="lq", cpu="3"))
    second = await bare.create(JOBS, make_job("second", NS, queue="lq", cpu="3"))
    assert second["spec"]["suspend"] is False, "no webhook suspended it"

    async def states() -> Any:
        # Both jobs start unsuspended, so "one suspended" alone can hold for a moment before any
        # admission; wait for the settled state: the running job is the admitted one.
        jobs = {n: await bare.get(JOBS, n, NS) for n in ("first", "second")}
        wls = {n: await bare.workload_of_job(n, NS) for n in ("first", "second")}
        running = sorted(n for n, j in jobs.items() if j and not j["spec"]["suspend"])
        admitted = sorted(n for n, w in wls.items() if w and cond(w, "Admitted").get("status") == "True")
        return running if len(running) == 1 and running == admitted else None

    await eventually(states, what="one job runs, the other was stopped and waits")
