"""The runtime detector: runs inside every Python process that a `--confirm` command starts.

Loaded by the bootstrap ``sitecustomize`` from its file path, so it uses only the standard library
(torch is looked up in ``sys.modules``, never imported) and nothing from the cyclelint package.

Cycles: a sampled collection runs with ``gc.DEBUG_SAVEALL`` so what it frees lands in
``gc.garbage``; once the collector has returned, the garbage is analysed and freed with one more
collection of the generation it landed in. Sampling keeps the analysis under ~1/RATIO of the run.
Loops: a scoped trace function follows only the code objects that hold a flagged line and samples
the flagged accumulator each time its loop header (or method body, for state) is reached.
"""
from __future__ import annotations

import atexit
import gc
import json
import os
import sys
import threading
import time
import types
import warnings

ENV_DIR = "CYCLELINT_CONFIRM_DIR"
ENV_PLAN = "CYCLELINT_CONFIRM_PLAN"
RATIO = 20  # the detector's own work may take 1/RATIO of the run's time...
GRACE = 0.25  # ...plus this many seconds, so that short programs are watched in full
MAX_NODES = 200_000  # autograd nodes walked per sample
MAX_ITEMS = 20_000  # container items walked per sample
MAX_SAMPLES = 48  # per watched accumulator
_UNSEEN = object()
_FUNC_TYPES = (types.FunctionType, types.MethodType, types.CellType, types.FrameType, types.TracebackType,
               types.CodeType, types.ModuleType, type)


def _torch():
    return sys.modules.get("torch")


def _tensor_type():
    torch = _torch()
    return getattr(torch, "Tensor", None) if torch else None


def _storage_key_bytes(t) -> tuple[tuple, int]:
    try:
        storage = t.untyped_storage()
        return (str(t.device), storage.data_ptr(), id(storage) if storage.data_ptr() == 0 else 0), storage.nbytes()
    except Exception:  # sparse, nested, meta or fake tensors have no plain storage
        try:
            return ("id", id(t)), t.numel() * t.element_size()
        except Exception:
            return ("id", id(t)), 0


class TensorTally:
    """Bytes of distinct storages, per device."""

    def __init__(self):
        self.seen: set = set()
        self.count = 0
        self.bytes = 0
        self.devices: dict[str, int] = {}

    def add(self, t) -> None:
        key, nbytes = _storage_key_bytes(t)
        self.count += 1
        if key in self.seen:
            return
        self.seen.add(key)
        self.bytes += nbytes
        dev = key[0] if key[0] != "id" else "unknown"
        self.devices[dev] = self.devices.get(dev, 0) + nbytes


# --- object graph of the collected garbage ------------------------------------------------------

def _short(value, limit=40) -> str:
    text = repr(value) if isinstance(value, (str, int, float, bool, type(None), bytes)) else f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def labelled_edges(obj) -> list[tuple[object, str]]:
    """Referents of ``obj`` with a label a person can read (attribute, key, closure variable...)."""
    out: list[tuple[object, str]] = []
    skip: set[int] = set()
    t = type(obj)
    try:
        if isinstance(obj, dict):
            for k, v in list(dict.items(obj)):
                out.append((v, f"[{_short(k)}]"))
                out.append((k, "key"))
        elif t is list or t is tuple:
            out.extend((v, f"[{i}]") for i, v in enumerate(obj))
        elif t is types.FunctionType:
            for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or ()):
                try:
                    out.append((cell.cell_contents, f"closure {name}"))
                except ValueError:
                    pass
                skip.add(id(cell))
            out.extend((v, "default") for v in obj.__defaults__ or ())
            out.extend((v, f"default {k}") for k, v in (obj.__kwdefaults__ or {}).items())
            skip.add(id(obj.__globals__))  # a module's namespace is never garbage
        elif t is types.MethodType:
            out += [(obj.__self__, "__self__"), (obj.__func__, "__func__")]
        elif t is types.CellType:
            try:
                out.append((obj.cell_contents, "cell"))
            except ValueError:
                pass
        elif t is types.FrameType:
            out.extend((v, f"local {k}") for k, v in obj.f_locals.items())
            out.append((obj.f_back, "f_back"))
            skip.add(id(obj.f_globals))
        elif t is types.TracebackType:
            out += [(obj.tb_frame, "tb_frame"), (obj.tb_next, "tb_next")]
        elif isinstance(obj, BaseException):
            out += [(obj.__traceback__, "__traceback__"), (obj.__context__, "__context__"),
                    (obj.__cause__, "__cause__"), (obj.args, "args")]
        else:
            try:
                d = object.__getattribute__(obj, "__dict__")
            except Exception:
                d = None
            if type(d) is dict:
                skip.add(id(d))
                out.extend((v, f".{k}") for k, v in list(d.items()) if isinstance(k, str))
    except Exception:
        pass
    labelled = {id(v) for v, _ in out} | skip
    out.extend((r, "") for r in gc.get_referents(obj) if id(r) not in labelled)
    return out


