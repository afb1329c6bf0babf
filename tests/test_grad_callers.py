"""CYC301-CYC303 for a loop in a function that the project calls only with grad off: lavis 1.0.2's
``compute_sim_matrix`` collects each batch's embeddings, and is reached only through ``RetrievalTask.evaluation``, which
``RunnerBase.eval_epoch`` calls under ``@torch.no_grad()`` from another file. The calls are read from every file that
names the function, caller by caller; one call with grad on, a reference that is no call, or no call at all keeps the
finding."""
import json

import pytest

pytestmark = pytest.mark.lintpath

HELPERS = """\
import torch


def embed_all(model, loader):
    feats = []
    for batch in loader:
        feats.append(model(batch))
    return torch.cat(feats)
"""
TASK = """\
from helpers import embed_all


class Task:
    def evaluation(self, model, loader):
        return embed_all(model, loader)
"""
RUNNER = """\
import torch


class Runner:
    def __init__(self, task):
        self.task = task

    {decorator}
    def eval_epoch(self, model, loader):
        {body}
"""
NO_GRAD = "@torch.no_grad()"
CALL = "return self.task.evaluation(model, loader)"


def write(tmp_path, decorator=NO_GRAD, body=CALL, extra=None):
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "task.py").write_text(TASK)
    (tmp_path / "runner.py").write_text(RUNNER.format(decorator=decorator, body=body))
    if extra is not None:
        (tmp_path / "other.py").write_text(extra)


def rows(cyclelint, cwd, *args):
    proc = cyclelint("--format", "json", "--select", "CYC3", *args, cwd=cwd)
    return [(f["path"].removeprefix("./"), f["line"], f["code"]) for f in json.loads(proc.stdout)["findings"]]


REPORTED = [("helpers.py", 7, "CYC302")]


@pytest.mark.parametrize("args", [("--no-cache", "--jobs", "1"), ("--no-cache", "--jobs", "2"), ()])
@pytest.mark.parametrize("decorator, body", [
    (NO_GRAD, CALL),
    ("@torch.inference_mode()", CALL),
    ("", "with torch.no_grad():\n            return self.task.evaluation(model, loader)"),
])
def test_a_loop_only_called_with_grad_off_two_files_away_is_quiet(tmp_path, cyclelint, args, decorator, body):
    write(tmp_path, decorator, body)
    assert rows(cyclelint, tmp_path, *args, ".") == []
    assert rows(cyclelint, tmp_path, *args, ".") == []  # again: from the cache
    (tmp_path / "pyproject.toml").write_text("")  # the pre-commit case: the staged file judged with its project
    assert rows(cyclelint, tmp_path, *args, "helpers.py") == []


@pytest.mark.parametrize("decorator, body, extra", [
    ("", CALL, None),  # the caller's caller runs with grad on
    (NO_GRAD, CALL, "from helpers import embed_all\n\n\ndef fit(model, loader):\n    return embed_all(model, loader)\n"),
    (NO_GRAD, CALL, "from helpers import embed_all\n\nfeats = embed_all(None, [])\n"),  # at a module's top level
    (NO_GRAD, CALL, "from concurrent.futures import ThreadPoolExecutor\nfrom helpers import embed_all\n\n\n"
                    "def run(model, loader):\n    ThreadPoolExecutor().submit(embed_all, model, loader)\n"),  # no call
    (NO_GRAD, CALL, "def tune(task, model, loader):\n    return task.evaluation(model, loader)\n"),  # any receiver
    (NO_GRAD, "return None", None),  # nothing calls the task's evaluation
])
def test_a_loop_some_call_may_run_with_grad_is_reported(tmp_path, cyclelint, decorator, body, extra):
    write(tmp_path, decorator, body, extra)
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == REPORTED
    assert rows(cyclelint, tmp_path, ".") == REPORTED
    assert rows(cyclelint, tmp_path, ".") == REPORTED  # from the cache
    (tmp_path / "pyproject.toml").write_text("")
    assert rows(cyclelint, tmp_path, "--no-cache", "helpers.py") == REPORTED


def test_calls_only_around_a_cycle_prove_nothing(tmp_path, cyclelint):
    """``embed_all`` and ``again`` call each other, and nothing else calls either: no call shows grad off."""
    (tmp_path / "helpers.py").write_text(HELPERS.replace("    return torch.cat(feats)",
                                                         "    again(model, loader)\n    return torch.cat(feats)")
                                         + "\n\ndef again(model, loader):\n    return embed_all(model, loader)\n")
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == REPORTED


def test_a_training_step_is_not_withdrawn_by_its_callers(tmp_path, cyclelint):
    """A function that runs ``backward()`` is a training step: no caller runs it under ``no_grad`` on purpose."""
    write(tmp_path)
    (tmp_path / "helpers.py").write_text(HELPERS.replace("        feats.append(model(batch))",
                                                         "        out = model(batch)\n        out.sum().backward()\n"
                                                         "        feats.append(out)"))
    assert [code for _, _, code in rows(cyclelint, tmp_path, "--no-cache", ".")] == ["CYC302"]


def test_a_name_too_many_files_mention_is_not_followed(tmp_path, cyclelint):
    write(tmp_path)
    for i in range(33):  # each names embed_all, in a comment: too common a name to follow
        (tmp_path / f"note_{i}.py").write_text("# embed_all\n")
    assert rows(cyclelint, tmp_path, "--no-cache", ".") == REPORTED
