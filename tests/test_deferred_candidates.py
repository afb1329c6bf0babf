"""A method that grows its instance's state from its arguments (``self.total += value``) is a CYC305 only once
some caller passes it a graph. When its own file has no graph for it and no caller that may feed it, the
pre-filter leaves it to the project (``FileResult.deferred``): the file is analysed in full only when some
file of the project names the method. The findings are those of analysing every such file in full."""
import ast

import pytest

from benchmarks.prefilter_check import differences
from cyclelint import engine
from cyclelint.api import lint_paths
from cyclelint.cache import Cache
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.prefilter import scan_file

from .test_dispatch import BASE, SUBCLASS

pytestmark = pytest.mark.lintpath

METER = """\
class Meter:
    def __init__(self):
        self.total = 0

    def update(self, value):
        self.total += value
"""

# same method name, another class: the project analyses it in full (names only), and it stays quiet
HISTORY = """\
class History:
    def __init__(self):
        self.items = []

    def update(self, value):
        self.items.append(value)
"""

TRAIN = """\
from meter import Meter


def train(model, loader, opt):
    meter = Meter()
    for x in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        meter.update(loss)
"""

UNRELATED = """\
def train(model, loader, opt):
    for x in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
"""


@pytest.fixture
def analysed(monkeypatch):
    """The paths analysed in full (libcst), in this process (``jobs=1``)."""
    seen = []
    real = engine._parse_and_analyse

    def counting(source, path, *args):
        seen.append(path.rsplit("/", 1)[-1])
        return real(source, path, *args)

    monkeypatch.setattr(engine, "_parse_and_analyse", counting)
    return seen


def _project(tmp_path, **files):
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


def _found(paths, **options):
    findings, errors = lint_paths([str(p) for p in paths], jobs=1, **options)
    assert errors == []
    return [(f.path.rsplit("/", 1)[-1], f.line, f.code) for f in findings]


def test_the_prefilter_leaves_a_candidate_to_the_project():
    verdict = scan_file(ast.parse(METER), DEFAULT_CODES, defer=True)
    assert (verdict.found, verdict.may_feed, verdict.deferred) == (False, set(), ["update"])
    assert scan_file(ast.parse(METER), DEFAULT_CODES)[0]  # not deferring: sent on, as before
    result = lint_source(METER, "meter.py", DEFAULT_CODES, defer=True)
    assert result.deferred == ["update"] and result.states == [] and result.findings == []


@pytest.mark.parametrize("source", [
    METER + TRAIN.replace("from meter import Meter\n", ""),  # a caller in the file may feed it
    METER.replace("self.total += value", "self.total += self.model(value).sum()"),  # a graph of its own
    "import torch\n" + METER.replace("class Meter:", "class Meter(torch.nn.Module):").replace(
        "def update(self, value)", "def forward(self, value)"),  # a module's forward: its inputs carry a graph
])
def test_what_the_file_itself_may_feed_is_judged_there(source):
    verdict = scan_file(ast.parse(source), DEFAULT_CODES, defer=True)
    found, deferred = verdict.found, verdict.deferred
    assert found and deferred == []
    full = lint_source(source, "meter.py", DEFAULT_CODES, prefilter=False)
    # judged in the file: reported, or handed on already attached (a module's base may run it with grad off)
    assert [f.code for f in full.findings] == ["CYC305"] or [st.attached for st in full.states] == [True]
    assert differences(lint_source(source, "meter.py", DEFAULT_CODES, defer=True), full) == []


def test_a_candidate_nobody_feeds_is_never_analysed_in_full(tmp_path, analysed):
    root = _project(tmp_path, meter=METER, unrelated=UNRELATED)
    assert _found([root]) == []
    assert "meter.py" not in analysed


def test_a_fed_candidate_is_analysed_and_reported(tmp_path, analysed):
    root = _project(tmp_path, meter=METER, history=HISTORY, train=TRAIN)
    assert _found([root]) == [("meter.py", 6, "CYC305")]
    assert {"meter.py", "history.py"} <= set(analysed)  # history.py: named alike, analysed, quiet


def test_a_staged_candidate_is_judged_with_its_project(tmp_path):
    root = _project(tmp_path, meter=METER, train=TRAIN)
    assert _found([root / "meter.py"]) == [("meter.py", 6, "CYC305")]
    (root / "train.py").write_text(UNRELATED)
    assert _found([root / "meter.py"]) == []


def test_a_base_class_sees_the_override_left_to_the_project(tmp_path, analysed):
    """The override's growth (``ClassSummary.grows``) comes only from the full analysis of its file."""
    root = _project(tmp_path, base=BASE, total=SUBCLASS)
    assert lint_source(SUBCLASS, "total.py", DEFAULT_CODES, defer=True).deferred == ["update"]
    assert _found([root]) == [("base.py", 7, "CYC305")]
    assert {"base.py", "total.py"} <= set(analysed)


def test_a_cached_deferral_is_judged_again_when_a_feeder_appears(tmp_path):
    root = _project(tmp_path, meter=METER, train=UNRELATED)
    cache = Cache.open(str(tmp_path))
    assert _found([root], cache=cache) == []
    (root / "train.py").write_text(TRAIN)
    assert _found([root], cache=cache) == [("meter.py", 6, "CYC305")]
    assert _found([root], cache=cache) == [("meter.py", 6, "CYC305")]  # the full analysis, from the cache


@pytest.mark.parametrize("typed", [
    TRAIN.replace("def train(model, loader, opt):\n    meter = Meter()\n", "def train(model, loader, opt, meter: Meter):\n"),
    TRAIN.replace("def train(model, loader, opt):\n    meter = Meter()\n",
                  'def train(model, loader, opt, meter: "Optional[Meter]" = None):\n'),
    # a copy keeps the class (transformers' bart: ``curr_past_key_values = past_key_values``, then ``.update``)
    TRAIN.replace("def train(model, loader, opt):\n    meter = Meter()\n",
                  "def train(model, loader, opt, given: Meter):\n    kept = given\n    meter = kept\n"),
    # a capitalised callee is a class to the evaluator (transformers' deberta_v2: ``self.LayerNorm(x).to(y)``)
    TRAIN.replace("    meter = Meter()\n", "").replace("meter.update(loss)", "Meter().update(loss)"),
])
def test_a_feeder_whose_class_the_evaluator_knows_is_named(tmp_path, typed):
    """The evaluator knows a receiver's class from an annotation too, from a copy of a name it knows and from a
    capitalised callee, so the pre-filter names all of those (found on transformers: gemma3n's
    ``past_key_values: Cache | None`` calling ``update``, bart's copy of it, deberta_v2's ``self.LayerNorm(x).to(y)``)."""
    assert ("Meter", "update") in scan_file(ast.parse(typed), DEFAULT_CODES, defer=True)[1]
    root = _project(tmp_path, meter=METER, train=typed)
    assert _found([root]) == [("meter.py", 6, "CYC305")]
