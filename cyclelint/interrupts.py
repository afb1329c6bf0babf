"""Ctrl-C, SIGTERM and SIGHUP end a run with one line and 128 + the signal's number, never a traceback.

SIGINT stays Python's KeyboardInterrupt. SIGTERM and SIGHUP raise :class:`Terminated`, which is
no KeyboardInterrupt (code that waits out a Ctrl-C its child also got must not wait out a kill),
so that every ``finally`` on the way up runs: worker processes are killed (pool.py), temporary
files removed (atomic.py)."""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

CAUGHT = (signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise(signum: int, frame) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def terminations_raise() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Terminated` (main thread only: the
    library may be called from any thread, and only the main one may set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _raise) for sig in CAUGHT}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def exit_status(exc: BaseException) -> tuple[int, str]:
    """The status and the one line for an interruption."""
    if isinstance(exc, Terminated):
        return 128 + exc.signum, f"terminated by {signal.Signals(exc.signum).name}"
    return 128 + signal.SIGINT, "interrupted"
