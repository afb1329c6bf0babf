"""Two callables that keep nothing: a hook registered as the item of a ``with`` statement, whose handle removes it
on exit (torch's ``RemovableHandle`` is a context manager; fairseq2 0.8.1's w2v-BERT runs its encoder inside
``with self.w2v2_model.encoder.register_layer_hook(hook):``), and a lambda or function at a module's top level, which
reads the globals it names when it is called and captures no value (brevitas 0.13.4's vendored
``immutable_list.__reduce__ = lambda self: (immutable_list, ...)``). A handle kept instead of entered, a hook
registered inside the ``with`` body, and the same lambda in a function stay reported."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

ENCODER = """\
import torch


class Encoder(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.kept = None

    def forward(self, x):
        def hook(module, args, output):
            self.kept = output.detach()

{register}
        return self.inner(x)
"""


@pytest.mark.parametrize(("register", "reported"), [
    ("        with self.inner.register_forward_hook(hook):\n            y = self.inner(x)", False),
    ("        with torch.no_grad(), self.inner.register_forward_hook(hook) as handle:\n            y = self.inner(x)",
     False),
    ("        handle = self.inner.register_forward_hook(hook)\n        y = self.inner(x)", True),
    ("        with torch.no_grad():\n            self.inner.register_forward_hook(hook)", True),
])
def test_a_hook_entered_as_a_context_is_removed_on_exit(register, reported):
    assert reports(ENCODER.format(register=register), "CYC104") is reported


TOP_LEVEL = """\
def immutable(base):
    return type("immutable_" + base.__name__, (base,), {})


Frozen = immutable(list)
Frozen.__reduce__ = lambda self: (Frozen, (tuple(self),))


def reduce_frozen(self):
    return Frozen, (tuple(self),)


Frozen.__copy__ = reduce_frozen
"""

IN_A_FUNCTION = """\
def make(model):
    model.describe = lambda: repr(model)
    return model
"""


def test_a_module_level_lambda_captures_no_global():
    assert not reports(TOP_LEVEL, "CYC101") and not reports(TOP_LEVEL, "CYC102")


def test_a_lambda_in_a_function_captures_its_local():
    assert reports(IN_A_FUNCTION, "CYC101")
