"""What a function of another file returns (project/summaries.py): a loop that keeps the result of a helper
imported from the linted tree keeps a graph when that helper returns one, or hands back a graph-attached
argument; a helper that detaches or reduces hands back nothing."""
import ast
import gc
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cyclelint.analysis.returns import Returns
from cyclelint.api import lint_paths
from cyclelint.findings import DEFAULT_CODES
from cyclelint.prefilter import scan_file

pytestmark = pytest.mark.lintpath

IMPORTED = Path(__file__).parent.parent / "fixtures" / "cyc3" / "imported"


def copied(tmp_path):
    for path in IMPORTED.glob("*.py"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def found(*paths, **options):
    findings, errors = lint_paths([str(p) for p in paths], jobs=1, **options)
    assert errors == []
    return [(Path(f.path).name, f.line, f.code) for f in findings]


LEAKS = [("ppo_minibatch_leak.py", 21, "CYC302"), ("ppo_stats_leak.py", 22, "CYC302"), ("predict_leak.py", 11, "CYC302")]
PPO = LEAKS[:2]  # the two PPO steps, whose statistics _ppo_core's masked_mean computes


@pytest.mark.parametrize("args", [("--no-cache", "--jobs", "1"), ("--no-cache", "--jobs", "2"), ()])
def test_the_helpers_file_says_what_the_kept_values_hold(tmp_path, cyclelint, args):
    copied(tmp_path)
    for _ in range(2):  # again: from the cache
        proc = cyclelint("--format", "json", *args, ".", cwd=tmp_path)
        rows = [(Path(f["path"]).name, f["line"], f["code"], f["message"]) for f in json.loads(proc.stdout)["findings"]]
        assert [row[:3] for row in rows] == LEAKS
        # flatten_dict() in _ppo_core.py fills a new dict with the statistics, through a recursive closure
        assert rows[0][3].endswith("(PPOTrainer.train_minibatch() returns a graph-attached value)")
        assert rows[1][3].endswith("(masked_mean() in _ppo_core.py returns the values it is given, "
                                   "which is graph-attached)")
        assert rows[2][3].endswith("(logits_for() in _ppo_core.py returns a graph-attached value)")


def test_without_the_helpers_file_nothing_is_judged(tmp_path):
    copied(tmp_path)
    (tmp_path / "_ppo_core.py").unlink()
    assert found(tmp_path) == []


@pytest.mark.parametrize(("helper", "body"), [
    ("masked_mean", "return float((values * mask).sum().detach())"),
    ("masked_mean", "return (values.detach() * mask).sum() / mask.sum()"),
    ("logits_for", "return model(batch['input_ids']).argmax(-1)"),
])
def test_a_helper_that_hands_back_no_graph(tmp_path, helper, body):
    """The clean look-alikes: a number, a detached tensor, integer indices."""
    copied(tmp_path)
    core = (tmp_path / "_ppo_core.py").read_text()
    start = core.index(f"def {helper}(")
    end = core.index("\n\n\n", start)
    header = core[start:core.index("\n", start)]
    (tmp_path / "_ppo_core.py").write_text(core[:start] + header + f"\n    {body}" + core[end:])
    assert found(tmp_path) == [row for row in LEAKS if (helper == "logits_for") != (row[0] == "predict_leak.py")]


def test_a_changed_helper_is_judged_again_from_the_cache(tmp_path):
    copied(tmp_path)
    from cyclelint.cache import Cache

    assert found(tmp_path, cache=Cache.open(str(tmp_path))) == LEAKS
    core = tmp_path / "_ppo_core.py"
    core.write_text(core.read_text().replace('    return model(batch["input_ids"])', '    return model(batch["input_ids"]).detach()'))
    assert found(tmp_path, cache=Cache.open(str(tmp_path))) == PPO


def package(tmp_path, importer: str, init: str = "") -> Path:
    """``pkg/core.py`` defines the helper; ``pkg/train.py`` keeps its result in a training loop."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(init)
    (tmp_path / "pkg" / "core.py").write_text("def scaled(x, k):\n    return x * k\n")
    (tmp_path / "pkg" / "train.py").write_text(textwrap.dedent(f"""\
        {importer}


        def fit(model, loader, opt):
            kept = []
            for x in loader:
                loss = model(x).mean()
                loss.backward()
                opt.step()
                kept.append(scaled(loss, 2))
            return kept
        """))
    return tmp_path


@pytest.mark.parametrize(("importer", "init"), [
    ("from .core import scaled", ""),
    ("from pkg.core import scaled", ""),
    ("from . import scaled", "from .core import scaled\n"),  # re-exported by the package
    ("from pkg import scaled as scaled", "from pkg.core import *\nfrom .core import scaled\n"),
])
def test_relative_absolute_and_reexported_imports(tmp_path, importer, init):
    package(tmp_path, importer, init)
    assert found(tmp_path) == [("train.py", 10, "CYC302")]


def test_a_prefiltered_importer_through_a_packages_reexport(tmp_path):
    """No graph in train.py: only pkg/core.py's forward pass, re-exported by pkg/__init__.py, gives one."""
    package(tmp_path, "from pkg import predict", "from .core import predict\n")
    (tmp_path / "pkg" / "core.py").write_text("def predict(model, x):\n    return model(x)\n")
    train = tmp_path / "pkg" / "train.py"
    train.write_text(train.read_text().replace("kept.append(scaled(loss, 2))", "kept.append(predict(net, x))").replace(
        "        loss = model(x).mean()\n        loss.backward()\n        opt.step()\n", "").replace(
        "def fit(model, loader, opt)", "def fit(net, loader)"))
    assert "backward" not in train.read_text()
    assert found(tmp_path) == [("train.py", 7, "CYC302")]


def test_an_import_that_names_no_linted_file_is_not_judged(tmp_path):
    package(tmp_path, "from other.core import scaled")  # pkg/core.py is no other.core
    assert found(tmp_path) == []


def test_a_chain_of_helpers_across_three_files(tmp_path):
    """train.py keeps what ``outer`` returns; ``outer`` (outer.py) returns what ``inner`` (inner.py) does, which is
    a forward pass: each file is analysed in full only once the one before asks (the importers are pre-filtered)."""
    (tmp_path / "inner.py").write_text("def inner(model, x):\n    return model(x)\n")
    (tmp_path / "outer.py").write_text("from inner import inner\n\n\ndef outer(net, x):\n    return inner(net, x)\n")
    (tmp_path / "train.py").write_text(
        "from outer import outer\n\n\ndef collect(net, loader):\n    kept = []\n    for x in loader:\n"
        "        kept.append(outer(net, x))\n    return kept\n")
    assert found(tmp_path) == [("train.py", 7, "CYC302")]
    assert found(tmp_path / "train.py") == []  # outside any project, the file alone says nothing
    (tmp_path / "pyproject.toml").write_text("")
    assert found(tmp_path / "train.py") == [("train.py", 7, "CYC302")]  # in its project, as the folder's run


def test_noqa_on_the_kept_value(tmp_path):
    copied(tmp_path)
    leak = tmp_path / "predict_leak.py"
    leak.write_text(leak.read_text().replace("# expect: CYC302", "# noqa: CYC302"))
    assert found(tmp_path) == PPO


def test_the_prefilter_leaves_an_imported_helper_to_the_project():
    source = (IMPORTED / "predict_leak.py").read_text()
    verdict = scan_file(ast.parse(source), DEFAULT_CODES, defer=True)
    assert (verdict.found, verdict.imports_asked) == (False, ["logits_for"])
    # what its own helpers may return, for files that import them: predict returns what logits_for does
    assert (verdict.own_graphs, verdict.helper_imports) == ([], {"predict": ["logits_for"]})
    core = scan_file(ast.parse((IMPORTED / "_ppo_core.py").read_text()), DEFAULT_CODES, defer=True)
    # a superset: nested_detach's ``type(tensors)(...)`` is a call of a call, which may be a model's
    assert {"logits_for", "policy_loss"} <= set(core.own_graphs) and "masked_mean" not in core.own_graphs
    assert scan_file(ast.parse(source), DEFAULT_CODES)[0]  # judged alone (stdin, an editor): sent on


def test_a_warm_run_links_the_files_without_libcst(tmp_path):
    copied(tmp_path)
    code = ("import sys\nfrom cyclelint.cli import main\nmain(['.', '--format', 'json', '--exit-zero'])\n"
            "print('libcst imported:', 'libcst' in sys.modules, file=sys.stderr)\n")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
            for _ in range(2)]
    cold, warm = (json.loads(r.stdout)["findings"] for r in runs)
    assert [(Path(f["path"]).name, f["line"]) for f in cold] == [row[:2] for row in LEAKS]
    assert warm == cold
    assert "libcst imported: False" in runs[1].stderr


