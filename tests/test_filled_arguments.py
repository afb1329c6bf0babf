"""A function of the file that puts values into a container its caller passes (analysis/fills.py): the
caller's container then holds them. trl 0.4's ``flatten_dict`` fills a new dict through a recursive closure, so
the statistics a PPO step keeps hold the graphs of what was flattened (trl#220)."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

FLATTEN = """\
def flatten(nested, sep="/"):
    def fill(part, prefix, into):
        for key, value in part.items():
            if isinstance(value, dict):
                fill(value, prefix + key + sep, into)
            else:
                into[prefix + key] = {stored}

    flat = {{}}
    fill(nested, "", flat)
    return flat
"""

ADD = """\
def add_loss(stats, loss):
    stats["loss"] = {stored}
"""

TRAIN = """\


def train(model, loader, opt):
    history = []
    for x, y in loader:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
{keep}
        history.append(stats)  # line {line}
    return history
"""


def kept(helper: str, stored: str, keep: str, prefilter: bool = True) -> list[tuple[int, str]]:
    source = helper.format(stored=stored) + TRAIN.format(keep=keep, line="{line}")
    line = next(i for i, text in enumerate(source.splitlines(), 1) if text.endswith("# line {line}"))
    result = lint_source(source, "train.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line - line, f.code) for f in result.findings]


CASES = {
    "a recursive closure": (FLATTEN, '        stats = flatten({"loss": {"total": loss}})'),
    "a helper given the container": (ADD, "        stats = {}\n        add_loss(stats, loss)"),
    "by keyword": (ADD, "        stats = {}\n        add_loss(loss=loss, stats=stats)"),
}


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("helper", "keep"), CASES.values(), ids=CASES.keys())
def test_the_container_holds_what_the_function_puts_in_it(helper, keep, prefilter):
    assert kept(helper, "value" if helper is FLATTEN else "loss", keep, prefilter) == [(0, "CYC302")]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("helper", "keep"), CASES.values(), ids=CASES.keys())
def test_a_function_that_stores_numbers_fills_nothing(helper, keep, prefilter):
    stored = "float(value)" if helper is FLATTEN else "loss.item()"
    assert kept(helper, stored, keep, prefilter) == []


REBOUND = """\
def add_loss(stats, loss):
    stats = dict(stats)
    stats["loss"] = loss
    return len(stats)
"""


def test_a_parameter_rebound_in_the_function_is_not_the_callers_container():
    assert kept(REBOUND, "", "        stats = {}\n        add_loss(stats, loss)") == []


def test_a_container_passed_to_another_argument_is_not_filled():
    """``add_loss(loss, stats)``: the positions say ``stats`` is the value, not the dict filled."""
    assert kept(ADD, "loss", "        stats = {}\n        add_loss({}, stats)") == []
