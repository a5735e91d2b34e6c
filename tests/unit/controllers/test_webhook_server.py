"""Kueue's webhooks served over real HTTPS as AdmissionReview v1 / ConversionReview v1.

The decisions must be the in-process admission chain's: a mutating answer's JSONPatch applied to
the object as the API server sent it gives what the embedded registry stores, and a validating
denial carries the same message the in-process chain reports (without kube-apiserver's prefix).
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import jsonpatch
import orjson
import pytest
from tests.unit.controllers.conftest import Env, make_job

from pykueue.api.catalogue import build_catalogue
from pykueue.api.meta.errors import WebhookDenied
from pykueue.controllers.config import KueueConfig, embedded_default
from pykueue.controllers.resource_names import CLUSTER_QUEUES, JOBS
from pykueue.testing.builders import make_cluster_queue
from pykueue.webhooks.catalogue import CONVERT_PATH, WEBHOOKS, webhook_path, webhooks_for
from pykueue.webhooks.certs import new_bundle
from pykueue.webhooks.review import ReviewHandler
from pykueue.webhooks.server import serve_webhooks

JSONDict = dict[str, Any]
KINDS = build_catalogue()


class Served:
    def __init__(self, url: str, ca: bytes, env: Env) -> None:
        self.url = url
        self.env = env
        context = ssl.create_default_context(cadata=ca.decode())
        context.verify_flags |= ssl.VERIFY_X509_STRICT  # Go's (and Python 3.13's) strictness
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context))

    async def post(self, path: str, body: Any, content_type: str = "application/json") -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        async with self.session.post(self.url + path, data=data, headers={"Content-Type": content_type}) as resp:
            raw = await resp.read()
            try:
                return resp.status, orjson.loads(raw)
            except orjson.JSONDecodeError:
                return resp.status, raw.decode()


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    env = Env(KueueConfig())
    await env.start()
    bundle = new_bundle(("127.0.0.1",))
    (tmp_path / "tls.crt").write_bytes(bundle.tls_crt)
    (tmp_path / "tls.key").write_bytes(bundle.tls_key)
    handler = ReviewHandler(env.manager.admission_hooks())
    webhooks = webhooks_for(i.name for i in env.manager.integrations)
    runner, port = await serve_webhooks(
        handler, webhooks, host="127.0.0.1", port=0, cert_file=tmp_path / "tls.crt", key_file=tmp_path / "tls.key"
    )
    s = Served(f"https://127.0.0.1:{port}", bundle.ca_crt, env)
    try:
        yield s
    finally:
        await s.session.close()
        await runner.cleanup()
        await env.stop()


def review(obj: JSONDict, *, operation: str = "CREATE", old: JSONDict | None = None) -> JSONDict:
    group, _, version = obj["apiVersion"].rpartition("/")
    info = KINDS.by_kind(group, obj["kind"])
    assert info is not None
    meta = obj["metadata"]
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0df28fbd-5f5f-4d8c-9e2b-4a3f9c1d2e01",
            "kind": {"group": group, "version": version, "kind": obj["kind"]},
            "resource": {"group": group, "version": version, "resource": info.plural},
            "namespace": meta.get("namespace", ""),
            "name": meta.get("name", ""),
            "operation": operation,
            "userInfo": {"username": "admin"},
            "object": obj,
            "oldObject": old,
            "dryRun": False,
        },
    }


def as_the_server_sends(obj: JSONDict) -> JSONDict:
    """The object after the API server's own defaulting, which runs before mutating webhooks."""
    group, _, _ = obj["apiVersion"].rpartition("/")
    info = KINDS.by_kind(group, obj["kind"])
    assert info is not None
    return info.default(obj)


def patched(obj: JSONDict, answer: JSONDict) -> JSONDict:
    response = answer["response"]
    assert response["allowed"] is True
    if "patch" not in response:
        return obj
    assert response["patchType"] == "JSONPatch"
    operations = orjson.loads(base64.b64decode(response["patch"]))
    result: JSONDict = jsonpatch.apply_patch(obj, operations)
    return result


