#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the example models with Debian's PyTorch (python3-torch, python3-torchvision) and
scikit-learn (python3-sklearn), offline, and exports them to ONNX for `tpusim onnx`.

  scripts/make_models.py digits [--out examples]   the digits MLP and CNN, trained (committed)
  scripts/make_models.py digits-data [--out examples]  only the splits as .npz (committed)
  scripts/make_models.py resnet18|resnet50|mobilenet_v2|squeezenet1_1|efficientnet_b0|vgg11
                         [--out build/examples] [--batch N]
                                                     torchvision's models, random initial weights

digits: scikit-learn's 8x8 digits (1,797 images, shipped with python3-sklearn), split 75/25 with
a fixed seed; pixels scaled to [0, 1]. Writes digits_mlp.onnx, digits_cnn.onnx, the test split
(digits_test_x.npy: N x 1 x 8 x 8 float32, digits_test_labels.npy: int64) and PyTorch's float32
logits on it (digits_{mlp,cnn}_torch_logits.npy), so a run on the accelerator can be compared with
the framework's own answer. Training is seeded and deterministic on one thread. Both write the
splits for `tpusim train` too: digits_train.npz and digits_test.npz (x: N x 1 x 8 x 8 float32,
y: int64).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

SEED = 20261126


def digits_split():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None, :, :]
    y = d.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64),
                                 nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.net(x)


class Cnn(nn.Module):
    """Conv-BN-ReLU, a residual block, max pooling, global average pooling, a dense layer."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                                   nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1, bias=False),
                                   nn.BatchNorm2d(16))
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv3 = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.stem(x)
        x = self.relu(x + self.block(x))
        x = self.conv3(self.pool(x))
        return self.fc(torch.flatten(self.gap(x), 1))


def train(model, xtr, ytr, epochs, lr):
    torch.manual_seed(SEED)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.from_numpy(xtr)
    y = torch.from_numpy(ytr)
    g = torch.Generator().manual_seed(SEED)
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(len(x), generator=g)
        for i in range(0, len(x), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss_fn(model(x[idx]), y[idx]).backward()
            opt.step()
    model.eval()
    return model


def export(model, example, path, batch_dynamic=True):
    axes = {"x": {0: "batch"}, "logits": {0: "batch"}} if batch_dynamic else None
    # Eval-mode export keeps BatchNormalization nodes (no training-mode statistics): the importer
    # folds them into the convolutions itself, as docs/numerics.md states.
    torch.onnx.export(model, example, path, input_names=["x"], output_names=["logits"],
                      dynamic_axes=axes, opset_version=13, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)


def digits_data(out):
    xtr, xte, ytr, yte = digits_split()
    os.makedirs(out, exist_ok=True)
    np.savez_compressed(os.path.join(out, "digits_train.npz"), x=xtr, y=ytr)
    np.savez_compressed(os.path.join(out, "digits_test.npz"), x=xte, y=yte)
    print(f"digits: {len(ytr)} training and {len(yte)} test images into {out}/digits_*.npz")
    return xtr, xte, ytr, yte


def digits(out):
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    xtr, xte, ytr, yte = digits_data(out)
    np.save(os.path.join(out, "digits_test_x.npy"), xte)
    np.save(os.path.join(out, "digits_test_labels.npy"), yte)
    summary = {}
    for name, model, epochs, lr in (("mlp", Mlp(), 60, 3e-3), ("cnn", Cnn(), 40, 3e-3)):
        torch.manual_seed(SEED)
        for p in model.parameters():  # re-initialise under the fixed seed
            if p.dim() > 1:
                nn.init.kaiming_uniform_(p, a=5 ** 0.5)
        model = train(model, xtr, ytr, epochs, lr)
        with torch.no_grad():
            logits = model(torch.from_numpy(xte)).numpy().astype(np.float32)
        acc = float((logits.argmax(1) == yte).mean())
        np.save(os.path.join(out, f"digits_{name}_torch_logits.npy"), logits)
        path = os.path.join(out, f"digits_{name}.onnx")
        export(model, torch.from_numpy(xte[:1]), path)
        summary[name] = {"test_accuracy_float32": acc, "test_images": int(len(yte)),
                         "onnx_bytes": os.path.getsize(path)}
        print(f"digits {name}: float32 test accuracy {100 * acc:.2f}% on {len(yte)} images, "
              f"{path} ({os.path.getsize(path)} bytes)")
    with open(os.path.join(out, "digits_models.json"), "w") as f:
        json.dump(summary, f, indent=1)


# torchvision's models of issue 35's list (random initial weights, batch 1 by default).
TORCHVISION = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "vgg11"]


def resnet(name, out, batch):
    import torchvision
    torch.manual_seed(SEED)
    model = getattr(torchvision.models, name)(weights=None).eval()
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{name}.onnx")
    x = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(SEED))
    export(model, x, path, batch_dynamic=False)
    np.save(os.path.join(out, f"{name}_input.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, f"{name}_torch_logits.npy"), model(x).numpy())
    print(f"{name}: random initial weights, input {tuple(x.shape)}, {path} "
          f"({os.path.getsize(path)} bytes)")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", choices=["digits", "digits-data"] + TORCHVISION)
    ap.add_argument("--out", help="output folder (default: examples for digits, else "
                    "build/examples)")
    ap.add_argument("--batch", type=int, default=1, help="torchvision model batch (default 1)")
    a = ap.parse_args()
    if a.model == "digits":
        digits(a.out or "examples")
    elif a.model == "digits-data":
        digits_data(a.out or "examples")
    else:
        resnet(a.model, a.out or "build/examples", a.batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
