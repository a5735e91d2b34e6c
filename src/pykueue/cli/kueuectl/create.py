"""``create clusterqueue | localqueue | resourceflavor``: Kueue's kueuectl create verbs.

Owned by ``cli/kueuectl``. The object builders are pure (flags in, object out, one-line
:class:`~.connection.CommandError` for a bad flag) so they are tested without a cluster; the
commands send the object (``--dry-run server`` asks the server to validate without storing it,
``--dry-run client`` only prints it) and print ``<kind>.<group>/<name> created`` or ``-o yaml|json``.

Quota flags use Kueue's syntax: ``FLAVOR:RESOURCE=QUANTITY;RESOURCE=QUANTITY,FLAVOR:...``
(repeatable); flavors with the same resources share one resource group, in the order given.
"""

from __future__ import annotations

from typing import Annotated

import typer

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.quantity import QuantityError, parse_quantity

from .connection import CommandError
from .options import Context, DryRun, Kubeconfig, Namespace, Output, Target, aliases, check_dry_run, run
from .printing import check_output, print_objects

__all__ = ["build_cluster_queue", "build_local_queue", "build_resource_flavor", "create_app", "parse_quotas"]

API_VERSION = "kueue.x-k8s.io/v1beta2"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

create_app = typer.Typer(no_args_is_help=True, help="Create a ClusterQueue, LocalQueue or ResourceFlavor.")


def _split(values: list[str]) -> list[str]:
    return [part for value in values for part in value.split(",") if part.strip()]


def parse_quotas(flag: str, values: list[str]) -> dict[str, dict[str, str]]:
    """``["alpha:cpu=9;memory=36Gi", ...]`` -> {flavor: {resource: quantity}} (in the order given)."""
    out: dict[str, dict[str, str]] = {}
    for item in _split(values):
        flavor, sep, resources = item.partition(":")
        flavor = flavor.strip()
        if not sep or not flavor or not resources.strip():
            raise CommandError(f'error: invalid {flag} "{item}": expected FLAVOR:RESOURCE=QUANTITY[;RESOURCE=QUANTITY]')
        entry = out.setdefault(flavor, {})
        for pair in resources.split(";"):
            name, eq, quantity = pair.partition("=")
            name, quantity = name.strip(), quantity.strip()
            if not eq or not name or not quantity:
                raise CommandError(f'error: invalid {flag} "{item}": expected RESOURCE=QUANTITY, got "{pair}"')
            try:
                parse_quantity(quantity)
            except (QuantityError, ValueError):
                raise CommandError(
                    f'error: invalid {flag} "{item}": "{quantity}" is not a valid quantity for {name}'
                ) from None
            if name in entry:
                raise CommandError(f'error: invalid {flag} "{item}": {flavor}:{name} is given twice')
            entry[name] = quantity
    return out


