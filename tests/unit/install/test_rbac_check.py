"""The RBAC evaluator decides as kube-apiserver's RBAC authorizer does, and the audit check reports
denied requests and unused grants, on the RBAC ``pykueue install`` renders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from pykueue.install import install_options
from pykueue.install.rbac import EXPECTED_UNUSED, rbac_objects
from pykueue.install.rbac_check import Authorizer, Request, check_audit, read_audit_log, request_of

SA = "system:serviceaccount:pykueue-system:pykueue-controller-manager"
RBAC = "rbac.authorization.k8s.io/v1"


def _event(
    verb: str, resource: str, *, group: str = "", sub: str = "", ns: str = "", name: str = "", user: str = SA
) -> dict[str, Any]:
    return {
        "apiVersion": "audit.k8s.io/v1",
        "kind": "Event",
        "stage": "ResponseComplete",
        "verb": verb,
        "user": {"username": user, "groups": ["system:serviceaccounts"]},
        "objectRef": {
            "apiGroup": group,
            "apiVersion": "v1",
            "resource": resource,
            "subresource": sub,
            "namespace": ns,
            "name": name,
        },
        "requestURI": "/irrelevant",
        "responseStatus": {"code": 200},
    }


def _role(kind: str, name: str, rules: list[dict[str, Any]], ns: str = "") -> dict[str, Any]:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": meta, "rules": rules}


def _binding(kind: str, role_kind: str, role: str, subjects: list[dict[str, Any]], ns: str = "") -> dict[str, Any]:
    meta = {"name": f"{role}-binding", **({"namespace": ns} if ns else {})}
    return {
        "apiVersion": RBAC,
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }


SUBJECT = [{"kind": "ServiceAccount", "name": "pykueue-controller-manager", "namespace": "pykueue-system"}]


def _req(verb: str, resource: str, **kw: Any) -> Request:
    return Request(user=kw.pop("user", SA), verb=verb, resource=resource, **kw)


def test_rules_match_groups_resources_subresources_verbs_and_names() -> None:
    authz = Authorizer(
        [
            _role(
                "ClusterRole",
                "c",
                [
                    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["list", "watch"]},
                    {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["patch"]},
                    {"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["*"]},
                    {"apiGroups": ["*"], "resources": ["widgets"], "verbs": ["get"], "resourceNames": ["w1"]},
                    {"nonResourceURLs": ["/healthz", "/metrics/*"], "verbs": ["get"]},
                ],
            ),
            _binding("ClusterRoleBinding", "ClusterRole", "c", SUBJECT),
        ]
    )
    assert authz.allows(_req("list", "jobs", api_group="batch"))
    assert not authz.allows(_req("update", "jobs", api_group="batch"))  # verb not granted
    assert not authz.allows(_req("list", "jobs", api_group="apps"))  # other group
    assert authz.allows(_req("patch", "jobs", api_group="batch", subresource="status", name="j"))
    assert not authz.allows(_req("patch", "jobs", api_group="batch", name="j"))  # status only, not the job
    assert not authz.allows(_req("list", "jobs", api_group="batch", subresource="status"))
    assert authz.allows(_req("update", "deployments", api_group="apps", subresource="scale", name="d"))
    assert not authz.allows(_req("update", "deployments", api_group="apps", name="d"))
    assert authz.allows(_req("get", "widgets", api_group="x.io", name="w1"))
    assert not authz.allows(_req("get", "widgets", api_group="x.io", name="w2"))  # resourceNames
    assert not authz.allows(_req("list", "widgets", api_group="x.io"))  # no name: never matches names
    assert authz.allows(Request(user=SA, verb="get", path="/metrics/x"))
    assert not authz.allows(Request(user=SA, verb="get", path="/logs/kube.log"))
    assert not authz.allows(_req("list", "jobs", api_group="batch", user="someone-else"))


def test_role_bindings_apply_only_in_their_namespace_and_cluster_bindings_only_to_cluster_roles() -> None:
    rule = [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}]
    authz = Authorizer(
        [
            _role("Role", "r", rule, ns="pykueue-system"),
            _binding("RoleBinding", "Role", "r", SUBJECT, ns="pykueue-system"),
            _role("ClusterRole", "cr", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
            _binding("RoleBinding", "ClusterRole", "cr", SUBJECT, ns="team-a"),
            _role("Role", "stray", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], ns="pykueue-system"),
            _binding("ClusterRoleBinding", "Role", "stray", SUBJECT),  # invalid: ignored, as kube does
        ]
    )
    lease = {"api_group": "coordination.k8s.io", "name": "l"}
    assert authz.allows(_req("get", "leases", namespace="pykueue-system", **lease))
    assert not authz.allows(_req("get", "leases", namespace="default", **lease))
    assert not authz.allows(_req("get", "leases", **lease))  # cluster-wide: no
    assert authz.allows(_req("get", "secrets", namespace="team-a", name="s"))  # ClusterRole via RoleBinding
    assert not authz.allows(_req("get", "secrets", namespace="team-b", name="s"))
    assert not authz.allows(_req("delete", "pods", namespace="pykueue-system", name="p"))


def test_group_and_user_subjects() -> None:
    rule = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]
    authz = Authorizer(
        [
            _role("ClusterRole", "c", rule),
            _binding(
                "ClusterRoleBinding", "ClusterRole", "c", [{"kind": "Group", "name": "system:serviceaccounts:ns1"}]
            ),
            _role("ClusterRole", "d", [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]),
            _binding("ClusterRoleBinding", "ClusterRole", "d", [{"kind": "User", "name": "alice"}]),
        ]
    )
    assert authz.allows(_req("list", "pods", user="system:serviceaccount:ns1:any"))
    assert not authz.allows(_req("list", "pods", user="system:serviceaccount:ns2:any"))
    assert authz.allows(_req("list", "nodes", user="alice"))
    assert not authz.allows(_req("list", "nodes", user="bob"))


def _rendered(**kw: Any) -> list[dict[str, Any]]:
    return rbac_objects(install_options(**kw))


def test_the_installed_rbac_allows_what_the_controller_does_and_no_more() -> None:
    rbac = _rendered()
    authz = Authorizer(rbac)
    allowed = [
        _req("watch", "workloads", api_group="kueue.x-k8s.io"),
        _req("patch", "workloads", api_group="kueue.x-k8s.io", subresource="status", namespace="t", name="w"),
        _req("create", "events", namespace="t"),
        _req("update", "jobs", api_group="batch", namespace="t", name="j"),
        _req(
            "update",
            "leases",
            api_group="coordination.k8s.io",
            namespace="pykueue-system",
            name="pykueue-controller-leader",
        ),
        _req("update", "secrets", namespace="pykueue-system", name="pykueue-webhook-server-cert"),
        _req("update", "customresourcedefinitions", api_group="apiextensions.k8s.io", name="workloads.kueue.x-k8s.io"),
    ]
    denied = [
        _req("get", "secrets", namespace="pykueue-system", name="another-secret"),
        _req("get", "secrets", namespace="team-a", name="pykueue-webhook-server-cert"),
        _req("update", "leases", api_group="coordination.k8s.io", namespace="pykueue-system", name="other"),
        _req("update", "customresourcedefinitions", api_group="apiextensions.k8s.io", name="jobsets.jobset.x-k8s.io"),
        _req("delete", "clusterqueues", api_group="kueue.x-k8s.io", name="cq"),
        _req("update", "workloads", api_group="kueue.x-k8s.io", subresource="status", namespace="t", name="w"),
        _req("list", "nodes"),
    ]
    assert [str(r) for r in allowed if not authz.allows(r)] == []
    assert [str(r) for r in denied if authz.allows(r)] == []


def test_integrations_and_cert_manager_shrink_the_rbac() -> None:
    jobs_only = Authorizer(_rendered(integrations=["batch/job"], cert_manager=True))
    assert not jobs_only.allows(_req("update", "jobsets", api_group="jobset.x-k8s.io", namespace="t", name="s"))
    assert not jobs_only.allows(_req("patch", "pods", namespace="t", name="p"))
    assert not jobs_only.allows(_req("get", "secrets", namespace="pykueue-system", name="pykueue-webhook-server-cert"))
    assert not jobs_only.allows(
        _req(
            "get",
            "mutatingwebhookconfigurations",
            api_group="admissionregistration.k8s.io",
            name="pykueue-mutating-webhook-configuration",
        )
    )
    assert jobs_only.allows(_req("update", "jobs", api_group="batch", namespace="t", name="j"))


def test_audit_check_reports_denied_requests_and_unused_grants() -> None:
    rbac = _rendered(integrations=["batch/job"], cert_manager=True)
    grants = Authorizer(rbac).grants(SA)
    # one request per grant: everything used, nothing denied
    events = []
    for g in grants:
        sub = g.resource.split("/", 1)[1] if "/" in g.resource else ""
        ns = "pykueue-system" if g.role.startswith("Role ") else "t"
        name = g.resource_names[0] if g.resource_names else ("" if g.verb in ("list", "watch", "create") else "x")
        events.append(_event(g.verb, g.resource.split("/")[0], group=g.api_group, sub=sub, ns=ns, name=name))
    events.append(_event("delete", "nodes", name="n1", user="system:admin"))  # another user: not checked
    report = check_audit(rbac, events, SA)
    assert report.ok, (report.denied, report.unused)
    assert report.requests == len(grants)

    # a request beyond the RBAC is reported; a grant nobody used is reported unless allow-listed
    extra = _event("delete", "clusterqueues", group="kueue.x-k8s.io", name="cq")
    without_pod_deletes = [e for e in events if not (e["verb"] == "patch" and e["objectRef"]["resource"] == "events")]
    report = check_audit(rbac, [*without_pod_deletes, extra], SA)
    assert [str(r) for r in report.denied] == ["delete clusterqueues.kueue.x-k8s.io cq"]
    assert [str(g) for g in report.unused] == ["ClusterRole pykueue-manager-role: patch events"]
    assert check_audit(rbac, without_pod_deletes, SA, [("patch", "", "events")]).ok


def test_expected_unused_grants_are_real_grants() -> None:
    grants = {(g.verb, g.api_group, g.resource) for g in Authorizer(_rendered()).grants(SA)}
    assert [entry for entry in EXPECTED_UNUSED if entry not in grants] == []


def test_every_authenticated_user_may_discover_as_on_every_cluster() -> None:
    rbac = _rendered()
    authz = Authorizer(rbac)
    assert authz.allows(Request(user=SA, verb="get", path="/apis/kueue.x-k8s.io/v1beta2"))
    assert authz.allows(Request(user=SA, verb="get", path="/version"))
    assert not authz.allows(Request(user=SA, verb="post", path="/version"))
    assert all(g.role.startswith(("ClusterRole pykueue-", "Role pykueue-")) for g in authz.grants(SA))


def test_the_metrics_port_may_review_scrapers_and_the_reader_role_is_for_scrapers() -> None:
    rbac = _rendered(cert_manager=True)
    authz = Authorizer(rbac)
    assert authz.allows(_req("create", "tokenreviews", api_group="authentication.k8s.io"))
    assert authz.allows(_req("create", "subjectaccessreviews", api_group="authorization.k8s.io"))
    assert not authz.allows(Request(user=SA, verb="get", path="/metrics"))  # the reader role is bound to nobody
    prometheus = "system:serviceaccount:monitoring:prometheus"
    binding = _binding(
        "ClusterRoleBinding",
        "ClusterRole",
        "pykueue-metrics-reader",
        [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}],
    )
    bound = Authorizer([*rbac, binding])
    assert bound.allows(Request(user=prometheus, verb="get", path="/metrics"))
    assert not bound.allows(Request(user=prometheus, verb="post", path="/metrics"))
    assert not bound.allows(Request(user=prometheus, verb="get", path="/metrics/extra"))


def test_a_watch_logged_when_it_starts_and_ends_is_one_request() -> None:
    rbac = _rendered(integrations=["batch/job"], cert_manager=True)
    started = {**_event("watch", "jobs", group="batch"), "auditID": "a1", "stage": "ResponseStarted"}
    ended = {**started, "stage": "ResponseComplete"}
    assert check_audit(rbac, [started, ended], SA).requests == 1


def test_audit_log_lines() -> None:
    lines = [orjson.dumps(_event("list", "pods")), b"", orjson.dumps(_event("get", "pods", ns="a", name="p"))]
    assert [e["verb"] for e in read_audit_log(lines)] == ["list", "get"]
    with pytest.raises(ValueError, match="line 2: not JSON"):
        read_audit_log([lines[0], b"{oops"])
    with pytest.raises(ValueError, match=r"line 1: not an audit\.k8s\.io Event"):
        read_audit_log([b'{"kind": "Status"}'])


def _covering_events(rbac: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One request per grant of ``rbac``: a run that used everything it was given."""
    events = []
    for g in Authorizer(rbac).grants(SA):
        sub = g.resource.split("/", 1)[1] if "/" in g.resource else ""
        ns = "pykueue-system" if g.role.startswith("Role ") else "t"
        name = g.resource_names[0] if g.resource_names else ("" if g.verb in ("list", "watch", "create") else "x")
        events.append(_event(g.verb, g.resource.split("/")[0], group=g.api_group, sub=sub, ns=ns, name=name))
    return events


