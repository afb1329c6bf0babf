"""``--fix`` must keep programs running. Each shape the fixer used to break (a conditional with a number
branch, ``reduction="none"``, a model that returns a dict, a loss built with ``reduction="none"``) is
fixed through the installed command and the program is then RUN with real torch (CPU): it still runs,
and where a rewrite was made the graph is no longer kept. Where nothing can be proved, nothing changes."""
import json
import subprocess
import sys
import textwrap

from .conftest import tool

PROGRAM = textwrap.dedent(
    """\
    import json
    import torch
    import torch.nn.functional as F


    class DictModel(torch.nn.Module):  # a model whose output is no tensor (as a ModelOutput is)
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, x):
            return {"logits": self.lin(x)}


    def conditional_total(model, loader, opt, flag):
        tot = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            tot += loss if flag else 0.0
        return tot


    def conditional_append(model, loader, opt, flag, criterion):
        per = []
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            opt.step()
            per.append(loss if flag else None)
        return per


    def unreduced(model, loader, opt):
        running = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            running += F.cross_entropy(model(x), y, reduction="none")
        return running


    def unreduced_module(model, loader, opt):
        criterion = torch.nn.CrossEntropyLoss(reduction="none")
        total = 0.0
        for x, y in loader:
            total += criterion(model(x), y)
            opt.step()
        return total


    def python_number(model, loader, opt):
        total = 0.0
        for x, y in loader:
            total += F.mse_loss(model(x), torch.zeros(len(x), 3))
            opt.step()
        return total


    def unknown_branch(model, loader, opt, flag, criterion):
        tot = 0.0
        for x, y in loader:
            tot += criterion(model(x), y) if flag else 0.0  # criterion(...) may be anything: no rewrite
            opt.step()
        return tot


    def model_outputs(model, loader, opt):
        outs = []
        for x, y in loader:
            out = model(x)
            out["logits"].sum().backward()
            opt.step()
            outs.append(out)  # a dict: .detach() would be an AttributeError
        return outs


    def graph(value):
        if isinstance(value, list):
            return any(graph(v) for v in value)
        if isinstance(value, dict):
            return any(graph(v) for v in value.values())
        return bool(getattr(value, "requires_grad", False))


    def main():
        torch.manual_seed(0)
        model, dict_model = torch.nn.Linear(4, 3), DictModel()
        opt = torch.optim.SGD(list(model.parameters()) + list(dict_model.parameters()), lr=0.01)
        loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
        crit = torch.nn.CrossEntropyLoss()
        kept = {
            "conditional_total": [graph(conditional_total(model, loader, opt, flag)) for flag in (True, False)],
            "conditional_append": [graph(conditional_append(model, loader, opt, flag, crit)) for flag in (True, False)],
            "unreduced": graph(unreduced(model, loader, opt)),
            "unreduced_module": graph(unreduced_module(model, loader, opt)),
            "python_number": graph(python_number(model, loader, opt)),
            "python_number_type": type(python_number(model, loader, opt)).__name__,
            "unknown_branch": graph(unknown_branch(model, loader, opt, True, crit)),
            "model_outputs": graph(model_outputs(dict_model, loader, opt)),
        }
        print(json.dumps(kept))


    main()
    """
)


def run_program(path) -> dict:
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_each_fixed_shape_still_runs_and_keeps_no_graph(tmp_path):
    target = tmp_path / "train.py"
    target.write_text(PROGRAM)
    before = run_program(target)
    assert before == {"conditional_total": [True, False], "conditional_append": [True, False], "unreduced": True,
                      "unreduced_module": True, "python_number": True, "python_number_type": "Tensor",
                      "unknown_branch": True, "model_outputs": True}
    report = subprocess.run([tool("cyclelint"), "--no-cache", "train.py"], cwd=tmp_path, capture_output=True,
                            text=True)
    marked = {line.split(":")[1]: "[*]" in line for line in report.stdout.splitlines() if ": CYC3" in line}
    lines = PROGRAM.splitlines()
    line_of = {text: str(lines.index(text) + 1) for text in lines}
    fixable = {
        "        tot += loss if flag else 0.0": True,
        "        per.append(loss if flag else None)": True,
        '        running += F.cross_entropy(model(x), y, reduction="none")': True,
        "        total += criterion(model(x), y)": True,
        "        total += F.mse_loss(model(x), torch.zeros(len(x), 3))": True,
        "        tot += criterion(model(x), y) if flag else 0.0  # criterion(...) may be anything: no rewrite": False,
        "        outs.append(out)  # a dict: .detach() would be an AttributeError": False,
    }
    assert marked == {line_of[text]: mark for text, mark in fixable.items()}

    fixed = subprocess.run([tool("cyclelint"), "--no-cache", "--fix", "train.py"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert fixed.stderr == "Fixed 5 findings in 1 file.\n"
    changed = [(a, b) for a, b in zip(PROGRAM.splitlines(), target.read_text().splitlines()) if a != b]
    assert changed == [
        ("        tot += loss if flag else 0.0", "        tot += float(loss.detach()) if flag else 0.0"),
        ("        per.append(loss if flag else None)", "        per.append(loss.detach() if flag else None)"),
        ('        running += F.cross_entropy(model(x), y, reduction="none")',
         '        running += F.cross_entropy(model(x), y, reduction="none").detach()'),
        ("        total += criterion(model(x), y)", "        total += criterion(model(x), y).detach()"),
        ("        total += F.mse_loss(model(x), torch.zeros(len(x), 3))",
         "        total += float(F.mse_loss(model(x), torch.zeros(len(x), 3)).detach())"),
    ]
    after = run_program(target)
    assert after == {"conditional_total": [False, False], "conditional_append": [False, False], "unreduced": False,
                     "unreduced_module": False, "python_number": False, "python_number_type": "float",
                     "unknown_branch": True, "model_outputs": True}
