"""Registers every served kind with :mod:`pykueue.api.kinds` (filled in by the api/ layer)."""
