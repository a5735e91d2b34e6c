"""External admission webhooks in the registry, with the HTTPS call replaced by a recording caller:
which webhooks a write calls (rules, scope, wildcards, matchPolicy, matchConditions), in what order,
what they are sent, and that a write with no configuration never reaches the caller. The calls over
real HTTPS are in ``tests/e2e/test_admission_webhooks.py``."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from tests.unit.registry.conftest import kind
from tests.unit.registry.test_registry_crds import install, widget

from pykueue.api.meta.errors import ApiError
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.local import LocalClient
from pykueue.registry import Registry
from pykueue.registry.suspend import RequestContext, reset_request, run_suspendable, set_request

JSONDict = dict[str, Any]


class Recorder:
    """Answers every review with ``allowed: true`` (or ``answers[url]``) and records it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, JSONDict]] = []
        self.answers: dict[str, JSONDict] = {}

    async def __call__(self, client_config: JSONDict, review: JSONDict, timeout_seconds: float) -> JSONDict:
        url = client_config["url"]
        self.calls.append((url, review))
        response = {"uid": review["request"]["uid"], "allowed": True, **self.answers.get(url, {})}
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}

    @property
    def urls(self) -> list[str]:
        return [url for url, _ in self.calls]


@pytest.fixture
def recorder(registry: Registry) -> Recorder:
    caller = Recorder()
    registry.set_webhook_caller(caller)
    return caller


def _configure(registry: Registry, kind_name: str, name: str, hooks: list[JSONDict]) -> None:
    plural = "mutatingwebhookconfigurations" if kind_name.startswith("Mutating") else "validatingwebhookconfigurations"
    config_kind = kind(registry, "admissionregistration.k8s.io", "v1", plural)
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind_name,
        "metadata": {"name": name},
        "webhooks": hooks,
    }
    registry.create(config_kind, "", body, version="v1")


def _hook(url: str, rules: list[JSONDict], **extra: Any) -> JSONDict:
    return {
        "name": f"{url.rsplit('/', 1)[-1]}.test.pykueue.io",
        "clientConfig": {"url": url},
        "rules": rules,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


def _rule(
    groups: list[str],
    versions: list[str],
    resources: list[str],
    *,
    operations: list[str] | None = None,
    scope: str = "*",
) -> JSONDict:
    return {
        "operations": operations or ["*"],
        "apiGroups": groups,
        "apiVersions": versions,
        "resources": resources,
        "scope": scope,
    }


def _configmap(name: str, **labels: str) -> JSONDict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {}}


def test_no_configuration_no_call(registry: Registry, recorder: Recorder) -> None:
    assert not registry.may_call_webhooks
    registry.create(kind(registry, "", "v1", "configmaps"), "default", _configmap("a"), version="v1")
    assert recorder.calls == []


def test_rules_scope_and_wildcards(registry: Registry, recorder: Recorder) -> None:
    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "rules",
        [
            _hook("https://h/cm", [_rule([""], ["v1"], ["configmaps"], operations=["CREATE"])]),
            _hook("https://h/cluster-only", [_rule(["*"], ["*"], ["*"], scope="Cluster")]),
            _hook("https://h/all-status", [_rule(["*"], ["*"], ["*/status"])]),
            _hook("https://h/pods", [_rule([""], ["v1"], ["pods"])]),
        ],
    )
    assert registry.may_call_webhooks
    configmaps = kind(registry, "", "v1", "configmaps")
    registry.create(configmaps, "default", _configmap("a"), version="v1")
    assert recorder.urls == ["https://h/cm"]
    registry.update(configmaps, "default", "a", _configmap("a", x="y"), version="v1")  # UPDATE: not in the rule
    assert recorder.urls == ["https://h/cm"]
    namespaces = kind(registry, "", "v1", "namespaces")
    registry.create(namespaces, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n1"}}, version="v1")
    assert recorder.urls[-1] == "https://h/cluster-only"
    recorder.calls.clear()
    registry.patch(
        namespaces,
        "",
        "n1",
        b'{"status":{"phase":"Active"}}',
        "application/merge-patch+json",
        version="v1",
        subresource="status",
    )
    assert recorder.urls == ["https://h/all-status"]
    assert recorder.calls[0][1]["request"]["subResource"] == "status"


def test_webhook_configurations_never_go_through_webhooks(registry: Registry, recorder: Recorder) -> None:
    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "everything",
        [_hook("https://h/all", [_rule(["*"], ["*"], ["*/*", "*"])])],
    )
    recorder.answers["https://h/all"] = {"allowed": False, "status": {"message": "no"}}
    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "second",
        [_hook("https://h/other", [_rule(["nothing.example"], ["v1"], ["x"])])],
    )
    assert recorder.calls == []
    with pytest.raises(ApiError, match=re.escape('admission webhook "all.test.pykueue.io" denied the request: no')):
        registry.create(kind(registry, "", "v1", "configmaps"), "default", _configmap("a"), version="v1")


