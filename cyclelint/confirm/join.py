"""Joins the detector's evidence (one file per process) with the static findings."""
from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..findings import Finding, human_bytes
from .plan import CycleSpec, Plan, real

CONFIRMED, NOT_OBSERVED, NOT_RUN = "confirmed", "not-observed", "not-run"


@dataclass
class Outcome:
    findings: list[Finding]  # the static findings, each with a confirmation, then the CYC900 ones
    processes: int = 0
    cuda: bool = False
    outside: list[dict] = field(default_factory=list)  # cycles with tensors made outside the linted paths
    problems: list[str] = field(default_factory=list)


def _in_mro(mro: list, name: str | None, file: str) -> bool:
    return name is not None and any(k == name and f == file for k, f in mro)


def cycle_matches(spec: CycleSpec, cyc: dict) -> bool:
    """Does a recorded cycle show what the finding at ``spec`` describes?"""
    file = spec.file
    classes = cyc.get("classes", [])
    functions = [f for f in cyc.get("functions", []) if real(f["file"]) == file]
    methods = cyc.get("methods", [])
    frames = [f for f in cyc.get("frames", []) if real(f["file"]) == file]

    owner = spec.cls is not None and any(_in_mro(c["mro"], spec.cls, file) for c in classes)
    anchored = owner or bool(functions or frames) or any(real(c["file"]) == file for c in classes if c["file"])
    attr_hit = bool(set(spec.attrs) & set(cyc.get("attrs", [])))

    def callable_hit() -> bool:
        return any(fn["line"] == line and (lo < 0 or fn["col"] is not None and lo <= fn["col"] < hi)
                   for line, lo, hi in spec.callables for fn in functions)

    def method_hit() -> bool:
        if spec.cls is None:  # a method of some other object: the stored attribute must be on the cycle too
            return attr_hit and any(m["name"] in spec.methods for m in methods)
        return any(m["name"] in spec.methods and _in_mro(m["self_mro"], spec.cls, file) for m in methods)

    code = spec.code
    if code in ("CYC101", "CYC102", "CYC403"):
        return callable_hit()
    if code in ("CYC103", "CYC104"):
        return method_hit() or callable_hit()
    if code == "CYC201":
        return attr_hit and anchored
    if code in ("CYC202", "CYC203"):
        if attr_hit and (owner or spec.cls is None and anchored):
            return True
        names = {c["name"].rsplit(".", 1)[-1] for c in classes}
        return code == "CYC202" and owner and any(c in names for c in spec.ctors)
    if code == "CYC405":
        return any(c["name"] == spec.cls and c["file"] == file for c in cyc.get("class_objects", []))
    if code == "CYC401":
        return any(f["first"] <= spec.line <= f["last"] for f in frames)
    return False


def loop_growth(code: str, samples: list[dict]) -> bool:
    """Growth across passes: autograd nodes for graph accumulation, tensor bytes for CYC304."""
    if len(samples) < 3:
        return False
    key = "bytes" if code == "CYC304" else "nodes"
    values = [s[key] for s in samples]
    rises = sum(b >= a for a, b in zip(values, values[1:]))
    return values[-1] > values[0] and rises >= 0.8 * (len(values) - 1)


def _device(devices: dict[str, int], cuda: bool) -> str:
    if not devices:
        return "cuda" if cuda else "cpu"
    return max(devices.items(), key=lambda kv: kv[1])[0]


def _merge(into: dict, devices: dict) -> None:
    for dev, b in devices.items():
        into[dev] = into.get(dev, 0) + b


def describe_cycle(graph: dict) -> str:
    nodes = {n["id"]: n for n in graph.get("nodes", [])}
    ring = [e for e in graph.get("edges", []) if e["label"] != "holds"]
    if not ring:
        return "a cycle"
    parts = [nodes[ring[0]["src"]]["label"]]
    for e in ring:
        parts.append(f"-{e['label'] or 'ref'}->")
        parts.append(nodes[e["dst"]]["label"])
    text = " ".join(parts)
    return text if len(text) < 240 else text[:239] + "…"


def join(findings: Sequence[Finding], plan: Plan, evidence: list[dict], roots: Sequence[str]) -> Outcome:
    out = Outcome(findings=list(findings), processes=len(evidence))
    out.cuda = any(e.get("cuda_available") for e in evidence)
    ran = {i for e in evidence for i in e.get("ran", [])}
    cycles = [dict(c, pid=e["pid"]) for e in evidence for c in e.get("cycles", [])]
    matched: set[int] = set()
    confirmations: dict[int, dict] = {}
    for spec in plan.cycles:
        hits = [n for n, c in enumerate(cycles) if cycle_matches(spec, c)]
        if not hits:
            continue
        matched.update(hits)
        devices: dict[str, int] = {}
        for n in hits:
            _merge(devices, cycles[n]["devices"])
        first = cycles[hits[0]]
        count = sum(cycles[n]["count"] for n in hits)
        confirmations[spec.finding] = {
            "status": CONFIRMED, "device": _device(devices, out.cuda), "bytes": sum(devices.values()), "count": count,
            "evidence": f"{count} cycle{'s' * (count != 1)} freed by the collector held "
                        f"{human_bytes(sum(devices.values()))} of tensors: {describe_cycle(first['graph'])}",
            "cycle": first["graph"], "pids": sorted({cycles[n]["pid"] for n in hits}),
        }
    _judge_loops(findings, plan, evidence, confirmations)
    _judge_survivors(evidence, plan, confirmations, out.cuda)
    for i, f in enumerate(out.findings):
        if i in confirmations:
            f.confirmation = confirmations[i]
        else:
            status = NOT_OBSERVED if i in ran else NOT_RUN
            f.confirmation = {"status": status, "device": "cuda" if out.cuda else "cpu", "bytes": 0, "count": 0,
                              "evidence": "the command ran this code; no cycle or growth was seen" if i in ran
                              else "the command never ran this code"}
    unexplained = [c for n, c in enumerate(cycles) if n not in matched]
    out.findings += runtime_only(unexplained, roots, out)
    return out


