"""Calling external admission webhooks from the admission chain, as kube-apiserver calls them.

Owned by ``registry/``. :class:`ExternalAdmission` sits in :class:`pykueue.registry.admission.AdmissionChain`:
after the in-process mutating hooks and defaulting it runs the matching mutating webhooks one after
the other (each sees the previous one's result; a JSONPatch answer is applied and the object defaulted
again; ``reinvocationPolicy: IfNeeded`` webhooks are called once more when a later webhook changed
the object), and after schema validation and the in-process validating hooks it runs the matching
validating webhooks (concurrently, as kube does). The HTTP call itself is the API server's
(:class:`WebhookCaller`, handed in by ``apiserver/``); the registry waits for it through
:func:`pykueue.registry.suspend.wait_for`, so the event loop never blocks on a webhook.

Outcomes, worded as kube-apiserver words them:
- ``allowed: false``: ``admission webhook "<name>" denied the request: <status.message>`` with the
  webhook's code (403 when it gives none below 400) and reason;
- a call that fails (refused, timed out, TLS, not an AdmissionReview, uid mismatch) under
  ``failurePolicy: Fail``: 500 ``Internal error occurred: failed calling webhook "<name>": …``; under
  ``Ignore`` the webhook is skipped;
- a dry-run write calls the webhooks with ``dryRun: true`` (admissionregistration/v1 admits only
  ``sideEffects: None`` or ``NoneOnDryRun``, so every webhook may be called on a dry run);
- ``warnings`` of every answer become the response's ``Warning`` headers.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import cel
import jsonpatch
import orjson

from pykueue.api.meta.errors import ApiError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo

from .suspend import current_request, wait_for
from .webhook_rules import CONFIGURATION_RESOURCES, Webhook, WebhookIndex, labels_match

__all__ = ["CallFailed", "ExternalAdmission", "WebhookCaller", "WebhookReview"]


class CallFailed(Exception):
    """The webhook could not be called or answered nonsense; the text follows kube's ``failed to call webhook: …``."""


class WebhookCaller(Protocol):
    """POSTs an AdmissionReview (or ConversionReview) to a webhook's ``clientConfig``, returns the decoded answer."""

    def __call__(
        self, client_config: JSONDict, review: JSONDict, timeout_seconds: float
    ) -> Coroutine[Any, Any, JSONDict]: ...


@dataclass(frozen=True, slots=True)
class WebhookReview:
    """The parts of one write that an AdmissionReview reports."""

    operation: str
    kind: KindInfo
    namespace: str
    name: str
    subresource: str
    dry_run: bool


@cache
def _rejection(code: int, reason: str) -> type[ApiError]:
    """An ApiError class answering with a webhook's own code and reason."""
    return type("WebhookRejection", (ApiError,), {"code": code, "reason": reason})


def denial(name: str, status: Any) -> ApiError:
    """kube's error for a webhook that answered ``allowed: false``."""
    status = dict(status) if isinstance(status, dict) else {}
    code = status.get("code")
    code = code if isinstance(code, int) and code >= 400 else 403
    reason = str(status.get("reason") or ("Forbidden" if code == 403 else ""))
    denied = f'admission webhook "{name}" denied the request'
    if status.get("message"):
        message = f"{denied}: {status['message']}"
    elif status.get("reason"):
        message = f"{denied}: {status['reason']}"
    else:
        message = f"{denied} without explanation"
    details = status.get("details") if isinstance(status.get("details"), dict) else None
    return _rejection(code, reason)(message, details=details)


@cache
def _program(expression: str) -> Any:
    return cel.compile(expression)


def _conditions_hold(hook: Webhook, request: JSONDict) -> bool:
    """Do all the webhook's ``matchConditions`` (CEL over ``object``, ``oldObject``, ``request``) hold?

    False as soon as one is false; an expression that fails to evaluate (and none false) fails the
    call, which ``failurePolicy`` then decides (raised as the error it is)."""
    if not hook.match_conditions:
        return True
    context = cel.Context()
    context.add_variable("object", request.get("object"))
    context.add_variable("oldObject", request.get("oldObject"))
    context.add_variable("request", request)
    error: str | None = None
    for condition in hook.match_conditions:
        name, expression = str(condition.get("name") or ""), str(condition.get("expression") or "")
        try:
            if _program(expression).execute(context) is not True:
                return False
        except Exception as exc:  # the CEL library raises its own error types (and KeyError, ...)
            error = error or f'match condition "{name}": {exc}'
    if error is not None:
        raise _ConditionError(error)
    return True


