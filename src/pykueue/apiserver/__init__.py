"""The HTTP front of the embedded API server: discovery, OpenAPI, tables, watch, authentication.

Embed it with :func:`serve` (listens; returns a :class:`Server` with ``.port`` and ``close()``) or
mount :func:`create_app` in an aiohttp runner of your own.
"""

from pykueue.apiserver.app import KUBERNETES_VERSION, Server, create_app, serve

__all__ = ["KUBERNETES_VERSION", "Server", "create_app", "serve"]
