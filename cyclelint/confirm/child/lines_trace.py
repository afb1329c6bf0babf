"""Line watching on Python 3.11: ``sys.settrace`` only while flagged code runs, within a time budget.

On 3.11 any trace function slows every line of every frame (the interpreter leaves its specialised
bytecode), so tracing is on only while it can learn something: it starts when a watched file's code is executed
(and again when a collection finds flagged code on the stack), declines every other frame at its
first call, and stops once nothing is left to learn or its share of the run (GRACE seconds, then
1/RATIO of the CPU time since) is spent. That share is counted in the CPU time of the threads that run
traced Python, not the process's: torch's own worker threads (and their spinning on a loaded machine) cost
the tracer nothing, and counting them cut short the watching of a one-second program. Code that runs while
tracing is off is not seen: the evidence then says that watching was partial. An import is traced by
``getattr``, which declines every frame without running any Python (a script's ``import torch`` under the
full trace function cost as much again as its start-up), and it is neither watched nor counted.
"""
from __future__ import annotations

import sys
import threading
import time

RATIO = 20
GRACE = 1.0  # CPU seconds: a short program is watched in full
_UNSEEN = object()


class TraceLines:
    def __init__(self, det, learned):
        self.det, self.learned = det, learned
        self.code_watch: dict = {}  # code object -> CodePoints, or None when it holds nothing
        self.on = False
        self.traced = 0.0  # CPU seconds of traced threads with tracing on, imports left out
        self.counted_to: dict[int, float] = {}  # thread -> its CPU time already in `traced`
        self.calls = 0
        self.partial = False  # some time passed with lines left to learn and tracing off

    def install(self) -> bool:
        return True

    def on_exec(self, code, path: str) -> None:
        if self.on and sys.gettrace() is _DECLINE:
            sys.settrace(self.on_call)  # a watched module imported: its own lines are watched
        self.start()  # the watched module starts: its flagged code may run from now on

    def on_collection(self) -> None:
        """A collection is a cheap moment to look for flagged code on the stack."""
        if self.on or self.learned.done() or not self._budget_left():
            return
        frame = sys._getframe(2)
        found = False
        while frame is not None:
            points = self._points(frame.f_code)
            if points is not None and (points.hits or points.samples):
                frame.f_trace = self._local(frame.f_code, points)
                found = True
            frame = frame.f_back
        if found:
            self.start()

    def start(self) -> None:
        if self.on or self.learned.done():
            return
        if not self._budget_left():
            self.partial = True
            return
        current = sys.gettrace()
        if current is not None and current != self.on_call:
            self.partial = True  # the program traces itself (a debugger, coverage): leave it be
            return
        self.on = True
        self.counted_to = {threading.get_ident(): time.thread_time()}
        sys.settrace(self.on_call)
        threading.settrace(self.on_call)

    def stop(self) -> None:
        if not self.on:
            return
        self.on = False
        self._count()
        self.counted_to = {}
        if sys.gettrace() in (self.on_call, _DECLINE):
            sys.settrace(None)
        if threading.gettrace() == self.on_call:
            threading.settrace(None)
        if not self.learned.done():
            self.partial = True

    def _count(self) -> None:
        """Adds the calling thread's CPU time since it was last counted; a thread seen for the first time is
        counted from now on (what it ran before, at most 1024 calls, is left out)."""
        ident, now = threading.get_ident(), time.thread_time()
        last = self.counted_to.get(ident)
        self.counted_to[ident] = now
        if last is not None:
            self.traced += now - last

    def _budget_left(self) -> bool:
        """CPU time, not wall time: a busy machine must not cut watching short."""
        elapsed = time.process_time() - self.det.cpu_clock
        return self.traced < GRACE + elapsed / RATIO

    def _points(self, code):
        points = self.code_watch.get(code, _UNSEEN)
        if points is _UNSEEN:
            path = self.det.watched(code.co_filename)
            points = self.learned.points(code, path) if path is not None else None
            self.code_watch[code] = None if points is None or points.empty() else points
            points = self.code_watch[code]
        return points

    def on_call(self, frame, event, arg):
        if not self.on:  # a thread that started while tracing was on
            sys.settrace(None)
            return None
        code = frame.f_code
        if code.co_name == "_find_and_load" and code.co_filename == "<frozen importlib._bootstrap>":
            return self._import(frame)
        self.calls += 1
        if not self.calls & 1023:
            self._count()
            if not self._budget_left():
                self.stop()
                return None
        points = self._points(code)
        if points is None:
            return None
        if points.entry:
            points.entry[:] = [w for w in points.entry if not self.learned.sample(w, frame)]
        if points.empty():
            self._done_with(frame.f_code)
            return None
        return self._local(frame.f_code, points) if points.hits or points.samples else None

    def _import(self, frame):
        """An import runs: start-up, paid once. Until it returns, every frame is declined by
        _DECLINE, and its time is left out of the budget."""
        self._count()
        sys.settrace(_DECLINE)

        def until_done(frame, event, arg):
            if event == "return":
                ident = threading.get_ident()
                if ident in self.counted_to:
                    self.counted_to[ident] = time.thread_time()  # the import's time is not counted
                if self.on and sys.gettrace() is _DECLINE:
                    sys.settrace(self.on_call)
            return until_done

        frame.f_trace_lines = False
        return until_done

    def _local(self, code, points):
        learned = self.learned

        def trace(frame, event, arg):
            if event != "line":
                return trace
            line = frame.f_lineno
            ids = points.hits.pop(line, None)
            if ids:
                learned.line_ran(ids)
            watches = points.samples.get(line)
            if watches:
                watches[:] = [w for w in watches if not learned.sample(w, frame)]
                if not watches:
                    del points.samples[line]
            if not points.hits and not points.samples:
                if not points.entry:
                    self._done_with(code)
                frame.f_trace = None
                return None
            return trace

        return trace

    def _done_with(self, code) -> None:
        self.code_watch[code] = None  # nothing left to learn here
        if self.learned.done():
            self.stop()

    def uninstall(self) -> None:
        partial = self.partial
        self.stop()
        self.partial = partial  # the run is over: no time passes unwatched from here
        self.code_watch.clear()

    def after_fork(self) -> None:
        pass


# A trace function is only ever called with "call" (and arg None) for a new frame; what it returns is the
# frame's local trace function. getattr(frame, "call", None) is None, and being a builtin it costs no Python
# frame per call: the cheapest way to keep tracing on (the caller's frames resume their lines) yet watch nothing.
_DECLINE = getattr
