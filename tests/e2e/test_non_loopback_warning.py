"""``pykueue up`` on a non-loopback address warns, and says plainly what a ``process`` node is and is not."""

from __future__ import annotations

import socket
from pathlib import Path

from pykueue.cli.up import non_loopback_warning
from tests.e2e.harness import Pykueue


def test_the_non_loopback_warning_says_what_a_process_node_is_and_is_not(tmp_path: Path) -> None:
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", extra_args=["--address", "0.0.0.0"]).start()
    try:
        output = "".join(server.output)
    finally:
        server.stop()
    warning = next(line for line in output.splitlines() if line.startswith("warning: listening on non-loopback"))
    node = socket.gethostname().split(".")[0].lower() or "localhost"
    assert warning == non_loopback_warning("0.0.0.0", [node])
    # What it is: any command, on this host, with the host's network and files, for whoever has the token.
    for said in (
        "needs the token",
        "run any command on this machine",
        f"process node(s) {node}",
        "directly on this host",
        "the image is ignored",
        "the host's network, kernel and the files",
        # and what it is not: a container, isolation, root (unless asked), the data dir.
        "It is not a container and not isolation",
        "never run as root unless --allow-root-pods",
        "outside the data dir",
        "simulated nodes or a real cluster",
    ):
        assert said in warning, said


def test_without_process_nodes_the_warning_is_only_about_the_token() -> None:
    assert non_loopback_warning("10.0.0.5", []) == (
        "warning: listening on non-loopback address 10.0.0.5; anyone who can reach it needs the token in the kubeconfig"
    )
