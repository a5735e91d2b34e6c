"""The Kubernetes API pykueue serves, as data: kinds, schemas, validation, defaults, conversion.

Layered, imports pointing downwards only (import-linter contracts and ``scripts/import_cycles.py``
keep it so): :mod:`pykueue.api.meta` (the shared vocabulary: JSON types and copies, clock,
quantities, names, field errors, the API error tree, the kind record), :mod:`pykueue.api.schema`
(structural schemas and CEL, list types, schema defaults, generic object validation),
:mod:`pykueue.api.kinds` (Kubernetes' built-in kinds, Kueue's, JobSet, CRD-defined kinds), and on
top :mod:`pykueue.api.catalogue`, which builds the set of served kinds at start-up for the registry
and the API server, and :mod:`pykueue.api.crds`, which renders the CRD-served kinds as CRDs.
"""
