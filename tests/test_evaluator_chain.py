"""A chain of method calls is evaluated in linear work: a call's receiver is asked about as a
receiver and again as part of the callee, which once doubled the work at every link (torch's
``QConfigMapping().set_global(..).set_object_type(..)`` x23 ran for hours)."""
from cyclelint.analysis import tensors
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

LINKS = 40
SOURCE = (
    "import torch\n\n"
    "def build(model, loader):\n"
    "    for x in loader:\n"
    "        loss = model(x)\n"
    "    return (Mapping().set_global(1)"
    + "".join(f"\n            .set_object_type({i}, 2)" for i in range(LINKS))
    + ")\n"
)


def test_each_link_of_a_call_chain_is_evaluated_a_bounded_number_of_times(monkeypatch):
    seen: dict[int, int] = {}
    original = tensors.Evaluator._value

    def counting(self, expr, fn):
        seen[id(expr)] = seen.get(id(expr), 0) + 1
        return original(self, expr, fn)

    monkeypatch.setattr(tensors.Evaluator, "_value", counting)
    result = lint_source(SOURCE, "chain.py", DEFAULT_CODES, prefilter=False)
    assert result.error is None
    assert seen, "the evaluator was not asked about the chain"
    # at most once per top-level question (the walker asks about each call of the statement: linear in
    # the links); without the memo the receiver at depth k was evaluated 2^k times per question
    assert max(seen.values()) <= 2 * LINKS
