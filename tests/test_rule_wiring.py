"""Each rule is declared once, in the rule table (findings.RULES), and everything else that lists rules is
checked against it: a rule added in one place and not wired everywhere fails here."""
import json

import pytest

from cyclelint.api import lint_paths
from cyclelint.confirm import observe
from cyclelint.findings import OBSERVED, RULES
from cyclelint.report.sarif import render
from cyclelint.rule_docs import rule_page
from cyclelint.rules import ALL_RULES

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

NOT_A_CHECKER = {"CYC001": "unused_noqa.py, after every checker", "CYC900": "--confirm alone"}


def test_every_code_has_a_page():
    assert [code for code in RULES if not rule_page(code)] == []


def test_every_checker_code_is_declared_and_every_declared_code_has_one_checker():
    owners: dict[str, list[str]] = {}
    for checker in ALL_RULES:
        for code in checker.codes:
            owners.setdefault(code, []).append(checker.__name__)
    assert {code: who for code, who in owners.items() if len(who) > 1} == {}
    assert set(owners) == set(RULES) - set(NOT_A_CHECKER)


def test_confirm_observes_every_rule_as_declared():
    assert {r.observed for r in RULES.values()} <= set(OBSERVED) | {None}
    plan_kinds = {observe.CYCLE, observe.LOOP, observe.STATE, observe.SURVIVOR, observe.BODY}
    for code, rule in RULES.items():
        expected = None if rule.observed in (None, observe.RUNTIME) else rule.observed
        assert observe.how(code) == expected
        assert expected is None or expected in plan_kinds, code


def test_fixable_findings_come_from_codes_declared_fixable_and_each_such_code_has_one():
    findings, _ = lint_paths([str(FIXTURES)], select=list(RULES), cache=None)
    fixable = {f.code for f in findings if f.fixable}
    assert fixable == {code for code, rule in RULES.items() if rule.fixable}


def test_sarif_lists_the_rule_table():
    run = json.loads(render([], []))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [(r["id"], r["name"], r["defaultConfiguration"]["enabled"]) for r in rules] == [
        (code, RULES[code].name, RULES[code].default) for code in sorted(RULES)]


def test_every_page_opens_with_the_rule_table_row():
    """The page's title and first line say what the table says: the name, the summary and whether it is off by default
    (``cyclelint rule`` prints the page, SARIF and ``--statistics`` the table)."""
    for code, rule in RULES.items():
        title, _, summary = rule_page(code).splitlines()[:3]
        assert title == f"# {code} {rule.name}", code
        assert summary == rule.summary + ("" if rule.default else " (off by default)") + ".", code
