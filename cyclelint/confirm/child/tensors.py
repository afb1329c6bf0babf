"""Measuring tensors without importing torch: storages, bytes per device, autograd graphs.

torch is only looked up in ``sys.modules``; a process that never imported it has no tensors.
"""
from __future__ import annotations

import sys
import types

MAX_NODES = 200_000  # autograd nodes walked per sample
MAX_ITEMS = 20_000  # container items walked per sample
OPAQUE = (types.FunctionType, types.MethodType, types.CellType, types.FrameType, types.TracebackType,
          types.CodeType, types.ModuleType, type)


def torch_module():
    return sys.modules.get("torch")


def tensor_type():
    torch = torch_module()
    return getattr(torch, "Tensor", None) if torch else None


def storage_key_bytes(t) -> tuple[tuple, int]:
    """A key naming the tensor's storage (two views of one storage share it) and the storage's size."""
    try:
        storage = t.untyped_storage()
        return (str(t.device), storage.data_ptr(), id(storage) if storage.data_ptr() == 0 else 0), storage.nbytes()
    except Exception:  # sparse, nested, meta or fake tensors have no plain storage
        try:
            return ("id", id(t)), t.numel() * t.element_size()
        except Exception:
            return ("id", id(t)), 0


def describe(t) -> dict:
    """Shape, dtype, device and storage bytes of one tensor, as plain data."""
    try:
        return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "device": str(t.device),
                "bytes": storage_key_bytes(t)[1]}
    except Exception:
        return {"shape": [], "dtype": "?", "device": "?", "bytes": 0}


class TensorTally:
    """Bytes of distinct storages, per device."""

    def __init__(self):
        self.seen: set = set()
        self.count = 0
        self.bytes = 0
        self.devices: dict[str, int] = {}

    def add(self, t) -> bool:
        """Count ``t``; says whether its storage was new to the tally."""
        key, nbytes = storage_key_bytes(t)
        self.count += 1
        if key in self.seen:
            return False
        self.seen.add(key)
        self.bytes += nbytes
        dev = key[0] if key[0] != "id" else "unknown"
        self.devices[dev] = self.devices.get(dev, 0) + nbytes
        return True


class StorageWatch:
    """Weak references to storages: after a collection, which of them it actually freed.

    A tensor referenced from somewhere else (a global, a view, a saved tensor of a live graph)
    keeps its storage, so bytes are only ever counted for storages that died.
    """

    def __init__(self):
        self.refs: dict[tuple, tuple[object, int]] = {}  # storage key -> (weak ref, bytes)

    def watch(self, t) -> tuple | None:
        key, nbytes = storage_key_bytes(t)
        if key[0] == "id":
            return None
        if key not in self.refs:
            try:
                self.refs[key] = (t.untyped_storage()._weak_ref(), nbytes)
            except Exception:
                return None
        return key

    def freed(self) -> set[tuple]:
        """Keys of the storages that no longer exist; releases every weak reference."""
        storage = getattr(torch_module(), "UntypedStorage", None)
        out = set()
        for key, (ref, _) in self.refs.items():
            try:
                if storage._expired(ref):
                    out.add(key)
            finally:
                storage._free_weak_ref(ref)
        self.refs = {k: (None, b) for k, (_, b) in self.refs.items()}
        return out

    def nbytes(self, key: tuple) -> int:
        return self.refs[key][1]


def measure(value, walk_graph: bool = True) -> dict:
    """Length, tensors held, and the autograd graphs they keep (nodes and saved-tensor bytes).

    ``bytes`` counts each storage once, whether it is held directly or saved by a kept graph;
    parameters (leaves that require grad) saved by the graph are alive anyway and are left out.
    """
    ttype = tensor_type()
    held = TensorTally()
    length = len(value) if isinstance(value, (list, tuple, dict, set)) else None
    tensors = []
    stack = [(value, 0)]
    visited: set[int] = set()
    while stack and len(visited) < MAX_ITEMS:
        v, depth = stack.pop()
        if id(v) in visited:
            continue
        visited.add(id(v))
        if ttype is not None and isinstance(v, ttype):
            held.add(v)
            tensors.append(v)
        elif depth < 6 and not isinstance(v, (str, bytes, int, float)):
            stack.extend((x, depth + 1) for x in contents(v))
    out = {"length": length, "tensors": held.count, "held_bytes": held.bytes, "devices": dict(held.devices),
           "nodes": 0, "graph_bytes": 0}
    if walk_graph and tensors:
        nodes, saved = graph_size(tensors, held)
        out["nodes"], out["graph_bytes"] = nodes, saved.bytes
        for dev, b in saved.devices.items():
            out["devices"][dev] = out["devices"].get(dev, 0) + b
    out["bytes"] = out["held_bytes"] + out["graph_bytes"]
    return out


def contents(v) -> list:
    """What a container or a plain instance holds, read without running the program's code."""
    if isinstance(v, dict):
        return list(dict.values(v))
    if isinstance(v, (list, tuple, set, frozenset)):
        return list(v)
    if isinstance(v, OPAQUE):
        return []
    try:
        d = object.__getattribute__(v, "__dict__")
    except Exception:
        return []
    return list(d.values()) if type(d) is dict else []


def graph_size(tensors, already: TensorTally) -> tuple[int, TensorTally]:
    """Autograd nodes reachable from the tensors' grad_fn, and the tensors they saved (not in ``already``)."""
    saved = TensorTally()
    saved.seen = set(already.seen)
    ttype = tensor_type()
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
            except Exception:  # released by a backward pass already
                continue
            for t in v if isinstance(v, (list, tuple)) else (v,):
                if ttype is not None and isinstance(t, ttype) and not (t.is_leaf and t.requires_grad):
                    saved.add(t)
        stack.extend(fn for fn, _ in getattr(node, "next_functions", ()) if fn is not None)
    return len(seen), saved
