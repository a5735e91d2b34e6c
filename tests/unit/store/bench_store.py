"""Store throughput, measured (a script, not a test): ``python tests/unit/store/bench_store.py``.

Prints operations per second for writes in memory, with SQLite group commit (one transaction per
100 writes) and with a commit per write, plus reads and the copy strategies for returned dicts.
Numbers depend on the machine; compare them against each other, not across machines.
"""

from __future__ import annotations

import copy
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import orjson

from pykueue.store import Store

T = TypeVar("T")


def workload(i: int) -> dict[str, Any]:
    """A realistic ~1.3 KB Workload, as the scheduler writes them."""
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": f"job-sample-{i:06d}",
            "namespace": f"team-{i % 10}",
            "uid": f"7f3c9a2e-{i:04d}-4c1d-9a0e-5b6c7d8e9f00",
            "creationTimestamp": "2026-11-30T09:00:00Z",
            "generation": 1,
            "labels": {"kueue.x-k8s.io/queue-name": "user-queue", "team": f"t{i % 10}"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": f"job-{i}",
                    "uid": "0f7b3c1d-1111-2222-3333-444455556666",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "queueName": "user-queue",
            "priority": 0,
            "active": True,
            "podSets": [
                {
                    "name": "main",
                    "count": 3,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                    "args": ["entrypoint-tester", "hello", "world"],
                                    "resources": {"requests": {"cpu": "1", "memory": "200Mi"}},
                                }
                            ],
                        }
                    },
                }
            ],
        },
        "status": {
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "False",
                    "reason": "Pending",
                    "message": "couldn't assign flavors to pod set main: insufficient "
                    "unused quota for cpu in flavor default-flavor, 1 more needed",
                    "lastTransitionTime": "2026-11-30T09:00:01Z",
                    "observedGeneration": 1,
                }
            ]
        },
    }


def rate(label: str, n: int, fn: Callable[[int], object], repeat: int = 3) -> float:
    """Run ``fn(attempt)`` (n operations) ``repeat`` times; print the best operations per second.

    The best of a few runs filters out noise from other processes sharing the machine.
    """
    best = 0.0
    for attempt in range(repeat):
        start = time.perf_counter()
        fn(attempt)
        best = max(best, n / (time.perf_counter() - start))
    print(f"{label:<58} {best:>12,.0f} /s")
    return best


def each(items: Iterable[T], fn: Callable[[T], object]) -> None:
    for item in items:
        fn(item)


def main(n: int = 20_000) -> None:
    bodies = [workload(i) for i in range(n)]
    res = "workloads.kueue.x-k8s.io"
    print(f"{n} objects of {len(orjson.dumps(bodies[0]))} bytes, Python {sys.version.split()[0]}")

    stores = [Store() for _ in range(3)]
    rate("create, in memory", n, lambda a: each(bodies, lambda b: stores[a].create(res, b)))
    mem = stores[0]
    rate("update, in memory", n, lambda a: each(bodies, lambda b: mem.update(res, b, expected_rv=None)))
    delivered = [0]

    def subscriber(event: object) -> None:  # hands events on, keeps none (like a watch queue)
        delivered[0] += 1

    mem.subscribe(subscriber)
    rate("update, in memory, one subscriber", n, lambda a: each(bodies, lambda b: mem.update(res, b, expected_rv=None)))
    keys = [(b["metadata"]["namespace"], b["metadata"]["name"]) for b in bodies]
    rate("get", n, lambda a: each(keys, lambda k: mem.get(res, *k)))
    rate("list all (objects/s)", n, lambda a: mem.list(res) and None)
    rate(
        "list one namespace, label selector (objects/s)",
        n // 10,
        lambda a: mem.list(res, "team-3", label_selector="team=t3") and None,
    )
    rate(
        "list label selector matching 1/10 (scanned objects/s)",
        n,
        lambda a: mem.list(res, label_selector="team=t3") and None,
    )
    rate("list, paginated by 500 (objects/s)", n, lambda a: paginate(mem, res, 500))

    with tempfile.TemporaryDirectory() as tmp:
        grouped = [Store(str(Path(tmp) / f"grouped{a}.db"), auto_flush=False) for a in range(3)]

        def group_commit(attempt: int) -> None:
            store = grouped[attempt]
            for i, b in enumerate(bodies):
                store.create(res, b)
                if i % 100 == 99:
                    store.flush()
            store.flush()

        rate("create, SQLite, group commit of 100", n, group_commit)

        def group_update(attempt: int) -> None:
            store = grouped[attempt]
            for i, b in enumerate(shuffled):
                store.update(res, b, expected_rv=None)
                if i % 100 == 99:
                    store.flush()
            store.flush()

        shuffled = random.Random(1).sample(bodies, len(bodies))
        rate("update (random order), SQLite, group commit of 100", n, group_update)
        single = [Store(str(Path(tmp) / f"single{a}.db")) for a in range(3)]
        m = n // 4
        rate(
            "create, SQLite, commit per write (auto_flush)",
            m,
            lambda a: each(bodies[:m], lambda b: single[a].create(res, b)),
        )
        for store in grouped + single:
            store.close()
        start = time.perf_counter()
        reopened = Store(str(Path(tmp) / "grouped0.db"))
        print(f"{'reopen (reload ' + str(n) + ' objects)':<58} {time.perf_counter() - start:>12.3f} s")
        reopened.close()

    stored = orjson.dumps(bodies[0])
    as_dict = orjson.loads(stored)
    k = 20_000
    rate("copy for a reader: orjson.loads(bytes)", k, lambda a: each(range(k), lambda _: orjson.loads(stored)))
    rate(
        "copy for a reader: copy.deepcopy(dict)",
        k // 5,
        lambda a: each(range(k // 5), lambda _: copy.deepcopy(as_dict)),
    )


def paginate(store: Store, resource: str, limit: int) -> None:
    page = store.list(resource, limit=limit)
    while page.continue_token:
        page = store.list(resource, limit=limit, continue_token=page.continue_token)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
