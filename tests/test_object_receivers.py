"""``update``, ``append``, ``add``... called on an object of a class of the same file that is no container call that
class's method: it keeps its argument or not as the class says (project.records.MethodKeeps), it is no
``dict.update`` (vocabulary.object_class). From avalanche 0.6.0's strategies, ``self.storage_policy.update(self)``
with a replay buffer that reads the strategy and keeps only samples."""
import pytest

from cyclelint.api import lint_paths
from cyclelint.cache import Cache
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project
from cyclelint.vocabulary import object_class

pytestmark = pytest.mark.lintpath

BUFFERS = """\
import collections


class Reservoir:
    def __init__(self, size):
        self.size = size
        self.samples = []

    def update(self, strategy, **kwargs):
        self.samples = (self.samples + list(strategy.experience))[-self.size:]


class Forwarding:
    def __init__(self):
        self.storage = Reservoir(8)

    def update(self, strategy):
        self.storage.update(strategy)


class Keeping:
    def update(self, strategy):
        self.strategy = strategy


class Registry(dict):
    pass
"""
STRATEGY = """\
{imports}

class Strategy:
    def __init__(self, model):
        self.holder = {ctor}
        self.model = model

    def after(self):
        self.holder.{call}
"""
CASES = {
    "reads it": ("Reservoir(8)", "update(self)", []),
    "hands it on to one that reads it": ("Forwarding()", "update(self)", []),
    "keeps it": ("Keeping()", "update(self)", ["CYC202"]),
    "a dict subclass": ("Registry()", 'update({"owner": self})', ["CYC203"]),
    "a dict": ("{}", 'update({"owner": self})', ["CYC203"]),
    "an OrderedDict": ("collections.OrderedDict()", 'update({"owner": self})', ["CYC203"]),
    "a deque": ("collections.deque()", "append(self)", ["CYC203"]),
    "a dict updated from the instance": ("{}", "update(self)", []),  # copies its items (monai's ExchangeObject)
    "a list extended by the instance": ("[]", "extend(self)", []),
    "a list extended by a display": ("[]", "extend([self])", ["CYC203"]),
}


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("ctor", "call", "codes"), CASES.values(), ids=CASES.keys())
def test_in_one_file(ctor, call, codes, prefilter):
    text = BUFFERS + STRATEGY.format(imports="", ctor=ctor, call=call)
    result = lint_source(text, "strategy.py", DEFAULT_CODES, prefilter=prefilter)
    resolve_project([result])
    assert [f.code for f in result.findings] == codes


def across_files(tmp_path, ctor: str, call: str) -> list[str]:
    (tmp_path / "buffers.py").write_text(BUFFERS)
    imports = "import collections\nfrom buffers import Forwarding, Keeping, Registry, Reservoir\n"
    (tmp_path / "strategy.py").write_text(STRATEGY.format(imports=imports, ctor=ctor, call=call))
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == []
    return [f.code for f in findings]


@pytest.mark.parametrize(("ctor", "call", "codes"), CASES.values(), ids=CASES.keys())
def test_across_files(tmp_path, ctor, call, codes):
    assert across_files(tmp_path, ctor, call) == codes


def test_an_object_of_another_file_is_taken_for_a_container(tmp_path):
    """A known miss: the file that calls ``add`` does not see whether the class it imports is a container (a
    ``dict`` subclass, as torchbearer's ``State``, is one), so ``add`` stores there, as on a set."""
    assert across_files(tmp_path, "Reservoir(8)", "add(self)") == ["CYC203"]


TRAINER = """\
import torch


class History:
    def __init__(self):
        self.items = []

    def append(self, value):
        self.items.append(value)


class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt
        self.history = {history}

    def fit(self, loader):
        for x, y in loader:
            loss = (self.model(x) - y).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.history.append(loss)
"""


