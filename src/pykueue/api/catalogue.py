"""The catalogue: the one object, built at start-up, that says which kinds a server serves.

Owned by ``api/`` (its top layer). :func:`build_catalogue` puts together the records the kind
packages build — Kueue's kinds, Kubernetes' own, JobSet, and the built-in kinds an install
manifest carries — into a :class:`~pykueue.api.kindset.KindSet`, which the caller hands to the
registry (and so to the API server). Nothing is registered globally: two servers in one process
each get their own catalogue, and a bare cluster (``kueue=False``) simply leaves Kueue's and
JobSet's kinds out. Building one is cheap: schemas are built on first use and shared.
"""

from __future__ import annotations

from pykueue.api.kinds.core import builtin_kinds, core_kinds, core_schemas
from pykueue.api.kinds.jobset import jobset_kinds
from pykueue.api.kinds.kueue import kueue_kinds
from pykueue.api.kindset import KindSet
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.api.schema import object_validation

__all__ = ["build_catalogue", "known_crd_kinds", "unknown_fields"]


def build_catalogue(*, kueue: bool = True) -> KindSet:
    """Every kind pykueue serves, in the order discovery lists them; ``kueue=False`` leaves out the
    kinds served as CRDs (Kueue's and JobSet's): a bare cluster, until someone applies them."""
    kinds: list[KindInfo] = []
    if kueue:
        kinds += kueue_kinds.kinds()
    kinds += core_kinds.kinds()
    if kueue:
        kinds += jobset_kinds.kinds()
    kinds += builtin_kinds.kinds()
    return KindSet(kinds)


def known_crd_kinds() -> dict[tuple[str, str], KindInfo]:
    """The kinds served as CRDs whose admission logic pykueue implements, by (group, kind): when
    their CRD is applied to a bare cluster, the kind it serves gets these hooks."""
    return {(k.group, k.kind): k for k in kueue_kinds.kinds() + jobset_kinds.kinds()}


def unknown_fields(info: KindInfo, version: str, obj: JSONDict) -> list[str]:
    """Paths of fields ``obj`` carries that ``info``'s schema in ``version`` does not declare
    (``metadata`` checked against ObjectMeta), for ``fieldValidation`` Strict and Warn."""
    return object_validation.unknown_fields(info, version, obj, core_schemas.shared_model_schema("V1ObjectMeta"))
