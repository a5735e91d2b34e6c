"""``pykueue bench apiserver``: the embedded API server measured over real HTTP, next to raw aiohttp.

Owns the benchmark of ``pykueue.apiserver`` + registry + SQLite store as ``pykueue up`` assembles
them (``auto_flush=False`` store, group commit, TLS, bearer token, API only: no controllers), and
of a reference server: a bare aiohttp app with the same TLS that echoes a posted JSON body, serves
a body of a given size, and pushes N JSON lines on a chunked stream.

Both servers run in **subprocesses** (``python -m pykueue.bench.apiserver --child api|echo``): the
client (one asyncio loop, aiohttp, keep-alive, ``concurrency`` requests in flight) then never
shares an event loop or a GIL with the server, and each process's CPU time is its own (the server's
is read from ``/proc/<pid>/task/*/schedstat``, with its run-queue wait). Phases run one after
another, so the idle server costs nothing; a warm-up first opens the connections and creates one
object of each kind (first use of a kind builds its schema) outside every measured phase.

Phases: creates (concurrent POSTs of ConfigMaps, then of Workloads) vs echo POSTs of the same body;
full and ``limit=500`` paginated lists of ``list_objects`` ConfigMaps vs GETs of a raw body of the same size;
W watchers on one namespace while a writer creates and merge-patches objects vs W raw chunked
streams of the same number of lines. Every watcher must see every write exactly once, in
resourceVersion order: anything else is counted as dropped.

``PYKUEUE_BENCH_PROFILE=<file>`` (``--profile``) runs the API server child under cProfile and
dumps the stats there on exit. Who calls it: ``pykueue.cli.bench_apiserver`` and its test.
Invariant: each figure and its reference come from the same run, client, TLS and concurrency.
"""

from __future__ import annotations

import asyncio
import functools
import os
import secrets
import signal
import ssl
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

__all__ = ["ApiserverResult", "Row", "run_apiserver"]

TARGET_CREATES = 2_000.0
TARGET_WATCH = 20_000.0
_PROFILE_ENV = "PYKUEUE_BENCH_PROFILE"
_TOKEN_ENV = "PYKUEUE_BENCH_TOKEN"
_DURABILITY_ENV = "PYKUEUE_BENCH_DURABILITY"
_CM = "/api/v1/namespaces/{ns}/configmaps"
_WL = "/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads"


@dataclass(slots=True)
class Row:
    """One measured line of the table; ``ref_*`` is the raw aiohttp server doing the same work."""

    name: str
    count: int
    """Operations (creates, list traversals) or events expected by all watchers together."""
    per_s: float
    p50_ms: float
    p99_ms: float
    server_us: float
    """API server CPU microseconds per operation or per delivered event (robust to a busy machine)."""
    server_cpu: float
    """API server CPU seconds per wall second over the phase (1.0 = one core busy)."""
    client_cpu: float
    """The same for this (client) process: near 1.0 means the client, not the server, is the limit."""
    server_wait: float = 0.0
    """Server seconds runnable-but-not-running per wall second: other processes' share of its CPU."""
    ref_per_s: float = 0.0
    ref_p50_ms: float = 0.0
    ref_us: float = 0.0
    dropped: int = 0

    @property
    def ratio(self) -> float:
        """pykueue over reference: rates for throughput rows, reference/pykueue latency for lists."""
        if self.per_s and self.ref_per_s:
            return self.per_s / self.ref_per_s
        if self.p50_ms and self.ref_p50_ms:
            return self.ref_p50_ms / self.p50_ms
        return 0.0

    @property
    def cpu_ratio(self) -> float:
        """Reference over pykueue server CPU per operation (1.0: as cheap as raw aiohttp)."""
        return self.ref_us / self.server_us if self.server_us and self.ref_us else 0.0


