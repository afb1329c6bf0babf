"""Runs the confirm command in a child process with the detector installed; never imports torch.

The detector reaches every Python process the command starts through a ``sitecustomize`` put first
on ``PYTHONPATH`` (it then runs the ``sitecustomize`` it shadows, if any). Each process writes
its own evidence file; this side reads them all once the command has ended.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import human_bytes
from .child.watchplan import ENV_DIR, ENV_PLAN, Plan
from .supervise import ChildGroup

CHILD = Path(__file__).with_name("child")

BOOTSTRAP = '''\\
# Written by cyclelint --confirm for the duration of one command.
def _cyclelint_bootstrap():
    import importlib.machinery, importlib.util, os, sys
    spec = importlib.util.spec_from_file_location("_cyclelint_confirm_child", {init!r},
                                                  submodule_search_locations=[{folder!r}])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        module.start_from_environment()
    except Exception as exc:
        print(f"cyclelint: the detector could not start in pid {{os.getpid()}}: {{exc}}", file=sys.stderr)
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    shadowed = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if shadowed is not None and shadowed.loader is not None:
        shadowed.loader.exec_module(sys.modules["sitecustomize"])


_cyclelint_bootstrap()
del _cyclelint_bootstrap
'''


@dataclass
class ChildRun:
    returncode: int
    seconds: float
    evidence: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def default_command() -> list[str]:
    python = shutil.which("python") or sys.executable
    return [python, "-m", "pytest", "-q"]


def run_command(command: Sequence[str], plan: Plan, progress: bool, stdout=None) -> ChildRun:
    """Run ``command`` under the detector; ``stdout`` (a file) takes the command's stdout, if given.

    Raises ``supervise.Interrupted`` when cyclelint gets SIGINT/SIGTERM/SIGHUP: by then the command
    and everything it started are gone and the temporary folder is removed.
    """
    work = tempfile.mkdtemp(prefix="cyclelint-confirm-")
    try:
        boot = os.path.join(work, "boot")
        evidence_dir = os.path.join(work, "evidence")
        os.mkdir(boot)
        os.mkdir(evidence_dir)
        with open(os.path.join(boot, "sitecustomize.py"), "w", encoding="utf-8") as fh:
            fh.write(BOOTSTRAP.format(init=str(CHILD / "__init__.py"), folder=str(CHILD)))
        plan_path = os.path.join(work, "plan.json")
        with open(plan_path, "w", encoding="utf-8") as fh:
            fh.write(plan.to_json())
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (boot, env.get("PYTHONPATH")) if p)
        env[ENV_DIR] = evidence_dir
        env[ENV_PLAN] = plan_path
        return _supervise(list(command), env, work, evidence_dir, progress, stdout)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _supervise(command: list[str], env: dict, work: str, evidence_dir: str, progress: bool, stdout) -> ChildRun:
    started = time.perf_counter()
    stop = threading.Event()
    ticker = threading.Thread(target=_show_progress, args=(evidence_dir, started, stop), daemon=True)
    try:
        with ChildGroup(command, env, work, stdout) as group:
            if progress:
                ticker.start()
            rc = group.wait()
            run = ChildRun(rc if rc >= 0 else 128 - rc, time.perf_counter() - started)
            run.evidence, run.problems = read_evidence(evidence_dir)
    except OSError as exc:
        return ChildRun(127, 0.0, problems=[f"cannot run {command[0]}: {exc.strerror or exc}"])
    finally:
        stop.set()
        if ticker.is_alive():
            ticker.join()
            sys.stderr.write("\r\033[K")
    if rc < 0:
        run.problems.append(f"the command was killed by signal {signal.Signals(-rc).name}")
    return run


def read_evidence(folder: str) -> tuple[list[dict], list[str]]:
    found, problems = [], []
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        return [], [f"cannot read the evidence folder: {exc.strerror}"]
    for name in names:
        if not (name.startswith("evidence-") and name.endswith(".json")):
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                found.append(json.load(fh))
        except (OSError, ValueError) as exc:
            problems.append(f"unreadable evidence {name}: {exc}")
    return found, problems


def _show_progress(folder: str, started: float, stop: threading.Event) -> None:
    while not stop.wait(0.5):
        evidence, _ = read_evidence(folder)
        cycles = sum(c["count"] for e in evidence for c in e.get("cycles", []))
        held = sum(c["bytes"] for e in evidence for c in e.get("cycles", []))
        loops = sum(len(e.get("loops", {})) for e in evidence)
        sys.stderr.write(f"\r\033[K[cyclelint --confirm] {time.perf_counter() - started:5.1f}s  "
                         f"{len(evidence)} process{'es' * (len(evidence) != 1)}  "
                         f"{cycles} cycle{'s' * (cycles != 1)} with tensors ({human_bytes(held)})  "
                         f"{loops} loop{'s' * (loops != 1)} sampled")
        sys.stderr.flush()
