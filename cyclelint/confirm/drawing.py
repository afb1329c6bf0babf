"""The drawing a finding shows: its own ring of the recorded cycle, edge source lines, kept tensors."""
from __future__ import annotations

import ast
import os
from functools import lru_cache

from ..vocabulary import STORE_METHODS
from .child.watchplan import CycleWatch


def ring_for(graph: dict, spec: CycleWatch | None) -> list[dict]:
    """The ring that shows what the finding describes: its callable, its method or its attribute."""
    rings = graph.get("rings", [])
    if not rings:
        return []
    if spec is None:
        return rings[0]
    nodes = {n["id"]: n for n in graph.get("nodes", [])}

    def score(ring: list[dict]) -> int:
        hit = 0
        for e in ring:
            node = nodes.get(e["src"], {})
            at = node.get("at")
            if node.get("kind") == "function" and at and at[0] == spec.file \
                    and any(at[1] == s.line for s in spec.callables):
                hit += 4
            if node.get("kind") == "method" and any(node["label"].endswith("." + m) for m in spec.methods):
                hit += 2
            name = _attr_of(e["label"])
            if name and name in spec.attrs:
                hit += 2
        return hit

    return max(rings, key=score)


def picture(graph: dict, spec: CycleWatch | None) -> dict:
    """Plain data for one finding: nodes on its ring (and the holders of tensors), edges, tensors."""
    ring = ring_for(graph, spec)
    tensors = graph.get("tensors", [])
    wanted = {e["src"] for e in ring} | {t["holder"] for t in tensors}
    nodes = [n for n in graph.get("nodes", []) if n["id"] in wanted]
    by_id = {n["id"]: n for n in nodes}
    edges = [dict(e, source=edge_source(e, by_id.get(e["src"], {}))) for e in ring]
    return {"nodes": nodes, "edges": edges, "tensors": tensors}


def describe_ring(pic: dict) -> str:
    nodes = {n["id"]: n for n in pic.get("nodes", [])}
    ring = pic.get("edges", [])
    if not ring:
        return "a cycle"
    parts = [nodes[ring[0]["src"]]["label"]]
    for e in ring:
        parts.append(f"-{e['label'] or 'ref'}->")
        parts.append(nodes.get(e["dst"], {"label": "?"})["label"])
    text = " ".join(parts)
    return text if len(text) < 240 else text[:239] + "…"


def edge_source(edge: dict, node: dict) -> str | None:
    """``file:line`` of the code that made the edge, where the source says: a store of the attribute
    in the holder's class (else anywhere in its file), or the closure's own definition."""
    label = edge.get("label", "")
    if label.startswith("closure ") and node.get("at"):
        path, line = node["at"]
        return f"{os.path.basename(path)}:{line}"
    name = _attr_of(label)
    cls = node.get("class")
    if not name or not cls:
        return None
    path, qualname = cls
    stores = _attribute_stores(path)
    own = [line for line, owner in stores.get(name, ()) if owner == qualname]
    lines = own or [line for line, _ in stores.get(name, ())]
    return f"{os.path.basename(path)}:{lines[0]}" if lines else None


def _attr_of(label: str) -> str | None:
    if label.startswith("."):
        return label[1:]
    if label.startswith("['") and label.endswith("']"):
        return label[2:-2]
    return None


@lru_cache(maxsize=64)
def _attribute_stores(path: str) -> dict[str, list[tuple[int, str]]]:
    """attribute name -> [(line, qualname of the enclosing class or '')] of every ``x.name = ...``
    and ``x.name[...] = ...`` / ``x.name.append(...)`` in the file."""
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return {}
    out: dict[str, list[tuple[int, str]]] = {}

    def visit(node: ast.AST, owner: list[str], in_class: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, owner + [child.name], ".".join(owner + [child.name]))
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, owner + [getattr(child, "name", "<lambda>"), "<locals>"], in_class)
                continue
            for name in _stored_attrs(child):
                out.setdefault(name, []).append((child.lineno, in_class))
            visit(child, owner, in_class)

    visit(tree, [], "")
    return out


def _stored_attrs(node: ast.AST) -> list[str]:
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STORE_METHODS:
        targets = [node.func.value]
    names = []
    stack = targets
    while stack:
        t = stack.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            stack.extend(t.elts)
        elif isinstance(t, ast.Subscript):
            stack.append(t.value)
        elif isinstance(t, ast.Attribute):
            names.append(t.attr)
    return names
