"""kueuectl's pure parts: Kueue's quota flag syntax, the objects the create verbs send, the list rows
(POSITION IN QUEUE is the position in the LocalQueue), and kubectl's ages."""

from __future__ import annotations

import pytest

from pykueue.cli.kueuectl.connection import CommandError
from pykueue.cli.kueuectl.create import build_cluster_queue, build_resource_flavor, parse_quotas
from pykueue.cli.kueuectl.listing import workload_rows
from pykueue.cli.kueuectl.printing import human_duration, render_table


def test_quota_flags_group_flavors_by_their_resources() -> None:
    cq = build_cluster_queue(
        "cq",
        cohort="team",
        nominal_quota=["alpha:cpu=9;memory=36Gi,beta:cpu=18;memory=72Gi", "gpu:nvidia.com/gpu=8"],
        borrowing_limit=["alpha:cpu=1"],
        lending_limit=["beta:memory=2Gi"],
        namespace_selector=["team=a"],
        reclaim_within_cohort="Any",
    )
    spec = cq["spec"]
    assert spec["cohortName"] == "team"
    assert spec["namespaceSelector"] == {"matchLabels": {"team": "a"}}
    assert spec["preemption"] == {"reclaimWithinCohort": "Any"}
    assert spec["resourceGroups"] == [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": "alpha",
                    "resources": [
                        {"name": "cpu", "nominalQuota": "9", "borrowingLimit": "1"},
                        {"name": "memory", "nominalQuota": "36Gi"},
                    ],
                },
                {
                    "name": "beta",
                    "resources": [
                        {"name": "cpu", "nominalQuota": "18"},
                        {"name": "memory", "nominalQuota": "72Gi", "lendingLimit": "2Gi"},
                    ],
                },
            ],
        },
        {
            "coveredResources": ["nvidia.com/gpu"],
            "flavors": [{"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]}],
        },
    ]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["alpha:cpu=abc"], 'error: invalid --nominal-quota "alpha:cpu=abc": "abc" is not a valid quantity for cpu'),
        (["cpu=1"], 'error: invalid --nominal-quota "cpu=1": expected FLAVOR:RESOURCE=QUANTITY[;RESOURCE=QUANTITY]'),
        (["alpha:cpu"], 'error: invalid --nominal-quota "alpha:cpu": expected RESOURCE=QUANTITY, got "cpu"'),
        (["alpha:cpu=1;cpu=2"], 'error: invalid --nominal-quota "alpha:cpu=1;cpu=2": alpha:cpu is given twice'),
    ],
)
def test_bad_quota_strings_are_one_line_errors(values: list[str], message: str) -> None:
    with pytest.raises(CommandError) as err:
        parse_quotas("--nominal-quota", values)
    assert str(err.value) == message


def test_a_limit_without_a_nominal_quota_is_refused() -> None:
    with pytest.raises(CommandError, match="--borrowing-limit alpha:memory has no --nominal-quota"):
        build_cluster_queue("cq", nominal_quota=["alpha:cpu=1"], borrowing_limit=["alpha:memory=1Gi"])


def test_resource_flavor_taints_and_tolerations() -> None:
    rf = build_resource_flavor(
        "rf",
        node_labels=["a=b"],
        node_taints=["k=v:NoSchedule", "x:NoExecute"],
        tolerations=["k=v:NoSchedule", "y", ":NoExecute"],
    )
    assert rf["spec"] == {
        "nodeLabels": {"a": "b"},
        "nodeTaints": [{"key": "k", "value": "v", "effect": "NoSchedule"}, {"key": "x", "effect": "NoExecute"}],
        "tolerations": [
            {"key": "k", "value": "v", "effect": "NoSchedule", "operator": "Equal"},
            {"key": "y", "operator": "Exists"},
            {"effect": "NoExecute", "operator": "Exists"},
        ],
    }
    with pytest.raises(CommandError, match='invalid --node-taints "k=v"'):
        build_resource_flavor("rf", node_taints=["k=v"])
    with pytest.raises(CommandError, match='invalid --node-taints "k:Sometimes"'):
        build_resource_flavor("rf", node_taints=["k:Sometimes"])


def test_workload_rows_show_the_position_in_the_local_queue() -> None:
    pending = {
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j"}],
        },
        "spec": {"queueName": "lq", "priority": 3},
    }
    admitted = {
        "metadata": {"name": "a", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"queueName": "lq"},
        "status": {
            "admission": {"clusterQueue": "cq"},
            "conditions": [
                {"type": "QuotaReserved", "status": "True"},
                {"type": "Admitted", "status": "True", "lastTransitionTime": "2026-01-01T00:00:10Z"},
            ],
        },
    }
    positions = {("ns", "p"): {"positionInLocalQueue": 1, "positionInClusterQueue": 4}}
    now = 1767225700.0  # 2026-01-01T00:01:40Z
    headers, rows = workload_rows([pending, admitted], {("ns", "lq"): "cq"}, positions, False, True, now)
    assert headers[6] == "Position in Queue"
    assert rows[0] == ["p", "job.batch", "j", "lq", "cq", "PENDING", 1, "", "100s", 3, 4]
    assert rows[1] == ["a", "", "", "lq", "cq", "ADMITTED", "", "90s", "100s", 0, ""]


def test_ages_read_like_kubectls() -> None:
    assert [
        human_duration(s) for s in (-5, 5, 119, 125, 600, 3 * 3600 + 60, 30 * 3600, 3 * 86400 + 3600, 40 * 86400)
    ] == ["<invalid>", "5s", "119s", "2m5s", "10m", "3h1m", "30h", "3d1h", "40d"]
    assert (
        render_table(["Name", "Pending Workloads"], [["a", 1], ["long-name", 22]])
        == "NAME        PENDING WORKLOADS\na           1\nlong-name   22\n"
    )


def test_global_flags_before_the_verb_move_behind_it() -> None:
    from pykueue.cli.kueuectl.app import hoist_flags

    assert hoist_flags(["-n", "team", "--context=c", "-A", "list", "workload", "-o", "wide"]) == [
        "list",
        "workload",
        "-o",
        "wide",
        "-n",
        "team",
        "--context=c",
        "-A",
    ]
    assert hoist_flags(["--kubeconfig", "k", "get", "cq"]) == ["get", "cq", "--kubeconfig", "k"]
    assert hoist_flags(["list", "workload", "-n", "x"]) == ["list", "workload", "-n", "x"]
    assert hoist_flags(["--help"]) == ["--help"]
    assert hoist_flags(["-n", "x"]) == ["-n", "x"]
