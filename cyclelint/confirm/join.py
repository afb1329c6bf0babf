"""Joins the detector's evidence (one file per process) with the static findings."""
from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..findings import Finding, human_bytes
from .child.watchplan import CycleWatch, Plan
from .drawing import describe_ring, picture
from .plan import real

CONFIRMED, NOT_OBSERVED, NOT_RUN = "confirmed", "not-observed", "not-run"


@dataclass
class Outcome:
    findings: list[Finding]  # the static findings, each with a confirmation, then the CYC900 ones
    processes: int = 0
    cuda: bool = False
    outside: list[Finding] = field(default_factory=list)  # the CYC900 ones made outside the linted paths
    problems: list[str] = field(default_factory=list)


def _in_mro(mro: list, name: str | None, file: str) -> bool:
    return name is not None and any(k == name and f == file for k, f in mro)


def cycle_matches(spec: CycleWatch, cyc: dict) -> bool:
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
        return any(fn["line"] == s.line and (s.first_col < 0 or fn["col"] is not None
                                             and s.first_col <= fn["col"] < s.end_col)
                   for s in spec.callables for fn in functions)

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


def loop_growth(metric: str, samples: list[dict]) -> bool:
    """Growth across passes: autograd nodes for graph accumulation, tensor bytes for CYC304."""
    if len(samples) < 3:
        return False
    values = [s[metric] for s in samples]
    rises = sum(b >= a for a, b in zip(values, values[1:]))
    return values[-1] > values[0] and rises >= 0.8 * (len(values) - 1)


def _device(devices: dict[str, int], cuda: bool) -> str:
    if not devices:
        return "cuda" if cuda else "cpu"
    return max(devices.items(), key=lambda kv: kv[1])[0]


def _merge(into: dict, devices: dict) -> None:
    for dev, b in devices.items():
        into[dev] = into.get(dev, 0) + b


def join(findings: Sequence[Finding], plan: Plan, evidence: list[dict], roots: Sequence[str]) -> Outcome:
    out = Outcome(findings=list(findings), processes=len(evidence))
    out.cuda = any(e.get("cuda_available") for e in evidence)
    confirmations: dict[int, dict] = {}
    cycles = [dict(c, pid=e["pid"]) for e in evidence for c in e.get("cycles", [])]
    matched = _judge_cycles(plan, cycles, findings, out.cuda, confirmations)
    ran = {i for e in evidence for i in e.get("ran", [])}
    _judge_loops(findings, plan, evidence, confirmations)
    _judge_survivors(evidence, plan, confirmations, ran, out.cuda)
    partly = any(e.get("lines") == "traced, partly" for e in evidence)
    for i, f in enumerate(out.findings):
        f.confirmation = confirmations.get(i) or _unconfirmed(i, plan, i in ran, partly, out.cuda)
    inside, outside = runtime_only([c for n, c in enumerate(cycles) if n not in matched], roots, out.cuda)
    out.findings += inside + outside
    out.outside = outside
    return out


def _unconfirmed(i: int, plan: Plan, ran: bool, partly: bool, cuda: bool) -> dict:
    probe = plan.probe(i)
    what = probe.what if probe is not None else "this code"
    if ran:
        status, text = NOT_OBSERVED, f"the command ran {what}; no cycle or growth was seen"
    else:
        status, text = NOT_RUN, f"the command never ran {what}"
        if partly:
            text += " while lines were watched (on Python 3.11 only part of the run is, within a time budget)"
    return {"status": status, "device": "cuda" if cuda else "cpu", "bytes": 0, "count": 0, "evidence": text}


def _judge_cycles(plan: Plan, cycles: list[dict], findings, cuda: bool, confirmations: dict) -> set[int]:
    """Confirm cycle findings; a recorded cycle's bytes go to the first finding it matches only."""
    matched: set[int] = set()
    owner: dict[int, int] = {}  # recorded cycle -> the finding its bytes are given to
    for spec in sorted(plan.cycles, key=lambda s: s.finding):
        hits = [n for n, c in enumerate(cycles) if cycle_matches(spec, c)]
        if not hits:
            continue
        matched.update(hits)
        devices: dict[str, int] = {}
        shared = []
        for n in hits:
            if owner.setdefault(n, spec.finding) == spec.finding:
                _merge(devices, cycles[n]["devices"])
            else:
                shared.append(owner[n])
        first = cycles[hits[0]]
        count = sum(cycles[n]["count"] for n in hits)
        nbytes = sum(devices.values())
        pic = picture(first["graph"], spec)
        text = (f"{count} cycle{'s' * (count != 1)} freed by the collector released {human_bytes(nbytes)} "
                f"of tensors: {describe_ring(pic)}")
        if shared:
            lines = sorted({findings[j].line for j in shared})
            text += f" (the same cycles as the finding at line{'s' * (len(lines) > 1)} " \
                    f"{', '.join(map(str, lines))}, which counts their bytes)"
        confirmations[spec.finding] = {
            "status": CONFIRMED, "device": _device(devices or first["devices"], cuda), "bytes": nbytes,
            "count": count, "evidence": text, "cycle": pic, "pids": sorted({cycles[n]["pid"] for n in hits}),
        }
    return matched