def _key_values(flag: str, values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in _split(values):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise CommandError(f'error: invalid {flag} "{item}": expected KEY=VALUE')
        out[key.strip()] = value.strip()
    return out


def build_cluster_queue(
    name: str,
    *,
    cohort: str = "",
    queuing_strategy: str = "",
    namespace_selector: list[str] | None = None,
    reclaim_within_cohort: str = "",
    preemption_within_cluster_queue: str = "",
    nominal_quota: list[str] | None = None,
    borrowing_limit: list[str] | None = None,
    lending_limit: list[str] | None = None,
) -> JSONDict:
    nominal = parse_quotas("--nominal-quota", nominal_quota or [])
    limits = {
        "borrowingLimit": parse_quotas("--borrowing-limit", borrowing_limit or []),
        "lendingLimit": parse_quotas("--lending-limit", lending_limit or []),
    }
    for field, flag in (("borrowingLimit", "--borrowing-limit"), ("lendingLimit", "--lending-limit")):
        for flavor, resources in limits[field].items():
            for res in resources:
                if res not in nominal.get(flavor, {}):
                    raise CommandError(f"error: {flag} {flavor}:{res} has no --nominal-quota for {flavor}:{res}")
    groups: list[JSONDict] = []
    by_covered: dict[tuple[str, ...], JSONDict] = {}
    for flavor, resources in nominal.items():
        covered = tuple(resources)
        group = by_covered.get(covered)
        if group is None:
            group = by_covered[covered] = {"coveredResources": list(covered), "flavors": []}
            groups.append(group)
        entries = []
        for res, quantity in resources.items():
            entry: JSONDict = {"name": res, "nominalQuota": quantity}
            for field in ("borrowingLimit", "lendingLimit"):
                limit = limits[field].get(flavor, {}).get(res)
                if limit is not None:
                    entry[field] = limit
            entries.append(entry)
        group["flavors"].append({"name": flavor, "resources": entries})
    spec: JSONDict = {"namespaceSelector": {}}
    selector = _key_values("--namespace-selector", namespace_selector or [])
    if selector:
        spec["namespaceSelector"] = {"matchLabels": selector}
    if cohort:
        spec["cohortName"] = cohort
    if queuing_strategy:
        spec["queueingStrategy"] = queuing_strategy
    preemption: JSONDict = {}
    if reclaim_within_cohort:
        preemption["reclaimWithinCohort"] = reclaim_within_cohort
    if preemption_within_cluster_queue:
        preemption["withinClusterQueue"] = preemption_within_cluster_queue
    if preemption:
        spec["preemption"] = preemption
    spec["resourceGroups"] = groups
    return {"apiVersion": API_VERSION, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def build_local_queue(name: str, namespace: str, cluster_queue: str) -> JSONDict:
    if not cluster_queue:
        raise CommandError('error: required flag(s) "clusterqueue" not set')
    return {
        "apiVersion": API_VERSION,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cluster_queue},
    }


def _taint_parts(flag: str, item: str, need_effect: bool) -> JSONDict:
    head, colon, effect = item.partition(":")
    key, eq, value = head.partition("=")
    if (need_effect and not effect) or (colon and effect not in TAINT_EFFECTS) or (eq and not key):
        raise CommandError(
            f'error: invalid {flag} "{item}": expected KEY[=VALUE]:EFFECT with EFFECT one of '
            + ", ".join(TAINT_EFFECTS)
        )
    out: JSONDict = {}
    if key:
        out["key"] = key
    if value:
        out["value"] = value
    if effect:
        out["effect"] = effect
    return out


def build_resource_flavor(
    name: str,
    *,
    node_labels: list[str] | None = None,
    node_taints: list[str] | None = None,
    tolerations: list[str] | None = None,
) -> JSONDict:
    spec: JSONDict = {}
    labels = _key_values("--node-labels", node_labels or [])
    if labels:
        spec["nodeLabels"] = labels
    taints = [_taint_parts("--node-taints", t, True) for t in _split(node_taints or [])]
    if taints:
        spec["nodeTaints"] = taints
    tols = []
    for item in _split(tolerations or []):
        tol = _taint_parts("--tolerations", item, False)
        tol["operator"] = "Equal" if tol.get("key") and tol.get("value") else "Exists"
        tols.append(tol)
    if tols:
        spec["tolerations"] = tols
    return {"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def _send(target: Target, obj: JSONDict, path: str, dry_run: str, output: str) -> None:
    dry = check_dry_run(dry_run)
    check_output(output)
    if dry != "client":
        obj = target.cluster.request("POST", path, body=obj, query={"dryRun": "All"} if dry == "server" else None)
    if output in ("yaml", "json", "name"):
        typer.echo(print_objects([obj], output, single=True), nl=False)
        return
    suffix = {"server": " (server dry run)", "client": " (dry run)"}.get(dry, "")
    typer.echo(f"{obj['kind'].lower()}.kueue.x-k8s.io/{obj['metadata']['name']} created{suffix}")


@aliases(create_app, ("clusterqueue", "clusterqueues", "cq"))
def create_cluster_queue(
    name: Annotated[str, typer.Argument(help="The ClusterQueue's name.")],
    cohort: Annotated[str, typer.Option(help="The cohort that this ClusterQueue belongs to.")] = "",
    queuing_strategy: Annotated[str, typer.Option(help="StrictFIFO or BestEffortFIFO.")] = "",
    namespace_selector: Annotated[
        list[str] | None, typer.Option(help="KEY=VALUE pairs: the namespaces allowed to submit workloads.")
    ] = None,
    reclaim_within_cohort: Annotated[str, typer.Option(help="Never, LowerPriority or Any.")] = "",
    preemption_within_cluster_queue: Annotated[
        str, typer.Option(help="Never, LowerPriority or LowerOrNewerEqualPriority.")
    ] = "",
    nominal_quota: Annotated[
        list[str] | None,
        typer.Option(help='FLAVOR:RESOURCE=QUANTITY[;...][,FLAVOR:...], e.g. "alpha:cpu=9;memory=36Gi".'),
    ] = None,
    borrowing_limit: Annotated[list[str] | None, typer.Option(help="Same syntax as --nominal-quota.")] = None,
    lending_limit: Annotated[list[str] | None, typer.Option(help="Same syntax as --nominal-quota.")] = None,
    dry_run: DryRun = "none",
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """Create a ClusterQueue with the given name."""

    def body() -> None:
        obj = build_cluster_queue(
            name,
            cohort=cohort,
            queuing_strategy=queuing_strategy,
            namespace_selector=namespace_selector,
            reclaim_within_cohort=reclaim_within_cohort,
            preemption_within_cluster_queue=preemption_within_cluster_queue,
            nominal_quota=nominal_quota,
            borrowing_limit=borrowing_limit,
            lending_limit=lending_limit,
        )
        target = Target(kubeconfig, context, namespace)
        _send(target, obj, target.cluster.kueue_path("clusterqueues"), dry_run, output)

    run(body)


@aliases(create_app, ("localqueue", "localqueues", "lq"))
def create_local_queue(
    name: Annotated[str, typer.Argument(help="The LocalQueue's name.")],
    clusterqueue: Annotated[
        str, typer.Option("--clusterqueue", "-c", help="The ClusterQueue this LocalQueue points at (required).")
    ] = "",
    ignore_unknown_cq: Annotated[
        bool, typer.Option("--ignore-unknown-cq", "-i", help="Create it even if the ClusterQueue does not exist.")
    ] = False,
    dry_run: DryRun = "none",
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """Create a LocalQueue in the current namespace."""

    def body() -> None:
        target = Target(kubeconfig, context, namespace)
        cluster = target.cluster
        obj = build_local_queue(name, cluster.namespace, clusterqueue)
        if not ignore_unknown_cq:
            cluster.request("GET", cluster.kueue_path("clusterqueues", clusterqueue))
        _send(target, obj, cluster.kueue_path("localqueues", namespace=cluster.namespace), dry_run, output)

    run(body)


@aliases(create_app, ("resourceflavor", "resourceflavors", "rf"))
def create_resource_flavor(
    name: Annotated[str, typer.Argument(help="The ResourceFlavor's name.")],
    node_labels: Annotated[list[str] | None, typer.Option(help="KEY=VALUE labels of the flavor's nodes.")] = None,
    node_taints: Annotated[
        list[str] | None, typer.Option(help="KEY[=VALUE]:EFFECT taints of the flavor's nodes.")
    ] = None,
    tolerations: Annotated[
        list[str] | None, typer.Option(help="KEY[=VALUE][:EFFECT] tolerations added to admitted pods.")
    ] = None,
    dry_run: DryRun = "none",
    output: Output = "",
    kubeconfig: Kubeconfig = "",
    context: Context = "",
    namespace: Namespace = "",
) -> None:
    """Create a ResourceFlavor."""

    def body() -> None:
        obj = build_resource_flavor(name, node_labels=node_labels, node_taints=node_taints, tolerations=tolerations)
        target = Target(kubeconfig, context, namespace)
        _send(target, obj, target.cluster.kueue_path("resourceflavors"), dry_run, output)

    run(body)
