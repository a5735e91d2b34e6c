"""The report's single self-contained HTML page: summary tables and every figure, embedded.

Owns the page: no external file, script or stylesheet (figures are ``data:image/png;base64``
URIs), so it can be mailed or attached to a change request as one file. Sections: the
side-by-side summary table, per configuration its ClusterQueue table, never-admitted reasons and
figures, and the comparison figure when there are several configurations.

Who calls it: ``report``. Invariant: every text from the data is HTML-escaped.
"""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path
from typing import Any

__all__ = ["render_html"]

_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1300px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}pre{background:#f7f7f7;padding:1em;overflow:auto}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}"""


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _cq_table(doc: dict[str, Any]) -> str:
    flavors = sorted({f for e in doc["clusterQueues"].values() for f in e["utilisation"]})
    head = "".join(
        f"<th>{escape(h)}</th>"
        for h in [
            "ClusterQueue",
            "workloads",
            "admitted",
            "never admitted",
            "preempted",
            "wait p50 s",
            "wait p90 s",
            "wait p99 s",
            "wait max s",
            *(f"utilisation {f}" for f in flavors),
            "share (fair)",
        ]
    )
    rows = []
    for name, e in sorted(doc["clusterQueues"].items()):
        w = e["waitSeconds"]
        cells = [
            name,
            e["workloads"],
            e["admitted"],
            e["neverAdmitted"],
            e["preempted"],
            w["p50"],
            w["p90"],
            w["p99"],
            w["max"],
            *(e["utilisation"].get(f, "-") for f in flavors),
            f"{e['share']['mean']:.3f} ({e['share']['fair']:.3f})",
        ]
        rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _never(doc: dict[str, Any]) -> str:
    if not doc["neverAdmitted"]:
        return "<p>Every workload was admitted.</p>"
    items = "".join(f"<tr><td>{escape(r)}</td><td>{n}</td></tr>" for r, n in doc["neverAdmittedByReason"].items())
    examples = list(doc["neverAdmittedReasons"].items())[:20]
    ex = "".join(f"<tr><td>{escape(k)}</td><td style='text-align:left'>{escape(v)}</td></tr>" for k, v in examples)
    return (
        f"<p>{doc['neverAdmitted']} workload(s) never admitted.</p><table><tr><th>reason</th><th>count</th></tr>"
        f"{items}</table><table><tr><th>workload (first 20)</th><th>last pending message</th></tr>{ex}</table>"
    )


def render_html(
    docs: list[dict[str, Any]], figures: dict[str, dict[str, Path]], compare: Path | None, table: str
) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>pykueue simulate report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>pykueue simulate report</h1>",
        f"<p>Configurations: {', '.join(escape(d['configuration']) for d in docs)}.</p>",
        "<h2>Summary</h2>",
        f"<pre>{escape(table)}</pre>",
    ]
    if compare is not None:
        parts += ["<h2>Wait distribution per configuration</h2>", _img(compare, "wait per configuration")]
    for doc in docs:
        name = doc["configuration"]
        parts += [
            f'<h2 id="{escape(name)}">Configuration {escape(name)}</h2>',
            f"<p>{doc['workloads']} workloads, {doc['admitted']} admitted, {doc['preemptions']} preemptions, "
            f"{doc['simulatedSeconds']} simulated seconds.</p>",
            _cq_table(doc),
            _never(doc),
        ]
        for key, title in (
            ("wait", "Wait-time distribution"),
            ("utilisation", "Utilisation per flavor"),
            ("queue", "Queue length over time"),
            ("share", "Share against the weighted fair share"),
        ):
            path = figures.get(name, {}).get(key)
            if path is not None:
                parts += [f"<h3>{title}</h3>", _img(path, f"{name} {key}")]
    parts.append("</body></html>\n")
    return "\n".join(parts)
