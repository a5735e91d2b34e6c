"""Least privilege, checked: Kubernetes' RBAC rule semantics, evaluated against an audit log.

Owned by ``install/``. :class:`Authorizer` answers, for one request, whether the RBAC objects
``pykueue install`` rendered allow it, exactly as kube-apiserver's RBAC authorizer decides:

- a ClusterRole bound by a ClusterRoleBinding applies everywhere; a Role (or a ClusterRole) bound by a
  RoleBinding applies only to requests in the binding's namespace;
- subjects are users, groups and service accounts (``system:serviceaccount:<ns>:<name>``, which
  also belongs to ``system:serviceaccounts`` and ``system:serviceaccounts:<ns>``);
- a rule matches when its apiGroups, resources and verbs hold the request's (``*`` matches any;
  ``jobs/status`` names a subresource, ``*/status`` that subresource of any resource) and, when it
  lists resourceNames, the request names one of them (a create or a list has no name, so it never
  matches a rule with resourceNames); non-resource requests match ``nonResourceURLs`` (``/x/*`` globs).

:func:`check_audit` reads ``audit.k8s.io/v1`` Events (JSON lines, as ``pykueue up --audit-log``
writes them), keeps those of one user, and reports every request the RBAC denies, and every grant
(rule x apiGroup x resource x verb) no request used that is not on an allow-list of expected-unused
grants, each with the reason it may stay unused in a given run. What every cluster grants every
authenticated user (:data:`BOOTSTRAP_POLICY`: discovery, ``/version``, ``/healthz``) is allowed too,
as on a real cluster; a request logged twice under one ``auditID`` (a watch's start and end) counts once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "BOOTSTRAP_POLICY",
    "SERVICE_ACCOUNT_USER",
    "AuditReport",
    "Authorizer",
    "Grant",
    "Request",
    "check_audit",
    "read_audit_log",
]

JSONDict = dict[str, Any]
SERVICE_ACCOUNT_USER = "system:serviceaccount:{namespace}:{name}"

_RBAC = "rbac.authorization.k8s.io"
BOOTSTRAP_POLICY: list[JSONDict] = [
    {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "system:discovery"},
        "rules": [
            {
                "verbs": ["get"],
                "nonResourceURLs": [
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            }
        ],
    },
    {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "system:basic-user"},
        "rules": [
            {
                "verbs": ["create"],
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
            }
        ],
    },
    *[
        {
            "apiVersion": f"{_RBAC}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": _RBAC, "kind": "Group", "name": "system:authenticated"}],
        }
        for name in ("system:discovery", "system:basic-user")
    ],
]
"""What every cluster grants every authenticated user (kube-apiserver's bootstrap RBAC policy):
discovery, health and version, and asking what oneself may do. Part of every evaluation; never
reported as an unused grant of the install."""


@dataclass(frozen=True, slots=True)
class Request:
    """One API request, as the RBAC authorizer sees it (``resource`` empty: a non-resource ``path``)."""

    user: str
    verb: str
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    groups: tuple[str, ...] = ()
    path: str = ""

    def __str__(self) -> str:
        if not self.resource:
            return f"{self.verb} {self.path}"
        what = self.resource + (f"/{self.subresource}" if self.subresource else "")
        group = f".{self.api_group}" if self.api_group else ""
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.verb} {what}{group} {self.name or '(all)'}{where}"


@dataclass(frozen=True, slots=True)
class Grant:
    """One verb on one resource of one API group, as a rule of a role grants it."""

    role: str
    verb: str
    api_group: str
    resource: str
    resource_names: tuple[str, ...] = ()

    def __str__(self) -> str:
        group = f".{self.api_group}" if self.api_group else ""
        names = f" {list(self.resource_names)}" if self.resource_names else ""
        return f"{self.role}: {self.verb} {self.resource}{group}{names}"


@dataclass(frozen=True, slots=True)
class _Binding:
    role: JSONDict
    role_name: str
    namespace: str | None
    """None: cluster-wide (ClusterRoleBinding); else the RoleBinding's namespace."""
    installed: bool
    """From the objects under check (not the bootstrap policy)."""


def _subject_matches(subject: JSONDict, user: str, groups: tuple[str, ...]) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        return bool(subject.get("name") == user)
    if kind == "Group":
        return subject.get("name") in groups
    if kind == "ServiceAccount":
        return user == SERVICE_ACCOUNT_USER.format(namespace=subject.get("namespace", ""), name=subject.get("name"))
    return False


def _implied_groups(user: str, groups: tuple[str, ...]) -> tuple[str, ...]:
    extra = ["system:authenticated"]
    if user.startswith("system:serviceaccount:"):
        namespace = user.split(":")[2]
        extra += ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    return (*groups, *extra)


def _resource_matches(rule_resources: list[str], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for candidate in rule_resources:
        if candidate in ("*", combined):
            return True
        if subresource and candidate == f"*/{subresource}":
            return True
    return False


def _url_matches(rule_urls: list[str], path: str) -> bool:
    return any(u == "*" or u == path or (u.endswith("*") and path.startswith(u[:-1])) for u in rule_urls)


def rule_allows(rule: JSONDict, request: Request) -> bool:
    """Does one PolicyRule allow ``request``? (kube's ``RuleAllows``)"""
    verbs = rule.get("verbs") or []
    if "*" not in verbs and request.verb not in verbs:
        return False
    if not request.resource:
        return _url_matches(rule.get("nonResourceURLs") or [], request.path)
    groups = rule.get("apiGroups") or []
    if "*" not in groups and request.api_group not in groups:
        return False
    if not _resource_matches(rule.get("resources") or [], request.resource, request.subresource):
        return False
    names = rule.get("resourceNames") or []
    return not names or request.name in names


@dataclass
class Authorizer:
    """The RBAC objects of an install (ClusterRole, ClusterRoleBinding, Role, RoleBinding dicts)."""

    objects: list[JSONDict]
    _roles: dict[tuple[str, str, str], JSONDict] = field(init=False, repr=False)
    _install: set[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._roles = {}
        self._install = {id(o) for o in self.objects}
        self.objects = [*self.objects, *BOOTSTRAP_POLICY]
        for obj in self.objects:
            if obj.get("kind") in ("ClusterRole", "Role"):
                meta = obj.get("metadata") or {}
                self._roles[(obj["kind"], meta.get("namespace", "") if obj["kind"] == "Role" else "", meta["name"])] = (
                    obj
                )

    def _bindings(self, user: str, groups: tuple[str, ...]) -> list[_Binding]:
        out = []
        every_group = _implied_groups(user, groups)
        for obj in self.objects:
            kind = obj.get("kind")
            if kind not in ("ClusterRoleBinding", "RoleBinding"):
                continue
            if not any(_subject_matches(s, user, every_group) for s in obj.get("subjects") or []):
                continue
            ref = obj.get("roleRef") or {}
            namespace = (obj.get("metadata") or {}).get("namespace", "") if kind == "RoleBinding" else None
            key = (ref.get("kind", ""), namespace or "" if ref.get("kind") == "Role" else "", ref.get("name", ""))
            if kind == "ClusterRoleBinding" and ref.get("kind") != "ClusterRole":
                continue  # a ClusterRoleBinding can only refer to a ClusterRole
            role = self._roles.get(key)
            if role is not None:
                out.append(_Binding(role, f"{key[0]} {key[2]}", namespace, id(obj) in self._install))
        return out

    def grants_for(self, request: Request) -> list[Grant]:
        """The grants that allow ``request`` (empty: denied)."""
        found = []
        for binding in self._bindings(request.user, request.groups):
            if binding.namespace is not None and binding.namespace != request.namespace:
                continue
            for rule in binding.role.get("rules") or []:
                if rule_allows(rule, request):
                    found.append(_grant_of(binding.role_name, rule, request))
        return found

    def allows(self, request: Request) -> bool:
        return bool(self.grants_for(request))

    def grants(self, user: str, groups: tuple[str, ...] = ()) -> set[Grant]:
        """Every grant the checked objects give the user, expanded to one verb, group and resource each."""
        out = set()
        for binding in self._bindings(user, groups):
            if not binding.installed:
                continue
            for rule in binding.role.get("rules") or []:
                names = tuple(rule.get("resourceNames") or ())
                for verb in rule.get("verbs") or []:
                    for group in rule.get("apiGroups") or []:
                        for resource in rule.get("resources") or []:
                            out.add(Grant(binding.role_name, verb, group, resource, names))
        return out


def _grant_of(role: str, rule: JSONDict, request: Request) -> Grant:
    """The expanded grant of ``rule`` that ``request`` used."""
    verbs = rule.get("verbs") or []
    groups = rule.get("apiGroups") or []
    combined = f"{request.resource}/{request.subresource}" if request.subresource else request.resource
    resources = rule.get("resources") or []
    resource = next((r for r in (combined, f"*/{request.subresource}", "*") if r in resources), combined)
    return Grant(
        role,
        request.verb if request.verb in verbs else "*",
        request.api_group if request.api_group in groups else "*",
        resource,
        tuple(rule.get("resourceNames") or ()),
    )


def request_of(event: JSONDict) -> Request:
    """The request an ``audit.k8s.io/v1`` Event records."""
    user = event.get("user") or {}
    ref = event.get("objectRef") or {}
    path = str(event.get("requestURI") or "").split("?", 1)[0]
    return Request(
        user=str(user.get("username") or ""),
        groups=tuple(user.get("groups") or ()),
        verb=str(event.get("verb") or ""),
        api_group=str(ref.get("apiGroup") or ""),
        resource=str(ref.get("resource") or ""),
        subresource=str(ref.get("subresource") or ""),
        namespace=str(ref.get("namespace") or ""),
        name=str(ref.get("name") or ""),
        path=path,
    )


def read_audit_log(lines: Iterable[str | bytes]) -> list[JSONDict]:
    """The Events of an audit log (JSON lines; blank lines skipped). ``ValueError`` names a bad line."""
    events = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"audit log line {number}: not JSON ({exc})") from None
        if not isinstance(event, dict) or event.get("kind") != "Event":
            raise ValueError(f"audit log line {number}: not an audit.k8s.io Event")
        events.append(event)
    return events


@dataclass(frozen=True, slots=True)
class AuditReport:
    requests: int
    denied: list[Request]
    """Requests of the user the RBAC does not allow."""
    unused: list[Grant]
    """Grants no request used, beyond the allow-list."""

    @property
    def ok(self) -> bool:
        return not self.denied and not self.unused


def _listed(grant: Grant, allowed_unused: Iterable[tuple[str, str, str]]) -> bool:
    return (grant.verb, grant.api_group, grant.resource) in set(allowed_unused)


def check_audit(
    rbac: list[JSONDict], events: list[JSONDict], user: str, allowed_unused: Iterable[tuple[str, str, str]] = ()
) -> AuditReport:
    """Every request ``user`` made is allowed, and every grant is used or on ``allowed_unused``
    (``(verb, apiGroup, resource)`` triples)."""
    authorizer = Authorizer(rbac)
    seen: set[str] = set()
    mine = []
    for event in events:
        if (event.get("user") or {}).get("username") != user:
            continue
        audit_id = str(event.get("auditID") or "")
        if audit_id and audit_id in seen:
            continue  # a watch is logged when it starts and when it ends: one request
        seen.add(audit_id)
        mine.append(request_of(event))
    used: set[Grant] = set()
    denied = []
    for request in mine:
        grants = authorizer.grants_for(request)
        if not grants:
            denied.append(request)
        used.update(grants)
    allow = list(allowed_unused)
    unused = sorted((g for g in authorizer.grants(user) - used if not _listed(g, allow)), key=str)
    return AuditReport(requests=len(mine), denied=denied, unused=unused)
