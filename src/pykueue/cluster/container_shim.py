"""The per-container shim of ``process`` nodes: starts one container's command and outlives the server.

A ``process`` node runs each container through this small program, as a container runtime runs
each container through its shim. The shim, not the API server, is the command's parent, so:

- a ``kill -9`` of the server leaves the container running under its shim, and the restarted
  node agent re-adopts it (:mod:`pykueue.cluster.process`): its log keeps growing and its exit code
  is still recorded, so the Job does not start the same work a second time;
- the command runs as the pod's user (never root unless the server was told so), in its own
  working directory outside the data dir, in a process group of its own, with an environment made
  from the pod spec only (the shim's environment, which the agent builds) and rlimits from the
  container's limits;
- its output is written to ``<name>.log`` with rotation, as the kubelet rotates container logs
  (``--log-max-bytes`` per file, ``--log-max-files`` files kept: the current one and ``.1`` …), in
  the CRI runtimes' record format (``<time> stdout F|P <content>``, see :mod:`pykueue.cluster.cri_log`):
  a line longer than :data:`MAX_LINE` is cut into partial records, and a line still unfinished when
  the pipe goes quiet is written as a partial record at once, so ``kubectl logs -f`` shows it; a file
  is rotated between records, never inside one.

Files in ``--state`` (owner-only, written atomically): ``<name>.pid`` — JSON with the shim's and the
command's pid and kernel start times, written once the command runs; ``<name>.exit`` — JSON with
``exitCode``, ``reason``, ``message`` and ``finishedAt``, written when it ends. The agent reads
both; it signals the command's process group, never the shim's.

Only the standard library is used: the agent starts this file with ``python -I -S`` so that it
starts in milliseconds and reads nothing from the environment.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

try:  # loaded before the fork: the child only calls it
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:
    _LIBC = None

DRAIN_SECONDS = 1.0
"""After the command exits, how long its leftover children may keep the output pipe open."""


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None when it is gone.

    A pid and its start time name one process for good: a recycled pid has another start time.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])


def _write_json(path: Path, data: dict[str, object]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


MAX_LINE = 16 * 1024
"""Longest record content: a longer line is cut into partial records, as containerd cuts them."""


def _timestamp() -> bytes:
    """Now, as a record's timestamp (UTC, nine fraction digits: they compare as bytes)."""
    ns = time.time_ns()
    seconds, fraction = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)).encode() + b".%09dZ" % fraction


