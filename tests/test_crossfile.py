"""CYC305 with evidence from other files of the tree: a meter defined in one file, fed a graph by a
training loop in another (which the pre-filter alone would answer without libcst)."""
import json
import textwrap
from pathlib import Path

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


def test_a_warm_run_resolves_the_project_without_libcst(tmp_path):
    """Project-wide resolution reads only the files' records: a warm run (every file from the cache) gives the
    same cross-file findings as the cold one and never imports libcst (0.35 s of a 1 s warm run)."""
    import subprocess
    import sys

    (tmp_path / "heads.py").write_text("class Head:\n    def __init__(self, owner):\n        self.owner = owner\n")
    (tmp_path / "model.py").write_text(
        "from heads import Head\n\n\nclass Model:\n    def __init__(self):\n        self.head = Head(self)\n")
    (tmp_path / "meters.py").write_text(METER)
    (tmp_path / "train.py").write_text(TRAIN.format(arg="loss"))
    code = ("import sys\nfrom cyclelint.cli import main\nmain(['.', '--format', 'json', '--exit-zero'])\n"
            "print('libcst imported:', 'libcst' in sys.modules, file=sys.stderr)\n")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
            for _ in range(2)]
    cold, warm = ([(f["path"], f["line"], f["code"], f["message"]) for f in json.loads(r.stdout)["findings"]]
                  for r in runs)
    assert {(path, code) for path, _, code, _ in cold} == {("./model.py", "CYC202"), ("./meters.py", "CYC305")}, cold
    assert warm == cold
    assert "libcst imported: True" in runs[0].stderr and "libcst imported: False" in runs[1].stderr


DECORATED = Path(__file__).parent.parent / "fixtures" / "cyc3" / "decorated"


TYPED = Path(__file__).parent.parent / "fixtures" / "cyc3" / "typed"
# folder, the file that tells grad is off, the twins' grown line (the leak's ends in its expect comment)
GRAD_OFF_ELSEWHERE = {
    # ultralytics' smart_inference_mode: defined in one file, it decorates a method of another
    "decorator": (DECORATED, "_decorators.py", "memory", '        self.memory_bank.append({"features": features})'),
    # sentence-transformers' ParallelSentencesDataset: ``teacher_model: SentenceTransformer`` kept on self, its
    # ``encode`` (defined in another file under inference_mode) fills a cache
    "annotated class": (TYPED, "_encoders.py", "teacher_cache", "            self.embedding_cache[key] = embedding"),
    # lightning-bolts' REINFORCE: ``self.agent = PolicyAgent(net)``, whose ``__call__`` (another file) is no_grad
    "called object": (TYPED, "_encoders.py", "agent_actions", "        self.actions.append(action)"),
}


@pytest.mark.parametrize("case", sorted(GRAD_OFF_ELSEWHERE))
@pytest.mark.parametrize("args", [("--no-cache", "--jobs", "1"), ("--no-cache", "--jobs", "2")])
def test_grad_turned_off_in_another_file_is_known_across_files(tmp_path, cyclelint, args, case):
    """Only the whole tree says that the method runs without grad, so the clean twin keeps no graph; the leak
    twin (a plain decorator, a class whose encode keeps grad) does. Without the file that says so, both are
    judged as their code reads."""
    folder, teller, stem, grown_line = GRAD_OFF_ELSEWHERE[case]
    for path in folder.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    grown = {name: 1 + (tmp_path / name).read_text().splitlines().index(grown_line + mark)
             for name, mark in ((f"{stem}_clean.py", ""), (f"{stem}_leak.py", "  # expect: CYC305"))}
    def twins():  # the folder's other twins are judged by their own cases
        return [row for row in rows(cyclelint, tmp_path, *args) if row[0].startswith(f"./{stem}_")]

    assert twins() == [(f"./{stem}_leak.py", grown[f"{stem}_leak.py"], "CYC305")]
    (tmp_path / teller).unlink()
    assert twins() == [(f"./{name}", line, "CYC305") for name, line in sorted(grown.items())]


