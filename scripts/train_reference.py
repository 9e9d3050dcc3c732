#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The framework's answer for `tpusim train`: the same MLP trained by PyTorch in float32 with the
same recipe, initial weights and data order (docs/training.md), so the accelerator's mixed-
precision training can be compared with it. Needs Debian's python3-torch (scripts/deps.sh models).

  scripts/train_reference.py --sizes 64,128,64,10 --train examples/digits_train.npz \\
      --test examples/digits_test.npz --epochs 10 --batch 32 --lr 0.05 --momentum 0.9 --seed 1 \\
      [--json OUT.json]

Initial weights: He-uniform from SplitMix64 (seed ^ 0x7470757472616E31), w = (2u - 1)·sqrt(6 / in)
in binary64 rounded to float32, row-major in × out per layer, biases 0. Data order: per epoch a
Fisher-Yates shuffle driven by SplitMix64 seeded with seed + epoch, full batches only. Both are
tpu/train.h's (InitMlp, EpochOrder), written again here.
"""
import argparse
import json
import math
import sys

import numpy as np

M64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, state):
        self.s = state & M64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


def init_mlp(sizes, seed):
    rng = SplitMix64(seed ^ 0x7470757472616E31)
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        limit = math.sqrt(6.0 / fan_in)
        w = np.empty((fan_in, fan_out), dtype=np.float32)
        for i in range(fan_in):
            for j in range(fan_out):
                u = (rng.next() >> 11) * 2.0 ** -53
                w[i, j] = np.float32((2.0 * u - 1.0) * limit)
        layers.append((w, np.zeros(fan_out, dtype=np.float32)))
    return layers


def epoch_order(n, seed, epoch):
    order = list(range(n))
    rng = SplitMix64(seed + epoch)
    for i in range(n - 1, 0, -1):
        j = rng.next() % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def main():
    import torch
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("--test")
    ap.add_argument("--epochs", type=int, required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    sizes = [int(s) for s in a.sizes.split(",")]
    tr = np.load(a.train)
    x = torch.from_numpy(tr["x"].reshape(len(tr["y"]), -1).astype(np.float32))
    y = torch.from_numpy(tr["y"].astype(np.int64))
    params = []
    for w, b in init_mlp(sizes, a.seed):
        params += [torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)]
    opt = torch.optim.SGD(params, lr=a.lr, momentum=a.momentum)

    def forward(v):
        for i in range(0, len(params), 2):
            v = v @ params[i] + params[i + 1]
            if i + 2 < len(params):
                v = torch.relu(v)
        return v

    test = None
    if a.test:
        te = np.load(a.test)
        test = (torch.from_numpy(te["x"].reshape(len(te["y"]), -1).astype(np.float32)),
                torch.from_numpy(te["y"].astype(np.int64)))
    per_epoch = len(y) // a.batch
    epochs = []
    for e in range(a.epochs):
        order = torch.tensor(epoch_order(len(y), a.seed, e))
        loss_sum, correct = 0.0, 0
        for s in range(per_epoch):
            idx = order[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad()
            z = forward(x[idx])
            loss = torch.nn.functional.cross_entropy(z, y[idx])
            loss.backward()
            opt.step()
            loss_sum += float(loss)
            correct += int((z.argmax(1) == y[idx]).sum())
        rec = {"epoch": e + 1, "loss": loss_sum / per_epoch,
               "train_accuracy": correct / (per_epoch * a.batch)}
        if test:
            with torch.no_grad():
                rec["test_accuracy"] = float((forward(test[0]).argmax(1) == test[1]).float().mean())
        epochs.append(rec)
        print(f"epoch {e + 1}: loss {rec['loss']:.4f}, train {100 * rec['train_accuracy']:.2f}%"
              + (f", test {100 * rec['test_accuracy']:.2f}%" if test else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"framework": f"PyTorch {torch.__version__} float32", "sizes": sizes,
                       "recipe": {"batch": a.batch, "lr": a.lr, "momentum": a.momentum,
                                  "seed": a.seed, "epochs": a.epochs},
                       "epochs": epochs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
