"""``self.step(...)`` where the class defines ``step`` itself (torchrl 0.14.1 ``EnvBase._rollout_nonstop``: an
environment's step, envs/common.py:4076-4084) is no optimizer step: a list of one rollout's states, returned, is
that call's result. It is a training step when that method, or a method of its class it calls on its instance,
back-propagates or steps an optimizer; and ``self.step()`` of a class that does not define it (inherited from a
base elsewhere) is read as before, as a step. A base class of the same file counts as the class (DI-engine 0.5.3
``DreamWorldModel.rollout`` calls the abstract ``step`` of its base ``WorldModel``, world_model/base_world_model.py:
113, 269-347), the class's own definition and the first base's winning, as in Python's lookup."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

ROLLOUT = """\
import torch


class Env:
    def __init__(self):
        self.dynamics = torch.nn.Linear(6, 4)
        self.opt = torch.optim.SGD(self.dynamics.parameters(), lr=0.1)

    def {name}(self, state, action):
        out = self.dynamics(torch.cat([state, action], -1))
{body}
        return out

    def _apply(self, loss):
        {helper}

    def rollout(self, policy, state, max_steps):
        trajectory = []
        for _ in range(max_steps):
            reached = self.dynamics(torch.cat([state, policy(state)], -1))
            self.step(state, reached)
            trajectory.append(reached)
            state = observe(reached)
        return torch.stack(trajectory)
"""


def found(text: str, prefilter: bool) -> list[tuple[int, str]]:
    result = lint_source(text, "env.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings if f.code.startswith("CYC30")]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("name", "body", "helper", "kept"), [
    ("step", "", "pass", False),  # an environment's step
    ("step", "        self.step(state, action)", "pass", False),  # calls itself: no loop in the reading
    ("step", "        out.sum().backward()", "pass", True),
    ("step", "        self.opt.step()", "pass", True),
    ("step", "        torch.autograd.backward(out.sum())", "pass", True),
    ("step", "        self._apply(out.sum())", "loss.backward()", True),  # through a helper of the class
    ("step", "        self._apply(out.sum())", "pass", False),
    ("advance", "", "pass", True),  # step is not the class's own: inherited, read as an optimizer's
])
def test_own_step(name, body, helper, kept, prefilter):
    text = ROLLOUT.format(name=name, body=body, helper=helper)
    assert found(text, prefilter) == ([(22, "CYC302")] if kept else [])


INHERITED = """\
import torch


class Model:
    def step(self, state, action):
        {base}


class Other:
    def step(self, state, action):
        self.opt.step()


class Dream({bases}):
{own}
    def rollout(self, policy, state, horizon):
        trajectory = []
        for _ in range(horizon):
            action = policy(state)
            state = self.step(state, action)
            trajectory.append(action)
        return torch.stack(trajectory)
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("base", "bases", "own", "kept"), [
    ("raise NotImplementedError", "Model", "", False),  # an abstract environment step of the file's base
    ("raise NotImplementedError", "Model, Other", "", False),  # the first base's step is the one called
    ("raise NotImplementedError", "Other, Model", "", True),
    ("loss = self.critic(state).sum()\n        loss.backward()", "Model", "", True),
    ("raise NotImplementedError", "Model", "    def step(self, state, action):\n        self.opt.step()\n", True),
    ("raise NotImplementedError", "Elsewhere", "", True),  # a base the file does not define
])
def test_step_of_a_base_in_the_file(base, bases, own, kept, prefilter):
    text = INHERITED.format(base=base, bases=bases, own=own)
    line = text.splitlines().index("            trajectory.append(action)") + 1
    assert found(text, prefilter) == ([(line, "CYC302")] if kept else [])
