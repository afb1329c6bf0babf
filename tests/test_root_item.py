"""``self.named_modules()`` and ``self.modules()`` yield the module itself first (named ""): stored in the loop,
it is a self-reference (CYC203), unless a test there skips or excludes that item (analysis/root_item.py). From
transformer_lens 1.3.0 ``HookedRootModule.setup``, the fix of its 1.2.2 self-reference."""
import libcst as cst
import pytest

from cyclelint.analysis.root_item import root_tests
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

SETUP = """\
import torch.nn as nn


class Hooked(nn.Module):
    def setup(self):
        self.by_name = {{}}
        for name, module in self.named_modules():
{body}
"""


def found(body: str, prefilter: bool = True) -> list[tuple[int, str]]:
    text = SETUP.format(body="\n".join("            " + line for line in body.splitlines()))
    result = lint_source(text, "hooked.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


SKIPPED = {
    "== '' continue": 'if name == "":\n    continue\nself.by_name[name] = module',
    "not name continue": "if not name:\n    continue\nself.by_name[name] = module",
    "is self continue": "if module is self:\n    continue\nself.by_name[name] = module",
    "one-line guard": "if not name: continue\nself.by_name[name] = module",
    "guarded by name": "if name:\n    self.by_name[name] = module",
    "!= ''": 'if name != "":\n    self.by_name[name] = module',
    "is not self": "if module is not self:\n    self.by_name[name] = module",
    "and": "if name and module.training:\n    self.by_name[name] = module",
    "else of not": "if not name:\n    pass\nelse:\n    self.by_name[name] = module",
    "or in a guard": 'if name == "" or module.training:\n    continue\nself.by_name[name] = module',
    "after other statements": 'if name == "":\n    continue\nmodule.name = name\nself.by_name[name] = module',
}
KEPT = {
    "no guard": ("self.by_name[name] = module", 8),
    "a dot test": ('if "." in name:\n    continue\nself.by_name[name] = module', 10),
    "guard without exit": ('if name == "":\n    print(name)\nself.by_name[name] = module', 10),
    "or": ("if name or module.training:\n    self.by_name[name] = module", 9),
    "else of a guard": ('if name == "":\n    self.by_name[name] = module', 9),
    "another name tested": ('if other == "":\n    continue\nself.by_name[name] = module', 10),
    "is another object": ("if module is other:\n    continue\nself.by_name[name] = module", 10),
}


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize("body", SKIPPED.values(), ids=SKIPPED.keys())
def test_the_root_item_skipped_is_no_self_reference(body, prefilter):
    assert found(body, prefilter) == []


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("body", "line"), KEPT.values(), ids=KEPT.keys())
def test_the_root_item_kept_is_still_flagged(body, line, prefilter):
    assert found(body, prefilter) == [(line, "CYC203")]


def test_a_guard_holds_only_for_the_rest_of_its_block():
    second = "\n    for name, module in self.named_modules():\n        self.by_name[name] = module"
    text = SETUP.format(body="\n".join("            " + line for line in ['if name == "":', "    continue",
                                                                            "self.by_name[name] = module"]))
    result = lint_source(text + second.replace("\n", "\n    ") + "\n", "hooked.py", DEFAULT_CODES)
    resolve_project([result])
    assert [(f.line, f.code) for f in result.findings] == [(13, "CYC203")]  # the second loop's store only


@pytest.mark.parametrize(("test", "holds", "fails"), [
    ("name", {"name"}, set()),
    ("not name", set(), {"name"}),
    ('name == ""', set(), {"name"}),
    ("name != ''", {"name"}, set()),
    ("m is self", set(), {"m"}),
    ("m is not self", {"m"}, set()),
    ("m is other", set(), set()),
    ('name == "x"', set(), set()),
    ("name and m is not self", {"name", "m"}, set()),
    ('name == "" or m is self', set(), {"name", "m"}),
    ('not (name == "" or m is self)', {"name", "m"}, set()),
    ('name or m.training', set(), set()),
])
def test_what_a_test_proves(test, holds, fails):
    assert root_tests(cst.parse_expression(test), "self") == (frozenset(holds), frozenset(fails))
