"""``--confirm-report``: one self-contained HTML page (inline style and SVG, no script, no network).

Each cycle is drawn as a ring: its objects on a circle (two side by side, one alone with a loop),
curved directed edges labelled with the attribute, key or closure variable and the source line that
made them, and the tensors whose memory the cycle kept hanging off the objects that held them,
largest first. Text is set in a monospace font so that every box is sized before the browser draws
it; the layout grows until no two boxes meet.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from .. import __version__
from ..findings import Finding, human_bytes

FONT = 12  # px, node and tensor text
EDGE_FONT = 11
CHAR = 0.62  # em: the width of one monospace character, rounded up (DejaVu Sans Mono is 0.602)
PAD = 8
GAP = 10  # least distance between two boxes
MAX_LABEL = 44

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left;
vertical-align:top}code{font-size:13px}.confirmed{color:#b00020;font-weight:600}.not-observed{color:#666}
.not-run{color:#999}section{margin:2em 0;border-top:2px solid #eee}svg{background:#fafafa;border:1px solid #eee}
svg text{font-family:"DejaVu Sans Mono",monospace}
rect.node{fill:#fff;stroke:#555}rect.tensor{fill:#ffe3e3;stroke:#b00020}path.edge{stroke:#777;fill:none}
line.holds{stroke:#b00020;stroke-dasharray:4 3}text.label,text.tlabel{font-size:12px;fill:#222}
text.elabel{font-size:11px;fill:#0b5394}text.stack{font-size:11px;fill:#555}
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


class Box:
    """A text box centred at (x, y); ``lines`` are drawn top to bottom."""

    def __init__(self, kind: str, lines: list[str], font: int, x: float = 0.0, y: float = 0.0):
        self.kind, self.lines, self.font, self.x, self.y = kind, lines, font, x, y
        self.w = max(len(t) for t in lines) * font * CHAR + 2 * PAD
        self.h = len(lines) * (font + 4) + PAD

    def meets(self, other: Box) -> bool:
        return abs(self.x - other.x) * 2 < self.w + other.w + 2 * GAP and \
            abs(self.y - other.y) * 2 < self.h + other.h + 2 * GAP

    def edges(self) -> tuple[float, float, float, float]:
        return self.x - self.w / 2, self.y - self.h / 2, self.x + self.w / 2, self.y + self.h / 2


def _clip(text: str, limit: int = MAX_LABEL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


Curve = list[tuple[float, float]]


def layout(pic: dict) -> tuple[dict[int, Box], list[tuple[dict, Box, Curve]], list[tuple[Box, Box]]]:
    """Node boxes, edges (with label box and curve points), tensor boxes (with the box they hang off: the
    holder, or the tensor before them on the same holder), none overlapping."""
    ring_ids = []
    for e in pic.get("edges", []):
        if e["src"] not in ring_ids:
            ring_ids.append(e["src"])
    labels = {n["id"]: n["label"] for n in pic.get("nodes", [])}
    others = [n["id"] for n in pic.get("nodes", []) if n["id"] not in ring_ids]
    order = ring_ids + others
    nodes = {i: Box("node", [_clip(labels.get(i, "?"))], FONT) for i in order}
    radius = 60.0
    while True:
        _place_ring(order, nodes, radius)
        edges = [(e, Box("elabel", [_clip(_edge_text(e), 60)], EDGE_FONT), _curve(e, nodes, len(order)))
                 for e in pic.get("edges", []) if e["src"] in nodes and e["dst"] in nodes]
        for _, box, points in edges:
            box.x, box.y = points[1]
        boxes = list(nodes.values()) + [b for _, b, _ in edges]
        if not any(a.meets(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]) or radius > 4000:
            break
        radius *= 1.25
    tensors = []
    taken = list(boxes)
    chain: dict[int, Box] = {}  # the last box hung off each holder: the next one hangs off it
    for t in sorted(pic.get("tensors", []), key=lambda t: -t.get("bytes", 0)):
        holder = nodes.get(t.get("holder"))
        if holder is None:
            continue
        box = Box("tensor", _tensor_lines(t), FONT)
        dx, dy = holder.x, holder.y
        norm = math.hypot(dx, dy)
        dx, dy = (dx / norm, dy / norm) if norm > 1 else (0.0, 1.0)
        step = 0
        while True:  # walk outwards from the holder until the box meets nothing
            reach = holder.h / 2 + box.h / 2 + 30 + 20 * step
            box.x, box.y = holder.x + dx * (reach + abs(dx) * (holder.w + box.w) / 2), holder.y + dy * reach
            if not any(box.meets(o) for o in taken):
                break
            step += 1
        taken.append(box)
        tensors.append((box, chain.get(t["holder"], holder)))
        chain[t["holder"]] = box
    return nodes, edges, tensors


def _place_ring(order: list[int], nodes: dict[int, Box], radius: float) -> None:
    n = len(order)
    for k, i in enumerate(order):
        if n == 1:
            nodes[i].x, nodes[i].y = 0.0, 0.0
        elif n == 2:
            nodes[i].x, nodes[i].y = (-radius if k == 0 else radius), 0.0
        else:
            angle = 2 * math.pi * k / n - math.pi / 2
            nodes[i].x, nodes[i].y = radius * math.cos(angle), radius * math.sin(angle)


def _curve(e: dict, nodes: dict[int, Box], n: int) -> list[tuple[float, float]]:
    """Start, label point, end of an edge: a loop over the node, or an arc bowing away from the centre
    (two nodes: one arc above, the one back below)."""
    a, b = nodes[e["src"]], nodes[e["dst"]]
    if e["src"] == e["dst"]:
        return [(a.x - a.w / 4, a.y - a.h / 2), (a.x, a.y - a.h / 2 - 60), (a.x + a.w / 4, a.y - a.h / 2)]
    mx, my = (a.x + b.x) / 2, (a.y + b.y) / 2
    if n == 2:
        nx, ny = (0.0, -1.0) if a.x < b.x else (0.0, 1.0)
    else:
        norm = math.hypot(mx, my) or 1.0
        nx, ny = mx / norm, my / norm
    bow = 0.35 * math.hypot(b.x - a.x, b.y - a.y) + 20
    start = _border(a, b.x - a.x + nx * bow, b.y - a.y + ny * bow)
    end = _border(b, a.x - b.x + nx * bow, a.y - b.y + ny * bow)
    return [start, (mx + nx * bow, my + ny * bow), end]


def _border(box: Box, dx: float, dy: float) -> tuple[float, float]:
    """Where a ray from the box's centre towards (dx, dy) leaves the box."""
    scale = min(box.w / 2 / abs(dx) if dx else math.inf, box.h / 2 / abs(dy) if dy else math.inf)
    return box.x + dx * scale, box.y + dy * scale


