"""The schema machinery of ``api/``, generic over kinds: structural schemas and CEL, formats,
list types, defaulting and pruning from a schema, and the generic validation of an object.

Built on :mod:`pykueue.api.meta`; knows no particular kind (the kinds in :mod:`pykueue.api.kinds`
hand it their schemas and rules).
"""
