"""``pykueue install``: the manifests that run pykueue on a Kubernetes cluster, as Kueue is installed.

Owned by ``install/`` (between ``cli/`` and the layers it reads: the catalogue's CRDs, the
controllers' admission hooks and integrations). :func:`render` returns the objects; ``cli/`` prints
them. :mod:`~pykueue.install.rbac_check` evaluates the rendered RBAC against an audit log.
"""

from pykueue.install.options import InstallOptions, install_options
from pykueue.install.render import render

__all__ = ["InstallOptions", "install_options", "render"]
