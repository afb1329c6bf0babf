"""CYC104 for a hook registered through a method of the instance's own class (``self.register_mutation_hook(
self.reinit)``): what that method does with the hook is read from its definition, in this file or another,
through the objects it hands the hook to (agilerl 2.58's ``EvolvableAlgorithm.register_mutation_hook`` hands it to
``MutationRegistry.register_hook``, which keeps ``hook.__name__``, a string). And a hook ``self.m`` inherited from a
base of another file is bound or not as that base defines it (mmpretrain's static ``Flamingo._load_adapter_hook``)."""
import json
import textwrap

import pytest

pytestmark = pytest.mark.lintpath

REGISTRY = """\
class MutationRegistry:
    def __init__(self):
        self.hooks = []

    def register_hook(self, hook):
        {keep}
"""
BASE = """\
from registry import MutationRegistry


class Algorithm(Generic[T]):
    def __init__(self):
        self.registry = MutationRegistry()

    def register_mutation_hook(self, hook):
        {hand}

    def mutation_hook(self):
        for name in self.registry.hooks:
            getattr(self, name)()
"""
ALGO = """\
from base import Algorithm


class DDPG(Algorithm[int]):
    def __init__(self, actor):
        super().__init__()
        self.actor = actor
        self.register_mutation_hook(self.reinit)

    def reinit(self):
        self.actor.reset_parameters()
"""
BY_NAME = "self.hooks.append(hook.__name__)"
HAND_ON = "self.registry.register_hook(hook)"


def write(tmp_path, keep=BY_NAME, hand=HAND_ON, algo=ALGO):
    (tmp_path / "registry.py").write_text(REGISTRY.format(keep=keep))
    (tmp_path / "base.py").write_text("from typing import Generic, TypeVar\n\nT = TypeVar('T')\n" + BASE.format(hand=hand))
    (tmp_path / "algo.py").write_text(algo)


def rows(cyclelint, cwd, *args):
    proc = cyclelint("--format", "json", "--select", "CYC104", *args, cwd=cwd)
    return [(f["path"], f["line"]) for f in json.loads(proc.stdout)["findings"]]


@pytest.mark.parametrize("args", [("--no-cache", "--jobs", "1"), ("--no-cache", "--jobs", "2"), ()])
def test_a_hook_kept_by_its_name_two_files_away_is_quiet(tmp_path, cyclelint, args):
    write(tmp_path)
    assert rows(cyclelint, tmp_path, *args, ".") == []
    assert rows(cyclelint, tmp_path, *args, ".") == []  # again: from the cache
    (tmp_path / "pyproject.toml").write_text("")  # the pre-commit case: the staged file judged with its project
    assert rows(cyclelint, tmp_path, *args, "algo.py") == []


@pytest.mark.parametrize("keep, hand", [
    ("self.hooks.append(hook)", HAND_ON),  # the registry keeps the hook itself
    ("self.hooks.append((hook.__name__, hook))", HAND_ON),
    ("atexit.register(hook)", HAND_ON),  # handed to a function the project does not define
    ("self.hooks.append(hook.__self__)", HAND_ON),  # an attribute that is the instance
    ("self.hooks.append(lambda: hook())", HAND_ON),  # a closure over it
    (BY_NAME, "self.hooks = [hook]"),  # the base keeps it on the instance
    (BY_NAME, "self.registry.register_hook(hook)\n        self.last = hook"),
    (BY_NAME, "self.other.register_hook(hook)"),  # an object whose class is not known
    (BY_NAME, "return hook"),
])
def test_a_hook_any_method_on_the_way_keeps_is_reported(tmp_path, cyclelint, keep, hand):
    write(tmp_path, keep=keep, hand=hand)
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./algo.py", 8)]


def test_the_registry_attribute_set_to_something_else_too_is_reported(tmp_path, cyclelint):
    write(tmp_path)
    base = tmp_path / "base.py"
    base.write_text(base.read_text().replace(
        "    def mutation_hook(self):", "    def reset(self, registry):\n        self.registry = registry\n\n"
                                       "    def mutation_hook(self):"))
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./algo.py", 8)]