@pytest.mark.parametrize(("annotation", "flagged"), [
    ("FrozenEncoder", False),
    ("Optional[FrozenEncoder]", False),
    ('"FrozenEncoder | None"', False),
    ("FrozenEncoder | None", False),
    ("FrozenEncoder | TunedEncoder", True),  # either class may be passed: one keeps grad
    ("Any", True),  # no class named: encode is judged as a forward pass
    ("list[FrozenEncoder]", True),  # a list of encoders is no encoder
])
def test_the_annotation_names_the_class_whose_method_is_asked(tmp_path, annotation, flagged):
    from cyclelint.api import lint_paths

    (tmp_path / "_encoders.py").write_bytes((TYPED / "_encoders.py").read_bytes())
    source = (TYPED / "teacher_cache_clean.py").read_text()
    assert "teacher_model: FrozenEncoder)" in source
    source = source.replace("teacher_model: FrozenEncoder)", f"teacher_model: {annotation})")
    source = source.replace("from typing import TYPE_CHECKING", "from typing import TYPE_CHECKING, Any, Optional")
    (tmp_path / "cache.py").write_text(source)
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == []
    assert [f.code for f in findings] == (["CYC305"] if flagged else [])


HANDED = Path(__file__).parent.parent / "fixtures" / "cyc2" / "handed"


@pytest.mark.parametrize("args", [("--no-cache", "--jobs", "1"), ("--no-cache", "--jobs", "2"), ()])
def test_a_method_of_another_file_that_keeps_the_instance_it_is_handed(tmp_path, cyclelint, args):
    """``self.tracker.add_loader(self)``: only the file of the tracker's class says that ``add_loader`` keeps
    its argument (accelerate 1.3.0's GradientState). The clean twin's trackers read it, or keep it through a
    property whose setter stores a weak reference; a setter that keeps it strongly is a store like any other."""
    for path in HANDED.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    leak_line = 1 + (tmp_path / "handed_leak.py").read_text().splitlines().index(
        "        self.tracker.add_loader(self)  # expect: CYC202")
    assert rows(cyclelint, tmp_path, *args) == [("./handed_leak.py", leak_line, "CYC202")]

    trackers = (tmp_path / "_trackers.py").read_text()
    weak_setter = "        self._refs = [weakref.ref(loader) for loader in loaders]"
    assert weak_setter in trackers
    (tmp_path / "_trackers.py").write_text(trackers.replace(weak_setter, "        self._refs = loaders"))
    clean_line = 1 + (tmp_path / "handed_clean.py").read_text().splitlines().index("        self.tracker.add_loader(self)")
    assert rows(cyclelint, tmp_path, *args) == [("./handed_clean.py", clean_line, "CYC202"),
                                                 ("./handed_leak.py", leak_line, "CYC202")]

    (tmp_path / "_trackers.py").unlink()  # no class says what add_loader does: nothing is judged
    assert rows(cyclelint, tmp_path, *args) == []


REGISTERED = Path(__file__).parent.parent / "fixtures" / "cyc2" / "registered"


def _registered(tmp_path):
    for path in REGISTERED.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    leak = (tmp_path / "registered_leak.py").read_text()
    lines = leak.splitlines()
    return leak, [1 + lines.index("        handler = FlushHandler(self)  # expect: CYC202"),
                  1 + lines.index("        self.add_reporter(Reporter(self))  # expect: CYC202")]


@pytest.mark.parametrize("args", [("--no-cache", "--jobs", "1"), ("--no-cache", "--jobs", "2"), ()])
def test_an_object_holding_the_instance_registered_with_the_instance(tmp_path, cyclelint, args):
    """``handler = FlushHandler(self); self.addHandler(handler)``: _reporting.py says FlushHandler keeps
    the log, and addHandler comes from logging.Logger, outside the linted code, named as a method that
    keeps what it is given (sentence-transformers 3.3.1's ``self.add_callback(ModelCardCallback(self))``).
    ``add_reporter`` is defined by the project: it keeps its argument in the leak, not in the clean twin."""
    _, lines = _registered(tmp_path)
    assert rows(cyclelint, tmp_path, *args) == [("./registered_leak.py", line, "CYC202") for line in lines]


