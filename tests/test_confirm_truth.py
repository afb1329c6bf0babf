"""``--confirm`` tells the truth about memory (issue 17): exact counts and bytes on leak programs,
bytes only for what a collection frees, CYC3 graphs measured, the program left alone, verdicts that
say which code ran, cycles outside the linted paths reported. Real CLI, real torch, real children."""
import json
import sys

import pytest

from cyclelint.findings import Finding
from cyclelint.report.sarif import render

from .conftest import FIXTURES, ROOT, run, tool

pytest.importorskip("torch")

TRUTH = FIXTURES / "confirm" / "truth"
ALL = "CYC,CYC304,CYC405,CYC900"


def confirm(target, *command, fmt="json", extra=()):
    proc = run([tool("cyclelint"), str(target), "--no-cache", "--select", ALL, "--format", fmt, *extra,
                "--confirm", "--", sys.executable, *map(str, command)], cwd=ROOT)
    assert "Traceback" not in proc.stderr.replace("Traceback (most recent call last):\n  File \"<string>\"", ""), \
        proc.stderr[-3000:]
    return proc, (json.loads(proc.stdout)["findings"] if fmt == "json" else None)


def within(value, expected, share=0.05):
    return abs(value - expected) <= share * expected


def test_n_cycles_made_by_a_helper_are_n_cycles_reported():
    _, findings = confirm(TRUTH / "helper_closure.py", TRUTH / "helper_closure.py", 100, 1 << 14)
    (f,) = findings  # no static rule follows the helper: one CYC900, at the closure's code
    assert (f["code"], f["line"]) == ("CYC900", 8)
    c = f["confirmation"]
    assert c["count"] == 100
    assert within(c["bytes"], 100 * (1 << 14) * 4), c["bytes"]


def test_the_blogs_pairs_are_counted_once():
    _, findings = confirm(TRUTH / "blog_pairs.py", TRUTH / "blog_pairs.py", 200, 1 << 15)
    (f,) = findings
    c = f["confirmation"]
    assert (f["code"], c["status"], c["count"]) == ("CYC201", "confirmed", 200)
    assert within(c["bytes"], 400 * (1 << 15) * 4), c["bytes"]


def test_bytes_are_counted_only_when_the_collection_frees_them():
    _, findings = confirm(TRUTH / "shared_tensor.py", TRUTH / "shared_tensor.py", 50, 0, 0)
    c = findings[0]["confirmation"]
    assert (c["status"], c["count"], c["bytes"]) == ("confirmed", 50, 0)  # the global keeps the 4 MiB alive
    _, findings = confirm(TRUTH / "shared_tensor.py", TRUTH / "shared_tensor.py", 50, 40, 4096)
    c = findings[0]["confirmation"]
    assert c["count"] == 90
    assert within(c["bytes"], 40 * 4096 * 4), c["bytes"]  # only the holders' own tensors were freed


def test_two_findings_on_one_cycle_share_its_bytes_and_each_draws_its_own_ring():
    _, findings = confirm(TRUTH / "two_findings_one_cycle.py", TRUTH / "two_findings_one_cycle.py")
    by_code = {f["code"]: f["confirmation"] for f in findings}
    assert set(by_code) == {"CYC101", "CYC202"}
    assert within(sum(c["bytes"] for c in by_code.values()), 30 * (1 << 14) * 4)
    assert sorted(c["bytes"] > 0 for c in by_code.values()) == [False, True]  # never added twice
    lam, back = by_code["CYC101"]["cycle"], by_code["CYC202"]["cycle"]
    assert any(n["kind"] == "function" and "<lambda>" in n["label"] for n in lam["nodes"])
    assert [e["label"] for e in lam["edges"]] == [".scale", "closure self"] or \
        sorted(e["label"] for e in lam["edges"]) == [".scale", "closure self"]
    assert sorted(e["label"] for e in back["edges"]) == [".child", ".parent"]
    assert not any("<lambda>" in n["label"] for n in back["nodes"] if n["id"] in {e["src"] for e in back["edges"]})
    tensors = lam["tensors"] or back["tensors"]
    assert tensors and tensors[0]["shape"] == [1 << 14] and tensors[0]["bytes"] == (1 << 14) * 4


