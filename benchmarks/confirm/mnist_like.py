"""A pytorch/examples MNIST-style training script on synthetic data (no download): a small CNN,
Adadelta, a StepLR schedule, a train and a test pass per epoch; prints its own wall time.

Its one flagged line (CYC301: the epoch's loss summed without .item()) is the kind of thing
--confirm is asked to check.
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(2304, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(self.dropout(x), 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def batches(n, size=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        yield torch.randn(size, 1, 28, 28, generator=g), torch.randint(0, 10, (size,), generator=g)


def train(model, optimizer, steps):
    model.train()
    epoch_loss = 0.0
    for data, target in batches(steps):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        epoch_loss += loss  # the flagged line: keeps every step's graph node alive
    return epoch_loss


def test(model, steps):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in batches(steps, seed=1):
            correct += model(data).argmax(dim=1).eq(target).sum().item()
    return correct


def main(epochs, steps):
    torch.manual_seed(1)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    for _ in range(epochs):
        train(model, optimizer, steps)
        test(model, steps // 4)
        scheduler.step()


if __name__ == "__main__":
    t0 = time.perf_counter()
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2, int(sys.argv[2]) if len(sys.argv) > 2 else 100)
    print(f"loop_seconds={time.perf_counter() - t0:.4f}")
