"""``--confirm-report``: one self-contained HTML page (inline style and SVG, no script, no network)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from .. import __version__
from ..findings import Finding, human_bytes

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left;
vertical-align:top}code{font-size:13px}.confirmed{color:#b00020;font-weight:600}.not-observed{color:#666}
.not-run{color:#999}section{margin:2em 0;border-top:2px solid #eee}svg{background:#fafafa;border:1px solid #eee}
.node{fill:#fff;stroke:#555}.tensor{fill:#ffd7d7;stroke:#b00020}.edge{stroke:#777;fill:none}
.label{font-size:11px;fill:#333}.elabel{font-size:10px;fill:#0b5394}
"""


def render_page(findings: Sequence[Finding], command: str, returncode: int, outcome) -> str:
    rows, sections = [], []
    for n, f in enumerate(findings):
        c = f.confirmation or {}
        status = c.get("status", "")
        held = human_bytes(c["bytes"]) if c.get("bytes") else ""
        rows.append(f"<tr><td><code>{escape(f.path)}:{f.line}</code></td><td>{f.code}</td>"
                    f"<td class='{escape(status)}'>{escape(status)}</td><td>{held}</td>"
                    f"<td>{escape(f.message)}<br><small>{escape(c.get('evidence', ''))}</small></td></tr>")
        if c.get("cycle"):
            sections.append(f"<section id='f{n}'><h3>{f.code} at <code>{escape(f.path)}:{f.line}</code></h3>"
                            f"<p>{escape(c.get('evidence', ''))}</p>{cycle_svg(c['cycle'])}</section>")
    device = "CUDA" if outcome.cuda else "CPU (CUDA not available)"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cyclelint --confirm report</title>
<style>{STYLE}</style></head><body>
<h1>cyclelint --confirm</h1>
<p>cyclelint {escape(__version__)} ran <code>{escape(command)}</code>: exit status {returncode},
{outcome.processes} Python process{'es' * (outcome.processes != 1)} watched, tensors on {device}.</p>
<table><tr><th>where</th><th>code</th><th>status</th><th>held</th><th>finding</th></tr>
{''.join(rows)}</table>
{''.join(sections)}
</body></html>
"""


def cycle_svg(graph: dict) -> str:
    """The cycle's members on a circle, arrows labelled with the attribute or key; tensors hang outside."""
    nodes = graph.get("nodes", [])
    ring = [n for n in nodes if n["kind"] != "tensor" or not n.get("bytes")]
    hanging = [n for n in nodes if n not in ring]
    size = 560
    cx = cy = size / 2
    radius = size / 2 - 120 if len(ring) > 1 else 0
    pos: dict[int, tuple[float, float]] = {}
    for i, n in enumerate(ring):
        angle = 2 * math.pi * i / max(len(ring), 1) - math.pi / 2
        pos[n["id"]] = (cx + radius * math.cos(angle), cy + radius * math.sin(angle))
    for j, n in enumerate(hanging):
        src = next((e["src"] for e in graph.get("edges", []) if e["dst"] == n["id"]), None)
        sx, sy = pos.get(src, (cx, cy))
        dx, dy = sx - cx, sy - cy
        norm = math.hypot(dx, dy) or 1.0
        pos[n["id"]] = (sx + 90 * dx / norm + 25 * j, sy + 90 * dy / norm + (60 if norm == 1.0 else 0) + 25 * j)
    parts = [f"<svg width='{size}' height='{size}' viewBox='0 0 {size} {size}'>",
             "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' markerHeight='7' "
             "orient='auto-start-reverse'><path d='M0,0L10,5L0,10z' fill='#777'/></marker></defs>"]
    for e in graph.get("edges", []):
        if e["src"] not in pos or e["dst"] not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e["src"]], pos[e["dst"]]
        if e["src"] == e["dst"]:
            parts.append(f"<path class='edge' d='M{x1 - 20:.0f},{y1 - 14:.0f} C{x1 - 60:.0f},{y1 - 90:.0f} "
                         f"{x1 + 60:.0f},{y1 - 90:.0f} {x1 + 20:.0f},{y1 - 14:.0f}' marker-end='url(#arrow)'/>")
            lx, ly = x1, y1 - 75
        else:
            dx, dy = x2 - x1, y2 - y1
            norm = math.hypot(dx, dy) or 1.0
            sx, sy, ex, ey = x1 + 18 * dx / norm, y1 + 18 * dy / norm, x2 - 18 * dx / norm, y2 - 18 * dy / norm
            parts.append(f"<line class='edge' x1='{sx:.0f}' y1='{sy:.0f}' x2='{ex:.0f}' y2='{ey:.0f}' "
                         "marker-end='url(#arrow)'/>")
            lx, ly = (x1 + x2) / 2, (y1 + y2) / 2 - 4
        parts.append(f"<text class='elabel' x='{lx:.0f}' y='{ly:.0f}' text-anchor='middle'>"
                     f"{escape(e['label'] or 'ref')}</text>")
    for n in nodes:
        x, y = pos[n["id"]]
        cls = "tensor" if n["kind"] == "tensor" else "node"
        parts.append(f"<circle class='{cls}' cx='{x:.0f}' cy='{y:.0f}' r='16'/>")
        text = n["label"] if len(n["label"]) <= 48 else n["label"][:47] + "…"
        if n.get("bytes"):
            text += f" — {human_bytes(n['bytes'])}"
        parts.append(f"<text class='label' x='{x:.0f}' y='{y + 30:.0f}' text-anchor='middle'>{escape(text)}</text>")
    parts.append("</svg>")
    return "".join(parts)
