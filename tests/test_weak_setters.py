"""``owner.attr = self`` is no strong back-pointer when the project sets ``attr`` keeping nothing of the value: a
property setter that keeps ``weakref.ref(value)`` (torchrl 0.14.1 ``WeightSyncScheme.context``,
weight_update/weight_sync_schemes.py:626-636, set by ``scheme.context = self`` in collectors/_base.py:1403) or a
branch of ``__setattr__`` for that name (torch_geometric 2.8.1 ``BaseStorage.__setattr__``, data/storage.py:100-105,
which every ``out._store._parent = out`` goes through). A setter that keeps the value, a ``__setattr__`` branch for
another name, or no such class in the project, leaves the back-pointer reported."""
import pytest

from cyclelint.api import lint_paths
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

SCHEME = """\
import weakref


class Scheme:
    def __init__(self):
        self._context_ref = None

    @property
    def context(self):
        return self._context_ref() if self._context_ref is not None else None

    @context.setter
    def context(self, context):
        {setter}
"""

STORAGE = """\
import weakref


class Storage:
    def __setattr__(self, key, value):
        if key == "{key}":
            self.__dict__[key] = weakref.ref(value)
        else:
            self.__dict__[key] = value
"""

COLLECTOR = """\
class Collector:
    def __init__(self, scheme, storage):
        self.scheme = scheme
        self.storage = storage

    def attach(self):
        {store}
"""


def found(*texts: str, prefilter: bool = True) -> list[tuple[int, str]]:
    results = [lint_source(text, f"m{i}.py", DEFAULT_CODES, prefilter=prefilter) for i, text in enumerate(texts)]
    assert all(r.error is None for r in results)
    resolve_project(results)
    return [(f.line, f.code) for r in results for f in r.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("setter", "key", "store", "kept"), [
    ("self._context_ref = weakref.ref(context)", "_parent", "self.scheme.context = self", False),
    ("self._context_ref = context", "_parent", "self.scheme.context = self", True),  # the setter keeps it
    ("self._context_ref = weakref.ref(context)", "_parent", "setattr(self.scheme, 'context', self)", False),
    ("self._context_ref = weakref.ref(context)", "_parent", "self.storage._parent = self", False),
    ("self._context_ref = weakref.ref(context)", "_owner", "self.storage._parent = self", True),  # another key
    ("self._context_ref = weakref.ref(context)", "_parent", "self.scheme.owner = self", True),  # no setter of owner
])
def test_weak_setters(setter, key, store, kept, prefilter):
    texts = (SCHEME.format(setter=setter), STORAGE.format(key=key), COLLECTOR.format(store=store))
    assert found(*texts, prefilter=prefilter) == ([(7, "CYC202")] if kept else [])


def test_no_class_of_the_project_sets_it():
    assert found(COLLECTOR.format(store="self.storage._parent = self")) == [(7, "CYC202")]


def test_across_files(tmp_path):
    (tmp_path / "storage.py").write_text(STORAGE.format(key="_parent"))
    (tmp_path / "collector.py").write_text(COLLECTOR.format(store="self.storage._parent = self"))
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == [] and findings == []