def test_mutating_webhooks_run_in_configuration_name_order(registry: Registry, recorder: Recorder) -> None:
    rules = [_rule([""], ["v1"], ["configmaps"])]
    _configure(registry, "MutatingWebhookConfiguration", "zz-last", [_hook("https://h/z", rules)])
    _configure(
        registry,
        "MutatingWebhookConfiguration",
        "aa-first",
        [_hook("https://h/a1", rules), _hook("https://h/a2", rules)],
    )
    _configure(registry, "ValidatingWebhookConfiguration", "00-validating", [_hook("https://h/v", rules)])
    registry.create(kind(registry, "", "v1", "configmaps"), "default", _configmap("a"), version="v1")
    assert recorder.urls == ["https://h/a1", "https://h/a2", "https://h/z", "https://h/v"]


def test_match_policy_equivalent_sends_the_rules_version_and_exact_skips(
    registry: Registry, recorder: Recorder
) -> None:
    widgets = install(registry)
    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "policies",
        [
            _hook("https://h/equivalent", [_rule(["example.com"], ["v1beta1"], ["widgets"])]),
            _hook("https://h/exact", [_rule(["example.com"], ["v1beta1"], ["widgets"])], matchPolicy="Exact"),
        ],
    )
    token = set_request(RequestContext(version="v1"))
    try:
        registry.create(widgets, "default", widget("w"), version="v1")
    finally:
        reset_request(token)
    assert recorder.urls == ["https://h/equivalent"]
    request = recorder.calls[0][1]["request"]
    assert request["kind"] == {"group": "example.com", "version": "v1beta1", "kind": "Widget"}
    assert request["requestKind"]["version"] == "v1"
    assert request["object"]["apiVersion"] == "example.com/v1beta1"


def test_match_conditions(registry: Registry, recorder: Recorder) -> None:
    rules = [_rule([""], ["v1"], ["configmaps"])]
    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "conditions",
        [
            _hook(
                "https://h/labelled",
                rules,
                matchConditions=[
                    {"name": "labelled", "expression": "'check' in object.metadata.labels"},
                    {"name": "creating", "expression": "request.operation == 'CREATE'"},
                ],
            ),
            _hook(
                "https://h/broken-ignore",
                rules,
                failurePolicy="Ignore",
                matchConditions=[{"name": "broken", "expression": "object.nope.deeper == 1"}],
            ),
        ],
    )
    configmaps = kind(registry, "", "v1", "configmaps")
    registry.create(configmaps, "default", _configmap("plain"), version="v1")
    registry.create(configmaps, "default", _configmap("checked", check="yes"), version="v1")
    assert recorder.urls == ["https://h/labelled"]
    assert recorder.calls[0][1]["request"]["name"] == "checked"

    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "broken-fail",
        [_hook("https://h/broken-fail", rules, matchConditions=[{"name": "broken", "expression": "object.nope.x"}])],
    )
    with pytest.raises(
        ApiError,
        match=re.escape(
            'failed calling webhook "broken-fail.test.pykueue.io": match condition '
            'evaluation error: match condition "broken"'
        ),
    ):
        registry.create(configmaps, "default", _configmap("third"), version="v1")


