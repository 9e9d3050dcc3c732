#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The framework's answer for `tpusim train`: the same MLP trained by PyTorch in float32 with the
same recipe, initial weights and data order (docs/training.md), so the accelerator's mixed-
precision training can be compared with it. Needs Debian's python3-torch (scripts/deps.sh models).

  scripts/train_reference.py --sizes 64,128,64,10 --train examples/digits_train.npz \\
      --test examples/digits_test.npz --epochs 10 --batch 32 --lr 0.05 --momentum 0.9 --seed 1 \\
      [--json OUT.json]
  scripts/train_reference.py --cnn examples/digits_cnn.onnx ...   the digits CNN (make_models.py's)

MLP initial weights: He-uniform from SplitMix64 (seed ^ 0x7470757472616E31), w = (2u - 1)·sqrt(6 / in)
in binary64 rounded to float32, row-major in × out per layer, biases 0. Data order: per epoch a
Fisher-Yates shuffle driven by SplitMix64 seeded with seed + epoch, full batches only. Both are
tpu/train.h's (InitMlp, EpochOrder), written again here. The CNN (train::Network::InitFromSeed):
the same stream over the ONNX graph's Conv and Gemm weights in node order, each in its own
layout, fan-in = every dimension but the first; biases 0, BatchNormalization as PyTorch's
defaults; BatchNormalization trains on batch statistics and is evaluated on its running ones.
"""
import argparse
import json
import math
import os
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


def init_cnn(model, onnx_path, seed):
    """train::Network::InitFromSeed on PyTorch's module (its parameters by the ONNX names)."""
    import onnx
    import torch
    g = onnx.load(onnx_path).graph
    shapes = {i.name: list(i.dims) for i in g.initializer}
    rng = SplitMix64(seed ^ 0x7470757472616E31)
    state = model.state_dict()
    for n in g.node:
        if n.op_type not in ("Conv", "Gemm"):
            continue
        shape = shapes[n.input[1]]
        fan_in = int(np.prod(shape[1:]))
        limit = math.sqrt(6.0 / fan_in)
        w = np.empty(int(np.prod(shape)), dtype=np.float32)
        for i in range(len(w)):
            w[i] = np.float32((2.0 * ((rng.next() >> 11) * 2.0 ** -53) - 1.0) * limit)
        state[n.input[1]] = torch.from_numpy(w.reshape(shape))
        if len(n.input) > 2 and n.input[2]:
            state[n.input[2]] = torch.zeros(shapes[n.input[2]])
    model.load_state_dict(state)


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
    ap.add_argument("--sizes", help="the MLP's sizes (in,hidden...,out)")
    ap.add_argument("--cnn", help="the digits CNN: its ONNX file (the layer names and order)")
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
    if (a.sizes is None) == (a.cnn is None):
        raise SystemExit("train_reference: give --sizes (an MLP) or --cnn (the digits CNN)")
    tr = np.load(a.train)
    rows = (lambda v: v) if a.cnn else (lambda v: v.reshape(len(v), -1))
    x = torch.from_numpy(rows(tr["x"]).astype(np.float32))
    y = torch.from_numpy(tr["y"].astype(np.int64))
    if a.cnn:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from make_models import Cnn
        module = Cnn()
        init_cnn(module, a.cnn, a.seed)
        params = list(module.parameters())
        sizes = "digits CNN"

        def forward(v):
            return module(v)
    else:
        module = None
        sizes = [int(s) for s in a.sizes.split(",")]
        params = []
        for w, b in init_mlp(sizes, a.seed):
            params += [torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)]

        def forward(v):
            for i in range(0, len(params), 2):
                v = v @ params[i] + params[i + 1]
                if i + 2 < len(params):
                    v = torch.relu(v)
            return v
    opt = torch.optim.SGD(params, lr=a.lr, momentum=a.momentum)

    test = None
    if a.test:
        te = np.load(a.test)
        test = (torch.from_numpy(rows(te["x"]).astype(np.float32)),
                torch.from_numpy(te["y"].astype(np.int64)))
    per_epoch = len(y) // a.batch
    epochs = []
    for e in range(a.epochs):
        order = torch.tensor(epoch_order(len(y), a.seed, e))
        loss_sum, correct = 0.0, 0
        if module is not None:
            module.train()
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
        if module is not None:
            module.eval()
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
