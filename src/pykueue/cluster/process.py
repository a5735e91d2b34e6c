"""The ``process`` node agent: runs each container's ``command`` + ``args`` as a local process.

Owned by ``cluster/``; one per ``kind: process`` node of the embedded cluster. The image is
ignored (there is no container runtime): the command runs on the host through a per-container shim
(:mod:`.container_runs`, :mod:`.container_shim`), as the node's pod user (never root unless
``--allow-root-pods``: :mod:`.pod_user`), in its own working directory outside the data dir, with an
environment made from the pod spec only (its ``env``/``envFrom`` values, fieldRefs, a standard
``PATH``, ``HOME`` = the working directory) and its memory limit as a data-size rlimit. Output
(stdout + stderr) goes to one log file per container, rotated at 10 MiB with 5 files kept, served
by ``kubectl logs`` through :meth:`ProcessNodeAgent.log_reader` (:mod:`.pod_logs`).

This is containment, not isolation: a process node is for trusted work on a machine you own. The
pod's process shares the host's network, file system (whatever its user may read) and kernel.

A container without ``command`` cannot run (there is no image entrypoint to fall back on), except
when the image has none either (busybox, alpine, ubuntu, ...: ``args`` are the command line) and
for the ``sleep`` test image Kueue's samples use, whose entrypoint is emulated. Deleting the pod sends
SIGTERM to the container's process group, then SIGKILL after the pod's grace period.

Invariants: no process outlives its pod, nor a graceful stop of the agent. After a ``kill -9`` of
the server, containers run on under their shims; the next agent re-adopts the ones whose pods still
exist (so a Job's command never runs twice) and stops the others (their pods were deleted meanwhile).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

from pykueue.api.meta.clock import Clock
from pykueue.api.meta.errors import BadRequest, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.quantity import QuantityError, parse_quantity
from pykueue.client import Client, GroupVersionResource, Informer, key_of
from pykueue.cluster import container_runs, cri_log
from pykueue.cluster.agent import ContainerResult, NodeAgent, Running
from pykueue.cluster.container_runs import ContainerFiles
from pykueue.cluster.nodes import NodeSpec
from pykueue.cluster.pod_logs import FileLogReader, LogReadOptions
from pykueue.cluster.pod_user import RunAs, resolve_run_as
from pykueue.cluster.podutil import Record, no_record

__all__ = ["EnvError", "ProcessNodeAgent", "container_env", "env_references", "memory_limit"]

log = logging.getLogger(__name__)


STOP_GRACE = 2.0
"""Seconds a process gets between SIGTERM and SIGKILL when the whole agent stops."""

_FIELD = re.compile(r"^metadata\.(labels|annotations)\['(.+)'\]$")


def _field_value(pod: JSONDict, path: str, node: str) -> str:
    meta = pod.get("metadata") or {}
    match = _FIELD.match(path)
    if match:
        return str((meta.get(match[1]) or {}).get(match[2], ""))
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": node,
        "spec.serviceAccountName": (pod.get("spec") or {}).get("serviceAccountName", "default"),
        "status.podIP": "127.0.0.1",
        "status.hostIP": "127.0.0.1",
    }
    return str(simple.get(path) or "")


class EnvError(Exception):
    """A referenced ConfigMap/Secret or key is missing: the kubelet's CreateContainerConfigError."""


Sources = dict[tuple[str, str], dict[str, str]]
"""("configmaps"|"secrets", name) -> its data (secrets decoded); what ``env``/``envFrom`` may read."""


def env_references(container: JSONDict) -> set[tuple[str, str]]:
    """The ConfigMaps and Secrets a container's environment reads."""
    refs: set[tuple[str, str]] = set()
    for var in container.get("env") or []:
        source = var.get("valueFrom") or {}
        if source.get("configMapKeyRef"):
            refs.add(("configmaps", str(source["configMapKeyRef"].get("name", ""))))
        if source.get("secretKeyRef"):
            refs.add(("secrets", str(source["secretKeyRef"].get("name", ""))))
    for source in container.get("envFrom") or []:
        if source.get("configMapRef"):
            refs.add(("configmaps", str(source["configMapRef"].get("name", ""))))
        if source.get("secretRef"):
            refs.add(("secrets", str(source["secretRef"].get("name", ""))))
    return refs


def _lookup(sources: Sources, plural: str, ref: JSONDict) -> str | None:
    name, key, optional = str(ref.get("name", "")), str(ref.get("key", "")), bool(ref.get("optional"))
    data = sources.get((plural, name))
    kind = "configmap" if plural == "configmaps" else "secret"
    if data is None:
        if optional:
            return None
        raise EnvError(f'{kind} "{name}" not found')
    if key not in data:
        if optional:
            return None
        raise EnvError(f"couldn't find key {key} in {'ConfigMap' if plural == 'configmaps' else 'Secret'} {name}")
    return data[key]


