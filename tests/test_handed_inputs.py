"""A forward() that hands its own inputs to another object's method gives that method only what some caller of the
forward may pass, as a signature does: it counts as graph evidence for a store that folds the value into state
kept across calls, not for a table the caller keys (``session.add_new_frame(frame, frame_idx)``, transformers' SAM2
video sessions, whose tracking forwards run under inference mode). A value the forward computes itself is a graph
wherever it goes (graph_inputs.fed_params)."""
import pytest

from cyclelint.api import lint_paths
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

SESSION = """\
import torch


class Session:
    def __init__(self):
        self.frames = None
        self.total = torch.zeros(())

    def add_frame(self, frame, idx):
        if self.frames is None:
            self.frames = {idx: frame}
        else:
            self.frames[idx] = frame
        return idx

    def add_total(self, frame):
        self.total += frame.sum()
"""
TRACKER = """\
from torch import nn


class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)

    def forward(self, session: "Session", frame, idx):
        {call}
        return idx
"""
TABLE_LINE, FOLD_LINE = 13, 17


def _found(call: str) -> list[tuple[int, str]]:
    result = lint_source(SESSION + "\n\n" + TRACKER.format(call=call), "session.py", DEFAULT_CODES)
    assert result.error is None
    resolve_project([result])
    return sorted((f.line, f.code) for f in result.findings)


@pytest.mark.parametrize("call, expected", [
    ("session.add_frame(frame, idx)", []),
    ("session.add_total(frame)", [(FOLD_LINE, "CYC305")]),
    ("session.add_frame(self.encoder(frame), idx)", [(TABLE_LINE, "CYC305")]),
], ids=["input into a keyed table", "input folded", "computed value into a keyed table"])
def test_inputs_handed_on_count_only_for_a_fold(call, expected):
    assert _found(call) == expected


@pytest.mark.parametrize("call, expected", [
    ("session.add_frame(frame, idx)", []),
    ("session.add_total(frame)", [("session.py", FOLD_LINE)]),
    ("session.add_frame(self.encoder(frame), idx)", [("session.py", TABLE_LINE)]),
], ids=["input into a keyed table", "input folded", "computed value into a keyed table"])
def test_across_files_too(tmp_path, call, expected):
    (tmp_path / "session.py").write_text(SESSION)
    (tmp_path / "tracker.py").write_text("from session import Session\n" + TRACKER.format(call=call))
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == []
    assert [(f.path.rsplit("/", 1)[-1], f.line) for f in findings if f.code == "CYC305"] == expected
