"""Store throughput, measured (a script, not a test): ``python tests/unit/store/bench_store.py``.

Prints operations per second for writes in memory, with SQLite group commit (one transaction per
100 writes) and with a commit per write, plus reads and the copy strategies for returned dicts.
Numbers depend on the machine; compare them against each other, not across machines.
"""

from __future__ import annotations

import copy
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
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": f"job-sample-{i:06d}", "namespace": f"team-{i % 10}",
                     "uid": f"7f3c9a2e-{i:04d}-4c1d-9a0e-5b6c7d8e9f00",
                     "creationTimestamp": "2026-11-30T09:00:00Z", "generation": 1,
                     "labels": {"kueue.x-k8s.io/queue-name": "user-queue", "team": f"t{i % 10}"},
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": f"job-{i}",
                                          "uid": "0f7b3c1d-1111-2222-3333-444455556666",
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"queueName": "user-queue", "priority": 0, "active": True,
                 "podSets": [{"name": "main", "count": 3, "template": {"spec": {
                     "restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                     "args": ["entrypoint-tester", "hello", "world"],
                                     "resources": {"requests": {"cpu": "1", "memory": "200Mi"}}}]}}}]},
        "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                   "message": "couldn't assign flavors to pod set main: insufficient "
                                              "unused quota for cpu in flavor default-flavor, 1 more needed",
                                   "lastTransitionTime": "2026-11-30T09:00:01Z", "observedGeneration": 1}]},
    }


def rate(label: str, n: int, fn: Callable[[], None]) -> float:
    """Run ``fn`` (n operations) once and print operations per second."""
    start = time.perf_counter()
    fn()
    per_s = n / (time.perf_counter() - start)
    print(f"{label:<58} {per_s:>12,.0f} /s")
    return per_s


def each(items: Iterable[T], fn: Callable[[T], object]) -> None:
    for item in items:
        fn(item)


def main(n: int = 20_000) -> None:
    bodies = [workload(i) for i in range(n)]
    res = "workloads.kueue.x-k8s.io"
    print(f"{n} objects of {len(orjson.dumps(bodies[0]))} bytes, Python {sys.version.split()[0]}")

    mem = Store()
    rate("create, in memory", n, lambda: each(bodies, lambda b: mem.create(res, b)))
    rate("update, in memory", n, lambda: each(bodies, lambda b: mem.update(res, b, expected_rv=None)))
    seen: list[object] = []
    mem.subscribe(seen.append)
    rate("update, in memory, one subscriber", n,
         lambda: each(bodies, lambda b: mem.update(res, b, expected_rv=None)))
    keys = [(b["metadata"]["namespace"], b["metadata"]["name"]) for b in bodies]
    rate("get", n, lambda: each(keys, lambda k: mem.get(res, *k)))
    rate("list all (objects/s)", n * 5, lambda: each(range(5), lambda _: mem.list(res)))
    rate("list one namespace, label selector (objects/s)", n // 10 * 5,
         lambda: each(range(5), lambda _: mem.list(res, "team-3", label_selector="team=t3")))
    rate("list label selector matching 1/10 (scanned objects/s)", n * 5,
         lambda: each(range(5), lambda _: mem.list(res, label_selector="team=t3")))

    with tempfile.TemporaryDirectory() as tmp:
        grouped = Store(str(Path(tmp) / "grouped.db"), auto_flush=False)

        def group_commit() -> None:
            for i, b in enumerate(bodies):
                grouped.create(res, b)
                if i % 100 == 99:
                    grouped.flush()
            grouped.flush()

        rate("create, SQLite, group commit of 100", n, group_commit)
        single = Store(str(Path(tmp) / "single.db"))
        m = n // 4
        rate("create, SQLite, commit per write (auto_flush)", m,
             lambda: each(bodies[:m], lambda b: single.create(res, b)))
        grouped.close()
        single.close()
        start = time.perf_counter()
        reopened = Store(str(Path(tmp) / "grouped.db"))
        print(f"{'reopen (reload ' + str(n) + ' objects)':<58} {time.perf_counter() - start:>12.3f} s")
        reopened.close()

    stored = orjson.dumps(bodies[0])
    as_dict = orjson.loads(stored)
    k = 50_000
    rate("copy for a reader: orjson.loads(bytes)", k, lambda: each(range(k), lambda _: orjson.loads(stored)))
    rate("copy for a reader: copy.deepcopy(dict)", k // 5,
         lambda: each(range(k // 5), lambda _: copy.deepcopy(as_dict)))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
