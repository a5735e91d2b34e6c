"""``pykueue up``: run the embedded cluster in the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from pykueue.apiserver.audit import load_token_file
from pykueue.cli.controller_process import mode_error
from pykueue.cli.cpu_profile import profiled
from pykueue.cli.embedded import Embedded, EmbeddedOptions, is_loopback
from pykueue.cli.gcpolicy import run_gc_policy
from pykueue.cli.option_checks import durability_error, port_error
from pykueue.cluster import load_nodes
from pykueue.cluster.pod_user import resolve_run_as
from pykueue.controllers.config import ConfigError, embedded_default, load_config
from pykueue.eventloop import EventLoopError
from pykueue.eventloop import run as run_loop
from pykueue.store import StoreFileError

__all__ = ["non_loopback_warning", "up"]


async def _run(options: EmbeddedOptions) -> None:
    from prometheus_client import disable_created_metrics

    disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series, as Go's exposition
    embedded = Embedded(options)
    await embedded.start()
    # The informer caches are full now: move this long-lived state out of the collector's way so
    # GC passes stop rescanning it (see the scheduler engine's note). A process-wide choice, so it is
    # made here, by the process, not inside a library component.
    gc.collect()
    gc.freeze()
    gc_policy = asyncio.create_task(run_gc_policy(), name="gc-policy")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    kubeconfig = options.kubeconfig.resolve()
    print(f"pykueue is up at {embedded.url}", flush=True)
    print(f"  kubeconfig: {kubeconfig} (context 'pykueue')", flush=True)
    if options.kueue:
        print(f"  try: KUBECONFIG={kubeconfig} kubectl get clusterqueues", flush=True)
    else:  # a bare cluster: Kueue's kinds come with their CRDs
        print(f"  try: pykueue crds | KUBECONFIG={kubeconfig} kubectl apply --server-side -f -", flush=True)
    try:
        await stop.wait()
    finally:
        print("pykueue is stopping", flush=True)
        gc_policy.cancel()
        await embedded.stop()


def _log_options(ctx: typer.Context) -> tuple[str, str]:
    """The global --log-level/--log-format, for the controller process (defaults when run alone)."""
    chosen = ctx.obj if isinstance(ctx.obj, dict) else {}
    return str(chosen.get("log_level", "info")), str(chosen.get("log_format", "text"))


def _env(name: str) -> dict[str, Any]:
    return {"envvar": f"PYKUEUE_{name}", "show_envvar": True}


def up(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None, typer.Option(help="Keep state here (SQLite); default: in memory.", **_env("DATA_DIR"))
    ] = None,
    port: Annotated[int, typer.Option(help="Port to listen on (0 = any free port).", **_env("PORT"))] = 6443,
    address: Annotated[
        str, typer.Option(help="Address to listen on; non-loopback requires TLS.", **_env("ADDRESS"))
    ] = "127.0.0.1",
    kubeconfig: Annotated[Path, typer.Option(help="Where to write the kubeconfig.", **_env("KUBECONFIG"))] = Path(
        "pykueue.kubeconfig"
    ),
    config: Annotated[Path | None, typer.Option(help="A Kueue-style Configuration YAML.", **_env("CONFIG"))] = None,
    nodes: Annotated[
        Path | None, typer.Option(help="YAML declaring embedded nodes (process/simulated).", **_env("NODES"))
    ] = None,
    no_kueue: Annotated[
        bool,
        typer.Option(
            "--no-kueue",
            help="A bare cluster: the API server alone, no pykueue controllers and no Kueue or "
            "JobSet kinds until their CRDs are applied.",
            **_env("NO_KUEUE"),
        ),
    ] = False,
    controllers: Annotated[
        str,
        typer.Option(
            help="Where the controllers run: 'in-process' (one process) or 'process' (a second process, "
            "like Kueue's controller-manager: uses a second core).",
            **_env("CONTROLLERS"),
        ),
    ] = "in-process",
    access_log: Annotated[
        bool,
        typer.Option(
            "--access-log",
            help="Log one line per API request (client, request, status, bytes, seconds, user agent).",
            **_env("ACCESS_LOG"),
        ),
    ] = False,
    allow_root_pods: Annotated[
        bool,
        typer.Option(
            "--allow-root-pods",
            help="When pykueue runs as root, let process nodes run pods as root (by default "
            "they run as 'nobody', or the node's 'user').",
            **_env("ALLOW_ROOT_PODS"),
        ),
    ] = False,
    audit_log: Annotated[
        Path | None,
        typer.Option(
            help="Write one audit.k8s.io/v1 Event per API request to this file, as JSON lines (level Metadata).",
            **_env("AUDIT_LOG"),
        ),
    ] = None,
    token_auth_file: Annotated[
        Path | None,
        typer.Option(
            help='Further bearer tokens, in kube-apiserver\'s CSV format: token,user,uid,"group1,group2".',
            **_env("TOKEN_AUTH_FILE"),
        ),
    ] = None,
    durability: Annotated[
        str,
        typer.Option(
            help="With --data-dir: 'fsync' (an acknowledged write survives power loss) or 'os' (it survives a "
            "crash of pykueue, kill -9 included, but not of the machine; faster).",
            **_env("DURABILITY"),
        ),
    ] = "fsync",
    profile: Annotated[
        Path | None,
        typer.Option(
            help="Run under cProfile on the CPU clock and write its stats to this file when pykueue stops "
            "(python -m pstats FILE reads them). For measurements: roughly doubles the CPU per request. "
            "With --controllers process it profiles this process only.",
            **_env("PROFILE"),
        ),
    ] = None,
) -> None:
    """Run a local, Kubernetes-compatible control plane with pykueue inside; kubectl works against it."""
    problem = mode_error(controllers) or port_error(port) or durability_error(durability)
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    for path, what in ((config, "--config"), (nodes, "--nodes"), (token_auth_file, "--token-auth-file")):
        if path is not None and not path.is_file():
            typer.echo(f"error: {what} {path}: no such file", err=True)
            raise typer.Exit(2)
    try:
        config_text = config.read_text() if config is not None else ""
        kueue_config = load_config(config_text) if config is not None else embedded_default()
        node_specs = load_nodes(nodes)
        users = load_token_file(token_auth_file) if token_auth_file is not None else {}
        if audit_log is not None and not audit_log.parent.is_dir():
            raise ValueError(f"--audit-log {audit_log}: no such directory {audit_log.parent}")
        if profile is not None and not profile.parent.is_dir():
            raise ValueError(f"--profile {profile}: no such directory {profile.parent}")
        for spec in node_specs:
            if spec.kind == "process":
                try:
                    resolve_run_as(spec.user, allow_root=allow_root_pods)
                except ValueError as exc:
                    raise ValueError(f"node {spec.name}: {exc}") from None
    except (ConfigError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    log_level, log_format = _log_options(ctx)
    options = EmbeddedOptions(
        data_dir=data_dir,
        address=address,
        port=port,
        kubeconfig=kubeconfig,
        config=kueue_config,
        nodes=node_specs,
        kueue=not no_kueue,
        controllers=controllers,
        config_path=config.resolve() if config is not None else None,
        config_text=config_text,
        durability=durability,
        allow_root_pods=allow_root_pods,
        access_log=access_log,
        log_level=log_level,
        log_format=log_format,
        users=users,
        audit_log=audit_log,
    )
    if kueue_config.integrations.not_implemented and not no_kueue:
        typer.echo(
            "warning: not implemented by pykueue, objects of these kinds are not queued: "
            + ", ".join(kueue_config.integrations.not_implemented),
            err=True,
        )
    if not is_loopback(address):
        typer.echo(
            non_loopback_warning(address, [spec.name for spec in node_specs if spec.kind == "process"]), err=True
        )
    try:
        if profile is None:
            run_loop(_run(options))
        else:
            profiled(profile, lambda: run_loop(_run(options)))
    except EventLoopError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except (OSError, StoreFileError) as exc:  # port in use, data dir held by another pykueue up, ...
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)


def non_loopback_warning(address: str, process_nodes: list[str]) -> str:
    """What ``pykueue up`` says when it listens beyond this machine: who may come in, and what a
    ``process`` node hands them (a command on this host, not a container)."""
    text = (
        f"warning: listening on non-loopback address {address}; anyone who can reach it needs the token "
        "in the kubeconfig"
    )
    if not process_nodes:
        return text
    return (
        f"{text}. Whoever has the token can run any command on this machine through the process node(s) "
        f"{', '.join(process_nodes)}: a process node runs each container's command directly on this host "
        "(the image is ignored), with the host's network, kernel and the files its user may read. "
        "It is not a container and not isolation: pods never run as root unless --allow-root-pods, work "
        "outside the data dir and get their memory limit as an rlimit; that is "
        "containment for trusted work on your own machine. For anyone else use simulated nodes or a real "
        "cluster (see README)."
    )
