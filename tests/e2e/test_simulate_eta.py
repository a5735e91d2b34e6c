"""``pykueue simulate eta`` against a running ``pykueue up``: estimated starts from the live state, read
with the kubeconfig ``pykueue up`` wrote; ``simulate run --from-cluster`` reads the same objects."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from pathlib import Path

from pykueue.api.meta.clock import format_time, parse_time
from tests.e2e.harness import Pykueue
from tests.e2e.k8s import condition, cpu_queue, is_true, job_manifest, workload_of
from tests.waiting import eventually_blocking


def _simulate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pykueue", "simulate", *map(str, args)], capture_output=True, text=True, timeout=120
    )


def _job(name: str, max_exec: int) -> str:
    doc = json.loads(job_manifest(name, "lq", cpu="2", labels={"kueue.x-k8s.io/max-exec-time-seconds": str(max_exec)}))
    return json.dumps(doc)


def test_eta_of_pending_workloads(pykueue: Pykueue, tmp_path: Path) -> None:
    pykueue.kubectl("apply", "-f", "-", input=cpu_queue(2))
    pykueue.kubectl("create", "-f", "-", input=_job("first", 600))
    first = eventually_blocking(
        lambda: (wl := workload_of(pykueue, "first")) is not None and is_true(wl, "Admitted") and wl
    )
    assert isinstance(first, dict)
    pykueue.kubectl("create", "-f", "-", input=_job("second", 120))
    pykueue.kubectl("create", "-f", "-", input=_job("third", 60))

    def waits_for_quota(job: str) -> bool:
        wl = workload_of(pykueue, job)
        return wl is not None and condition(wl, "QuotaReserved").get("status") == "False"

    for job in ("second", "third"):
        eventually_blocking(functools.partial(waits_for_quota, job), what=f"{job} waits for quota")
    admitted_at = parse_time(condition(first, "QuotaReserved")["lastTransitionTime"])

    result = _simulate("eta", "--kubeconfig", pykueue.kubeconfig, "-o", "json")
    assert result.returncode == 0, result.stderr
    by_job = {e["name"]: e for e in json.loads(result.stdout)}
    second = by_job[workload_of(pykueue, "second")["metadata"]["name"]]
    third = by_job[workload_of(pykueue, "third")["metadata"]["name"]]
    assert len(by_job) == 2  # the admitted workload is not estimated
    assert (second["runtimeBasis"], second["runtimeSeconds"]) == ("maximumExecutionTime", 120.0)
    assert (second["clusterQueue"], second["queueName"]) == ("cq", "lq")
    # one at a time on 2 cpu: the next in line starts when first's 600 s are up, the other one after the
    # next one's runtime (second and third may share a creation second, so either can be next)
    starts = sorted((parse_time(e["estimatedStart"]), e["runtimeSeconds"]) for e in (second, third))
    assert starts[0][0] == admitted_at + 600
    assert starts[1][0] == admitted_at + 600 + starts[0][1]
    assert 0 < second["estimatedWaitSeconds"] <= 600 + 60

    one = _simulate("eta", "--kubeconfig", pykueue.kubeconfig, "-n", "default", second["name"])
    assert one.returncode == 0, one.stderr
    lines = one.stdout.splitlines()
    assert lines[0].split() == ["NAMESPACE", "NAME", "QUEUE", "CLUSTERQUEUE", "ESTIMATED", "START", "RUNTIME", "BASIS"]
    assert len(lines) == 2
    assert lines[1].split()[:4] == ["default", second["name"], "lq", "cq"]
    assert "(in " in lines[1]
    assert "maximumExecutionTime" in lines[1]

    # --annotate writes the estimate on the Workload, where kubectl shows it
    annotated = _simulate("eta", "--kubeconfig", pykueue.kubeconfig, "--annotate", "-o", "json")
    assert annotated.returncode == 0, annotated.stderr
    now_second = {e["name"]: e for e in json.loads(annotated.stdout)}[second["name"]]
    shown = pykueue.kubectl("get", "workload", second["name"], "-o", "json").stdout
    annotations = json.loads(shown)["metadata"]["annotations"]
    assert annotations["pykueue.io/estimated-start"] == now_second["estimatedStart"]
    assert annotations["pykueue.io/estimated-start-basis"].startswith("maximumExecutionTime, estimated at ")

    missing = _simulate("eta", "--kubeconfig", pykueue.kubeconfig, "nope")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "error: no pending workload 'nope'"

    # the same objects feed a replay: a 2-cpu job fits, a 3-cpu one never does
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        json.dumps(
            {
                "name": "fits",
                "submit": 0,
                "runtime": 10,
                "namespace": "default",
                "queue": "lq",
                "podSets": [{"count": 1, "requests": {"cpu": "2"}}],
            }
        )
        + "\n"
        + json.dumps(
            {
                "name": "toobig",
                "submit": 0,
                "runtime": 10,
                "namespace": "default",
                "queue": "lq",
                "podSets": [{"count": 1, "requests": {"cpu": "3"}}],
            }
        )
        + "\n"
    )
    replayed = _simulate("run", "--from-cluster", "--kubeconfig", pykueue.kubeconfig, "--trace", trace, "-o", "json")
    assert replayed.returncode == 0, replayed.stderr
    doc = json.loads(replayed.stdout)
    assert (doc["configuration"], doc["admitted"], list(doc["neverAdmittedReasons"])) == (
        "cluster",
        1,
        ["default/toobig"],
    )


def test_eta_without_a_cluster_is_one_line(tmp_path: Path) -> None:
    started = time.monotonic()
    config = tmp_path / "kubeconfig"
    config.write_text("not: [a kubeconfig\n")
    result = _simulate("eta", "--kubeconfig", config)
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: ")
    assert time.monotonic() - started < 120


def _explain(pykueue: Pykueue, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pykueue", "explain", "workload", *args, "--kubeconfig", str(pykueue.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_explain_shows_the_estimated_start(pykueue: Pykueue) -> None:
    pykueue.kubectl("apply", "-f", "-", input=cpu_queue(2))
    pykueue.kubectl("create", "-f", "-", input=_job("running", 900))
    running = eventually_blocking(
        lambda: (wl := workload_of(pykueue, "running")) is not None and is_true(wl, "Admitted") and wl
    )
    assert isinstance(running, dict)
    pykueue.kubectl("create", "-f", "-", input=_job("waiting", 300))
    waiting = eventually_blocking(
        lambda: (
            (wl := workload_of(pykueue, "waiting")) is not None
            and condition(wl, "QuotaReserved").get("status") == "False"
            and wl
        )
    )
    assert isinstance(waiting, dict)
    name = waiting["metadata"]["name"]
    # one at a time on 2 cpu: it starts when the running job's 900 s (its maximumExecutionTimeSeconds) are up
    expected = format_time(parse_time(condition(running, "QuotaReserved")["lastTransitionTime"]) + 900)

    answer = _explain(pykueue, name, "-o", "json")
    assert answer.returncode == 0, answer.stderr
    doc = json.loads(answer.stdout)
    assert doc["state"] == "pending"
    eta = doc["estimatedStart"]
    assert (eta["time"], eta["runtimeSeconds"], eta["runtimeBasis"]) == (expected, 300.0, "maximumExecutionTime")
    assert 0 < eta["waitSeconds"] <= 900
    assert doc["sentences"][-1].startswith(f"Estimated start: {expected} (in ")
    assert "runtime 300s from its spec.maximumExecutionTimeSeconds" in doc["sentences"][-1]

    text = _explain(pykueue, name)
    assert text.returncode == 0, text.stderr
    assert f"  Estimated start: {expected} (in " in text.stdout

    # an admitted workload has no estimate
    admitted = json.loads(_explain(pykueue, running["metadata"]["name"], "-o", "json").stdout)
    assert admitted["state"] == "admitted"
    assert "estimatedStart" not in admitted
    assert not any(s.startswith("Estimated start") for s in admitted["sentences"])


def test_annotations_are_kept_fresh(pykueue: Pykueue) -> None:
    pykueue.kubectl("apply", "-f", "-", input=cpu_queue(2))
    pykueue.kubectl("create", "-f", "-", input=_job("running", 900))
    eventually_blocking(lambda: (wl := workload_of(pykueue, "running")) is not None and is_true(wl, "Admitted"))
    pykueue.kubectl("create", "-f", "-", input=_job("waiting", 300))
    waiting = eventually_blocking(
        lambda: (
            (wl := workload_of(pykueue, "waiting")) is not None
            and condition(wl, "QuotaReserved").get("status") == "False"
            and wl
        )
    )
    assert isinstance(waiting, dict)
    name = waiting["metadata"]["name"]

    def annotations() -> dict[str, str]:
        shown = json.loads(pykueue.kubectl("get", "workload", name, "-o", "json").stdout)
        return dict(shown["metadata"].get("annotations") or {})

    fresh = _simulate("eta", "--kubeconfig", pykueue.kubeconfig, "--annotate", "--every", "1", "--rounds", "2")
    assert fresh.returncode == 0, fresh.stderr
    lines = fresh.stdout.splitlines()
    assert len(lines) == 2
    assert all(line.endswith(" estimated 1 pending workload(s), cleared 0") for line in lines)
    # what the forward runs used, said once (and again only if it changes)
    assert fresh.stderr.splitlines() == [
        "Scheduler configuration: ConfigMap kueue-system/pykueue-manager-config (fair sharing off)"
    ]
    first = annotations()
    assert first["pykueue.io/estimated-start-basis"].startswith("maximumExecutionTime, estimated at ")

    # once it is admitted (the running job is gone), the next round removes its estimate
    pykueue.kubectl("delete", "job", "running")
    eventually_blocking(lambda: (wl := workload_of(pykueue, "waiting")) is not None and is_true(wl, "Admitted"))
    again = _simulate("eta", "--kubeconfig", pykueue.kubeconfig, "--annotate", "--every", "1", "--rounds", "1")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith(" estimated 0 pending workload(s), cleared 1")
    assert "pykueue.io/estimated-start" not in annotations()
    assert "pykueue.io/estimated-start-basis" not in annotations()

    alone = _simulate("eta", "--kubeconfig", pykueue.kubeconfig, "--every", "5")
    assert alone.returncode == 2
    assert alone.stderr == "error: --every keeps the annotations fresh: give --annotate too\n"
