"""``kubectl logs`` against a real ``pykueue up``: the options as kube serves them, ``--previous``,
logs capped at 10 MiB x 5 for a pod that prints without end, and what ``logs -f`` costs the server."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

from tests.e2e.harness import Pykueue, kubectl_binary
from tests.e2e.k8s import get
from tests.waiting import eventually_blocking

MiB = 1024 * 1024
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ")


def _pod(name: str, script: str, restart: str = "Never") -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "restartPolicy": restart,
                "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", script]}],
            },
        }
    )


def _logs(server: Pykueue, *args: str) -> str:
    return server.kubectl("logs", *args).stdout


def _logs_once_started(server: Pykueue, *args: str) -> str:
    """The log, or "" while the container is still being created (kubectl then exits non-zero)."""
    return server.kubectl("logs", *args, check=False).stdout


def test_kubectl_logs_options_read_as_kube_serves_them(pykueue: Pykueue) -> None:
    # early lines, a pause, a late line, then a line left unfinished while the container waits
    pykueue.kubectl(
        "create",
        "-f",
        "-",
        input=_pod("talker", ("echo early-1; echo early-2; sleep 6; echo late-1; printf 'no newline'; sleep 600")),
    )
    eventually_blocking(lambda: _logs_once_started(pykueue, "talker").endswith("no newline"), within=60, interval=0.2)
    since = _logs(pykueue, "talker", "--since=4s")  # asked at most ~2 s after late-1, 6 s after the early lines
    assert since == "late-1\nno newline"
    assert _logs(pykueue, "talker") == "early-1\nearly-2\nlate-1\nno newline"
    assert _logs(pykueue, "talker", "--tail=2") == "late-1\nno newline"
    assert _logs(pykueue, "talker", "--tail=0") == ""
    assert _logs(pykueue, "talker", "--limit-bytes=10") == "early-1\nea"
    stamped = _logs(pykueue, "talker", "--timestamps", "--tail=3").splitlines()
    assert [STAMP.sub("", line) for line in stamped] == ["early-2", "late-1", "no newline"]
    assert all(STAMP.match(line) for line in stamped)
    first = stamped[0][:30]
    after = _logs(pykueue, "talker", f"--since-time={first[:19]}Z", "--timestamps").splitlines()
    assert [STAMP.sub("", line) for line in after][-2:] == ["late-1", "no newline"]
    previous = pykueue.kubectl("logs", "talker", "--previous", check=False)
    assert previous.returncode != 0
    assert 'previous terminated container "c" in pod "talker" not found' in previous.stderr
    bad = pykueue.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/talker/log?tailLines=-1", check=False)
    assert bad.returncode != 0
    assert "tailLines: Invalid value: -1: must be greater than or equal to 0" in bad.stderr


def test_kubectl_logs_previous_shows_the_instance_before_a_restart(pykueue: Pykueue) -> None:
    script = (
        'n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; echo "run $n"; '
        '[ "$n" -ge 2 ] && sleep 600; exit 1'
    )
    pykueue.kubectl("create", "-f", "-", input=_pod("restarter", script, restart="OnFailure"))
    eventually_blocking(lambda: _logs_once_started(pykueue, "restarter") == "run 2\n", within=60)
    assert _logs(pykueue, "restarter", "--previous") == "run 1\n"
    assert get(pykueue, "pod", "restarter")["status"]["containerStatuses"][0]["restartCount"] == 1


def _log_files(server: Pykueue, pod: str) -> list[Path]:
    uid = get(server, "pod", pod)["metadata"]["uid"]
    return sorted(p for p in (server.data_dir / "logs").glob(f"*/default_{pod}_{uid}/c.log*"))


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _bytes_read(pid: int) -> int:
    """What the process has read through read(2) and pread(2) so far (files, page cache, sockets)."""
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(fields["rchar"])


def _server_cost_over(pid: int, seconds: float) -> tuple[float, int]:
    """The server's CPU (in cores) and bytes read over a window of ``seconds``."""
    start_cpu, start_read, start = _cpu_seconds(pid), _bytes_read(pid), time.monotonic()
    time.sleep(seconds)  # a measurement window, not a wait for a condition
    return (_cpu_seconds(pid) - start_cpu) / (time.monotonic() - start), _bytes_read(pid) - start_read


def test_a_pod_printing_without_end_stays_under_the_cap_and_logs_f_costs_the_server_little(pykueue: Pykueue) -> None:
    # 303,640 lines of 200 bytes as fast as they can be written: six full files (43,690 records of 240
    # bytes each) rotated, the 7th 95 % full; then a line every 10 ms for ever
    script = (
        "head -c 60728000 /dev/zero | tr '\\0' x | fold -w 199; "
        'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.01; done'
    )
    pykueue.kubectl("create", "-f", "-", input=_pod("chatty", script))

    def past_the_burst() -> bool:
        return _logs_once_started(pykueue, "chatty", "--tail=1").startswith("tick")

    eventually_blocking(past_the_burst, within=240, interval=1.0)
    files = _log_files(pykueue, "chatty")
    sizes = {p.name: p.stat().st_size for p in files}
    assert sorted(sizes) == ["c.log", "c.log.1", "c.log.2", "c.log.3", "c.log.4"], sizes
    assert all(size <= 10 * MiB for size in sizes.values()), sizes
    assert sum(sizes.values()) <= 50 * MiB
    # kubectl logs reads the current file only, as on a kubelet: at most 10 MiB of it
    assert pykueue.process is not None
    pid = pykueue.process.pid
    baseline, baseline_read = _server_cost_over(pid, 20)

    received = bytearray()
    follower = subprocess.Popen(
        [kubectl_binary(), "--kubeconfig", str(pykueue.kubeconfig), "logs", "-f", "chatty", "--tail=5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def pump() -> None:
        assert isinstance(follower.stdout, io.BufferedReader)
        while chunk := follower.stdout.read1(65536):
            received.extend(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        eventually_blocking(lambda: received.count(b"\n") >= 5, within=30)
        before = received.count(b"\n")
        following, following_read = _server_cost_over(pid, 20)
        streamed = received.count(b"\n") - before
    finally:
        follower.terminate()
        follower.wait(10)
        reader.join(10)
        if follower.stdout is not None:
            follower.stdout.close()
    ticks = [int(line.split()[1]) for line in bytes(received).decode().splitlines() if line.startswith("tick")]
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks)))  # in order, none lost or repeated
    assert streamed >= 200  # the pod kept printing (at most 100 lines/s) and the follower kept receiving
    cost = following - baseline
    extra_read = following_read - baseline_read
    print(
        f"\nserver CPU: {baseline:.2%} of a core without a follower, {following:.2%} with `kubectl logs -f` "
        f"({streamed} lines streamed in 20 s): the follower costs {cost:.2%} of a core; the server read "
        f"{baseline_read / MiB:.2f} MiB without it and {following_read / MiB:.2f} MiB with it"
    )
    assert cost < 0.05, f"kubectl logs -f costs the server {cost:.2%} of a core"
    # what was appended is read once: not the 10 MiB file again on every poll (that would be ~800 MiB)
    assert extra_read < 4 * MiB, f"the follower made the server read {extra_read / MiB:.1f} MiB more"
    # and the files are still under the cap
    sizes2 = [p.stat().st_size for p in _log_files(pykueue, "chatty")]
    assert len(sizes2) <= 5
    assert all(size <= 10 * MiB for size in sizes2)
