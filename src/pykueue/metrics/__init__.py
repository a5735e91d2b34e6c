"""Prometheus metrics: Kueue's (``kueue_*``) and kube-apiserver's request metrics, on registries handed in.

Owns the metric definitions and their exposition; knows nothing of HTTP routes or controllers.
The process that runs a component creates a ``prometheus_client.CollectorRegistry`` and hands it
to :class:`KueueMetrics` / :class:`QueueGauges` (the controllers) and :class:`ApiServerMetrics`
(the API server); :class:`MetricsEndpoint` renders one or more registries for ``/metrics``. No
module-level registry: the embedded server, its controller process and ``pykueue controller`` each
serve their own; the last over HTTPS behind the API server's reviews (:mod:`.secure_endpoint`,
:mod:`.delegated_auth`).
"""

from .apiserver import ApiServerMetrics, request_labels
from .exposition import CONTENT_TYPE, MetricsEndpoint, RemoteSource, serve_metrics
from .kueue import KueueMetrics, exponential_buckets
from .queue_gauges import QueueGauges

__all__ = [
    "CONTENT_TYPE",
    "ApiServerMetrics",
    "KueueMetrics",
    "MetricsEndpoint",
    "QueueGauges",
    "RemoteSource",
    "exponential_buckets",
    "request_labels",
    "serve_metrics",
]
