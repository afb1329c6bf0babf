"""The runtime detector: runs inside every Python process that a ``--confirm`` command starts.

The bootstrap ``sitecustomize`` loads this package from its folder under a private name, so it
uses only the standard library and its own modules (torch is looked up in ``sys.modules``, never
imported). ``watchplan`` is shared with the parent, which writes the plan.

    detector      install, restore, fork, exit, evidence (the lifecycle)
    cycles        sampled collections: what they free, counted once and freed at once
    objgraph      the garbage's object graph: edges, cycles, where each was made, rings to draw
    loops         which flagged lines ran, samples of flagged accumulators
    lines_monitor / lines_trace   line watching on 3.12+ / 3.11
    tensors       storages, bytes, autograd graphs
    cuda_history  allocation stacks from CUDA memory history
    quiet         warnings silenced without touching the program's
"""


def start_from_environment():
    from .detector import start_from_environment as start

    return start()