@dataclass(slots=True)
class ApiserverResult:
    rows: list[Row] = field(default_factory=list)
    creates_per_s: float = 0.0
    watch_per_s: float = 0.0
    """Events/s delivered with the largest watcher count."""
    creates_per_cpu_s: float = 0.0
    """Creates per second of API server CPU: the rate one dedicated core would bound it to."""
    watch_per_cpu_s: float = 0.0
    dropped: int = 0
    errors: int = 0


# ---------------------------------------------------------------------------- child processes


def _workload(name: str, ns: str) -> dict[str, Any]:
    """A one-pod Workload: a CRD create (schema validation, Kueue defaulting), no controllers to admit it."""
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "200Mi"}}}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "bench"}},
        "spec": {
            "queueName": "bench",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
                }
            ],
        },
    }


def _configmap(name: str, ns: str, pad: int = 200) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "bench", "shard": name[-1:]}},
        "data": {"payload": "x" * pad, "index": name},
    }


async def _echo_app(tls: ssl.SSLContext) -> tuple[Any, int]:
    from aiohttp import web

    from pykueue.listening import start_site

    blobs: dict[int, bytes] = {}

    async def echo(request: web.Request) -> web.StreamResponse:
        body = orjson.loads(await request.read())
        return web.Response(body=orjson.dumps(body), status=201, content_type="application/json")

    async def blob(request: web.Request) -> web.StreamResponse:
        size = int(request.query["bytes"])
        if size not in blobs:
            blobs[size] = orjson.dumps({"items": "x" * max(0, size - 14)})
        return web.Response(body=blobs[size], content_type="application/json")

    async def stream(request: web.Request) -> web.StreamResponse:
        count, size = int(request.query["n"]), int(request.query["bytes"])
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        obj = _configmap("echo-000000", "default", max(0, size - 330))
        for i in range(count):  # one encode and one write per event, as a watch stream does
            obj["metadata"]["resourceVersion"] = str(i + 1)
            await response.write(orjson.dumps({"type": "ADDED", "object": obj}) + b"\n")
        await response.write_eof()
        return response

    app = web.Application(client_max_size=8 * 1024 * 1024)
    app.router.add_post("/echo", echo)
    app.router.add_get("/blob", blob)
    app.router.add_get("/stream", stream)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    return runner, await start_site(runner, "127.0.0.1", 0, ssl_context=tls)


async def _child(mode: str, directory: Path, certs: Path, token: str) -> None:
    """Serve until SIGTERM; print ``READY <port>`` once listening."""
    from pykueue.apiserver.certs import ensure_certificates

    files = ensure_certificates(certs, "127.0.0.1")
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    if mode == "api":
        from pykueue.api.meta.clock import SystemClock
        from pykueue.apiserver import serve
        from pykueue.registry import Registry
        from pykueue.store import Store

        durability = os.environ.get(_DURABILITY_ENV, "fsync")
        store = Store(str(directory / "state.db"), auto_flush=False, durability=durability)
        server = await serve(
            Registry(store, clock=SystemClock()),
            "127.0.0.1",
            0,
            token=token,
            tls_cert=str(files.cert),
            tls_key=str(files.key),
        )
        print(f"READY {server.port}", flush=True)
        await stop.wait()
        await server.close()
        store.flush()
        store.close()
    else:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(files.cert), str(files.key))
        runner, port = await _echo_app(context)
        print(f"READY {port}", flush=True)
        await stop.wait()
        await runner.cleanup()


def _child_main(mode: str, directory: str, certs: str) -> None:
    profile = os.environ.get(_PROFILE_ENV) if mode == "api" else None
    token = os.environ.get(_TOKEN_ENV, "")
    if not profile:
        asyncio.run(_child(mode, Path(directory), Path(certs), token))
        return
    import cProfile

    profiler = cProfile.Profile(time.process_time)  # CPU, not wall: the machine is shared
    profiler.enable()
    try:
        asyncio.run(_child(mode, Path(directory), Path(certs), token))
    finally:
        profiler.disable()
        profiler.dump_stats(profile)