def _any_tensor(garbage: list, tensor_type: type) -> bool:
    for obj in garbage:
        if isinstance(obj, tensor_type) or any(isinstance(r, tensor_type) for r in gc.get_referents(obj)):
            return True
    return False


def _strongly_connected(nodes: list, succ: dict[int, list[int]]) -> list[list[int]]:
    """Tarjan's algorithm over indices, iterative (cycles can be deep)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(len(nodes)):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            targets = succ.get(v, [])
            for j in range(i, len(targets)):
                w = targets[j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(comp)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
    return out


def _class_file(k: type) -> str:
    """The file a class was defined in: its methods' code says so even when __main__ was replaced."""
    for v in list(vars(k).values()):
        func = getattr(v, "__func__", None) or getattr(v, "fget", None) or v
        code = getattr(func, "__code__", None)
        if isinstance(code, types.CodeType):
            return _real(code.co_filename)
    mod = sys.modules.get(k.__module__)
    return _real(getattr(mod, "__file__", None) or "")


_REAL: dict[str, str] = {}


def _real(filename: str) -> str:
    """Real path of a code object's file name, cached (relative names are taken from the start-up cwd)."""
    path = _REAL.get(filename)
    if path is None:
        path = _REAL[filename] = os.path.realpath(filename) if filename and not filename.startswith("<") else filename
    return path


def _code_span(code) -> tuple[int, int]:
    lines = [ln for _, _, ln in code.co_lines() if ln is not None]
    return (min(lines, default=code.co_firstlineno), max(lines, default=code.co_firstlineno))


def _code_col(code) -> int | None:
    cols = [c for line, _, c, end in code.co_positions() if c is not None and end and line == code.co_firstlineno]
    return min(cols) if cols else None