class _ConditionError(Exception):
    pass


def call_failure(name: str, detail: str) -> ApiError:
    text = f'failed calling webhook "{name}": {detail}'
    return ApiError(f"Internal error occurred: {text}", details={"causes": [{"message": text}]})


class ExternalAdmission:
    """The webhooks of one registry's stored configurations, called for its writes."""

    def __init__(self, index: WebhookIndex, namespace_labels: Callable[[str], JSONDict]) -> None:
        self.index = index
        self.caller: WebhookCaller | None = None
        self._namespace_labels = namespace_labels

    # ------------------------------------------------------------------ the two phases

    def mutate(
        self, review: WebhookReview, obj: JSONDict, old: JSONDict | None, default: Callable[[JSONDict], JSONDict]
    ) -> JSONDict:
        """``obj`` (storage version) after every matching mutating webhook."""
        hooks = self._matching(review, obj, old, mutating=True)
        if not hooks:
            return obj
        seen_after: dict[str, bytes] = {}
        for hook, version in hooks:
            obj = self._mutate_once(hook, version, review, obj, old, default)
            seen_after[hook.name] = orjson.dumps(obj)
        final = orjson.dumps(obj)
        for hook, version in hooks:  # reinvocation: once, for those that did not see the last change
            if hook.reinvocation == "IfNeeded" and seen_after[hook.name] != final:
                obj = self._mutate_once(hook, version, review, obj, old, default)
        return obj

    def validate(self, review: WebhookReview, obj: JSONDict, old: JSONDict | None) -> None:
        hooks = self._matching(review, obj, old, mutating=False)
        if not hooks:
            return
        requests = []
        for hook, version in hooks:
            body = self._review(hook, version, review, obj, old)
            if self._conditions(hook, body):
                requests.append((hook, body))
        if not requests:
            return
        answers = wait_for(_gather([self._call(hook, body) for hook, body in requests]))
        for (hook, _), answer in zip(requests, answers, strict=True):
            if isinstance(answer, ApiError):
                if hook.failure_policy == "Ignore":
                    continue
                raise answer
            if answer is not None and not answer.get("allowed"):
                raise denial(hook.name, answer.get("status"))

    # ------------------------------------------------------------------ one webhook

    def _matching(
        self, review: WebhookReview, obj: JSONDict, old: JSONDict | None, *, mutating: bool
    ) -> list[tuple[Webhook, str]]:
        candidates = self.index.candidates(review.kind, mutating=mutating)
        if not candidates or review.kind.resource_key in CONFIGURATION_RESOURCES:
            # as in kube, webhook configurations never go through webhooks (a broken webhook could
            # otherwise lock its own configuration in place)
            return []
        version = current_request().version or review.kind.storage_version
        if version not in review.kind.versions:
            version = review.kind.storage_version
        matched: list[tuple[Webhook, str]] = []
        for hook in candidates:
            wanted = hook.version_for(review.kind, version, review.operation, review.subresource)
            if wanted is None or not self._selected(hook, review, obj, old):
                continue
            matched.append((hook, wanted))
        return matched

    def _selected(self, hook: Webhook, review: WebhookReview, obj: JSONDict, old: JSONDict | None) -> bool:
        if hook.object_selector:
            labels = [(o.get("metadata") or {}).get("labels") or {} for o in (obj, old) if o is not None]
            if not any(labels_match(hook.object_selector, lab) for lab in labels):
                return False
        if hook.namespace_selector:
            kind = review.kind
            if kind.resource_key == "namespaces":
                ns_labels = (obj.get("metadata") or {}).get("labels") or {}
            elif kind.namespaced:
                ns_labels = self._namespace_labels(review.namespace)
            else:
                return True
            if not labels_match(hook.namespace_selector, ns_labels):
                return False
        return True

    def _mutate_once(
        self,
        hook: Webhook,
        version: str,
        review: WebhookReview,
        obj: JSONDict,
        old: JSONDict | None,
        default: Callable[[JSONDict], JSONDict],
    ) -> JSONDict:
        body = self._review(hook, version, review, obj, old)
        if not self._conditions(hook, body):
            return obj
        answer = wait_for(self._call(hook, body))
        if isinstance(answer, ApiError):
            if hook.failure_policy == "Ignore":
                return obj
            raise answer
        if answer is None:
            return obj
        if not answer.get("allowed"):
            raise denial(hook.name, answer.get("status"))
        patch = answer.get("patch")
        if not patch or review.operation == "DELETE":  # nothing to patch on a deletion
            return obj
        if answer.get("patchType") != "JSONPatch":
            raise call_failure(hook.name, f'unsupported patch type "{answer.get("patchType")}"')
        try:
            operations = orjson.loads(base64.b64decode(patch, validate=True))
            patched = jsonpatch.apply_patch(body["request"]["object"], operations)
        except (
            binascii.Error,
            ValueError,
            TypeError,
            jsonpatch.JsonPatchException,
            jsonpatch.JsonPointerException,
        ) as exc:
            raise ApiError(f"Internal error occurred: {exc}") from None
        if not isinstance(patched, dict):
            raise ApiError("Internal error occurred: the webhook's patch did not produce an object")
        kind = review.kind
        if version != kind.storage_version:
            patched = kind.convert(patched, kind.storage_version)
        return default(patched)

    def _conditions(self, hook: Webhook, body: JSONDict) -> bool:
        """Should the webhook be called? (A condition that cannot be evaluated fails a Fail webhook.)"""
        try:
            return _conditions_hold(hook, body["request"])
        except _ConditionError as exc:
            if hook.failure_policy == "Ignore":
                return False
            raise call_failure(hook.name, f"match condition evaluation error: {exc}") from None

    def _review(
        self, hook: Webhook, version: str, review: WebhookReview, obj: JSONDict, old: JSONDict | None
    ) -> JSONDict:
        kind = review.kind
        request_version = current_request().version or kind.storage_version

        def shown(o: JSONDict | None) -> JSONDict | None:
            if o is None or version == kind.storage_version:
                return o
            return kind.convert(o, version)

        operation = review.operation
        options_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}[operation]
        options: JSONDict = {"kind": options_kind, "apiVersion": "meta.k8s.io/v1"}
        if review.dry_run:
            options["dryRun"] = ["All"]
        request: JSONDict = {
            "uid": str(uuid.uuid4()),
            "kind": {"group": kind.group, "version": version, "kind": kind.kind},
            "resource": {"group": kind.group, "version": version, "resource": kind.plural},
            "requestKind": {"group": kind.group, "version": request_version, "kind": kind.kind},
            "requestResource": {"group": kind.group, "version": request_version, "resource": kind.plural},
            "name": review.name,
            "operation": operation,
            "userInfo": current_request().user.to_json(),
            "object": None if operation == "DELETE" else shown(obj),
            "oldObject": shown(old),
            "dryRun": review.dry_run,
            "options": options,
        }
        if review.subresource:
            request["subResource"] = review.subresource
            request["requestSubResource"] = review.subresource
        if kind.namespaced:
            request["namespace"] = review.namespace
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}

    async def _call(self, hook: Webhook, body: JSONDict) -> JSONDict | ApiError | None:
        """The webhook's ``response`` (its warnings recorded), or the error its failure is."""
        if "v1" not in hook.review_versions:
            return call_failure(hook.name, "webhook does not accept v1 AdmissionReview")
        if self.caller is None:
            return call_failure(hook.name, "failed to call webhook: this server calls no webhooks")
        try:
            answer = await self.caller(hook.client_config, body, float(hook.timeout_seconds))
        except CallFailed as exc:
            return call_failure(hook.name, str(exc))
        response = answer.get("response") if isinstance(answer, dict) else None
        if answer.get("kind") != "AdmissionReview" or not isinstance(response, dict):
            return call_failure(
                hook.name,
                "received invalid webhook response: the response is not an "
                "admission.k8s.io/v1 AdmissionReview with a response",
            )
        uid = body["request"]["uid"]
        if response.get("uid") != uid:
            return call_failure(hook.name, f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
        for warning in response.get("warnings") or ():
            if isinstance(warning, str) and warning:
                current_request().warnings.append(warning)
        return response


async def _gather(calls: list[Coroutine[Any, Any, JSONDict | ApiError | None]]) -> list[JSONDict | ApiError | None]:
    return list(await asyncio.gather(*calls))
