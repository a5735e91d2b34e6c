"""Everything a cluster needs to run pykueue, in apply order: what ``pykueue install`` prints.

Owned by ``install/``. Kueue's CRDs (as ``pykueue crds`` renders them: structural schemas, v1beta2
stored; the kinds served in v1beta1 too convert through the controller's ``/convert`` webhook behind
the webhook Service), the Namespace, ServiceAccount, RBAC, Configuration, Services, Deployment,
cert-manager's objects when asked for, and the webhook configurations last (so no webhook points at
a controller before its Deployment exists). The Helm chart ``charts/pykueue`` renders the same objects
for the same values; a test compares them.

JobSet's CRD is not part of the install: JobSet is its own project, installed on its own (or, on a
test cluster, with ``pykueue crds --group jobset.x-k8s.io``).
"""

from __future__ import annotations

from typing import Any

from pykueue.api.crds import custom_resource_definitions
from pykueue.install.deployment import cert_manager_objects, controller_objects, namespace_object
from pykueue.install.options import WEBHOOK_SERVICE, InstallOptions
from pykueue.install.rbac import rbac_objects
from pykueue.install.webhooks import cert_manager_annotations, webhook_configurations

__all__ = ["CONVERSION_PATH", "crds", "render"]

JSONDict = dict[str, Any]
CONVERSION_PATH = "/convert"


def crds(options: InstallOptions) -> list[JSONDict]:
    """Kueue's CRDs with their conversion webhook on the controller's Service."""
    client_config = {
        "service": {"name": WEBHOOK_SERVICE, "namespace": options.namespace, "path": CONVERSION_PATH, "port": 443}
    }
    out = custom_resource_definitions(conversion_webhook=client_config, groups=("kueue.x-k8s.io",))
    if annotations := cert_manager_annotations(options):
        for crd in out:
            if (crd["spec"].get("conversion") or {}).get("strategy") == "Webhook":
                crd["metadata"]["annotations"] = {**(crd["metadata"].get("annotations") or {}), **annotations}
    return out


def render(options: InstallOptions, *, with_namespace: bool = True) -> list[JSONDict]:
    """Every object, in apply order; ``with_namespace=False`` leaves the Namespace out (Helm's
    ``--create-namespace`` makes it)."""
    return [
        *crds(options),
        *([namespace_object(options)] if with_namespace else []),
        *rbac_objects(options),
        *controller_objects(options),
        *cert_manager_objects(options),
        *webhook_configurations(options),
    ]