def test_a_staged_file_alone_is_judged_with_its_project(tmp_path, cyclelint):
    """The pre-commit case: only the leak file is named; its project (the folder of pyproject.toml) says
    what the handlers keep."""
    _, lines = _registered(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    proc = cyclelint("--format", "json", "--no-cache", "registered_leak.py", cwd=tmp_path)
    assert [(f["line"], f["code"]) for f in json.loads(proc.stdout)["findings"]] == [(line, "CYC202") for line in lines]


HANDLER_LINE = "        handler = FlushHandler(self)  # expect: CYC202"
REPORTER_LINE = "        self.add_reporter(Reporter(self))  # expect: CYC202"


@pytest.mark.parametrize(("old", "new", "left"), [
    # no class of the project says what FlushHandler and Reporter keep: nothing is judged
    (None, None, []),
    # a base method not named as a registration: its name says nothing, so only add_reporter is left
    ("self.addHandler(handler)", "self.handle(handler)", [REPORTER_LINE]),
    # the project defines addHandler without keeping the handler: the project's word beats the name
    ("    def add_reporter(self, reporter):",
     "    def addHandler(self, handler):\n        handler.flush()\n\n    def add_reporter(self, reporter):",
     [REPORTER_LINE]),
    # a base class the project does not define is what makes a method "outside": a plain class has none
    ("class RunLog(logging.Logger):", "class RunLog:", [REPORTER_LINE]),
    # the local also stored on the instance: kept whatever the method does, one finding for the line
    ("        self.addHandler(handler)", "        self.handle(handler)\n        self.handler = handler",
     [HANDLER_LINE, REPORTER_LINE]),
])
def test_what_keeps_the_handed_object_decides(tmp_path, cyclelint, old, new, left):
    leak, _ = _registered(tmp_path)
    if old is None:
        (tmp_path / "_reporting.py").unlink()
    else:
        assert old in leak
        leak = leak.replace(old, new)
        (tmp_path / "registered_leak.py").write_text(leak)
    lines = leak.splitlines()
    assert rows(cyclelint, tmp_path, "--no-cache") == [("./registered_leak.py", 1 + lines.index(text), "CYC202")
                                                       for text in left]


KEPT_TRAIN = textwrap.dedent(
    """\
    from metrics import Kept


    def learn(model, loader, opt):
        kept = Kept()
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
            kept.add({"loss": loss})
        return kept
    """
)
KEEPS = "for k, v in values.items():\n            self.values.append(v)"


@pytest.mark.parametrize(("metrics", "found"), [
    # no container: its add() keeps each value detached (agilerl 2.58.0's MicroBatchMetrics.add)
    (f"class Kept:\n    def __init__(self):\n        self.values = []\n\n    def add(self, values):\n"
     f"        {KEEPS.replace('(v)', '(v.detach())')}\n", []),
    # no container, keeping the graphs: its own method is reported, from the caller's evidence
    (f"class Kept:\n    def __init__(self):\n        self.values = []\n\n    def add(self, values):\n        {KEEPS}\n",
     [("./metrics.py", 7, "CYC305")]),
    ("class Kept(list):\n    def add(self, value):\n        self.append(value)\n", [("./train.py", 10, "CYC302")]),
    ("class History(list):\n    pass\n\n\nclass Kept(History):\n"
     "    def add(self, value):\n        self.append(value)\n",
     [("./train.py", 10, "CYC302")]),
    ("from collections.abc import MutableSet\n\n\nclass Kept(MutableSet):\n    pass\n", [("./train.py", 10, "CYC302")]),
    ("from elsewhere import Kept\n", [("./train.py", 10, "CYC302")]),  # a class the tree does not hold
])
def test_an_object_of_a_class_of_another_file_is_judged_by_that_class(tmp_path, cyclelint, metrics, found):
    """``kept.add(v)`` on an object of a class another file defines: a container's add keeps ``v`` (reported at
    the call), a plain class's add does what its code says (judged there)."""
    (tmp_path / "metrics.py").write_text(metrics)
    (tmp_path / "train.py").write_text(KEPT_TRAIN)
    assert rows(cyclelint, tmp_path, "--no-cache") == found
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "train.py").write_text(KEPT_TRAIN)  # the class unknown: it may be a container
    assert rows(cyclelint, alone, "--no-cache") == [("./train.py", 10, "CYC302")]