def test_the_rbac_check_command(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pykueue.cli.main import app

    log = tmp_path / "audit.jsonl"
    events = _covering_events(_rendered())
    log.write_bytes(b"\n".join(orjson.dumps(e) for e in events))
    ok = CliRunner().invoke(app, ["rbac-check", "--audit-log", str(log)])
    assert ok.exit_code == 0, ok.output
    assert ok.output.endswith(f"{SA}: {len(events)} requests, 0 denied, 0 unused grants\n")

    denied = _event("delete", "nodes", name="n1")
    log.write_bytes(b"\n".join(orjson.dumps(e) for e in [*events[1:], denied]))
    failed = CliRunner().invoke(app, ["rbac-check", "--audit-log", str(log)])
    assert failed.exit_code == 1
    assert "denied: delete nodes n1\n" in failed.output
    unused = [line for line in failed.output.splitlines() if line.startswith("unused: ")]
    first = Authorizer(_rendered()).grants_for(request_of(events[0]))[0]
    expected_unused = (first.verb, first.api_group, first.resource) not in EXPECTED_UNUSED
    assert len(unused) == int(expected_unused)

    log.write_text("not json\n")
    broken = CliRunner().invoke(app, ["rbac-check", "--audit-log", str(log)])
    assert broken.exit_code == 2
