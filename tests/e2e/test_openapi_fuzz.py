"""Property-based fuzzing of a running ``pykueue up`` from the OpenAPI documents it serves, as served.

schemathesis reads ``/openapi/v3/api/v1``, ``/openapi/v3/apis/batch/v1`` and
``/openapi/v3/apis/kueue.x-k8s.io/v1beta2`` (and the authentication and authorization documents) over
HTTPS, unpatched (path parameters, request bodies and responses are whatever the server declares), and
sends schema-valid and schema-violating requests to every operation of ConfigMaps, Pods, Namespaces,
Jobs, Kueue's kinds and the five reviews. Every answer must be a
response (no dropped connection) below 500, and the server's log must hold no traceback.

The server runs without controllers (``--no-kueue`` plus Kueue's CRDs): fuzzed Pods must never be
run by a process node. Bounded: a fixed number of examples per operation, derandomized.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core.errors import InvalidRegexPattern

from tests.e2e.harness import Pykueue

pytestmark = pytest.mark.timeout(600)

REVIEWS = ("apis/authentication.k8s.io/v1", "apis/authorization.k8s.io/v1")
DOCUMENTS = ("api/v1", "apis/batch/v1", "apis/kueue.x-k8s.io/v1beta2", *REVIEWS)
CORE_KINDS = ("configmaps", "pods", "namespaces")
CHEAP = 15
"""Examples per reads, patches and deletes (per generation mode and namespace choice)."""
OBJECT_BODIES = 2
"""Examples per create or replace: drawing a whole Pod or Workload from its schema takes ~1 s."""
REVIEW_BODIES = 25
"""Examples per review create (the five review kinds): small bodies, quick to draw."""
MIN_REQUESTS = 2000


def _wanted(path: str) -> bool:
    if path.startswith("/api/v1/"):
        segments = path.split("/")
        plural = (
            segments[5]
            if len(segments) > 5 and segments[3] == "namespaces" and segments[4] == "{namespace}"
            else segments[3]
        )
        return plural in CORE_KINDS
    return path.startswith(("/apis/batch/v1/", "/apis/kueue.x-k8s.io/v1beta2/", *(f"/{r}/" for r in REVIEWS)))


def test_fuzzing_the_served_openapi_finds_no_server_error(
    kueue_api: Pykueue, capsys: pytest.CaptureFixture[str]
) -> None:
    server = kueue_api
    auth = {"Authorization": f"Bearer {server.token}"}
    ca = str(server.data_dir / "ca.crt")
    session = requests.Session()
    session.verify = ca
    counts = {"requests": 0, "operations": 0}
    statuses: dict[int, int] = {}
    unusable: set[str] = set()
    started = time.monotonic()
    for document in DOCUMENTS:
        schema = schemathesis.openapi.from_url(f"{server.url}/openapi/v3/{document}", headers=auth, verify=ca)
        for result in schema.get_all_operations():
            operation = result.ok()  # type: ignore[union-attr]  # an invalid schema fails here, loudly
            if not _wanted(operation.path):
                continue
            counts["operations"] += 1
            before, op_started = counts["requests"], time.monotonic()
            for mode, path_parameters, examples in _plan(operation):
                try:
                    _fuzz(operation, mode, path_parameters, examples, server, ca, session, auth, counts, statuses)
                except InvalidRegexPattern:
                    # Kueue's own pattern for AdmissionCheck's parametersKind is ``^(?i)...``: RE2 (Go's and
                    # pykueue's) reads it, Python's ``re`` (the generator's) cannot.
                    unusable.add(f"{operation.method.upper()} {operation.path}")
                    break
            print(
                f"{operation.method.upper():6} {operation.path}: {counts['requests'] - before} requests "
                f"in {time.monotonic() - op_started:.1f} s"
            )
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(
            f"\nopenapi fuzz: {counts['requests']} requests to {counts['operations']} operations in "
            f"{elapsed:.0f} s, no 5xx, no dropped connection; statuses {dict(sorted(statuses.items()))}; "
            f"bodies not generated for {sorted(unusable)}"
        )
    assert counts["requests"] >= MIN_REQUESTS
    assert len(unusable) <= 3, unusable
    assert not any(code >= 500 for code in statuses)
    log = "".join(server.output)
    assert "Traceback" not in log, log[-5000:]
    assert server.process is not None
    assert server.process.poll() is None, "the server died"


def _plan(operation: Any) -> list[tuple[GenerationMode, dict[str, str] | None, int]]:
    """(generation mode, fixed path parameters, examples) for one operation: in the ``default``
    namespace (where objects can be created) and in generated ones; schema-violating requests where
    there is something to violate (a body or query parameters)."""
    method = operation.method.upper()
    default = {"namespace": "default"} if "{namespace}" in operation.path else None
    positive, negative = GenerationMode.POSITIVE, GenerationMode.NEGATIVE
    if method in ("POST", "PUT"):
        bodies = REVIEW_BODIES if operation.path.endswith("reviews") else OBJECT_BODIES
        return [(positive, default, bodies), (negative, default, bodies)]
    plan = [(positive, None, CHEAP)] + ([(positive, default, CHEAP)] if default else [])
    if method in ("PATCH", "DELETE") or not operation.path.endswith("}"):
        plan.append((negative, default, CHEAP))
    return plan


def _fuzz(
    operation: Any,
    mode: GenerationMode,
    path_parameters: dict[str, str] | None,
    examples: int,
    server: Pykueue,
    ca: str,
    session: requests.Session,
    auth: dict[str, str],
    counts: dict[str, int],
    statuses: dict[int, int],
) -> None:
    strategy = operation.as_strategy(generation_mode=mode, path_parameters=path_parameters)

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def send(case: Any) -> None:
        try:
            response = case.call(base_url=server.url, session=session, headers=auth, timeout=20, verify=ca)
        except requests.RequestException as err:  # a dropped connection, a reset, a timeout
            raise AssertionError(f"{case.method} {case.formatted_path}: no response: {err}") from None
        counts["requests"] += 1
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        assert response.status_code < 500, (
            f"{case.method} {case.formatted_path} -> {response.status_code}: "
            f"{response.text[:2000]}\nbody: {case.body!r:.2000}"
        )

    try:
        send()
    except Unsatisfiable:
        # Nothing to violate (e.g. a list whose parameters are all free strings): positive mode covers it.
        assert mode == GenerationMode.NEGATIVE
