"""``--confirm`` end to end: the real CLI runs real fixture programs with real torch (CPU here)."""
import gc
import importlib
import importlib.util
import json
import sys

import pytest

from cyclelint.findings import RULES

from .conftest import FIXTURES, ROOT, run, tool
from .test_confirm_page import well_formed

pytest.importorskip("torch")

LEAKS = sorted(p for p in FIXTURES.rglob("*_leak.py")) + sorted((FIXTURES / "confirm").glob("[!_]*.py"))
CLEAN = sorted(p for p in FIXTURES.rglob("*_clean.py"))
EVERY_STATIC_RULE = ",".join(code for code in RULES if code != "CYC900")


def confirm(target, *command, extra=()):
    command = command or (sys.executable, str(target))
    proc = run([tool("cyclelint"), str(target), "--no-cache", "--select", EVERY_STATIC_RULE, "--format", "json",
                *extra, "--confirm", "--", *command], cwd=ROOT)
    assert proc.stdout.strip(), proc.stderr[-3000:]
    return proc, json.loads(proc.stdout)["findings"]  # the child's own stdout went to stderr


# A cycle that runs through C++ is never freed by the collector, and --confirm watches what the collector frees
# (and growth in watched loops): the program itself asserts its outputs outlive gc.collect().
UNCOLLECTABLE = {"zerocopy_leak.py": "CYC201", "pack_hook_leak.py": "CYC302"}


@pytest.mark.parametrize("path", [p for p in LEAKS if p.name not in {"runtime_only.py", *UNCOLLECTABLE}],
                         ids=lambda p: p.name)
def test_every_leak_is_confirmed_with_bytes(path):
    proc, findings = confirm(path)
    assert findings, proc.stderr[-2000:]
    for f in findings:
        c = f["confirmation"]
        assert f["code"] != "CYC900", f  # every cycle in these programs has a static finding
        assert c["status"] == "confirmed", (f["line"], f["code"], c)
        assert c["count"] > 0, c
        # bytes are counted once: a finding whose cycles another finding explains too says which counts them
        assert c["bytes"] > 0 or "which counts their bytes" in c["evidence"], c
        assert c["device"] == "cpu"
        assert c["evidence"]


