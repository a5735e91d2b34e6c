"""CRD conversion webhooks: ``spec.conversion.strategy: Webhook`` with ``ConversionReview`` v1.

Owned by ``registry/``; :class:`pykueue.registry.crd_controller.CrdController` wraps the kind of every
CRD whose conversion strategy is ``Webhook`` with :func:`webhook_conversion`. Then, as in kube, an
object read or written in a version other than the one it is stored in is converted by the webhook:
a ``ConversionReview`` (``desiredAPIVersion``, ``objects``) is POSTed to
``spec.conversion.webhook.clientConfig`` (url, or a service on loopback: see
:mod:`pykueue.apiserver.webhook_client`), and the answer must have ``result.status: Success`` and one
converted object of the desired apiVersion and the same kind. As kube-apiserver does, only labels
and annotations may change in the converted object's metadata: the rest is restored from the input.
Failures answer 500 ``conversion webhook for <group>/<version>, Kind=<Kind> failed: …``.

The call waits through :func:`pykueue.registry.suspend.wait_for`: inside an API request it does not
block the event loop; elsewhere (a watch serving a non-storage version) it blocks for the call. A list
is converted in one review, as kube does; a single object in one of its own.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import Any

from pykueue.api.meta.errors import ApiError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo

from .suspend import wait_for
from .webhook_dispatch import CallFailed, WebhookCaller

__all__ = ["Batch", "webhook_conversion"]

_TIMEOUT_SECONDS = 30.0
_CALL_PREFIX = "failed to call webhook: "


def _dict(value: Any) -> JSONDict:
    return value if isinstance(value, dict) else {}


Batch = Callable[[list[JSONDict], str], list[JSONDict]]
"""Objects (one kind) -> the same objects in the given version, through one ConversionReview."""


def webhook_conversion(
    kind: KindInfo, crd: JSONDict, caller: Callable[[], WebhookCaller | None]
) -> tuple[KindInfo, Batch | None]:
    """``kind`` converting through the CRD's conversion webhook, and the batch conversion a list uses
    (``kind`` itself and None for another strategy)."""
    conversion = _dict(_dict(crd.get("spec")).get("conversion"))
    if conversion.get("strategy") != "Webhook":
        return kind, None
    webhook = _dict(conversion.get("webhook"))
    client_config = _dict(webhook.get("clientConfig"))
    review_versions = [v for v in webhook.get("conversionReviewVersions") or () if isinstance(v, str)]
    group = kind.group

    def convert_many(objects: list[JSONDict], to_version: str) -> list[JSONDict]:
        desired = f"{group}/{to_version}"
        pending = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != desired]
        if not pending:
            return objects
        first = objects[pending[0]]
        what = f"{first.get('apiVersion') or ''}, Kind={first.get('kind') or kind.kind}"

        def failed(detail: str) -> ApiError:
            return ApiError(f"conversion webhook for {what} failed: {detail}")

        if "v1" not in review_versions:
            raise failed("the webhook accepts no ConversionReview version this server sends (v1)")
        call = caller()
        if call is None:
            raise failed("this server calls no webhooks")
        uid = str(uuid.uuid4())
        sent = [objects[i] for i in pending]
        review = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": sent},
        }
        try:
            answer = wait_for(call(client_config, review, _TIMEOUT_SECONDS))
        except CallFailed as exc:
            raise failed(str(exc).removeprefix(_CALL_PREFIX)) from None
        response = _dict(answer.get("response"))
        if answer.get("kind") != "ConversionReview" or not response:
            raise failed("the response is not an apiextensions.k8s.io/v1 ConversionReview")
        if response.get("uid") != uid:
            raise failed(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
        result = _dict(response.get("result"))
        if result.get("status") != "Success":
            raise failed(str(result.get("message") or "the webhook reported a failure"))
        converted = response.get("convertedObjects")
        count = len(converted) if isinstance(converted, list) else 0
        if not isinstance(converted, list) or count != len(sent):
            raise failed(f"expected {len(sent)} converted objects, got {count}")
        out = list(objects)
        for index, given, new in zip(pending, sent, converted, strict=True):
            out[index] = _checked(given, new, desired, failed)
        return out

    def convert(obj: JSONDict, to_version: str) -> JSONDict:
        return convert_many([obj], to_version)[0]

    return dataclasses.replace(kind, convert=convert), convert_many


def _checked(given: JSONDict, new: Any, desired: str, failed: Callable[[str], ApiError]) -> JSONDict:
    """A converted object as kube accepts it: the desired apiVersion, the same kind, and only labels
    and annotations changed in its metadata (the rest is restored from ``given``)."""
    if not isinstance(new, dict):
        raise failed("a converted object is not an object")
    if new.get("apiVersion") != desired:
        raise failed(f"invalid apiVersion {new.get('apiVersion')!r} in the converted object, expected {desired!r}")
    if new.get("kind") != given.get("kind"):
        raise failed(f"invalid kind {new.get('kind')!r} in the converted object, expected {given.get('kind')!r}")
    metadata = dict(_dict(given.get("metadata")))
    new_meta = _dict(new.get("metadata"))
    for key in ("labels", "annotations"):  # all a webhook may change in metadata
        if new_meta.get(key):
            metadata[key] = new_meta[key]
        else:
            metadata.pop(key, None)
    return {**new, "metadata": metadata}