def _edge_text(e: dict) -> str:
    label = e.get("label") or "ref"
    return f"{label}  {e['source']}" if e.get("source") else label


def _tensor_lines(t: dict) -> list[str]:
    shape = "×".join(map(str, t.get("shape", []))) or "scalar"
    lines = [_clip(f"{shape} {t.get('dtype', '?')} {t.get('device', '?')}  {human_bytes(t.get('bytes', 0))}", 60)]
    if t.get("via"):
        lines.append(_clip(f"held through {t['via']}", 60))
    for f in t.get("stack", [])[:4]:
        lines.append(_clip(f"allocated at {f['file'].rsplit('/', 1)[-1]}:{f['line']} {f['name']}", 60))
    return lines


def cycle_svg(pic: dict) -> str:
    """The drawing of one finding's cycle (see the module docstring)."""
    nodes, edges, tensors = layout(pic)
    boxes = list(nodes.values()) + [b for _, b, _ in edges] + [b for b, _ in tensors]
    if not boxes:
        return ""
    xs = [v for b in boxes for v in (b.edges()[0], b.edges()[2])] + [p[0] for _, _, pts in edges for p in pts]
    ys = [v for b in boxes for v in (b.edges()[1], b.edges()[3])] + [p[1] for _, _, pts in edges for p in pts]
    left, top = min(xs) - 20, min(ys) - 20
    width, height = max(xs) - left + 20, max(ys) - top + 20
    parts = [f"<svg class='cycle' width='{width:.0f}' height='{height:.0f}' "
             f"viewBox='{left:.0f} {top:.0f} {width:.0f} {height:.0f}'>",
             "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='8' markerHeight='8' "
             "orient='auto-start-reverse'><path d='M0,0L10,5L0,10z' fill='#777'/></marker></defs>"]
    for _, _, (p0, p1, p2) in edges:
        # a quadratic curve through p1 at its middle has its control point at 2*p1 - (p0 + p2)/2
        cx, cy = 2 * p1[0] - (p0[0] + p2[0]) / 2, 2 * p1[1] - (p0[1] + p2[1]) / 2
        parts.append(f"<path class='edge' d='M{p0[0]:.1f},{p0[1]:.1f} Q{cx:.1f},{cy:.1f} {p2[0]:.1f},{p2[1]:.1f}' "
                     "marker-end='url(#arrow)'/>")
    for box, anchor in tensors:
        parts.append(f"<line class='holds' x1='{anchor.x:.1f}' y1='{anchor.y:.1f}' x2='{box.x:.1f}' y2='{box.y:.1f}'/>")
    for box in nodes.values():
        parts.append(_box_svg(box, "node", "label"))
    for _, box, _ in edges:
        parts.append(_box_svg(box, None, "elabel"))
    for box, _ in tensors:
        parts.append(_box_svg(box, "tensor", "tlabel"))
    parts.append("</svg>")
    return "".join(parts)


def _box_svg(box: Box, rect_class: str | None, text_class: str) -> str:
    x0, y0, _, _ = box.edges()
    out = []
    if rect_class:
        out.append(f"<rect class='{rect_class}' x='{x0:.1f}' y='{y0:.1f}' width='{box.w:.1f}' "
                   f"height='{box.h:.1f}' rx='4'/>")
    else:  # an edge label: a background that keeps the curve from running through its text
        out.append(f"<rect x='{x0:.1f}' y='{y0:.1f}' width='{box.w:.1f}' height='{box.h:.1f}' fill='#fafafa' "
                   "opacity='0.85'/>")
    line_h = box.font + 4
    first = box.y - (len(box.lines) - 1) * line_h / 2
    for k, text in enumerate(box.lines):
        cls = text_class if k == 0 or text_class != "tlabel" else "stack"
        out.append(f"<text class='{cls}' x='{box.x:.1f}' y='{first + k * line_h:.1f}' text-anchor='middle' "
                   f"dominant-baseline='central'>{escape(text)}</text>")
    return f"<g class='box {rect_class or 'edge-label'}'>{''.join(out)}</g>"
