"""CUDA memory history: the stack that allocated each kept tensor (the Memory Snapshot's feature).

Recording starts once the program has initialised CUDA itself (the detector never does), with
``torch.cuda.memory._record_memory_history`` keeping a Python stack for each live allocation; the
snapshot taken before a cycle is freed names the stack of each of its CUDA storages.
"""
from __future__ import annotations

import os

from .tensors import torch_module

MAX_FRAMES = 8
_state = {"recording": False, "tried": False}


def _cuda():
    torch = torch_module()
    try:
        return torch.cuda if torch is not None and torch.cuda.is_initialized() else None
    except Exception:
        return None


def allocated() -> int | None:
    cuda = _cuda()
    try:
        return int(cuda.memory_allocated()) if cuda is not None else None
    except Exception:
        return None


def maybe_start() -> None:
    """Start recording the first time CUDA is found initialised (once per process)."""
    if _state["tried"]:
        return
    cuda = _cuda()
    if cuda is None:
        return
    _state["tried"] = True
    try:
        cuda.memory._record_memory_history(enabled="state", context="state", stacks="python")
        _state["recording"] = True
    except Exception:
        _state["recording"] = False


def recording() -> bool:
    return _state["recording"]


def forget() -> None:
    """In a forked child: CUDA cannot be used there, and the parent's recording is not ours."""
    _state.update(recording=False, tried=True)


def snapshot() -> dict | None:
    cuda = _cuda()
    try:
        return cuda.memory._snapshot() if cuda is not None and _state["recording"] else None
    except Exception:
        return None


def stop() -> None:
    cuda = _cuda()
    if cuda is not None and _state["recording"]:
        try:
            cuda.memory._record_memory_history(enabled=None)
        except Exception:
            pass
    _state["recording"] = False


def allocation_stacks(snap: dict, pointers: list[int]) -> dict[int, list[dict]]:
    """The allocation stack of each pointer that falls inside a live block of the snapshot.

    Frames are kept innermost first, without torch's own files, at most MAX_FRAMES of them.
    """
    wanted = sorted(set(pointers))
    out: dict[int, list[dict]] = {}
    torch_dir = _package_dir()
    for segment in snap.get("segments", []):
        address = segment.get("address", 0)
        for block in segment.get("blocks", []):
            start = block.get("address", address)
            size = block.get("size", 0)
            address = start + size  # blocks without an address follow each other in the segment
            if not str(block.get("state", "")).startswith("active"):
                continue
            for ptr in wanted:
                if start <= ptr < start + size and ptr not in out:
                    out[ptr] = [{"file": f.get("filename", "?"), "line": f.get("line", 0), "name": f.get("name", "?")}
                                for f in block.get("frames", [])
                                if not (torch_dir and str(f.get("filename", "")).startswith(torch_dir))][:MAX_FRAMES]
    return out


def attach_stacks(tensors: list[dict], pointers: list[int], snap: dict | None) -> None:
    if not snap:
        return
    stacks = allocation_stacks(snap, pointers)
    for t, ptr in zip(tensors, pointers):
        if ptr in stacks:
            t["stack"] = stacks[ptr]


def _package_dir() -> str:
    torch = torch_module()
    path = getattr(torch, "__file__", None) if torch is not None else None
    return os.path.dirname(path) + os.sep if path else ""