class _Process:
    """A server child: its port and its CPU seconds so far."""

    def __init__(self, proc: asyncio.subprocess.Process, port: int) -> None:
        self.proc = proc
        self.port = port

    @classmethod
    async def start(
        cls, mode: str, directory: Path, certs: Path, token: str, profile: Path | None, durability: str = "fsync"
    ) -> _Process:
        env = dict(os.environ)
        env[_TOKEN_ENV] = token  # not on the command line, where ps would show it
        env[_DURABILITY_ENV] = durability
        env.pop(_PROFILE_ENV, None)
        if profile is not None:
            env[_PROFILE_ENV] = str(profile)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "pykueue.bench.apiserver",
            "--child",
            mode,
            str(directory),
            str(certs),
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if not line.startswith(b"READY "):
            proc.kill()
            await proc.wait()
            raise RuntimeError(f"{mode} server failed to start")
        return cls(proc, int(line.split()[1]))

    def cpu(self) -> float:
        """CPU seconds of every live thread (schedstat: ns resolution; /proc/<pid>/stat ticks are 10 ms)."""
        try:
            return (
                sum(
                    int((task / "schedstat").read_text().split()[0])
                    for task in Path(f"/proc/{self.proc.pid}/task").iterdir()
                )
                / 1e9
            )
        except (OSError, IndexError, ValueError):
            pass
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def run_queue_wait(self) -> float:
        """Seconds the server's event-loop thread spent runnable but waiting for a CPU (Linux
        schedstat): the share of the wall clock a busy machine took away from it."""
        try:
            return int(Path(f"/proc/{self.proc.pid}/schedstat").read_text().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return 0.0

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


# ---------------------------------------------------------------------------- measuring


def _pct(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000.0


async def _concurrent(
    count: int, concurrency: int, op: Callable[[int], Awaitable[bool]]
) -> tuple[float, list[float], int]:
    """Run ``op(0..count-1)`` with ``concurrency`` in flight: (wall s, latencies s, failures)."""
    latencies: list[float] = []
    failures = 0
    it = iter(range(count))

    async def worker() -> None:
        nonlocal failures
        for i in it:
            t = time.perf_counter()
            ok = await op(i)
            latencies.append(time.perf_counter() - t)
            failures += 0 if ok else 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(concurrency, count))))
    return time.perf_counter() - start, latencies, failures


async def _ignore_index(op: Callable[[str], Awaitable[bool]], url: str, _: int) -> bool:
    return await op(url)


class _Meter:
    """Wall time and the CPU time of one server process and of this client over a phase."""

    def __init__(self, server: _Process) -> None:
        self._server = server
        self._wall, self._cpu, self._own = time.perf_counter(), server.cpu(), time.process_time()
        self._wait = server.run_queue_wait()
        self.wait = 0.0
        """Server run-queue wait s per wall s, set by :meth:`stop`."""

    def stop(self, end: float | None = None) -> tuple[float, float, float]:
        """(wall s, server CPU s, client CPU s) since construction (or until ``end``)."""
        wall = max((end if end is not None else time.perf_counter()) - self._wall, 1e-9)
        self.wait = (self._server.run_queue_wait() - self._wait) / wall
        return wall, self._server.cpu() - self._cpu, time.process_time() - self._own