def test_paths_are_kueues() -> None:
    paths = {w.name: w.path for w in WEBHOOKS}
    assert paths["mjob.kb.io"] == "/mutate-batch-v1-job"
    assert paths["mpod.kb.io"] == "/mutate--v1-pod"
    assert paths["vclusterqueue.kb.io"] == "/validate-kueue-x-k8s-io-v1beta2-clusterqueue"
    assert paths["mjobset.kb.io"] == "/mutate-jobset-x-k8s-io-v1alpha2-jobset"
    assert webhook_path(False, "kueue.x-k8s.io", "v1beta2", "Workload") == "/validate-kueue-x-k8s-io-v1beta2-workload"
    only_job = {w.name for w in webhooks_for(["batch/job"])}
    assert "mjob.kb.io" in only_job
    assert "mjobset.kb.io" not in only_job
    assert "vworkload.kb.io" in only_job


async def test_job_mutation_patch_gives_the_in_process_result(served: Served) -> None:
    job = make_job("sample", "default")
    sent = as_the_server_sends(job)
    status, answer = await served.post("/mutate-batch-v1-job", review(sent))
    assert status == 200
    assert answer["apiVersion"] == "admission.k8s.io/v1"
    assert answer["kind"] == "AdmissionReview"
    assert answer["response"]["uid"] == "0df28fbd-5f5f-4d8c-9e2b-4a3f9c1d2e01"
    result = patched(sent, answer)
    assert result["spec"]["suspend"] is True  # Kueue's job webhook: a queued Job is created suspended
    stored = await served.env.create(JOBS, job)  # the embedded registry, hooks in process
    assert without_generated(result["spec"]) == without_generated(stored["spec"])
    assert result["metadata"]["labels"] == stored["metadata"]["labels"]


def without_generated(spec: JSONDict) -> JSONDict:
    """A Job's spec minus what the API server itself generates after admission (selector, pod labels)."""
    out = {k: v for k, v in spec.items() if k != "selector"}
    out["template"] = {k: v for k, v in spec["template"].items() if k != "metadata"}
    return out


async def test_job_without_queue_is_left_alone(served: Served) -> None:
    sent = as_the_server_sends(make_job("free", "default", queue=None))
    _, answer = await served.post("/mutate-batch-v1-job", review(sent))
    assert answer["response"] == {"uid": "0df28fbd-5f5f-4d8c-9e2b-4a3f9c1d2e01", "allowed": True}


