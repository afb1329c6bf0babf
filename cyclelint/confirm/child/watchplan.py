"""The watch plan, typed: what the detector looks for to judge each static finding.

Written by ``cyclelint.confirm.plan`` in the parent and read by the detector in the child, so this
module uses the standard library only. Findings are referred to by their index in the list.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields

ENV_DIR = "CYCLELINT_CONFIRM_DIR"
ENV_PLAN = "CYCLELINT_CONFIRM_PLAN"


@dataclass
class Span:
    """Where a callable's code object starts: its line, and the columns its first column falls in (-1: any)."""

    line: int
    first_col: int = -1
    end_col: int = -1


@dataclass
class CycleWatch:
    """How a recorded cycle is recognised as the one a finding describes."""

    finding: int
    code: str
    file: str
    line: int
    cls: str | None = None
    attrs: list[str] = field(default_factory=list)
    callables: list[Span] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    ctors: list[str] = field(default_factory=list)


@dataclass
class Probe:
    """Lines that must run for the finding to be observable, and how the verdict names them."""

    finding: int
    first: int
    last: int
    what: str


@dataclass
class LoopWatch:
    """An accumulator sampled at a loop header (``at="line"``) or at each call of a method (``"entry"``)."""

    id: str
    finding: int
    at: str
    line: int
    expr: str
    metric: str = "nodes"  # what must grow: autograd nodes, or tensor bytes (CYC304)


@dataclass
class SurvivorWatch:
    """Instances of a class still alive at exit (never-freed findings)."""

    finding: int
    cls: str
    file: str


@dataclass
class FileWatch:
    probes: list[Probe] = field(default_factory=list)
    loops: list[LoopWatch] = field(default_factory=list)


@dataclass
class Plan:
    cycles: list[CycleWatch] = field(default_factory=list)
    files: dict[str, FileWatch] = field(default_factory=dict)  # real path -> what to watch in it
    survivors: list[SurvivorWatch] = field(default_factory=list)

    def loop(self, watch_id: str) -> LoopWatch | None:
        return next((w for f in self.files.values() for w in f.loops if w.id == watch_id), None)

    def probe(self, finding: int) -> Probe | None:
        return next((p for f in self.files.values() for p in f.probes if p.finding == finding), None)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data = json.loads(text)
        return cls(
            cycles=[_load(CycleWatch, c, callables=lambda v: [_load(Span, s) for s in v]) for c in data["cycles"]],
            files={path: FileWatch([_load(Probe, p) for p in f["probes"]], [_load(LoopWatch, w) for w in f["loops"]])
                   for path, f in data["files"].items()},
            survivors=[_load(SurvivorWatch, s) for s in data["survivors"]],
        )


def _load(kind, data: dict, **convert):
    names = {f.name for f in fields(kind)}
    return kind(**{k: convert[k](v) if k in convert else v for k, v in data.items() if k in names})
