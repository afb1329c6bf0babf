import torch


def history(model, loader, opt, criterion):
    losses, outputs, pairs, by_step, window = [], {}, [], {}, []
    for step, (x, y) in enumerate(loader):
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        opt.step()
        losses.append(loss)
        outputs[step] = model(x)  # a model may return a tuple or a ModelOutput: no rewrite
        pairs.append((out, step))  # out is what model returned: no rewrite
        by_step[step] += loss
        window += [loss, step]
        losses.append(
            loss  # the comment stays
            * 2
        )
    return losses, outputs, pairs, by_step, window


def not_fixable(model, loader, opt, criterion):
    batches = []
    for x, y in loader:
        outs = [model(x)]
        criterion(outs[0], y).backward()
        opt.step()
        batches.extend(outs)  # the list itself cannot be detached: no rewrite
    return batches


class Evaluator:
    def __init__(self, model):
        self.model = model
        self.scores = []

    def serve(self, requests):
        for request in requests:
            logits = self.model(request)
            self.scores.append(logits.softmax(-1).cpu())  # logits: a model's output, no rewrite