async def test_cluster_queue_gets_kueues_finalizer(served: Served) -> None:
    cq = as_the_server_sends(make_cluster_queue("cq").quota("default", "cpu", "4").obj())
    _, answer = await served.post("/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", review(cq))
    result = patched(cq, answer)
    stored = await served.env.create(CLUSTER_QUEUES, make_cluster_queue("cq").quota("default", "cpu", "4").obj())
    assert result["metadata"]["finalizers"] == stored["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]


async def test_job_denial_has_the_in_process_message(served: Served) -> None:
    job = make_job("bad", "default", labels={"kueue.x-k8s.io/max-exec-time-seconds": "0"})
    _, answer = await served.post("/validate-batch-v1-job", review(as_the_server_sends(job)))
    response = answer["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    with pytest.raises(WebhookDenied) as denied:
        await served.env.create(JOBS, job)
    prefix = 'admission webhook "vjob.kb.io" denied the request: '
    assert denied.value.message == prefix + response["status"]["message"]
    assert "should be greater than 0" in response["status"]["message"]


async def test_cluster_queue_rule_of_the_webhook_denies(served: Served) -> None:
    cq = make_cluster_queue("cq").quota("default", "cpu", "4").quota("default", "memory", "1Gi").obj()
    resources = cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    resources.reverse()  # names must follow coveredResources' order: a webhook rule, not the schema's
    _, answer = await served.post("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", review(cq))
    assert answer["response"]["allowed"] is False
    assert "resourceGroups[0].flavors[0].resources[0].name" in answer["response"]["status"]["message"]
    good = make_cluster_queue("ok").quota("default", "cpu", "4").obj()
    _, answer = await served.post("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", review(good))
    assert answer["response"]["allowed"] is True


async def test_update_of_a_running_jobs_queue_is_denied(served: Served) -> None:
    old = as_the_server_sends(make_job("run", "default"))
    old["spec"]["suspend"] = False
    new = {**old, "metadata": {**old["metadata"], "labels": {"kueue.x-k8s.io/queue-name": "other"}}}
    _, answer = await served.post("/validate-batch-v1-job", review(new, operation="UPDATE", old=old))
    assert answer["response"]["allowed"] is False
    assert "field is immutable" in answer["response"]["status"]["message"]


async def test_conversion_review_round_trips(served: Served) -> None:
    cq = make_cluster_queue("cq").quota("default", "cpu", "4").obj()
    request: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c1", "desiredAPIVersion": "kueue.x-k8s.io/v1beta1", "objects": [cq]},
    }
    status, answer = await served.post(CONVERT_PATH, request)
    assert status == 200
    assert answer["response"]["result"]["status"] == "Success"
    (old,) = answer["response"]["convertedObjects"]
    assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    back = {
        **request,
        "request": {**request["request"], "desiredAPIVersion": "kueue.x-k8s.io/v1beta2", "objects": [old]},
    }
    _, answer = await served.post(CONVERT_PATH, back)
    assert answer["response"]["convertedObjects"] == [cq]
    wrong = {**request, "request": {**request["request"], "desiredAPIVersion": "kueue.x-k8s.io/v9"}}
    _, answer = await served.post(CONVERT_PATH, wrong)
    assert answer["response"]["result"]["status"] == "Failure"
    assert answer["response"]["convertedObjects"] == []


async def test_bad_requests_fail_closed(served: Served) -> None:
    status, text = await served.post("/validate-batch-v1-job", b"{not json")
    assert status == 400
    assert "not JSON" in text
    status, text = await served.post("/validate-batch-v1-job", {"kind": "Pod"})
    assert status == 400
    assert "AdmissionReview" in text
    status, text = await served.post("/validate-batch-v1-job", b"{}", content_type="text/plain")
    assert status == 400
    assert "Content-Type" in text
    bad_op = review(make_job("x", "default"))
    bad_op["request"]["operation"] = "CONNECT"
    status, text = await served.post("/validate-batch-v1-job", bad_op)
    assert status == 400
    assert "operation" in text
    no_object = review(make_job("x", "default"))
    no_object["request"]["object"] = "a string"
    status, answer = await served.post("/validate-batch-v1-job", no_object)
    assert status == 200
    assert answer["response"]["allowed"] is False
    assert answer["response"]["status"]["code"] == 400
    status, _ = await served.post("/validate-nothing", review(make_job("x", "default")))
    assert status == 404
    async with served.session.get(served.url + "/validate-batch-v1-job") as resp:
        assert resp.status == 405


def test_a_webhook_of_an_integration_that_is_off_admits_unchanged() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    (mpod,) = [w for w in WEBHOOKS if w.name == "mpod.kb.io"]
    env = Env(embedded_default())  # the pod integration on
    only_jobs = ReviewHandler(env.manager.admission_hooks(), ["batch/job"])
    answer = only_jobs.review(mpod, review(pod))
    assert answer["response"] == {"uid": "0df28fbd-5f5f-4d8c-9e2b-4a3f9c1d2e01", "allowed": True}
    everything = ReviewHandler(env.manager.admission_hooks())
    patch = base64.b64decode(everything.review(mpod, review(pod))["response"]["patch"])
    assert b"schedulingGates" in patch  # with it on, a queued pod is gated
    env.store.close()


def test_every_webhook_pykueue_install_renders_is_served() -> None:
    from pykueue.controllers.jobs.registry import INTEGRATIONS
    from pykueue.install.webhooks import admission_webhooks

    rendered = {(w.name, w.path, w.operations, w.subresources) for w in admission_webhooks(tuple(INTEGRATIONS))}
    served = {(w.name, w.path, w.operations, w.subresources) for w in WEBHOOKS}
    assert rendered <= served, rendered - served
