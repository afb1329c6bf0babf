"""A small training loop for the --confirm overhead benchmark; prints its own loop time.

It has one flagged accumulation (CYC301) so that the detector samples the loop on every pass.
"""
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = os.environ.get("CYCLELINT_DEVICE", "cuda" if torch.cuda.is_available() else "cpu")


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.head = nn.Linear(width, 10)

    def forward(self, x):
        return self.head(self.body(x))


def train(steps, width=256, batch=64):
    torch.manual_seed(0)
    model = Net(width).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, width, device=DEVICE)
    y = torch.randint(0, 10, (batch,), device=DEVICE)
    running = 0.0
    worst = 0.0
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss  # the flagged line: keeps every step's graph
        worst = max(worst, loss.item())
    return running, worst


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    train(10)  # warm-up
    t0 = time.perf_counter()
    train(steps)
    print(f"loop_seconds={time.perf_counter() - t0:.4f}")
