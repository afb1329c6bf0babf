"""CUDA allocation stacks (issue 17, item 9). The snapshot parser is tested on the CPU with a sample
written here by hand in the documented shape of ``torch.cuda.memory._snapshot()``; the end-to-end test
needs a CUDA device and is skipped without one (nothing here has run on CUDA in this project's CI)."""
import importlib
import importlib.util
import json
import os
import sys

import pytest

from .conftest import FIXTURES, ROOT, run, tool

torch = pytest.importorskip("torch")


def _cuda_history():
    folder = ROOT / "cyclelint/confirm/child"
    name = "_cyclelint_child_cuda_test"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return importlib.import_module(name + ".cuda_history")


def _frame(filename, line, name):
    return {"filename": filename, "line": line, "name": name}


TORCH_FILE = os.path.join(os.path.dirname(torch.__file__), "nn", "modules", "linear.py")
SNAPSHOT = {
    "segments": [
        {"address": 0x7F0000000000, "total_size": 2 << 20, "stream": 0, "segment_type": "large",
         "allocated_size": 1536 << 10, "active_size": 1536 << 10,
         "blocks": [
             {"address": 0x7F0000000000, "size": 1 << 20, "requested_size": 1 << 20, "state": "active_allocated",
              "frames": [_frame(TORCH_FILE, 125, "forward"), _frame("/srv/train.py", 41, "build"),
                         _frame("/srv/train.py", 90, "main")]},
             {"address": 0x7F0000100000, "size": 512 << 10, "requested_size": 500 << 10,
              "state": "active_allocated", "frames": [_frame("/srv/data.py", 7, "load")]},
             {"address": 0x7F0000180000, "size": 512 << 10, "requested_size": 0, "state": "inactive",
              "frames": []},
         ]},
        {"address": 0x7F1000000000, "total_size": 1 << 20, "stream": 0, "segment_type": "small",
         "allocated_size": 4096, "active_size": 4096,
         # older snapshots leave the address out: blocks follow each other from the segment's start
         "blocks": [{"size": 2048, "state": "inactive", "frames": []},
                    {"size": 2048, "state": "active_allocated", "frames": [_frame("/srv/model.py", 12, "init")]}]},
    ],
    "device_traces": [[]],
}


def test_each_pointer_gets_the_stack_of_the_live_block_that_holds_it():
    history = _cuda_history()
    stacks = history.allocation_stacks(SNAPSHOT, [0x7F0000000000, 0x7F0000000000 + 4096, 0x7F0000100010,
                                                  0x7F0000180000, 0x7F1000000000 + 2048, 0x7E0000000000])
    # torch's own frame is left out
    assert stacks[0x7F0000000000] == [{"file": "/srv/train.py", "line": 41, "name": "build"},
                                      {"file": "/srv/train.py", "line": 90, "name": "main"}]
    assert stacks[0x7F0000000000 + 4096] == stacks[0x7F0000000000]  # a view into the block
    assert stacks[0x7F0000100010] == [{"file": "/srv/data.py", "line": 7, "name": "load"}]
    assert stacks[0x7F1000000000 + 2048] == [{"file": "/srv/model.py", "line": 12, "name": "init"}]
    assert 0x7F0000180000 not in stacks  # a free block allocated nothing
    assert 0x7E0000000000 not in stacks


def test_stacks_are_attached_to_the_drawn_tensors():
    history = _cuda_history()
    tensors = [{"shape": [256, 1024], "bytes": 1 << 20}, {"shape": [3], "bytes": 12}]
    history.attach_stacks(tensors, [0x7F0000000000, 0x1], SNAPSHOT)
    assert tensors[0]["stack"][0]["line"] == 41 and "stack" not in tensors[1]
    history.attach_stacks(tensors, [0x7F0000000000, 0x1], None)  # no snapshot: nothing changes, nothing fails


def test_without_cuda_nothing_is_recorded():
    history = _cuda_history()
    history.maybe_start()
    if not torch.cuda.is_available():
        assert history.recording() is False and history.snapshot() is None and history.allocated() is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_cycles_carry_their_allocation_stacks():
    target = FIXTURES / "confirm" / "truth" / "two_findings_one_cycle.py"
    env = dict(os.environ, CYCLELINT_DEVICE="cuda")
    proc = run([tool("cyclelint"), str(target), "--no-cache", "--format", "json", "--confirm", "--",
                sys.executable, "-c", "import torch, runpy; torch.set_default_device('cuda'); "
                f"runpy.run_path({str(target)!r}, run_name='__main__')"], cwd=ROOT, env=env)
    findings = json.loads(proc.stdout)["findings"]
    tensors = [t for f in findings for t in f["confirmation"].get("cycle", {}).get("tensors", [])]
    assert tensors and all(t["device"].startswith("cuda") for t in tensors)
    assert any(frame["file"].endswith("two_findings_one_cycle.py") for t in tensors for frame in t.get("stack", []))
