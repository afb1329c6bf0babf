"""The judgements the rules and the pre-filter share are written once (cyclelint/judgements.py) and read each
tree through its Reading: on the same source, libcst's reading and CPython's must give the same answer,
including the corners where the two trees differ (keyword and starred arguments, bracketed tuples, implicit
string concatenation, literals CPython folds into one constant)."""
import ast
import unicodedata

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings

from cyclelint import ast_reading
from cyclelint.analysis.cst_reading import CST
from cyclelint.ast_reading import AST
from cyclelint.astutil import dotted, walk
from cyclelint.judgements import (
    capture_walk,
    concat_of,
    grows,
    held_paths,
    is_weak,
    iter_identifiers,
    named_data,
    slot_wrapper,
    variable_key,
)

pytestmark = pytest.mark.lintpath


def _both(source: str):
    """(libcst expression, ast expression) of one expression's source."""
    return cst.parse_expression(source), ast.parse(source.strip(), mode="eval").body


def _agree(judgement, source: str, *args):
    on_cst, on_ast = _both(source)
    answer = judgement(CST, on_cst, *args)
    assert judgement(AST, on_ast, *args) == answer, source
    return answer


@pytest.mark.parametrize(("source", "path", "expected"), [
    ("acc + loss", "acc", True),
    ("0.9 * self.ema + 0.1 * x", "self.ema", True),
    ("-acc if flag else acc * 2", "acc", True),
    ("torch.cat([acc, new])", "acc", True),
    ("torch.cat(tensors=[acc, new])", "acc", True),  # a keyword argument is still the first argument
    ("torch.cat([*acc, new])", "acc", True),
    ("torch.stack((out, h), dim=0)", "h", True),
    ("f(acc)", "acc", False),  # replaces the old value
    ("Head(acc.size)", "acc", False),
    ("acc.detach() + x", "acc", False),
    ("pieces[0].cat([acc])", "acc", False),  # no dotted callee: not torch.cat
])
def test_grows_on_both_trees(source, path, expected):
    assert _agree(grows, source, path) is expected


@pytest.mark.parametrize(("source", "expected"), [
    ("d[key]", True),
    ("d[self.step]", True),
    ("d[-1]", True),
    ("d[1.5]", True),
    ("d[None]", True),  # a name to libcst, a constant to CPython: both a variable key
    ("d[True]", True),
    ("d[f'{k}']", True),
    ("d[(a, b)]", True),  # one bracketed tuple
    ("d[()]", True),
    ("d['past']", False),
    ("d['pa' 'st']", False),  # one string to CPython, two to libcst
    ("d[b'k']", False),
    ("d[0]", False),
    ("x[:, i]", False),
    ("x[i, j]", False),
    ("d[k,]", True),  # one element to libcst
    ("x[(i), j]", False),
    ("x[1:]", False),
])
def test_variable_key_on_both_trees(source, expected):
    assert _agree(variable_key, source) is expected


@pytest.mark.parametrize(("source", "expected"), [
    ("enumerate(self.train_loader)", ["self", "train_loader"]),
    ("zip(batches, range(len(dataset)))", ["batches", "dataset"]),
    ("d.items()", ["d"]),
    ("map(lambda batch, n=limit: batch, loader)", ["batch", "batch", "limit", "loader", "map", "n"]),
    ("(x for x in data.shards[1:])", ["data", "shards", "x", "x"]),
    ("tqdm(loader, total=len(loader), desc=f'{epoch}')", ["epoch", "loader", "loader"]),
])
def test_iter_identifiers_on_both_trees(source, expected):
    on_cst, on_ast = _both(source)
    assert sorted(iter_identifiers(CST, on_cst)) == sorted(iter_identifiers(AST, on_ast)) == expected


@pytest.mark.parametrize(("source", "expected"), [
    ("self", ["self"]),
    ("(self.model, cb, None, True)", ["cb", "self.model"]),
    ("[*handlers, hook]", ["handlers", "hook"]),
    ("{'owner': self, **extra}", ["extra", "self"]),  # a dict holds its keys and values
    ("{key: net}", ["key", "net"]),
    ("(self,) + args", ["args", "self"]),
    ("a + b", []),  # arithmetic makes a new value
    ("net if flag else None", ["net"]),
    ("[m for m in self.children()]", ["m"]),
    ("{k: v.detach() for k, v in state.items()}", []),
    ("weakref.ref(self)", []),  # a call holds nothing
])
def test_held_paths_on_both_trees(source, expected):
    on_cst, on_ast = _both(source)
    assert sorted(held_paths(CST, on_cst)) == sorted(held_paths(AST, on_ast)) == expected


def test_a_starred_argument_holds_what_it_unpacks():
    call = ast.parse("f(*hooks, owner=self)", mode="eval").body
    assert [p for a in call.args + [k.value for k in call.keywords] for p in ast_reading.held_paths(a)] == [
        "hooks", "self"]


