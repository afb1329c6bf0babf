"""Differential test of the pre-filter: generated programs and mutations of the leak fixtures are linted with
and without it, and the findings (and what the file tells the project) must be the same. The pre-filter is a
hand-written necessary condition of the rules; mutations reach the corners where it drifts from them
(keyword arguments, statements moved into loops or out of functions, decorators, renamed names). It must not
raise either: its crash costs only speed (the file goes on to the full analysis), but it is a bug."""
import ast
import random

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES, RULES
from cyclelint.prefilter import scan_file

from .conftest import FIXTURES
from .test_prefilter import _same

pytestmark = pytest.mark.lintpath

SOURCES = [p.read_text() for p in sorted(FIXTURES.glob("cyc[1-4]/**/*.py"))]
KEYWORDS = ("other", "value", "fn", "obj", "target", "tensor")
DECORATORS = ("functools.lru_cache", "lru_cache(maxsize=None)", "staticmethod", "torch.no_grad()", "cache",
              "property", "torch.compile")
NAMES = ("self", "model", "loss", "out", "x", "opt", "loader", "cache", "registry", "total", "hook")
WRAPPERS = ("for batch in loader:\n    pass", "with torch.no_grad():\n    pass", "try:\n    pass\nfinally:\n    pass",
            "while True:\n    pass")


def _bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    return [node.body for node in ast.walk(tree) if isinstance(getattr(node, "body", None), list) and node.body]


def _to_keyword(tree, rng):
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args
             and not any(isinstance(a, ast.Starred) for a in n.args)]
    if calls:
        call = rng.choice(calls)
        call.keywords.append(ast.keyword(arg=rng.choice(KEYWORDS), value=call.args.pop()))


def _drop(tree, rng):
    bodies = [b for b in _bodies(tree) if len(b) > 1]
    if bodies:
        body = rng.choice(bodies)
        del body[rng.randrange(len(body))]


def _duplicate(tree, rng):
    body = rng.choice(_bodies(tree))
    i = rng.randrange(len(body))
    body.insert(i, body[i])


def _wrap(tree, rng):
    body = rng.choice(_bodies(tree))
    i = rng.randrange(len(body))
    wrapper = ast.parse(rng.choice(WRAPPERS)).body[0]
    wrapper.body = [body[i]]
    body[i] = wrapper


def _decorate(tree, rng):
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if functions:
        rng.choice(functions).decorator_list.append(ast.parse(rng.choice(DECORATORS), mode="eval").body)


def _rename(tree, rng):
    old, new = rng.sample(NAMES, 2)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = new
        elif isinstance(node, ast.arg) and node.arg == old:
            node.arg = new
        elif isinstance(node, ast.Attribute) and node.attr == old:
            node.attr = new


def _hoist(tree, rng):
    """A function's statement moved to the module's top level (module-level loops, registries)."""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.body]
    if functions:
        fn = rng.choice(functions)
        tree.body.append(fn.body[rng.randrange(len(fn.body))])


def _reparameter(tree, rng):
    """A function's last positional parameter made keyword-only, ``*args`` or ``**kwargs`` (where the
    pre-filter once looked at positional parameters only)."""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.args.args]
    if functions:
        args = rng.choice(functions).args
        param = args.args.pop()
        if args.defaults:  # the last positional parameter's default, if there are any
            args.defaults.pop()
        kind = rng.choice(("vararg", "kwarg", "kwonly"))
        if kind != "kwonly" and getattr(args, kind) is None:
            setattr(args, kind, param)
        else:
            args.kwonlyargs.append(param)
            args.kw_defaults.append(None)


MUTATIONS = (_to_keyword, _drop, _duplicate, _wrap, _decorate, _rename, _hoist, _reparameter)


def check(source: str) -> None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return
    for codes in (frozenset(RULES), DEFAULT_CODES):
        scan_file(tree, codes)  # raises on a pre-filter bug
    _same(source.encode(), "mutant.py")


