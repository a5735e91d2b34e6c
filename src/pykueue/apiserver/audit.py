"""Who may call the API (bearer tokens and their users) and the audit log of what they did.

Owned by ``apiserver/``. ``pykueue up`` writes one admin token into its kubeconfig (user
``kubernetes-admin``, groups ``system:masters``), and ``--token-auth-file`` adds identities in
kube-apiserver's static token file format: CSV lines ``token,user,uid,"group1,group2"`` (groups
optional), so a controller can run as ``system:serviceaccount:<ns>:<name>`` and be told apart.
Every identity is allowed everything (there is no RBAC enforcement); the audit log is what shows
which requests each one made, for checking a ClusterRole against them.

``--audit-log PATH``: one ``audit.k8s.io/v1`` ``Event`` per request, as JSON lines, at level
``Metadata`` and stage ``ResponseComplete`` (a watch also gets a ``ResponseStarted`` line when it
begins, as kube-apiserver logs long-running requests), with the user, the kube verb (get list watch
create update patch delete deletecollection; the lowercased HTTP method for non-resource URLs), the
``objectRef`` parsed from the URL as kube's RequestInfo does, the request URI and the response code.
"""

from __future__ import annotations

import csv
import io
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

import orjson
from aiohttp import web
from aiohttp.typedefs import Middleware

from pykueue.api.meta.clock import format_time
from pykueue.api.meta.json_types import JSONDict
from pykueue.registry.suspend import UserInfo

__all__ = ["ADMIN", "AuditLog", "audit_middleware", "load_token_file", "request_info"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ADMIN = UserInfo("kubernetes-admin", groups=("system:masters", "system:authenticated"))
ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))
USER_KEY: web.RequestKey[UserInfo] = web.RequestKey("pykueue_user", UserInfo)
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def load_token_file(path: Path) -> dict[str, UserInfo]:
    """kube-apiserver's ``--token-auth-file``; ``ValueError`` naming the line for a bad one."""
    users: dict[str, UserInfo] = {}
    text = path.read_text()
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise ValueError(f'{path}:{number}: expected token,user,uid[,"group1,group2"]')
        token = row[0].strip()
        if token in users:
            raise ValueError(f"{path}:{number}: duplicate token")
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        users[token] = UserInfo(
            row[1].strip(), uid=row[2].strip() if len(row) > 2 else "", groups=(*groups, "system:authenticated")
        )
    return users


def request_info(method: str, path: str, query: Any) -> tuple[str, JSONDict | None]:
    """(kube verb, objectRef) for a request, as kube-apiserver's RequestInfo resolves them."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return method.lower(), None
    if not rest:
        return method.lower(), None
    watch_path = rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    namespace = ""
    if len(rest) >= 2 and rest[0] == "namespaces":
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    if not rest:
        return method.lower(), None
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    ref: JSONDict = {"resource": resource}
    if namespace:
        ref["namespace"] = namespace
    if name:
        ref["name"] = name
    if group:  # omitted for the core group, as kube's omitempty does
        ref["apiGroup"] = group
    ref["apiVersion"] = version
    if subresource:
        ref["subresource"] = subresource
    watching = watch_path or str(query.get("watch", "")).lower() in ("true", "1")
    verb = {
        "GET": "watch" if watching else ("get" if name else "list"),
        "HEAD": "get",
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if name else "deletecollection",
    }.get(method, method.lower())
    return verb, ref


class AuditLog:
    """Appends audit events to a file, one JSON object per line, flushed per line."""

    def __init__(self, path: Path) -> None:
        self._file: IO[bytes] = path.open("ab", buffering=0)

    def write(self, event: JSONDict) -> None:
        self._file.write(orjson.dumps(event) + b"\n")

    def close(self) -> None:
        self._file.close()


def _event(
    request: web.Request, stage: str, verb: str, ref: JSONDict | None, code: int, received: str, audit_id: str
) -> JSONDict:
    user = request.get(USER_KEY) or ANONYMOUS
    event: JSONDict = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": audit_id,
        "stage": stage,
        "requestURI": str(request.rel_url),
        "verb": verb,
        "user": user.to_json(),
        "sourceIPs": [request.remote] if request.remote else [],
        "userAgent": request.headers.get("User-Agent", ""),
    }
    if ref is not None:
        event["objectRef"] = ref
    event["responseStatus"] = {"metadata": {}, "code": code}
    event["requestReceivedTimestamp"] = received
    event["stageTimestamp"] = format_time(time.time())
    return event


def audit_middleware(log: AuditLog) -> Middleware:
    """Log every request (outermost, so it sees the final status of errors and denials)."""

    @web.middleware
    async def audit(request: web.Request, handler: Handler) -> web.StreamResponse:
        received = format_time(time.time())
        verb, ref = request_info(request.method, request.path, request.query)
        audit_id = str(uuid.uuid4())
        if verb == "watch":
            log.write(_event(request, "ResponseStarted", verb, ref, 200, received, audit_id))
        code = 500
        try:
            response = await handler(request)
            code = response.status
            return response
        except web.HTTPException as exc:
            code = exc.status
            raise
        finally:
            log.write(_event(request, "ResponseComplete", verb, ref, code, received, audit_id))

    return audit
