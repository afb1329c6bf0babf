"""A ``@dataclass`` or a ``NamedTuple`` keeps its fields: the ``__init__`` they write stores each one on the instance
(classtable.generated_init). An exception handed to one out of its except block is kept (CYC401, lightning-thunder
0.2.1 ``SplitReason(..., exception=e)``, fixed in 0.2.2 with ``str(e)``), and ``Child(self)`` kept by the instance is
a back-pointer (CYC202), in one file and across files."""
import ast

import pytest

from cyclelint.api import lint_paths
from cyclelint.classtable import generated_init
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

CLASSES = """\
import dataclasses
from dataclasses import dataclass, field, InitVar, KW_ONLY
from typing import ClassVar, NamedTuple


@dataclasses.dataclass(frozen=True)
class SplitReason:
    kind: str
    info: str | None
    exception: Exception | None = None


class Failure(NamedTuple):
    where: str
    error: Exception


@dataclass
class Note:
    seen: ClassVar[int] = 0
    text: str = ""
    cause: object = field(default=None, init=False)
    scale: InitVar[float] = 1.0
    _: KW_ONLY
    owner: object = None


@dataclass(init=False)
class Manual:
    error: Exception = None


@dataclass
class Written:
    error: Exception = None

    def __init__(self, error):
        self.message = str(error)


@dataclass
class Derived(SplitReason):
    extra: object = None


class Plain:
    error: Exception = None
"""


@pytest.mark.parametrize(("name", "expected"), [
    ("SplitReason", (["kind", "info", "exception"], ["kind", "info", "exception"])),
    ("Failure", (["where", "error"], ["where", "error"])),
    ("Note", (["text", "scale", "owner"], ["text", "owner"])),
    ("Manual", None),
    ("Written", None),
    ("Derived", ([], ["extra"])),  # a base's fields come first: positions unknown, keywords only
    ("Plain", None),
])
def test_the_fields_a_generated_init_keeps(name, expected):
    node = next(n for n in ast.parse(CLASSES).body if isinstance(n, ast.ClassDef) and n.name == name)
    assert generated_init(node) == expected


HANDLER = """
def check(node):
    try:
        node.run()
    except Exception as e:
        return {returned}
    return None
"""


def found(returned: str, prefilter: bool = True) -> list[tuple[int, str]]:
    result = lint_source(CLASSES + HANDLER.format(returned=returned), "split.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


RETURN_LINE = CLASSES.count("\n") + 6


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("returned", "kept"), [
    ('False, SplitReason("meta", "failed", exception=e)', True),
    ('SplitReason("meta", "failed", e)', True),
    ('Failure("run", e)', True),
    ("Note(owner=e)", True),
    ('False, SplitReason("meta", "failed", exception=str(e))', False),
    ('Note(str(e))', False),
    ("Note(scale=e)", False),  # an InitVar goes to __post_init__, not on the instance
    ("Manual(e)", False),
    ("Written(e)", False),
    ('Derived("meta", "failed", e)', False),  # positions unknown: only keywords are matched
    ('Derived("meta", "failed", exception=e)', False),  # a base's field: the base's __init__ is not followed
    ("Derived(extra=e)", True),
    ("Plain(e)", False),
])
def test_an_exception_given_to_a_generated_init(returned, kept, prefilter):
    assert found(returned, prefilter) == ([(RETURN_LINE, "CYC401")] if kept else [])


CHILD = """\
from dataclasses import dataclass


@dataclass
class Child:
    parent: object
    name: str = ""
"""
OWNER = """\
{imports}

class Owner:
    def __init__(self):
        self.child = Child({args})
"""


@pytest.mark.parametrize(("args", "kept"), [
    ("self", True), ("parent=self", True), ('None, name="x"', False),
    ("self).plan(", False),  # torch inductor's MemoryPlanner(self).plan(lines): a temporary, its result kept
])
def test_a_dataclass_given_its_owner_in_one_file(args, kept):
    result = lint_source(CHILD + OWNER.format(imports="", args=args), "owner.py", DEFAULT_CODES)
    resolve_project([result])
    assert [f.code for f in result.findings] == (["CYC202"] if kept else [])


@pytest.mark.parametrize(("args", "kept"), [("self", True), ("parent=self", True), ('None, name="x"', False)])
def test_a_dataclass_given_its_owner_across_files(tmp_path, args, kept):
    (tmp_path / "child.py").write_text(CHILD)
    (tmp_path / "owner.py").write_text(OWNER.format(imports="from child import Child\n", args=args))
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == []
    assert [(f.path.rsplit("/", 1)[-1], f.code) for f in findings] == ([("owner.py", "CYC202")] if kept else [])
