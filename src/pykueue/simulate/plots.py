"""The report's figures (matplotlib, Agg backend, PNG): waits, utilisation, queue length, shares.

Owns drawing; the numbers come from ``series`` and the replay's records. Figures per
configuration: ``wait`` (cumulative distribution of the wait per ClusterQueue and priority class),
``utilisation`` (per flavor over time), ``queue`` (pending workloads per ClusterQueue over time),
``share`` (each ClusterQueue's dominant share against its weighted fair share); and, across
configurations, ``compare-wait`` (the overall wait distribution of each).

Who calls it: ``report``. Invariant: PNG bytes depend only on the data (no timestamp or software
metadata is written), so a report is reproducible; figures are closed after saving.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from pykueue.simulate.replay import Replay
from pykueue.simulate.series import Series, flavor_utilisation, queue_lengths, shares, time_unit

__all__ = ["compare_waits", "draw_all"]

_META = {"Software": None}


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100, metadata=_META)
    plt.close(fig)
    return path


def _steps(ax: Axes, series: Series, divisor: float, label: str, **kw: Any) -> None:
    xs = [t / divisor for t, _ in series]
    ys = [v for _, v in series]
    ax.step(xs, ys, where="post", label=label, linewidth=1.2, **kw)


def _waits(replay: Replay, attr: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for rec in replay.records.values():
        if rec.admitted_ms is not None:
            out.setdefault(getattr(rec, attr) or "-", []).append((rec.admitted_ms - rec.submit_ms) / 1000)
    return {k: sorted(v) for k, v in sorted(out.items())}


def _cdf(ax: Axes, groups: dict[str, list[float]], title: str) -> None:
    for name, waits in groups.items():
        n = len(waits)
        if n:
            ax.step([0.0, *waits], [0.0, *((i + 1) / n for i in range(n))], where="post", label=f"{name} ({n})")
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("wait (seconds, log scale above 1 s)")
    ax.set_ylabel("fraction of admitted workloads")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if groups:
        ax.legend(fontsize=8, loc="lower right")


def draw_all(replay: Replay, out_dir: Path, prefix: str) -> dict[str, Path]:
    """Write the four figures of one configuration; returns name -> path."""
    name = replay.configuration.name
    span = replay.simulated_ms / 1000
    unit, divisor = time_unit(span)
    paths: dict[str, Path] = {}

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
    _cdf(a1, _waits(replay, "cluster_queue"), f"{name}: wait per ClusterQueue")
    _cdf(a2, _waits(replay, "priority_class"), f"{name}: wait per priority class")
    paths["wait"] = _save(fig, out_dir / f"{prefix}wait.png")

    fig, ax = plt.subplots(figsize=(12, 4.2))
    for flavor, series in flavor_utilisation(replay).items():
        _steps(ax, series, divisor, flavor)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("used ÷ nominal quota")
    ax.set_title(f"{name}: utilisation per flavor")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", ncol=4)
    paths["utilisation"] = _save(fig, out_dir / f"{prefix}utilisation.png")

    fig, ax = plt.subplots(figsize=(12, 4.2))
    for cq, series in queue_lengths(replay).items():
        _steps(ax, series, divisor, cq)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("pending workloads")
    ax.set_title(f"{name}: queue length per ClusterQueue")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", ncol=4)
    paths["queue"] = _save(fig, out_dir / f"{prefix}queue.png")

    fig, ax = plt.subplots(figsize=(12, 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (cq, (series, fair)) in enumerate(shares(replay).items()):
        color = colors[i % len(colors)]
        _steps(ax, series, divisor, f"{cq} (fair {fair:.2f})", color=color)
        ax.axhline(fair, color=color, linestyle="--", linewidth=0.8)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("dominant share of the cohort")
    ax.set_title(f"{name}: share over time (dashed: weighted fair share)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", ncol=4)
    paths["share"] = _save(fig, out_dir / f"{prefix}share.png")
    return paths


def compare_waits(replays: list[Replay], path: Path) -> Path:
    """The waits of the workloads that waited at all (most wait 0 s), one curve per configuration."""
    fig, ax = plt.subplots(figsize=(12, 4.2))
    groups: dict[str, list[float]] = {}
    for rp in replays:
        waits = [w for ws in _waits(rp, "cluster_queue").values() for w in ws]
        groups[f"{rp.configuration.name}: {sum(1 for w in waits if w > 0)} of {len(waits)} waited"] = sorted(
            w for w in waits if w > 0
        )
    _cdf(ax, groups, "wait of the workloads that waited, per configuration")
    ax.set_ylabel("fraction of the workloads that waited")
    return _save(fig, path)
