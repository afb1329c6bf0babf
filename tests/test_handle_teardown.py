"""A hook whose handle the instance keeps in ``self.X`` is undone when a method of its class removes the handles
``self.X`` holds (a ``remove_hooks()`` that ``__exit__`` calls): CYC104 stays quiet. The class that removes them may
be a base class, in this file or in another file of the project, as torchcam's CAM extractors do: each subclass
appends its hooks' handles to ``self.hook_handles``, and the base ``_CAM`` in core.py removes them all."""
import json
import textwrap

import pytest

pytestmark = pytest.mark.lintpath

BASE = """\
    class _CAM:
        def __init__(self, model, layers):
            self.model = model
            self.layers = layers
            self.hook_handles = []

        def __exit__(self, *exc):
            self.remove_hooks()

        def remove_hooks(self):
            for handle in self.hook_handles:
                handle.remove()
            self.hook_handles.clear()
    """

SUBCLASS = """\
    from functools import partial

    from .core import _CAM


    class GradCAM(_CAM):
        def __init__(self, model, layers):
            super().__init__(model, layers)
            for idx, layer in enumerate(self.layers):
                self.hook_handles.append(layer.register_forward_hook(partial(self._hook_g, idx=idx)))

        def _hook_g(self, module, inputs, output, idx=0):
            self.grads[idx] = output.detach()
    """


def findings(cyclelint, cwd, *args):
    proc = cyclelint("--format", "json", "--select", "CYC104", *args, cwd=cwd)
    return sorted((f["path"].removeprefix("./"), f["line"]) for f in json.loads(proc.stdout)["findings"])


def judged(cyclelint, tmp_path, files: dict[str, str]):
    """The tree linted without the cache, from the cache, and the subclass's file alone with its project (the
    pre-commit case): all three must agree."""
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    cold = findings(cyclelint, tmp_path, "--no-cache", "--jobs", "1", ".")
    assert findings(cyclelint, tmp_path, ".") == cold
    assert findings(cyclelint, tmp_path, ".") == cold  # from the cache
    (tmp_path / "pyproject.toml").write_text("")
    assert findings(cyclelint, tmp_path, "gradient.py") == [f for f in cold if f[0] == "gradient.py"]
    return cold


def test_handles_removed_by_a_base_class_of_another_file(cyclelint, tmp_path):
    assert judged(cyclelint, tmp_path, {"__init__.py": "", "core.py": BASE, "gradient.py": SUBCLASS}) == []


def test_handles_removed_by_a_base_class_of_the_same_file(cyclelint, tmp_path):
    one = textwrap.dedent(BASE) + "\n\n" + textwrap.dedent(SUBCLASS).replace("from .core import _CAM\n", "")
    (tmp_path / "gradient.py").write_text(one)
    assert findings(cyclelint, tmp_path, "--no-cache", "gradient.py") == []


@pytest.mark.parametrize("base", [
    BASE.replace("                handle.remove()\n", "                pass\n"),  # the list is emptied, the hooks stay
    BASE.replace("self.hook_handles", "self.handles"),  # it removes another attribute's handles
])
def test_handles_no_class_of_the_chain_removes_stay_reported(cyclelint, tmp_path, base):
    assert judged(cyclelint, tmp_path, {"__init__.py": "", "core.py": base, "gradient.py": SUBCLASS}) == [
        ("gradient.py", 10)]


def test_a_base_class_of_another_package_says_nothing(cyclelint, tmp_path):
    """torchcam's ``_CAM`` is not in the linted tree: what it removes is not known, the finding stays."""
    (tmp_path / "gradient.py").write_text(textwrap.dedent(SUBCLASS).replace("from .core import", "from torchcam import"))
    assert findings(cyclelint, tmp_path, "--no-cache", ".") == [("gradient.py", 10)]
