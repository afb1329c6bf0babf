"""A cache decorator is judged by what the file imports it as, not by its last name: Streamlit's ``@st.cache`` keys by
a hash of the arguments and keeps none of them (simpletransformers 0.70.8 streamlit/*_view.py, the model hashed
through ``hash_funcs``), methodtools' ``lru_cache`` keeps one cache per instance. functools' caches, imported under any
name, and ``cachetools.func``'s drop-ins keep every argument, the instance included, and stay reported; so does a name
the file does not import (defined or star-imported here) or imports from its own package."""
import ast

import pytest

from cyclelint.classtable import cache_factories
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.imports import import_origins
from cyclelint.project.resolve import resolve_project
from cyclelint.vocabulary import cache_decorator

pytestmark = pytest.mark.lintpath

METHOD = """\
{imports}
import torch.nn as nn


class Encoder(nn.Module):
    @{deco}
    def embed(self, text):
        return self.table[text]
"""

FUNCTION = """\
{imports}


@{deco}
def get_prediction(model, input_text):
    return model.predict([input_text])
"""

KEPT = [
    ("import functools", "functools.lru_cache(maxsize=None)"),
    ("import functools as ft", "ft.cache"),
    ("from functools import lru_cache", "lru_cache"),
    ("from functools import lru_cache as memo", "memo"),  # the name says nothing: the import does
    ("from cachetools.func import lru_cache", "lru_cache"),
    ("from .utils import lru_cache", "lru_cache"),  # the project's own: judged by its name, as before
    ("from functools import *", "cache"),
]
QUIET = [
    ("import streamlit as st", "st.cache"),
    ("import streamlit as st", "st.cache(hash_funcs={object: id})"),
    ("import streamlit", "streamlit.cache"),
    ("from streamlit import cache", "cache"),
    ("from methodtools import lru_cache", "lru_cache()"),
]


def _lint(source: str, prefilter: bool) -> list[tuple[int, str]]:
    result = lint_source(source, "view.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("imports", "deco", "kept"), [(*case, True) for case in KEPT] + [(*c, False) for c in QUIET])
def test_a_cache_on_a_module_method(imports, deco, kept, prefilter):
    source = METHOD.format(imports=imports, deco=deco)
    assert _lint(source, prefilter) == ([(6, "CYC402")] if kept else [])


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("imports", "deco", "kept"), [(*case, True) for case in KEPT] + [(*c, False) for c in QUIET])
def test_a_module_level_cache_keyed_by_a_model(imports, deco, kept, prefilter):
    source = FUNCTION.format(imports=imports, deco=deco)
    assert _lint(source, prefilter) == ([(4, "CYC402")] if kept else [])


def test_a_project_helper_that_builds_another_packages_cache_is_no_factory():
    source = ("import functools\nimport streamlit as st\n\n\ndef memo(**kw):\n    return functools.lru_cache(**kw)\n\n\n"
              "def hashed(**kw):\n    return st.cache(**kw)\n")
    assert cache_factories(ast.parse(source), source) == ["memo"]


def test_import_origins():
    tree = ast.parse("import a.b\nimport c.d as e\nfrom f import g as h, i\nfrom .j import k\nfrom . import m\n"
                     "from n import *\ntry:\n    import o\nexcept ImportError:\n    o = None\n")
    assert import_origins(tree) == {"a": "a", "e": "c.d", "h": "f.g", "i": "f.i", "k": ".j.k", "m": ".m", "o": "o"}


@pytest.mark.parametrize(("path", "expected"), [
    ("st.cache", None), ("functools.lru_cache", "lru_cache"), ("memo", "lru_cache"), ("lru_cache", "lru_cache"),
    ("obj.cache", "cache"), ("st.cache_data", None), ("wrap", None),
])
def test_cache_decorator(path, expected):
    origins = {"st": "streamlit", "functools": "functools", "memo": "functools.lru_cache", "wrap": ".utils.wrap"}
    assert cache_decorator(path, origins) == expected
