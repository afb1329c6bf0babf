"""Line watching on Python 3.12+: ``sys.monitoring`` events on the flagged code objects only.

When a watched file's code is executed (the ``exec`` audit event: imports, the script, test
modules), its code objects that hold a flagged line or a sampled loop get LINE (and PY_START, for
per-call samples) events; no other code is touched. A line that has told all it can is disabled
at once, and a code object with nothing left to learn loses its events.
"""
from __future__ import annotations

import sys

_MON = getattr(sys, "monitoring", None)


def available() -> bool:
    return _MON is not None


class MonitorLines:
    def __init__(self, det, learned):
        self.det, self.learned = det, learned
        self.tool: int | None = None
        self.watched: dict = {}  # code object -> CodePoints

    def install(self) -> bool:
        for tool in (4, 3, 5, 2):  # ids 3 and 4 are reserved for no one
            if _MON.get_tool(tool) is None:
                _MON.use_tool_id(tool, "cyclelint --confirm")
                self.tool = tool
                break
        else:
            return False
        events = _MON.events
        _MON.register_callback(self.tool, events.LINE, self.on_line)
        _MON.register_callback(self.tool, events.PY_START, self.on_start)
        return True

    def on_exec(self, code, path: str) -> None:
        if self.tool is None:
            return
        stack = [code]
        while stack:
            c = stack.pop()
            stack.extend(k for k in c.co_consts if isinstance(k, type(code)))
            if c in self.watched:
                continue
            points = self.learned.points(c, path)
            if points.empty():
                continue
            self.watched[c] = points
            events = _MON.events.LINE if points.hits or points.samples else 0
            _MON.set_local_events(self.tool, c, events | (_MON.events.PY_START if points.entry else 0))

    def on_collection(self) -> None:
        pass  # entry into watched code needs no help here

    def on_line(self, code, line):
        points = self.watched.get(code)
        if points is None:
            return _MON.DISABLE
        ids = points.hits.pop(line, None)
        if ids:
            self.learned.line_ran(ids)
        watches = points.samples.get(line)
        if watches:
            frame = sys._getframe(1)
            watches[:] = [w for w in watches if not self.learned.sample(w, frame)]
            if not watches:
                del points.samples[line]
        self._forget_if_done(code, points)
        return None if line in points.samples else _MON.DISABLE

    def on_start(self, code, offset):
        points = self.watched.get(code)
        if points is None or not points.entry:
            return _MON.DISABLE
        frame = sys._getframe(1)
        points.entry[:] = [w for w in points.entry if not self.learned.sample(w, frame)]
        self._forget_if_done(code, points)
        return None

    def _forget_if_done(self, code, points) -> None:
        if points.empty():
            _MON.set_local_events(self.tool, code, 0)
            self.watched[code] = points

    def uninstall(self) -> None:
        if self.tool is None:
            return
        for code in self.watched:
            _MON.set_local_events(self.tool, code, 0)
        events = _MON.events
        _MON.register_callback(self.tool, events.LINE, None)
        _MON.register_callback(self.tool, events.PY_START, None)
        _MON.free_tool_id(self.tool)
        self.tool = None
        self.watched = {}

    def after_fork(self) -> None:
        pass  # a forked child keeps the parent's events; lines the parent saw run are in the parent's evidence
