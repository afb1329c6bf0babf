"""A loop over a list the call filled itself is judged by how it was filled, not by its name: filled from the
call's own input outside any loop over data, it holds the pieces of one input (flair 0.15.1
models/language_model.py:131-164, a call's strings cut into character chunks, run through the RNN chunk by chunk
and concatenated); filled inside a loop over data that it outlives, it holds that data, whatever it is called; made
anew by each iteration of such a loop, it holds that iteration's pieces."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

EVALUATE = """\
import torch


def run(model, text, loader, size):
    {made}
    for {walked} in {source}:
        {name}.append({piece})
    outputs = []
    for batch in {name}:
        outputs.append(model(batch))
    return torch.cat(outputs)
"""

PER_BATCH = """\
import torch


def run(model, loader):
    outputs = []
    for x in loader:
        {name} = []
        for i in range(2):
            {name}.append(x[i::2])
        kept = []
        for half in {name}:
            kept.append(model(half))
        outputs.append(torch.cat(kept).sum().item())
    return outputs
"""


def _findings(source: str, prefilter: bool) -> list[tuple[int, str]]:
    result = lint_source(source, "run.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("name", "walked", "source", "piece", "flagged"), [
    # the pieces of one call's input: no fresh data, whatever the list is called
    ("batches", "begin", "range(0, text.shape[0], size)", "text[begin:begin + size]", False),
    ("batches", "chunk", "text.split(size)", "chunk.t()", False),
    # filled from the data: each pass takes a fresh batch, whatever the list is called
    ("batches", "x", "loader", "x", True),
    ("collected", "x", "loader", "x", True),
    ("collected", "i", "range(len(loader))", "loader[i]", True),
])
def test_a_list_the_call_filled(name, walked, source, piece, flagged, prefilter):
    made = f"{name} = []"
    source_text = EVALUATE.format(made=made, walked=walked, source=source, name=name, piece=piece)
    assert _findings(source_text, prefilter) == ([(10, "CYC302")] if flagged else [])


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize("name", ["halves", "batches"])
def test_a_list_made_anew_for_each_batch_holds_its_pieces(name, prefilter):
    assert _findings(PER_BATCH.format(name=name), prefilter) == []


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
def test_a_list_given_elements_is_not_one_the_call_fills(prefilter):
    """Only an empty list made here counts as filled by this call: ``[first]`` may start from the caller's data."""
    source_text = EVALUATE.format(made="batches = [text]", walked="x", source="loader", name="batches", piece="x")
    assert _findings(source_text, prefilter) == [(10, "CYC302")]


DIRECT = """\
import torch


def run(model, text, loader, samples, steps, size):
    outputs = []
    for batch in {source}:
        outputs.append(model(batch))
    return torch.cat(outputs)
"""

COLLECTED = """\
import torch


def run(model, text, loader, samples, steps, size):
    pieces = []
    for piece in {source}:
        pieces.append(piece)
    outputs = []
    for batch in pieces:
        outputs.append(model(batch))
    return torch.cat(outputs)
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize("source", ["loader", "samples", "range(steps)", "text.split(size)", "zip(loader, samples)"])
def test_walking_a_collected_list_is_walking_what_filled_it(source, prefilter):
    """Collecting the iterable into a list first changes nothing: a strong name's data stays data, a weak one's
    stays weak (a call's result when combined), one tensor's pieces stay pieces."""
    direct = [code for _, code in _findings(DIRECT.format(source=source), prefilter)]
    collected = [code for _, code in _findings(COLLECTED.format(source=source), prefilter)]
    assert collected == direct

