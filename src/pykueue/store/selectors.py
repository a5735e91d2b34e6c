"""Label and field selectors, parsed the way kube-apiserver parses them.

Owned by ``store/``. Called by :meth:`pykueue.store.Store.list`, by the registry and the API
server's watch streams (which filter events with the same matchers), and by controllers that
select objects in memory. The grammar and matching live in :mod:`pykueue.store.labels` and
:mod:`pykueue.store.fields`; this module is the one place to import them from.

Invariant: a selector string is parsed once into an immutable matcher; a bad selector raises
:class:`~pykueue.api.meta.errors.BadRequest` with kube-apiserver's wording, never a Python exception.
"""

from __future__ import annotations

from pykueue.store.fields import (
    NAME_FIELD,
    NAMESPACE_FIELD,
    FieldSelector,
    FieldTerm,
    field_value,
    parse_field_selector,
)
from pykueue.store.labels import LabelOp, LabelRequirement, LabelSelector, parse_label_selector

__all__ = [
    "NAMESPACE_FIELD",
    "NAME_FIELD",
    "FieldSelector",
    "FieldTerm",
    "LabelOp",
    "LabelRequirement",
    "LabelSelector",
    "field_value",
    "parse_field_selector",
    "parse_label_selector",
]