def _judge_loops(findings, plan: Plan, evidence, confirmations) -> None:
    for e in evidence:
        for wid, state in e.get("loops", {}).items():
            w = plan.loop(wid)
            if w is None or w.finding in confirmations:
                continue
            samples = state["samples"]
            if not loop_growth(w.metric, samples):
                continue
            first, last = samples[0], samples[-1]
            where = f"calls of the function at line {w.line}" if w.at == "entry" else f"passes of the loop at line {w.line}"
            length = f", {first['length']} -> {last['length']} items" if last["length"] is not None else ""
            kept = (f"{first['nodes']} -> {last['nodes']} autograd nodes keeping "
                    f"{human_bytes(first['graph_bytes'])} -> {human_bytes(last['graph_bytes'])} of saved tensors")
            if last["nodes"] and not last["graph_bytes"]:
                kept += " (backward() had already released them)"
            elif not last["nodes"]:
                kept = f"{first['tensors']} -> {last['tensors']} tensors, no autograd graph"
            confirmations[w.finding] = {
                "status": CONFIRMED, "device": _device(last["devices"], bool(e.get("cuda_available"))),
                "bytes": last["bytes"], "count": state["passes"], "nodes": last["nodes"],
                "evidence": f"{w.expr} grew over {state['passes']} {where} (pid {e['pid']}): {kept}{length}; "
                            f"{human_bytes(last['bytes'])} of tensors held in all",
                "samples": [{k: s[k] for k in ("pass", "length", "nodes", "bytes", "graph_bytes")} for s in samples],
            }


def _judge_survivors(evidence, plan: Plan, confirmations, ran: set[int], cuda: bool) -> None:
    """Instances alive at exit confirm a cache or a registry only if its code ran (the method was called,
    the registration happened): otherwise something else keeps them."""
    for spec in plan.survivors:
        if spec.finding not in ran:
            continue
        count, devices = 0, {}
        for e in evidence:
            seen = e.get("survivors", {}).get(str(spec.finding))
            if seen:
                count += seen["count"]
                _merge(devices, seen["devices"])
        if count and devices:
            nbytes = sum(devices.values())
            confirmations[spec.finding] = {
                "status": CONFIRMED, "device": _device(devices, cuda), "bytes": nbytes, "count": count,
                "evidence": f"{count} {spec.cls} instance{'s' * (count != 1)} still alive at exit after a full "
                            f"collection, holding {human_bytes(nbytes)} of tensors",
            }


def runtime_only(cycles: list[dict], roots: Sequence[str], cuda: bool) -> tuple[list[Finding], list[Finding]]:
    """CYC900 where each unexplained cycle was made: inside the linted paths, and outside them."""
    real_roots = [real(r) for r in roots]
    by_place: dict[tuple[str, int], dict] = {}
    for cyc in cycles:
        place = _made_at(cyc, real_roots) or _made_at(cyc, None) or ("<unknown>", 1)
        entry = by_place.setdefault(place, {"count": 0, "devices": {}, "graph": cyc["graph"]})
        entry["count"] += cyc["count"]
        _merge(entry["devices"], cyc["devices"])
    inside, outside = [], []
    for (path, line), entry in sorted(by_place.items()):
        nbytes = sum(entry["devices"].values())
        device = _device(entry["devices"], cuda)
        pic = picture(entry["graph"], None)
        ring = describe_ring(pic)
        within = _under(path, real_roots)
        rel = os.path.relpath(path) if path.startswith(os.sep) else path
        shown = rel if within or not rel.startswith("..") else path
        n = entry["count"]
        where = "made here" if within else "made here, outside the linted paths,"
        (inside if within else outside).append(Finding(
            shown, line, 1, line, 1, "CYC900",
            f"runtime-only cycle: {n} cycle{'s' * (n != 1)} {where} held {human_bytes(nbytes)} of {device} tensors "
            f"until the collector freed them ({ring}); no static rule saw how",
            confirmation={"status": CONFIRMED, "device": device, "bytes": nbytes, "count": n,
                          "evidence": ring, "cycle": pic, "outside": not within},
        ))
    return inside, outside


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _made_at(cyc: dict, roots: list[str] | None) -> tuple[str, int] | None:
    """The first function, class or frame of the cycle under ``roots`` (anywhere, when None)."""
    def ok(path: str) -> bool:
        return bool(path) and not path.startswith("<") and (roots is None or _under(path, roots))

    for fn in cyc.get("functions", []):
        if ok(real(fn["file"])):
            return real(fn["file"]), fn["line"]
    for c in cyc.get("classes", []):
        if c["file"] and ok(real(c["file"])):
            line = class_line(real(c["file"]), c["name"])
            if line:
                return real(c["file"]), line
    for fr in cyc.get("frames", []):
        if ok(real(fr["file"])):
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