KEPT_STATE = textwrap.dedent(
    """\
    import torch
    from metrics import Kept


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 2)
            self.kept = Kept()

        def forward(self, x):
            out = self.layer(x)
            self.kept.add({"out": out})
            return out
    """
)
RING = ("class Kept:\n    def __init__(self):\n        self.values = []\n\n    def add(self, item):\n"
        "        self.values.append(item)\n        if len(self.values) > 4:\n            self.values.pop(0)\n")


@pytest.mark.parametrize(("metrics", "found"), [
    # its add() keeps the last four entries (espnet 202511's sds ``Chat.append``)
    (RING, []),
    # its add() keeps every graph: reported at its own store, from this call's evidence, as in one file
    (f"class Kept:\n    def __init__(self):\n        self.values = []\n\n    def add(self, values):\n        {KEEPS}\n",
     [("./metrics.py", 7, "CYC305")]),
    ("class Kept(list):\n    def add(self, value):\n        self.append(value)\n", [("./net.py", 13, "CYC305")]),
    ("from elsewhere import Kept\n", [("./net.py", 13, "CYC305")]),  # a class the tree does not hold
])
def test_state_kept_by_an_object_of_a_class_of_another_file_is_judged_by_that_class(tmp_path, cyclelint, metrics,
                                                                                     found):
    """``self.kept.add(v)`` in a module's forward, ``self.kept`` an object of a class another file defines: judged
    as the loop's ``kept.add(v)`` above, and as it is when one file holds both classes."""
    (tmp_path / "metrics.py").write_text(metrics)
    (tmp_path / "net.py").write_text(KEPT_STATE)
    assert rows(cyclelint, tmp_path, "--no-cache") == found
    (tmp_path / "pyproject.toml").write_text("")
    staged = cyclelint("--format", "json", "--no-cache", "net.py", cwd=tmp_path)  # pre-commit's one staged file
    assert [(f["line"], f["code"]) for f in json.loads(staged.stdout)["findings"]] == [
        (line, code) for path, line, code in found if path == "./net.py"]
    one = tmp_path / "one"
    one.mkdir()
    (one / "net.py").write_text(KEPT_STATE.replace("from metrics import Kept\n", metrics.replace(
        "from elsewhere import Kept\n", "from elsewhere import Kept\n\n")))
    assert [code for _, _, code in rows(cyclelint, one, "--no-cache")] == [code for _, _, code in found]


HELPER_TRAIN = KEPT_TRAIN.replace("from metrics import Kept\n", "from helpers import run_step\nfrom metrics import Kept\n")
HELPER_TRAIN = HELPER_TRAIN.replace("loss = model(x).sum()\n        loss.backward()", "out = run_step(model, x)")
HELPER_TRAIN = HELPER_TRAIN.replace('{"loss": loss}', '{"out": out}')  # named for what it is, not like a loss


