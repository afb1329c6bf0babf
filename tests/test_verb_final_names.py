"""A name that ends in a verb names what is done to a model, not the model: pydantic's ``model_dump`` (axolotl 0.19's
``_normalize_hash_value`` calls ``model_dump = getattr(value, "model_dump", None)`` to turn config entries into JSON)
or ``model_validate`` gives no forward pass, so the config values a loop over datasets collects hold no graph. The
same code calling a local named as the model itself (``model``, ``teacher_model``, ``encoder_forward``) stays
reported: a callable named like a model is the last resort's forward pass."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

COLLECTED = """\
import torch


def _normalize(value):
    {name} = getattr(value, "{name}", None)
    if callable({name}):
        value = {name}(mode="json")
    return value


def _fields(value, fields):
    selected = {{}}
    for field in fields:
        selected[field] = _normalize(getattr(value, field, None))
    return selected


def hash_of(cfg_datasets, fields):
    kept = []
    for dataset in cfg_datasets:
        kept.append({{"id": str(dataset), "extra": _fields(dataset, fields)}})
    return str(sorted(kept, key=str)), torch.zeros(1)
"""


@pytest.mark.parametrize(("name", "reported"), [
    ("model_dump", False),
    ("model_validate", False),
    ("model_init", False),
    ("model", True),
    ("teacher_model", True),
    ("encoder_forward", True),
    ("model_copy", True),  # the noun: a copy of the model
])
def test_verb_final_name_gives_no_forward_pass(name, reported):
    assert reports(COLLECTED.format(name=name), "CYC302") is reported


PYDANTIC = """\
import torch
from .config import DatasetConfig


def dumps(datasets):
    kept = []
    for dataset in datasets:
        kept.append(DatasetConfig(path=dataset).{call}())
    return kept
"""


@pytest.mark.parametrize(("call", "reported"), [("model_dump", False), ("model_post_init", False), ("model", True)])
def test_method_of_a_constructed_object(call, reported):
    """``DatasetConfig(...).model_dump()``: the attribute is no submodule whose call runs a forward pass."""
    assert reports(PYDANTIC.format(call=call), "CYC302") is reported