class RotatingLog:
    """Appends output to ``path`` as CRI log records; when a record would pass ``max_bytes``, the
    file becomes ``path.1`` (and ``.1`` becomes ``.2`` ..., ``max_files`` files in all)."""

    def __init__(self, path: Path, max_bytes: int, max_files: int) -> None:
        self.path, self.max_bytes, self.max_files = path, max_bytes, max(1, max_files)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._size = os.fstat(self._fd).st_size
        self._partial = b""
        """The end of the output that is not a whole line yet."""

    def write(self, data: bytes) -> None:
        """Output read from the container: whole lines become ``F`` records, the rest waits."""
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        prefix = _timestamp() + b" stdout "
        out: list[bytes] = []
        if lines and max(map(len, lines)) <= MAX_LINE:  # the common case: one join, no loop per line
            full = prefix + b"F "
            out.append(full + (b"\n" + full).join(lines) + b"\n")
        else:
            for line in lines:
                while len(line) > MAX_LINE:
                    out.append(prefix + b"P " + line[:MAX_LINE] + b"\n")
                    line = line[MAX_LINE:]
                out.append(prefix + b"F " + line + b"\n")
        while len(self._partial) >= MAX_LINE:
            out.append(prefix + b"P " + self._partial[:MAX_LINE] + b"\n")
            self._partial = self._partial[MAX_LINE:]
        if out:
            self._append(b"".join(out))

    def flush_partial(self) -> None:
        """The output went quiet in the middle of a line: write what there is as a partial record."""
        if self._partial:
            self._append(_timestamp() + b" stdout P " + self._partial + b"\n")
            self._partial = b""

    def _append(self, records: bytes) -> None:
        while records:
            room = self.max_bytes - self._size
            if len(records) > room:
                cut = records.rfind(b"\n", 0, max(room, 0)) + 1
                if cut == 0:
                    if self._size > 0:
                        self._rotate()
                        continue
                    cut = records.find(b"\n") + 1 or len(records)  # one record longer than a file
                piece, records = records[:cut], records[cut:]
            else:
                piece, records = records, b""
            os.write(self._fd, piece)
            self._size += len(piece)

    def _rotate(self) -> None:
        os.close(self._fd)
        oldest = self.path.with_name(f"{self.path.name}.{self.max_files - 1}")
        with contextlib.suppress(FileNotFoundError):
            oldest.unlink()
        for index in range(self.max_files - 2, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                self.path.with_name(f"{self.path.name}.{index}").rename(
                    self.path.with_name(f"{self.path.name}.{index + 1}")
                )
        if self.max_files > 1:
            self.path.rename(self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._size = 0

    def close(self) -> None:
        self.flush_partial()
        os.close(self._fd)


def _die_with_shim() -> None:
    """The container gets SIGKILL if its shim dies (``prctl(PR_SET_PDEATHSIG)``): a container never
    runs on without the process that records its end."""
    if _LIBC is not None:
        _LIBC.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1


def _limits(data_bytes: int | None, nofile: int | None) -> None:
    """Runs in the child before exec (after the user switch): the container's limits as rlimits."""
    _die_with_shim()
    if data_bytes is not None:
        resource.setrlimit(resource.RLIMIT_DATA, (data_bytes, data_bytes))
    if nofile is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    os.umask(0o022)


def _exit_code(returncode: int) -> int:
    return returncode if returncode >= 0 else 128 - returncode  # killed by signal N -> 128+N


def _record_not_started(
    log: RotatingLog, exit_path: Path, message: str, *, code: int = 143, reason: str = "Error"
) -> int:
    log.write((message + "\n").encode())
    log.close()
    _write_json(exit_path, {"exitCode": code, "reason": reason, "message": message, "finishedAt": time.time()})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="container_shim")
    parser.add_argument("--state", required=True, type=Path)
    parser.add_argument("--name", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--uid", type=int)
    parser.add_argument("--gid", type=int)
    parser.add_argument("--rlimit-data", type=int)
    parser.add_argument("--rlimit-nofile", type=int)
    parser.add_argument("--log-max-bytes", type=int, default=10 * 1024 * 1024)
    parser.add_argument("--log-max-files", type=int, default=5)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    state: Path = args.state
    log = RotatingLog(state / f"{args.name}.log", args.log_max_bytes, args.log_max_files)
    exit_path, pid_path = state / f"{args.name}.exit", state / f"{args.name}.pid"
    switch = os.geteuid() == 0 and args.uid is not None and args.uid != 0
    pending: list[int] = []  # signals that arrive before the command exists are delivered once it does
    proc: subprocess.Popen[bytes] | None = None

    def forward(signum: int, _frame: object) -> None:  # a signal meant for the container reaches it
        if proc is None:
            pending.append(signum)
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signum)

    for caught in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(caught, forward)
    if pending:
        return _record_not_started(log, exit_path, "the container was stopped before it started")
    try:
        proc = subprocess.Popen(
            args.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=args.workdir,
            env=dict(os.environ),
            process_group=0,
            close_fds=True,
            user=args.uid if switch else None,
            group=args.gid if switch else None,
            extra_groups=[] if switch else None,
            preexec_fn=lambda: _limits(args.rlimit_data, args.rlimit_nofile),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        message = f"failed to start {args.command[0]!r}: {getattr(exc, 'strerror', None) or exc}"
        return _record_not_started(log, exit_path, message, code=127, reason="StartError")
    _write_json(
        pid_path,
        {"shim": os.getpid(), "shimStart": start_time(os.getpid()), "pid": proc.pid, "start": start_time(proc.pid)},
    )
    for early in pending:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, early)
    assert proc.stdout is not None
    pipe = proc.stdout.fileno()
    drain_until: float | None = None
    while True:
        if drain_until is None and proc.poll() is not None:
            drain_until = time.monotonic() + DRAIN_SECONDS
        timeout = 0.2 if drain_until is None else max(0.0, drain_until - time.monotonic())
        ready, _, _ = select.select([pipe], [], [], timeout)
        if ready:
            chunk = os.read(pipe, 65536)
            if not chunk:
                break
            log.write(chunk)
        elif drain_until is not None and time.monotonic() >= drain_until:
            with contextlib.suppress(ProcessLookupError):  # leftovers die with the container
                os.killpg(proc.pid, signal.SIGKILL)
            break
        else:
            log.flush_partial()  # quiet in the middle of a line: show what there is
    code = _exit_code(proc.wait())
    log.close()
    with contextlib.suppress(FileNotFoundError):  # the pod's folder is gone: nobody wants the record
        _write_json(
            exit_path,
            {
                "exitCode": code,
                "reason": "Completed" if code == 0 else "Error",
                "message": "",
                "finishedAt": time.time(),
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
