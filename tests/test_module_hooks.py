"""CYC305 across a module hook's calls (fixtures/cyc3/module_hook_leak.py and module_hook_clean.py): what the hook
keeps, in what, whether the file trains, with what grad mode the hook is registered, and who empties the container."""
import ast
import textwrap

import pytest

from cyclelint.engine import lint_source
from cyclelint.prefilter.scan import Scan

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

LEAK = (FIXTURES / "cyc3" / "module_hook_leak.py").read_text()
CLEAN = (FIXTURES / "cyc3" / "module_hook_clean.py").read_text()
FLAGGED = [(18, "CYC305"), (27, "CYC305"), (42, "CYC305")]

SCRIPT = """\
import torch
from functools import partial

features = []

def hook(module, inputs, output):
    features.append(output)

model = torch.nn.Linear(4, 2)
model.register_forward_hook(hook)
for x in loader:
    model(x).sum().backward()
"""


def _found(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source.encode(), "hooks.py", frozenset({"CYC305"})).findings)


def test_the_fixtures():
    assert _found(LEAK) == FLAGGED
    assert _found(CLEAN) == []


@pytest.mark.parametrize(("stored", "flagged"), [
    ("output", True),
    ("output[0]", True),
    ("(output, module)", True),
    ("output.cpu()", True),  # a CPU tensor is itself: its graph comes along
    ("output.mean()", True),  # computed with grad on: a graph of its own that reaches the forward pass
    ("output.detach()", False),
    ("output.detach().cpu()", False),
    ("output.shape", False),
    ("inputs", False),  # a forward hook's inputs are what the caller passed, not what this module computed
])
def test_what_the_hook_keeps(stored, flagged):
    source = SCRIPT.replace("features.append(output)", f"features.append({stored})")
    assert _found(source) == ([(7, "CYC305")] if flagged else [])


@pytest.mark.parametrize(("registration", "params"), [
    ("register_forward_pre_hook(hook)", "module, inputs"),
    ("register_full_backward_hook(hook)", "module, grad_input, output"),
    ("register_forward_hook(hook, with_kwargs=True)", "module, args, kwargs, output"),
    ("register_forward_hook(partial(hook, 'fc'))", "name, module, inputs, output"),
])
def test_each_hook_kind_gives_its_own_parameter(registration, params):
    source = SCRIPT.replace("register_forward_hook(hook)", registration).replace(
        "module, inputs, output", params)
    kept = params.split(", ")[-1]
    assert _found(source.replace("features.append(output)", f"features.append({kept})")) == [(7, "CYC305")]
    other = params.split(", ")[-2]
    assert _found(source.replace("features.append(output)", f"features.append({other}.weight)")) == []


def test_a_file_that_runs_no_backward_pass_is_quiet():
    """Features extracted for inference: the forward passes may run under no_grad anywhere."""
    assert _found(SCRIPT.replace("model(x).sum().backward()", "model(x)")) == []


def test_a_hook_registered_with_grad_off_is_quiet():
    source = SCRIPT.replace("model.register_forward_hook(hook)",
                            "with torch.no_grad():\n    model.register_forward_hook(hook)")
    assert _found(source) == []


@pytest.mark.parametrize("emptied", [
    "    features.clear()",
    "    del features[:]",
    "    features.pop()",
    "    features = []",  # rebound in the loop: each step appends to a new list
])
def test_a_container_emptied_in_the_file_is_quiet(emptied):
    assert _found(SCRIPT + emptied + "\n") == []


SCOPED = """\
import torch

def explain(model, x):
    scores = []

    def hook(module, inputs, output):
        scores.append(output)

    handles = [model.register_forward_hook(hook)]
    try:
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return torch.autograd.grad(torch.cat(scores).sum(), x)
"""


