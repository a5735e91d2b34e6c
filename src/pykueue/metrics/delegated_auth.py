"""Who is scraping, and may they: bearer tokens checked with the API server, as controller-runtime checks them.

Owned by ``metrics/``. Kueue's controller-manager guards its metrics port with controller-runtime's
``filters.WithAuthenticationAndAuthorization``: the request's bearer token goes to the API server in a
``TokenReview`` (``authentication.k8s.io/v1``), and the user it names in a ``SubjectAccessReview``
(``authorization.k8s.io/v1``) for a non-resource request: the lowercased HTTP method as verb and the
URL path (``get`` ``/metrics``), which the ClusterRole ``<name>-metrics-reader`` grants. The API server
knows the cluster's tokens and RBAC; this process knows neither, so it only asks.

Answers are cached as controller-runtime's delegating authenticator and authorizer cache them, so a
Prometheus scraping every few seconds costs the API server two requests every few minutes:

- token reviews for :data:`TOKEN_TTL_S` (60 s), authenticated or not, keyed by the token's SHA-256
  (the token itself is never kept);
- access reviews for :data:`ALLOW_TTL_S` (300 s) when allowed, :data:`DENY_TTL_S` (30 s) when not,
  keyed by the whole subject (user, uid, groups, extra) and the verb and path.

A review the API server does not answer is retried as controller-runtime's webhook clients retry
(:data:`RETRY_BACKOFF_S`: 0.5 s growing 1.5 times, jittered by up to 20 %, five attempts) when the
failure may pass (no connection, a timeout, a 5xx, a 429), all within :data:`REVIEW_TIMEOUT_S`; then,
or at once for any other refusal (a 403: the controller lacks the RBAC), it raises
:class:`ReviewUnavailable` and nothing is cached: the caller answers that scrape with a 503, never with
the metrics.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

import aiohttp

from pykueue.api.meta.errors import ApiError
from pykueue.client import Client, GroupVersionResource

__all__ = [
    "ALLOW_TTL_S",
    "DENY_TTL_S",
    "RETRY_BACKOFF_S",
    "REVIEW_TIMEOUT_S",
    "SUBJECT_ACCESS_REVIEWS",
    "TOKEN_REVIEWS",
    "TOKEN_TTL_S",
    "DelegatedAuth",
    "Identity",
    "ReviewUnavailable",
]

TOKEN_REVIEWS = GroupVersionResource("authentication.k8s.io", "v1", "tokenreviews")
SUBJECT_ACCESS_REVIEWS = GroupVersionResource("authorization.k8s.io", "v1", "subjectaccessreviews")
TOKEN_TTL_S = 60.0
ALLOW_TTL_S = 300.0
DENY_TTL_S = 30.0
REVIEW_TIMEOUT_S = 10.0
RETRY_BACKOFF_S = (0.5, 1.5, 0.2, 5)
"""(first wait, growth factor, jitter fraction, attempts): controller-runtime's ``WebhookRetryBackoff``."""
AUTHENTICATED_GROUP = "system:authenticated"
log = logging.getLogger(__name__)
_MAX_ENTRIES = 4096
"""Entries per cache; past it the expired ones are dropped, then the oldest (a flood of random
tokens cannot grow the process)."""


class ReviewUnavailable(Exception):
    """The API server did not answer a review (the scrape gets a 503)."""


def _may_pass(exc: Exception) -> bool:
    """Whether a failed review is worth retrying: no connection or a server-side error, not a refusal."""
    if isinstance(exc, ApiError):
        return exc.code >= 500 or exc.code == 429
    return True


