"""A draw from a torch.distributions object carries no graph: ``Distribution.sample()`` runs under ``no_grad`` (the
reparameterised ``rsample()`` keeps it), and a tensor has no such method, so a graph-attached receiver of
``.sample()`` is a distribution (spikingjelly 2.0.0's PPO examples keep ``action = dist.sample()`` for every step of
a rollout, pfrl 0.1.0's ACER ``action_distrib.sample()[0]`` per step). Checked against torch: Normal, Categorical and
Independent draws have ``requires_grad`` False, their ``rsample()`` True."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

ROLLOUT = """\
import torch


def rollout(model, envs, state, num_steps):
    actions = []
    for _ in range(num_steps):
        dist, value = model(state)
        action = {draw}
        state = envs.step(action)
        actions.append(action)
    return torch.cat(actions)
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("draw", "kept"), [
    ("dist.sample()", False),
    ("dist.sample()[0]", False),
    ("dist.sample_n(4)", False),
    ("dist.rsample()", True),  # reparameterised: the draw is a function of the model's output
    ("dist.mean", True),
])
def test_a_draw_of_a_policys_distribution(draw, kept, prefilter):
    result = lint_source(ROLLOUT.format(draw=draw), "ppo.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    assert [(f.line, f.code) for f in result.findings] == ([(10, "CYC302")] if kept else [])


def test_torch_draws_without_grad():
    torch = pytest.importorskip("torch")
    mu = torch.zeros(3, requires_grad=True)
    normal = torch.distributions.Normal(mu, 1.0)
    assert not normal.sample().requires_grad and normal.rsample().requires_grad
    assert not torch.distributions.Categorical(logits=mu).sample().requires_grad