def container_env(
    pod: JSONDict, container: JSONDict, node: str, workdir: str, sources: Sources | None = None
) -> dict[str, str]:
    """The process environment: host PATH, kube-like HOSTNAME/HOME, then ``envFrom``, then ``env`` in
    order (literal values with ``$(VAR)`` expansion, fieldRef, configMapKeyRef, secretKeyRef).
    Raises :class:`EnvError` for a missing, non-optional reference."""
    sources = sources or {}
    env = {
        "PATH": POD_PATH,
        "HOME": workdir,
        "HOSTNAME": str((pod.get("metadata") or {}).get("name", "")),
        "LANG": "C.UTF-8",
    }
    for source in container.get("envFrom") or []:
        prefix = str(source.get("prefix") or "")
        for plural, field in (("configmaps", "configMapRef"), ("secrets", "secretRef")):
            ref = source.get(field)
            if not ref:
                continue
            data = sources.get((plural, str(ref.get("name", ""))))
            if data is None:
                if not ref.get("optional"):
                    kind = "configmap" if plural == "configmaps" else "secret"
                    raise EnvError(f'{kind} "{ref.get("name", "")}" not found')
                continue
            env.update({prefix + k: v for k, v in data.items()})
    for var in container.get("env") or []:
        name = var.get("name")
        if not name:
            continue
        source = var.get("valueFrom") or {}
        if "value" in var or not source:
            # $(VAR) references to earlier variables expand, as the kubelet does.
            env[name] = re.sub(
                r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), str(var.get("value") or "")
            )
        elif source.get("fieldRef"):
            env[name] = _field_value(pod, str(source["fieldRef"].get("fieldPath", "")), node)
        elif source.get("configMapKeyRef") or source.get("secretKeyRef"):
            plural, ref = (
                ("configmaps", source["configMapKeyRef"])
                if source.get("configMapKeyRef")
                else ("secrets", source["secretKeyRef"])
            )
            value = _lookup(sources, plural, ref)
            if value is not None:
                env[name] = value
    return env


def _argv(container: JSONDict) -> list[str] | None:
    command = [str(c) for c in container.get("command") or []]
    args = [str(a) for a in container.get("args") or []]
    if command:
        return command + args
    image = str(container.get("image") or "").split("@")[0]
    repository = image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image
    if args and repository.rsplit("/", 1)[-1] in _NO_ENTRYPOINT:
        # These images have no ENTRYPOINT: Kubernetes runs their args as the command.
        return args
    if re.search(r"(^|/)sleep$", repository):
        # gcr.io/k8s-staging-perf-tests/sleep: the entrypoint sleeps for a Go duration ("30s", "1m30s").
        return ["sleep", _go_duration_seconds(args[0] if args else "0s")]
    return None


