import torch
import torch.nn.functional as F


def python_number(model, loader, opt):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total += float(loss.detach())  # a Python number stays one: float()
    return total


def tensor_total(model, loader, opt):
    total = torch.zeros(())
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total += loss.detach()
        total -= (0.1 * loss).detach()  # an expression is parenthesised first
    return total


def moving_average(model, loader, opt, beta=0.9):
    ema = None
    plain = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        ema = (loss if ema is None else beta * ema + (1 - beta) * loss).detach()
        plain = (beta * plain + (1 - beta) * loss).detach()  # beta may be a tensor: detach only
    return ema, plain


def in_place(model, loader, opt):
    buf = torch.zeros(())
    acc = torch.zeros(())
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        buf.add_(loss.detach())
        acc.mul_(0.9).add_(loss.detach(), alpha=0.1)  # only the tensor argument, not alpha
    return buf, acc


def kept_on_purpose(model, loader, opt):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total += loss  # noqa: CYC301
    return total
