"""Crash consistency: ``kill -9`` of ``pykueue up`` at random moments under a stream of writes.

Writers create and update ConfigMaps and ResourceFlavors (a Kueue kind) over HTTPS, one request at a
time per object, while the server is killed at a random moment; then it is restarted on the same data
dir, and, for every object ever written:
- an acknowledged write is there with the resourceVersion the server answered, unless the object's
  one later, unacknowledged write replaced it whole;
- nothing unacknowledged is half-applied: the object is absent (only if its create was never
  acknowledged) or holds exactly one of the bodies sent for it;
- resourceVersions never go backwards: a list after the restart is at or past every version seen;
- a watch from the last version seen before the kill resumes (events in order, after that version,
  including a write made after the restart), or gets 410 Gone, after which a list and a new watch do.
"""

from __future__ import annotations

import asyncio
import base64
import random
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml

from tests.e2e.harness import Pykueue

KILLS = 20
WRITERS = 6
CM = "/api/v1/namespaces/default/configmaps"
RF = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors"


@dataclass
class Acks:
    """The resourceVersions acknowledged in a round; ``enough`` is set at ``target`` of them."""

    target: int
    versions: list[int] = field(default_factory=list)
    enough: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, rv: int) -> None:
        self.versions.append(rv)
        if len(self.versions) >= self.target:
            self.enough.set()


@dataclass
class Tracked:
    """What the writer knows of one object: its durable state and the write in flight at the kill."""

    collection: str
    name: str
    state: tuple[str, str] | None = None
    """(marker, resourceVersion) of the last body known to be stored: acknowledged or seen after a restart."""
    in_flight: str | None = None
    """The marker of a write sent but not acknowledged when the server died."""
    sent: set[str] = field(default_factory=set)


def _body(obj: Tracked, marker: str) -> dict[str, Any]:
    if obj.collection == CM:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": obj.name}, "data": {"seq": marker}}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": obj.name},
        "spec": {"nodeLabels": {"seq": marker}},
    }


def _marker_of(obj: Tracked, stored: dict[str, Any]) -> str:
    """The one body this object holds (asserting that it is exactly one that was sent)."""
    payload = stored.get("data") if obj.collection == CM else stored.get("spec", {}).get("nodeLabels")
    assert isinstance(payload, dict), f"{obj.name}: half-applied body {stored}"
    assert set(payload) == {"seq"}, f"{obj.name}: half-applied body {stored}"
    marker = str(payload["seq"])
    assert marker in obj.sent, f"{obj.name}: holds {marker!r}, a body never sent"
    return marker


