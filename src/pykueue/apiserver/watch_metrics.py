"""The watch limits' counters as Prometheus metrics, read from the server's :class:`WatchTracker`.

Owned by ``apiserver/``; registered on the metrics registry by ``create_app`` when the server serves
``/metrics``. kube-apiserver counts the watchers it closes for not keeping up as
``apiserver_terminated_watchers_total{group, resource}``, and that name is kept. It has no metric for
the other two limits, so they get ``pykueue_`` names:

- ``pykueue_watch_stalled_writes_total{group, resource}``: watch connections aborted because one
  write blocked past the write timeout (the client stopped reading);
- ``pykueue_watch_refused_total``: watches refused with 429 because their client already had the
  most concurrent watches allowed (the same requests also show in ``apiserver_request_total`` with
  ``code="429"``).

The values are read from the tracker when ``/metrics`` is scraped: the watch path only bumps the
tracker's own counters.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from .watch_limits import WatchTracker

__all__ = ["WatchLimitCollector"]


class WatchLimitCollector(Collector):
    """Collects the counters of one :class:`WatchTracker` at scrape time."""

    def __init__(self, tracker: WatchTracker) -> None:
        self.tracker = tracker

    def collect(self) -> Iterator[CounterMetricFamily]:
        tracker = self.tracker
        terminated = CounterMetricFamily(
            "apiserver_terminated_watchers_total",
            "Counter of watchers closed due to unresponsiveness broken by resource type.",
            labels=("group", "resource"),
        )
        for (group, resource), count in sorted(tracker.slow_by_resource.items()):
            terminated.add_metric((group, resource), count)
        yield terminated
        stalled = CounterMetricFamily(
            "pykueue_watch_stalled_writes_total",
            "Watch connections aborted because a write blocked past the write timeout, by resource.",
            labels=("group", "resource"),
        )
        for (group, resource), count in sorted(tracker.stalled_by_resource.items()):
            stalled.add_metric((group, resource), count)
        yield stalled
        yield CounterMetricFamily(
            "pykueue_watch_refused_total",
            "Watches refused with 429 because their client had the most concurrent watches allowed.",
            value=tracker.refused,
        )
