"""A container made anew by each step of an enclosing loop and grown by a count inside that step (torch_geometric
2.8.1 ``GraphMaskExplainer._train_explainer``: ``gates, total_penalty = [], 0`` at the top of each epoch, then one
entry per layer) holds that step's pieces: the next step drops them. An inner loop that steps itself (a backward or
an optimizer step per iteration), or walks data, keeps every iteration's graph until the outer step ends: flagged,
as is the same count loop with no enclosing step."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

EPOCHS = """\
def train(model, x, loader, epochs, opt, num_layers):
    for _ in range(epochs):
        gates, penalty = [], 0
        for {inner}:
            out = model(x)
{body}
            gates.append(out)
            penalty += out.sum()
        loss = model(x).sum() + penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def found(text: str, prefilter: bool = True) -> list[tuple[int, str]]:
    result = lint_source(text, "steps.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("inner", "body", "kept"), [
    ("i in range(num_layers)", "", False),
    ("i in range(num_layers)", "            out.sum().backward(retain_graph=True)", True),  # steps itself
    ("i in range(num_layers)", "            opt.step()", True),
    ("batch in loader", "", True),  # each iteration takes fresh data: every batch's graph kept for the epoch
])
def test_inside_an_epoch(inner, body, kept, prefilter):
    # the penalty is back-propagated on purpose (it is part of the loss): only the list is reported
    assert found(EPOCHS.format(inner=inner, body=body), prefilter) == ([(7, "CYC302")] if kept else [])


def test_without_an_enclosing_step():
    text = "def probe(model, x, steps):\n    kept = []\n    for _ in range(steps):\n        kept.append(model(x))\n"
    assert found(text) == [(4, "CYC302")]


def test_a_container_made_once_outside_the_epochs():
    text = EPOCHS.replace("        gates, penalty = [], 0\n", "").replace(
        "    for _ in range(epochs):\n", "    gates, penalty = [], 0\n    for _ in range(epochs):\n")
    assert found(text.format(inner="i in range(num_layers)", body="")) == [(7, "CYC302")]
