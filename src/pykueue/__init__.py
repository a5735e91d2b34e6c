"""pykueue: Kueue-compatible job queueing for Kubernetes, with an embedded API server."""

__version__ = "0.1.0"
