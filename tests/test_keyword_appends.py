"""A method called with keyword arguments is no list, set or deque method (``append``, ``add``, ``insert``,
``extend`` take none): lhotse 1.33.0's ``pad`` mixes two cuts with ``padding_cut.append(cut, preserve_id="right")``,
a method of its own ``Cut`` class that returns a new ``MixedCut`` and stores neither in the other. The same calls
without keywords stay stores."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

PAD = """\
def pad(cut, padding_cut, direction):
    if direction == "right":
        padded = cut.append(padding_cut{keywords})
    else:
        padded = padding_cut.append(cut{keywords})
    return padded
"""

LOOP = """\
def train(model, loader, history):
    for batch in loader:
        loss = model(batch)
        loss.backward()
        history.{method}(loss{keywords})
"""


@pytest.mark.parametrize(("keywords", "reported"), [(", preserve_id=None", False), ("", True)])
def test_mixing_two_objects_by_a_keyword_method_links_neither(keywords, reported):
    assert reports(PAD.format(keywords=keywords), "CYC201") is reported


@pytest.mark.parametrize(("method", "keywords", "reported"), [
    ("append", ", step=1", False),
    ("add", ", alpha=1.0", False),
    ("append", "", True),
    ("add", "", True),
])
def test_a_keyword_call_is_no_container_store(method, keywords, reported):
    assert reports(LOOP.format(method=method, keywords=keywords), "CYC302") is reported
