"""Worker processes that never outlive the run.

Ctrl-C reaches the whole process group: the workers ignore it and the parent, which owns the
decision, kills them before it exits. SIGTERM or SIGKILL reach the parent alone: the first unwinds
it the same way (see interrupts.py), the second cannot be caught, so each worker asks the kernel
to kill it when its parent dies (Linux's parent-death signal) or, elsewhere, watches its parent."""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def map_in_workers(fn: Callable[[T], R], jobs: Sequence[T], workers: int, chunk: int,
                   lost: Callable[[T], R]) -> list[R]:
    """``[fn(job) for job in jobs]`` in ``workers`` processes, in order. When a worker dies (out of
    memory, a crash in a native parser) the jobs without a result get ``lost(job)``; any interruption
    (Ctrl-C, SIGTERM, a bug of ours) kills every worker before it goes on up."""
    from concurrent.futures import ProcessPoolExecutor  # not on the one-file (pre-commit) path
    from concurrent.futures.process import BrokenProcessPool

    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(max_workers=max(1, min(workers, len(jobs))), initializer=_worker_init,
                               initargs=(os.getpid(),))
    done: list[R] = []
    try:
        for result in pool.map(fn, jobs, chunksize=chunk):
            done.append(result)
    except BrokenProcessPool:
        done += [lost(job) for job in jobs[len(done):]]
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        mine = [p for p in multiprocessing.active_children() if p not in before]
        for proc in mine:
            proc.kill()
        for proc in mine:
            proc.join(5)
        raise
    pool.shutdown(wait=True)
    return done


def _worker_init(owner: int) -> None:
    """``owner``: the cyclelint process. It is the parent when workers are forked; with a fork server
    (Python 3.14's default) the parent is that server, which itself ends with cyclelint."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker inherits the parent's handler
    parent = os.getppid()
    if not _die_with_parent():
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent or not _alive(owner):  # it died before we could ask
        os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _die_with_parent() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    """Where no parent-death signal exists: an orphan is adopted by another process."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)
