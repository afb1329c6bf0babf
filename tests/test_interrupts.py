"""Ctrl-C, SIGTERM and SIGKILL of a lint run with a worker pool, through the installed command: one line
and 128 + the signal's number (no traceback, none from the workers either), and no process left behind.
Processes are found by scanning /proc: the run is started as the leader of its own process group."""
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import tool

FIX_CASE = (Path(__file__).parent / "fix_cases" / "collect.in.py").read_text()


def stat_fields(pid: int) -> list[str] | None:
    """state, ppid, pgrp, ... of /proc/PID/stat; None once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def cpu_ticks(pid: int) -> int:
    fields = stat_fields(pid) or []
    return int(fields[11]) + int(fields[12]) if len(fields) > 12 else 0


def alive_in_group(pgid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        fields = stat_fields(int(entry)) if entry.isdigit() else None
        if fields and int(fields[2]) == pgid and fields[0] != "Z":  # a zombie holds no memory and runs nothing
            found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory):
    """Enough work that two workers are still busy when the signal comes (the run is stopped early)."""
    tmp = tmp_path_factory.mktemp("tree")
    body = "\n\n".join(FIX_CASE.replace("def ", f"def v{i}_").replace("class Evaluator", f"class Evaluator{i}")
                       for i in range(40))
    for i in range(40):
        (tmp / f"m{i:02d}.py").write_text(body)
    return tmp


def default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(tree, jobs: str) -> tuple[subprocess.Popen, list[int]]:
    # as from a terminal: a runner started in the background (`pytest &`) ignores SIGINT, and its children inherit that
    proc = subprocess.Popen([tool("cyclelint"), "--no-cache", "-j", jobs, "."], cwd=tree, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=default_sigint)
    workers: list[int] = []
    deadline = time.monotonic() + 60
    # linting has begun once the workers are up, or (alone) once it has spent a second of CPU time
    while time.monotonic() < deadline and (len(workers) < 2 if jobs != "1" else cpu_ticks(proc.pid) < 100):
        time.sleep(0.05)
        workers = [p for p in alive_in_group(proc.pid) if p != proc.pid]
    time.sleep(0.3)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    return proc, workers


def wait_empty(pgid: int) -> list[int]:
    deadline = time.monotonic() + 10
    while alive_in_group(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive_in_group(pgid)


@pytest.mark.parametrize("sig, to_group, status, line", [
    (signal.SIGINT, True, 130, "cyclelint: interrupted"),  # Ctrl-C in a terminal reaches the whole group
    (signal.SIGTERM, False, 143, "cyclelint: terminated by SIGTERM"),  # a supervisor's kill reaches cyclelint
    (signal.SIGHUP, False, 129, "cyclelint: terminated by SIGHUP"),
])
def test_a_signal_ends_the_run_with_one_line_and_no_worker_left(big_tree, sig, to_group, status, line):
    proc, workers = start(big_tree, "2")
    assert len(workers) == 2
    (os.killpg if to_group else os.kill)(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status
    assert err.decode() == line + "\n" and out == b""
    assert wait_empty(proc.pid) == []


def test_ctrl_c_without_workers(big_tree):
    proc, workers = start(big_tree, "1")
    assert workers == []
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err, out) == (130, b"cyclelint: interrupted\n", b"")


def test_sigkill_takes_the_workers_along(big_tree):
    """SIGKILL cannot be caught: each worker asked the kernel to kill it when its parent dies."""
    proc, workers = start(big_tree, "2")
    assert len(workers) == 2
    proc.kill()
    proc.communicate(timeout=60)
    assert wait_empty(proc.pid) == []


def test_a_reader_that_goes_away_is_no_traceback(tmp_path):
    for i in range(120):  # a report larger than a pipe holds
        (tmp_path / f"m{i}.py").write_text(FIX_CASE)
    proc = subprocess.Popen([tool("cyclelint"), "--no-cache", "."], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(10)  # `cyclelint . | head -c 10`
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141 and err == b""
