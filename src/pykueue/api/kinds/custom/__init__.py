"""Kinds served from a CustomResourceDefinition: the CRD's own validation, and the record built
from an accepted CRD."""
