"""Line watching (issue 17, item 7): ``sys.monitoring`` on 3.12+ on the flagged code objects only, and
on 3.11 tracing only while there is something left to learn. Runs real children through the runner
with plans written by hand; no torch needed, so the 3.12 path is tested on a 3.12 interpreter too."""
import glob
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from cyclelint.confirm.child.watchplan import FileWatch, LoopWatch, Plan, Probe
from cyclelint.confirm.runner import run_command

PROGRAM = textwrap.dedent("""\
    import sys


    def flagged(n):
        acc = []
        for i in range(n):
            acc.append([i] * 10)
        return acc


    def unflagged():
        return sum(range(10))


    flagged(30)
    unflagged()
    M = getattr(sys, "monitoring", None)
    if M is not None:
        tool = next(t for t in range(6) if M.get_tool(t) == "cyclelint --confirm")
        print("global", M.get_events(tool), "unflagged", M.get_local_events(tool, unflagged.__code__))
    print("trace", sys.gettrace(), "profile", sys.getprofile())
""")


def _python312() -> str | None:
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        root = ""
    found = sorted(glob.glob(os.path.join(root, "versions", "3.12*", "bin", "python3.12"))) if root else []
    return found[-1] if found else shutil.which("python3.12")


PY312 = _python312()
INTERPRETERS = [pytest.param(sys.executable, id=f"{sys.version_info.major}.{sys.version_info.minor}"),
                pytest.param(PY312, id="3.12", marks=pytest.mark.skipif(PY312 is None, reason="no python3.12 here"))]


def _plan(path: str, loops: bool = True) -> Plan:
    watch = FileWatch(probes=[Probe(0, 7, 7, "line 7")])
    if loops:
        watch.loops.append(LoopWatch("L0", 0, "line", 6, "acc"))
    return Plan(files={path: watch})


@pytest.mark.parametrize("python", INTERPRETERS)
def test_flagged_lines_and_loop_passes_are_seen(tmp_path, python):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    run = run_command([python, str(path)], _plan(os.path.realpath(path)), False, subprocess.PIPE)
    (evidence,) = run.evidence
    assert run.returncode == 0 and evidence["ran"] == [0]
    lengths = [s["length"] for s in evidence["loops"]["L0"]["samples"]]
    assert lengths[:8] == list(range(8)) and lengths == sorted(lengths) and len(lengths) > 8
    if python == PY312:
        assert evidence["lines"] == "monitoring"


@pytest.mark.skipif(PY312 is None, reason="no python3.12 here")
def test_monitoring_touches_only_the_flagged_code(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        run = run_command([PY312, str(path)], _plan(os.path.realpath(path)), False, fh)
    assert run.returncode == 0, run.problems
    text = out.read_text()
    assert "global 0 unflagged 0" in text  # no global events; code without a flagged line has none either
    assert "trace None profile None" in text  # the program's trace and profile functions are untouched


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the tracing path is 3.11's")
def test_tracing_stops_once_nothing_is_left_to_learn(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        run = run_command([sys.executable, str(path)], _plan(os.path.realpath(path), loops=False), False, fh)
    (evidence,) = run.evidence
    assert evidence["ran"] == [0]
    assert "trace None profile None" in out.read_text()  # line 7 ran: the tracer went away at once


IMPORTING = textwrap.dedent("""\
    import sys
    import helper


    def flagged(n):
        import lazy_helper
        acc = []
        for i in range(n):
            acc.append([i] * 10)
        return acc


    flagged(30)
    print("while importing:", helper.TRACE, sys.modules["lazy_helper"].TRACE)
""")


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the tracing path is 3.11's")
def test_imports_run_without_a_python_trace_function(tmp_path):
    """An import under the trace function would slow a script's ``import torch`` by half; the frames of
    an import are declined by a builtin, yet the flagged lines after it, and the loop around a lazy
    import, are still seen."""
    for name in ("helper", "lazy_helper"):
        (tmp_path / f"{name}.py").write_text("import sys\nTRACE = type(sys.gettrace()).__name__\n")
    path = tmp_path / "prog.py"
    path.write_text(IMPORTING)
    watch = FileWatch(probes=[Probe(0, 9, 9, "line 9")], loops=[LoopWatch("L0", 0, "line", 8, "acc")])
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        run = run_command([sys.executable, str(path)], Plan(files={os.path.realpath(path): watch}), False, fh)
    (evidence,) = run.evidence
    assert run.returncode == 0 and evidence["ran"] == [0]
    assert len(evidence["loops"]["L0"]["samples"]) > 8
    assert "while importing: builtin_function_or_method builtin_function_or_method" in out.read_text()


# PROGRAM's functions (the flagged line is 7), then a thread busy in C code before they run
BUSY_THREAD = PROGRAM.split("flagged(30)\n")[0] + textwrap.dedent("""\
    import hashlib
    import threading
    import time


    def hash_for(seconds):
        block = bytes(1 << 20)
        while time.thread_time() < seconds:
            hashlib.sha256(block).digest()  # C code, the GIL released: like torch's worker threads


    worker = threading.Thread(target=hash_for, args=(1.5,))
    worker.start()
    worker.join()
    for _ in range(3000):
        unflagged()
    flagged(30)
    if False:
        flagged(1)
""")
NEVER_RUN = BUSY_THREAD.splitlines().index("    flagged(1)") + 1


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the tracing path is 3.11's")
def test_the_budget_counts_traced_python_not_other_threads(tmp_path):
    """A thread busy in C code (torch's worker pool, spinning on a loaded machine) costs the tracer nothing:
    counted against the budget, it stopped the watching of a short program before its flagged lines ran.
    A line the program never reaches is then reported as never run, not as missed by a partial watch."""
    path = tmp_path / "prog.py"
    path.write_text(BUSY_THREAD)
    watch = FileWatch(probes=[Probe(0, 7, 7, "line 7"), Probe(1, NEVER_RUN, NEVER_RUN, "never run")])
    with open(tmp_path / "out.txt", "w") as fh:
        run = run_command([sys.executable, str(path)], Plan(files={os.path.realpath(path): watch}), False, fh)
    (evidence,) = run.evidence
    assert run.returncode == 0 and evidence["ran"] == [0]
    assert evidence["lines"] == "traced"