@dataclass(frozen=True, slots=True)
class Identity:
    """A user as a TokenReview's ``status.user`` names it."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    @classmethod
    def from_review(cls, user: Any) -> Identity:
        user = user if isinstance(user, dict) else {}
        groups = tuple(str(g) for g in user.get("groups") or ())
        if AUTHENTICATED_GROUP not in groups:  # as kube's AuthenticatedGroupAdder
            groups = (*groups, AUTHENTICATED_GROUP)
        extra = user.get("extra") if isinstance(user.get("extra"), dict) else {}
        return cls(
            username=str(user.get("username") or ""),
            uid=str(user.get("uid") or ""),
            groups=groups,
            extra=tuple(sorted((str(k), tuple(str(v) for v in (vs or ()))) for k, vs in extra.items())),
        )

    def spec(self) -> dict[str, Any]:
        """The subject fields of a SubjectAccessReview spec."""
        out: dict[str, Any] = {"user": self.username, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra}
        return out


class _TTLCache:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._entries: dict[Any, tuple[float, Any]] = {}

    def get(self, key: Any) -> tuple[bool, Any]:
        entry = self._entries.get(key)
        if entry is None:
            return False, None
        expires, value = entry
        if expires <= self._clock():
            del self._entries[key]
            return False, None
        return True, value

    def put(self, key: Any, value: Any, ttl: float) -> None:
        now = self._clock()
        if len(self._entries) >= _MAX_ENTRIES:
            self._entries = {k: e for k, e in self._entries.items() if e[0] > now}
            while len(self._entries) >= _MAX_ENTRIES:
                del self._entries[next(iter(self._entries))]
        self._entries[key] = (now + ttl, value)


class DelegatedAuth:
    """TokenReviews and SubjectAccessReviews through ``client``, cached."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._client = client
        self._sleep = sleep
        self._tokens = _TTLCache(clock)
        self._decisions = _TTLCache(clock)
        self.reviews = 0
        """How many reviews were sent to the API server (the rest were answered from the caches)."""

    async def _create(self, resource: GroupVersionResource, body: dict[str, Any]) -> dict[str, Any]:
        try:
            async with asyncio.timeout(REVIEW_TIMEOUT_S):
                answer = await self._create_retrying(resource, body)
        except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise ReviewUnavailable(f"{body['kind']}: {exc or type(exc).__name__}") from None
        status = answer.get("status")
        if not isinstance(status, dict):
            raise ReviewUnavailable(f"{body['kind']}: the answer has no status")
        return status

    async def _create_retrying(self, resource: GroupVersionResource, body: dict[str, Any]) -> dict[str, Any]:
        wait, factor, jitter, attempts = RETRY_BACKOFF_S
        for attempt in range(1, int(attempts) + 1):
            self.reviews += 1
            try:
                return await self._client.create(resource, body)
            except (ApiError, aiohttp.ClientError, OSError) as exc:
                if attempt == attempts or not _may_pass(exc):
                    raise
                log.debug("%s failed (%s); retrying in %.2f s", body["kind"], exc, wait)
            await self._sleep(wait * (1 + jitter * random.random()))
            wait *= factor
        raise AssertionError("unreachable")

    async def authenticate(self, token: str) -> Identity | None:
        """The identity ``token`` belongs to (None: the API server does not know it)."""
        key = hashlib.sha256(token.encode()).digest()
        cached, known = self._tokens.get(key)
        if cached:
            return cast(Identity | None, known)
        status = await self._create(
            TOKEN_REVIEWS,
            {"apiVersion": TOKEN_REVIEWS.api_version, "kind": "TokenReview", "spec": {"token": token}},
        )
        identity = Identity.from_review(status.get("user")) if status.get("authenticated") is True else None
        if identity is not None and not identity.username:
            identity = None
        self._tokens.put(key, identity, TOKEN_TTL_S)
        return identity

    async def authorize(self, identity: Identity, verb: str, path: str) -> tuple[bool, str]:
        """(allowed, the API server's reason) for ``identity`` doing ``verb`` on the non-resource ``path``."""
        key = (identity, verb, path)
        cached, known = self._decisions.get(key)
        if cached:
            return cast(tuple[bool, str], known)
        spec = {**identity.spec(), "nonResourceAttributes": {"path": path, "verb": verb}}
        status = await self._create(
            SUBJECT_ACCESS_REVIEWS,
            {"apiVersion": SUBJECT_ACCESS_REVIEWS.api_version, "kind": "SubjectAccessReview", "spec": spec},
        )
        allowed = status.get("allowed") is True and status.get("denied") is not True
        decision = (allowed, str(status.get("reason") or ""))
        self._decisions.put(key, decision, ALLOW_TTL_S if allowed else DENY_TTL_S)
        return decision
