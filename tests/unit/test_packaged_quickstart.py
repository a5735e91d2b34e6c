"""The quickstart shipped inside the package (what ``pykueue demo`` and the e2e quickstart run) still
describes the release scenario of its README: one flavor with 4 CPUs, a Job asking for 3, created twice,
so exactly one of the two copies fits at a time."""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml
from tests.e2e.harness import QUICKSTART

from pykueue.api.meta.quantity import parse_quantity


def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((QUICKSTART / name).read_text()) if d]


def _by_kind(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    kinds = {d["kind"]: d for d in docs}
    assert len(kinds) == len(docs), "one object per kind"
    return kinds


def test_the_package_ships_the_same_files_the_tests_read() -> None:
    packaged = resources.files("pykueue.examples").joinpath("quickstart")
    for name in ("cluster-queue.yaml", "sample-job.yaml"):
        assert packaged.joinpath(name).read_text() == (QUICKSTART / name).read_text()


def test_queue_objects_form_one_local_queue_on_one_cluster_queue() -> None:
    kinds = _by_kind(_docs("cluster-queue.yaml"))
    assert set(kinds) == {"ResourceFlavor", "ClusterQueue", "LocalQueue"}
    flavor, cq, lq = kinds["ResourceFlavor"], kinds["ClusterQueue"], kinds["LocalQueue"]
    assert lq["metadata"]["namespace"] == "default"
    assert lq["spec"]["clusterQueue"] == cq["metadata"]["name"]
    assert cq["spec"]["namespaceSelector"] == {}, "every namespace may use the queue"
    [group] = cq["spec"]["resourceGroups"]
    [flavor_quota] = group["flavors"]
    assert flavor_quota["name"] == flavor["metadata"]["name"]


def test_exactly_one_sample_job_fits_at_a_time() -> None:
    queues = _by_kind(_docs("cluster-queue.yaml"))
    [job] = _docs("sample-job.yaml")
    assert job["kind"] == "Job"
    assert "name" not in job["metadata"], "created twice, so it needs generateName"
    assert job["metadata"]["generateName"]
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == queues["LocalQueue"]["metadata"]["name"]
    [group] = queues["ClusterQueue"]["spec"]["resourceGroups"]
    [flavor_quota] = group["flavors"]
    quota = {r["name"]: parse_quantity(str(r["nominalQuota"])) for r in flavor_quota["resources"]}
    [container] = job["spec"]["template"]["spec"]["containers"]
    requests = {k: parse_quantity(str(v)) for k, v in container["resources"]["requests"].items()}
    parallelism = job["spec"].get("parallelism", 1)
    assert set(requests) <= set(group["coveredResources"])
    for resource, amount in requests.items():
        assert amount * parallelism <= quota[resource], f"one copy fits: {resource}"
    assert any(2 * amount * parallelism > quota[r] for r, amount in requests.items()), "two copies must not fit"
