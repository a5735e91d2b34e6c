"""The openb CSV mapping: requests, GPU sharing, gpu_spec -> flavor restriction, QoS -> priority class,
runtimes, the mapping file, and the starting configuration ``simulate init`` derives from nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykueue.simulate.init import init_objects
from pykueue.simulate.model import SimulateError, workload_object
from pykueue.simulate.objects import load_objects
from pykueue.simulate.openb import OpenbMapping, load_mapping, read_nodes, read_pods
from pykueue.simulate.replay import replay


def _by_name(path: Path, mapping: OpenbMapping | None = None) -> dict:
    return {t.name: t for t in read_pods(path, mapping or OpenbMapping())}


def test_requests_gpu_milli_and_runtime(openb_pods: Path) -> None:
    tasks = _by_name(openb_pods)
    a, b, c = tasks["pod-a"], tasks["pod-b"], tasks["pod-c"]
    assert dict(a.pod_sets[0].requests) == {"cpu": "4000m", "memory": "8192Mi", "pykueue.io/gpu-milli": "500"}
    assert dict(b.pod_sets[0].requests)["pykueue.io/gpu-milli"] == "2000"  # 2 whole GPUs
    assert "pykueue.io/gpu-milli" not in dict(c.pod_sets[0].requests)  # CPU-only task
    assert (a.submit_s, a.runtime_s) == (0, 100)
    assert (b.submit_s, b.runtime_s) == (10, 180)  # deletion - scheduled
    # never scheduled in production: runs deletion - creation
    assert tasks["pod-d"].runtime_s == 60


def test_gpu_spec_becomes_required_affinity_on_the_model_label(openb_pods: Path) -> None:
    b = _by_name(openb_pods)["pod-b"]
    assert b.pod_sets[0].allowed == ("pykueue.io/gpu-model", ("T4", "V100M16"))
    obj = workload_object(b, "ns", "lq", 0)
    terms = obj["spec"]["podSets"][0]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "pykueue.io/gpu-model", "operator": "In", "values": ["T4", "V100M16"]}]}
    ]
    assert _by_name(openb_pods)["pod-a"].pod_sets[0].allowed is None


def test_qos_to_priority_class(openb_pods: Path) -> None:
    classes = {n: t.priority_class for n, t in _by_name(openb_pods).items()}
    assert classes == {
        "pod-a": "high",
        "pod-b": "low",
        "pod-c": "medium",
        "pod-d": "high",
        "pod-e": "low",
        "pod-f": "high",
    }


def test_mapping_file_overrides(openb_pods: Path, tmp_path: Path) -> None:
    path = tmp_path / "map.yaml"
    path.write_text(
        "gpuResource: example.com/gpu-milli\ngpuModelLabel: example.com/model\n"
        "qos: {BE: scavenger}\ndefaultClass: normal\nincludeUnscheduled: false\n"
    )
    mapping = load_mapping(path)
    tasks = _by_name(openb_pods, mapping)
    assert "pod-d" not in tasks  # unscheduled tasks skipped
    assert tasks["pod-b"].priority_class == "scavenger"
    assert tasks["pod-a"].priority_class == "normal"  # LS not in the overriding map
    assert dict(tasks["pod-a"].pod_sets[0].requests)["example.com/gpu-milli"] == "500"
    assert tasks["pod-b"].pod_sets[0].allowed == ("example.com/model", ("T4", "V100M16"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gpuResorce: x\n", "unknown mapping key 'gpuResorce'"),
        ("queues: [no-slash]\n", "queues must be a list of namespace/name"),
        ("includeUnscheduled: maybe\n", "includeUnscheduled must be true or false"),
    ],
)
def test_bad_mapping_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "map.yaml"
    path.write_text(text)
    with pytest.raises(SimulateError, match=message):
        load_mapping(path)


def test_bad_rows_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
        "deletion_time,scheduled_time\np,abc,1,0,0,,LS,Running,0,1,0\n"
    )
    with pytest.raises(SimulateError, match=r"line 2: column cpu_milli: 'abc' is not a number"):
        read_pods(path, OpenbMapping())
    path.write_text("name,cpu\nx,1\n")
    with pytest.raises(SimulateError, match="not an openb file: missing column"):
        read_pods(path, OpenbMapping())


def test_init_objects_from_nodes(openb_nodes: Path) -> None:
    objs = init_objects(read_nodes(openb_nodes), teams=2)
    flavors = {o["metadata"]["name"]: o["spec"] for o in objs if o["kind"] == "ResourceFlavor"}
    assert flavors == {
        "cpu": {},
        "gpu-v100m16": {"nodeLabels": {"pykueue.io/gpu-model": "V100M16"}},
        "gpu-t4": {"nodeLabels": {"pykueue.io/gpu-model": "T4"}},
    }
    cqs = {o["metadata"]["name"]: o["spec"] for o in objs if o["kind"] == "ClusterQueue"}
    assert sorted(cqs) == ["team-0", "team-1"]
    cpu_group, gpu_group = cqs["team-0"]["resourceGroups"]
    # 144 cores and 288 GiB over two teams; 8 V100 GPUs (the bigger pool, tried first) and 4 T4
    assert cpu_group["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "72000m"},
        {"name": "memory", "nominalQuota": "147456Mi"},
    ]
    assert [(f["name"], f["resources"][0]["nominalQuota"]) for f in gpu_group["flavors"]] == [
        ("gpu-v100m16", "4000"),
        ("gpu-t4", "2000"),
    ]
    assert all(spec["cohortName"] == "cluster" for spec in cqs.values())
    lqs = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs if o["kind"] == "LocalQueue"]
    assert lqs == [("team-0", "team-0"), ("team-1", "team-1")]


def test_gpu_spec_restricts_the_flavor_in_a_replay(openb_pods: Path, openb_nodes: Path, tmp_path: Path) -> None:
    from pykueue.simulate.init import render

    path = tmp_path / "objs.yaml"
    path.write_text(render(init_objects(read_nodes(openb_nodes), teams=1), "test"))
    conf = load_objects([path])
    result = replay(conf, read_pods(openb_pods, OpenbMapping()))
    flavors = {k.split("/")[1]: r.flavors for k, r in result.records.items()}
    # pod-b may use T4 or V100M16 only; pod-a (no spec) takes the first flavor, the bigger V100 pool
    assert flavors["pod-b"] in ("cpu,gpu-t4", "cpu,gpu-v100m16")
    assert flavors["pod-a"] == "cpu,gpu-v100m16"
    assert flavors["pod-c"] == "cpu"
    assert flavors["pod-f"] == "cpu,gpu-t4"  # gpu_spec T4: the first flavor (V100M16) does not match
    assert {r.priority_class for r in result.records.values()} == {"high", "low", "medium"}


def test_mapping_queues_choose_the_local_queues(openb_pods: Path, openb_nodes: Path, tmp_path: Path) -> None:
    from pykueue.simulate.init import render

    path = tmp_path / "objs.yaml"
    path.write_text(render(init_objects(read_nodes(openb_nodes), teams=3), "test"))
    conf = load_objects([path])
    tasks = read_pods(openb_pods, OpenbMapping())
    spread = {r.local_queue for r in replay(conf, tasks).records.values()}
    assert len(spread) > 1  # crc32 of the name spreads tasks over the three teams
    only = replay(conf, tasks, queues=("team-2/team-2",))
    assert {r.local_queue for r in only.records.values()} == {"team-2/team-2"}
    with pytest.raises(SimulateError, match="LocalQueue\\(s\\) the objects lack: team-9/lq"):
        replay(conf, tasks, queues=("team-9/lq",))
