"""The ``--confirm-report`` page, laid out by a real browser (headless Chromium): no two boxes of a
drawing (objects, tensors, edge labels) overlap, and every text fits inside its box (issue 17)."""
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest

from cyclelint.findings import Finding
from cyclelint.report.html import cycle_svg, render_page

from .conftest import FIXTURES, ROOT, run, tool

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Written into a copy of the page by the test only: the page itself has no script.
MEASURE = """<script>
const out = [];
document.querySelectorAll('svg.cycle').forEach((svg, s) => {
  svg.querySelectorAll('g.box').forEach(g => {
    const r = g.querySelector('rect').getBoundingClientRect();
    const texts = [...g.querySelectorAll('text')].map(t => {
      const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom, t.textContent]; });
    out.push({svg: s, kind: g.getAttribute('class'), box: [r.left, r.top, r.right, r.bottom], texts});
  });
});
const pre = document.createElement('pre'); pre.id = 'boxes'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def laid_out(page: str, tmp_path) -> list[dict]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have headless Chromium: .ci/run installs Debian's chromium")
        pytest.skip("headless Chromium is not installed (.ci/run installs Debian's chromium)")
    html = tmp_path / "measured.html"
    html.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    profile = tmp_path / "profile"
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=2000",
                           "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r"<pre id=\"boxes\">(.*?)</pre>", proc.stdout, re.S)
    assert found, proc.stderr[-2000:]
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def _meets(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def assert_no_overlap(boxes: list[dict]) -> None:
    assert boxes
    for item in boxes:
        x0, y0, x1, y1 = item["box"]
        for t in item["texts"]:
            assert x0 <= t[0] + 0.5 and t[2] <= x1 + 0.5 and y0 <= t[1] + 0.5 and t[3] <= y1 + 0.5, \
                f"text {t[4]!r} spills out of its box {item['box']}"
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a["svg"] == b["svg"]:
                assert not _meets(a["box"], b["box"]), (a, b)


def _ring(n: int, label: str = "Block", edge: str = ".parent") -> dict:
    nodes = [{"id": i, "kind": "object", "label": f"{label}{i}"} for i in range(n)]
    edges = [{"src": i, "dst": (i + 1) % n, "label": f"{edge}_{i}", "source": f"model.py:{10 + i}"} for i in range(n)]
    tensors = [{"holder": i % n, "via": ".weight", "shape": [1024, 256 * (i + 1)], "dtype": "float32",
                "device": "cpu", "bytes": 1024 * 256 * (i + 1) * 4} for i in range(min(n + 1, 5))]
    return {"nodes": nodes, "edges": edges, "tensors": tensors}


def test_rings_of_every_size_lay_out_without_overlap(tmp_path):
    pictures = [_ring(1), _ring(2), _ring(3), _ring(6),
                _ring(2, label="SomeQuiteLongClassName.with.a.nested.qualname.that.goes.on", edge=".a_long_attribute"),
                _ring(8, edge="['key']")]
    pictures[1]["tensors"][0]["stack"] = [{"file": "/srv/train.py", "line": 41, "name": "build"}] * 3
    page = "<!DOCTYPE html><html><head><meta charset='utf-8'><style>svg text{font-family:'DejaVu Sans Mono'," \
           "monospace}text.label,text.tlabel{font-size:12px}text.elabel,text.stack{font-size:11px}</style>" \
           "</head><body>" + "".join(cycle_svg(p) for p in pictures) + "</body></html>"
    boxes = laid_out(page, tmp_path)
    assert {b["svg"] for b in boxes} == set(range(len(pictures)))
    kinds = [b["kind"] for b in boxes if b["svg"] == 1]
    assert kinds.count("box node") == 2 and kinds.count("box edge-label") == 2 and kinds.count("box tensor") == 3
    assert_no_overlap(boxes)


def test_two_nodes_draw_two_curves_that_do_not_share_a_line():
    svg = cycle_svg(_ring(2))
    curves = re.findall(r"<path class='edge' d='M([-\d.]+),([-\d.]+) Q([-\d.]+),([-\d.]+) ([-\d.]+),([-\d.]+)'", svg)
    assert len(curves) == 2
    (_, y0, _, cy0, _, _), (_, y1, _, cy1, _, _) = [tuple(map(float, c)) for c in curves]
    assert cy0 < y0 and cy1 > y1  # one bows above the pair, the other below: directed, apart


def test_the_real_page_of_a_confirm_run(tmp_path):
    pytest.importorskip("torch")
    target = FIXTURES / "confirm" / "truth" / "two_findings_one_cycle.py"
    page = tmp_path / "report.html"
    proc = run([tool("cyclelint"), str(target), "--no-cache", "--confirm-report", str(page), "--confirm", "--",
                sys.executable, str(target)], cwd=ROOT)
    assert proc.returncode == 1, proc.stderr[-2000:]
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text
    assert text.count("<svg") == 2 and "closure self" in text and "two_findings_one_cycle.py:14" in text
    assert text.count("class='tensor'") == 2 and "16384 float32 cpu  64.0 KiB" in text
    boxes = laid_out(text, tmp_path)
    assert_no_overlap(boxes)
    well_formed(text)


def test_a_page_without_findings_is_still_a_page(tmp_path):
    outcome = SimpleNamespace(cuda=False, processes=1)
    text = render_page([Finding("x.py", 3, 1, 3, 1, "CYC101", "m", confirmation={"status": "not-run", "bytes": 0})],
                       "python x.py", 0, outcome)
    well_formed(text)
    assert "not-run" in text and "<svg" not in text


def well_formed(text: str) -> None:
    """Every element that is opened is closed in order (void and self-closed ones aside)."""
    class Nesting(HTMLParser):
        def __init__(self):
            super().__init__()
            self.stack = []

        def handle_starttag(self, tag, attrs):
            if tag not in ("meta", "br"):
                self.stack.append(tag)

        def handle_startendtag(self, tag, attrs):
            pass

        def handle_endtag(self, tag):
            assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
            self.stack.pop()

    checker = Nesting()
    checker.feed(text)
    checker.close()
    assert checker.stack == []