class _Describer:
    """Turns garbage objects into plain data: where each was made, and a label for drawing."""

    def __init__(self):
        self.class_cache: dict[type, dict | None] = {}

    def cls(self, t: type) -> dict | None:
        if t in self.class_cache:
            return self.class_cache[t]
        info = None
        if t.__module__ != "builtins" and not issubclass(t, _FUNC_TYPES):
            mro = [[k.__qualname__, _class_file(k)] for k in t.__mro__]
            info = {"name": t.__qualname__, "module": t.__module__, "file": mro[0][1], "mro": mro}
        self.class_cache[t] = info
        return info

    def label(self, obj, tensor_type) -> tuple[str, str]:
        """(kind, text) of one node."""
        t = type(obj)
        if tensor_type is not None and isinstance(obj, tensor_type):
            try:
                return "tensor", f"Tensor {tuple(obj.shape)} {str(obj.dtype).replace('torch.', '')} {obj.device}"
            except Exception:
                return "tensor", "Tensor"
        if t is types.FunctionType:
            c = obj.__code__
            return "function", f"{getattr(c, 'co_qualname', c.co_name)}() {os.path.basename(c.co_filename)}:{c.co_firstlineno}"
        if t is types.MethodType:
            return "method", f"bound {getattr(obj.__func__, '__qualname__', '?')}"
        if t is types.FrameType:
            return "frame", f"frame {getattr(obj.f_code, 'co_qualname', obj.f_code.co_name)} {os.path.basename(obj.f_code.co_filename)}:{obj.f_lineno}"
        if t is types.TracebackType:
            return "traceback", f"traceback line {obj.tb_lineno}"
        if t in (dict, list, tuple, set, types.CellType):
            return "container", f"{t.__name__} ({len(obj)})" if t is not types.CellType else "cell"
        return "object", t.__qualname__

    def made_at(self, members: list, into: dict) -> None:
        """Where the cycle was made: code of functions, classes of instances, frames."""
        for obj in members:
            t = type(obj)
            if t is types.FunctionType:
                c = obj.__code__
                into["functions"].append({"file": _real(c.co_filename), "line": c.co_firstlineno, "col": _code_col(c),
                                          "name": getattr(c, 'co_qualname', c.co_name)})
            elif t is types.MethodType:
                func = obj.__func__
                c = getattr(func, "__code__", None)
                owner = self.cls(type(obj.__self__))
                into["methods"].append({"name": getattr(func, "__name__", "?"),
                                        "file": _real(c.co_filename) if c else "", "line": c.co_firstlineno if c else 0,
                                        "self_mro": owner["mro"] if owner else []})
            elif isinstance(obj, type):
                into["class_objects"].append({"name": obj.__qualname__, "file": _class_file(obj)})
            elif t is types.FrameType:
                c = obj.f_code
                first, last = _code_span(c)
                into["frames"].append({"file": _real(c.co_filename), "first": first, "last": last, "line": obj.f_lineno,
                                       "name": getattr(c, 'co_qualname', c.co_name)})
            else:
                info = self.cls(t)
                if info is not None:
                    into["classes"].append(info)


# --- the detector -------------------------------------------------------------------------------

