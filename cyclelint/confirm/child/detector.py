"""The detector's lifecycle in one process: install, fork, exit, evidence; restores what it touched."""
from __future__ import annotations

import atexit
import gc
import json
import os
import sys
import time
import types

from . import cuda_history, lines_monitor
from .cycles import CycleWatcher
from .lines_trace import TraceLines
from .loops import Learned
from .objgraph import real
from .quiet import quiet
from .tensors import measure, tensor_type, torch_module
from .watchplan import ENV_DIR, ENV_PLAN, Plan

_UNSEEN = object()


class Detector:
    def __init__(self, plan: Plan, out_dir: str):
        self.plan = plan
        self.out_dir = out_dir
        self.busy = False
        self.installed = False
        self.finished = False
        self.froze = False
        self.dirty = True
        self.last_flush = 0.0
        self.path_cache: dict[str, str | None] = {}
        self.cycles = CycleWatcher(self)
        self.stats = self.cycles.stats
        self.learned = Learned(self, plan)
        backend = lines_monitor.MonitorLines if lines_monitor.available() else TraceLines
        self.lines = backend(self, self.learned)
        self.survivors: dict = {}
        self.cuda: bool | None = None
        self._start_clock()

    def _start_clock(self) -> None:
        self.pid = os.getpid()
        self.started = time.time()
        self.clock = time.perf_counter()
        self.cpu_clock = time.process_time()

    # install / restore
    def install(self) -> None:
        gc.callbacks.append(self.cycles.on_gc)
        if self.plan.files:
            if not self.lines.install():
                self.stats["lines_watched"] = "none: no sys.monitoring tool id was free"
            sys.addaudithook(self.on_audit)
        gc.collect()
        gc.freeze()  # the heap that existed before the command is never garbage worth reading
        self.froze = True
        atexit.register(self.finish)
        os.register_at_fork(after_in_child=self.after_fork)
        self.installed = True

    def restore(self) -> None:
        if not self.installed:
            return
        self.installed = False
        if self.cycles.on_gc in gc.callbacks:
            gc.callbacks.remove(self.cycles.on_gc)
        self.cycles.cancel_defer()
        self.lines.uninstall()
        cuda_history.stop()
        if self.froze:
            gc.unfreeze()
            self.froze = False

    def after_fork(self) -> None:
        """A forked child (multiprocessing, DataLoader workers) reports on its own."""
        if not self.installed:
            return
        self._start_clock()
        self.cycles.reset()
        self.stats = self.cycles.stats
        self.learned.reset()
        self.lines.after_fork()
        cuda_history.forget()
        self.dirty = True
        mp_util = sys.modules.get("multiprocessing.util")
        if mp_util is not None:
            # forked multiprocessing children leave through os._exit, not atexit; their finalizers run
            # first, but the registry is cleared after the fork, so register once it has been
            mp_util.register_after_fork(self, lambda det: mp_util.Finalize(None, det.finish, exitpriority=0))

    # hooks
    def on_audit(self, event: str, args: tuple) -> None:
        if event == "exec" and self.installed and args and isinstance(args[0], types.CodeType):
            path = self.watched(args[0].co_filename)
            if path is not None:
                self.lines.on_exec(args[0], path)

    def on_collection(self) -> None:
        """Called at the start of every collection the detector sees."""
        cuda_history.maybe_start()
        if self.plan.files:
            self.lines.on_collection()

    def watched(self, filename: str) -> str | None:
        path = self.path_cache.get(filename, _UNSEEN)
        if path is _UNSEEN:
            resolved = real(filename)
            path = self.path_cache[filename] = resolved if resolved in self.plan.files else None
        return path

    def rank(self, obj) -> tuple:
        """Start drawings at objects in watched files: instances first, then functions, frames."""
        t = type(obj)
        if t is types.FunctionType:
            return (0 if self.watched(obj.__code__.co_filename) else 3, 1)
        if t is types.FrameType:
            return (0 if self.watched(obj.f_code.co_filename) else 3, 2)
        info = self.cycles.describer.cls(t)
        if info is not None:
            return (0 if self.watched(info["file"]) else 2, 0)
        return (4, 0)

    # evidence
    def evidence(self) -> dict:
        torch = torch_module()
        if self.cuda is None and torch is not None:
            try:
                self.cuda = bool(torch.cuda.is_available())
            except Exception:
                self.cuda = False
        partial = getattr(self.lines, "partial", False)
        return {
            "pid": self.pid, "rank": os.environ.get("RANK"), "local_rank": os.environ.get("LOCAL_RANK"),
            "argv": list(getattr(sys, "argv", [])), "python": sys.version.split()[0],
            "torch": getattr(torch, "__version__", None) if torch else None, "cuda_available": self.cuda,
            "cuda_history": cuda_history.recording(),
            "finished": self.finished, "seconds": round(time.time() - self.started, 3),
            "lines": "monitoring" if lines_monitor.available() else ("traced, partly" if partial else "traced"),
            "ran": sorted(self.learned.ran), "cycles": list(self.cycles.cycles.values()),
            "loops": self.learned.loops, "survivors": self.survivors, "stats": self.stats,
        }

    def flush(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        self.last_flush = time.perf_counter()
        path = os.path.join(self.out_dir, f"evidence-{self.pid}.json")
        tmp = path + ".tmp"
        try:
            text = json.dumps(self.evidence(), default=str)  # one shot: json.dump's encoder is cyclic garbage
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except OSError:
            pass

    def finish(self) -> None:
        """Last look when the process ends: one more sampled collection, then live survivors."""
        if self.finished or os.getpid() != self.pid or not self.installed:
            return
        cycles = self.cycles
        cycles.cancel_defer()
        cycles.analyse()
        start = len(gc.garbage)
        debug = gc.get_debug()
        cycles.program_saves = bool(debug & gc.DEBUG_SAVEALL)
        self.busy = True
        gc.set_debug(debug | gc.DEBUG_SAVEALL)
        try:
            gc.collect()
        finally:
            gc.set_debug(debug)
            self.busy = False
        cycles.pending = gc.garbage[start:]
        if not cycles.program_saves:
            del gc.garbage[start:]
        cycles.landing = 2
        cycles.analyse()
        with quiet():
            self.survivors = self.find_survivors()
        self.finished = True
        self.dirty = True
        self.restore()
        self.flush()

    def find_survivors(self) -> dict:
        """Instances of the classes behind never-freed findings (CYC402, CYC404) alive at exit."""
        wanted = self.plan.survivors
        if not wanted:
            return {}
        out: dict[str, dict] = {}
        ttype = tensor_type()
        describer = self.cycles.describer
        for obj in gc.get_objects():
            info = describer.cls(type(obj)) if type(obj) not in (dict, list, tuple, types.FunctionType) else None
            if info is None:
                continue
            for w in wanted:
                if any(k == w.cls and f == w.file for k, f in info["mro"]):
                    entry = out.setdefault(str(w.finding), {"count": 0, "bytes": 0, "devices": {}})
                    entry["count"] += 1
                    if ttype is not None:
                        m = measure(obj, walk_graph=False)
                        entry["bytes"] += m["bytes"]
                        for dev, b in m["devices"].items():
                            entry["devices"][dev] = entry["devices"].get(dev, 0) + b
        return out


def start_from_environment() -> Detector | None:
    out_dir = os.environ.get(ENV_DIR)
    plan_path = os.environ.get(ENV_PLAN)
    if not out_dir or not plan_path:
        return None
    try:
        with open(plan_path, encoding="utf-8") as fh:
            plan = Plan.from_json(fh.read())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    det = Detector(plan, out_dir)
    det.install()
    det.flush()
    return det
