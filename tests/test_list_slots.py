"""An attribute the class body declares a list (monai 1.6.1 ``DynUNetSkipLayer.heads: list[torch.Tensor] | None``,
set from a parameter) is written slot by slot: ``self.heads[i - 1] = out`` replaces the last pass's output. A list
cut back to its last entries (``self.ets = self.ets[-3:]``, monai's PNDM scheduler) is a window: the appends of the
class cannot grow it past the cut. Declared a dict, cut into another list, or copied whole, it still grows."""
import libcst as cst
import pytest

from cyclelint.analysis.holds import list_annotation
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

SLOTS = """\
import torch


class Stage(torch.nn.Module):
{declared}
    def __init__(self, index, inner, heads=None):
        super().__init__()
        self.index = index
        self.inner = inner
        self.heads = heads

    def forward(self, x):
        out = self.inner(x)
        self.heads[self.index - 1] = out
        return out
"""

WINDOW = """\
import torch


class Solver:
    def __init__(self):
        self.ets = []

    def warmup(self, model_output: torch.Tensor):
        self.ets.append(model_output)

    def step(self, model_output: torch.Tensor):
        {cut}
        return model_output
"""


def found(text: str, prefilter: bool = True) -> list[tuple[int, str]]:
    result = lint_source(text, "slots.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("declared", "kept"), [
    ("    heads: list[torch.Tensor] | None\n", False),
    ("    heads: Optional[List[torch.Tensor]]\n", False),
    ("    heads: 'list[torch.Tensor]'\n", False),
    ("    heads: dict[int, torch.Tensor]\n", True),  # a new key is a new entry
    ("    heads: list[torch.Tensor] | dict[int, torch.Tensor]\n", True),
    ("    other: list[torch.Tensor]\n", True),  # another attribute declared
    ("", True),  # nothing says what heads is
])
def test_declared_list(declared, kept, prefilter):
    line = 14 + declared.count("\n")
    assert found(SLOTS.format(declared=declared), prefilter) == ([(line, "CYC305")] if kept else [])


def test_annotated_store_in_init():
    text = SLOTS.format(declared="").replace("self.heads = heads", "self.heads: list[torch.Tensor] = heads")
    assert found(text) == []


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("cut", "kept"), [
    ("self.ets = self.ets[-3:]", False),
    ("self.ets = self.ets[:4]", False),
    ("self.ets = self.ets[:]", True),  # a copy of the whole list
    ("self.ets = self.ets[::-1]", True),
    ("self.recent = self.ets[-3:]", True),  # another list is cut; ets keeps growing
])
def test_window(cut, kept, prefilter):
    assert found(WINDOW.format(cut=cut), prefilter) == ([(9, "CYC305")] if kept else [])


@pytest.mark.parametrize(("text", "is_list"), [
    ("list[int]", True), ("List[Tensor]", True), ("typing.List[Tensor] | None", True), ("list", True),
    ("Optional[list[Tensor]]", True), ("tuple[Tensor, ...]", False), ("Sequence[Tensor]", False),
    ("dict[str, Tensor]", False), ("list[Tensor] | tuple[Tensor]", False), ("None", False),
])
def test_list_annotation(text, is_list):
    assert list_annotation(cst.parse_expression(text)) is is_list