@pytest.mark.parametrize("name", sorted(UNCOLLECTABLE))
def test_a_cycle_the_collector_cannot_free_runs_but_is_not_observed(name):
    """The program runs to its end (its own assert: the outputs survive gc.collect()), and the finding says
    that the line ran and that nothing the detector watches was seen, rather than claiming a confirmation."""
    path = next(p for p in LEAKS if p.name == name)
    proc, findings = confirm(path)
    assert "the command exited with status 0" in proc.stderr, proc.stderr[-2000:]
    assert [f["code"] for f in findings] == [UNCOLLECTABLE[name]]
    c = findings[0]["confirmation"]
    assert c["status"] == "not-observed" and c["bytes"] == 0, c
    assert "ran line" in c["evidence"], c


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.name)
def test_clean_twins_confirm_nothing(path):
    proc, findings = confirm(path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert findings == []


def test_a_cycle_the_static_pass_cannot_see_is_cyc900_at_its_class():
    path = FIXTURES / "confirm" / "runtime_only.py"
    _, findings = confirm(path)
    assert [(f["code"], f["line"]) for f in findings] == [("CYC900", 9)]
    c = findings[0]["confirmation"]
    assert c["status"] == "confirmed" and c["bytes"] >= 20 * 4 * (1 << 16) // 2
    assert "Recorder" in c["evidence"] and "parent_of" in c["evidence"]


def test_cyc900_can_be_ignored():
    path = FIXTURES / "confirm" / "runtime_only.py"
    _, findings = confirm(path, extra=("--ignore", "CYC9"))
    assert findings == []


def test_a_failing_child_passes_its_status_through_and_still_reports():
    proc, findings = confirm(FIXTURES / "confirm" / "raises.py")
    assert proc.returncode == 1
    assert "step 21 failed" in proc.stderr
    assert [f["confirmation"]["status"] for f in findings] == ["confirmed"]


def test_child_output_passes_through():
    proc, _ = confirm(FIXTURES / "confirm" / "multiproc.py")
    assert "parent " in proc.stderr  # a JSON report on stdout: the program's stdout goes to stderr
    text = run([tool("cyclelint"), str(FIXTURES / "confirm" / "multiproc.py"), "--no-cache", "--confirm", "--",
                sys.executable, str(FIXTURES / "confirm" / "multiproc.py")], cwd=ROOT)
    assert text.stdout.startswith("parent ")  # the text report: the program's stdout stays on stdout


def test_multiprocessing_children_are_watched():
    _, findings = confirm(FIXTURES / "confirm" / "multiproc.py")
    (f,) = findings
    assert f["confirmation"]["status"] == "confirmed"
    assert len(f["confirmation"]["pids"]) == 2  # the fork child and the spawn child; the parent made none


def test_not_run_and_not_observed():
    path = FIXTURES / "cyc1" / "lambda_leak.py"
    _, findings = confirm(path, sys.executable, "-c", "pass")
    assert {f["confirmation"]["status"] for f in findings} == {"not-run"}
    keep_alive = ("import sys; sys.path.insert(0, 'fixtures/cyc1'); import lambda_leak as m; "
                  "kept = m.ViewedPending(m.PendingTensor(4), 2)")
    _, findings = confirm(path, sys.executable, "-c", keep_alive)
    by_line = {f["line"]: f["confirmation"]["status"] for f in findings}
    assert by_line[23] == "not-observed"  # ran, but the object is still alive: nothing was collected
    assert by_line[33] == "not-run"


def test_html_report_is_self_contained(tmp_path):
    page = tmp_path / "report.html"
    confirm(FIXTURES / "cyc2" / "node_pair_leak.py", extra=("--confirm-report", str(page)))
    text = page.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    assert "<script" not in text
    assert text.count("<svg") == 3  # one drawing per confirmed finding: CYC405 and both CYC201
    assert "class='tensor'" in text and "MiB" in text

    well_formed(text)


def test_confirm_report_needs_confirm(tmp_path):
    proc = run([tool("cyclelint"), "fixtures/cyc1", "--confirm-report", str(tmp_path / "x.html")], cwd=ROOT)
    assert proc.returncode == 2 and "--confirm-report needs --confirm" in proc.stderr


def test_the_parent_never_imports_torch():
    script = ("import sys; from cyclelint.cli import main; "
              "rc = main(['fixtures/cyc1/closure_leak.py', '--no-cache', '--confirm', '--', sys.executable, "
              "'fixtures/cyc1/closure_leak.py']); assert 'torch' not in sys.modules; print('rc', rc)")
    proc = run([sys.executable, "-c", script], cwd=ROOT)
    assert "rc 1" in proc.stdout, proc.stderr[-2000:]
    assert "[confirmed:" in proc.stdout


def _child():
    """The detector package, loaded as the bootstrap loads it: from its folder, under a private name."""
    folder = ROOT / "cyclelint/confirm/child"
    spec = importlib.util.spec_from_file_location("_cyclelint_child_test", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_detector_restores_every_global_it_touches(tmp_path):
    _child()
    detector = importlib.import_module("_cyclelint_child_test.detector")
    watchplan = importlib.import_module("_cyclelint_child_test.watchplan")
    path = str(tmp_path / "x.py")
    plan = watchplan.Plan(files={path: watchplan.FileWatch(probes=[watchplan.Probe(0, 2, 2, "line 2")])})
    before = (gc.get_debug(), sys.gettrace(), sys.getprofile(), list(gc.callbacks), gc.get_freeze_count(),
              gc.isenabled(), gc.get_threshold())
    det = detector.Detector(plan, str(tmp_path))
    det.install()
    try:
        assert det.cycles.on_gc in gc.callbacks
        assert sys.gettrace() is before[1]  # no flagged file has run yet: no tracing
        exec(compile("x = 1\ny = 2", path, "exec"), {})
        assert det.learned.ran == {0}
    finally:
        det.finish()
    assert (gc.get_debug(), sys.gettrace(), sys.getprofile(), list(gc.callbacks), gc.get_freeze_count(),
            gc.isenabled(), gc.get_threshold()) == before
    evidence = json.loads((tmp_path / f"evidence-{det.pid}.json").read_text())
    assert evidence["finished"] is True and evidence["ran"] == [0]


def test_detector_measures_graph_growth():
    import torch

    _child()
    measure = importlib.import_module("_cyclelint_child_test.tensors").measure
    w = torch.ones(8, requires_grad=True)
    total = torch.zeros(())
    sizes = []
    for _ in range(3):
        total = total + (w * 2).sum()
        sizes.append(measure(total)["nodes"])
    assert sizes[0] < sizes[1] < sizes[2]
    assert measure(total.detach())["nodes"] == 0
    assert measure([torch.ones(4), torch.ones(4)])["bytes"] == 32
