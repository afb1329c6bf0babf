"""Cycles: read what sampled collections free, count each cycle once, free it at once.

A sampled collection runs with ``gc.DEBUG_SAVEALL``: what it would free lands in ``gc.garbage``.
At the collection's end the detector moves those objects out of ``gc.garbage`` (the program's own
list stays as it would be). Once the collector has returned it analyses them and frees them with
one plain collection of the generation they were moved to (tracked, since later collections age
them); when they reach a tensor, a full collection with SAVEALL first saves every other dead object
for reading, and the freeing collection is a full one, so that no cycle that died in an older
generation (or with what was read) is freed unseen.
Bytes are those of storages that collection actually freed, each given to one cycle only.
"""
from __future__ import annotations

import gc
import json
import sys
import time
import types

from . import cuda_history
from .objgraph import MAX_RINGS, Describer, labelled_edges, ring_through, strongly_connected
from .quiet import quiet
from .tensors import StorageWatch, describe, tensor_type, torch_module

RATIO = 20  # the detector's own work may take 1/RATIO of the run's CPU time...
GRACE = 2.0  # ...plus this many CPU seconds, so that short programs are watched in full
DRAWN_TENSORS = 6  # tensors hung off a drawing, largest first


class CycleWatcher:
    def __init__(self, detector):
        self.det = detector
        self.describer = Describer()
        self.cycles: dict[str, dict] = {}
        self.pending: list = []  # objects our sampled collections saved, not yet analysed
        self.landing = 0  # the generation they sit in now
        self.sampling = False
        self.deferred = False
        self.program_saves = False  # the program set DEBUG_SAVEALL itself: gc.garbage is its own
        self.stats = {"collections_seen": 0, "collections_sampled": 0, "garbage_objects": 0,
                      "cycles_without_tensors": 0, "analysis_seconds": 0.0, "cuda_bytes_freed": 0}

    def reset(self) -> None:
        """In a forked child: the parent's findings and pending garbage are not ours."""
        self.pending = []
        self.deferred = False
        self.cycles = {}
        self.stats = dict.fromkeys(self.stats, 0)
        self.stats["analysis_seconds"] = 0.0

    # the collector's callbacks
    def on_gc(self, phase: str, info: dict) -> None:
        det = self.det
        if det.busy or not det.installed:
            return
        generation = info.get("generation", 2)
        if phase == "start":
            self.stats["collections_seen"] += 1
            det.on_collection()
            if self.pending and generation >= self.landing:
                self.landing = min(generation + 1, 2)  # what we hold ages with the generation collected
            budget = (time.process_time() - det.cpu_clock) / RATIO + GRACE
            if self.stats["analysis_seconds"] < budget and _tensors_possible():
                self.sampling = True
                self.garbage_start = len(gc.garbage)
                self.user_debug = gc.get_debug()
                self.program_saves = bool(self.user_debug & gc.DEBUG_SAVEALL)
                gc.set_debug(self.user_debug | gc.DEBUG_SAVEALL)
        elif self.sampling:
            self.sampling = False
            gc.set_debug(self.user_debug)
            new = gc.garbage[self.garbage_start:]
            if not new:
                return
            if not self.program_saves:
                del gc.garbage[self.garbage_start:]
            self.pending += new
            del new
            self.landing = max(self.landing, min(generation + 1, 2))
            self.defer()

    def defer(self) -> None:
        """Analyse once the collector has returned: a collection cannot run inside its callback."""
        if self.deferred:
            return
        previous = sys.getprofile()
        if previous is not None and not isinstance(previous, types.FunctionType):
            # a C profiler (cProfile) cannot be chained: read now, let the next collection free it
            self.analyse(free=False)
            return
        callback_codes = {getattr(getattr(cb, "__func__", cb), "__code__", None) for cb in gc.callbacks}

        def once(frame, event, arg):
            f = frame
            while f is not None:
                if f.f_code in callback_codes:
                    return None
                f = f.f_back
            sys.setprofile(previous)
            self.deferred = False
            self.analyse()
            if previous is not None:
                return previous(frame, event, arg)
            return None

        self.deferred = True
        self.profile_before = previous
        sys.setprofile(once)

    def cancel_defer(self) -> None:
        if self.deferred:
            self.deferred = False
            sys.setprofile(self.profile_before)

    # analysis
    def analyse(self, free: bool = True) -> None:
        if not self.pending:
            return
        det = self.det
        t0 = time.thread_time()  # this thread's work: torch's worker threads are not ours
        det.busy = True
        enabled = gc.isenabled()
        gc.disable()  # no collection may age what we hold while we read it
        held, self.pending = self.pending, []
        storages = StorageWatch()
        claimed: set = set()  # a storage two cycles reach belongs to the first
        found: list = []
        debug = gc.get_debug()
        ttype = tensor_type()
        # Freeing what we hold takes a plain collection, which would also free, unseen, other dead
        # objects of its generations. When tensors are involved, once what we hold is read it is let
        # go and a full collection with SAVEALL saves it again together with every other dead object
        # (those that only it kept reachable too); what is new is read, until nothing is; then one
        # full plain collection frees exactly what was read.
        thorough = free and not self.program_saves and ttype is not None and _reaches_any(held, ttype)
        try:
            self.stats["collections_sampled"] += 1
            seen: set[int] = set()
            new = held
            while new:
                self.stats["garbage_objects"] += len(new)
                found += self.read_quietly(new, storages, claimed)
                if not thorough:
                    break
                seen.update(map(id, new))
                new = held = None  # what we hold dies now, and whatever only it kept alive
                held = _saved_by_full_collection(debug)
                new = [o for o in held if id(o) not in seen]
            cuda_keys = [k for _, keys, _ in found for k in keys if k[0].startswith("cuda")]
            snap = cuda_history.snapshot() if cuda_keys and cuda_history.recording() else None
            before = cuda_history.allocated()
            new = held = None
            if free and not self.program_saves and (thorough or self.landing < 2):
                # Garbage left unfreed would be saved again by the next sampled collection, so it is freed
                # now, except when that takes a full collection and it reaches no tensor: the next full
                # collection frees it then, as it frees whatever outlived the young ones. (With torch
                # loaded a full collection costs about 0.1 s: one per sampled middle collection made a
                # script's imports half as slow again.)
                gc.set_debug(0)  # our freeing collection prints nothing for DEBUG_COLLECTABLE/STATS
                gc.collect(2 if thorough else self.landing)
            self.landing = 0
            after = cuda_history.allocated()
            if before is not None and after is not None and before > after:
                self.stats["cuda_bytes_freed"] += before - after
            freed = storages.freed() if storages.refs else set()
            for entry, keys, drawn in found:
                self.account(entry, keys, drawn, freed, storages, snap)
        finally:
            gc.set_debug(debug)
            if enabled:
                gc.enable()
            det.busy = False
        self.stats["analysis_seconds"] += time.thread_time() - t0
        det.dirty = True
        if found or time.perf_counter() - det.last_flush > 1.0:
            det.flush()  # evidence on disk as it comes: a killed process keeps what it saw

    def read_quietly(self, garbage: list, storages: StorageWatch, claimed: set) -> list:
        try:
            with quiet():  # reading objects must not print, nor reset, the program's warnings
                return self.read(garbage, storages, claimed)
        except Exception as exc:  # the detector must never break the program it watches
            self.stats["analysis_error"] = f"{type(exc).__name__}: {exc}"
            return []

    def read(self, garbage: list, storages: StorageWatch, claimed: set) -> list:
        """The cycles among ``garbage`` that reach tensors: (entry, storage keys it owns, tensors to draw)."""
        ttype = tensor_type()
        if ttype is None:
            return []
        relevant = _reaching_tensors(garbage, ttype)
        if not relevant:
            return []  # the common case, made cheap: no tensor among the garbage or what it points at
        garbage = [garbage[i] for i in relevant]  # only objects that reach a tensor can be on a cycle that holds one
        ids = {id(o): i for i, o in enumerate(garbage)}
        succ: dict[int, list[int]] = {}
        labels: dict[tuple[int, int], str] = {}
        outside: dict[int, list] = {}  # tensors the garbage points at that sit elsewhere
        for i, obj in enumerate(garbage):
            targets = []
            for target, label in labelled_edges(obj):
                j = ids.get(id(target))
                if j is not None:
                    if (i, j) not in labels:
                        targets.append(j)
                        labels[(i, j)] = label
                elif isinstance(target, ttype):
                    outside.setdefault(i, []).append((target, label))
            succ[i] = targets
        comps = strongly_connected(len(garbage), succ)
        cyclic = [c for c in comps if len(c) > 1 or c[0] in succ.get(c[0], ())]
        owner = {v: n for n, c in enumerate(cyclic) for v in c}
        found = []
        for n, comp in enumerate(cyclic):
            keys, drawn, reaches = self.held(comp, n, owner, succ, garbage, outside, labels, ttype, storages, claimed)
            if not reaches:
                self.stats["cycles_without_tensors"] += 1
                continue
            holders = [d["holder"] for d in sorted(drawn, key=lambda d: -d["bytes"])[:DRAWN_TENSORS]]
            entry = self.entry(comp, garbage, succ, labels, ttype, holders)
            found.append((entry, keys, drawn))
        return found

    @staticmethod
    def held(comp, n, owner, succ, garbage, outside, labels, ttype, storages, claimed):
        """Storages reachable from the cycle without passing through another cycle (each given to the first
        cycle that reaches it), tensors to draw, and whether the cycle reaches any tensor at all."""
        keys: list[tuple] = []
        drawn: list[dict] = []
        origin = {v: v for v in comp}
        via: dict[int, str] = {}
        queue = list(comp)
        seen = set(comp)

        reaches = False

        def take(t, holder: int, label: str) -> None:
            nonlocal reaches
            reaches = True
            key = storages.watch(t)
            if key is None or key in claimed:
                return
            claimed.add(key)
            keys.append(key)
            drawn.append({"holder": holder, "via": label, "key": key, **describe(t)})

        while queue:
            v = queue.pop()
            obj = garbage[v]
            if isinstance(obj, ttype):
                take(obj, origin[v], via.get(v, ""))
            for t, label in outside.get(v, ()):
                take(t, origin[v], label if v == origin[v] else via.get(v, label))
            for w in succ.get(v, ()):
                if w in seen or owner.get(w, n) != n:
                    continue
                seen.add(w)
                origin[w] = origin[v]
                via[w] = via.get(v) or labels.get((v, w), "")
                queue.append(w)
        return keys, drawn, reaches

    def entry(self, comp, garbage, succ, labels, ttype, holders) -> dict:
        members = [garbage[v] for v in comp]
        where = {"functions": [], "methods": [], "classes": [], "frames": [], "class_objects": []}
        self.describer.made_at(members, where)
        inside = set(comp)
        ring_labels = {(i, j): lab for (i, j), lab in labels.items() if i in inside and j in inside}
        attrs = sorted({lab[1:] for lab in ring_labels.values() if lab.startswith(".")}
                       | {lab[2:-2] for lab in ring_labels.values() if lab.startswith("['")})
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
                "size": len(comp), "graph": self.drawing(comp, garbage, succ, ring_labels, ttype, holders),
            }
        return entry

    def account(self, entry: dict, keys: list, drawn: list, freed: set, storages: StorageWatch, snap) -> None:
        """Add one cycle's figures to its entry: only the storages its collection freed."""
        entry["count"] += 1
        for key in keys:
            if key in freed:
                nbytes = storages.nbytes(key)
                entry["bytes"] += nbytes
                entry["tensors"] += 1
                entry["devices"][key[0]] = entry["devices"].get(key[0], 0) + nbytes
        graph = entry["graph"]
        if not graph.get("tensors"):  # drawn from the first cycle of its kind that freed some
            gone = sorted((d for d in drawn if d["key"] in freed), key=lambda d: -d["bytes"])[:DRAWN_TENSORS]
            graph["tensors"] = [{k: v for k, v in d.items() if k != "key"} for d in gone]
            cuda_history.attach_stacks(graph["tensors"], [d["key"][1] for d in gone], snap)

    def drawing(self, comp, garbage, succ, labels, ttype, holders) -> dict:
        """The cycle's members and rings: the shortest cycle through each telling member and edge."""
        members = set(comp)
        det = self.det
        order = sorted(comp, key=lambda v: det.rank(garbage[v]))
        rings: list[list[int]] = []
        wanted = [(v, w) for v in order[:1] for w in succ.get(v, ()) if w in members][:1]
        wanted += [(v, w) for (v, w), lab in labels.items() if lab.startswith((".", "['", "closure"))]
        wanted += [(v, w) for v in order if type(garbage[v]) in (types.FunctionType, types.MethodType)
                   for w in succ.get(v, ()) if w in members]
        for v, w in wanted:
            if len(rings) >= MAX_RINGS:
                break
            ring = ring_through(succ, members, v, w)
            if ring and ring not in rings and not any(_same_ring(ring, r) for r in rings):
                rings.append(ring)
        used = sorted({v for r in rings for v in r} | set(holders))
        nodes = [{"id": v, **self.describer.node(garbage[v], ttype)} for v in used]
        return {"nodes": nodes, "rings": [[{"src": r[i], "dst": r[(i + 1) % len(r)],
                                            "label": labels.get((r[i], r[(i + 1) % len(r)]), "")}
                                           for i in range(len(r))] for r in rings]}