@pytest.mark.parametrize(("source", "in_module", "expected"), [
    ("self.train_loader", True, (True, False)),  # a strong data name, even in a module's method
    ("range(len(dataset))", True, (True, False)),
    ("range(self.num_batches)", True, (False, False)),  # a count is named by len's argument only
    ("range(steps)", False, (True, True)),  # outside a module: a repeated step, weakly
    ("range(steps)", True, (False, False)),
    ("enumerate(samples)", False, (True, True)),  # a weak data name outside a module
    ("enumerate(samples)", True, (False, False)),
    ("items", False, (False, False)),
    ("self.blocks", True, (False, False)),
])
def test_named_data_on_both_trees(source, in_module, expected):
    on_cst, on_ast = _both(source)
    answers = [named_data(r, tree, iter_identifiers(r, tree), in_module) for r, tree in ((CST, on_cst), (AST, on_ast))]
    assert answers == [expected, expected]


@pytest.mark.parametrize(("source", "holders", "expected"), [
    ("with_counter(opt.step, opt)", {"opt"}, ("opt", {"opt"})),
    ("with_counter(self.opt.step, self.opt)", {"self", "self.opt"}, ("self.opt", {"self.opt"})),
    ("torch.compile(self.step)", {"self"}, (None, {"self"})),  # keeps self only if step is a method
    ("with_counter(other.step, opt)", {"opt"}, None),  # not the attribute it replaces
    ("with_counter(opt.zero_grad, opt)", {"opt"}, None),
])
def test_slot_wrapper_on_both_trees(source, holders, expected):
    assert _agree(slot_wrapper, source, holders, "step") == expected


@pytest.mark.parametrize(("source", "expected"), [
    ("weakref.ref(self)", True),
    ("WeakMethod(self.step)", True),
    ("weakref.WeakValueDictionary()", True),
    ("weakref.finalize(obj, cleanup)", True),
    ('torch.__dict__.setdefault("registry", weakref.WeakSet())', True),  # the weak default is what stays
    ('getattr(mod, "_hooks", weakref.WeakSet())', True),
    ('registry.setdefault("k", [])', False),
    ('registry.setdefault(*args, weakref.WeakSet())', False),  # where the default lands is unknown
    ("make().ref(x)", True),  # the method's name, when the callee has no dotted name
    ("Hook(weakref.ref(self))", False),  # the hook itself is a strong holder
    ("proxy", False),  # not a call
])
def test_is_weak_on_both_trees(source, expected):
    assert _agree(is_weak, source) == expected


def _visited(reading, value, stop_at=()) -> list[tuple[str, str | None]]:
    """(kind, dotted path or callee) of every node capture_walk hands its visitor, in order."""
    seen = []

    def visit(node, kind):
        path = reading.dotted(reading.func(node) if kind == "call" else node)
        seen.append((kind, path))
        return path in stop_at

    capture_walk(reading, value, visit)
    return seen


@pytest.mark.parametrize(("source", "expected"), [
    ("lambda: self.step()", [("lambda", None)]),
    ("self._impl", [("attribute", "self._impl")]),
    ("(cb, {'k': self.f, **more}, lambda: 0)",
     [("name", "cb"), ("attribute", "self.f"), ("name", "more"), ("lambda", None)]),
    ("Thread(target=self.run, daemon=True)", [("call", "Thread"), ("attribute", "self.run"), ("name", "True")]),
    ("torch.compile(self.forward) if fast else None",
     [("call", "torch.compile"), ("attribute", "self.forward"), ("name", "None")]),
    ("Hook(partial(f, self))", [("call", "Hook"), ("call", "partial")]),  # a partial's arguments are its own
    ("helper(self.f)", [("call", "helper")]),  # a plain call makes a new value
    ("[*handlers, h]", [("name", "handlers"), ("name", "h")]),
])
def test_capture_walk_visits_the_same_parts_on_both_trees(source, expected):
    on_cst, on_ast = _both(source)
    assert _visited(CST, on_cst) == _visited(AST, on_ast) == expected


def test_a_call_the_visitor_takes_is_not_opened():
    on_cst, on_ast = _both("Wrapper(Inner(self.f), self.g)")
    expected = [("call", "Wrapper"), ("call", "Inner"), ("attribute", "self.g")]
    assert _visited(CST, on_cst, {"Inner"}) == _visited(AST, on_ast, {"Inner"}) == expected


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code calls literals
@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=60)
@given(hypothesmith.from_grammar("eval_input"))
def test_generated_expressions_are_judged_alike(source):
    source = unicodedata.normalize("NFKC", source)  # as CPython reads identifiers; libcst keeps them as written
    try:
        on_cst, on_ast = _both(source)
        store_cst, store_ast = _both(f"_[{source.strip()}]")
    except (SyntaxError, cst.ParserSyntaxError, ValueError, RecursionError):
        return  # what one parser refuses says nothing about the judgements
    assert sorted(iter_identifiers(CST, on_cst)) == sorted(iter_identifiers(AST, on_ast))
    for path in {p for n in walk(on_ast) if (p := dotted(n))}:
        assert grows(CST, on_cst, path) == grows(AST, on_ast, path)
        assert concat_of(CST, on_cst, path) == concat_of(AST, on_ast, path)
    assert sorted(held_paths(CST, on_cst)) == sorted(held_paths(AST, on_ast))
    assert _visited(CST, on_cst) == _visited(AST, on_ast)
    assert variable_key(CST, store_cst) == variable_key(AST, store_ast)
    assert is_weak(CST, on_cst) == is_weak(AST, on_ast)
