"""Which external admission webhooks a write must call: the stored webhook configurations, indexed.

Owned by ``registry/``. kube-apiserver reads every ``MutatingWebhookConfiguration`` and
``ValidatingWebhookConfiguration`` and calls the webhooks whose rules match a request. Here
:class:`WebhookIndex` is rebuilt from the store whenever one of those objects is written (never per
request), as a table from (API group, resource) to the webhooks whose rules could match: a write of
a kind no webhook names costs one dictionary lookup, and with no configuration stored, nothing.

Matching, as kube's:
- ``rules``: ``operations`` (``*`` = all), ``apiGroups``/``apiVersions`` (``*``), ``resources``
  (``pods``; ``pods/status`` a subresource; ``pods/*`` every subresource of pods; ``*`` every main
  resource; ``*/status``; ``*/*`` everything) and ``scope`` (``Cluster``, ``Namespaced``, ``*``);
- ``matchPolicy: Equivalent`` (the default) also matches a request made in another served version of
  the same kind, and the webhook then sees the object in the version its rule names; ``Exact``
  matches only the version of the request;
- ``namespaceSelector`` on the labels of the object's namespace (of the Namespace itself for
  namespaces; cluster-scoped objects always match) and ``objectSelector`` on the labels of the new
  or the old object;
- mutating webhooks run in the order of their configurations' names, then their order inside one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.scheduler.state.selectors import selector_matches

__all__ = ["MUTATING", "VALIDATING", "Webhook", "WebhookIndex", "labels_match"]

MUTATING = "mutatingwebhookconfigurations.admissionregistration.k8s.io"
VALIDATING = "validatingwebhookconfigurations.admissionregistration.k8s.io"
CONFIGURATION_RESOURCES = frozenset({MUTATING, VALIDATING})


@dataclass(frozen=True, slots=True)
class Rule:
    operations: frozenset[str]
    groups: frozenset[str]
    versions: tuple[str, ...]
    resources: tuple[str, ...]
    scope: str

    def matches_resource(self, resource: str, subresource: str) -> bool:
        for entry in self.resources:
            main, _, sub = entry.partition("/")
            if main not in ("*", resource):
                continue
            if not subresource and not sub:
                return True
            if subresource and sub in ("*", subresource):
                return True
        return False


@dataclass(frozen=True, slots=True)
class Webhook:
    """One webhook of a configuration, with what is needed to decide whether and how to call it."""

    name: str
    configuration: str
    mutating: bool
    rules: tuple[Rule, ...]
    client_config: JSONDict
    failure_policy: str
    match_policy: str
    namespace_selector: JSONDict
    object_selector: JSONDict
    timeout_seconds: int
    review_versions: tuple[str, ...]
    reinvocation: str
    match_conditions: tuple[JSONDict, ...]

    def version_for(self, kind: KindInfo, version: str, operation: str, subresource: str) -> str | None:
        """The version the webhook wants the object in, or None when no rule matches the request."""
        scope = "Namespaced" if kind.namespaced else "Cluster"
        equivalent: str | None = None
        for rule in self.rules:
            if operation not in rule.operations and "*" not in rule.operations:
                continue
            if rule.scope not in ("*", scope) or ("*" not in rule.groups and kind.group not in rule.groups):
                continue
            if not rule.matches_resource(kind.plural, subresource):
                continue
            if "*" in rule.versions or version in rule.versions:
                return version
            if equivalent is None and self.match_policy != "Exact":
                equivalent = next((v for v in rule.versions if v in kind.versions), None)
        return equivalent


def labels_match(selector: JSONDict, labels: JSONDict) -> bool:
    """A LabelSelector (empty = everything) against labels."""
    if not selector:
        return True
    return selector_matches(selector, labels)


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _dict(value: Any) -> JSONDict:
    return value if isinstance(value, dict) else {}


def _rules(raw: Any) -> tuple[Rule, ...]:
    rules = []
    for entry in raw if isinstance(raw, list) else ():
        if not isinstance(entry, dict):
            continue
        rules.append(
            Rule(
                frozenset(_strings(entry.get("operations"))),
                frozenset(_strings(entry.get("apiGroups"))),
                tuple(_strings(entry.get("apiVersions"))),
                tuple(_strings(entry.get("resources"))),
                str(entry.get("scope") or "*"),
            )
        )
    return tuple(rules)


def parse(configuration: JSONDict, *, mutating: bool) -> list[Webhook]:
    """The webhooks of one stored configuration, with kube's defaults filled in."""
    name = str(_dict(configuration.get("metadata")).get("name") or "")
    hooks = []
    for raw in configuration.get("webhooks") or ():
        if not isinstance(raw, dict):
            continue
        timeout = raw.get("timeoutSeconds")
        hooks.append(
            Webhook(
                name=str(raw.get("name") or ""),
                configuration=name,
                mutating=mutating,
                rules=_rules(raw.get("rules")),
                client_config=_dict(raw.get("clientConfig")),
                failure_policy=str(raw.get("failurePolicy") or "Fail"),
                match_policy=str(raw.get("matchPolicy") or "Equivalent"),
                namespace_selector=_dict(raw.get("namespaceSelector")),
                object_selector=_dict(raw.get("objectSelector")),
                timeout_seconds=timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else 10,
                review_versions=tuple(_strings(raw.get("admissionReviewVersions"))),
                reinvocation=str(raw.get("reinvocationPolicy") or "Never"),
                match_conditions=tuple(c for c in raw.get("matchConditions") or () if isinstance(c, dict)),
            )
        )
    return hooks


