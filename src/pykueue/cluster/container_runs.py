"""Starting, stopping and re-adopting one container of a ``process`` node through its shim.

Owned by ``cluster/``; used by :class:`pykueue.cluster.process.ProcessNodeAgent`. The shim
(:mod:`.container_shim`) is the container's parent and writes what the agent needs to know into the
pod's state folder, so an agent that restarts after a ``kill -9`` finds each container in one of
three states: finished (``<name>.exit`` holds its exit code), still running under a live shim
(re-adopted: the agent waits for the shim through a pidfd, as it is no longer the shim's parent),
or lost (no exit record and no shim: reported as killed, exit 137).

Signals go to the command's process group, identified by pid *and* kernel start time, so a pid
recycled while the server was down is never signalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pykueue.cluster import container_shim
from pykueue.cluster.pod_user import RunAs

__all__ = ["LOG_MAX_BYTES", "LOG_MAX_FILES", "ContainerFiles", "Exit", "adopt", "outcome", "start", "stop"]

LOG_MAX_BYTES = 10 * 1024 * 1024
"""Per log file, as the kubelet's ``containerLogMaxSize`` default (10Mi)."""
LOG_MAX_FILES = 5
"""Files kept per container, as the kubelet's ``containerLogMaxFiles`` default."""
_SHIM = Path(container_shim.__file__)


@dataclass(frozen=True, slots=True)
class Exit:
    code: int
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class ContainerFiles:
    """Where one container's shim keeps its records, inside the pod's state folder."""

    state: Path
    name: str

    @property
    def log(self) -> Path:
        return self.state / f"{self.name}.log"

    @property
    def previous_log(self) -> Path:
        """The current log file of the instance before, set aside when the container restarted."""
        return self.state / f"{self.name}.previous.log"

    def retire_log(self) -> None:
        """A new instance of the container starts: its predecessor's current log file becomes
        :attr:`previous_log` (what ``kubectl logs --previous`` reads) and its rotated files go."""
        with contextlib.suppress(FileNotFoundError):
            self.log.replace(self.previous_log)
        for index in range(1, LOG_MAX_FILES):
            with contextlib.suppress(FileNotFoundError):
                self.log.with_name(f"{self.log.name}.{index}").unlink()

    @property
    def pid(self) -> Path:
        return self.state / f"{self.name}.pid"

    @property
    def exit(self) -> Path:
        return self.state / f"{self.name}.exit"

    @property
    def errors(self) -> Path:
        return self.state / f"{self.name}.shim-errors"

    def clear(self) -> None:
        """Forget the records of an earlier run of this container (a restart starts clean)."""
        for path in (self.pid, self.exit, self.errors):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def read_exit(self) -> Exit | None:
        record = _read_json(self.exit)
        if record is None:
            return None
        return Exit(int(record.get("exitCode", 1)), str(record.get("reason") or ""), str(record.get("message") or ""))

    def read_pid(self) -> dict[str, Any] | None:
        return _read_json(self.pid)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _same_process(pid: object, start: object) -> bool:
    return isinstance(pid, int) and pid > 0 and start is not None and container_shim.start_time(pid) == start


async def start(
    files: ContainerFiles, argv: list[str], *, workdir: Path, env: dict[str, str], run_as: RunAs, data_limit: int | None
) -> asyncio.subprocess.Process:
    """Start the container's shim (in a session of its own, so it survives the server)."""
    files.clear()
    command = [
        sys.executable,
        "-I",
        "-S",
        str(_SHIM),
        "--state",
        str(files.state),
        "--name",
        files.name,
        "--workdir",
        str(workdir),
        "--log-max-bytes",
        str(LOG_MAX_BYTES),
        "--log-max-files",
        str(LOG_MAX_FILES),
    ]
    if run_as.switches:
        command += ["--uid", str(run_as.uid), "--gid", str(run_as.gid)]
    if data_limit is not None:
        command += ["--rlimit-data", str(data_limit)]
    errors = os.open(files.errors, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        return await asyncio.create_subprocess_exec(
            *command,
            "--",
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=errors,
            env=env,
            start_new_session=True,
        )
    finally:
        os.close(errors)


def outcome(files: ContainerFiles) -> Exit:
    """What the shim recorded; a shim that died without a record means the container was lost."""
    ended = files.read_exit()
    if ended is not None:
        return ended
    try:
        detail = files.errors.read_text(errors="replace").strip().splitlines()[-1:]
    except OSError:
        detail = []
    message = "the container was lost: its shim ended without recording an exit code"
    return Exit(137, "Error", message + (f" ({detail[0]})" if detail else ""))


async def _wait_for_exit(pid: int) -> None:
    """Wait until a process that is not our child ends (a pidfd becomes readable when it does)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def on_exit() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(fd, on_exit)
    try:
        await ended
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def adopt(files: ContainerFiles) -> Exit | None:
    """A container an earlier agent started: its exit once it ends, or None when it was lost."""
    if files.exit.exists():
        return outcome(files)
    record = files.read_pid()
    if record is None or not _same_process(record.get("shim"), record.get("shimStart")):
        return None
    await _wait_for_exit(int(record["shim"]))
    return outcome(files)


def _signal_command(files: ContainerFiles, signum: int) -> bool:
    """Signal the container's process group; False when it is not (or no longer) running."""
    record = files.read_pid()
    if record is None or not _same_process(record.get("pid"), record.get("start")):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.killpg(int(record["pid"]), signum)
    return True


async def stop(files: ContainerFiles, grace: float, shim: asyncio.subprocess.Process | None = None) -> None:
    """SIGTERM the container, SIGKILL it after ``grace`` seconds, and wait for its shim to record the end.

    ``shim`` is our child when this agent started it (it is reaped here); None for an adopted one.
    """

    async def shim_ended() -> None:
        if shim is not None:
            await shim.wait()
            return
        record = files.read_pid()
        if record is not None and _same_process(record.get("shim"), record.get("shimStart")):
            await _wait_for_exit(int(record["shim"]))

    def kill() -> None:
        if not _signal_command(files, signal.SIGKILL) and shim is not None and shim.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                shim.kill()

    if not _signal_command(files, signal.SIGTERM) and shim is not None and shim.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            shim.send_signal(signal.SIGTERM)  # not started yet: the shim ends without starting it
    hurried = False
    try:
        await asyncio.wait_for(shim_ended(), grace)
        return
    except TimeoutError:
        pass
    except asyncio.CancelledError:
        hurried = True  # told to hurry (the agent is stopping): kill now
    kill()
    # After SIGKILL the shim ends at once; see it end even if cancelled again, so it is reaped
    # and its record written, never left to the garbage collector.
    waiting = asyncio.ensure_future(shim_ended())
    while not waiting.done():
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:
            hurried = True
    if hurried:
        raise asyncio.CancelledError
