"""``/metrics`` of a real ``pykueue up``, scraped with the real kubectl and parsed as Prometheus would.

The quickstart (two sample Jobs, quota for one at a time) seen through Kueue's metrics: the pending
gauge goes 1 -> 0, the admitted counter reaches 2 and the admission wait-time histogram holds 2
samples; the same with the controllers in their own process. Also: ``/metrics`` needs the token
(401 without it, as kube-apiserver's), kube-apiserver's request counter labels a kubectl list the
way kube-apiserver does, and each admission is one log line (text and JSON).
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.harness import QUICKSTART, Pykueue
from tests.waiting import eventually_blocking

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
CQ = "cluster-queue"
ROLE = ("replica_role", "standalone")


def scrape(server: Pykueue) -> Samples:
    text = server.kubectl("get", "--raw", "/metrics").stdout
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def sample(samples: Samples, metric: str, /, **labels: str) -> float | None:
    return samples.get((metric, frozenset({**labels, ROLE[0]: ROLE[1]}.items())))


def pending(samples: Samples) -> float:
    return sum(
        sample(samples, "kueue_pending_workloads", cluster_queue=CQ, status=s) or 0 for s in ("active", "inadmissible")
    )


def _ca_context(kubeconfig: Path) -> tuple[str, ssl.SSLContext]:
    import base64

    config = yaml.safe_load(kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    return cluster["server"], context


def test_quickstart_metrics(pykueue: Pykueue) -> None:
    pykueue.kubectl("apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
    pykueue.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml"))
    pykueue.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml"))

    def one_pending_one_admitted() -> Samples | None:
        s = scrape(pykueue)
        admitted = sample(s, "kueue_admitted_workloads_total", cluster_queue=CQ, priority_class="")
        return s if pending(s) == 1 and admitted == 1 else None

    first = eventually_blocking(one_pending_one_admitted, within=60)
    assert isinstance(first, dict)
    assert sample(first, "kueue_reserving_active_workloads", cluster_queue=CQ) == 1
    assert sample(first, "kueue_cluster_queue_status", cluster_queue=CQ, status="active") == 1
    assert (
        sample(
            first,
            "kueue_cluster_queue_nominal_quota",
            cohort="",
            cluster_queue=CQ,
            flavor="default-flavor",
            resource="cpu",
        )
        == 4
    )
    assert (
        sample(
            first, "kueue_local_queue_pending_workloads", name="user-queue", namespace="default", status="inadmissible"
        )
        == 1
    )

    def both_admitted() -> Samples | None:  # the first Job runs ~30 s, then the second is admitted
        s = scrape(pykueue)
        admitted = sample(s, "kueue_admitted_workloads_total", cluster_queue=CQ, priority_class="")
        return s if pending(s) == 0 and admitted == 2 else None

    done = eventually_blocking(both_admitted, within=150, interval=1.0)
    assert isinstance(done, dict)
    assert sample(done, "kueue_admission_wait_time_seconds_count", cluster_queue=CQ, priority_class="") == 2
    assert sample(done, "kueue_quota_reserved_workloads_total", cluster_queue=CQ, priority_class="") == 2
    assert (sample(done, "kueue_admission_attempts_total", result="success") or 0) >= 2

    # one readable line per admission, naming the workload, its ClusterQueue and flavors
    admissions = [line for line in pykueue.output if "pykueue.admission: admitted default/" in line]
    assert len(admissions) == 2, pykueue.output
    assert all(
        f"in ClusterQueue {CQ} (flavors cpu=default-flavor,memory=default-flavor)" in line for line in admissions
    ), admissions


def test_metrics_need_the_token_and_count_requests_like_kube_apiserver(pykueue: Pykueue) -> None:
    url, context = _ca_context(pykueue.kubeconfig)
    with pytest.raises(urllib.error.HTTPError) as denied:
        urllib.request.urlopen(f"{url}/metrics", context=context, timeout=10)
    assert denied.value.code == 401
    assert json.loads(denied.value.read())["reason"] == "Unauthorized"

    pykueue.kubectl("get", "clusterqueues")
    pykueue.kubectl("get", "namespace", "default")
    s = scrape(pykueue)
    base = {"dry_run": "", "subresource": "", "component": "apiserver", "code": "200"}
    listed = s.get(
        (
            "apiserver_request_total",
            frozenset(
                {
                    **base,
                    "verb": "LIST",
                    "group": "kueue.x-k8s.io",
                    "version": "v1beta2",
                    "resource": "clusterqueues",
                    "scope": "cluster",
                }.items()
            ),
        )
    )
    assert listed is not None
    assert listed >= 1
    got = s.get(
        (
            "apiserver_request_total",
            frozenset(
                {
                    **base,
                    "verb": "GET",
                    "group": "",
                    "version": "v1",
                    "resource": "namespaces",
                    "scope": "resource",
                }.items()
            ),
        )
    )
    assert got is not None
    assert got >= 1
    assert (
        s.get(
            (
                "apiserver_request_total",
                frozenset(
                    {
                        **base,
                        "code": "401",
                        "verb": "GET",
                        "group": "",
                        "version": "",
                        "resource": "",
                        "scope": "",
                    }.items()
                ),
            )
        )
        == 1
    )
    count = s.get(
        (
            "apiserver_request_duration_seconds_count",
            frozenset(
                {
                    "verb": "LIST",
                    "dry_run": "",
                    "group": "kueue.x-k8s.io",
                    "version": "v1beta2",
                    "resource": "clusterqueues",
                    "subresource": "",
                    "scope": "cluster",
                    "component": "apiserver",
                }.items()
            ),
        )
    )
    assert count is not None
    assert count >= 1
    assert not any(name.endswith("_created") for name, _ in s), "no *_created series (Go's exposition has none)"


@pytest.fixture
def process_mode_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pykueue]:
    """``pykueue up --controllers process`` with JSON logs chosen through the environment."""
    monkeypatch.setenv("PYKUEUE_LOG_FORMAT", "json")
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--controllers", "process", "--access-log"]).start()
    try:
        yield server
    finally:
        server.stop()


def test_metrics_of_the_controller_process_reach_the_server_scrape(process_mode_json: Pykueue) -> None:
    server = process_mode_json
    server.kubectl("apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
    server.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml"))

    def admitted() -> Samples | None:
        s = scrape(server)
        return s if sample(s, "kueue_admitted_workloads_total", cluster_queue=CQ, priority_class="") == 1 else None

    s = eventually_blocking(admitted, within=60)
    assert isinstance(s, dict)
    assert sample(s, "kueue_admission_wait_time_seconds_count", cluster_queue=CQ, priority_class="") == 1
    assert sample(s, "kueue_reserving_active_workloads", cluster_queue=CQ) == 1
    assert any(name == "apiserver_request_total" for name, _ in s), "the server's own metrics are there too"
    text = server.kubectl("get", "--raw", "/metrics").stdout
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(types) == len(set(types)), "each family once: the two registries never overlap"

    # JSON logs: one object per line, from both processes; the admission's has its fields
    objects = [json.loads(line) for line in server.output if line.startswith("{")]
    admission = [o for o in objects if o.get("event") == "Admitted"]
    assert len(admission) == 1, objects
    assert admission[0]["clusterQueue"] == CQ
    assert admission[0]["component"] == "controllers"
    assert admission[0]["workload"].startswith("default/job-sample-job-")
    assert admission[0]["flavors"] == "cpu=default-flavor,memory=default-flavor"
    access = [o for o in objects if o.get("logger") == "pykueue.apiserver.access"]
    assert any("GET /metrics" in o["msg"] for o in access), "--access-log logs each request"