class _Bench:
    def __init__(
        self,
        api: _Process,
        echo: _Process,
        session: aiohttp.ClientSession,
        streams: aiohttp.ClientSession,
        concurrency: int,
        out: Callable[[str], None],
    ) -> None:
        self.api, self.echo = api, echo
        self.session, self.streams = session, streams
        self.api_url = f"https://127.0.0.1:{api.port}"
        self.echo_url = f"https://127.0.0.1:{echo.port}"
        self.concurrency = concurrency
        self.out = out
        self.errors = 0

    async def warm_up(self) -> None:
        """Open ``concurrency`` keep-alive connections to each server, so no phase pays TLS handshakes."""

        async def get(url: str) -> bool:
            async with self.session.get(url) as resp:
                await resp.read()
                return resp.status == 200

        for url in (self.api_url + "/version", self.echo_url + "/blob?bytes=100"):
            await _concurrent(self.concurrency * 4, self.concurrency, functools.partial(_ignore_index, get, url))
        # First use of a kind builds its schema and validators (about a second for Workload): pay it
        # here, in a namespace no phase counts, so the phases measure the steady state.
        for make, path in ((_configmap, _CM), (_workload, _WL)):
            ok = await self._post(
                self.api_url + path.format(ns="kube-system"), orjson.dumps(make("warm-up-0", "kube-system"))
            )
            self.errors += 0 if ok else 1

    async def _post(self, url: str, body: bytes, status: int = 201) -> bool:
        async with self.session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
            await resp.read()
            return resp.status == status

    async def create(self, ns: str, names: Sequence[str]) -> tuple[float, list[float], int]:
        url = self.api_url + _CM.format(ns=ns)
        return await _concurrent(
            len(names), self.concurrency, lambda i: self._post(url, orjson.dumps(_configmap(names[i], ns)))
        )

    async def creates(self, count: int, *, workloads: bool = False) -> Row:
        """``count`` ConfigMaps ``bench-<i>`` (or Workloads ``wl-<i>``) by concurrent POSTs, after as many
        echo POSTs of the same body."""
        make, path, prefix = (_workload, _WL, "wl") if workloads else (_configmap, _CM, "bench")
        body = orjson.dumps(make(f"{prefix}-000000", "default"))
        echo_url = self.echo_url + "/echo"
        meter = _Meter(self.echo)
        _, ref_lat, ref_fail = await _concurrent(count, self.concurrency, lambda i: self._post(echo_url, body))
        ref_wall, ref_cpu, _ = meter.stop()
        url = self.api_url + path.format(ns="default")
        meter = _Meter(self.api)
        _, lat, fail = await _concurrent(
            count, self.concurrency, lambda i: self._post(url, orjson.dumps(make(f"{prefix}-{i:06d}", "default")))
        )
        wall, cpu, own = meter.stop()
        self.errors += fail + ref_fail
        name = f"creates (POST {'workloads' if workloads else 'configmaps'})"
        return Row(
            name,
            count,
            count / wall,
            _pct(lat, 0.5),
            _pct(lat, 0.99),
            cpu * 1e6 / count,
            cpu / wall,
            own / wall,
            meter.wait,
            ref_per_s=count / ref_wall,
            ref_p50_ms=_pct(ref_lat, 0.5),
            ref_us=ref_cpu * 1e6 / count,
        )

    async def _list_once(self, limit: int | None) -> tuple[float, int, int, int]:
        """(seconds, items, bytes, pages) of one full traversal of the default namespace's ConfigMaps.

        The seconds run from each request to its last body byte: the client's JSON parsing (about as
        long again for 10,000 objects) is the client's cost, not the server's, and stays outside."""
        elapsed = 0.0
        items = size = pages = 0
        token = ""
        while True:
            params = {"limit": str(limit)} if limit else {}
            if token:
                params["continue"] = token
            start = time.perf_counter()
            async with self.session.get(self.api_url + _CM.format(ns="default"), params=params) as resp:
                data = await resp.read()
                elapsed += time.perf_counter() - start
                if resp.status != 200:
                    self.errors += 1
                    return elapsed, items, size, pages
            body = orjson.loads(data)
            items, size, pages = items + len(body["items"]), size + len(data), pages + 1
            token = body["metadata"].get("continue") or ""
            if not token:
                return elapsed, items, size, pages

    async def lists(self, expected: int, runs: int) -> list[Row]:
        rows = []
        for label, limit in (("list %d (full)", None), ("list %d (limit=500)", 500)):
            latencies: list[float] = []
            ref: list[float] = []
            size = pages = 0
            meter = _Meter(self.api)
            for _ in range(runs):
                elapsed, items, size, pages = await self._list_once(limit)
                latencies.append(elapsed)
                if items != expected:
                    self.out(f"  ! {label % expected}: got {items} items, expected {expected}")
                    self.errors += 1
            wall, cpu, own = meter.stop()
            wait = meter.wait
            meter = _Meter(self.echo)
            for _ in range(runs):  # the same bytes in the same number of responses, served raw
                t = time.perf_counter()
                for _ in range(pages):
                    async with self.session.get(
                        self.echo_url + "/blob", params={"bytes": str(size // max(pages, 1))}
                    ) as resp:
                        await resp.read()
                ref.append(time.perf_counter() - t)
            _, ref_cpu, _ = meter.stop()
            rows.append(
                Row(
                    label % expected,
                    runs,
                    0.0,
                    _pct(latencies, 0.5),
                    _pct(latencies, 0.99),
                    cpu * 1e6 / runs,
                    cpu / wall,
                    own / wall,
                    wait,
                    ref_p50_ms=_pct(ref, 0.5),
                    ref_us=ref_cpu * 1e6 / runs,
                )
            )
        return rows

    async def _resource_version(self) -> str:
        async with self.session.get(self.api_url + _CM.format(ns="default"), params={"limit": "1"}) as resp:
            return str(orjson.loads(await resp.read())["metadata"]["resourceVersion"])

    async def _watch(
        self, ns: str, rv: str, expected: int, limit_s: float, ready: asyncio.Event, done: list[float]
    ) -> int:
        """Read one watch stream until ``expected`` events arrive; return how many came in rv order."""
        url = self.api_url + _CM.format(ns=ns)
        params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": str(int(limit_s) + 1)}
        got, last = 0, int(rv)
        async with self.streams.get(url, params=params, timeout=aiohttp.ClientTimeout(total=limit_s)) as resp:
            ready.set()
            async for line in resp.content:
                event = orjson.loads(line)
                version = int(event["object"]["metadata"]["resourceVersion"])
                if event["type"] in ("ADDED", "MODIFIED") and version > last:
                    got, last = got + 1, version
                if got >= expected:
                    break
        done.append(time.perf_counter())
        return got

    async def watch(self, watchers: int, events: int, limit_s: float) -> Row:
        """W watchers on the default namespace; ``events`` writes: half creates, then merge patches."""
        ns = "default"
        creates = (events + 1) // 2
        names = [f"w{watchers}-{i:06d}" for i in range(creates)]
        patch = orjson.dumps({"data": {"index": "patched"}})
        headers = {"Content-Type": "application/merge-patch+json"}
        url = self.api_url + _CM.format(ns=ns)

        async def write(i: int) -> bool:
            if i < creates:
                return await self._post(url, orjson.dumps(_configmap(names[i], ns)))
            async with self.session.patch(f"{url}/{names[i - creates]}", data=patch, headers=headers) as resp:
                await resp.read()
                return resp.status == 200

        rv = await self._resource_version()
        done: list[float] = []
        readies = [asyncio.Event() for _ in range(watchers)]
        tasks = [asyncio.create_task(self._watch(ns, rv, events, limit_s, readies[i], done)) for i in range(watchers)]
        async with asyncio.timeout(limit_s):
            await asyncio.gather(*(r.wait() for r in readies))
        meter = _Meter(self.api)
        # creates first, then patches of the created objects (a patch needs its create)
        _, _, failed_creates = await _concurrent(creates, self.concurrency, write)
        _, _, failed_patches = await _concurrent(events - creates, self.concurrency, lambda i: write(creates + i))
        results = await asyncio.gather(*tasks, return_exceptions=True)
        wall, cpu, own = meter.stop(max(done) if done else None)
        wait = meter.wait
        received = sum(r for r in results if isinstance(r, int))
        self.errors += failed_creates + failed_patches + sum(1 for r in results if isinstance(r, BaseException))
        ref_per_s, ref_cpu = await self._stream_reference(watchers, events)
        total = watchers * events
        return Row(
            f"watch {watchers} watcher{'s' if watchers != 1 else ''} ({events} writes)",
            total,
            received / wall,
            0.0,
            0.0,
            cpu * 1e6 / max(received, 1),
            cpu / wall,
            own / wall,
            wait,
            ref_per_s=ref_per_s,
            ref_us=ref_cpu * 1e6 / total,
            dropped=total - received,
        )

    async def _stream_reference(self, watchers: int, events: int) -> tuple[float, float]:
        """W raw chunked streams of ``events`` lines of a watch event's size: (events/s, server CPU s)."""
        size = len(orjson.dumps({"type": "ADDED", "object": _configmap("w1-000000", "default")})) + 130

        async def one() -> int:
            got = 0
            async with self.streams.get(
                self.echo_url + "/stream", params={"n": str(events), "bytes": str(size)}
            ) as resp:
                async for line in resp.content:
                    orjson.loads(line)
                    got += 1
            return got

        meter = _Meter(self.echo)
        counts = await asyncio.gather(*(one() for _ in range(watchers)))
        wall, cpu, _ = meter.stop()
        if sum(counts) != watchers * events:  # the reference must deliver everything too
            self.out(f"  ! reference streams: got {sum(counts)} lines, expected {watchers * events}")
            self.errors += 1
        return sum(counts) / wall, cpu


# ---------------------------------------------------------------------------- report


def _fmt(value: float, spec: str = ".1f") -> str:
    return format(value, spec) if value else "-"


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def _print(rows: list[Row], out: Callable[[str], None]) -> None:
    out(
        f"{'phase':<32} {'count':>6} {'per_s':>8} {'p50_ms':>7} {'p99_ms':>7} {'srv_us':>8} {'srv_cpu':>7} "
        f"{'srv_wait':>8} {'cli_cpu':>7} {'ref_per_s':>9} {'ref_p50':>7} {'ref_us':>7} {'ratio':>6} {'cpu_rt':>6} "
        f"{'dropped':>7}"
    )
    for r in rows:
        out(
            f"{r.name:<32} {r.count:>6} {_fmt(r.per_s):>8} {_fmt(r.p50_ms, '.1f'):>7} {_fmt(r.p99_ms, '.1f'):>7} "
            f"{_fmt(r.server_us, '.0f'):>8} {r.server_cpu:>7.2f} {r.server_wait:>8.2f} {r.client_cpu:>7.2f} "
            f"{_fmt(r.ref_per_s):>9} {_fmt(r.ref_p50_ms, '.1f'):>7} {_fmt(r.ref_us, '.0f'):>7} "
            f"{_fmt(r.ratio, '.3f'):>6} {_fmt(r.cpu_ratio, '.3f'):>6} {r.dropped:>7}"
        )


async def _run(
    objects: int,
    list_objects: int,
    watchers: Sequence[int],
    events: int,
    concurrency: int,
    runs: int,
    duration: float,
    profile: Path | None,
    out: Callable[[str], None],
    workloads: int,
    durability: str,
) -> ApiserverResult:
    result = ApiserverResult()
    token = secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="pykueue-bench-") as tmp:
        base = Path(tmp)
        (base / "api").mkdir()
        (base / "echo").mkdir()
        from pykueue.apiserver.certs import ensure_certificates

        files = ensure_certificates(base, "127.0.0.1")  # one CA for both servers
        api = await _Process.start("api", base / "api", base, token, profile, durability)
        out(f"store durability: {durability}")
        echo = await _Process.start("echo", base / "echo", base, token, None)
        try:
            tls = ssl.create_default_context(cafile=str(files.ca_cert))
            headers = {"Authorization": f"Bearer {token}"}
            timeout = aiohttp.ClientTimeout(total=max(duration, 60.0))
            pool = aiohttp.TCPConnector(limit=0, limit_per_host=concurrency, ssl=tls)
            async with (
                aiohttp.ClientSession(connector=pool, headers=headers, timeout=timeout) as session,
                aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=0, ssl=tls), headers=headers, timeout=timeout
                ) as streams,
            ):
                bench = _Bench(api, echo, session, streams, concurrency, out)
                out(
                    f"pykueue bench apiserver: server and reference in subprocesses (SQLite in a temp dir, "
                    f"TLS, bearer token, API only); client: aiohttp, keep-alive, {concurrency} in flight; "
                    f"{os.cpu_count()} cores, load average {_load()}"
                )
                await bench.warm_up()
                row = await bench.creates(objects)
                result.rows.append(row)
                result.creates_per_s = row.per_s
                result.creates_per_cpu_s = 1e6 / row.server_us if row.server_us else 0.0
                if workloads:
                    result.rows.append(await bench.creates(workloads, workloads=True))
                if list_objects > objects:
                    rest = [f"bench-{i:06d}" for i in range(objects, list_objects)]
                    _, _, failed = await bench.create("default", rest)
                    bench.errors += failed
                result.rows.extend(await bench.lists(max(list_objects, objects), runs))
                for count in sorted(set(watchers)):
                    row = await bench.watch(count, events, duration)
                    result.rows.append(row)
                    result.dropped += row.dropped
                    result.watch_per_s = row.per_s
                    result.watch_per_cpu_s = 1e6 / row.server_us if row.server_us else 0.0
                result.errors = bench.errors
        finally:
            await api.stop()
            await echo.stop()
    _print(result.rows, out)
    out(
        "per_s: creates/s, or watch events/s delivered to all watchers; lists: ms per full traversal "
        f"(requests to last byte, client parsing excluded), {runs} runs; srv_us/ref_us: server CPU us per "
        "create, list traversal or delivered event; srv_cpu/cli_cpu: server/client CPU s per wall s; srv_wait: "
        "server s spent waiting for a CPU per wall s; ratio: pykueue/reference rate (lists: reference/pykueue "
        "p50); cpu_rt: reference/pykueue server CPU per operation"
    )
    if profile is not None:
        out(f"cProfile stats of the API server: {profile}")

    def verdict(value: float, target: float) -> str:
        return "met" if value >= target else "MISSED"

    out(
        f"summary: creates/s {result.creates_per_s:.0f} (target {TARGET_CREATES:.0f}: "
        f"{verdict(result.creates_per_s, TARGET_CREATES)}), watch events/s {result.watch_per_s:.0f} "
        f"(target {TARGET_WATCH:.0f}: {verdict(result.watch_per_s, TARGET_WATCH)}), "
        f"dropped {result.dropped}, errors {result.errors}; per server CPU-second: "
        f"{result.creates_per_cpu_s:.0f} creates, {result.watch_per_cpu_s:.0f} watch events "
        f"(load average {_load()})"
    )
    return result


def run_apiserver(
    objects: int = 5_000,
    list_objects: int = 10_000,
    watchers: Sequence[int] = (1, 10),
    events: int = 2_000,
    concurrency: int = 32,
    runs: int = 5,
    duration: float = 60.0,
    profile: Path | None = None,
    out: Callable[[str], None] = print,
    workloads: int = 1_000,
    durability: str = "fsync",
) -> ApiserverResult:
    """Run every phase, print the table and the summary line, return the figures (``workloads=0``
    skips the Workload creates; ``durability`` is the store's, as ``pykueue up --durability``)."""
    return asyncio.run(
        _run(objects, list_objects, watchers, events, concurrency, runs, duration, profile, out, workloads, durability)
    )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        _child_main(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        run_apiserver()
