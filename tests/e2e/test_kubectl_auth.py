"""``kubectl auth can-i`` and ``kubectl auth whoami`` against ``pykueue up``, with the real kubectl.

kubectl sends a SelfSubjectAccessReview (``--list``: a SelfSubjectRulesReview) and a SelfSubjectReview,
as protobuf; the server answers for whoever the
request's bearer token authenticates: the kubeconfig's admin, or a ``--token-auth-file`` user. The
server enforces no RBAC, so every authenticated user may do everything (``yes``, exit 0).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.harness import Pykueue

ROBOT_TOKEN = "robot-token-0123456789abcdef"
ROBOT = "system:serviceaccount:monitoring:prometheus"
ROBOT_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:monitoring"]


@pytest.fixture
def server(tmp_path: Path, kueue_crds_file: Path) -> Iterator[Pykueue]:
    """``pykueue up --no-kueue`` with a token file user and Kueue's CRDs (so kubectl maps workloads)."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{ROBOT_TOKEN},{ROBOT},uid-7,"{",".join(ROBOT_GROUPS)}"\n')
    server = Pykueue(
        tmp_path / "data", tmp_path / "kubeconfig", ["--no-kueue", "--token-auth-file", str(tokens)]
    ).start()
    try:
        server.kubectl("apply", "--server-side", "-f", str(kueue_crds_file))
        yield server
    finally:
        server.stop()


def _as_robot(server: Pykueue, tmp_path: Path) -> Pykueue:
    """The same server through a kubeconfig holding the token file user's token."""
    config = yaml.safe_load(server.kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"token": ROBOT_TOKEN}
    robot = tmp_path / "robot.kubeconfig"
    robot.write_text(yaml.safe_dump(config))
    return Pykueue(server.data_dir, robot, url=server.url)


def test_can_i_answers_yes_for_every_authenticated_user(server: Pykueue, tmp_path: Path) -> None:
    for who in (server, _as_robot(server, tmp_path)):
        for question in (
            ("create", "workloads.kueue.x-k8s.io"),
            ("delete", "clusterqueues/cluster-queue", "--all-namespaces"),
            ("list", "pods", "--namespace", "team-a"),
            ("get", "/metrics"),
        ):
            answer = who.kubectl("auth", "can-i", *question, check=False)
            assert (answer.returncode, answer.stdout) == (0, "yes\n"), (question, answer.stderr)
            assert "doesn't have a resource type" not in answer.stderr  # kubectl found it through discovery


def test_can_i_list_shows_every_rule(server: Pykueue, tmp_path: Path) -> None:
    for who in (server, _as_robot(server, tmp_path)):
        table = who.kubectl("auth", "can-i", "--list", "--namespace", "team-a").stdout.splitlines()
        assert table[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
        assert [line.split() for line in table[1:]] == [["*.*", "[]", "[]", "[*]"], ["[*]", "[]", "[*]"]]


def test_whoami_names_the_kubeconfig_user(server: Pykueue) -> None:
    review = json.loads(server.kubectl("auth", "whoami", "-o", "json").stdout)
    assert review["kind"] == "SelfSubjectReview"
    assert review["apiVersion"] == "authentication.k8s.io/v1"
    assert review["status"]["userInfo"] == {
        "username": "kubernetes-admin",
        "groups": ["system:masters", "system:authenticated"],
    }


def test_whoami_names_a_token_file_user_with_its_groups(server: Pykueue, tmp_path: Path) -> None:
    robot = _as_robot(server, tmp_path)
    review = json.loads(robot.kubectl("auth", "whoami", "-o", "json").stdout)
    groups = [*ROBOT_GROUPS, "system:authenticated"]  # added to every authenticated user, as kube-apiserver does
    assert review["status"]["userInfo"] == {"username": ROBOT, "uid": "uid-7", "groups": groups}
    table = robot.kubectl("auth", "whoami").stdout.splitlines()
    assert table[0].split() == ["ATTRIBUTE", "VALUE"]
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1].strip() for line in table[1:]}
    assert rows["Username"] == ROBOT
    assert rows["UID"] == "uid-7"
    assert rows["Groups"] == "[" + " ".join(groups) + "]"


def test_explain_finds_both_self_reviews(server: Pykueue) -> None:
    spec = server.kubectl("explain", "selfsubjectaccessreviews.spec").stdout
    assert "GROUP:      authorization.k8s.io" in spec
    assert "resourceAttributes" in spec
    assert "nonResourceAttributes" in spec
    user_info = server.kubectl("explain", "selfsubjectreviews.status.userInfo").stdout
    assert "KIND:       SelfSubjectReview" in user_info
    for field in ("username", "uid", "groups", "extra"):
        assert field in user_info
