"""The pre-filter's walk over CPython's tree reads what each field holds from the node class's signature
(its docstring), so the hot loop tests no value. It must yield exactly what a walk that tests every field
yields, on every interpreter .ci/run uses, and fall back to testing where a signature does not read."""
import ast
import sys
import textwrap

import pytest

from cyclelint import astutil

from .conftest import FIXTURES, SHARED

pytestmark = pytest.mark.lintpath

SKIPPED = {"ctx", "op", "ops", "type_comment", "kind", "conversion", "format_spec"}

EVERY_FORM = textwrap.dedent(
    '''\
    import a.b as c
    from ..x import (y as z, w)
    v: int = 1
    def f(a, /, b: int = 1, *args, c, d=2, **kw) -> int:
        global g
        h = lambda q, *r, s=1, **t: (q, r, s, t)
        x = {**kw, "a": 1, None: 2}
        y = f"{a!r:>{b}} {c=}"
        z = [i for i in g if i] if b else {k: v for k, v in kw.items()}
        match x:
            case {"a": 1, **rest}: pass
            case [1, *others] | (2 as two): pass
            case Point(x=0, y=_) if z: pass
            case None: pass
        try:
            raise ValueError from None
        except (TypeError, ValueError) as e:
            del e
        else:
            assert x, "msg"
        finally:
            pass
        with open(a) as (p, q), open(b): yield from p
        while (n := 3) > 1: n -= 1
        else: print(*x, **{})
        return x[1:2, ::3], b.c.d, not a, -b, a if b else c, a < b <= c
    @dec(1)
    class C(B, metaclass=M):
        x: "C"
        async def m(self):
            async with a as b:
                async for i in b:
                    await i
    '''
)

NEWER_FORMS = textwrap.dedent(
    '''\
    type Alias[T: int] = list[T]
    def g[T, *Ts, **P](x: T) -> T:
        try:
            pass
        except* ValueError as eg:
            raise
    class K[T]: pass
    '''
)


def walk_testing_fields(node):
    """The oracle: every field but the skipped ones, each value tested for a node or a list of them."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        for name in cur._fields:
            if name in SKIPPED:
                continue
            value = getattr(cur, name, None)
            if isinstance(value, ast.AST):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST))


def sources():
    yield "every form", EVERY_FORM
    if sys.version_info >= (3, 12):
        yield "3.12 forms", NEWER_FORMS
    for root in (FIXTURES, SHARED / "eval" / "cases"):
        for path in sorted(root.rglob("*.py")) if root.is_dir() else ():
            yield str(path), path.read_bytes()


def test_the_walk_yields_what_testing_every_field_yields():
    walked = 0
    for name, source in sources():
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # fixtures of syntax errors
        expected = list(walk_testing_fields(tree))
        got = list(astutil.walk(tree))
        assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected)), name
        for node in expected:
            assert [id(n) for n in astutil.child_nodes(node)] == [id(n) for n in children_testing_fields(node)], name
        walked += len(expected)
    assert walked > 10_000  # the fixtures were found


def children_testing_fields(node):
    values = [getattr(node, f, None) for f in node._fields if f not in SKIPPED]
    return [v for value in values for v in (value if isinstance(value, list) else [value]) if isinstance(v, ast.AST)]


def test_a_dict_display_with_a_double_star_entry_has_no_none_in_the_walk():
    tree = ast.parse("x = {**a, 'k': b}")
    assert None not in list(astutil.walk(tree))
    assert {n.id for n in astutil.walk(tree) if isinstance(n, ast.Name)} == {"x", "a", "b"}


def test_a_node_class_whose_signature_does_not_read_is_walked_by_testing_its_fields():
    class Odd(ast.expr):  # no docstring: nothing says which fields hold nodes
        _fields = ("items", "one", "label")

    odd = Odd(items=[ast.Name("a"), "text", None], one=ast.Name("b"), label="c")
    assert astutil._SHAPES[Odd] == (("items", None), ("one", None), ("label", None))
    assert [n.id for n in astutil.walk(odd) if isinstance(n, ast.Name)] == ["b", "a"]
    assert [n.id for n in astutil.child_nodes(odd)] == ["a", "b"]


def test_simple_statements_hold_no_statements_and_compound_ones_keep_their_order():
    tree = ast.parse(textwrap.dedent(
        '''\
        try:
            a = 1
        except E:
            b = 2
        else:
            c = 3
        finally:
            d = 4
        '''
    ))
    names = [s.targets[0].id for s in astutil.statements(tree.body) if isinstance(s, ast.Assign)]
    assert names == ["a", "c", "d", "b"]  # body, else, finally, then the handlers: as before the shortcut
    assert astutil.class_functions(ast.parse("x = 1\nclass A:\n    def f(self): pass\n").body) == []