def _judge_loops(findings, plan: Plan, evidence, confirmations) -> None:
    watches = {w["id"]: w for spec in plan.files.values() for w in spec["samples"]}
    for e in evidence:
        for wid, state in e.get("loops", {}).items():
            w = watches.get(wid)
            if w is None or w["finding"] in confirmations:
                continue
            code = findings[w["finding"]].code
            samples = state["samples"]
            if not loop_growth(code, samples):
                continue
            first, last = samples[0], samples[-1]
            held = last["bytes"] + last["graph_bytes"]
            where = "calls of the method" if w["at"] == "entry" else f"passes of the loop at line {w['line']}"
            length = f", {first['length']} -> {last['length']} items" if last["length"] is not None else ""
            confirmations[w["finding"]] = {
                "status": CONFIRMED, "device": _device(last["devices"], bool(e.get("cuda_available"))),
                "bytes": held, "count": state["passes"],
                "evidence": f"{w['expr']} grew over {state['passes']} {where} (pid {e['pid']}): "
                            f"{first['nodes']} -> {last['nodes']} autograd nodes{length}, "
                            f"{human_bytes(first['bytes'] + first['graph_bytes'])} -> {human_bytes(held)} "
                            "of tensors held",
                "samples": [{k: s[k] for k in ("pass", "length", "nodes", "bytes", "graph_bytes")} for s in samples],
            }


def _judge_survivors(evidence, plan: Plan, confirmations, cuda: bool) -> None:
    for spec in plan.survivors:
        count, devices = 0, {}
        for e in evidence:
            seen = e.get("survivors", {}).get(str(spec["finding"]))
            if seen:
                count += seen["count"]
                _merge(devices, seen["devices"])
        if count and devices:
            nbytes = sum(devices.values())
            confirmations[spec["finding"]] = {
                "status": CONFIRMED, "device": _device(devices, cuda), "bytes": nbytes, "count": count,
                "evidence": f"{count} {spec['class']} instance{'s' * (count != 1)} still alive at exit after a full "
                            f"collection, holding {human_bytes(nbytes)} of tensors",
            }


def runtime_only(cycles: list[dict], roots: Sequence[str], out: Outcome) -> list[Finding]:
    """CYC900 at the first place inside the linted paths where an unexplained cycle was made."""
    real_roots = [real(r) for r in roots]
    by_place: dict[tuple[str, int], dict] = {}
    for cyc in cycles:
        place = _made_at(cyc, real_roots)
        if place is None:
            out.outside.append(cyc)
            continue
        entry = by_place.setdefault(place, {"count": 0, "devices": {}, "graph": cyc["graph"]})
        entry["count"] += cyc["count"]
        _merge(entry["devices"], cyc["devices"])
    found = []
    for (path, line), entry in sorted(by_place.items()):
        nbytes = sum(entry["devices"].values())
        device = _device(entry["devices"], out.cuda)
        rel = os.path.relpath(path)
        ring = describe_cycle(entry["graph"])
        found.append(Finding(
            path if rel.startswith("..") else rel, line, 1, line, 1, "CYC900",
            f"runtime-only cycle: {entry['count']} cycle{'s' * (entry['count'] != 1)} made here held "
            f"{human_bytes(nbytes)} of {device} tensors until the collector freed them ({ring}); "
            "no static rule saw how",
            confirmation={"status": CONFIRMED, "device": device, "bytes": nbytes, "count": entry["count"],
                          "evidence": ring, "cycle": entry["graph"]},
        ))
    return found


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _made_at(cyc: dict, roots: list[str]) -> tuple[str, int] | None:
    for fn in cyc.get("functions", []):
        if _under(real(fn["file"]), roots):
            return real(fn["file"]), fn["line"]
    for c in cyc.get("classes", []):
        if c["file"] and _under(real(c["file"]), roots):
            line = class_line(real(c["file"]), c["name"])
            if line:
                return real(c["file"]), line
    for fr in cyc.get("frames", []):
        if _under(real(fr["file"]), roots):
            return real(fr["file"]), fr["line"]
    return None


def class_line(path: str, qualname: str) -> int | None:
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == parts[-1]:
            return node.lineno
    return None
