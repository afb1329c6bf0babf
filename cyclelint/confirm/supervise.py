"""The confirm child and everything it starts live and die with cyclelint.

The command runs in a process group of its own, with a parent-death signal. A small reaper process
(outside that group) holds the read end of a pipe only cyclelint writes to: whenever cyclelint
ends, even killed with SIGKILL, the pipe closes and the reaper kills the group and removes the temp
folder. SIGINT, SIGTERM and SIGHUP to cyclelint are passed to the group; the command gets a moment
to stop, then the group is killed. At a terminal the group is made the foreground group, so Ctrl-C
and reading stdin reach the program as they would without cyclelint.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

GRACE = 3.0  # seconds the command gets to stop after a signal, before the group is killed
_PR_SET_PDEATHSIG = 1
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

REAPER = """\
import os, shutil, signal, sys
pgid, work = int(sys.argv[1]), sys.argv[2]
signal.signal(signal.SIGINT, signal.SIG_IGN)
while os.read(0, 1024):
    pass
try:
    os.killpg(pgid, signal.SIGKILL)
except OSError:
    pass
shutil.rmtree(work, ignore_errors=True)
"""


class Interrupted(Exception):
    """cyclelint itself got a signal while the command ran."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _parent_death_signal(parent: int):
    libc = ctypes.CDLL(None, use_errno=True)

    def setup() -> None:  # runs in the child between fork and exec
        os.setpgid(0, 0)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # cyclelint died before the signal was armed
            os._exit(137)
        tty = _foreground_tty()
        if tty is not None:
            with _no_sigttou():
                os.tcsetpgrp(tty, os.getpid())

    return setup


def _foreground_tty() -> int | None:
    """stdin's terminal, when cyclelint's group is in the foreground on it."""
    try:
        fd = sys.stdin.fileno()
        return fd if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp() else None
    except (OSError, ValueError, AttributeError):
        return None


@contextlib.contextmanager
def _no_sigttou():
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGTTOU, old)


class ChildGroup:
    """``with ChildGroup(cmd, env, work) as group: rc = group.wait()``; raises Interrupted on a signal."""

    def __init__(self, command: Sequence[str], env: dict, work: str, stdout=None):
        self.command, self.env, self.work, self.stdout = list(command), env, work, stdout
        self.proc: subprocess.Popen | None = None
        self.reaper: subprocess.Popen | None = None
        self.pipe_w: int | None = None
        self.tty = _foreground_tty()
        self.saved: dict = {}

    def __enter__(self) -> ChildGroup:
        for signum in _SIGNALS:
            self.saved[signum] = signal.signal(signum, self._on_signal)
        try:
            self.proc = subprocess.Popen(self.command, env=self.env, stdout=self.stdout,
                                         preexec_fn=_parent_death_signal(os.getpid()))
            self._start_reaper()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start_reaper(self) -> None:
        read, self.pipe_w = os.pipe()
        try:
            self.reaper = subprocess.Popen([sys.executable, "-I", "-S", "-c", REAPER, str(self.proc.pid), self.work],
                                           stdin=read, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True, close_fds=True)
        finally:
            os.close(read)

    def _on_signal(self, signum, frame) -> None:
        raise Interrupted(signum)

    def wait(self) -> int:
        """The command's status, once it has ended and what it left running has been killed."""
        rc = self.proc.wait()
        self._kill_group()
        return rc

    def __exit__(self, kind, exc, tb) -> None:
        try:
            if self.proc is not None:
                if isinstance(exc, Interrupted):
                    self._stop(exc.signum)
                elif exc is not None:
                    self._stop(signal.SIGTERM)
                self._kill_group()  # what the command left running dies with it
                if self.proc.returncode is None:
                    self.proc.wait()
        finally:
            if self.tty is not None:
                with contextlib.suppress(OSError), _no_sigttou():
                    os.tcsetpgrp(self.tty, os.getpgrp())
            for signum, handler in self.saved.items():
                signal.signal(signum, handler)
            if self.pipe_w is not None:
                os.close(self.pipe_w)  # the reaper finds the group gone and the folder for us to remove
            if self.reaper is not None:
                self.reaper.wait()

    def _stop(self, signum: int) -> None:
        """Pass the signal on, give the command GRACE seconds, then kill the group."""
        for s in _SIGNALS:  # a second Ctrl-C while waiting ends the wait early
            signal.signal(s, self._on_signal)
        try:
            os.killpg(self.proc.pid, signum)
            self.proc.wait(GRACE)
        except (OSError, subprocess.TimeoutExpired, Interrupted):
            pass

    def _kill_group(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
