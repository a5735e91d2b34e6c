"""``kubectl logs -f`` streams a running container's output and ends when the pod finishes."""

from __future__ import annotations

import json

from tests.e2e.harness import Pykueue
from tests.e2e.k8s import get
from tests.waiting import eventually_blocking


def test_logs_follow_streams_until_the_pod_finishes(pykueue: Pykueue) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "talker"},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "command": ["sh", "-c", "echo first; sleep 2; echo second; sleep 1; echo third"],
                }
            ],
        },
    }
    pykueue.kubectl("create", "-f", "-", input=json.dumps(pod))
    eventually_blocking(lambda: get(pykueue, "pod", "talker").get("status", {}).get("phase") == "Running")
    followed = pykueue.kubectl("logs", "-f", "talker", timeout=60)
    assert followed.stdout.splitlines() == ["first", "second", "third"]
    assert get(pykueue, "pod", "talker")["status"]["phase"] == "Succeeded"
    # Without -f the log is returned at once; --tail keeps the last lines.
    assert pykueue.kubectl("logs", "talker", "--tail=1").stdout.strip() == "third"
