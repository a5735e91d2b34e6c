"""The ``process`` node agent: runs each container's ``command`` + ``args`` as a local process.

Owned by ``cluster/``; one per ``kind: process`` node of the embedded cluster. The image is
ignored (there is no container runtime): the command runs on the host, in a fresh temporary
working directory, with the container's literal ``env`` values (plus ``fieldRef`` values) on top of
the host's ``PATH``. Output (stdout + stderr) goes to one log file per container, served by
``kubectl logs`` through :meth:`ProcessNodeAgent.pod_log`.

A container without ``command`` cannot run (there is no image entrypoint to fall back on), except
when the image has none either (busybox, alpine, ubuntu, ...: ``args`` are the command line) and
for the ``sleep`` test image Kueue's samples use, whose entrypoint is emulated. Deleting the pod sends
SIGTERM to the container's process group, then SIGKILL after the pod's grace period.

Invariant: no process outlives its pod, nor the agent.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import os
import re
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from pykueue.api.clock import Clock
from pykueue.api.errors import BadRequest, NotFound
from pykueue.client import Client, Informer, Res, key_of
from pykueue.cluster.agent import ContainerResult, NodeAgent, Running
from pykueue.cluster.nodes import NodeSpec
from pykueue.cluster.podutil import Record, no_record

__all__ = ["EnvError", "ProcessNodeAgent", "container_env", "env_references"]

JSON = dict[str, Any]

STOP_GRACE = 2.0
"""Seconds a process gets between SIGTERM and SIGKILL when the whole agent stops."""

_FIELD = re.compile(r"^metadata\.(labels|annotations)\['(.+)'\]$")


def _field_value(pod: JSON, path: str, node: str) -> str:
    meta = pod.get("metadata") or {}
    match = _FIELD.match(path)
    if match:
        return str((meta.get(match[1]) or {}).get(match[2], ""))
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": node,
              "spec.serviceAccountName": (pod.get("spec") or {}).get("serviceAccountName", "default"),
              "status.podIP": "127.0.0.1", "status.hostIP": "127.0.0.1"}
    return str(simple.get(path) or "")


class EnvError(Exception):
    """A referenced ConfigMap/Secret or key is missing: the kubelet's CreateContainerConfigError."""


Sources = dict[tuple[str, str], dict[str, str]]
"""("configmaps"|"secrets", name) -> its data (secrets decoded); what ``env``/``envFrom`` may read."""


def env_references(container: JSON) -> set[tuple[str, str]]:
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


def _lookup(sources: Sources, plural: str, ref: JSON) -> str | None:
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


def container_env(pod: JSON, container: JSON, node: str, workdir: str,
                  sources: Sources | None = None) -> dict[str, str]:
    """The process environment: host PATH, kube-like HOSTNAME/HOME, then ``envFrom``, then ``env`` in
    order (literal values with ``$(VAR)`` expansion, fieldRef, configMapKeyRef, secretKeyRef).
    Raises :class:`EnvError` for a missing, non-optional reference."""
    sources = sources or {}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": workdir,
           "HOSTNAME": str((pod.get("metadata") or {}).get("name", "")), "LANG": "C.UTF-8"}
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
            env[name] = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                               lambda m: env.get(m[1], m[0]), str(var.get("value") or ""))
        elif source.get("fieldRef"):
            env[name] = _field_value(pod, str(source["fieldRef"].get("fieldPath", "")), node)
        elif source.get("configMapKeyRef") or source.get("secretKeyRef"):
            plural, ref = (("configmaps", source["configMapKeyRef"]) if source.get("configMapKeyRef")
                           else ("secrets", source["secretKeyRef"]))
            value = _lookup(sources, plural, ref)
            if value is not None:
                env[name] = value
    return env


def _argv(container: JSON) -> list[str] | None:
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
        # gcr.io/k8s-staging-perf-tests/sleep: the entrypoint sleeps for a Go duration ("30s").
        return [sys.executable, "-c", _SLEEP_SNIPPET, *args]
    return None


_NO_ENTRYPOINT = frozenset({"busybox", "alpine", "ubuntu", "debian", "bash", "fedora", "centos", "rockylinux"})
"""Common images without an ENTRYPOINT, whose ``args`` alone are the command line."""

_SLEEP_SNIPPET = (
    "import re,sys,time\n"
    "units={'ms':0.001,'s':1,'m':60,'h':3600}\n"
    "arg=sys.argv[1] if len(sys.argv)>1 else '0s'\n"
    "total=sum(float(n)*units[u] for n,u in re.findall(r'([0-9.]+)(ms|s|m|h)',arg)) or float(arg or 0)\n"
    "time.sleep(total)\n"
)


