"""The kueuectl verbs as one typer app: ``kubectl kueue ...`` (the ``kubectl-kueue`` entry point)
and the same verbs under ``pykueue``.

Owned by ``cli/kueuectl``. Kueue's pass-through verbs (``get | describe | edit | patch | delete``
of ``workload | clusterqueue | localqueue | resourceflavor``) run the real kubectl with the same
arguments (``delete workload`` is kueuectl's own); :func:`passthrough` is checked before typer
parses anything, so every kubectl flag passes through untouched.
"""

from __future__ import annotations

import os
import shutil
import sys

import typer

from .actions import delete_app, resume_app, stop_app, version
from .create import create_app
from .listing import list_app

__all__ = ["PASSTHROUGH_TYPES", "PASSTHROUGH_VERBS", "add_verbs", "app", "hoist_flags", "main", "passthrough"]

PASSTHROUGH_VERBS = ("get", "describe", "edit", "patch", "delete")
PASSTHROUGH_TYPES = (
    "workload",
    "workloads",
    "wl",
    "clusterqueue",
    "clusterqueues",
    "cq",
    "localqueue",
    "localqueues",
    "lq",
    "resourceflavor",
    "resourceflavors",
    "rf",
)


def add_verbs(target: typer.Typer) -> None:
    """Register the kueuectl verbs (and ``explain``) on ``target``."""
    from pykueue.cli.explain import explain_app

    target.add_typer(create_app, name="create")
    target.add_typer(list_app, name="list")
    target.add_typer(stop_app, name="stop")
    target.add_typer(resume_app, name="resume")
    target.add_typer(
        delete_app,
        name="delete",
        help="Delete a Workload and its job; pass-through to kubectl for the other Kueue kinds.",
    )
    target.add_typer(explain_app, name="explain")
    for verb in PASSTHROUGH_VERBS[:-1]:
        target.command(
            verb,
            help=f'Pass-through "{verb}" of Kueue kinds to kubectl.',
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        )(_unknown_type)


def _unknown_type(ctx: typer.Context) -> None:
    typer.echo(f"error: {ctx.info_name} passes through for {', '.join(PASSTHROUGH_TYPES[::3])} only", err=True)
    raise typer.Exit(1)


VALUE_FLAGS = ("--kubeconfig", "--context", "-n", "--namespace", "-o", "--output")
BOOL_FLAGS = ("-A", "--all-namespaces")


def hoist_flags(args: list[str]) -> list[str]:
    """kubectl's global flags may come before the verb (``kubectl kueue -n team list workload``):
    move them behind it, where every verb declares them."""
    moved: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        name = arg.split("=", 1)[0]
        if name in VALUE_FLAGS and "=" not in arg and index + 1 < len(args):
            moved += args[index : index + 2]
            index += 2
        elif name in VALUE_FLAGS or arg in BOOL_FLAGS:
            moved.append(arg)
            index += 1
        else:
            break
    return [*args[index:], *moved] if moved and index < len(args) else args


def passthrough(args: list[str]) -> None:
    """Replace this process with ``kubectl <args>`` when ``args`` is a pass-through; else return."""
    if len(args) < 2 or args[0] not in PASSTHROUGH_VERBS or args[1].split(".")[0] not in PASSTHROUGH_TYPES:
        return
    if args[0] == "delete" and args[1] in ("workload", "workloads", "wl"):
        return  # kueuectl's own: deletes the job too
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        typer.echo(
            f"error: pass-through commands are not available: kubectl is not on PATH={os.environ.get('PATH')!r}",
            err=True,
        )
        raise SystemExit(1)
    os.execv(kubectl, [kubectl, *args])


app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="kubectl kueue: Kueue's kueuectl verbs, served by pykueue.",
)
add_verbs(app)
app.command("version")(version)


def main() -> None:
    args = hoist_flags(sys.argv[1:])
    passthrough(args)
    app(args=args, prog_name="kubectl-kueue")
