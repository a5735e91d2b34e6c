"""Process-node pods are contained: not root, not in the data dir, not the server's environment,
their memory limit enforced, their logs capped; and a container outlives the agent only under its shim."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from tests.waiting import eventually

from pykueue.api.meta.json_types import JSONDict
from pykueue.client.group_version_resource import PODS
from pykueue.cluster import NodeSpec, container_runs, cri_log
from pykueue.cluster.container_runs import ContainerFiles
from pykueue.cluster.container_shim import RotatingLog
from pykueue.cluster.pod_user import DEFAULT_POD_USER, resolve_run_as
from pykueue.cluster.process import POD_PATH

from .conftest import make_pod, running_cluster

ROOT = os.geteuid() == 0
as_root = pytest.mark.skipif(not ROOT, reason="switching users needs root; as another user pods run as that user")


async def _finished(env: Any, name: str) -> JSONDict:
    async def check() -> JSONDict | None:
        pod = await env.client.get(PODS, name, "default")
        return pod if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") else None

    result: JSONDict = await eventually(check)
    return result


@as_root
def test_root_pods_need_an_explicit_yes() -> None:
    assert resolve_run_as(None, allow_root=False).name == DEFAULT_POD_USER
    assert resolve_run_as(None, allow_root=True).uid == 0
    with pytest.raises(ValueError, match="pass --allow-root-pods"):
        resolve_run_as("root", allow_root=False)
    with pytest.raises(ValueError, match="pass --allow-root-pods"):
        resolve_run_as("0:0", allow_root=False)
    custom = resolve_run_as("4321:4322", allow_root=False)
    assert (custom.uid, custom.gid) == (4321, 4322)
    with pytest.raises(ValueError, match="does not exist"):
        resolve_run_as("no-such-user-here", allow_root=False)


@as_root
async def test_a_pod_runs_unprivileged_outside_the_state_folder_with_only_its_own_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVER_SECRET", "do-not-leak")
    async with running_cluster([NodeSpec(name="proc", kind="process")], tmp_path) as env:
        state = tmp_path / "nodes" / "proc"
        await env.client.create(
            PODS,
            make_pod(
                "who",
                command=(
                    f'id -u; pwd; echo "secret=[$SERVER_SECRET]"; echo "path=$PATH"; '
                    f"ls {state} >/dev/null 2>&1 && echo state-readable || echo state-denied"
                ),
            ),
        )
        pod = await _finished(env, "who")
        assert pod["status"]["phase"] == "Succeeded"
        uid, cwd, secret, path, state_access = env.cluster.pod_log("default", "who").splitlines()
    assert uid != "0"
    assert not Path(cwd).is_relative_to(tmp_path), "the working directory is outside the node's state"
    assert secret == "secret=[]"
    assert path == f"path={POD_PATH}"
    assert state_access == "state-denied"


@pytest.mark.skipif(shutil.which("python3", path=POD_PATH) is None, reason="needs python3 on the pods' PATH")
async def test_a_pod_over_its_memory_limit_cannot_take_the_memory(tmp_path: Path) -> None:
    async with running_cluster([NodeSpec(name="proc", kind="process")], tmp_path) as env:
        for name, size in (("small", 16), ("greedy", 512)):
            pod = make_pod(name, command=f'python3 -c "b = bytearray({size} * 1024 * 1024); print(len(b))"')
            pod["spec"]["containers"][0]["resources"]["limits"] = {"memory": "256Mi"}
            await env.client.create(PODS, pod)
        small, greedy = await _finished(env, "small"), await _finished(env, "greedy")
        assert small["status"]["phase"] == "Succeeded"
        assert greedy["status"]["phase"] == "Failed"
        assert "MemoryError" in env.cluster.pod_log("default", "greedy")


def test_logs_rotate_and_stay_under_the_cap(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "c.log", max_bytes=1000, max_files=3)
    for i in range(500):
        log.write(f"line {i:04d}\n".encode())  # a 50-byte record each: 25,000 bytes in all
    log.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["c.log", "c.log.1", "c.log.2"]
    assert all((tmp_path / f).stat().st_size <= 1000 for f in files)
    kept = [line for name in ("c.log.2", "c.log.1", "c.log") for line in (tmp_path / name).read_text().splitlines()]
    # whole records only (rotation never cuts one), and the newest lines, none lost between files
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stdout F line \d{4}", line) for line in kept)
    numbers = [int(line.rsplit(" ", 1)[1]) for line in kept]
    assert numbers == list(range(500 - len(numbers), 500))
    assert len(numbers) >= 40  # 20 records a file: the older files are full


def _start_detached_shim(files: ContainerFiles, command: str, work: Path) -> subprocess.Popen[bytes]:
    """A shim started as an earlier server would have: in a session of its own (not our asyncio child)."""
    shim = Path(container_runs.__file__).with_name("container_shim.py")
    return subprocess.Popen(
        [
            sys.executable,
            "-I",
            "-S",
            str(shim),
            "--state",
            str(files.state),
            "--name",
            files.name,
            "--workdir",
            str(work),
            "--",
            "sh",
            "-c",
            command,
        ],
        start_new_session=True,
        env={"PATH": POD_PATH},
    )


async def test_a_container_whose_agent_died_is_adopted_and_its_exit_code_read(tmp_path: Path) -> None:
    files = ContainerFiles(tmp_path, "main")
    shim = _start_detached_shim(files, "echo adopted; sleep 1; exit 7", tmp_path)
    try:
        await eventually(lambda: asyncio.sleep(0, files.read_pid() is not None), within=10)
        ended = await container_runs.adopt(files)  # waits through a pidfd: not our asyncio child
        assert ended is not None
        assert ended.code == 7
        assert cri_log.render(files.log.read_bytes(), timestamps=False) == b"adopted\n"
    finally:
        shim.wait(10)


async def test_a_container_with_neither_shim_nor_record_is_lost(tmp_path: Path) -> None:
    assert await container_runs.adopt(ContainerFiles(tmp_path, "main")) is None


async def test_containers_of_pods_that_are_gone_are_killed_when_the_agent_starts(tmp_path: Path) -> None:
    state = tmp_path / "nodes" / "proc" / "default_gone_00000000-dead-beef-0000-000000000000"
    state.mkdir(parents=True)
    work = Path(tempfile.mkdtemp())
    files = ContainerFiles(state, "main")
    shim = _start_detached_shim(files, "exec sleep 600", work)
    try:
        await eventually(lambda: asyncio.sleep(0, files.read_pid() is not None), within=10)
        record = files.read_pid()
        assert record is not None
        async with running_cluster([NodeSpec(name="proc", kind="process")], tmp_path):
            assert shim.wait(10) == 0  # the shim saw its container killed, recorded it and ended
            assert not state.exists()
        with pytest.raises(ProcessLookupError):
            os.kill(int(record["pid"]), 0)
    finally:
        if shim.poll() is None:
            shim.kill()
            shim.wait()
        shutil.rmtree(work, ignore_errors=True)
