"""Contract tests: the same cases against LocalClient and HttpClient (over the real API server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pykueue.api.meta.errors import AlreadyExists, BadRequest, Conflict, Gone, Invalid, NotFound
from pykueue.client import Client, GroupVersionResource

from .conftest import make_registry, open_client

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
PODS = GroupVersionResource("", "v1", "pods")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")


def cm(name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {}}


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


async def test_create_then_get_returns_the_stored_object(client: Client) -> None:
    created = await client.create(CONFIGMAPS, cm("a", {"k": "v"}))
    assert created["metadata"]["uid"]
    assert created["metadata"]["resourceVersion"]
    got = await client.get(CONFIGMAPS, "a", "default")
    assert got["data"] == {"k": "v"}
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    assert got["kind"] == "ConfigMap"
    assert got["apiVersion"] == "v1"


async def test_get_missing_raises_not_found(client: Client) -> None:
    with pytest.raises(NotFound) as info:
        await client.get(CONFIGMAPS, "nope", "default")
    assert "nope" in info.value.message


async def test_create_twice_raises_already_exists(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("dup"))
    with pytest.raises(AlreadyExists):
        await client.create(CONFIGMAPS, cm("dup"))


async def test_namespace_argument_wins_over_missing_metadata_namespace(client: Client) -> None:
    body = cm("ns-arg")
    del body["metadata"]["namespace"]
    created = await client.create(CONFIGMAPS, body, "kube-public")
    assert created["metadata"]["namespace"] == "kube-public"


async def test_invalid_object_raises_invalid_with_causes(client: Client) -> None:
    bad = pod("bad")
    bad["spec"]["containers"] = []
    with pytest.raises(Invalid) as info:
        await client.create(PODS, bad)
    assert info.value.code == 422
    assert any("containers" in (c.get("field") or "") for c in (info.value.details or {}).get("causes", []))


async def test_update_with_stale_resource_version_conflicts(client: Client) -> None:
    created = await client.create(CONFIGMAPS, cm("u", {"n": "1"}))
    fresh = dict(created, data={"n": "2"})
    updated = await client.update(CONFIGMAPS, fresh)
    assert updated["data"] == {"n": "2"}
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    with pytest.raises(Conflict):
        await client.update(CONFIGMAPS, dict(created, data={"n": "3"}))


async def test_update_status_subresource_ignores_spec_and_keeps_status(client: Client) -> None:
    created = await client.create(PODS, pod("s"))
    body = dict(created, status={"phase": "Running"})
    body["spec"] = dict(created["spec"], nodeName="elsewhere")
    updated = await client.update(PODS, body, subresource="status")
    assert updated["status"]["phase"] == "Running"
    assert not updated["spec"].get("nodeName")


async def test_patch_merge_json_and_strategic(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("p", {"a": "1", "b": "2"}))
    merged = await client.patch(CONFIGMAPS, "p", {"data": {"a": None, "c": "3"}}, namespace="default")
    assert merged["data"] == {"b": "2", "c": "3"}
    jsonp = await client.patch(
        CONFIGMAPS, "p", [{"op": "replace", "path": "/data/b", "value": "20"}], namespace="default", patch_type="json"
    )
    assert jsonp["data"]["b"] == "20"
    await client.create(PODS, pod("sp"))
    strategic = await client.patch(
        PODS,
        "sp",
        {"spec": {"containers": [{"name": "c", "image": "alpine"}]}},
        namespace="default",
        patch_type="strategic",
    )
    assert [c["image"] for c in strategic["spec"]["containers"]] == ["alpine"]


async def test_patch_unknown_type_is_a_bad_request(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("pt"))
    with pytest.raises(BadRequest):
        await client.patch(CONFIGMAPS, "pt", {}, namespace="default", patch_type="yaml")


async def test_apply_creates_and_conflicts_between_managers_unless_forced(client: Client) -> None:
    applied = await client.patch(
        CONFIGMAPS, "ap", cm("ap", {"owner": "one"}), namespace="default", patch_type="apply", field_manager="one"
    )
    assert applied["data"] == {"owner": "one"}
    with pytest.raises(Conflict):
        await client.patch(
            CONFIGMAPS, "ap", cm("ap", {"owner": "two"}), namespace="default", patch_type="apply", field_manager="two"
        )
    forced = await client.patch(
        CONFIGMAPS,
        "ap",
        cm("ap", {"owner": "two"}),
        namespace="default",
        patch_type="apply",
        field_manager="two",
        force=True,
    )
    assert forced["data"] == {"owner": "two"}


async def test_delete_removes_and_missing_delete_raises_not_found(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("d"))
    await client.delete(CONFIGMAPS, "d", "default")
    with pytest.raises(NotFound):
        await client.get(CONFIGMAPS, "d", "default")
    with pytest.raises(NotFound):
        await client.delete(CONFIGMAPS, "d", "default")


async def test_list_filters_by_label_and_field_and_reports_resource_version(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("l1", labels={"team": "a"}))
    await client.create(CONFIGMAPS, cm("l2", labels={"team": "b"}))
    items, rv = await client.list(CONFIGMAPS, "default", label_selector="team=a")
    assert [i["metadata"]["name"] for i in items] == ["l1"]
    assert all(i["kind"] == "ConfigMap" and i["apiVersion"] == "v1" for i in items)
    assert int(rv) >= int(items[0]["metadata"]["resourceVersion"])
    by_field, _ = await client.list(CONFIGMAPS, "default", field_selector="metadata.name=l2")
    assert [i["metadata"]["name"] for i in by_field] == ["l2"]


async def test_cluster_scoped_list(client: Client) -> None:
    items, _ = await client.list(NAMESPACES)
    assert "default" in {i["metadata"]["name"] for i in items}


async def _collect(client: Client, count: int, **kwargs: Any) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    async for kind, obj in client.watch(CONFIGMAPS, "default", **kwargs):
        seen.append((kind, obj["metadata"]["name"]))
        if len(seen) == count:
            break
    return seen


async def test_watch_from_resource_version_sees_changes_in_order(client: Client) -> None:
    _, rv = await client.list(CONFIGMAPS, "default")
    watcher = asyncio.create_task(_collect(client, 3, resource_version=rv))  # from rv: nothing is missed
    await client.create(CONFIGMAPS, cm("w", {"x": "1"}))
    await client.patch(CONFIGMAPS, "w", {"data": {"x": "2"}}, namespace="default")
    await client.delete(CONFIGMAPS, "w", "default")
    assert await asyncio.wait_for(watcher, 10) == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


async def test_watch_resumes_after_a_resource_version_with_the_backlog(client: Client) -> None:
    _, rv = await client.list(CONFIGMAPS, "default")
    await client.create(CONFIGMAPS, cm("b1"))
    await client.create(CONFIGMAPS, cm("b2"))
    assert await asyncio.wait_for(_collect(client, 2, resource_version=rv), 10) == [("ADDED", "b1"), ("ADDED", "b2")]


async def test_watch_without_resource_version_starts_with_current_objects(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("e1"))
    assert await asyncio.wait_for(_collect(client, 1), 10) == [("ADDED", "e1")]


async def test_watch_label_selector_only_sees_matching_objects(client: Client) -> None:
    _, rv = await client.list(CONFIGMAPS, "default")
    watcher = asyncio.create_task(_collect(client, 1, resource_version=rv, label_selector="pick=yes"))
    await client.create(CONFIGMAPS, cm("other", labels={"pick": "no"}))
    await client.create(CONFIGMAPS, cm("mine", labels={"pick": "yes"}))
    assert await asyncio.wait_for(watcher, 10) == [("ADDED", "mine")]


async def test_watch_ends_after_timeout_seconds(client: Client) -> None:
    _, rv = await client.list(CONFIGMAPS, "default")
    events = [e async for e in client.watch(CONFIGMAPS, "default", resource_version=rv, timeout_seconds=1)]
    assert events == []


@pytest.mark.parametrize("kind", ["local", "http"])
async def test_watch_from_a_compacted_resource_version_raises_gone(kind: str) -> None:
    registry = make_registry(compaction_window=3)
    async with open_client(kind, registry) as client:
        _, rv = await client.list(CONFIGMAPS, "default")
        for i in range(10):
            await client.create(CONFIGMAPS, cm(f"g{i}"))
        with pytest.raises(Gone):
            async for _ in client.watch(CONFIGMAPS, "default", resource_version=rv):
                pass


@pytest.mark.parametrize("kind", ["local", "http"])
async def test_bookmarks_move_a_selective_watch_forward_when_asked(kind: str) -> None:
    registry = make_registry()
    async with open_client(kind, registry, bookmark_interval=0.2) as client:
        _, rv = await client.list(CONFIGMAPS, "default")
        created = await client.create(CONFIGMAPS, cm("unseen", labels={"pick": "no"}))
        events = [
            (k, o)
            async for k, o in client.watch(
                CONFIGMAPS,
                "default",
                resource_version=rv,
                label_selector="pick=yes",
                allow_bookmarks=True,
                timeout_seconds=2,
            )
        ]
        assert events, "a BOOKMARK is expected"
        assert {k for k, _ in events} == {"BOOKMARK"}
        newest = max(int(o["metadata"]["resourceVersion"]) for _, o in events)
        assert newest >= int(created["metadata"]["resourceVersion"])


@pytest.mark.parametrize("kind", ["local", "http"])
async def test_bookmarks_are_yielded_only_when_asked(kind: str) -> None:
    registry = make_registry()
    async with open_client(kind, registry) as client:
        _, rv = await client.list(CONFIGMAPS, "default")
        await client.create(CONFIGMAPS, cm("bm"))
        plain = [k async for k, _ in client.watch(CONFIGMAPS, "default", resource_version=rv, timeout_seconds=1)]
        assert plain == ["ADDED"]


async def test_watch_reports_objects_leaving_and_entering_a_label_selection(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("mover", labels={"pick": "yes"}))
    _, rv = await client.list(CONFIGMAPS, "default")
    seen: list[tuple[str, str]] = []

    async def collect() -> None:
        async for kind, obj in client.watch(CONFIGMAPS, "default", resource_version=rv, label_selector="pick=yes"):
            seen.append((kind, obj["metadata"]["labels"]["pick"]))
            if len(seen) == 2:
                return

    watcher = asyncio.create_task(collect())  # from rv: changes made before it connects are replayed
    await client.patch(CONFIGMAPS, "mover", {"metadata": {"labels": {"pick": "no"}}}, namespace="default")
    await client.patch(CONFIGMAPS, "mover", {"metadata": {"labels": {"pick": "yes"}}}, namespace="default")
    await asyncio.wait_for(watcher, 5)
    assert seen == [("DELETED", "no"), ("ADDED", "yes")]


async def test_watch_streams_objects_larger_than_a_network_chunk(client: Client) -> None:
    _, rv = await client.list(CONFIGMAPS, "default")
    big = "x" * 300_000
    await client.create(CONFIGMAPS, cm("big", {"blob": big}))
    async for kind, obj in client.watch(CONFIGMAPS, "default", resource_version=rv):
        assert kind == "ADDED"
        assert obj["data"]["blob"] == big
        break


async def test_list_returns_every_object_across_pages(client: Client, registry: Any) -> None:
    from pykueue.client import LocalClient
    from pykueue.client.http import LIST_PAGE_SIZE

    local = LocalClient(registry)
    for i in range(LIST_PAGE_SIZE + 7):
        await local.create(CONFIGMAPS, cm(f"page-{i:04d}"))
    items, rv = await client.list(CONFIGMAPS, "default")
    assert sorted(i["metadata"]["name"] for i in items) == [f"page-{i:04d}" for i in range(LIST_PAGE_SIZE + 7)]
    assert rv