class WebhookIndex:
    """The webhooks of the stored configurations, by (group, resource) their rules can match."""

    def __init__(self) -> None:
        self._mutating: dict[tuple[str, str], tuple[Webhook, ...]] = {}
        self._validating: dict[tuple[str, str], tuple[Webhook, ...]] = {}
        self._wildcard_m: tuple[Webhook, ...] = ()
        self._wildcard_v: tuple[Webhook, ...] = ()
        self._position: dict[int, int] = {}
        self.active = False
        """Is any webhook configured at all? (When not, the API server skips the machinery.)"""

    def rebuild(self, mutating: Iterable[JSONDict], validating: Iterable[JSONDict]) -> None:
        ordered_m = [h for c in sorted(mutating, key=_name) for h in parse(c, mutating=True)]
        ordered_v = [h for c in sorted(validating, key=_name) for h in parse(c, mutating=False)]
        self._mutating, self._wildcard_m = _by_resource(ordered_m)
        self._validating, self._wildcard_v = _by_resource(ordered_v)
        self._position = {id(h): i for i, h in enumerate(ordered_m + ordered_v)}
        self.active = bool(ordered_m or ordered_v)

    def candidates(self, kind: KindInfo, *, mutating: bool) -> tuple[Webhook, ...]:
        """Webhooks whose rules name the kind's group and resource (or a wildcard), in call order."""
        if not self.active:
            return ()
        table, wildcard = (self._mutating, self._wildcard_m) if mutating else (self._validating, self._wildcard_v)
        named = table.get((kind.group, kind.plural), ())
        if not wildcard:
            return named
        if not named:
            return wildcard
        merged = {id(h): h for h in wildcard + named}
        return tuple(sorted(merged.values(), key=lambda h: self._position[id(h)]))


def _name(configuration: JSONDict) -> str:
    return str(_dict(configuration.get("metadata")).get("name") or "")


def _by_resource(hooks: list[Webhook]) -> tuple[dict[tuple[str, str], tuple[Webhook, ...]], tuple[Webhook, ...]]:
    table: dict[tuple[str, str], list[Webhook]] = {}
    wildcard: list[Webhook] = []
    for hook in hooks:
        keys: set[tuple[str, str]] = set()
        wild = False
        for rule in hook.rules:
            for entry in rule.resources:
                resource = entry.partition("/")[0]
                if resource == "*" or "*" in rule.groups:
                    wild = True
                else:
                    keys.update((group, resource) for group in rule.groups)
        if wild:
            wildcard.append(hook)
        for key in keys:
            table.setdefault(key, []).append(hook)
    return {k: tuple(v) for k, v in table.items()}, tuple(wildcard)
