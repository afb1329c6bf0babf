"""Killing cyclelint during ``--confirm`` stops the whole child tree and removes its temp folder
(issue 13): SIGINT and SIGTERM through the real CLI, and SIGKILL, which only the reaper can answer."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cyclelint

from .conftest import FIXTURES, ROOT, tool

PACKAGE = Path(cyclelint.__file__).resolve().parent

PROGRAM = FIXTURES / "confirm" / "truth" / "process_tree.py"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _start(tmp_path):
    pids = tmp_path / "pids"
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen([tool("cyclelint"), str(PROGRAM), "--no-cache", "--confirm", "--", sys.executable,
                             str(PROGRAM), str(pids)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not pids.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    tree = [int(p) for p in pids.read_text().split()]
    assert len(tree) == 3 and all(_alive(p) for p in tree)
    assert [p.name for p in temp.iterdir() if p.name.startswith("cyclelint-confirm-")]
    return proc, tree, temp


def _gone(tree, temp, wait=15.0):
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and (any(_alive(p) for p in tree) or list(temp.iterdir())):
        time.sleep(0.1)
    assert not [p for p in tree if _alive(p)], "a process of the child tree outlived cyclelint"
    assert not list(temp.iterdir()), "the temp folder was left behind"


@pytest.mark.parametrize("signum,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_cyclelint_stops_the_tree_and_says_so_in_one_line(tmp_path, signum, status):
    proc, tree, temp = _start(tmp_path)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    ours = [line for line in err.splitlines() if line.startswith("cyclelint:") and "confirming" not in line]
    assert len(ours) == 1 and "interrupted" in ours[0], err
    # no traceback through cyclelint's own code (the program's own KeyboardInterrupt is its output, and the
    # command line it ran names the checkout's folder, whatever it is called)
    frames = [line.split('"')[1] for line in err.splitlines() if line.strip().startswith('File "')]
    assert [f for f in frames if Path(f).resolve().is_relative_to(PACKAGE)] == [], err
    assert out == ""  # no report: the run was cut short
    _gone(tree, temp)


def test_sigkill_of_cyclelint_still_takes_the_tree_and_the_folder(tmp_path):
    proc, tree, temp = _start(tmp_path)
    proc.kill()
    proc.communicate(timeout=60)
    _gone(tree, temp)
