"""The bottom layer of ``api/``: the vocabulary every other layer shares.

JSON types and deep copies, the clock, quantities, names and label syntax, field errors and the
API error tree, string formats, and the record that describes a served kind (:mod:`kind_info`).
Nothing here knows any particular kind; nothing here imports from the layers above.
"""