def test_linking_the_files_leaves_no_cycle(tmp_path):
    """Each file's returns link to the others through the resolution's linker: it unlinks them when done."""
    copied(tmp_path)
    gc.collect()
    gc.disable()
    try:
        found(tmp_path)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        kept = [o for o in gc.garbage if isinstance(o, Returns)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert kept == []


@pytest.mark.parametrize(("importer", "asks"), [
    ("from torch.nn.functional import softmax", False),  # another package: the project is not read for it
    ("from helpers import softmax", True),  # beside the file
    ("from .helpers import softmax", True),
    ("from pkg.helpers import softmax", True),  # at the root
])
def test_a_file_alone_asks_its_project_only_about_its_own_imports(tmp_path, importer, asks):
    from cyclelint.engine import lint_file
    from cyclelint.project_context import asks_the_project

    (tmp_path / "pkg").mkdir()
    (tmp_path / "helpers.py").write_text("def softmax(x):\n    return x\n")
    source = f"{importer}\n\n\ndef scores(loader):\n    out = []\n    for x in loader:\n        out.append(softmax(x))\n    return out\n"
    result = lint_file(source, str(tmp_path / "scores.py"), DEFAULT_CODES, defer=True)
    assert result.imports_asked == ["softmax"] and result.findings == []
    assert asks_the_project(result, str(tmp_path)) is asks
