"""The ``simulated`` node agent: pods "run" for a declared duration, nothing executes.

Owned by ``cluster/``; one per ``kind: simulated`` node (GPU clusters on a laptop, scale tests).
A pod runs for ``pykueue.io/simulated-duration`` seconds (float annotation on the pod) or the
node's ``default_duration``, then exits with ``pykueue.io/simulated-exit-code`` (default 0).

Waiting uses the injected clock's ``sleep`` coroutine when it has one (a virtual-time simulator),
otherwise asyncio's. After an agent restart, a pod found Running finishes at
``startTime + duration`` instead of starting over.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable

from pykueue.api.meta.clock import parse_time
from pykueue.api.meta.errors import BadRequest
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import key_of
from pykueue.cluster import cri_log
from pykueue.cluster.agent import ContainerResult, NodeAgent, Running
from pykueue.cluster.pod_logs import LogReadOptions, MemoryLogReader

__all__ = ["DURATION_ANNOTATION", "EXIT_CODE_ANNOTATION", "SimulatedNodeAgent"]


DURATION_ANNOTATION = "pykueue.io/simulated-duration"
EXIT_CODE_ANNOTATION = "pykueue.io/simulated-exit-code"


class SimulatedNodeAgent(NodeAgent):
    kind = "simulated"
    heartbeat_seconds = 30.0
    """Within the 40 s lease; fewer writes when hundreds of simulated nodes share one store."""

    def _duration(self, pod: JSONDict) -> float:
        raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(DURATION_ANNOTATION)
        try:
            return max(0.0, float(raw)) if raw is not None else self.spec.default_duration
        except ValueError:
            return self.spec.default_duration

    def _exit_code(self, pod: JSONDict) -> int:
        raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(EXIT_CODE_ANNOTATION, "0")
        try:
            return int(raw)
        except ValueError:
            return 1

    async def _sleep(self, seconds: float) -> None:
        sleep = getattr(self.clock, "sleep", None)
        if sleep is not None and inspect.iscoroutinefunction(sleep):
            await sleep(seconds)
        else:
            await asyncio.sleep(seconds)

    def _results(self, pod: JSONDict, started: float) -> list[ContainerResult]:
        code = self._exit_code(pod)
        now = self.clock.now()
        return [
            ContainerResult(str(c.get("name", "")), code, "Completed" if code == 0 else "Error", "", started, now)
            for c in (pod.get("spec") or {}).get("containers") or []
        ]

    async def execute(self, pod: JSONDict, running: Running) -> list[ContainerResult]:
        await running()
        containers = [str(c.get("name", "")) for c in (pod.get("spec") or {}).get("containers") or []]
        return list(
            await asyncio.gather(
                *(self.supervise(pod, name, functools.partial(self._run_once, pod, name)) for name in containers)
            )
        )

    async def _run_once(self, pod: JSONDict, name: str) -> ContainerResult:
        started = self.clock.now()
        await self._sleep(self._duration(pod))
        code = self._exit_code(pod)
        return ContainerResult(name, code, "Completed" if code == 0 else "Error", "", started, self.clock.now())

    async def resume(self, pod: JSONDict) -> list[ContainerResult]:
        start_text = (pod.get("status") or {}).get("startTime")
        started = parse_time(start_text) if start_text else self.clock.now()
        remaining = started + self._duration(pod) - self.clock.now()
        if remaining > 0:
            await self._sleep(remaining)
        return self._results(pod, started)

    def log_reader(
        self, pod: JSONDict, container: str, options: LogReadOptions, *, previous: bool = False
    ) -> tuple[MemoryLogReader, Callable[[], bool]]:
        """One line, stamped with the pod's start: nothing runs, so nothing else is printed."""
        name = (pod.get("metadata") or {}).get("name", "")
        if previous:
            raise BadRequest(f'previous terminated container "{container}" in pod "{name}" not found')
        start_text = (pod.get("status") or {}).get("startTime")
        started = parse_time(start_text) if start_text else self.clock.now()
        line = f"pykueue simulated node {self.name}: container {container} runs for {self._duration(pod):g}s"
        reader = MemoryLogReader(cri_log.record(line, int(started * 1_000_000_000)), options)
        reader.open()
        key = key_of(pod)

        def running() -> bool:
            latest = self.pods.get_by_key(key)
            return latest is not None and (latest.get("status") or {}).get("phase") not in ("Succeeded", "Failed")

        return reader, running
