"""Statements placed from CPython's tree (positions.py) sit exactly where libcst's own position
pass puts them, on every statement (small and compound) and decorator of the fixtures, the shared
cases and awkward code."""
import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from cyclelint.positions import statement_ranges

from .conftest import FIXTURES, SHARED

pytestmark = pytest.mark.lintpath

SOURCES = sorted(FIXTURES.rglob("*.py")) + sorted((SHARED / "eval" / "cases").glob("*.py"))
AWKWARD = {
    "non_ascii": "s = 'é𝔘'; t = s  # ü\nif s:\n    v = ('ü', s)\nelif t:\n    w = 1\nelse:\n    pass\n",
    "crlf": "x = 1\r\ny = 2\r\nz = (x +\r\n     y)\r\n",
    "compound": (
        "@dec\nclass A:\n    def f(self):\n        try:\n            a = 1\n        except* E:\n            b = 2\n"
        "        else:\n            c = 3\n        finally:\n            d = 4\n"
        "async def g():\n    async with x as y: e = 5\n    async for i in y:\n        f = 6\n    else:\n        g = 7\n"
        "match p:\n    case [1, *rest]:\n        h = 8\n    case _:\n        i = 9\n"
        "while x: j = 10; k = 11\n"
    ),
    "decorated_and_continued": "@a\n@b\ndef f(x):\n    return x \\\n        + 1\nq = [\n    1,\n]\n",
    "decorators": "@ dec  # c\n@dec2 (1)\n@a.b[0]\nclass A:\n    @\tstaticmethod\n    def f(): 'é'; return 1\n",
    "comment_after_block": "class A:  # c\n    def f(self):\n        pass  # c\n\n    # trailing\n\nx = 1\n",
}


def statements(module):
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Decorator)):
                found.append(node)
            return True

    module.visit(Collect())
    return found


def check(data: bytes):
    module = cst.parse_module(data)
    nodes = statements(module)
    ranges = statement_ranges(module, ast.parse(data), data.decode(module.encoding), nodes)
    assert ranges is not None
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    for node in nodes:
        p = positions[node]
        assert ranges[id(node)] == (p.start.line, p.start.column, p.end.line, p.end.column), cst.Module([]).code_for_node(node)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_same_positions_as_libcst(path):
    check(path.read_bytes())


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_same_positions_on_awkward_code(name):
    check(AWKWARD[name].encode())


def test_form_feed_is_left_to_libcst():
    """CPython counts a form feed before a statement as a column, libcst does not: libcst decides."""
    src = "x = 1\n\x0cy = 2\n"
    module = cst.parse_module(src)
    assert statement_ranges(module, ast.parse(src), src, statements(module)) is None


def test_block_ending_in_a_semicolon_is_left_to_libcst():
    """CPython ends ``if a: f(x);`` after the semicolon, libcst before it: libcst decides; the
    small statement itself is placed alike by both."""
    src = "if a:\n    f(x);\n"
    module = cst.parse_module(src)
    assert statement_ranges(module, ast.parse(src), src, [module.body[0]]) is None
    call = module.body[0].body.body[0].body[0]
    assert statement_ranges(module, ast.parse(src), src, [call]) == {id(call): (2, 4, 2, 8)}


def test_decorator_continued_after_its_at_sign_is_left_to_libcst():
    src = "@\\\ndec\ndef f():\n    pass\n"
    module = cst.parse_module(src)
    assert statement_ranges(module, ast.parse(src), src, [module.body[0].decorators[0]]) is None


def test_rules_report_and_hand_on_statements_only(monkeypatch):
    """A finding or a project record made at an expression cannot be placed from CPython's tree and costs
    libcst's position pass over the whole file (stop 34 measured a cold run 1.7x slower from one such
    record). Every fixture and shared case, all rules on, is placed without that pass."""
    from cyclelint.engine import lint_source
    from cyclelint.findings import RULES

    def refuse(self, provider):
        raise AssertionError("libcst's position pass ran")

    monkeypatch.setattr(MetadataWrapper, "resolve", refuse)
    placed = 0
    for path in SOURCES:
        result = lint_source(path.read_bytes(), str(path), frozenset(RULES), prefilter=False)
        assert result.error is None, (path, result.error)
        placed += len(result.findings) + len(result.ctors) + len(result.states) + len(result.dispatches)
    assert placed > 100