def _go_duration_seconds(value: str) -> str:
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    parts = re.findall(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", value)
    try:
        total = sum(float(n) * units[u] for n, u in parts) if parts else float(value or 0)
    except ValueError:
        total = 0.0
    return f"{total:g}"


_NO_ENTRYPOINT = frozenset({"busybox", "alpine", "ubuntu", "debian", "bash", "fedora", "centos", "rockylinux"})
"""Common images without an ENTRYPOINT, whose ``args`` alone are the command line."""

POD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""A container image's usual ``PATH``: the server's own (a virtualenv, a home folder) is not the pod's."""


class ProcessNodeAgent(NodeAgent):
    kind = "process"

    def __init__(
        self,
        client: Client,
        spec: NodeSpec,
        pods: Informer,
        clock: Clock,
        *,
        root: Path | None = None,
        record: Record = no_record,
        run_as: RunAs | None = None,
    ) -> None:
        super().__init__(client, spec, pods, clock, record=record)
        self.run_as = run_as if run_as is not None else resolve_run_as(spec.user, allow_root=False)
        self._own_root = root is None
        self.root = root or Path(tempfile.mkdtemp(prefix=f"pykueue-node-{spec.name}-"))
        """Pod state and logs, one folder per pod (in the data dir when there is one): owner-only."""
        self.root.chmod(0o700)
        self.work_root = Path(tempfile.mkdtemp(prefix=f"pykueue-pods-{spec.name}-"))
        """Pods' working directories: outside the data dir, each owned by the pod's user."""
        self.work_root.chmod(0o711)  # pods may pass through to their own folder, not list the others
        self._logs: dict[str, Path] = {}
        """pod key -> its state folder (logs and the shims' records)."""
        self._in_use: dict[Path, int] = {}
        """state folder -> how many of its containers are running or stopping now."""
        self._remove_when_idle: set[Path] = set()
        """State folders of deleted pods, removed once their last container has stopped."""

    async def start(self) -> None:
        await super().start()
        await self._sweep_orphans()

    async def stop(self) -> None:
        await super().stop()
        shutil.rmtree(self.work_root, ignore_errors=True)
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def _pod_dir(self, pod: JSONDict) -> Path:
        meta = pod.get("metadata") or {}
        return self.root / f"{meta.get('namespace', '')}_{meta.get('name', '')}_{meta.get('uid', '')}"

    async def _sweep_orphans(self) -> None:
        """Kill what runs for pods that no longer exist (deleted while the server was down) and drop
        their folders: nothing runs for a pod the API does not have."""
        live = {str((p.get("metadata") or {}).get("uid")) for p in self.pods.list()}
        for pod_dir in self.root.iterdir() if self.root.exists() else ():
            if not pod_dir.is_dir() or pod_dir.name.rsplit("_", 1)[-1] in live:
                continue
            for pid_file in pod_dir.glob("*.pid"):
                files = ContainerFiles(pod_dir, pid_file.name.removesuffix(".pid"))
                if files.read_exit() is None:
                    await container_runs.stop(files, grace=0.0)
            _remove_pod_dir(pod_dir)
            log.info("node %s: removed what was left of pod folder %s (its pod is gone)", self.name, pod_dir.name)

    def forget(self, key: str) -> None:
        directory = self._logs.pop(key, None)
        if directory is None:
            return
        if directory in self._in_use:  # a container still stopping needs its shim's records
            self._remove_when_idle.add(directory)
        else:
            _remove_pod_dir(directory)

    @contextlib.contextmanager
    def _using(self, pod_dir: Path) -> Iterator[None]:
        """Keep ``pod_dir`` while a container of the pod runs or stops (``forget`` waits for it)."""
        self._in_use[pod_dir] = self._in_use.get(pod_dir, 0) + 1
        try:
            yield
        finally:
            left = self._in_use.pop(pod_dir) - 1
            if left:
                self._in_use[pod_dir] = left
            elif pod_dir in self._remove_when_idle:
                self._remove_when_idle.discard(pod_dir)
                _remove_pod_dir(pod_dir)

    def log_reader(
        self, pod: JSONDict, container: str, options: LogReadOptions, *, previous: bool = False
    ) -> tuple[FileLogReader, Callable[[], bool]]:
        files = ContainerFiles(self._logs.get(key_of(pod)) or self._pod_dir(pod), container)
        name = pod["metadata"]["name"]
        if previous:
            reader = FileLogReader(files.previous_log, options)
        else:
            reader = FileLogReader(
                files.log, options, previous=files.previous_log, max_files=container_runs.LOG_MAX_FILES
            )
        try:
            reader.open()
        except FileNotFoundError:
            if previous:
                raise BadRequest(f'previous terminated container "{container}" in pod "{name}" not found') from None
            started = (pod.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed")
            if started and not files.state.is_dir():
                raise BadRequest(
                    f'the log of container "{container}" in pod "{name}" is no longer available '
                    "(node agents keep logs only while they run)"
                ) from None
            raise BadRequest(
                f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
            ) from None

        def running() -> bool:
            return not previous and files.state.is_dir() and not files.exit.exists()

        return reader, running

    async def _sources(self, pod: JSONDict, container: JSONDict) -> Sources:
        """Fetch the ConfigMaps and Secrets the container's environment reads (missing ones are left out)."""
        namespace = str((pod.get("metadata") or {}).get("namespace") or "")
        sources: Sources = {}
        for plural, name in env_references(container):
            try:
                obj = await self.client.get(GroupVersionResource("", "v1", plural), name, namespace)
            except NotFound:
                continue
            data = {str(k): str(v) for k, v in (obj.get("data") or {}).items()}
            if plural == "secrets":
                data = {k: base64.b64decode(v).decode(errors="replace") for k, v in data.items()}
                data.update({str(k): str(v) for k, v in (obj.get("stringData") or {}).items()})
            elif obj.get("binaryData"):
                data.update(
                    {str(k): base64.b64decode(str(v)).decode(errors="replace") for k, v in obj["binaryData"].items()}
                )
            sources[(plural, name)] = data
        return sources

    def _prepare(self, pod: JSONDict) -> tuple[Path, Path]:
        """The pod's state folder (owner-only) and its working directory (the pod user's), made once."""
        pod_dir = self._pod_dir(pod)
        pod_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        work_file = pod_dir / "workdir"
        try:
            work = Path(work_file.read_text())
        except OSError:
            work = self.work_root / pod_dir.name
            work_file.write_text(str(work))
        if not work.exists():
            work.mkdir(mode=0o700, parents=True)
            if self.run_as.switches:
                os.chown(work, self.run_as.uid, self.run_as.gid)
        self._logs[key_of(pod)] = pod_dir
        return pod_dir, work

    async def execute(self, pod: JSONDict, running: Running) -> list[ContainerResult]:
        pod_dir, work = self._prepare(pod)
        spec = pod.get("spec") or {}
        grace = float(spec.get("terminationGracePeriodSeconds", 30))
        for init in spec.get("initContainers") or []:
            result = await self._run_container(pod, init, pod_dir, work, grace)
            if result.exit_code != 0:
                return [result]
        containers = list(spec.get("containers") or [])
        await running()
        results = await asyncio.gather(
            *(
                self.supervise(
                    pod, str(c.get("name", "")), functools.partial(self._run_container, pod, c, pod_dir, work, grace)
                )
                for c in containers
            )
        )
        return list(results)

    async def resume(self, pod: JSONDict) -> list[ContainerResult]:
        """A pod found Running after the agent restarted: re-adopt each container that still runs under
        its shim (or read how it ended meanwhile); only a container with neither is lost."""
        pod_dir = self._pod_dir(pod)
        if not pod_dir.is_dir():
            return await super().resume(pod)
        pod_dir, work = self._prepare(pod)
        grace = float((pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30))

        def runs(container: JSONDict) -> Callable[[], Awaitable[ContainerResult]]:
            adopted = False

            async def run_once() -> ContainerResult:
                nonlocal adopted
                if adopted:  # a restart under the pod's restartPolicy starts it afresh
                    return await self._run_container(pod, container, pod_dir, work, grace)
                adopted = True
                return await self._adopt(pod, container, pod_dir, grace)

            return run_once

        containers = list((pod.get("spec") or {}).get("containers") or [])
        return list(await asyncio.gather(*(self.supervise(pod, str(c.get("name", "")), runs(c)) for c in containers)))

    async def _adopt(self, pod: JSONDict, container: JSONDict, pod_dir: Path, grace: float) -> ContainerResult:
        name = str(container.get("name", ""))
        files = ContainerFiles(pod_dir, name)
        started = self.clock.now()
        with self._using(pod_dir):
            try:
                ended = await container_runs.adopt(files)
            except asyncio.CancelledError:
                await container_runs.stop(files, min(grace, STOP_GRACE) if self._stopping else grace)
                raise
        if ended is None:
            return ContainerResult(
                name, 137, "Error", "the container was lost when its node agent restarted", started, self.clock.now()
            )
        log.info("node %s: re-adopted container %s of pod %s", self.name, name, key_of(pod))
        return ContainerResult(name, ended.code, ended.reason, ended.message, started, self.clock.now())

    async def _run_container(
        self, pod: JSONDict, container: JSONDict, pod_dir: Path, work: Path, grace: float
    ) -> ContainerResult:
        name = str(container.get("name", ""))
        started = self.clock.now()
        argv = _argv(container)
        files = ContainerFiles(pod_dir, name)
        files.retire_log()  # a restart: the last instance's log is what --previous shows
        if argv is None:
            message = (
                f'container "{name}" has no command: pykueue process nodes run the command, not the '
                f"image ({container.get('image', '')}); give the container a command"
            )
            files.log.write_bytes(cri_log.record(message))
            return ContainerResult(name, 128, "ContainerCannotRun", message, started, self.clock.now())
        try:
            env = container_env(pod, container, self.name, str(work), await self._sources(pod, container))
        except EnvError as exc:
            files.log.write_bytes(cri_log.record(str(exc)))
            return ContainerResult(name, 1, "CreateContainerConfigError", str(exc), started, self.clock.now())
        with self._using(pod_dir):
            shim = await container_runs.start(
                files, argv, workdir=work, env=env, run_as=self.run_as, data_limit=memory_limit(container)
            )
            try:
                await shim.wait()
            except asyncio.CancelledError:
                # Shutting the agent down is not worth a full grace period per stubborn process.
                await container_runs.stop(files, min(grace, STOP_GRACE) if self._stopping else grace, shim)
                if self._stopping:
                    files.clear()  # stopped with the agent: a later agent reports it lost, never re-adopts
                raise
            ended = container_runs.outcome(files)
        return ContainerResult(name, ended.code, ended.reason, ended.message, started, self.clock.now())


def memory_limit(container: JSONDict) -> int | None:
    """The container's memory limit in bytes (its data-size rlimit), None when it has none."""
    value = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    if value is None:
        return None
    try:
        return int(parse_quantity(str(value)))
    except QuantityError:
        return None


def _remove_pod_dir(pod_dir: Path) -> None:
    with contextlib.suppress(OSError):
        work = Path((pod_dir / "workdir").read_text())
        shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(pod_dir, ignore_errors=True)
