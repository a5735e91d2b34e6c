"""Watch fan-out: many watchers of different versions and formats, bursts of writes, and warm-up."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from pykueue.api.meta.clock import ManualClock
from pykueue.api.schema.lazy_schemas import forget_built_schemas, schemas_built
from pykueue.apiserver.app import warm_up
from pykueue.registry import Registry
from pykueue.store import Store

from .conftest import CQ_PATH, Api, cluster_queue

_PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


async def _watch(api: Api, path: str, count: int, accept: str = "application/json") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    async with api.session.get(api.url + path, headers={"Accept": accept}) as response:
        assert response.status == 200
        async for line in response.content:
            if line.strip():
                out.append(orjson.loads(line))
                if len(out) == count:
                    break
    return out


async def test_every_watcher_gets_every_burst_event_once_in_order_in_its_own_format(api: Api) -> None:
    _, listed, _ = await api.request("GET", CQ_PATH)
    rv = listed["metadata"]["resourceVersion"]
    names = [f"cq-{i}" for i in range(40)]
    watch = f"?watch=true&resourceVersion={rv}"
    v1beta1 = "/apis/kueue.x-k8s.io/v1beta1/clusterqueues"
    tasks = [
        asyncio.create_task(asyncio.wait_for(_watch(api, path, len(names) * 2, accept), 20))
        for path, accept in [
            (CQ_PATH + watch, "application/json"),
            (CQ_PATH + watch, "application/json"),
            (v1beta1 + watch, "application/json"),
            (CQ_PATH + watch, _PARTIAL),
        ]
    ]
    # The watches start from a resourceVersion, so writes made before they connect are replayed.
    # Concurrent writes: several are flushed in one group commit, so watchers receive batches.
    await asyncio.gather(*(api.request("POST", CQ_PATH, cluster_queue(n)) for n in names))
    await asyncio.gather(
        *(
            api.request(
                "PATCH", f"{CQ_PATH}/{n}", {"spec": {"cohortName": "team"}}, content_type="application/merge-patch+json"
            )
            for n in names
        )
    )
    plain, again, old, partial = await asyncio.gather(*tasks)
    for events in (plain, again, old, partial):
        versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
        assert versions == sorted(set(versions))
        assert sorted(e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED") == sorted(names)
        assert sum(e["type"] == "MODIFIED" for e in events) == len(names)
    assert plain == again
    assert {e["object"]["apiVersion"] for e in plain} == {"kueue.x-k8s.io/v1beta2"}
    assert {e["object"]["apiVersion"] for e in old} == {"kueue.x-k8s.io/v1beta1"}
    assert all(e["object"]["spec"]["cohort"] == "team" for e in old if e["type"] == "MODIFIED")
    assert {e["object"]["kind"] for e in partial} == {"PartialObjectMetadata"}
    assert all("spec" not in e["object"] for e in partial)


def test_warm_up_builds_every_schema_before_serving() -> None:
    registry = Registry(Store(), clock=ManualClock(1_800_000_000.0))
    forget_built_schemas()  # schemas are rebuilt on demand: clearing only costs time
    warm_up(registry)
    built = schemas_built()
    for kind in registry.kinds():
        for version in kind.versions:
            assert isinstance(kind.schema[version], dict)
    assert schemas_built() == built