def test_a_subclass_override_that_keeps_the_hook_is_reported(tmp_path, cyclelint):
    write(tmp_path, algo=ALGO + "\n    def register_mutation_hook(self, hook):\n        self.hooks = [hook]\n")
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./algo.py", 8)]


def test_without_the_defining_files_the_hook_is_reported(tmp_path, cyclelint):
    write(tmp_path)
    (tmp_path / "registry.py").unlink()
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./algo.py", 8)]
    (tmp_path / "base.py").unlink()
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./algo.py", 8)]


def test_one_file_with_both_classes(tmp_path, cyclelint):
    (tmp_path / "algo.py").write_text(REGISTRY.format(keep=BY_NAME) + "\n\n" + textwrap.dedent("""\
        class DDPG:
            def __init__(self, actor):
                self.registry = MutationRegistry()
                self.register_mutation_hook(self.reinit)
                self.actor = actor

            def register_mutation_hook(self, hook):
                self.registry.register_hook(hook)

            def reinit(self):
                self.actor.reset_parameters()
        """))
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == []
    text = (tmp_path / "algo.py").read_text().replace(BY_NAME, "self.hooks.append(hook)")
    (tmp_path / "algo.py").write_text(text)
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./algo.py", 12)]


def test_a_torch_registration_on_the_instance_stays_reported(tmp_path, cyclelint):
    (tmp_path / "tap.py").write_text(textwrap.dedent("""\
        import torch.nn as nn


        class Tap(nn.Module):
            def __init__(self):
                super().__init__()
                self.acts = []
                self.register_forward_hook(self._hook)

            def _hook(self, module, args, out):
                self.acts.append(out)
        """))
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./tap.py", 8)]


def test_a_hand_off_to_a_method_not_named_like_a_registration_is_reported(tmp_path, cyclelint):
    """Only methods named like a hook registration are read (argument_drops.py): ``Registry.add`` is not."""
    write(tmp_path, hand="self.registry.add(hook)")
    registry = tmp_path / "registry.py"
    registry.write_text(registry.read_text().replace("def register_hook(", "def add("))
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./algo.py", 8)]


FLAMINGO = """\
import torch.nn as nn


class Flamingo(nn.Module):
    {decorator}
    def _load_adapter_hook({params}):
        pass

    def __init__(self):
        super().__init__()
        self.perceiver = nn.Linear(8, 8)
"""
OTTER = """\
from flamingo import Flamingo


class Otter(Flamingo):
    def __init__(self):
        super().__init__()
        self.register_load_state_dict_post_hook(self._load_adapter_hook)
"""


@pytest.mark.parametrize(("decorator", "params", "found"), [
    ("@staticmethod", "module, incompatible_keys", []),  # mmpretrain 1.2.0's Otter, Flamingo's static hook
    ("@classmethod", "cls, module, incompatible_keys", []),
    ("", "self, module, incompatible_keys", [("./otter.py", 7)]),  # a bound method: it keeps the instance
])
def test_a_hook_inherited_from_a_base_of_another_file_is_bound_as_that_base_says(tmp_path, cyclelint, decorator,
                                                                                  params, found):
    (tmp_path / "flamingo.py").write_text(FLAMINGO.format(decorator=decorator, params=params))
    (tmp_path / "otter.py").write_text(OTTER)
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == found
    assert rows(cyclelint, tmp_path, ".") == found  # twice: the second from the cache
    assert rows(cyclelint, tmp_path, ".") == found
    (tmp_path / "flamingo.py").unlink()  # a base the tree does not hold: taken for a bound method
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./otter.py", 7)]


def test_a_subclass_between_that_makes_the_hook_a_method_is_reported(tmp_path, cyclelint):
    (tmp_path / "flamingo.py").write_text(FLAMINGO.format(decorator="@staticmethod", params="module, keys")
                                          + "\n\nclass Middle(Flamingo):\n    def _load_adapter_hook(self, m, k):\n"
                                          "        self.last = k\n")
    (tmp_path / "otter.py").write_text(OTTER.replace("Flamingo", "Middle"))
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == [("./otter.py", 7)]
