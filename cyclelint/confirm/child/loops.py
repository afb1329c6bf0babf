"""What the line watchers learn: which flagged lines ran, and samples of flagged accumulators.

Shared by the two ways of watching lines (``sys.monitoring`` on 3.12+, scoped tracing on 3.11):
both ask ``points()`` what a code object holds and report lines and loop passes here.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .quiet import quiet
from .tensors import measure
from .watchplan import LoopWatch, Plan

MAX_SAMPLES = 48  # per watched accumulator
# Passes 1-8, then every ~1.5x: the cost of sampling stays logarithmic in the length of the loop.
_DUE = set(range(1, 9)) | {int(8 * 1.5 ** k) for k in range(1, 60)}
_UNSEEN = object()


@dataclass
class CodePoints:
    """What one code object holds: flagged lines not yet run, loop headers to sample, entry samples."""

    hits: dict[int, list[int]] = field(default_factory=dict)
    samples: dict[int, list[LoopWatch]] = field(default_factory=dict)
    entry: list[LoopWatch] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.hits or self.samples or self.entry)


class Learned:
    def __init__(self, det, plan: Plan):
        self.det = det
        self.files = plan.files
        self.ran: set[int] = set()
        self.loops: dict[str, dict] = {}
        self.settled: set[str] = set()
        self.probes = {p.finding for f in plan.files.values() for p in f.probes}
        self.watch_ids = {w.id for f in plan.files.values() for w in f.loops}

    def reset(self) -> None:
        self.ran, self.loops, self.settled = set(), {}, set()

    def done(self) -> bool:
        """Every flagged line has run and every watched loop has shown growth: nothing left to learn."""
        return self.ran >= self.probes and self.settled >= self.watch_ids

    def points(self, code, path: str) -> CodePoints:
        watch = self.files[path]
        lines = {ln for _, _, ln in code.co_lines() if ln is not None}
        out = CodePoints()
        for p in watch.probes:
            if p.finding in self.ran:
                continue
            line = next((ln for ln in range(p.first, p.last + 1) if ln in lines), None)
            if line is not None:
                out.hits.setdefault(line, []).append(p.finding)
        for w in watch.loops:
            if w.id in self.settled:
                continue
            if w.at == "entry":
                if w.line == code.co_firstlineno:
                    out.entry.append(w)
            elif w.line in lines:
                out.samples.setdefault(w.line, []).append(w)
        return out

    def line_ran(self, ids: list[int]) -> None:
        self.ran.update(ids)
        self.det.dirty = True

    def sample(self, w: LoopWatch, frame) -> bool:
        """One pass of the watched loop (or call of the method); says whether the watch has settled."""
        if w.id in self.settled:
            return True
        state = self.loops.setdefault(w.id, {"passes": 0, "samples": [], "finding": w.finding, "expr": w.expr})
        state["passes"] += 1
        n = state["passes"]
        if len(state["samples"]) >= MAX_SAMPLES or n not in _DUE:
            return False
        value = resolve(w.expr, frame)
        if value is _UNSEEN:
            return False
        det = self.det
        t0 = time.thread_time()  # this thread's work: torch's worker threads are not ours
        det.busy = True
        try:
            with quiet():
                state["samples"].append({"pass": n, **measure(value)})
        except Exception as exc:
            state["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            det.busy = False
        det.stats["analysis_seconds"] += time.thread_time() - t0
        det.dirty = True
        if settled([s[w.metric] for s in state["samples"]]):
            self.settled.add(w.id)  # growth is shown: stop paying for this loop
        if time.perf_counter() - det.last_flush > 1.0:
            det.flush()
        return w.id in self.settled


def settled(values: list) -> bool:
    """Six samples, each larger than the one before: the accumulator grows, no need to look further."""
    tail = values[-6:]
    return len(tail) == 6 and all(b > a for a, b in zip(tail, tail[1:]))


def resolve(expr: str, frame):
    """The value of a dotted name in a frame, read without running the program's code where possible."""
    parts = expr.split(".")
    head = parts[0]
    if head in frame.f_locals:
        value = frame.f_locals[head]
    elif head in frame.f_globals:
        value = frame.f_globals[head]
    else:
        return _UNSEEN
    for name in parts[1:]:
        try:
            d = object.__getattribute__(value, "__dict__")
            value = d[name] if type(d) is dict and name in d else getattr(value, name)
        except Exception:
            return _UNSEEN
    return value
