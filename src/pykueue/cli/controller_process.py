"""The controllers of ``pykueue up --controllers process``, in a process of their own.

Owned by ``cli/``. :class:`ControllerProcess` (used by :mod:`pykueue.cli.embedded`) starts
``python -m pykueue.cli.controller_process --kubeconfig K [--config C]``, waits until it says it is
running, restarts it if it dies, and stops it with the server. The child runs the same
:class:`~pykueue.controllers.manager.ControllerManager` the in-process mode runs, over HTTPS to the
server with its writes batched (:class:`~pykueue.client.batching.BatchingClient`): Kueue's own
layout (kube-apiserver plus the kueue controller-manager), which puts the scheduler, the informers
and the controllers on the machine's second core.

Metrics: the child keeps Kueue's metrics in a registry of its own and serves it on a loopback port
(plain HTTP, the server's bearer token), which it announces with a ``METRICS_LINE`` before it says
it is running; the server's ``/metrics`` fetches that port on every scrape and appends it, so one
scrape shows both processes, fresh. A restarted child announces its new port (its counters start
again from zero, as a restarted Kueue's do).

Invariants: the child never outlives the server (it exits when its stdin, a pipe from the server,
closes: a ``kill -9`` of the server included); its output goes to the server's output; the
admission hooks (Kueue's webhooks) stay in the server, so every write is defaulted and validated
the same way in both modes.

Visibility: the scheduler engine lives in the child, so the child also serves Kueue's visibility
API on a loopback port of its own, behind a random token the server passes in its environment
(``PYKUEUE_VISIBILITY_TOKEN``); it announces the port with a ``VISIBILITY_LINE`` before the ready
line, and the server forwards ``/apis/visibility.kueue.x-k8s.io/...`` there (:attr:`visibility_address`;
None while the child is restarting, which the server answers with a 503).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pykueue.cli.logsetup import FORMATS, LEVELS, configure_logging
from pykueue.eventloop import run as run_loop

if TYPE_CHECKING:
    from pykueue.controllers.config import KueueConfig

__all__ = ["METRICS_LINE", "MODES", "READY_LINE", "ControllerProcess", "main", "mode_error"]

log = logging.getLogger(__name__)

MODES = ("in-process", "process")
"""Values of ``--controllers`` (``pykueue up`` and ``pykueue bench scheduler``)."""
READY_LINE = "pykueue controllers are running"
VISIBILITY_LINE = "pykueue visibility API at "
TOKEN_ENV = "PYKUEUE_VISIBILITY_TOKEN"
METRICS_LINE = "pykueue controller metrics at "
"""Followed by the URL of the child's metrics (``http://127.0.0.1:PORT/metrics``)."""
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
RESTART_BACKOFF_S = (1.0, 30.0)


def mode_error(value: str) -> str | None:
    """The one-line error for a ``--controllers`` value that names no mode (None: it is fine)."""
    if value in MODES:
        return None
    return f"--controllers {value!r}: use 'in-process' or 'process'"