@pytest.mark.parametrize("index", range(len(SOURCES)))
def test_the_prefilter_raises_on_no_fixture(index):
    """Deterministic: the engine hides a pre-filter crash (the file goes to the full analysis)."""
    tree = ast.parse(SOURCES[index])
    for codes in (frozenset(RULES), DEFAULT_CODES):
        scan_file(tree, codes)


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=80)
@given(st.sampled_from(range(len(SOURCES))), st.integers(0, 2**32), st.integers(1, 4))
def test_mutated_fixtures_lint_the_same_with_and_without_the_prefilter(index, seed, steps):
    rng = random.Random(seed)
    tree = ast.parse(SOURCES[index])
    for _ in range(steps):
        rng.choice(MUTATIONS)(tree, rng)
    check(ast.unparse(ast.fix_missing_locations(tree)))


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=40)
@given(hypothesmith.from_grammar())
def test_generated_programs_lint_the_same_with_and_without_the_prefilter(source):
    check(source)


def test_an_inplace_op_with_keyword_operands_is_seen_by_the_prefilter():
    """The mutation that found issue 15's drift: ``total.add_(other=model(x))`` in a loop over data."""
    source = ("def train(model, loader):\n    total = 0\n    for x in loader:\n"
              "        total.add_(other=model(x))\n    return total\n")
    check(source)
    assert scan_file(ast.parse(source), DEFAULT_CODES)[0]


def test_a_method_the_instance_feeds_is_named_for_the_second_pass():
    """Found by the mutations (a trainer without ``__init__``, its loop over ``registry``): the file is
    pre-filtered, yet ``self.train_step(out, y)`` feeds a graph to a method a base class in another
    file may define; the pre-filter must name (Trainer, train_step) for the second pass."""
    source = ("import torch.nn.functional as F\n\n\nclass Trainer:\n    def fit(self, registry):\n"
              "        for x, y in registry:\n            out = self.model(x)\n            self.train_step(out, y)\n\n"
              "    def train_step(self, out, y):\n        loss = F.cross_entropy(out, y)\n        loss.backward()\n")
    assert not scan_file(ast.parse(source), DEFAULT_CODES)[0]  # pre-filtered: what it names is what counts
    check(source)


def test_a_class_under_a_with_block_describes_its_no_grad_methods_on_both_paths():
    """Found by the mutations: the class table read every class, the grad-off overlay only top-level ones."""
    source = ("import torch\n\nwith torch.no_grad():\n    class TextBase:\n        @torch.no_grad()\n"
              "        def encode(self, x):\n            return x\n")
    assert not scan_file(ast.parse(source), DEFAULT_CODES)[0]  # pre-filtered: its class table is read off ast
    check(source)


def test_a_method_without_positional_parameters_binds_no_instance():
    """Found by the parameter mutation: ``def begin(**self)`` in a class has no instance; the full analysis took
    the first parameter of any kind for it (and kept ``self.tracker.add_loader(self)`` for CYC202), the
    pre-filter the first positional one."""
    source = ("from trackers import Tracker\n\n\nclass Loader:\n    def __init__(self):\n"
              "        self.tracker = Tracker()\n\n    def begin(**self):\n        self.tracker.add(self)\n")
    check(source)
    assert not lint_source(source.encode(), "loader.py", DEFAULT_CODES, prefilter=False).ctors


def test_a_star_parameter_is_no_object_of_its_annotated_class():
    """``*meters: Meter`` is a tuple of meters: the full analysis took it for a Meter (its ``update`` fed, and
    ``**kwargs: Unpack[...]`` calling ``get`` fed the kwargs class) while the pre-filter named neither."""
    source = ("def train(model, loader, opt, *meters: Meter):\n    for x in loader:\n        loss = model(x).sum()\n"
              "        loss.backward()\n        opt.step()\n        meters.update(loss)\n")
    check(source)
    assert not lint_source(source.encode(), "train.py", DEFAULT_CODES, prefilter=False).evidence