def test_cyc3_bytes_are_the_saved_tensors_of_the_kept_graphs():
    _, findings = confirm(TRUTH / "eval_accumulate.py", TRUTH / "eval_accumulate.py", 40)
    (f,) = findings
    c = f["confirmation"]
    assert c["status"] == "confirmed"
    last = c["samples"][-1]
    per_pass = 64 * 256 * 4 + 64 * 512 * 4  # the batch x and the activation h, saved for backward
    assert within(last["graph_bytes"], (last["pass"] - 1) * per_pass), (last, per_pass)
    assert within(c["bytes"], (last["pass"] - 1) * per_pass)
    assert last["nodes"] > c["samples"][0]["nodes"]


def test_the_program_sees_what_it_would_see_without_cyclelint(tmp_path):
    program = TRUTH / "program_state.py"
    plain = run([sys.executable, str(program)], cwd=ROOT)
    assert plain.returncode == 0, plain.stderr
    report = tmp_path / "report.json"
    watched = run([tool("cyclelint"), str(program), "--no-cache", "--format", "json", "-o", str(report),
                   "--confirm", "--", sys.executable, str(program)], cwd=ROOT)
    assert watched.stdout == plain.stdout  # its own garbage, thresholds, debug flags, trace function
    assert "leaky=7" in plain.stdout and "own_trace=True" in plain.stdout
    for proc in (plain, watched):
        assert proc.stderr.count("UserWarning: this is shown once") == 1, proc.stderr[-2000:]
    (f,) = json.loads(report.read_text())["findings"]
    assert f["confirmation"]["status"] == "confirmed" and f["confirmation"]["count"] >= 30


def test_a_json_report_on_stdout_stays_json_while_the_program_prints():
    program = TRUTH / "program_state.py"
    proc = run([tool("cyclelint"), str(program), "--no-cache", "--format", "sarif", "--confirm", "--",
                sys.executable, str(program)], cwd=ROOT)
    json.loads(proc.stdout)  # the whole of stdout is the report
    assert "program line 2" in proc.stderr


def test_a_decorator_that_ran_is_not_the_method_running():
    target = TRUTH / "cached_never_called.py"
    _, findings = confirm(target, target)
    c = findings[0]["confirmation"]
    assert c["status"] == "not-run"
    assert "never ran the body of Model.features()" in c["evidence"]
    _, findings = confirm(target, target, "--call")
    c = findings[0]["confirmation"]
    assert c["status"] == "confirmed", c  # called: the cache keeps the three instances alive at exit
    assert c["count"] == 3


def test_cycles_made_outside_the_linted_paths_are_reported_where_they_were_made(tmp_path):
    user = TRUTH / "outside_user.py"
    _, findings = confirm(user, user)
    (f,) = findings
    assert f["code"] == "CYC900" and f["path"].endswith("outside_lib/maker.py") and f["line"] == 5
    c = f["confirmation"]
    assert c["outside"] is True and c["count"] == 12 and within(c["bytes"], 12 * (1 << 14) * 4)
    assert "outside the linted paths" in f["message"]
    page = tmp_path / "page.html"
    proc, _ = confirm(user, user, fmt="text", extra=("--confirm-report", str(page)))
    assert "outside_lib/maker.py:5:1: CYC900" in proc.stdout
    assert "outside_lib/maker.py:5" in page.read_text()
    (result,) = json.loads(render([Finding(**f) for f in findings], []))["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("outside_lib/maker.py")
    assert result["properties"]["confirmation"]["outside"] is True


def test_garbage_without_tensors_costs_no_extra_full_collection(tmp_path):
    """Freeing a sampled middle collection's garbage takes a full collection (0.1 s with torch loaded); when
    that garbage reaches no tensor the program's own next full collection frees it, so the watched program
    runs as many full collections as the plain one (give or take the detector's last look at exit)."""
    program = tmp_path / "churn.py"
    program.write_text(
        "import gc\nimport torch\n\n\nclass Node:\n    pass\n\n\n"
        "for _ in range(300_000):\n    node = Node()\n    node.me = node\n    keep = [Node() for _ in range(2)]\n"
        "print('full collections:', gc.get_stats()[2]['collections'])\n")
    plain = run([sys.executable, str(program)], cwd=ROOT)
    watched, _ = confirm(program, program)
    counts = [int((p.stdout + p.stderr).split("full collections:")[1].split()[0]) for p in (plain, watched)]
    assert counts[1] <= counts[0] + 1, counts
