"""CYC305 with evidence from other files of the tree: a meter defined in one file, fed a graph by a
training loop in another (which the pre-filter alone would answer without libcst)."""
import json
import textwrap

import pytest

pytestmark = pytest.mark.lintpath

METER = textwrap.dedent(
    """\
    class Meter:
        def __init__(self):
            self.total = 0.0

        def update(self, value):
            self.total += value
    """
)
TRAIN = textwrap.dedent(
    """\
    from meters import Meter


    def fit(model, loader, criterion):
        meter = Meter()
        for x, y in loader:
            loss = criterion(model(x), y)
            meter.update({arg})
        return meter.total
    """
)


def tree(tmp_path, arg="loss", meter=METER):
    (tmp_path / "meters.py").write_text(meter)
    (tmp_path / "train.py").write_text(TRAIN.format(arg=arg))


def rows(cyclelint, tmp_path, *args):
    proc = cyclelint("--format", "json", *args, ".", cwd=tmp_path)
    return [(f["path"], f["line"], f["code"]) for f in json.loads(proc.stdout)["findings"]]


@pytest.mark.parametrize("args", [("--no-cache", "--jobs", "1"), ("--no-cache", "--jobs", "2"), ()])
def test_meter_fed_a_graph_in_another_file(tmp_path, cyclelint, args):
    tree(tmp_path)
    assert rows(cyclelint, tmp_path, *args) == [("./meters.py", 6, "CYC305")]
    assert rows(cyclelint, tmp_path, *args) == [("./meters.py", 6, "CYC305")]  # again: from the cache


def test_meter_fed_numbers_is_clean(tmp_path, cyclelint):
    tree(tmp_path, arg="loss.item()")
    assert rows(cyclelint, tmp_path, "--no-cache") == []


def test_the_meter_file_alone_has_no_evidence(tmp_path, cyclelint):
    tree(tmp_path)
    proc = cyclelint("--no-cache", "meters.py", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""


def test_a_class_of_the_same_name_in_the_callers_file_is_the_one_fed(tmp_path, cyclelint):
    tree(tmp_path)
    own = TRAIN.format(arg="loss").replace("from meters import Meter\n", METER)
    (tmp_path / "train.py").write_text(own)
    # train.py's own Meter is fed (and flagged there); meters.py's Meter is fed by nobody
    assert rows(cyclelint, tmp_path, "--no-cache") == [("./train.py", 6, "CYC305")]


def test_inherited_method_of_a_subclass_instance(tmp_path, cyclelint):
    tree(tmp_path)
    sub = TRAIN.format(arg="loss").replace("meter = Meter()", "meter = LossMeter()")
    sub = sub.replace("from meters import Meter\n", "from meters import Meter\n\n\nclass LossMeter(Meter):\n    pass\n")
    (tmp_path / "train.py").write_text(sub)
    assert rows(cyclelint, tmp_path, "--no-cache") == [("./meters.py", 6, "CYC305")]


def test_noqa_on_the_candidate(tmp_path, cyclelint):
    tree(tmp_path, meter=METER.replace("self.total += value", "self.total += value  # noqa: CYC305"))
    assert rows(cyclelint, tmp_path, "--no-cache") == []