def _same_ring(a: list[int], b: list[int]) -> bool:
    if len(a) != len(b):
        return False
    k = b.index(a[0]) if a[0] in b else -1
    return k >= 0 and b[k:] + b[:k] == a


def _tensors_possible() -> bool:
    """No cycle can hold a tensor before torch is imported, nor one of the program's while torch's own
    import runs: collections then are not worth reading (they are most of a short program's)."""
    torch = torch_module()
    return torch is not None and not getattr(getattr(torch, "__spec__", None), "_initializing", False)


def _saved_by_full_collection(debug: int) -> list:
    """Every dead object, saved by a full collection with DEBUG_SAVEALL and taken out of gc.garbage."""
    start = len(gc.garbage)
    gc.set_debug(debug | gc.DEBUG_SAVEALL)
    try:
        gc.collect(2)
    finally:
        gc.set_debug(debug)
    saved = gc.garbage[start:]
    del gc.garbage[start:]
    return saved


def _reaches_any(garbage: list, ttype: type) -> bool:
    kinds = set(map(type, garbage)) | set(map(type, gc.get_referents(*garbage)))  # at C speed
    return any(issubclass(k, ttype) for k in kinds)


def _reaching_tensors(garbage: list, ttype: type) -> list[int]:
    """Indices of the garbage objects from which a tensor can be reached (through the garbage), in order.

    Plain ``gc.get_referents`` (C, no labels) is enough to decide it; labelled edges are then read for
    these objects only, which keeps the garbage of imports and of tensor-free code cheap.
    """
    if not _reaches_any(garbage, ttype):
        return []
    ids = {id(o): i for i, o in enumerate(garbage)}
    preds: dict[int, list[int]] = {}
    queue = []
    for i, obj in enumerate(garbage):
        holds = isinstance(obj, ttype)
        for r in gc.get_referents(obj):
            j = ids.get(id(r))
            if j is not None:
                preds.setdefault(j, []).append(i)
            elif isinstance(r, ttype):
                holds = True
        if holds:
            queue.append(i)
    seen = set(queue)
    while queue:
        for i in preds.get(queue.pop(), ()):
            if i not in seen:
                seen.add(i)
                queue.append(i)
    return sorted(seen)


def _unique(items: list) -> list:
    out, keys = [], set()
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key not in keys:
            keys.add(key)
            out.append(item)
    return out


__all__ = ["CycleWatcher", "torch_module"]