class Detector:
    def __init__(self, plan: dict, out_dir: str):
        self.plan = plan
        self.out_dir = out_dir
        self.files = plan.get("files", {})
        for path, spec in self.files.items():
            for w in spec.get("samples", []):
                w["file"] = path
        self.flagged = len({fid for spec in self.files.values() for _, _, fid in spec.get("ranges", [])})
        self.describer = _Describer()
        self.code_watch: dict = {}
        self.path_cache: dict[str, str | None] = {}
        self.reset_process()
        self.saved: dict = {}
        self.pending: tuple[int, int, int] | None = None  # garbage slice and generation
        self.sampling = False
        self.busy = False
        self.installed = False
        self.finished = False
        self.tracing = False
        self.trace_done = False
        self.froze = False

    def reset_process(self) -> None:
        self.pid = os.getpid()
        self.started = time.time()
        self.clock = time.perf_counter()
        self.cycles: dict[str, dict] = {}
        self.ran: set[int] = set()
        self.loops: dict[str, dict] = {}
        self.stats = {"collections_seen": 0, "collections_sampled": 0, "garbage_objects": 0,
                      "cycles_without_tensors": 0, "analysis_seconds": 0.0, "cuda_bytes_freed": 0}
        self.last_flush = 0.0
        self.dirty = True
        self.cuda: bool | None = None
        self.survivors: dict = {}

    # install / restore
    def install(self) -> None:
        self.saved = {"debug": gc.get_debug(), "trace": sys.gettrace(), "thread_trace": threading.gettrace()}
        gc.callbacks.append(self.on_gc)
        if self.files:
            script = sys.argv[0] if getattr(sys, "argv", None) else ""
            if script not in ("", "-c", "-m") and self.watched(script):
                self.start_tracing()
            else:  # trace from the moment a flagged file's code is executed, not through `import torch`
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
        if self.on_gc in gc.callbacks:
            gc.callbacks.remove(self.on_gc)
        if sys.gettrace() == self.on_call:
            sys.settrace(self.saved["trace"])
        if threading.gettrace() == self.on_call:
            threading.settrace(self.saved["thread_trace"])
        gc.set_debug(gc.get_debug() & ~gc.DEBUG_SAVEALL | self.saved["debug"] & gc.DEBUG_SAVEALL)
        if self.froze:
            gc.unfreeze()
            self.froze = False

    def after_fork(self) -> None:
        """A forked child (multiprocessing, DataLoader workers) reports on its own."""
        self.reset_process()
        if self.pending is not None:  # the parent's garbage, copied into this child: not ours to read
            del gc.garbage[self.pending[0]:self.pending[1]]
            self.pending = None
        mp_util = sys.modules.get("multiprocessing.util")
        if mp_util is not None:
            # forked multiprocessing children leave through os._exit, not atexit; their finalizers run
            # first, but the registry is cleared after the fork, so register once it has been
            mp_util.register_after_fork(self, lambda det: mp_util.Finalize(None, det.finish, exitpriority=0))

    # cycles
    def on_gc(self, phase: str, info: dict) -> None:
        if self.busy or not self.installed:
            return
        if phase == "start":
            self.stats["collections_seen"] += 1
            budget = (time.perf_counter() - self.clock) / RATIO + GRACE
            if self.pending is None and self.stats["analysis_seconds"] < budget:
                self.sampling = True
                self.sample_start = len(gc.garbage)
                self.user_debug = gc.get_debug()
                gc.set_debug(self.user_debug | gc.DEBUG_SAVEALL)
        elif self.sampling:
            self.sampling = False
            gc.set_debug(self.user_debug)
            if len(gc.garbage) > self.sample_start:
                self.pending = (self.sample_start, len(gc.garbage), info.get("generation", 2))
                self.defer()

    def defer(self) -> None:
        """Analyse once the collector has returned: a collection cannot run inside its callback."""
        previous = sys.getprofile()
        if previous is not None and not isinstance(previous, types.FunctionType):
            return  # a C profiler (cProfile) cannot be chained: this garbage is read at exit instead
        callback_codes = {getattr(getattr(cb, "__func__", cb), "__code__", None) for cb in gc.callbacks}

        def once(frame, event, arg):
            f = frame
            while f is not None:
                if f.f_code in callback_codes:
                    return None
                f = f.f_back
            sys.setprofile(previous)
            self.analyse_pending()
            if previous is not None:
                return previous(frame, event, arg)
            return None

        sys.setprofile(once)

    def analyse_pending(self) -> None:
        if self.pending is None:
            return
        start, end, generation = self.pending
        self.pending = None
        t0 = time.perf_counter()
        self.busy = True
        try:
            garbage = gc.garbage[start:end]
            del gc.garbage[start:end]  # only what our sampled collection saved: the program may save its own
            self.stats["collections_sampled"] += 1
            self.stats["garbage_objects"] += len(garbage)
            holds_tensors = False
            try:
                with warnings.catch_warnings():  # reading objects must not print the program's deprecations
                    warnings.simplefilter("ignore")
                    holds_tensors = self.read_garbage(garbage)
            except Exception as exc:  # the detector must never break the program it watches
                self.stats["analysis_error"] = f"{type(exc).__name__}: {exc}"
            before = self.cuda_allocated()
            del garbage
            if holds_tensors:  # free device memory now; other garbage waits for the next collection
                gc.collect(min(generation + 1, 2))
            after = self.cuda_allocated()
            if before is not None and after is not None and before > after:
                self.stats["cuda_bytes_freed"] += before - after
        finally:
            self.busy = False
        self.stats["analysis_seconds"] += time.perf_counter() - t0
        self.flush()

    @staticmethod
    def cuda_allocated() -> int | None:
        torch = _torch()
        try:
            if torch is not None and torch.cuda.is_initialized():
                return int(torch.cuda.memory_allocated())
        except Exception:
            pass
        return None

    def read_garbage(self, garbage: list) -> bool:
        """Record the cycles among ``garbage`` that hold tensors; says whether any tensor was there."""
        tensor_type = _tensor_type()
        if tensor_type is None or not _any_tensor(garbage, tensor_type):
            return False  # the common case, made cheap: no tensor among the garbage or what it points at
        ids = {id(o): i for i, o in enumerate(garbage)}
        succ: dict[int, list[int]] = {}
        labels: dict[tuple[int, int], str] = {}
        outside_tensors: dict[int, list] = {}
        for i, obj in enumerate(garbage):
            targets = []
            for target, label in labelled_edges(obj):
                j = ids.get(id(target))
                if j is not None:
                    if (i, j) not in labels:
                        targets.append(j)
                        labels[(i, j)] = label
                elif tensor_type is not None and isinstance(target, tensor_type):
                    outside_tensors.setdefault(i, []).append(target)
            succ[i] = targets
        comps = _strongly_connected(garbage, succ)
        cyclic = [c for c in comps if len(c) > 1 or c[0] in succ.get(c[0], ())]
        owner = {v: n for n, c in enumerate(cyclic) for v in c}
        counted: set = set()
        for n, comp in enumerate(cyclic):
            tally, hanging = self.held_tensors(comp, n, owner, succ, garbage, outside_tensors, tensor_type, counted)
            if tally.count == 0:
                self.stats["cycles_without_tensors"] += 1
                continue
            self.record_cycle(comp, tally, hanging, garbage, succ, labels, tensor_type)
        self.dirty = True
        return True

    @staticmethod
    def held_tensors(comp, n, owner, succ, garbage, outside, tensor_type, counted):
        """Tensors the cycle keeps: reachable from it without passing through another cycle."""
        tally = TensorTally()
        tally.seen = counted  # a tensor two cycles reach is counted once per collection
        hanging: list[tuple[int, int]] = []  # (cycle member, tensor node) for the drawing
        origin = {v: v for v in comp}
        queue = list(comp)
        seen = set(comp)
        while queue:
            v = queue.pop()
            obj = garbage[v]
            if tensor_type is not None and isinstance(obj, tensor_type):
                tally.add(obj)
                if len(hanging) < 4:
                    hanging.append((origin[v], v))
            for t in outside.get(v, ()):
                tally.add(t)
            for w in succ.get(v, ()):
                if w in seen or owner.get(w, n) != n:
                    continue
                seen.add(w)
                origin[w] = origin[v]
                queue.append(w)
        return tally, hanging

    def record_cycle(self, comp, tally, hanging, garbage, succ, labels, tensor_type) -> None:
        members = [garbage[v] for v in comp]
        where = {"functions": [], "methods": [], "classes": [], "frames": [], "class_objects": []}
        self.describer.made_at(members, where)
        attrs = sorted({lab[1:] for (i, j), lab in labels.items() if lab.startswith(".") and i in comp and j in comp}
                       | {lab[2:-2] for (i, j), lab in labels.items()
                          if lab.startswith("['") and i in comp and j in comp})
        key = json.dumps([sorted((f["file"], f["line"], f["col"] or 0) for f in where["functions"]),
                          sorted({c["module"] + "." + c["name"] for c in where["classes"]}),
                          sorted((f["file"], f["first"]) for f in where["frames"]),
                          sorted((m["file"], m["line"]) for m in where["methods"]),
                          sorted((c["file"], c["name"]) for c in where["class_objects"]), attrs])
        entry = self.cycles.get(key)
        if entry is None:
            entry = self.cycles[key] = {
                "count": 0, "bytes": 0, "tensors": 0, "devices": {}, "attrs": attrs,
                **{k: _unique(v)[:50] for k, v in where.items()},
                "size": len(comp), "graph": self.drawing(comp, hanging, garbage, succ, labels, tensor_type),
            }
        entry["count"] += 1
        entry["bytes"] += tally.bytes
        entry["tensors"] += tally.count
        for dev, b in tally.devices.items():
            entry["devices"][dev] = entry["devices"].get(dev, 0) + b

    def drawing(self, comp, hanging, garbage, succ, labels, tensor_type) -> dict:
        """The shortest cycle through the most telling member, plus a few of the tensors it holds."""
        members = set(comp)
        start = min(comp, key=lambda v: self.rank(garbage[v]))
        prev = {start: None}
        queue = [start]
        end = None
        while queue and end is None:
            nxt = []
            for v in queue:
                for w in succ.get(v, ()):
                    if w == start:
                        end = v
                        break
                    if w in members and w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if end is not None:
                    break
            queue = nxt
        path = []
        v = end
        while v is not None:
            path.append(v)
            v = prev[v]
        path.reverse()
        nodes = []
        for v in path:
            kind, text = self.describer.label(garbage[v], tensor_type)
            nodes.append({"id": v, "kind": kind, "label": text})
        edges = [{"src": path[i], "dst": path[(i + 1) % len(path)], "label": labels.get((path[i], path[(i + 1) % len(path)]), "")}
                 for i in range(len(path))]
        on_path = set(path)
        for member, t in hanging:
            if t in on_path:
                continue
            kind, text = self.describer.label(garbage[t], tensor_type)
            nodes.append({"id": t, "kind": kind, "label": text, "bytes": _storage_key_bytes(garbage[t])[1]})
            edges.append({"src": member if member in on_path else path[0], "dst": t, "label": "holds"})
            on_path.add(t)
        return {"nodes": nodes, "edges": edges}

    def rank(self, obj) -> tuple:
        """Start drawings at objects in watched files: instances first, then functions, frames."""
        t = type(obj)
        if t is types.FunctionType:
            return (0 if self.watched(obj.__code__.co_filename) else 3, 1)
        if t is types.FrameType:
            return (0 if self.watched(obj.f_code.co_filename) else 3, 2)
        info = self.describer.cls(t)
        if info is not None:
            return (0 if self.watched(info["file"]) else 2, 0)
        return (4, 0)

    # loops and coverage
    def watched(self, filename: str) -> str | None:
        path = self.path_cache.get(filename, _UNSEEN)
        if path is _UNSEEN:
            real = _real(filename)
            path = self.path_cache[filename] = real if real in self.files else None
        return path

    def on_call(self, frame, event, arg):
        code = frame.f_code
        watch = self.code_watch.get(code, _UNSEEN)
        if watch is _UNSEEN:
            watch = self.code_watch[code] = self.watch_for(code)
        if watch is None:
            return None
        for w in watch.on_entry:
            self.sample(w, frame)
        if any(w.get("settled") for w in watch.on_entry):
            watch.on_entry = [w for w in watch.on_entry if not w.get("settled")]
        return watch.trace if watch.hits or watch.samples else None

    def watch_for(self, code):
        path = self.watched(code.co_filename)
        if path is None:
            return None
        spec = self.files[path]
        lines = {ln for _, _, ln in code.co_lines() if ln is not None}
        hits: dict[int, list[int]] = {}
        for start, end, fid in spec.get("ranges", []):
            if fid in self.ran:
                continue
            for ln in range(start, end + 1):
                if ln in lines:
                    hits.setdefault(ln, []).append(fid)
                    break
        samples: dict[int, list[dict]] = {}
        entry = []
        for w in spec.get("samples", []):
            if w["at"] == "entry":
                if w["line"] == code.co_firstlineno:
                    entry.append(w)
            elif w["line"] in lines:
                samples.setdefault(w["line"], []).append(w)
        if not hits and not samples and not entry:
            return None
        return _CodeWatch(self, code, hits, samples, entry)

    def sample(self, w: dict, frame) -> None:
        state = self.loops.setdefault(w["id"], {"passes": 0, "samples": [], "finding": w["finding"],
                                                 "expr": w["expr"]})
        state["passes"] += 1
        n = state["passes"]
        if len(state["samples"]) >= MAX_SAMPLES or n not in _DUE:
            return
        value = _resolve(w["expr"], frame)
        if value is _UNSEEN:
            return
        t0 = time.perf_counter()
        self.busy = True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                state["samples"].append({"pass": n, **measure(value)})
        except Exception as exc:
            state["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            self.busy = False
        self.stats["analysis_seconds"] += time.perf_counter() - t0
        self.dirty = True
        if _settled([s[w.get("metric", "nodes")] for s in state["samples"]]):
            w["settled"] = True  # growth is shown: stop paying for this loop
            self.files[w["file"]]["samples"].remove(w)
            self.maybe_stop_tracing()
        if time.perf_counter() - self.last_flush > 1.0:
            self.flush()

    def on_audit(self, event: str, args: tuple) -> None:
        if event == "exec" and self.installed and not self.tracing and not self.trace_done and args \
                and isinstance(args[0], types.CodeType) and self.watched(args[0].co_filename):
            self.start_tracing()

    def start_tracing(self) -> None:
        self.tracing = True
        sys.settrace(self.on_call)
        threading.settrace(self.on_call)

    def maybe_stop_tracing(self) -> None:
        """Once every flagged line has run and every watched loop has shown growth, trace no more."""
        if len(self.ran) < self.flagged or any(spec["samples"] for spec in self.files.values()):
            return
        if sys.gettrace() == self.on_call:
            sys.settrace(self.saved["trace"])
        if threading.gettrace() == self.on_call:
            threading.settrace(self.saved["thread_trace"])
        self.code_watch.clear()
        self.tracing, self.trace_done = False, True

    # evidence
    def evidence(self) -> dict:
        torch = _torch()
        if self.cuda is None and torch is not None:
            try:
                self.cuda = bool(torch.cuda.is_available())
            except Exception:
                self.cuda = False
        return {
            "pid": self.pid, "rank": os.environ.get("RANK"), "local_rank": os.environ.get("LOCAL_RANK"),
            "argv": list(getattr(sys, "argv", [])), "python": sys.version.split()[0],
            "torch": getattr(torch, "__version__", None) if torch else None, "cuda_available": self.cuda,
            "finished": self.finished, "seconds": round(time.time() - self.started, 3),
            "ran": sorted(self.ran), "cycles": list(self.cycles.values()), "loops": self.loops,
            "survivors": self.survivors, "stats": self.stats,
        }

    def flush(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        self.last_flush = time.perf_counter()
        path = os.path.join(self.out_dir, f"evidence-{self.pid}.json")
        tmp = path + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self.evidence(), fh, default=str)
            os.replace(tmp, path)
        except OSError:
            pass

    def finish(self) -> None:
        """Last look when the process ends: one more sampled collection, then live survivors."""
        if self.finished or os.getpid() != self.pid or not self.installed:
            return
        self.analyse_pending()
        start = len(gc.garbage)
        debug = gc.get_debug()
        self.busy = True
        gc.set_debug(debug | gc.DEBUG_SAVEALL)
        try:
            gc.collect()
        finally:
            gc.set_debug(debug)
            self.busy = False
        self.pending = (start, len(gc.garbage), 2)
        self.analyse_pending()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.survivors = self.find_survivors()
        self.finished = True
        self.dirty = True
        self.restore()
        self.flush()

    def find_survivors(self) -> dict:
        """Instances of the classes behind never-freed findings (CYC402, CYC404) alive at exit."""
        wanted = self.plan.get("survivors", [])
        if not wanted:
            return {}
        out: dict[str, dict] = {}
        tensor_type = _tensor_type()
        for obj in gc.get_objects():
            info = self.describer.cls(type(obj)) if type(obj) not in (dict, list, tuple, types.FunctionType) else None
            if info is None:
                continue
            for w in wanted:
                if _in_mro(info["mro"], w["class"], w["file"]):
                    entry = out.setdefault(str(w["finding"]), {"count": 0, "bytes": 0, "devices": {}})
                    entry["count"] += 1
                    if tensor_type is not None:
                        m = measure(obj, walk_graph=False)
                        entry["bytes"] += m["bytes"]
                        for dev, b in m["devices"].items():
                            entry["devices"][dev] = entry["devices"].get(dev, 0) + b
        return out


class _CodeWatch:
    """Line tracing for one code object: first execution of flagged lines, and sample points."""

    def __init__(self, det: Detector, code, hits, samples, entry):
        self.det, self.code, self.hits, self.samples, self.on_entry = det, code, hits, samples, entry

    def trace(self, frame, event, arg):
        if event != "line":
            return self.trace
        line = frame.f_lineno
        ids = self.hits.pop(line, None)
        if ids:
            self.det.ran.update(ids)
            self.det.dirty = True
            self.det.maybe_stop_tracing()
        watches = self.samples.get(line)
        if watches:
            for w in watches:
                self.det.sample(w, frame)
            if any(w.get("settled") for w in watches):
                watches[:] = [w for w in watches if not w.get("settled")]
                if not watches:
                    del self.samples[line]
        if not self.hits and not self.samples:
            if not self.on_entry:
                self.det.code_watch[self.code] = None  # nothing left to learn here: stop tracing it
            frame.f_trace = None
            return None
        return self.trace


# Passes 1-8, then every ~1.5x: the cost of sampling stays logarithmic in the length of the loop.
_DUE = set(range(1, 9)) | {int(8 * 1.5 ** k) for k in range(1, 60)}


def _settled(values: list) -> bool:
    """Six samples, each larger than the one before: the accumulator grows, no need to look further."""
    tail = values[-6:]
    return len(tail) == 6 and all(b > a for a, b in zip(tail, tail[1:]))


def _resolve(expr: str, frame):
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
            value = object.__getattribute__(value, "__dict__")[name] if _plain_attr(value, name) else getattr(value, name)
        except Exception:
            return _UNSEEN
    return value


def _plain_attr(value, name: str) -> bool:
    try:
        return name in object.__getattribute__(value, "__dict__")
    except Exception:
        return False


def measure(value, walk_graph: bool = True) -> dict:
    """Length, tensor bytes, and autograd nodes (with their saved tensors) reachable from ``value``."""
    tensor_type = _tensor_type()
    tally = TensorTally()
    length = len(value) if isinstance(value, (list, tuple, dict, set)) else None
    tensors = []
    stack = [(value, 0)]
    visited: set[int] = set()
    while stack and len(visited) < MAX_ITEMS:
        v, depth = stack.pop()
        if id(v) in visited:
            continue
        visited.add(id(v))
        if tensor_type is not None and isinstance(v, tensor_type):
            tally.add(v)
            tensors.append(v)
        elif depth < 6 and not isinstance(v, (str, bytes, int, float)):
            stack.extend((x, depth + 1) for x in _contents(v))
    out = {"length": length, "tensors": tally.count, "bytes": tally.bytes, "devices": tally.devices,
           "nodes": 0, "graph_bytes": 0}
    if walk_graph and tensors:
        out["nodes"], out["graph_bytes"] = _graph_size(tensors)
    return out


def _contents(v) -> list:
    """What a container or a plain instance holds, read without running the program's code."""
    if isinstance(v, dict):
        return list(dict.values(v))
    if isinstance(v, (list, tuple, set, frozenset)):
        return list(v)
    if isinstance(v, _FUNC_TYPES):
        return []
    try:
        d = object.__getattribute__(v, "__dict__")
    except Exception:
        return []
    return list(d.values()) if type(d) is dict else []


def _graph_size(tensors) -> tuple[int, int]:
    """Autograd nodes reachable from the tensors' grad_fn, and the bytes of tensors they saved."""
    saved = TensorTally()
    tensor_type = _tensor_type()
    seen: set[int] = set()
    stack = [t.grad_fn for t in tensors if getattr(t, "grad_fn", None) is not None]
    attr_names: dict[type, list[str]] = {}
    while stack and len(seen) < MAX_NODES:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names = attr_names.get(type(node))
        if names is None:
            names = attr_names[type(node)] = [a for a in dir(node) if a.startswith("_saved_")]
        for a in names:
            try:
                v = getattr(node, a)
            except Exception:  # freed by a backward pass already
                continue
            if tensor_type is not None and isinstance(v, tensor_type):
                saved.add(v)
        stack.extend(fn for fn, _ in getattr(node, "next_functions", ()) if fn is not None)
    return len(seen), saved.bytes


def _in_mro(mro: list, name: str, file: str) -> bool:
    return any(k == name and f == file for k, f in mro)


def _unique(items: list) -> list:
    out, keys = [], set()
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key not in keys:
            keys.add(key)
            out.append(item)
    return out


def start_from_environment() -> Detector | None:
    out_dir = os.environ.get(ENV_DIR)
    plan_path = os.environ.get(ENV_PLAN)
    if not out_dir or not plan_path:
        return None
    try:
        with open(plan_path, encoding="utf-8") as fh:
            plan = json.load(fh)
    except (OSError, ValueError):
        return None
    det = Detector(plan, out_dir)
    det.install()
    det.flush()
    return det