@pytest.mark.parametrize(("metrics", "found"), [
    (f"class Kept:\n    def __init__(self):\n        self.values = []\n\n    def add(self, values):\n"
     f"        {KEEPS.replace('(v)', '(v.detach())')}\n", []),
    ("class Kept(list):\n    def add(self, value):\n        self.append(value)\n", [("./train.py", 10, "CYC302")]),
    ("from elsewhere import Kept\n", [("./train.py", 10, "CYC302")]),
])
def test_a_graph_from_another_files_helper_kept_by_an_object_of_a_third(tmp_path, cyclelint, metrics, found):
    """The same ``kept.add(v)``, with ``v`` attached only through a helper another file defines
    (project/summaries.py): the object's class decides as it does above (agilerl 2.58.0's ppo_llm.py keeps
    ``_ppo_policy_loss()``'s losses in a ``MicroBatchMetrics``)."""
    (tmp_path / "helpers.py").write_text("def run_step(model, x):\n    out = model(x).sum()\n    out.backward()\n"
                                         "    return out\n")
    (tmp_path / "metrics.py").write_text(metrics)
    (tmp_path / "train.py").write_text(HELPER_TRAIN)
    assert rows(cyclelint, tmp_path, "--no-cache") == found


LOSS_TRAIN = textwrap.dedent(
    """\
    from losses import StepLoss


    def fit(model, loader, opt):
        compute_loss = StepLoss(model)
        total = 0.0
        for x, y in loader:
            loss, items = compute_loss(model(x), y)
            loss.backward()
            opt.step()
            total += {kept}
        return total
    """
)
LOSS_CALL = "class StepLoss:\n    def __init__(self, model):\n        self.model = model\n\n    def __call__(self, p, y):\n"
LOSS_BODY = "        loss = (p - y).pow(2).mean()\n"


@pytest.mark.parametrize(("losses", "kept", "found"), [
    # yolov5 7.0's ComputeLoss: ``return (lbox + lobj + lcls) * bs, torch.cat((lbox, lobj, lcls)).detach()``
    (LOSS_CALL + LOSS_BODY + "        return loss * len(y), loss.detach()\n", "items", []),
    (LOSS_CALL + LOSS_BODY + "        return loss * len(y), loss.item()\n", "items", []),
    # the same position handed back with its graph
    (LOSS_CALL + LOSS_BODY + "        return loss * len(y), torch.stack([loss])\n", "items", [11]),
    # the other position, which the loop's backward runs through: attached whatever the class says
    (LOSS_CALL + LOSS_BODY + "        return loss * len(y), loss.detach()\n", "loss", [11]),
    # a module's call is its forward()
    ("import torch.nn as nn\n\n\nclass StepLoss(nn.Module):\n    def forward(self, p, y):\n" + LOSS_BODY
     + "        return loss, loss.detach()\n", "items", []),
    # what the instance holds may be anything: not shown clean
    (LOSS_CALL + LOSS_BODY + "        self.last = loss\n        return loss, self.last\n", "items", [11]),
    # a subclass returning its base's result: the base's return decides
    (LOSS_CALL.replace("StepLoss", "BaseLoss") + LOSS_BODY + "        return loss, loss.detach()\n\n\n"
     "class StepLoss(BaseLoss):\n    pass\n", "items", []),
    ("from elsewhere import StepLoss\n", "items", [11]),  # a class the tree does not hold
])
@pytest.mark.parametrize("args", [("--no-cache", "--jobs", "1"), ("--no-cache", "--jobs", "2"), ()])
def test_what_a_method_of_another_file_returns_at_each_position(tmp_path, cyclelint, losses, kept, found, args):
    """``loss, items = compute_loss(pred, y)`` with the loss's class defined in another file: the loop keeps
    ``items``, which that class's method may hand back detached. Without that file it may hold a graph."""
    (tmp_path / "losses.py").write_text("import torch\n\n\n" + losses)
    (tmp_path / "train.py").write_text(LOSS_TRAIN.format(kept=kept))
    assert rows(cyclelint, tmp_path, *args) == [("./train.py", line, "CYC301") for line in found]
    (tmp_path / "pyproject.toml").write_text("")  # the pre-commit case: the staged file judged with its project
    proc = cyclelint("--format", "json", *args, "train.py", cwd=tmp_path)
    assert [f["line"] for f in json.loads(proc.stdout)["findings"]] == found
    (tmp_path / "losses.py").unlink()
    assert rows(cyclelint, tmp_path, "--no-cache") == [("./train.py", 11, "CYC301")]
