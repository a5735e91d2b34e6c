"""``pykueue demo``: the quickstart, narrated, on a temporary embedded cluster.

Starts an in-memory embedded cluster, applies the quickstart ClusterQueue/LocalQueue/ResourceFlavor,
submits the sample Job twice and narrates what happens while a live table shows the Workloads:
the first Job is admitted, the second waits with Kueue's reason, the first finishes and frees its
quota, the second is admitted. Everything goes over HTTP through the same API kubectl uses.
Exits 0 only when the scenario happened as expected.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import aiohttp
import typer
import yaml
from rich.console import Console
from rich.live import Live
from rich.table import Table

from pykueue.api.meta.clock import parse_time
from pykueue.cli.embedded import Embedded, EmbeddedOptions
from pykueue.client import GroupVersionResource, HttpClient, load_kubeconfig

__all__ = ["demo"]

WORKLOADS = GroupVersionResource("kueue.x-k8s.io", "v1beta2", "workloads")
JOBS = GroupVersionResource("batch", "v1", "jobs")
PODS = GroupVersionResource("", "v1", "pods")
_KIND_RES = {
    "ResourceFlavor": GroupVersionResource("kueue.x-k8s.io", "v1beta2", "resourceflavors"),
    "ClusterQueue": GroupVersionResource("kueue.x-k8s.io", "v1beta2", "clusterqueues"),
    "LocalQueue": GroupVersionResource("kueue.x-k8s.io", "v1beta2", "localqueues"),
    "Job": JOBS,
}


def _manifests(name: str) -> list[dict[str, Any]]:
    text = resources.files("pykueue.examples").joinpath("quickstart", name).read_text()
    return [doc for doc in yaml.safe_load_all(text) if doc]


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c.get("type") == kind), {})


def _state(wl: dict[str, Any]) -> str:
    for kind, label in (("Finished", "Finished"), ("Admitted", "Admitted"), ("QuotaReserved", "QuotaReserved")):
        if _condition(wl, kind).get("status") == "True":
            return label
    return "Pending"


@dataclass
class _Story:
    """What has been narrated so far, so each transition is told once."""

    console: Console
    told: set[tuple[str, str]] = field(default_factory=set)
    first_admitted: str = ""
    pending_with_reason: str = ""
    finished: str = ""
    finished_job: str = ""
    second_admitted: str = ""

    def tell(self, key: tuple[str, str], text: str) -> None:
        if key not in self.told:
            self.told.add(key)
            self.console.print(text)

    def observe(self, workloads: list[dict[str, Any]]) -> None:
        for wl in sorted(workloads, key=lambda w: w["metadata"]["creationTimestamp"]):
            name = wl["metadata"]["name"]
            owner = (wl["metadata"].get("ownerReferences") or [{}])[0].get("name", "?")
            state = _state(wl)
            reserved = _condition(wl, "QuotaReserved")
            if state == "Pending" and reserved.get("message"):
                self.tell((name, "pending"), f"[yellow]⏳ Job {owner} waits[/]: {reserved['message']}")
                if "cpu" in reserved["message"] and self.first_admitted:
                    self.pending_with_reason = name
            if state in ("Admitted", "Finished"):
                cq = wl.get("status", {}).get("admission", {}).get("clusterQueue", "?")
                self.tell((name, "admitted"), f"[green]✔ Job {owner} admitted[/] by ClusterQueue {cq}; it starts now")
                if not self.first_admitted:
                    self.first_admitted = name
                elif name != self.first_admitted and self.finished:
                    self.second_admitted = name
            if state == "Finished":
                msg = _condition(wl, "Finished").get("message", "")
                self.tell((name, "finished"), f"[blue]■ Job {owner} finished[/] ({msg or 'succeeded'}); quota released")
                if not self.finished:
                    self.finished, self.finished_job = name, owner

    @property
    def done(self) -> bool:
        return bool(self.first_admitted and self.pending_with_reason and self.finished and self.second_admitted)


def _table(workloads: list[dict[str, Any]]) -> Table:
    table = Table(title="kubectl get workloads -n default")
    for column in ("NAME", "QUEUE", "RESERVED IN", "STATE", "AGE"):
        table.add_column(column)
    now = time.time()
    for wl in sorted(workloads, key=lambda w: w["metadata"]["creationTimestamp"]):
        age = int(now - parse_time(wl["metadata"]["creationTimestamp"]))
        table.add_row(
            wl["metadata"]["name"],
            wl.get("spec", {}).get("queueName", ""),
            wl.get("status", {}).get("admission", {}).get("clusterQueue", ""),
            _state(wl),
            f"{age}s",
        )
    return table


async def _pod_log(client: HttpClient, embedded: Embedded, job: str) -> str:
    pods, _ = await client.list(PODS, "default", label_selector=f"batch.kubernetes.io/job-name={job}")
    if not pods:
        return ""
    name = pods[0]["metadata"]["name"]
    connection = load_kubeconfig(embedded.options.kubeconfig)
    async with (
        aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {connection.token}"},
            connector=aiohttp.TCPConnector(ssl=connection.ssl_context()),
        ) as session,
        session.get(f"{connection.server}/api/v1/namespaces/default/pods/{name}/log") as resp,
    ):
        return await resp.text() if resp.status == 200 else ""


async def _run(console: Console, give_up_after: float) -> bool:
    with tempfile.TemporaryDirectory(prefix="pykueue-demo-") as tmp:
        embedded = Embedded(EmbeddedOptions(data_dir=None, port=0, kubeconfig=Path(tmp) / "kubeconfig"))
        await embedded.start()
        console.print(f"[bold]Embedded cluster up[/] at {embedded.url} (kubeconfig {embedded.options.kubeconfig})")
        try:
            async with HttpClient.from_kubeconfig(embedded.options.kubeconfig, field_manager="pykueue-demo") as client:
                for obj in _manifests("cluster-queue.yaml"):
                    await client.create(_KIND_RES[obj["kind"]], obj, obj["metadata"].get("namespace", ""))
                    console.print(f"$ kubectl apply … → {obj['kind']} {obj['metadata']['name']} created")
                job = _manifests("sample-job.yaml")[0]
                names = []
                for _ in range(2):
                    created = await client.create(JOBS, job, "default")
                    names.append(created["metadata"]["name"])
                    console.print(
                        f"$ kubectl create -f sample-job.yaml → job {created['metadata']['name']} created "
                        "(3 of the 4 CPUs each)"
                    )
                story = _Story(console)
                deadline = time.monotonic() + give_up_after
                with Live(_table([]), console=console, refresh_per_second=4, transient=True) as live:
                    while time.monotonic() < deadline and not story.done:
                        workloads, _ = await client.list(WORKLOADS, "default")
                        live.update(_table(workloads))
                        story.observe(workloads)
                        await asyncio.sleep(0.5)
                workloads, _ = await client.list(WORKLOADS, "default")
                console.print(_table(workloads))
                finished_job = story.finished_job or names[0]
                log = await _pod_log(client, embedded, finished_job)
                if log:
                    console.print(f"$ kubectl logs job/{finished_job}\n{log.rstrip()}")
                return story.done and "Hello from Kueue!" in log
        finally:
            await embedded.stop()


def demo(timeout: float = typer.Option(180.0, help="Give up after this many seconds.")) -> None:
    """Run the quickstart on a temporary embedded cluster and narrate it; exit 0 if it behaved as expected."""
    console = Console()
    ok = asyncio.run(_run(console, timeout))
    if ok:
        console.print("[bold green]Demo complete:[/] admitted, queued with a reason, finished, next admitted.")
    else:
        console.print("[bold red]Demo did not complete as expected.[/]")
        raise typer.Exit(1)
