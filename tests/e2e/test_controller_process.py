"""``pykueue up --controllers process``: the quickstart with the controllers in a second process,
which the server restarts when it dies and never leaves behind."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import test_quickstart as quickstart
from tests.e2e.harness import QUICKSTART, Pykueue
from tests.waiting import eventually_blocking


@pytest.fixture
def split(tmp_path: Path) -> Iterator[Pykueue]:
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--controllers", "process"]).start()
    try:
        yield server
    finally:
        server.stop()


def _controller_pids(kubeconfig: Path) -> list[int]:
    """Processes running ``pykueue.cli.controller_process`` for this server's kubeconfig."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"pykueue.cli.controller_process" in argv and str(kubeconfig).encode() in argv:
            found.append(int(entry.name))
    return found


def test_quickstart_with_the_controllers_in_their_own_process(split: Pykueue) -> None:
    [child] = _controller_pids(split.kubeconfig)
    assert split.process is not None
    assert child != split.process.pid
    quickstart.test_quickstart(split)


def test_a_dead_controller_process_is_restarted_and_a_stopped_server_leaves_none(split: Pykueue) -> None:
    [child] = _controller_pids(split.kubeconfig)
    os.kill(child, signal.SIGKILL)
    restarted = eventually_blocking(lambda: [p for p in _controller_pids(split.kubeconfig) if p != child], within=30)
    assert isinstance(restarted, list)
    assert any("restarting it" in line for line in split.output)
    # the new controllers admit work
    split.kubectl("apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
    split.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml"))
    admitted = "jsonpath={.items[*].status.conditions[?(@.type=='Admitted')].status}"
    eventually_blocking(
        lambda: "True" in split.kubectl("get", "workloads", "-n", "default", "-o", admitted).stdout, within=60
    )
    assert split.stop() == 0
    eventually_blocking(
        lambda: _controller_pids(split.kubeconfig) == [], within=10, interval=0.1, what="no controller process left"
    )
