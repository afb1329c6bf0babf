"""What the walker learns about one function's locals dies with that function. It was once kept in
sets keyed by ``id(function)``: once a function's record was freed, the next one could get the same
id and inherit its locals (a ``height`` read from a tensor's shape made an unrelated ``range(height)``
look like the positions of one tensor), so findings came and went with memory layout."""
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

PAIRS = 30
PAIR = '''
def shape_{i}(z):
    _, _, height, _ = z.shape
    return height


def repeat_{i}(model, x, height):
    outs = []
    for _ in range(height):
        outs.append(model(x))  # each pass's graph kept while the loop runs
    print(len(outs))
'''


def test_a_local_read_from_a_shape_does_not_leak_into_the_next_function():
    source = "".join(PAIR.format(i=i) for i in range(PAIRS))
    result = lint_source(source, "pairs.py", DEFAULT_CODES, prefilter=False)
    assert result.error is None
    lines = [i for i, text in enumerate(source.splitlines(), 1) if "outs.append" in text]
    assert sorted(f.line for f in result.findings if f.code == "CYC302") == lines
