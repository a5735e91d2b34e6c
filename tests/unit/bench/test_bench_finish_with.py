"""``bench scheduler --finish-with apply``: the request Kueue's runner sends to mark Finished.

The runner's request is checked against a recording client (its shape is the contract: server-side
apply to ``/status``, Kueue's field manager, force, the resourceVersion read in the body, re-read
and retried on a 409); tests/e2e checks that the server applies it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typer.testing import CliRunner

from pykueue.api.meta.errors import Conflict
from pykueue.bench.scheduler.config import expand, parse_config
from pykueue.bench.scheduler.realtime import FINISH_APPLY_ATTEMPTS, _Driver, finish_apply_body, finished_condition
from pykueue.cli.bench_scheduler import scheduler

PLAN = expand(
    parse_config(
        {
            "cohorts": [
                {
                    "className": "cohort",
                    "count": 1,
                    "queuesSets": [
                        {
                            "className": "cq",
                            "count": 1,
                            "nominalQuota": 1,
                            "borrowingLimit": 0,
                            "reclaimWithinCohort": "Never",
                            "withinClusterQueue": "Never",
                            "workloadsSets": [
                                {
                                    "count": 1,
                                    "creationIntervalMs": 1,
                                    "workloads": [{"className": "small", "priority": 1, "request": 1, "runtimeMs": 1}],
                                }
                            ],
                        }
                    ],
                }
            ]
        }
    )
)


class _Client:
    def __init__(self, conflicts: int) -> None:
        self.conflicts = conflicts
        self.patches: list[dict[str, Any]] = []
        self.gets = 0

    async def patch(self, res: Any, name: str, patch: Any, **kwargs: Any) -> dict[str, Any]:
        self.patches.append({"name": name, "body": patch, **kwargs})
        if self.conflicts:
            self.conflicts -= 1
            raise Conflict("the object has been modified")
        return {}

    async def get(self, res: Any, name: str, namespace: str = "") -> dict[str, Any]:
        self.gets += 1
        return {
            "metadata": {"name": name, "namespace": namespace, "uid": "u-1", "resourceVersion": f"{100 + self.gets}"}
        }


def _driver(client: _Client, finish_with: str) -> tuple[_Driver, str]:
    d = _Driver(client, PLAN, lambda _line: None, finish_with)
    w = PLAN.workloads[0]
    key = f"{w.namespace}/{w.name}"
    d.rec.created(key, w.class_name, 0.0)
    d.on_workload(
        "MODIFIED",
        {"metadata": {"name": w.name, "namespace": w.namespace, "uid": "u-1", "resourceVersion": "42"}, "status": {}},
        None,
    )
    return d, key


def test_apply_body_is_identity_version_and_one_condition() -> None:
    cond = finished_condition(1_700_000_000.0)
    body = finish_apply_body("ns", "wl", "u-1", "42", cond)
    assert body == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "ns", "uid": "u-1", "resourceVersion": "42"},
        "status": {"conditions": [cond]},
    }
    assert cond["type"] == "Finished"
    assert cond["status"] == "True"
    assert cond["reason"] == "ByTest"


def test_apply_marks_finished_as_kueues_runner_does() -> None:
    client = _Client(conflicts=0)
    d, key = _driver(client, "apply")
    asyncio.run(d._finish(key))
    assert d.finish_errors == 0
    (call,) = client.patches
    assert call["patch_type"] == "apply"
    assert call["subresource"] == "status"
    assert call["field_manager"] == "kueue-job-controller-Finished"
    assert call["force"] is True
    assert call["body"]["metadata"]["resourceVersion"] == "42"  # the version the watch delivered
    assert call["body"]["status"]["conditions"][0]["type"] == "Finished"


def test_apply_rereads_and_retries_on_conflict() -> None:
    client = _Client(conflicts=2)
    d, key = _driver(client, "apply")
    asyncio.run(d._finish(key))
    assert d.finish_errors == 0
    assert d.finish_conflicts == 2
    assert client.gets == 2
    versions = [c["body"]["metadata"]["resourceVersion"] for c in client.patches]
    assert versions == ["42", "101", "102"]


def test_apply_gives_up_after_its_attempts() -> None:
    client = _Client(conflicts=FINISH_APPLY_ATTEMPTS)
    d, key = _driver(client, "apply")
    asyncio.run(d._finish(key))
    assert d.finish_errors == 1
    assert len(client.patches) == FINISH_APPLY_ATTEMPTS


def test_patch_mode_appends_the_condition_with_a_json_patch() -> None:
    client = _Client(conflicts=0)
    d, key = _driver(client, "patch")
    asyncio.run(d._finish(key))
    (call,) = client.patches
    assert call["patch_type"] == "json"
    assert call["body"][0]["op"] == "add"
    assert call["body"][0]["path"] == "/status/conditions/-"


@pytest.mark.parametrize("value", ["merge", ""])
def test_finish_with_refuses_other_modes(value: str) -> None:
    import typer

    app = typer.Typer()
    app.command()(scheduler)
    result = CliRunner().invoke(app, ["--finish-with", value, "--config", "smoke"])
    assert result.exit_code == 2
    assert "--finish-with must be 'patch' or 'apply'" in result.output


def test_profile_writes_stats_of_the_virtual_run(tmp_path: Any) -> None:
    import pstats

    import typer

    app = typer.Typer()
    app.command()(scheduler)
    out = tmp_path / "run.prof"
    result = CliRunner().invoke(app, ["--config", "smoke", "--virtual-time", "--profile", str(out)])
    assert result.exit_code == 0, result.output
    assert "cProfile stats:" in result.output
    names = {func[2] for func in pstats.Stats(str(out)).stats}  # type: ignore[attr-defined]
    assert "schedule" in names
    refused = CliRunner().invoke(
        app, ["--config", "smoke", "--kubeconfig", str(tmp_path / "kubeconfig"), "--profile", str(out)]
    )
    assert refused.exit_code == 2
    assert "--profile profiles the pykueue up this command starts" in refused.output
