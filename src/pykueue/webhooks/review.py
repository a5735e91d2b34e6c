"""Answering ``AdmissionReview`` (admission.k8s.io/v1) and ``ConversionReview`` (apiextensions.k8s.io/v1).

Owned by ``webhooks/``; the HTTPS server (:mod:`pykueue.webhooks.server`) hands each decoded body to
:class:`ReviewHandler`. The decisions are the ones the embedded API server makes in process: the same
admission hooks (``ControllerManager.admission_hooks()``: suspend a managed job, default its queue,
add the ``resource-in-use`` finalizer, the job label rules), then the kind's defaulting, and the
validation rules that belong to this webhook (errors tagged with its name). A mutating answer is a
JSONPatch from the object as received to the object as admitted (``jsonpatch.make_patch``), so
applying it gives exactly what the in-process chain would store. A denial carries the webhook's
message and code 403, which the API server reports as ``admission webhook "<name>" denied the
request: <message>``.

Invariant: never raises on a well-formed review: a bad object or a failing hook is an answer
(``allowed: false``, code 400 or 500), not an exception; a body that is not a review raises
:class:`BadReview` (the server answers 400).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import jsonpatch
import orjson

from pykueue.api.catalogue import build_catalogue
from pykueue.api.kindset import KindSet
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.registry.admission import AdmissionChain, AdmissionHook, AdmissionRequest, Operation
from pykueue.webhooks.catalogue import Webhook

__all__ = ["BadReview", "ReviewHandler", "convert_review", "denial_message"]

log = logging.getLogger(__name__)

ADMISSION_API = "admission.k8s.io/v1"
CONVERSION_API = "apiextensions.k8s.io/v1"
_OPERATIONS: tuple[Operation, ...] = ("CREATE", "UPDATE", "DELETE")


class BadReview(ValueError):
    """The body is not a review this server can answer (the server answers 400 with this message)."""


def denial_message(errors: list[FieldError]) -> str:
    """The message of a webhook denial, as Kueue's webhooks word an aggregate of field errors."""
    messages = list(dict.fromkeys(f"{e.field}: {e.message}" if e.field else e.message for e in errors))
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _dict(value: Any, what: str) -> JSONDict:
    if not isinstance(value, dict):
        raise BadReview(f"{what} must be an object")
    return value


def _review_request(body: Any) -> JSONDict:
    review = _dict(body, "the body")
    if review.get("apiVersion") != ADMISSION_API or review.get("kind") != "AdmissionReview":
        raise BadReview(
            f"expected an AdmissionReview of {ADMISSION_API}, got kind {review.get('kind')!r} "
            f"of {review.get('apiVersion')!r}"
        )
    request = _dict(review.get("request"), "request")
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        raise BadReview("request.uid must be a non-empty string")
    return request


def _answer(uid: str, **fields: Any) -> JSONDict:
    return {"apiVersion": ADMISSION_API, "kind": "AdmissionReview", "response": {"uid": uid, **fields}}


def _refused(uid: str, code: int, reason: str, message: str) -> JSONDict:
    status = {"metadata": {}, "status": "Failure", "code": code, "reason": reason, "message": message}
    return _answer(uid, allowed=False, status=status)


