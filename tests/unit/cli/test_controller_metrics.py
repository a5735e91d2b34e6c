"""``pykueue controller``'s metrics port: HTTPS, each scrape reviewed by the API server, reviews cached.

The server is real (TLS on a loopback port, the certificate :func:`metrics_ssl_context` makes); the API
server behind the reviews is a stub that answers TokenReviews and SubjectAccessReviews from a table and
counts them, so the 403, 503 and cache-expiry paths can be driven (the embedded server allows every
authenticated user; ``tests/e2e/test_controller_metrics.py`` scrapes through it end to end).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from typing import Any, cast

import aiohttp
import pytest
from cryptography import x509
from prometheus_client import CollectorRegistry, Counter

from pykueue.api.meta.errors import ApiError, Forbidden
from pykueue.cli.controller_metrics import metrics_ssl_context, parse_bool
from pykueue.client import Client, GroupVersionResource
from pykueue.metrics.delegated_auth import ALLOW_TTL_S, DENY_TTL_S, TOKEN_TTL_S, DelegatedAuth
from pykueue.metrics.secure_endpoint import serve_secure_metrics, unauthenticated_bind_problem

USERS = {"reader-token": "prometheus", "other-token": "bob"}
READERS = {"prometheus"}


class StubApiServer:
    """Answers reviews as a cluster whose RBAC lets ``READERS`` get /metrics; ``down`` fails every review."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.failures = 0
        """How many of the next reviews fail with a 500 (the API server unwell)."""
        self.forbidden = False
        """Every review refused with a 403 (the controller lacks the RBAC to create reviews)."""

    async def create(self, res: GroupVersionResource, obj: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        self.calls.append(obj)
        if self.forbidden:
            raise Forbidden(f"{res.plural}.{res.group} is forbidden")
        if self.failures > 0:
            self.failures -= 1
            raise ApiError("etcdserver: request timed out")
        spec = obj["spec"]
        if res.plural == "tokenreviews":
            user = USERS.get(spec["token"])
            if user is None:
                return {**obj, "status": {"user": {}}}
            return {**obj, "status": {"authenticated": True, "user": {"username": user, "groups": ["team"]}}}
        allowed = spec["user"] in READERS and spec["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}
        return {**obj, "status": {"allowed": allowed, **({} if allowed else {"reason": "no RBAC rule"})}}

    def kinds(self) -> list[str]:
        return [c["kind"] for c in self.calls]


class Clock:
    """The caches' clock, and the retries' sleep: a wait is recorded and passes at once."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


class Scraper:
    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url = url
        self.session = session

    async def get(self, token: str | None = None, *, path: str = "/metrics", method: str = "GET") -> tuple[int, str]:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        async with self.session.request(method, self.url + path, headers=headers) as response:
            return response.status, await response.text()


def _registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("kueue_admission_attempts", "Admission attempts", registry=registry).inc()
    return registry


@pytest.fixture
async def endpoint() -> AsyncIterator[tuple[Scraper, StubApiServer, Clock]]:
    api, clock = StubApiServer(), Clock()
    auth = DelegatedAuth(cast(Client, api), clock=clock, sleep=clock.sleep)
    runner, port = await serve_secure_metrics(
        _registry(), "127.0.0.1", 0, ssl_context=metrics_ssl_context(None), auth=auth
    )
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False))
    try:
        yield Scraper(f"https://127.0.0.1:{port}", session), api, clock
    finally:
        await session.close()
        await runner.cleanup()


async def test_a_reader_gets_the_metrics_and_others_are_refused(
    endpoint: tuple[Scraper, StubApiServer, Clock],
) -> None:
    scraper, api, _ = endpoint
    status, text = await scraper.get("reader-token")
    assert status == 200
    assert "kueue_admission_attempts_total 1.0" in text
    assert api.calls[1]["spec"] == {
        "user": "prometheus",
        "groups": ["team", "system:authenticated"],
        "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
    }
    assert await scraper.get() == (401, "Unauthorized\n")
    assert await scraper.get("not-a-token") == (401, "Unauthorized\n")
    async with scraper.session.get(scraper.url + "/metrics", headers={"Authorization": "Basic cmVhZGVyLXRva2Vu"}) as r:
        assert r.status == 401
    assert await scraper.get("other-token") == (403, "Authorization denied for user bob\n")


async def test_other_methods_are_reviewed_with_their_verb_and_other_paths_are_404_unreviewed(
    endpoint: tuple[Scraper, StubApiServer, Clock],
) -> None:
    scraper, api, _ = endpoint
    status, _ = await scraper.get("reader-token", method="POST")
    assert status == 403  # the reader may get /metrics, not post it
    assert api.calls[-1]["spec"]["nonResourceAttributes"] == {"path": "/metrics", "verb": "post"}
    reviews = len(api.calls)
    status, _ = await scraper.get("reader-token", path="/debug")
    assert status == 404
    assert len(api.calls) == reviews


async def test_reviews_are_cached_as_controller_runtime_caches_them(
    endpoint: tuple[Scraper, StubApiServer, Clock],
) -> None:
    scraper, api, clock = endpoint
    for _ in range(3):
        assert (await scraper.get("reader-token"))[0] == 200
        assert (await scraper.get("not-a-token"))[0] == 401
        assert (await scraper.get("other-token"))[0] == 403
    # one TokenReview per token, one SubjectAccessReview per known user
    assert sorted(api.kinds()) == ["SubjectAccessReview"] * 2 + ["TokenReview"] * 3

    clock.now += DENY_TTL_S + 1  # the denial expires, the allowance and the tokens do not
    assert (await scraper.get("other-token"))[0] == 403
    assert (await scraper.get("reader-token"))[0] == 200
    assert api.kinds()[5:] == ["SubjectAccessReview"]

    clock.now += TOKEN_TTL_S  # every token review expires
    assert (await scraper.get("reader-token"))[0] == 200
    assert api.kinds()[6:] == ["TokenReview"]

    clock.now += ALLOW_TTL_S  # so does the allowance
    assert (await scraper.get("reader-token"))[0] == 200
    assert api.kinds()[7:] == ["TokenReview", "SubjectAccessReview"]


async def test_a_failing_review_is_retried_with_controller_runtimes_backoff(
    endpoint: tuple[Scraper, StubApiServer, Clock],
) -> None:
    scraper, api, clock = endpoint
    api.failures = 2
    assert (await scraper.get("reader-token"))[0] == 200
    assert api.kinds() == ["TokenReview"] * 3 + ["SubjectAccessReview"]
    assert len(clock.waits) == 2
    assert 0.5 <= clock.waits[0] <= 0.6
    assert 0.75 <= clock.waits[1] <= 0.9


async def test_an_unanswered_review_is_a_503_and_is_not_cached(endpoint: tuple[Scraper, StubApiServer, Clock]) -> None:
    scraper, api, clock = endpoint
    api.failures = 5
    status, text = await scraper.get("reader-token")
    assert status == 503
    assert "kueue_" not in text
    assert api.kinds() == ["TokenReview"] * 5  # five attempts, then given up
    assert len(clock.waits) == 4
    assert (await scraper.get("reader-token"))[0] == 200
    assert api.kinds()[5:] == ["TokenReview", "SubjectAccessReview"]


async def test_a_refused_review_is_a_503_at_once(endpoint: tuple[Scraper, StubApiServer, Clock]) -> None:
    scraper, api, clock = endpoint
    api.forbidden = True
    assert (await scraper.get("reader-token"))[0] == 503
    assert (api.kinds(), clock.waits) == (["TokenReview"], [])  # a 403 does not pass by retrying


async def test_the_port_speaks_tls_only_with_a_self_signed_certificate(
    endpoint: tuple[Scraper, StubApiServer, Clock],
) -> None:
    scraper, _, _ = endpoint
    plain = scraper.url.replace("https://", "http://")
    with pytest.raises(aiohttp.ClientError):
        async with scraper.session.get(plain + "/metrics") as response:
            await response.read()
    verifying = aiohttp.ClientSession()
    try:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            async with verifying.get(scraper.url + "/metrics"):
                pass
    finally:
        await verifying.close()
    host, port = scraper.url.removeprefix("https://").split(":")
    pem = await asyncio.to_thread(ssl.get_server_certificate, (host, int(port)))
    names = x509.load_pem_x509_certificate(pem.encode()).extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert {str(n.value) for n in names.value} == {"localhost", "127.0.0.1", "::1"}  # controller-runtime's, and ::1


async def test_without_authentication_nothing_is_reviewed() -> None:
    runner, port = await serve_secure_metrics(
        _registry(), "127.0.0.1", 0, ssl_context=metrics_ssl_context(None), auth=None
    )
    try:
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as session,
            session.get(f"https://127.0.0.1:{port}/metrics") as response,
        ):
            assert response.status == 200
            assert "kueue_admission_attempts_total" in await response.text()
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    ("host", "ok"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("127.0.0.9", True),
        ("", False),
        ("0.0.0.0", False),
        ("localhost", False),
        ("10.0.0.1", False),
    ],
)
def test_unauthenticated_metrics_need_an_explicit_loopback_ip(host: str, ok: bool) -> None:
    problem = unauthenticated_bind_problem(host)
    assert (problem is None) == ok
    if problem is not None:
        assert problem.startswith("--metrics-authentication=false requires metrics.bindAddress")


def test_boolean_flag_values_as_go_reads_them() -> None:
    assert [parse_bool(v, "--x") for v in ("true", "1", "T", "false", "0", "F")] == [True] * 3 + [False] * 3
    with pytest.raises(ValueError, match="--x 'yes': use true or false"):
        parse_bool("yes", "--x")
