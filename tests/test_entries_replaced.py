"""Stores that replace an entry rather than grow a table call by call (CYC305).

A store keyed by a tensor's device keeps one slot per device, replaced by every call: vit-pytorch 1.26.14
dino.py:143-145 keeps a forward hook's output as ``self.hidden[device] = output.flatten(1)`` with
``device = input[0].device``, and pyiqa 0.1.16 ahiq_arch.py:49 starts one list per device with
``self.outputs[module_out.device] = [module_out]``. Nothing grows with the calls. Appending to the per-device list
still grows it, and a key that is anything else (a tensor, a step) is still a table that may grow."""
import pytest

from cyclelint.engine import lint_source

pytestmark = pytest.mark.lintpath

TRACKER = """\
class Tracker:
    def __init__(self, model):
        self.model = model
        self.hidden = {{}}
        self.step = 0

    def keep(self, x):
        output = self.model(x)
        {key_line}
        {store}
"""


@pytest.mark.parametrize(("key_line", "store", "reported"), [
    ("device = x.device", "self.hidden[device] = output.flatten(1)", False),  # vit-pytorch
    ("pass", "self.hidden[output.device] = [output]", False),  # pyiqa
    ("pass", "self.hidden[output.device].append(output)", True),  # the list per device grows
    ("device = x", "self.hidden[device] = output.flatten(1)", True),  # keyed by a tensor, not its device
    ("self.step += 1", "self.hidden[self.step] = output", True),  # one new key per call
    ("device = x.device", "self.hidden[f\"{{device}}{{self.step}}\"] = output", True),  # not the device alone
    ("device = x.device\n        device = self.step", "self.hidden[device] = output", True),  # rebound
])
def test_a_slot_per_device_is_replaced_not_grown(key_line, store, reported):
    source = TRACKER.format(key_line=key_line, store=store).encode()
    found = lint_source(source, "tracker.py", frozenset({"CYC305"})).findings
    assert bool(found) is reported, found


WRAPPER = """\
class ListWrapper:
    def __init__(self, model):
        self.model = model
        self.value = {{}}
        self.count = 0

    def __setitem__(self, key, value):
        output = self.model(value)
        {key_line}
        {store}
"""


@pytest.mark.parametrize(("key_line", "store", "reported"), [
    ("ukey = key.value", "self.value[ukey] = output", False),  # lightning-thunder's interpreted list
    ("pass", "self.value[key] = output", False),
    ("pass", "self.value.append(output)", True),  # grows whatever the key
    ("self.count += 1", "self.value[self.count] = output", True),  # a key of its own, one more per call
    ("ukey = self.count", "self.value[ukey] = output", True),
])
def test_item_assignment_under_the_key_it_is_given(key_line, store, reported):
    source = WRAPPER.format(key_line=key_line, store=store).encode()
    found = lint_source(source, "wrapper.py", frozenset({"CYC305"})).findings
    assert bool(found) is reported, found


def test_a_method_of_another_name_keyed_by_its_argument_still_grows():
    source = WRAPPER.format(key_line="pass", store="self.value[key] = output").replace("__setitem__", "put")
    assert lint_source(source.encode(), "wrapper.py", frozenset({"CYC305"})).findings