class ControllerProcess:
    """Runs and supervises the controller child of one embedded server."""

    def __init__(
        self, kubeconfig: Path, config: Path | None = None, *, log_level: str = "info", log_format: str = "text"
    ) -> None:
        self._argv = [
            sys.executable,
            "-m",
            "pykueue.cli.controller_process",
            "--kubeconfig",
            str(kubeconfig),
            "--log-level",
            log_level,
            "--log-format",
            log_format,
        ]
        if config is not None:
            self._argv += ["--config", str(config)]
        self.metrics_url: str | None = None
        """Where the running child serves its metrics (None while none runs)."""
        self._proc: asyncio.subprocess.Process | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._stopping = False
        self._token = secrets.token_urlsafe(32)
        self._visibility_url: str | None = None
        self._running = False
        self.restarts = 0
        """How many times the child was restarted after dying."""

    def visibility_address(self) -> tuple[str, str] | None:
        """(URL, token) of the running child's visibility server; None while it is not running."""
        proc = self._proc
        if self._visibility_url is None or proc is None or proc.returncode is not None:
            return None
        return self._visibility_url, self._token

    async def start(self) -> None:
        """Start the child and wait until its controllers run (their caches are synced)."""
        await self._spawn()
        self._supervisor = asyncio.create_task(self._supervise(), name="controller-process")

    async def _spawn(self) -> None:
        # A session of its own: Ctrl-C reaches the server only, which stops the child in order; and
        # with Linux's autogroup scheduling (on by default), the kernel shares the CPU between the
        # server and the controllers as two programs rather than as halves of one.
        proc = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
            start_new_session=True,
            env={**os.environ, TOKEN_ENV: self._token},
        )
        self._visibility_url = None
        self._proc = proc
        self.metrics_url = None
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                while True:
                    line = await proc.stdout.readline()
                    if not line:
                        raise RuntimeError(
                            f"the controller process exited with code {await proc.wait()} "
                            "before it was running (its output is above)"
                        )
                    text = line.decode(errors="replace").strip()
                    if text.startswith(METRICS_LINE):
                        self.metrics_url = text[len(METRICS_LINE) :]
                        continue
                    text = _echo(line)
                    if text.startswith(VISIBILITY_LINE):
                        self._visibility_url = text.removeprefix(VISIBILITY_LINE).strip()
                    if text == READY_LINE:
                        self._running = True
                        break
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise

    async def _supervise(self) -> None:
        backoff = RESTART_BACKOFF_S[0]
        while True:
            proc = self._proc
            assert proc is not None
            assert proc.stdout is not None
            while line := await proc.stdout.readline():  # pass its output on until it ends
                _echo(line)
            code = await proc.wait()
            self.metrics_url = None
            self._running = False
            if self._stopping:
                return
            log.error("the controller process exited with code %s; restarting it in %.0f s", code, backoff)
            await asyncio.sleep(backoff)
            try:
                await self._spawn()
            except Exception:
                log.exception("restarting the controller process failed")
                backoff = min(backoff * 2, RESTART_BACKOFF_S[1])
                continue
            self.restarts += 1
            backoff = RESTART_BACKOFF_S[0]

    def health(self) -> str | None:
        """None while the child runs and has reported its controllers running; else why not (readiness)."""
        return None if self._running else "the controller process is not running"

    async def stop(self) -> None:
        self._stopping = True
        self._running = False
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(STOP_TIMEOUT_S):
                    await proc.wait()
            except TimeoutError:
                log.warning("the controller process did not stop within %ss; killing it", STOP_TIMEOUT_S)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self._supervisor is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                async with asyncio.timeout(STOP_TIMEOUT_S):
                    await self._supervisor
            self._supervisor = None


def _echo(line: bytes) -> str:
    """Pass one line of the child's output on to ours; returns it without its line end."""
    text = line.decode(errors="replace")
    sys.stdout.write(text)
    sys.stdout.flush()
    return text.strip()


# ---------------------------------------------------------------------- the child


async def _run(kubeconfig: Path, config: KueueConfig) -> None:
    from prometheus_client import CollectorRegistry

    from pykueue.apiserver.visibility import EngineBackend, serve_backend
    from pykueue.cli.gcpolicy import run_gc_policy
    from pykueue.client import BatchingClient, HttpClient
    from pykueue.client.connection import load_kubeconfig
    from pykueue.controllers.manager import ControllerManager
    from pykueue.metrics import serve_metrics

    client = BatchingClient(HttpClient.from_kubeconfig(kubeconfig, field_manager="pykueue"))
    registry = CollectorRegistry()
    manager = ControllerManager(client, config, metrics_registry=registry)
    metrics, port = await serve_metrics(registry, "127.0.0.1", 0, token=load_kubeconfig(kubeconfig).token)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    orphaned = asyncio.create_task(_wait_for_eof(), name="parent-watch")
    orphaned.add_done_callback(lambda _: stop.set())
    await manager.start()
    visibility, url = await serve_backend(
        EngineBackend(manager.scheduler), os.environ.get(TOKEN_ENV, "") or secrets.token_urlsafe(32)
    )
    print(VISIBILITY_LINE + url, flush=True)
    gc.collect()
    gc.freeze()  # the caches are full: keep them out of the collector's way (see cli/gcpolicy)
    policy = asyncio.create_task(run_gc_policy(), name="gc-policy")
    print(f"{METRICS_LINE}http://127.0.0.1:{port}/metrics", flush=True)
    print(READY_LINE, flush=True)
    try:
        await stop.wait()
    finally:
        policy.cancel()
        orphaned.cancel()
        await visibility.cleanup()
        await manager.stop()
        await metrics.cleanup()
        await client.close()


async def _wait_for_eof() -> None:
    """Return when stdin (a pipe from the server) closes: the server is gone."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.read(65536):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pykueue.cli.controller_process",
        description="pykueue's controllers, for `pykueue up --controllers process`.",
    )
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--log-level", default="info", choices=LEVELS)
    parser.add_argument("--log-format", default="text", choices=FORMATS)
    args = parser.parse_args(argv)
    configure_logging(args.log_level, args.log_format, component="controllers")
    from prometheus_client import disable_created_metrics

    disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series: the exposition Kueue's (Go) metrics have
    from pykueue.controllers.config import embedded_default, load_config

    config = load_config(args.config.read_text()) if args.config is not None else embedded_default()
    run_loop(_run(args.kubeconfig, config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
