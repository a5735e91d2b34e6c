"""What ``simulate run`` prints and writes: the side-by-side text table and the ``--report DIR`` files.

Owns the text form of the summaries (one column per configuration, rows per ClusterQueue,
LocalQueue and priority class) and the report directory:

* ``summary.json``: the ``-o json`` document(s), a list when comparing;
* per configuration ``<name>/workloads.csv`` (one row per workload: queues, class, submit, first
  admission, wait, evictions, finish, flavors, never-admitted reason), ``<name>/queues.csv`` (the
  summary rows) and ``<name>/utilisation.csv`` (the per-flavor utilisation step series);
* the figures of ``plots`` and ``index.html`` (``html``), which embeds them.

Who calls it: the CLI. Invariant: deterministic (sorted keys and rows, no wall-clock figures).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from pykueue.simulate.html import render_html
from pykueue.simulate.plots import compare_waits, draw_all
from pykueue.simulate.replay import Replay
from pykueue.simulate.series import flavor_utilisation

__all__ = ["dump_json", "text_table", "write_report"]


def dump_json(docs: list[dict[str, Any]]) -> str:
    return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, sort_keys=True) + "\n"


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.0f}"
    return str(value)


def _wait(w: dict[str, float] | None) -> str:
    if not w:
        return "-"
    return "/".join(_fmt(w[k]) for k in ("p50", "p90", "p99", "max"))


def _rows(docs: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    rows: list[tuple[str, list[str]]] = []

    def add(label: str, values: list[Any]) -> None:
        rows.append((label, [_fmt(v) if not isinstance(v, str) else v for v in values]))

    for key in ("workloads", "admitted", "neverAdmitted", "preemptions", "finished", "simulatedSeconds"):
        add(key, [d[key] for d in docs])
    add("wait p50/p90/p99/max s", [_wait(d["waitSeconds"]) for d in docs])
    for section, title in (
        ("clusterQueues", "ClusterQueue"),
        ("localQueues", "LocalQueue"),
        ("priorityClasses", "priority class"),
        ("classes", "class"),
    ):
        names = sorted({n for d in docs for n in d.get(section, {})})
        for name in names:
            entries = [d.get(section, {}).get(name) for d in docs]
            rows.append((f"{title} {name}", ["" for _ in docs]))
            add("  wait p50/p90/p99/max s", [_wait(e["waitSeconds"]) if e else "-" for e in entries])
            add(
                "  admitted/never/preempted",
                [f"{e['admitted']}/{e['neverAdmitted']}/{e['preempted']}" if e else "-" for e in entries],
            )
            flavors = sorted({f for e in entries if e for f in e.get("utilisation", {})})
            for flavor in flavors:
                add(f"  utilisation {flavor}", [e["utilisation"].get(flavor) if e else None for e in entries])
            if section == "clusterQueues":
                add(
                    "  share mean (fair)",
                    [f"{e['share']['mean']:.3f} ({e['share']['fair']:.3f})" if e else "-" for e in entries],
                )
    reasons = sorted({r for d in docs for r in d["neverAdmittedByReason"]})
    for reason in reasons:
        add(f"never admitted: {reason}", [d["neverAdmittedByReason"].get(reason, 0) for d in docs])
    if any("samples" in d for d in docs):
        rows.extend(_sample_rows(docs))
    return rows


def _band(band: dict[str, float] | None) -> str:
    if not band:
        return "-"
    return f"{_fmt(band['mean'])} [{_fmt(band['min'])}-{_fmt(band['max'])}]"


def _sample_rows(docs: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """The ``samples`` band (``--samples N``, ``--jitter``, ``--timestamp-resolution``): mean [min-max] over seeds."""
    bands = [d.get("samples") or {} for d in docs]
    rows = [
        (
            "samples (jitter s, stamp s): mean [min-max]",
            [
                f"{b['count']} ({b['jitterSeconds']:g}, {b.get('timestampResolutionSeconds', 0):g})" if b else "-"
                for b in bands
            ],
        ),
        ("  mean wait s", [_band(b.get("meanWaitSeconds")) for b in bands]),
    ]
    for name in sorted({n for b in bands for n in b.get("priorityClassMeanWaitSeconds", {})}):
        rows.append(
            (
                f"  mean wait s, priority class {name}",
                [_band(b.get("priorityClassMeanWaitSeconds", {}).get(name)) for b in bands],
            )
        )
    rows.append(("  preemptions", [_band(b.get("preemptions")) for b in bands]))
    for name in sorted({n for b in bands for n in b.get("flavorUtilisation", {})}):
        rows.append((f"  utilisation {name}", [_band(b.get("flavorUtilisation", {}).get(name)) for b in bands]))
    return rows


def text_table(docs: list[dict[str, Any]]) -> str:
    rows = [("configuration", [d["configuration"] for d in docs]), *_rows(docs)]
    width = max(len(label) for label, _ in rows)
    cols = [max(len(values[i]) for _, values in rows) for i in range(len(docs))]
    lines = [
        label.ljust(width) + "  " + "  ".join(v.rjust(c) for v, c in zip(values, cols, strict=True))
        for label, values in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def _workloads_csv(replay: Replay, path: Path) -> None:
    rows = []
    for r in sorted(replay.records.values(), key=lambda r: (r.submit_ms, r.key)):
        wait = "" if r.admitted_ms is None else (r.admitted_ms - r.submit_ms) / 1000
        rows.append(
            [
                r.key,
                r.local_queue,
                r.cluster_queue,
                r.priority_class,
                r.submit_ms / 1000,
                "" if r.admitted_ms is None else r.admitted_ms / 1000,
                wait,
                r.evictions,
                "" if r.finished_ms is None else r.finished_ms / 1000,
                r.flavors,
                r.reason if r.admitted_ms is None else "",
                r.message if r.admitted_ms is None else "",
            ]
        )
    _write_csv(
        path,
        [
            "workload",
            "localQueue",
            "clusterQueue",
            "priorityClass",
            "submitSeconds",
            "admittedSeconds",
            "waitSeconds",
            "evictions",
            "finishedSeconds",
            "flavors",
            "pendingReason",
            "pendingMessage",
        ],
        rows,
    )


def _queues_csv(doc: dict[str, Any], path: Path) -> None:
    rows = []
    for section in ("clusterQueues", "localQueues", "priorityClasses", "classes"):
        for name, e in sorted(doc.get(section, {}).items()):
            w = e["waitSeconds"]
            rows.append(
                [
                    section,
                    name,
                    e["workloads"],
                    e["admitted"],
                    e["neverAdmitted"],
                    e["preempted"],
                    w["p50"],
                    w["p90"],
                    w["p99"],
                    w["max"],
                    w["mean"],
                    json.dumps(e.get("utilisation", {}), sort_keys=True),
                ]
            )
    _write_csv(
        path,
        [
            "group",
            "name",
            "workloads",
            "admitted",
            "neverAdmitted",
            "preempted",
            "waitP50",
            "waitP90",
            "waitP99",
            "waitMax",
            "waitMean",
            "utilisation",
        ],
        rows,
    )


def write_report(out: Path, replays: list[Replay], docs: list[dict[str, Any]]) -> Path:
    """Write everything into ``out`` (created); returns the HTML page's path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(dump_json(docs))
    figures: dict[str, dict[str, Path]] = {}
    for rp, doc in zip(replays, docs, strict=True):
        name = rp.configuration.name
        sub = out / name
        sub.mkdir(exist_ok=True)
        _workloads_csv(rp, sub / "workloads.csv")
        _queues_csv(doc, sub / "queues.csv")
        util = flavor_utilisation(rp)
        _write_csv(
            sub / "utilisation.csv",
            ["seconds", "flavor", "fraction"],
            [[t, f, round(v, 6)] for f, series in util.items() for t, v in series],
        )
        figures[name] = draw_all(rp, sub, "")
    compare = compare_waits(replays, out / "compare-wait.png") if len(replays) > 1 else None
    page = out / "index.html"
    page.write_text(render_html(docs, figures, compare, text_table(docs)))
    return page
