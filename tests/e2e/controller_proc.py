"""Start a real ``pykueue controller`` process against a running API server (cluster mode).

Used by the cluster-mode end-to-end tests: the controller runs as it would in a pod, a separate
process talking HTTPS to the API server through a kubeconfig, serving the webhooks at
``--webhook-url`` on a free loopback port.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

WEBHOOK_LINE = "pykueue controller webhooks at "
HEALTH_LINE = "pykueue controller health probes at "
LEADING_LINE = "pykueue controller is leading"
_IDENTITY = re.compile(r"identity (\S+)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Controller:
    """A running ``pykueue controller``; its output is kept in :attr:`output`."""

    kubeconfig: Path
    extra_args: list[str] = field(default_factory=list)
    webhook_port: int = field(default_factory=free_port)
    process: subprocess.Popen[str] | None = None
    output: list[str] = field(default_factory=list)
    identity: str = ""
    health_url: str = ""
    served: threading.Event = field(default_factory=threading.Event)
    leading: threading.Event = field(default_factory=threading.Event)
    leading_at: float = 0.0
    _pump: threading.Thread | None = None

    @property
    def webhook_url(self) -> str:
        return f"https://127.0.0.1:{self.webhook_port}"

    def start(self, timeout: float = 60.0) -> Controller:
        cmd = [
            sys.executable,
            "-m",
            "pykueue",
            "controller",
            "--kubeconfig",
            str(self.kubeconfig),
            "--webhook-url",
            self.webhook_url,
            "--health-port",
            "0",
            "--metrics-port",
            "0",
            *self.extra_args,
        ]
        self.process = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

        def pump() -> None:
            assert self.process is not None
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.output.append(line)
                if not self.identity and (found := _IDENTITY.search(line)):
                    self.identity = found.group(1)
                if line.startswith(HEALTH_LINE):
                    self.health_url = line[len(HEALTH_LINE) :].strip()
                    self.served.set()
                if line.strip() == LEADING_LINE:
                    self.leading_at = time.time()
                    self.leading.set()
            self.served.set()

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        if not self.served.wait(timeout) or not self.health_url:
            self.stop()
            raise RuntimeError("pykueue controller did not start:\n" + "".join(self.output))
        return self

    def wait_leading(self, timeout: float) -> bool:
        return self.leading.wait(timeout)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        if self._pump is not None:
            self._pump.join(10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None
        return code

    def kill9(self) -> None:
        self.stop(signal.SIGKILL)