class ProcessNodeAgent(NodeAgent):
    kind = "process"

    def __init__(self, client: Client, spec: NodeSpec, pods: Informer, clock: Clock, *,
                 root: Path | None = None, record: Record = no_record) -> None:
        super().__init__(client, spec, pods, clock, record=record)
        self._own_root = root is None
        self.root = root or Path(tempfile.mkdtemp(prefix=f"pykueue-node-{spec.name}-"))
        self._logs: dict[str, Path] = {}
        """pod key -> its log directory (one file per container)."""

    async def stop(self) -> None:
        await super().stop()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def forget(self, key: str) -> None:
        directory = self._logs.pop(key, None)
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)

    def pod_log(self, pod: JSON, container: str) -> str:
        directory = self._logs.get(key_of(pod))
        path = directory / f"{container}.log" if directory else None
        if path is None or not path.exists():
            name = pod["metadata"]["name"]
            if (pod.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed"):
                raise BadRequest(f'the log of container "{container}" in pod "{name}" is no longer available '
                                 "(node agents keep logs only while they run)")
            raise BadRequest(f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating')
        return path.read_text(errors="replace")

    async def _sources(self, pod: JSON, container: JSON) -> Sources:
        """Fetch the ConfigMaps and Secrets the container's environment reads (missing ones are left out)."""
        namespace = str((pod.get("metadata") or {}).get("namespace") or "")
        sources: Sources = {}
        for plural, name in env_references(container):
            try:
                obj = await self.client.get(Res("", "v1", plural), name, namespace)
            except NotFound:
                continue
            data = {str(k): str(v) for k, v in (obj.get("data") or {}).items()}
            if plural == "secrets":
                data = {k: base64.b64decode(v).decode(errors="replace") for k, v in data.items()}
                data.update({str(k): str(v) for k, v in (obj.get("stringData") or {}).items()})
            elif obj.get("binaryData"):
                data.update({str(k): base64.b64decode(str(v)).decode(errors="replace")
                             for k, v in obj["binaryData"].items()})
            sources[(plural, name)] = data
        return sources

    async def execute(self, pod: JSON, running: Running) -> list[ContainerResult]:
        key = key_of(pod)
        meta = pod.get("metadata") or {}
        pod_dir = self.root / f"{meta.get('namespace', '')}_{meta.get('name', '')}_{meta.get('uid', '')}"
        work = pod_dir / "work"
        work.mkdir(parents=True, exist_ok=True)
        self._logs[key] = pod_dir
        spec = pod.get("spec") or {}
        grace = float(spec.get("terminationGracePeriodSeconds", 30))
        for init in spec.get("initContainers") or []:
            result = await self._run_container(pod, init, pod_dir, work, grace)
            if result.exit_code != 0:
                return [result]
        containers = list(spec.get("containers") or [])
        await running()
        results = await asyncio.gather(*(
            self.supervise(pod, str(c.get("name", "")),
                           functools.partial(self._run_container, pod, c, pod_dir, work, grace))
            for c in containers))
        return list(results)

    async def _run_container(self, pod: JSON, container: JSON, pod_dir: Path, work: Path,
                             grace: float) -> ContainerResult:
        name = str(container.get("name", ""))
        started = self.clock.now()
        argv = _argv(container)
        log_path = pod_dir / f"{name}.log"
        if argv is None:
            message = (f'container "{name}" has no command: pykueue process nodes run the command, not the '
                       f"image ({container.get('image', '')}); give the container a command")
            log_path.write_text(message + "\n")
            return ContainerResult(name, 128, "ContainerCannotRun", message, started, self.clock.now())
        try:
            env = container_env(pod, container, self.name, str(work), await self._sources(pod, container))
        except EnvError as exc:
            log_path.write_text(f"{exc}\n")
            return ContainerResult(name, 1, "CreateContainerConfigError", str(exc), started, self.clock.now())
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv, stdin=asyncio.subprocess.DEVNULL, stdout=log_fd, stderr=asyncio.subprocess.STDOUT,
                    cwd=str(work), env=env, start_new_session=True)
            except OSError as exc:
                message = f"failed to start {argv[0]!r}: {exc.strerror or exc}"
                os.write(log_fd, (message + "\n").encode())
                return ContainerResult(name, 127, "StartError", message, started, self.clock.now())
            try:
                code = await proc.wait()
            except asyncio.CancelledError:
                # Shutting the agent down is not worth a full grace period per stubborn process.
                await _terminate(proc, min(grace, STOP_GRACE) if self._stopping else grace)
                raise
        finally:
            os.close(log_fd)
        reason = "Completed" if code == 0 else "Error"
        exit_code = code if code >= 0 else 128 - code  # killed by signal N -> 128+N, as containers report
        return ContainerResult(name, exit_code, reason, "", started, self.clock.now())


async def _terminate(proc: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM the process group, SIGKILL it after ``grace`` seconds."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), grace)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
