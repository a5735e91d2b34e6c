"""``pykueue rbac-check``: is the installed RBAC exactly what the controller used? (an audit log against it)

Owned by ``cli/``; the evaluation is :mod:`pykueue.install.rbac_check`. Reads an audit log
(``audit.k8s.io/v1`` Events as JSON lines: ``pykueue up --audit-log``, or kube-apiserver's at level
Metadata or above) and the RBAC objects of a manifest (``pykueue install`` or ``helm template`` output;
default: what ``pykueue install --namespace NS`` renders). Prints each request of ``--user`` the RBAC
denies and each grant no request used (beyond ``pykueue.install.rbac.EXPECTED_UNUSED`` and
``--allow-unused``); exit 0 when there is none, 1 otherwise, 2 for unreadable input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

__all__ = ["rbac_check"]

_RBAC_KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _manifest_rbac(path: Path) -> list[dict[str, Any]]:
    try:
        docs = list(yaml.safe_load_all(path.read_text()))
    except (OSError, yaml.YAMLError) as exc:
        raise _fail(f"--manifests {path}: {' '.join(str(exc).split())}") from None
    return [d for d in docs if isinstance(d, dict) and d.get("kind") in _RBAC_KINDS]


def rbac_check(
    audit_log: Annotated[Path, typer.Option(help="Audit log: audit.k8s.io/v1 Events, one JSON object per line.")],
    manifests: Annotated[
        Path | None,
        typer.Option(
            help="YAML with the RBAC objects (pykueue install or helm template output) (default: pykueue install's)."
        ),
    ] = None,
    namespace: Annotated[
        str, typer.Option(help="Install namespace (for the default manifests and user).")
    ] = "pykueue-system",
    user: Annotated[str, typer.Option(help="The identity to check (default: the controller's ServiceAccount).")] = "",
    allow_unused: Annotated[
        list[str] | None,
        typer.Option(help="VERB:GROUP:RESOURCE a run may leave unused (repeatable; core group empty: get::pods)."),
    ] = None,
) -> None:
    """Check an audit log against the installed RBAC: no request denied, no grant unused."""
    from pykueue.install import install_options
    from pykueue.install.options import SERVICE_ACCOUNT
    from pykueue.install.rbac import EXPECTED_UNUSED, rbac_objects
    from pykueue.install.rbac_check import SERVICE_ACCOUNT_USER, check_audit, read_audit_log

    extra = []
    for entry in allow_unused or []:
        parts = entry.split(":")
        if len(parts) != 3 or not parts[0] or not parts[2]:
            raise _fail(f"--allow-unused {entry!r}: expected VERB:GROUP:RESOURCE")
        extra.append((parts[0], parts[1], parts[2]))
    try:
        rbac = (
            _manifest_rbac(manifests) if manifests is not None else rbac_objects(install_options(namespace=namespace))
        )
        with audit_log.open("rb") as lines:
            events = read_audit_log(lines)
    except (OSError, ValueError) as exc:
        raise _fail(f"{exc}") from None
    who = user or SERVICE_ACCOUNT_USER.format(namespace=namespace, name=SERVICE_ACCOUNT)
    report = check_audit(rbac, events, who, [*EXPECTED_UNUSED, *extra])
    for request in report.denied:
        typer.echo(f"denied: {request}")
    for grant in report.unused:
        typer.echo(f"unused: {grant}")
    typer.echo(f"{who}: {report.requests} requests, {len(report.denied)} denied, {len(report.unused)} unused grants")
    if not report.ok:
        raise typer.Exit(1)
