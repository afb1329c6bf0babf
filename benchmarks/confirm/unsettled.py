"""The same training loop, beside a flagged line that never runs: the detector keeps tracing
to the end (its worst case), because it cannot know that the line will not run later."""
import sys
import time

from train_loop import train


class Recorder:
    def __init__(self):
        self.log = []

    def attach(self, module):
        module.register_forward_hook(lambda m, i, o: self.log.append(o))  # flagged (CYC104), never run


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    train(10)
    t0 = time.perf_counter()
    train(steps)
    print(f"loop_seconds={time.perf_counter() - t0:.4f}")