@pytest.mark.parametrize(("change", "flagged"), [
    (("", ""), False),  # removed before the function returns, which owns the container
    (("handles = [model.register_forward_hook(hook)]",
      "handle = model.register_forward_hook(hook)\n    handles = [handle]"), False),
    (("handles = [model.register_forward_hook(hook)]",
      "handles = []\n    handles.append(model.register_forward_hook(hook))"), False),
    (("handles = [model.register_forward_hook(hook)]",
      "kept = model.register_forward_hook(hook)\n    handles = []"), True),  # another handle is removed
    (("        for handle in handles:\n            handle.remove()", "        pass"), True),  # never removed
    (("    scores = []\n", ""), True),  # a container of the module: it keeps what every call of explain() gave it
])
def test_a_hook_removed_by_the_function_that_owns_its_container(change, flagged):
    source = SCOPED.replace(*change)
    if "scores = []" in change[0]:
        source = "scores = []\n" + source
    line = source.splitlines().index("        scores.append(output)") + 1
    assert _found(source) == ([(line, "CYC305")] if flagged else [])


def test_a_function_not_registered_is_no_hook():
    assert _found(SCRIPT.replace("model.register_forward_hook(hook)", "model.register_forward_hook(print)")) == []
    assert _found(SCRIPT.replace("model.register_forward_hook(hook)", "model.register_buffer('b', None)")) == []


def test_an_entry_per_module_is_overwritten_and_an_entry_per_call_grows():
    by_module = SCRIPT.replace("features = []", "features = {}").replace(
        "features.append(output)", "features[module] = output")
    assert _found(by_module) == []
    by_call = by_module.replace("features[module] = output", "key = len(features)\n    features[key] = output")
    assert _found(by_call) == [(8, "CYC305")]


def test_what_a_factory_returns_is_the_hook():
    source = SCRIPT.replace("def hook(module, inputs, output):\n    features.append(output)\n", textwrap.dedent("""\
        def make(name):
            def hook(module, inputs, output):
                features.append(output)
            def unused(module, inputs, output):
                features.append(output)
            return hook
        """)).replace("register_forward_hook(hook)", "register_forward_hook(make('fc'))")
    assert _found(source) == [(8, "CYC305")]


def test_a_lambda_hook():
    source = SCRIPT.replace("model.register_forward_hook(hook)",
                            "model.register_forward_hook(lambda m, i, o: features.append(o))")
    assert _found(source) == [(10, "CYC305")]
    assert _found(source.replace("features.append(o)", "features.append(o.detach())")) == []
    assert _found(source.replace("features.append(o)", "features.append(i)")) == []
    assert _found(source.replace("features.append(o)", "o.append(m)")) == []


def test_the_prefilter_sends_registrations_on():
    scan = Scan({"CYC305"})
    assert scan.run(ast.parse("model.register_forward_hook(hook)\n"))
    assert scan.reason.startswith("CYC305: ")


def test_emptied_outside_the_steps_still_keeps_an_epoch():
    assert _found(SCRIPT + "\ndef reset():\n    features.clear()\n") == [(7, "CYC305")]


CALLABLE = """\
import torch

class SaveOutput:
    def __init__(self):
        self.outputs = []

    def __call__(self, module, module_in, module_out):
        self.outputs.append(module_out)

    def clear(self):
        self.outputs = []

save_output = SaveOutput()
model = torch.nn.Linear(4, 2)
model.register_forward_hook(save_output)
"""


@pytest.mark.parametrize(("registration", "flagged"), [
    ("model.register_forward_hook(save_output)", True),
    ("model.register_forward_hook(SaveOutput())", True),
    ("model.register_forward_pre_hook(save_output)", False),  # a pre-hook's second parameter is the input
    ("model.register_forward_hook(print)", False),
])
def test_an_object_whose_call_is_the_hook(registration, flagged):
    source = CALLABLE.replace("model.register_forward_hook(save_output)", registration)
    assert _found(source) == ([(8, "CYC305")] if flagged else [])
