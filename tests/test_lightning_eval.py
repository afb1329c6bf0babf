"""Lightning runs its evaluation and prediction loops under ``no_grad``/``inference_mode``: every ``validation_step``,
``test_step``, ``predict_step`` and ``on_validation_*``/``on_test_*``/``on_predict_*`` hook of a LightningModule or a
Callback, whoever defines the base, and the helpers those alone call on the instance (NeMo 3.0.0: ``FastPitchModel``
appends its validation losses through ``ModelPT`` of another file; ``EncDecSpeakerLabelModel.evaluation_step``,
called by ``validation_step`` and ``test_step``; an audio callback's ``on_validation_epoch_end`` running the model over
a few examples). The same code in ``training_step``, ``on_train_epoch_end``, or a helper ``training_step`` also
calls, keeps each step's graph, and stays reported."""
import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

MODULE = """\
import torch
{imports}


class Model({base}):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(4, 1)
        self.outputs = []

    def {method}(self, batch, batch_idx):
        loss = self.head(batch).sum()
        self.outputs.append(loss)
        return loss
"""


@pytest.mark.parametrize(("imports", "base"), [
    ("import pytorch_lightning as pl", "pl.LightningModule"),
    ("from lightning.pytorch import LightningModule", "LightningModule"),
    ("import lightning as L", "L.LightningModule"),
    ("from pytorch_lightning.core.module import LightningModule as Base", "Base"),
])
@pytest.mark.parametrize(("method", "kept"), [
    ("validation_step", False), ("test_step", False), ("predict_step", False), ("training_step", True)])
def test_a_step_of_a_lightning_module(tmp_path, imports, base, method, kept):
    found = lint_tree(tmp_path, {"model.py": MODULE.format(imports=imports, base=base, method=method)})
    assert found == ([("model.py", 13, "CYC305")] if kept else [])


@pytest.mark.parametrize("base", ["nn.Module", "Metric"])
def test_another_base_is_judged_as_before(tmp_path, base):
    # a plain module's training-like method and another library's base: nothing known of who calls them
    imports = "from torch import nn\nfrom ignite.metrics import Metric"
    found = lint_tree(tmp_path, {"model.py": MODULE.format(imports=imports, base=base, method="evaluate_step")})
    assert found == [("model.py", 14, "CYC305")]


BASE = """\
from lightning.pytorch import LightningModule


class ModelPT(LightningModule):
    pass
"""

SUBCLASS = """\
import torch
from base import ModelPT


class SpectrogramModel(ModelPT):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(4, 1)
        self.outputs = []

    def {method}(self, batch, batch_idx):
        self.outputs.append(self.head(batch).sum())
"""


@pytest.mark.parametrize(("method", "kept"), [("validation_step", False), ("on_validation_batch_end", False),
                                              ("training_step", True)])
def test_a_module_of_lightning_through_a_base_of_another_file(tmp_path, method, kept):
    found = lint_tree(tmp_path, {"base.py": BASE, "tts.py": SUBCLASS.format(method=method)})
    assert found == ([("tts.py", 12, "CYC305")] if kept else [])


HELPER = """\
import torch
from base import ModelPT


class LabelModel(ModelPT):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(4, 1)
        self.outputs = []

    def evaluation_step(self, batch, tag):
        if tag == "pair":
            return self.pair_evaluation_step(batch)
        self.outputs.append(self.head(batch).sum())

    def pair_evaluation_step(self, batch):
        self.outputs.append(self.head(batch).mean())

    def validation_step(self, batch, batch_idx):
        return self.evaluation_step(batch, "val")

    def test_step(self, batch, batch_idx):
        return self.evaluation_step(batch, "test")
{extra}"""


@pytest.mark.parametrize(("extra", "kept"), [
    ("", []),
    # the helper called in training too: its state keeps the training step's graph
    ("\n    def training_step(self, batch, batch_idx):\n        return self.evaluation_step(batch, 'train')\n",
     [14, 17]),
    # handed on as a callback: who calls it, and how, is unknown
    ("\n    def hooks(self):\n        return [self.pair_evaluation_step]\n", [17]),
])
def test_helpers_called_only_by_evaluation_steps(tmp_path, extra, kept):
    found = lint_tree(tmp_path, {"base.py": BASE, "label.py": HELPER.format(extra=extra)})
    assert found == [("label.py", line, "CYC305") for line in kept]


CALLBACK = """\
import torch
from lightning.pytorch import Callback


class LoggingCallback(Callback):
    def {hook}(self, trainer, model):
        outputs = []
        for batch in trainer.val_dataloaders:
            output = model(batch)
            outputs.append(output)
        return torch.cat(outputs).mean().item()
"""


@pytest.mark.parametrize(("hook", "kept"), [("on_validation_epoch_end", False), ("on_test_batch_end", False),
                                            ("on_train_epoch_end", True)])
def test_a_hook_of_a_lightning_callback(tmp_path, hook, kept):
    found = lint_tree(tmp_path, {"callbacks.py": CALLBACK.format(hook=hook)})
    assert found == ([("callbacks.py", 10, "CYC302")] if kept else [])
