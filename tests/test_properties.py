"""Property tests: whatever bytes a file holds, the engine answers with findings inside the file or
one error, and never raises, hangs or takes the run down."""
import random

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cyclelint.engine import lint_source
from cyclelint.findings import RULES

from .conftest import FIXTURES

EVERY_RULE = frozenset(RULES)
SOURCES = [p.read_bytes() for p in sorted(FIXTURES.rglob("*.py"))]
FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=150)


def check(source):
    result = lint_source(source, "prop.py", EVERY_RULE)
    assert result.error is None or not result.error.startswith("internal error"), result.error
    if result.error:
        assert not result.findings
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    last = len(text.splitlines()) + 1
    for f in result.findings:
        assert 1 <= f.line <= f.end_line <= last and f.column >= 1, f
        assert f.end_line > f.line or f.end_column >= f.column, f
    return result


@FAST
@given(st.binary(max_size=2000))
def test_random_bytes(data):
    check(data)


@FAST
@given(st.text(max_size=2000))
def test_random_text(text):
    check(text)


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=60)
@given(hypothesmith.from_grammar())
def test_generated_programs(source):
    check(source)


@FAST
@given(st.sampled_from(SOURCES), st.data())
def test_mangled_fixtures(source, data):
    """Real leak programs with bytes cut, repeated or replaced: near-valid code reaches every rule."""
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    out = bytearray(source)
    for _ in range(data.draw(st.integers(1, 6))):
        i = rng.randrange(len(out) + 1)
        op = rng.choice("cut copy byte")
        if op == "cut":
            del out[i:i + rng.randrange(1, 40)]
        elif op == "copy":
            j = rng.randrange(len(source))
            out[i:i] = source[j:j + rng.randrange(1, 80)]
        else:
            out[i:i] = bytes([rng.choice(b"()[]{}:\n\t \\'\"#=.,@*\x00\xff")])
    check(bytes(out))


@pytest.mark.parametrize("source", [
    pytest.param("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n", id="5000-parens"),
    pytest.param("x = " + "[" * 5000 + "]" * 5000 + "\n", id="5000-lists"),
    pytest.param("x = a" + ".b" * 50_000 + "\n", id="50k-attribute-chain"),
    pytest.param("x = " + " + ".join(["loss"] * 100_000) + "\n", id="100k-term-sum"),
    pytest.param("print 'py2'\nx = a" + ".b" * 20_000 + "\n", id="py2-and-deep"),
    pytest.param("".join("    " * i + "if x:\n" for i in range(120)) + "    " * 120 + "pass\n", id="120-blocks"),
    pytest.param("x = a" + "[0]" * 2900 + "\n", id="deep-but-parsable"),
])
def test_deep_nesting_is_an_error_or_a_result_never_a_crash(tmp_path, cyclelint, source):
    """Run as a user does: a native stack overflow would kill the process, not raise."""
    (tmp_path / "deep.py").write_text(source)
    proc = cyclelint("--no-cache", "deep.py", cwd=tmp_path)
    assert proc.returncode in (0, 2), proc.stderr
    assert "Traceback" not in proc.stderr
    if proc.returncode == 2:
        assert proc.stderr.count("cyclelint: error: deep.py: ") == 1


def test_hundred_thousand_line_file(tmp_path, cyclelint):
    lines = ["import torch", "total = 0.0", "for x, y in loader:"]
    lines += [f"    out{i} = model(x)" for i in range(100_000)]
    lines += ["    loss = criterion(out0, y)", "    loss.backward()", "    total += loss"]
    (tmp_path / "big.py").write_text("\n".join(lines) + "\n")
    proc = cyclelint("--no-cache", "big.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert f"big.py:{len(lines)}:5: CYC301 " in proc.stdout
