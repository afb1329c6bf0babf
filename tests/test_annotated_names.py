"""A parameter's name is the last resort for what it holds: when its annotation names only plain types
(``model_family_keywords: list[str] | None``, torchrl 0.14.1 data/llm/history.py:258, 366, registered in a global
dict of keyword lists), a name like a model's says nothing. An annotation that names a module, or none at all,
leaves the registration reported."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

REGISTRY = """\
import torch.nn as nn

_REGISTRY = {{}}


def register(name: str, {param}) -> None:
    _REGISTRY[name] = {name}
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("param", "kept"), [
    ("model_family_keywords: list[str] | None = None", False),
    ("model_names: Optional[List[str]] = None", False),
    ("model_id: int", False),
    ("model_family_keywords: nn.Module", True),
    ("model_family_keywords", True),  # nothing but the name
    ("model_family_keywords: 'Keywords'", True),  # a string: what it names is not read
])
def test_registered_parameter(param, kept, prefilter):
    name = param.split(":")[0].split("=")[0].strip()
    result = lint_source(REGISTRY.format(param=param, name=name), "templates.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    assert [(f.line, f.code) for f in result.findings] == ([(7, "CYC404")] if kept else [])
