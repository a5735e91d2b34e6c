"""The packaged quickstart (``src/pykueue/examples/quickstart``), exactly as a user runs it with the real kubectl."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.harness import QUICKSTART, Pykueue
from tests.waiting import eventually_blocking


def _workloads(server: Pykueue) -> list[dict[str, Any]]:
    return list(json.loads(server.kubectl("get", "workloads", "-n", "default", "-o", "json").stdout)["items"])


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), None)


def _is_true(obj: dict[str, Any], kind: str) -> bool:
    cond = _condition(obj, kind)
    return cond is not None and cond["status"] == "True"


def test_quickstart(pykueue: Pykueue) -> None:
    pykueue.kubectl("apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
    first = pykueue.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml")).stdout.split()[0]
    second = pykueue.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml")).stdout.split()[0]

    def one_admitted_one_pending() -> list[dict[str, Any]] | None:
        wls = _workloads(pykueue)
        admitted = [w for w in wls if _is_true(w, "Admitted")]
        pending = [
            w
            for w in wls
            if not _is_true(w, "QuotaReserved")
            and (_condition(w, "QuotaReserved") or {}).get("reason") == "WaitingForQuota"
        ]
        return wls if len(wls) == 2 and len(admitted) == 1 and len(pending) == 1 else None

    wls = eventually_blocking(one_admitted_one_pending, within=60)
    assert isinstance(wls, list)
    pending = next(w for w in wls if not _is_true(w, "Admitted"))
    message = (_condition(pending, "QuotaReserved") or {}).get("message", "")
    assert "insufficient unused quota for cpu in flavor default-flavor" in message, message
    admitted = next(w for w in wls if _is_true(w, "Admitted"))
    # Normally the first Job; both may be queued in the same second, when Kueue's order falls to UIDs.
    first_name = admitted["metadata"]["ownerReferences"][0]["name"]
    second_name = next(n for n in (first, second) if n.split("/")[1] != first_name).split("/")[1]
    assert admitted["metadata"]["name"].startswith(f"job-{first_name}-")

    # The ClusterQueue shows 1 pending, 1 admitted.
    def cq_counts() -> tuple[int, int] | None:
        cq = json.loads(pykueue.kubectl("get", "cq", "cluster-queue", "-o", "json").stdout)
        status = cq.get("status", {})
        counts = (status.get("pendingWorkloads"), status.get("admittedWorkloads"))
        return counts if counts == (1, 1) else None

    eventually_blocking(cq_counts, within=30)
    wide = pykueue.kubectl("get", "clusterqueue", "cluster-queue", "-o", "wide").stdout
    assert wide.splitlines()[1].split()[-2:] == ["1", "1"] or wide.splitlines()[1].split()[2:4] == ["1", "1"]

    # The first Job runs unsuspended; the second stays suspended.
    job1 = json.loads(pykueue.kubectl("get", "job", first_name, "-o", "json").stdout)
    job2 = json.loads(pykueue.kubectl("get", "job", second_name, "-o", "json").stdout)
    assert job1["spec"]["suspend"] is False
    assert job2["spec"]["suspend"] is True

    # ~30 s later the first completes, its log says hello, and the second is admitted.
    def first_complete() -> bool:
        job = json.loads(pykueue.kubectl("get", "job", first_name, "-o", "json").stdout)
        conditions = job.get("status", {}).get("conditions", [])
        return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)

    eventually_blocking(first_complete, within=120, interval=1.0)
    logs = pykueue.kubectl("logs", f"job/{first_name}").stdout
    assert "Hello from Kueue!" in logs

    def second_admitted() -> bool:
        return any(
            _is_true(w, "Admitted") and w["metadata"]["ownerReferences"][0]["name"] == second_name
            for w in _workloads(pykueue)
        )

    eventually_blocking(second_admitted, within=60)
    finished = [w for w in _workloads(pykueue) if _is_true(w, "Finished")]
    assert [w["metadata"]["ownerReferences"][0]["name"] for w in finished] == [first_name]
