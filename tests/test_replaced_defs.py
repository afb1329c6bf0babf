"""A ``def`` that a later ``def`` of the same name in the same block replaces never runs: d2l 1.0.3's generated
``Trainer`` defines ``prepare_model`` twice in one class body (the book's chapters add to the class), and only the
second one's back-pointer is real. A property and its setter, a name read between the two definitions (bound as a
hook, called at import), and definitions in different blocks of an ``if`` keep both."""
import textwrap

import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

TRAINER = """\
class Trainer:
    def prepare_model(self, model):
        model.trainer = self
        self.model = model
{between}
    def prepare_model(self, model):
        model.board.xlim = [0, 10]
        self.model = model
"""


def lines(tmp_path, source):
    return [line for _, line, code in lint_tree(tmp_path, {"trainer.py": source}) if code == "CYC202"]


@pytest.mark.parametrize("between", ["", "    def fit(self, model):\n        self.prepare_model(model)\n"])
def test_a_replaced_method_never_runs(tmp_path, between):
    """``self.prepare_model(model)`` between the two is looked up when it runs: it calls the second."""
    assert lines(tmp_path, TRAINER.format(between=between)) == []


@pytest.mark.parametrize("between", ["    first = prepare_model\n", "    hooks = [prepare_model]\n"])
def test_a_definition_read_before_it_is_replaced_stays(tmp_path, between):
    assert lines(tmp_path, TRAINER.format(between=between)) == [3]


def test_the_live_definition_is_reported(tmp_path):
    live = TRAINER.format(between="").replace("model.board.xlim = [0, 10]", "model.trainer = self")
    assert lines(tmp_path, live) == [7]


def test_a_setter_is_not_a_replacement(tmp_path):
    source = """\
    class Trainer:
        @property
        def model(self):
            return self._model

        @model.setter
        def model(self, model):
            model.trainer = self
            self._model = model
    """
    assert lines(tmp_path, textwrap.dedent(source)) == [8]


def test_definitions_in_two_branches_are_both_live(tmp_path):
    source = """\
class Trainer:
    if True:
        def prepare_model(self, model):
            model.trainer = self
            self.model = model
    else:
        def prepare_model(self, model):
            self.model = model
"""
    assert lines(tmp_path, source) == [4]
