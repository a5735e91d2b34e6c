"""pykueue's patch library: pure functions the registry calls to apply PATCH bodies and track
field ownership (``metadata.managedFields``).

- :func:`apply_merge_patch` — ``application/merge-patch+json`` (RFC 7386)
- :func:`apply_json_patch` — ``application/json-patch+json`` (RFC 6902)
- :func:`apply_strategic_merge_patch` — ``application/strategic-merge-patch+json``
- :func:`server_side_apply` — ``application/apply-patch+yaml`` (server-side apply)
- :func:`update_managed_fields` — ownership bookkeeping for ordinary create/update/patch writes

``merge_keys`` maps the dotted path of a list from the object root, indices elided (e.g.
"spec.template.spec.containers"), to its merge key ("name"); "" marks a list of scalars that
merges as a set; several keys may be given comma-separated for server-side apply's list maps.
Lists not named are atomic. ObjectMeta's lists (ownerReferences by uid, finalizers as a set) are
known without being passed. None of these functions does I/O or mutates its arguments.
"""

from pykueue.registry.patch.apply import server_side_apply
from pykueue.registry.patch.managed import update_managed_fields
from pykueue.registry.patch.merge import apply_json_patch, apply_merge_patch
from pykueue.registry.patch.strategic import METADATA_MERGE_KEYS, apply_strategic_merge_patch

__all__ = [
    "METADATA_MERGE_KEYS",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_strategic_merge_patch",
    "server_side_apply",
    "update_managed_fields",
]