@pytest.mark.parametrize(("history", "expected"), [
    ("History()", [(9, "CYC305")]),  # the class's own method keeps the graph: reported where it grows its state
    ("[]", [(23, "CYC302")]),
])
def test_a_graph_handed_to_an_object_is_judged_where_it_is_kept(history, expected):
    result = lint_source(TRAINER.format(history=history), "trainer.py", DEFAULT_CODES)
    resolve_project([result])
    assert [(f.line, f.code) for f in result.findings] == expected


@pytest.mark.parametrize(("cls", "bases", "expected"), [
    ("Reservoir", (), True),
    ("OrderedDict", (), False),
    ("Deque", (), False),
    ("ModuleList", (), False),
    ("History", ("list",), False),
    ("Registry", ("collections.UserDict",), False),
    (None, (), False),
])
def test_object_class(cls, bases, expected):
    assert object_class(cls, bases) is expected


def test_a_method_that_hands_its_argument_to_a_container_of_another_file_keeps_it(tmp_path):
    """``self.bag.add(strategy)`` with ``self.bag = Bag()`` and ``class Bag(set)`` imported: the bag may be a
    container, so the method keeps what it is given (project.records.MethodKeeps) and the strategy that hands
    itself over is in a cycle."""
    (tmp_path / "bags.py").write_text("class Bag(set):\n    pass\n")
    (tmp_path / "keepers.py").write_text(
        "from bags import Bag\n\n\nclass Keeper:\n    def __init__(self):\n        self.bag = Bag()\n\n"
        "    def update(self, strategy):\n        self.bag.add(strategy)\n")
    (tmp_path / "strategy.py").write_text(
        "from keepers import Keeper\n\n\nclass Strategy:\n    def __init__(self):\n        self.holder = Keeper()\n\n"
        "    def after(self):\n        self.holder.update(self)\n")
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == []
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.code) for f in findings] == [("strategy.py", 9, "CYC202")]


RESERVOIRS = """\
from library import LibraryBuffer


class Reservoir:
    def update(self, strategy, **kwargs):
        self.samples = list(strategy.experience)


class KeepingReservoir:
    def update(self, strategy, **kwargs):
        self.strategy = strategy


class Inherited(LibraryBuffer):
    pass
"""
FORWARDING = """\
from reservoirs import {cls}


class Forwarding:
    def __init__(self):
        self.storage = {cls}()

    def update(self, strategy):
        self.storage.{call}
"""


@pytest.mark.parametrize(("cls", "call", "codes"), [
    ("Reservoir", "update(strategy)", []),  # avalanche 0.6.0's MERBuffer -> ReservoirSamplingBuffer
    ("Reservoir", "update(strategy=strategy)", []),
    ("KeepingReservoir", "update(strategy)", ["CYC202"]),
    ("Inherited", "update(strategy)", ["CYC202"]),  # the method comes from outside the tree
    ("Reservoir", "update((strategy, 1))", ["CYC202"]),  # handed on inside another value
    ("Missing", "update(strategy)", ["CYC202"]),  # a class the tree does not define
])
def test_an_argument_handed_to_an_object_of_a_third_file(tmp_path, cls, call, codes):
    """``self.buffer.update(self)`` in the strategy (which holds a model); ``Forwarding.update`` hands the strategy
    to a method of an object of a class another file defines, which keeps it or not as its own summary says."""
    (tmp_path / "reservoirs.py").write_text(RESERVOIRS)
    (tmp_path / "forwarding.py").write_text(FORWARDING.format(cls=cls, call=call))
    (tmp_path / "strategy.py").write_text(
        "from forwarding import Forwarding\n\n\nclass Strategy:\n    def __init__(self, model):\n"
        "        self.model = model\n        self.buffer = Forwarding()\n\n"
        "    def after(self):\n        self.buffer.update(self)\n")
    for _ in range(2):  # the second run from the cache: the records read back say the same
        findings, errors = lint_paths([str(tmp_path)], jobs=1, cache=Cache.open(str(tmp_path)))
        assert errors == []
        assert [f.code for f in findings] == codes
