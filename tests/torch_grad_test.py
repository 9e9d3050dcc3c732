#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The golden training loop's gradients against PyTorch's autograd (docs/training.md,
"Verification"): one SGD step with lr 1 and no momentum on the golden model (`tpusim train
--backend model`) gives each parameter's gradient as w0 - w1. PyTorch differentiates the same
network in float64 on the same bf16-rounded values: the weights, and every convolution's and
dense layer's input rounded in the forward pass as the machine rounds it (the gradient passes
the rounding unchanged), so both see the same relu masks and pooling choices. The machine also
rounds the gradients it multiplies to bf16 (a few parts in a thousand), so a tolerance is right
here: it checks the calculus, not the hardware's bits. For the digits MLP and the digits CNN
(BatchNormalization on batch statistics, the residual block, pooling).
Run by ctest (fast tier): torch_grad_test.py <build>/sim/tpusim."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
import torch
from onnx import numpy_helper

TPUSIM = sys.argv.pop(1) if len(sys.argv) > 1 else "build/sim/tpusim"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import train_reference  # noqa: E402 (the same initial weights, written in Python)
from make_models import Cnn  # noqa: E402

SEED = int(os.environ.get("TPU_SEED", "20261126"))
print(f"torch_grad_test: seed {SEED} (reproduce: TPU_SEED={SEED})", file=sys.stderr)


def bf16(a):
    """Round float32 values to bf16 (round to nearest even), as float64."""
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


class Bf16(torch.autograd.Function):
    """Rounds to bf16 in the forward pass; the gradient passes unchanged."""

    @staticmethod
    def forward(ctx, t):
        return torch.tensor(bf16(t.detach().numpy().astype(np.float32)))

    @staticmethod
    def backward(ctx, g):
        return g


def one_step(model, x, y, d):
    """The golden model's gradients: {initializer: w0 - w1} after one step with lr 1."""
    data, out = os.path.join(d, "batch.npz"), os.path.join(d, "after.onnx")
    np.savez(data, x=x, y=y)
    p = subprocess.run([TPUSIM, "train", model, "--train", data, "--steps", "1", "--batch",
                        str(len(y)), "--lr", "1", "--momentum", "0", "--seed", str(SEED % 1000),
                        "--from-scratch", "--backend", "model", "--out", out, "--quiet"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stdout)
    return {i.name: numpy_helper.to_array(i).astype(np.float64)
            for i in onnx.load(out).graph.initializer}


class Gradients(unittest.TestCase):
    def compare(self, got, want, name):
        scale = np.abs(want).max()
        err = np.abs(got - want).max()
        print(f"  {name}: largest gradient {scale:.4g}, largest difference {err:.3g}",
              file=sys.stderr)
        self.assertLessEqual(err, 0.015 * scale + 1e-6, name)

    def test_mlp(self):
        rng = np.random.default_rng(SEED)
        x = rng.random((16, 64), dtype=np.float32)
        y = rng.integers(0, 10, 16)
        seed = SEED % 1000
        with tempfile.TemporaryDirectory() as d:
            after = one_step(os.path.join(ROOT, "examples", "digits_mlp.onnx"), x, y, d)
        params = []
        for w, b in train_reference.init_mlp([64, 128, 64, 10], seed):
            params.append((w, b))
        v = torch.tensor(bf16(x))
        tensors = []
        for w, b in params:
            tw = torch.tensor(bf16(w), requires_grad=True)
            tb = torch.tensor(b.astype(np.float64), requires_grad=True)
            tensors.append((tw, tb))
        for i, (tw, tb) in enumerate(tensors):
            v = Bf16.apply(v) @ tw + tb
            if i + 1 < len(tensors):
                v = torch.relu(v)
        torch.nn.functional.cross_entropy(v, torch.tensor(y)).backward()
        for i, ((w, b), (tw, tb)) in enumerate(zip(params, tensors)):
            name = f"net.{2 * i + 1}"
            # The ONNX weights are out x in (transB); w0 - w1 is the gradient (lr 1).
            self.compare(w.T.astype(np.float64) - after[name + ".weight"], tw.grad.numpy().T,
                         name + ".weight")
            self.compare(-after[name + ".bias"], tb.grad.numpy(), name + ".bias")

    def test_cnn(self):
        rng = np.random.default_rng(SEED + 1)
        x = rng.random((8, 1, 8, 8), dtype=np.float32)
        y = rng.integers(0, 10, 8)
        cnn = os.path.join(ROOT, "examples", "digits_cnn.onnx")
        with tempfile.TemporaryDirectory() as d:
            after = one_step(cnn, x, y, d)
        module = Cnn()
        train_reference.init_cnn(module, cnn, SEED % 1000)
        before = {k: v.detach().numpy().astype(np.float64) for k, v in module.state_dict().items()}
        module = module.double()
        with torch.no_grad():  # the weights the machine multiplies: bf16
            for name, p in module.named_parameters():
                if p.dim() > 1:
                    p.copy_(torch.tensor(bf16(p.numpy().astype(np.float32))))
        for m in module.modules():  # every convolution's and dense layer's input, as bf16
            if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
                m.register_forward_pre_hook(lambda _, args: (Bf16.apply(args[0]),))
        module.train()
        out = module(torch.tensor(bf16(x)))
        torch.nn.functional.cross_entropy(out, torch.tensor(y)).backward()
        for name, p in module.named_parameters():
            self.compare(before[name] - after[name], p.grad.numpy(), name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
