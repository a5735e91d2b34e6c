"""NodeSpec loading (``pykueue up --nodes FILE``) and the default node."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykueue.cluster import DEFAULT_CAPACITY, default_nodes, load_nodes, parse_nodes


def test_default_is_one_generous_process_node() -> None:
    [node] = default_nodes()
    assert node.kind == "process"
    assert node.capacity == {"cpu": "64", "memory": "256Gi", "pods": "110"}
    assert node.node_labels()["kubernetes.io/hostname"] == node.name


def test_load_file_with_count_taints_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text("""
nodes:
  - name: gpu
    kind: simulated
    count: 2
    capacity: {cpu: "32", nvidia.com/gpu: "8"}
    labels: {accelerator: a100}
    taints: [{key: nvidia.com/gpu, value: present}]
    defaultDuration: 2.5
  - name: cpu-node
    user: "1000:1000"
""")
    nodes = load_nodes(path)
    assert [n.name for n in nodes] == ["gpu-0", "gpu-1", "cpu-node"]
    gpu = nodes[0]
    assert gpu.kind == "simulated"
    assert gpu.capacity == {**DEFAULT_CAPACITY, "cpu": "32", "nvidia.com/gpu": "8"}
    assert gpu.taints == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert gpu.default_duration == 2.5
    assert gpu.node_labels()["accelerator"] == "a100"
    assert nodes[2].kind == "process"
    assert nodes[2].user == "1000:1000"
    assert gpu.user is None


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"nodes": []}, "non-empty list"),
        ({"nodes": [{"kind": "process"}]}, r"nodes\[0\].name: required"),
        ({"nodes": [{"name": "a", "kind": "vm"}]}, "must be 'process' or 'simulated'"),
        ({"nodes": [{"name": "a", "capacity": {"cpu": "lots"}}]}, r"capacity.cpu: quantities must match"),
        ({"nodes": [{"name": "a", "taints": [{"key": "k", "effect": "Sometimes"}]}]}, "effect: must be"),
        ({"nodes": [{"name": "a"}, {"name": "a"}]}, "duplicate node names"),
        ({"nodes": [{"name": "a", "colour": "red"}]}, "unknown fields"),
        ({"nodes": [{"name": "a", "count": 0}]}, "count: must be a positive integer"),
        ({"nodes": [{"name": "a", "user": ""}]}, r"nodes\[0\].user: must be a user name"),
        ({"nodes": [{"name": "a", "user": ["root"]}]}, r"nodes\[0\].user: must be a user name"),
    ],
)
def test_bad_files_say_what_is_wrong(doc: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_nodes(doc)
