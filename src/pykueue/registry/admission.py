"""The admission chain: mutating hooks, defaulting, mutating webhooks, validation, validating hooks
and validating webhooks.

Owned by ``registry/``. :class:`pykueue.registry.Registry` runs :func:`AdmissionChain.admit` on
every create and update (main resource and subresources alike) before metadata is finalised and
the object reaches the store. Later layers plug in behaviour without touching the registry
("a Job with a queue-name label is created suspended", finalizer-adding hooks) by calling
``Registry.add_admission_hook``.

Invariant: hooks see (and return) objects in the kind's *storage* version; a mutating hook never
mutates its input in place (the chain hands each hook a private copy); a validating hook cannot
change the object. Any validation failure aborts the write before anything is stored: with one 422
``Invalid`` listing every cause the schema and the kind's built-in rules found, or, when only
validating webhooks (errors tagged ``FieldError.webhook``) object, with the 403 kube-apiserver
answers for a webhook denial (``WebhookDenied``), as the webhooks never run on what the schema
already refused. External webhooks (the stored Mutating/ValidatingWebhookConfigurations, see
:mod:`.webhook_dispatch`) run after their in-process counterparts, and only when one is configured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pykueue.api.meta.errors import Invalid, WebhookDenied
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy_strict as clone
from pykueue.api.meta.kind_info import KindInfo

from .webhook_dispatch import ExternalAdmission, WebhookReview

__all__ = ["AdmissionChain", "AdmissionHook", "AdmissionRequest", "Operation", "clone"]

Operation = Literal["CREATE", "UPDATE", "DELETE"]


@dataclass(frozen=True, slots=True)
class AdmissionRequest:
    """What a hook is told about one write. ``object`` is in the storage version."""

    operation: Operation
    kind: KindInfo
    namespace: str
    name: str
    object: JSONDict
    old_object: JSONDict | None
    subresource: str
    dry_run: bool


@dataclass(frozen=True, slots=True)
class AdmissionHook:
    """A mutating and/or validating hook for some kinds.

    ``resources`` holds ``KindInfo.resource_key`` values ("jobs.batch", "pods"); empty means every
    kind. ``mutate`` returns the new object (or ``None`` for "unchanged"); ``validate`` returns
    field errors (empty = allowed; tag them with ``webhook`` to deny as that webhook) and may raise
    any ``ApiError`` (e.g. ``Forbidden``). ``observe`` sees the admitted object once every check
    passed (no copy: it must not change it); it cannot refuse the write.
    Subresource writes ("status") only reach hooks that list the subresource.
    """

    name: str
    resources: frozenset[str] = frozenset()
    operations: frozenset[str] = frozenset({"CREATE", "UPDATE"})
    subresources: frozenset[str] = frozenset({""})
    mutate: Callable[[AdmissionRequest], JSONDict | None] | None = None
    validate: Callable[[AdmissionRequest], list[FieldError]] | None = None
    observe: Callable[[AdmissionRequest], None] | None = None

    def applies(self, request: AdmissionRequest) -> bool:
        return (
            (not self.resources or request.kind.resource_key in self.resources)
            and request.operation in self.operations
            and request.subresource in self.subresources
        )


@dataclass(slots=True)
class AdmissionChain:
    """Hooks in registration order; mutating ones run before defaulting, validating ones last."""

    hooks: list[AdmissionHook] = field(default_factory=list)
    external: ExternalAdmission | None = None
    """The stored webhook configurations' webhooks: mutating ones after defaulting, validating ones last."""

    def add(self, hook: AdmissionHook) -> None:
        self.hooks.append(hook)

    def mutate(self, request: AdmissionRequest) -> JSONDict:
        obj = request.object
        for hook in self.hooks:
            # whether a hook applies depends on the kind, operation and subresource, never on the
            # object: test the request as given instead of building one per hook per write
            if hook.mutate is None or not hook.applies(request):
                continue
            result = hook.mutate(_with_object(request, clone(obj)))
            if result is not None:
                obj = result
        return obj

    def admit(self, request: AdmissionRequest, *, extra_errors: list[FieldError] | None = None) -> JSONDict:
        """Run the whole chain and return the admitted object, or raise ``Invalid`` / ``WebhookDenied``.

        ``extra_errors`` are metadata problems the registry found (bad name, ...): they are
        reported together with the kind's own validation errors, as kube-apiserver does.
        """
        kind = request.kind
        obj = request.object
        external = self.external if self.external is not None and self.external.index.active else None
        review = None
        if external is not None:
            review = WebhookReview(
                request.operation, kind, request.namespace, request.name, request.subresource, request.dry_run
            )
        if request.operation != "DELETE":  # deletes only meet validating hooks
            obj = kind.default(self.mutate(request))
            if external is not None and review is not None:
                obj = external.mutate(review, obj, request.old_object, kind.default)
        elif external is not None and review is not None:  # called on a delete too (they may deny it)
            external.mutate(review, obj, request.old_object, kind.default)
        errors: list[FieldError] = list(extra_errors or [])
        if request.operation != "DELETE":
            errors.extend(kind.validate(obj, request.old_object))
        for hook in self.hooks:
            if hook.validate is not None and hook.applies(request):
                errors.extend(hook.validate(_with_object(request, clone(obj))))
        if errors:
            plain = [e for e in errors if not e.webhook]
            if plain:
                raise Invalid(kind.kind, request.name, _dedupe(plain), kind.group)
            webhook = errors[0].webhook
            raise WebhookDenied(webhook, _dedupe([e for e in errors if e.webhook == webhook]))
        if external is not None and review is not None:
            external.validate(review, obj, request.old_object)
        for hook in self.hooks:
            if hook.observe is not None and hook.applies(request):
                hook.observe(_with_object(request, obj))
        return obj


def _with_object(request: AdmissionRequest, obj: JSONDict) -> AdmissionRequest:
    return AdmissionRequest(
        operation=request.operation,
        kind=request.kind,
        namespace=request.namespace,
        name=request.name,
        object=obj,
        old_object=request.old_object,
        subresource=request.subresource,
        dry_run=request.dry_run,
    )


def _dedupe(errors: list[FieldError]) -> list[FieldError]:
    seen: set[tuple[str, str]] = set()
    out: list[FieldError] = []
    for error in errors:
        key = (error.field, error.message)
        if key not in seen:
            seen.add(key)
            out.append(error)
    return out
