"""Leader election on a Lease: one leader, takeover after expiry, loss before a successor can lead."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.unit.client.conftest import make_registry

from pykueue.api.meta.errors import ApiError
from pykueue.client import LocalClient
from pykueue.client.group_version_resource import LEASES, NAMESPACES
from pykueue.client.leader import LeaderElector, LeaseConfig

FAST = {"lease_duration": 1.5, "renew_deadline": 1.0, "retry_period": 0.2}


@pytest.fixture
async def client() -> AsyncIterator[LocalClient]:
    registry = make_registry()
    c = LocalClient(registry)
    await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "pykueue-system"}})
    try:
        yield c
    finally:
        await c.close()


def lease_config(identity: str, **timings: float) -> LeaseConfig:
    return LeaseConfig(
        name="pykueue-controller-leader", namespace="pykueue-system", identity=identity, **{**FAST, **timings}
    )


async def lease(client: LocalClient) -> dict[str, Any]:
    return (await client.get(LEASES, "pykueue-controller-leader", "pykueue-system"))["spec"]


class Flaky(LocalClient):
    """A client whose Lease writes fail once ``broken`` is set (a partitioned leader)."""

    broken = False

    async def update(self, res: Any, obj: dict[str, Any], *, subresource: str = "") -> dict[str, Any]:
        if self.broken and res == LEASES:
            raise ApiError("connection refused")
        return await super().update(res, obj, subresource=subresource)


def test_timings_are_checked_as_client_go_does() -> None:
    assert lease_config("a").problem() is None
    assert "greater than renewDeadline" in str(lease_config("a", lease_duration=1.0).problem())
    assert "retryPeriod" in str(lease_config("a", retry_period=0.9).problem())


async def test_one_leads_and_the_other_waits_then_takes_over(client: LocalClient) -> None:
    a = LeaderElector(client, lease_config("a"), on_lost=lambda: None)
    b = LeaderElector(client, lease_config("b"), on_lost=lambda: None)
    await asyncio.wait_for(a.acquire(), 10)
    spec = await lease(client)
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 2
    assert spec["leaseTransitions"] == 0
    renewing = asyncio.create_task(a.renew_until_lost())
    waiting = asyncio.create_task(b.acquire())
    before = spec["renewTime"]
    while (await lease(client))["renewTime"] == before:  # noqa: ASYNC110  # a renews while b keeps trying
        await asyncio.sleep(0.05)
    assert not waiting.done()
    assert (await lease(client))["holderIdentity"] == "a"
    renewing.cancel()  # a dies without releasing (kill -9): b must wait out the lease duration
    with contextlib.suppress(asyncio.CancelledError):
        await renewing
    await asyncio.wait_for(waiting, 10)
    spec = await lease(client)
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1
    assert b.is_leader


async def test_release_lets_the_next_lead_at_once(client: LocalClient) -> None:
    a = LeaderElector(client, lease_config("a", lease_duration=60.0, renew_deadline=40.0), on_lost=lambda: None)
    await a.acquire()
    await a.release()
    assert (await lease(client))["holderIdentity"] == ""
    b = LeaderElector(client, lease_config("b", lease_duration=60.0, renew_deadline=40.0), on_lost=lambda: None)
    await asyncio.wait_for(b.acquire(), 5)  # far less than the 60 s lease: the release let it in
    assert (await lease(client))["holderIdentity"] == "b"


async def test_a_leader_that_cannot_renew_stops_before_another_leads() -> None:
    registry = make_registry()
    flaky, other = Flaky(registry), LocalClient(registry)
    await other.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "pykueue-system"}})
    order: list[str] = []
    a = LeaderElector(flaky, lease_config("a"), on_lost=lambda: order.append("a lost"))
    b = LeaderElector(other, lease_config("b"), on_lost=lambda: None)
    await a.acquire()
    renewing = asyncio.create_task(a.renew_until_lost())
    waiting = asyncio.create_task(b.acquire())
    waiting.add_done_callback(lambda _: order.append("b leads"))
    flaky.broken = True
    await asyncio.wait_for(renewing, 10)
    await asyncio.wait_for(waiting, 10)
    assert order == ["a lost", "b leads"]
    assert not a.is_leader
    assert b.is_leader
    await flaky.close()
    await other.close()
