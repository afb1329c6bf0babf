"""The object graph of collected garbage: labelled edges, cycles, where each was made, rings to draw."""
from __future__ import annotations

import functools
import gc
import os
import sys
import types
import weakref
from collections import deque

from .tensors import OPAQUE

MAX_RINGS = 8  # drawings kept per cycle: one through each telling member or edge
_MISSING = object()
_REAL: dict[str, str] = {}


def real(filename: str) -> str:
    """Real path of a code object's file name, cached (relative names are taken from the start-up cwd)."""
    path = _REAL.get(filename)
    if path is None:
        path = _REAL[filename] = os.path.realpath(filename) if filename and not filename.startswith("<") else filename
    return path


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


def strongly_connected(count: int, succ: dict[int, list[int]]) -> list[list[int]]:
    """Tarjan's algorithm over the indices 0..count-1, iterative (cycles can be deep)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(count):
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


def shortest_path(succ: dict[int, list[int]], members: set[int], start: int, goal: int) -> list[int] | None:
    """Breadth-first path start..goal inside ``members`` (both ends included)."""
    prev = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        if v == goal:
            path = []
            while v is not None:
                path.append(v)
                v = prev[v]
            return path[::-1]
        for w in succ.get(v, ()):
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return None


def ring_through(succ: dict[int, list[int]], members: set[int], src: int, dst: int) -> list[int] | None:
    """The shortest cycle that takes the edge src -> dst: src, dst, ..., back to src."""
    if src == dst:
        return [src]
    back = shortest_path(succ, members, dst, src)
    return [src] + back[:-1] if back else None


def class_file(k: type) -> str:
    """The file a class was defined in: its methods' code says so even when __main__ was replaced."""
    for v in list(vars(k).values()):
        func = getattr(v, "__func__", None) or getattr(v, "fget", None) or v
        code = getattr(func, "__code__", None)
        if isinstance(code, types.CodeType):
            return real(code.co_filename)
    mod = sys.modules.get(k.__module__)
    return real(getattr(mod, "__file__", None) or "")


def code_span(code) -> tuple[int, int]:
    lines = [ln for _, _, ln in code.co_lines() if ln is not None]
    return (min(lines, default=code.co_firstlineno), max(lines, default=code.co_firstlineno))


def code_col(code) -> int | None:
    cols = [c for line, _, c, end in code.co_positions() if c is not None and end and line == code.co_firstlineno]
    return min(cols) if cols else None


def qualname(code) -> str:
    return getattr(code, "co_qualname", code.co_name)


class Describer:
    """Turns garbage objects into plain data: where each was made, and a label for drawing."""

    def __init__(self):
        # weak: a class read here must still die with its cycle (CYC405)
        self.class_cache: weakref.WeakKeyDictionary[type, dict | None] = weakref.WeakKeyDictionary()

    def cls(self, t: type) -> dict | None:
        info = self.class_cache.get(t, _MISSING)
        if info is not _MISSING:
            return info
        info = None
        if t.__module__ != "builtins" and not issubclass(t, OPAQUE):
            mro = [[k.__qualname__, class_file(k)] for k in t.__mro__]
            forward_cls = getattr(t, "_forward_cls", None)  # the ctx of a custom autograd.Function's call
            if isinstance(forward_cls, type):
                mro += [[k.__qualname__, class_file(k)] for k in forward_cls.__mro__]
            info = {"name": t.__qualname__, "module": t.__module__, "file": mro[0][1], "mro": mro}
        try:
            self.class_cache[t] = info
        except TypeError:  # a type that takes no weak reference: not cached
            pass
        return info

    def node(self, obj, ttype) -> dict:
        """kind, label and (for code and instances) the place it comes from, of one drawn object."""
        t = type(obj)
        if ttype is not None and isinstance(obj, ttype):
            try:
                return {"kind": "tensor",
                        "label": f"Tensor {tuple(obj.shape)} {str(obj.dtype).replace('torch.', '')} {obj.device}"}
            except Exception:
                return {"kind": "tensor", "label": "Tensor"}
        if t is types.FunctionType:
            c = obj.__code__
            where = f"{os.path.basename(c.co_filename)}:{c.co_firstlineno}"
            return {"kind": "function", "label": f"{qualname(c)}() {where}",
                    "at": [real(c.co_filename), c.co_firstlineno]}
        if t is types.MethodType:
            return {"kind": "method", "label": f"bound {getattr(obj.__func__, '__qualname__', '?')}"}
        if t is types.FrameType:
            c = obj.f_code
            return {"kind": "frame", "label": f"frame {qualname(c)} {os.path.basename(c.co_filename)}:{obj.f_lineno}",
                    "at": [real(c.co_filename), obj.f_lineno]}
        if t is types.TracebackType:
            return {"kind": "traceback", "label": f"traceback line {obj.tb_lineno}"}
        if t in (dict, list, tuple, set, types.CellType):
            return {"kind": "container", "label": f"{t.__name__} ({len(obj)})" if t is not types.CellType else "cell"}
        info = self.cls(t)
        node = {"kind": "object", "label": t.__qualname__}
        if info is not None:
            node["class"] = [info["file"], info["name"]]
        return node

    def made_at(self, members: list, into: dict) -> None:
        """Where the cycle was made: code of functions, classes of instances, frames."""
        for obj in members:
            t = type(obj)
            if isinstance(obj, functools.partial):  # a partial stands for what it calls
                obj, t = obj.func, type(obj.func)
            if t is types.FunctionType:
                c = obj.__code__
                into["functions"].append({"file": real(c.co_filename), "line": c.co_firstlineno, "col": code_col(c),
                                          "name": qualname(c)})
            elif t is types.MethodType:
                func = obj.__func__
                c = getattr(func, "__code__", None)
                owner = self.cls(type(obj.__self__))
                into["methods"].append({"name": getattr(func, "__name__", "?"),
                                        "file": real(c.co_filename) if c else "", "line": c.co_firstlineno if c else 0,
                                        "self_mro": owner["mro"] if owner else []})
            elif isinstance(obj, type):
                into["class_objects"].append({"name": obj.__qualname__, "file": class_file(obj)})
            elif t is types.FrameType:
                c = obj.f_code
                first, last = code_span(c)
                into["frames"].append({"file": real(c.co_filename), "first": first, "last": last, "line": obj.f_lineno,
                                       "name": qualname(c)})
            else:
                info = self.cls(t)
                if info is not None:
                    into["classes"].append(info)
