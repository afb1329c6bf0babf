"""``zip`` pairs each loop target with one iterable: Megatron 0.16.1's inference engine walks
``zip(request_ids.tolist(), sample.tolist(), log_probs_iter)`` and keeps each ``request_id`` in a set on the engine;
the ids are Python numbers whatever the log-probs hold. The target paired with the graph-carrying iterable, a target
of ``zip(*lists)`` and the whole tuple bound to one name stay reported."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

ENGINE = """\
import torch


class Engine:
    def __init__(self, model):
        self.model = model
        self.finished = set()

    def step(self, request_ids, batch):
        logits = self.model(batch)
        log_probs = torch.log_softmax(logits, -1)
        sample = logits.argmax(-1)
        for {target} in {walked}:
            self.finished.add({kept})
"""


@pytest.mark.parametrize(("target", "walked", "kept", "reported"), [
    ("request_id, token, lp", "zip(request_ids.tolist(), sample.tolist(), log_probs)", "request_id", False),
    ("i, (request_id, lp)", "enumerate(zip(request_ids.tolist(), log_probs))", "request_id", False),
    ("request_id, token, lp", "zip(request_ids.tolist(), sample.tolist(), log_probs)", "lp", True),
    ("request_id, lp", "zip(*[request_ids.tolist(), log_probs])", "request_id", True),
    ("pair", "zip(request_ids.tolist(), log_probs)", "pair", True),
])
def test_zip_pairs_each_target_with_its_iterable(target, walked, kept, reported):
    assert reports(ENGINE.format(target=target, walked=walked, kept=kept), "CYC305") is reported