class ReviewHandler:
    """Answers AdmissionReviews for :class:`Webhook` records with a set of admission hooks."""

    def __init__(
        self, hooks: list[AdmissionHook], integrations: Iterable[str] | None = None, *, kinds: KindSet | None = None
    ) -> None:
        self._kinds = kinds if kinds is not None else _catalogue()
        # observe-only hooks (the NotQueued warning) watch what the API server stores: not a webhook's job
        self._chain = AdmissionChain([replace(h, observe=None) for h in hooks if h.mutate or h.validate])
        self._integrations = None if integrations is None else frozenset(integrations)
        """Enabled job integrations (None: all). A webhook of another one lets everything through
        unchanged, as if it were not configured: a stale webhook configuration must not block Pods."""

    def review(self, webhook: Webhook, body: Any) -> JSONDict:
        """The ``AdmissionReview`` answering ``body`` for ``webhook``; raises :class:`BadReview`."""
        request = _review_request(body)
        uid = request["uid"]
        operation = request.get("operation")
        if operation not in _OPERATIONS:
            raise BadReview(f"request.operation {operation!r} is not CREATE, UPDATE or DELETE")
        subresource = str(request.get("subResource") or "")
        if operation not in webhook.operations or subresource not in webhook.subresources:
            return _answer(uid, allowed=True)  # not this webhook's business (a too-wide rule)
        if webhook.integration and self._integrations is not None and webhook.integration not in self._integrations:
            return _answer(uid, allowed=True)  # its integration is off here
        info = self._kinds.by_kind(webhook.group, webhook.kind)
        if info is None:
            return _refused(uid, 500, "InternalError", f"{webhook.kind}.{webhook.group} is not a known kind")
        obj = request.get("object")
        old = request.get("oldObject")
        if not isinstance(obj, dict) or (old is not None and not isinstance(old, dict)):
            if operation == "DELETE":
                return _answer(uid, allowed=True)  # Kueue's webhooks do not look at deletes
            return _refused(uid, 400, "BadRequest", "request.object must be an object")
        try:
            if webhook.mutating:
                return self._mutate(uid, info, operation, request, obj, old, subresource)
            return self._validate(uid, webhook, info, operation, request, obj, old, subresource)
        except Exception as exc:  # a hook that fails is an internal error of this webhook, not a crash
            log.exception(
                "webhook %s failed on %s %s/%s",
                webhook.name,
                operation,
                request.get("namespace", ""),
                request.get("name", ""),
            )
            return _refused(uid, 500, "InternalError", f"webhook {webhook.name} failed: {exc}")

    def _admission_request(
        self,
        info: KindInfo,
        operation: Operation,
        request: JSONDict,
        obj: JSONDict,
        old: JSONDict | None,
        subresource: str,
    ) -> AdmissionRequest:
        storage = info.storage_version
        metadata = obj.get("metadata")
        meta: JSONDict = metadata if isinstance(metadata, dict) else {}
        return AdmissionRequest(
            operation=operation,
            kind=info,
            namespace=str(request.get("namespace") or meta.get("namespace") or ""),
            name=str(request.get("name") or meta.get("name") or ""),
            object=_in_version(info, obj, storage),
            old_object=_in_version(info, old, storage) if old is not None else None,
            subresource=subresource,
            dry_run=bool(request.get("dryRun")),
        )

    def _mutate(
        self,
        uid: str,
        info: KindInfo,
        operation: Operation,
        request: JSONDict,
        obj: JSONDict,
        old: JSONDict | None,
        subresource: str,
    ) -> JSONDict:
        admission = self._admission_request(info, operation, request, obj, old, subresource)
        admitted = info.default(self._chain.mutate(admission))
        admitted = _in_version(info, admitted, _version_of(obj) or info.storage_version)
        operations = jsonpatch.make_patch(obj, admitted).patch
        if not operations:
            return _answer(uid, allowed=True)
        patch = base64.b64encode(orjson.dumps(operations)).decode()
        return _answer(uid, allowed=True, patchType="JSONPatch", patch=patch)

    def _validate(
        self,
        uid: str,
        webhook: Webhook,
        info: KindInfo,
        operation: Operation,
        request: JSONDict,
        obj: JSONDict,
        old: JSONDict | None,
        subresource: str,
    ) -> JSONDict:
        admission = self._admission_request(info, operation, request, obj, old, subresource)
        errors = [e for e in info.validate(admission.object, admission.old_object) if e.webhook == webhook.name]
        for hook in self._chain.hooks:
            if hook.validate is not None and hook.applies(admission):
                errors.extend(e for e in hook.validate(admission) if e.webhook == webhook.name)
        if errors:
            return _refused(uid, 403, "Forbidden", denial_message(errors))
        return _answer(uid, allowed=True)


_CATALOGUE: list[KindSet] = []


def _catalogue() -> KindSet:
    """Every kind pykueue knows, built once (the conversion webhook needs only Kueue's)."""
    if not _CATALOGUE:
        _CATALOGUE.append(build_catalogue())
    return _CATALOGUE[0]


def _version_of(obj: JSONDict) -> str:
    api_version = str(obj.get("apiVersion") or "")
    return api_version.rsplit("/", 1)[-1] if api_version else ""


def _in_version(info: KindInfo, obj: JSONDict, version: str) -> JSONDict:
    if _version_of(obj) in ("", version) or version not in info.versions:
        return obj
    return info.convert(obj, version)


def convert_review(body: Any, kinds: KindSet | None = None) -> JSONDict:
    """The ``ConversionReview`` answering ``body`` (Kueue's CRDs, v1beta1 <-> v1beta2); raises BadReview."""
    review = _dict(body, "the body")
    if review.get("apiVersion") != CONVERSION_API or review.get("kind") != "ConversionReview":
        raise BadReview(
            f"expected a ConversionReview of {CONVERSION_API}, got kind {review.get('kind')!r} "
            f"of {review.get('apiVersion')!r}"
        )
    request = _dict(review.get("request"), "request")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadReview("request.uid must be a non-empty string")
    desired = str(request.get("desiredAPIVersion") or "")
    objects = request.get("objects")
    if not isinstance(objects, list):
        raise BadReview("request.objects must be a list")
    group, _, version = desired.rpartition("/")
    converted: list[JSONDict] = []
    problem = ""
    for index, obj in enumerate(objects):
        kind = obj.get("kind") if isinstance(obj, dict) else None
        info = (kinds or _catalogue()).by_kind(group, kind) if isinstance(kind, str) and group else None
        if info is None or version not in info.versions or not isinstance(obj, dict):
            problem = f"objects[{index}]: cannot convert {kind!r} to {desired!r}"
            break
        try:
            converted.append(info.convert(obj, version))
        except Exception as exc:  # a malformed object is this review's failure, not the server's
            problem = f"objects[{index}]: {exc}"
            break
    response: JSONDict = {"uid": uid}
    if problem:
        response.update(convertedObjects=[], result={"metadata": {}, "status": "Failure", "message": problem})
    else:
        response.update(convertedObjects=converted, result={"metadata": {}, "status": "Success"})
    return {"apiVersion": CONVERSION_API, "kind": "ConversionReview", "response": response}
