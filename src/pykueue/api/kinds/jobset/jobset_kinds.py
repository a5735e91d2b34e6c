"""The record of JobSet (``jobset.x-k8s.io/v1alpha2``), served as a CRD, with its hooks.

Owned by ``api/kinds/jobset``. Its schema is :mod:`pykueue.api.kinds.jobset.jobset_schema`; its
defaults (the schema's, then JobSet's webhook defaults) and rules are the ones the JobSet
controller's webhooks apply, kept with the Job's in :mod:`pykueue.api.kinds.core` because they
check the Job templates it embeds.
"""

from __future__ import annotations

from pykueue.api.kinds.core import core_defaults, core_validation
from pykueue.api.kinds.core.merge_keys import merge_keys_for
from pykueue.api.kinds.jobset import jobset_schema
from pykueue.api.meta.kind_info import KindInfo, PrinterColumn, version_setter
from pykueue.api.schema.lazy_schemas import LazySchemas
from pykueue.api.schema.object_validation import with_checks

__all__ = ["JOBSET_GROUP", "kinds"]

JOBSET_GROUP = "jobset.x-k8s.io"
_VERSION = "v1alpha2"


def kinds() -> list[KindInfo]:
    """The one record (a list, as every kind package returns)."""
    info = KindInfo(
        group=JOBSET_GROUP,
        kind="JobSet",
        plural="jobsets",
        singular="jobset",
        versions=(_VERSION,),
        namespaced=True,
        subresources=("status",),
        is_crd=True,
        schema=LazySchemas(JOBSET_GROUP, "JobSet", (_VERSION,), lambda version: jobset_schema.schema()),
        printer_columns={
            _VERSION: (
                PrinterColumn("TerminalState", "string", ".status.terminalState", description="Final state of JobSet"),
                PrinterColumn("Restarts", "string", ".status.restarts", description="Number of restarts"),
                PrinterColumn(
                    "Completed",
                    "string",
                    '.status.conditions[?(@.type=="Completed")].status',
                    description="JobSet completed",
                ),
                PrinterColumn("Suspended", "string", ".spec.suspend", description="JobSet suspended"),
                PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
            )
        },
        strategic_merge_keys=merge_keys_for(JOBSET_GROUP, "JobSet"),
        convert=version_setter(JOBSET_GROUP),
    )
    return [
        with_checks(
            info, rule=core_validation.validate_jobset, hand_written=core_defaults.default_jobset, schema_defaults=True
        )
    ]