def test_a_mutating_webhook_can_deny_a_delete(registry: Registry, recorder: Recorder) -> None:
    _configure(
        registry,
        "MutatingWebhookConfiguration",
        "guard",
        [_hook("https://h/guard", [_rule([""], ["v1"], ["configmaps"], operations=["DELETE"])])],
    )
    recorder.answers["https://h/guard"] = {"allowed": False, "status": {"message": "keep it"}}
    configmaps = kind(registry, "", "v1", "configmaps")
    registry.create(configmaps, "default", _configmap("kept"), version="v1")
    with pytest.raises(ApiError, match=re.escape('admission webhook "guard.test.pykueue.io" denied the request: keep')):
        registry.delete(configmaps, "default", "kept", version="v1")
    assert registry.get(configmaps, "default", "kept", version="v1")
    assert recorder.calls[-1][1]["request"]["operation"] == "DELETE"


def test_delete_sends_the_old_object(registry: Registry, recorder: Recorder) -> None:
    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "deletes",
        [_hook("https://h/delete", [_rule([""], ["v1"], ["configmaps"], operations=["DELETE"])])],
    )
    configmaps = kind(registry, "", "v1", "configmaps")
    registry.create(configmaps, "default", _configmap("gone"), version="v1")
    registry.delete(configmaps, "default", "gone", version="v1")
    request = recorder.calls[-1][1]["request"]
    assert request["operation"] == "DELETE"
    assert request["object"] is None
    assert request["oldObject"]["metadata"]["name"] == "gone"
    assert request["options"]["kind"] == "DeleteOptions"


def test_a_suspended_write_lets_the_loop_run_while_the_webhook_answers(registry: Registry) -> None:
    order: list[str] = []
    release = asyncio.Event()
    called = asyncio.Event()

    async def slow(client_config: JSONDict, review: JSONDict, timeout_seconds: float) -> JSONDict:
        order.append("webhook called")
        called.set()
        await asyncio.wait_for(release.wait(), 10)  # a blocked loop never releases it: fail, not hang
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], "allowed": True},
        }

    registry.set_webhook_caller(slow)
    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "slow",
        [_hook("https://h/slow", [_rule([""], ["v1"], ["configmaps"])])],
    )
    configmaps = kind(registry, "", "v1", "configmaps")

    async def scenario() -> None:
        write = asyncio.ensure_future(
            run_suspendable(lambda: registry.create(configmaps, "default", _configmap("waiting"), version="v1"))
        )
        await called.wait()
        order.append("loop ran meanwhile")
        assert not write.done()
        release.set()
        created, _ = await write
        order.append(f"stored {created['metadata']['name']}")

    asyncio.run(scenario())
    assert order == ["webhook called", "loop ran meanwhile", "stored waiting"]
    assert registry.get(configmaps, "default", "waiting", version="v1")


def test_an_in_process_client_write_waits_for_its_webhook_without_blocking_the_loop(registry: Registry) -> None:
    order: list[str] = []
    release = asyncio.Event()
    called = asyncio.Event()

    async def slow(client_config: JSONDict, review: JSONDict, timeout_seconds: float) -> JSONDict:
        called.set()
        await asyncio.wait_for(release.wait(), 10)  # a blocked loop never releases it: fail, not hang
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], "allowed": True},
        }

    registry.set_webhook_caller(slow)
    _configure(
        registry,
        "ValidatingWebhookConfiguration",
        "slow",
        [_hook("https://h/slow", [_rule([""], ["v1"], ["configmaps"])])],
    )
    client = LocalClient(registry)
    configmaps = GroupVersionResource("", "v1", "configmaps")

    async def scenario() -> None:
        write = asyncio.ensure_future(client.create(configmaps, _configmap("in-process"), "default"))
        await called.wait()
        order.append("loop ran meanwhile")
        release.set()
        created = await write
        order.append(f"stored {created['metadata']['name']}")

    asyncio.run(scenario())
    assert order == ["loop ran meanwhile", "stored in-process"]