class Cluster:
    """A session against the current incarnation of the server (TLS and token from its kubeconfig)."""

    def __init__(self, server: Pykueue) -> None:
        config = yaml.safe_load(server.kubeconfig.read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        context = ssl.create_default_context(cadata=ca)
        self.url = server.url
        self.session = aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {server.token}"},
            connector=aiohttp.TCPConnector(ssl=context),
            timeout=aiohttp.ClientTimeout(total=30),
        )

    async def call(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> tuple[int, Any]:
        data = orjson.dumps(body) if body is not None else None
        async with self.session.request(
            method, self.url + path, data=data, headers={"Content-Type": content_type}
        ) as response:
            return response.status, orjson.loads(await response.read())

    async def close(self) -> None:
        await self.session.close()


async def _writer(cluster: Cluster, objects: list[Tracked], round_no: int, worker: int, acks: Acks) -> None:
    """Create and update objects one request at a time until the server dies."""
    rng = random.Random(round_no * 100 + worker)
    mine = [o for o in objects if o.state is not None and hash(o.name) % WRITERS == worker]
    count = 0
    while True:
        count += 1
        marker = f"{round_no}-{worker}-{count}"
        if not mine or rng.random() < 0.4:
            obj = Tracked(CM if rng.random() < 0.5 else RF, f"o-{round_no}-{worker}-{count}")
            objects.append(obj)
            mine.append(obj)
            method, path, body, ctype = "POST", obj.collection, _body(obj, marker), "application/json"
        else:
            obj = rng.choice(mine)
            patch = _body(obj, marker)
            method, path, ctype = "PATCH", f"{obj.collection}/{obj.name}", "application/merge-patch+json"
            body = {k: v for k, v in patch.items() if k in ("data", "spec")}
        obj.sent.add(marker)
        obj.in_flight = marker
        try:
            status, answer = await cluster.call(method, path, body, ctype)
        except (TimeoutError, aiohttp.ClientError, OSError):
            return  # the server died: this write stays unacknowledged
        assert status in (200, 201), f"{method} {path}: {status} {answer}"
        rv = answer["metadata"]["resourceVersion"]
        obj.state, obj.in_flight = (marker, rv), None
        acks.add(int(rv))


async def _check_objects(cluster: Cluster, objects: list[Tracked]) -> None:
    stored_by_name: dict[str, dict[str, Any]] = {}
    for collection in (CM, RF):
        status, listed = await cluster.call("GET", collection)
        assert status == 200, listed
        stored_by_name.update({o["metadata"]["name"]: o for o in listed["items"]})
    for obj in objects:
        stored = stored_by_name.get(obj.name)
        if stored is None:
            assert obj.state is None, f"{obj.name}: acknowledged write {obj.state} lost"
            obj.in_flight = None
            continue
        marker, rv = _marker_of(obj, stored), stored["metadata"]["resourceVersion"]
        if obj.state is not None and marker == obj.state[0]:
            assert rv == obj.state[1], f"{obj.name}: acknowledged at rv {obj.state[1]}, stored at {rv}"
        else:
            assert marker == obj.in_flight, f"{obj.name}: holds {marker}, neither {obj.state} nor the write in flight"
            assert obj.state is None or int(rv) > int(obj.state[1])
        obj.state, obj.in_flight = (marker, rv), None


async def _check_watch_resumes(cluster: Cluster, last_seen: int, probe: str) -> None:
    """A watch from ``last_seen`` delivers the probe write made after it opened (or answers 410)."""
    path = f"{CM}?watch=true&allowWatchBookmarks=true&resourceVersion={last_seen}"
    async with cluster.session.get(cluster.url + path) as response:
        assert response.status == 200, await response.text()
        status, _ = await cluster.call("POST", CM, {"metadata": {"name": probe}, "data": {"seq": "probe"}})
        assert status == 201
        previous = last_seen
        async for line in response.content:
            event = orjson.loads(line)
            if event["type"] == "ERROR":
                assert event["object"]["code"] == 410, event
                status, listed = await cluster.call("GET", CM)
                assert status == 200
                assert probe in {o["metadata"]["name"] for o in listed["items"]}
                return
            rv = int(event["object"]["metadata"]["resourceVersion"])
            assert rv >= previous, f"watch went backwards: {rv} after {previous}"
            previous = rv
            if event["type"] == "ADDED" and event["object"]["metadata"]["name"] == probe:
                return


async def test_acknowledged_writes_survive_kill_9_and_nothing_is_half_applied(
    tmp_path: Path, kueue_crds_file: Path
) -> None:
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--no-kueue"])
    rng = random.Random(18)
    objects: list[Tracked] = []
    highest = 0
    try:
        for round_no in range(KILLS + 1):
            server.start()
            if round_no == 0:  # a bare cluster: Kueue's kinds once their CRDs are applied (they survive restarts)
                server.kubectl("apply", "--server-side", "-f", str(kueue_crds_file))
            cluster = Cluster(server)
            try:
                await _check_objects(cluster, objects)
                status, listed = await cluster.call("GET", CM)
                assert status == 200
                assert int(listed["metadata"]["resourceVersion"]) >= highest, "resourceVersion went backwards"
                if round_no:
                    await asyncio.wait_for(_check_watch_resumes(cluster, highest, f"probe-{round_no}"), 30)
                if round_no == KILLS:
                    break
                acks = Acks(target=5 + rng.randrange(40))  # kill after a random number of acknowledged writes
                writers = [asyncio.create_task(_writer(cluster, objects, round_no, w, acks)) for w in range(WRITERS)]
                await asyncio.wait_for(acks.enough.wait(), 60)
                await asyncio.sleep(rng.random() * 0.05)  # and at a random moment between two of them
                server.kill9()
                await asyncio.wait_for(asyncio.gather(*writers), 30)
                highest = max([highest, *acks.versions])
            finally:
                await cluster.close()
        assert sum(o.state is not None for o in objects) >= KILLS * 5
    finally:
        server.stop()
