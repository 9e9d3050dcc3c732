#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`make bench-train`: training on the accelerator (docs/training.md), on the default and the
TPU-class configurations, every job checked against the golden model.

 1. Transposes at the same shapes: `tpusim gemm` M x K x N with A, B or both stored transposed
    (read by ISA 1.3's transposing LOADs) against the plain GEMM: the MAC utilization and its
    ratio to the plain one. The backward GEMMs are these: dX = dY·Wᵀ (B transposed) and
    dW = Xᵀ·dY (A transposed).
 2. Training passes: `tpusim train` MACs/cycle per pass (forward, backward; the update is a pass
    of its own, on the vector unit where the configuration has one): the digits MLP (64-128-64-10, batch 32, one epoch) and the digits CNN (batch 32, ten
    steps) on each configuration, and a wider MLP (512-512-512-10, batch 256, random data) where
    the TPU-class array has work to do.

Writes build/bench/train.md and train.json.

  scripts/bench_train.py [--configs 16x16_1ch,128x128_8ch] [--quick]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genlib  # noqa: E402 (this folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = {"16x16_1ch": [(512, 512, 512), (128, 32, 64)], "128x128_8ch": [(1024, 1024, 1024),
                                                                        (512, 256, 512)]}
VARIANTS = [("plain", []), ("A transposed", ["--trans-a"]), ("B transposed", ["--trans-b"]),
            ("both", ["--trans-a", "--trans-b"])]
GEMM_HEAD = ["config", "M×K×N"] + [name for name, _ in VARIANTS] + ["lowest / plain"]
GEMM_ALIGN = ["left", "left"] + ["right"] * (len(GEMM_HEAD) - 2)
TRAIN_HEAD = ["config", "model", "batch", "steps", "forward MACs/cycle (util)",
              "backward MACs/cycle (util)", "backward / forward", "host s (between jobs)", "sim s"]
TRAIN_ALIGN = ["left", "left"] + ["right"] * (len(TRAIN_HEAD) - 2)


def run(args):
    t0 = time.time()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        raise SystemExit(f"bench-train: {' '.join(args[1:4])} failed (exit {p.returncode})")
    return p.stdout, time.time() - t0


def gemm(tpusim, config, shape, flags, out):
    m, k, n = shape
    js = os.path.join(out, "gemm.json")
    run([tpusim, "gemm", "--m", str(m), "--k", str(k), "--n", str(n), "--seed", "1", "--config",
         config, "--json", js, "--quiet"] + flags)
    with open(js) as f:
        j = json.load(f)
    return j["macs"] / (j["cycles"] * j["peak_macs_per_cycle"]), j["cycles"]


def wide_mlp(folder, sizes, rows, seed):
    """An ONNX MLP (Gemm + Relu) of the given sizes and random data, for tpusim train."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    nodes, inits, cur = [], [], "x"
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        inits += [numpy_helper.from_array(np.zeros((b, a), np.float32), f"w{i}"),
                  numpy_helper.from_array(np.zeros(b, np.float32), f"b{i}")]
        last = i == len(sizes) - 2
        out = "logits" if last else f"z{i}"
        nodes.append(helper.make_node("Gemm", [cur, f"w{i}", f"b{i}"], [out], transB=1))
        if not last:
            nodes.append(helper.make_node("Relu", [out], [f"h{i}"]))
            out = f"h{i}"
        cur = out
    g = helper.make_graph(nodes, "wide_mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", sizes[0]])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                                         ["n", sizes[-1]])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(folder, "wide_mlp.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(seed)
    data = os.path.join(folder, "wide_data.npz")
    np.savez(data, x=rng.random((rows, sizes[0]), dtype=np.float32),
             y=rng.integers(0, sizes[-1], rows))
    return path, data


def train(tpusim, config, model, data, args, out):
    js = os.path.join(out, "train.json")
    text, wall = run([tpusim, "train", model, "--train", data, "--config", config, "--json", js,
                      "--quiet", "--from-scratch"] + args)
    with open(js) as f:
        j = json.load(f)
    j["wall_seconds"] = wall
    return j


def markdown(gemm_rows, train_rows):
    """train.md: the transposes table (GEMM_HEAD's cells) and the training table (TRAIN_HEAD's)."""
    md = ["### Transposes at the same shapes (`tpusim gemm`, every output checked)", ""]
    md += genlib.md_table(GEMM_HEAD, gemm_rows, GEMM_ALIGN).split("\n")
    md += ["", "### Training passes (`tpusim train`, every job checked)", ""]
    md += genlib.md_table(TRAIN_HEAD, train_rows, TRAIN_ALIGN).split("\n")
    return "\n".join(md) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpusim", default=os.path.join(ROOT, "build", "sim", "tpusim"))
    ap.add_argument("--configs", default="16x16_1ch,128x128_8ch")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--quick", action="store_true", help="the first GEMM shape only, 10 steps")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    configs = a.configs.split(",")
    result = {"gemm": [], "train": []}
    gemm_rows, train_rows = [], []
    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        for config in configs:
            for shape in SHAPES.get(config, [(256, 256, 256)])[:1 if a.quick else None]:
                utils = []
                for name, flags in VARIANTS:
                    u, cycles = gemm(a.tpusim, config, shape, flags, tmp)
                    utils.append(u)
                    result["gemm"].append({"config": config, "shape": shape, "variant": name,
                                           "utilization": u, "cycles": cycles})
                    print(f"{config} {'x'.join(map(str, shape))} {name}: {100 * u:.1f}% "
                          f"({cycles} cycles)", flush=True)
                gemm_rows.append([config, "×".join(map(str, shape))]
                                 + [f"{100 * u:.1f}%" for u in utils]
                                 + [f"{min(utils[1:]) / utils[0]:.3f}"])
        digits = os.path.join(ROOT, "examples", "digits_mlp.onnx")
        digits_data = os.path.join(ROOT, "examples", "digits_train.npz")
        wide, wide_data = wide_mlp(tmp, [512, 512, 512, 10], 1024, 1)
        runs = [("digits MLP 64-128-64-10", digits, digits_data, 32,
                 ["--epochs", "1"] if not a.quick else ["--steps", "10"]),
                ("digits CNN", os.path.join(ROOT, "examples", "digits_cnn.onnx"), digits_data,
                 32, ["--steps", "3" if a.quick else "10"]),
                ("MLP 512-512-512-10", wide, wide_data, 256, ["--steps", "2" if a.quick else "3"])]
        for config in configs:
            for name, model, data, batch, extra in runs:
                j = train(a.tpusim, config, model, data,
                          ["--batch", str(batch), "--lr", "0.05", "--momentum", "0.9"] + extra, tmp)
                f, b = j["passes"]["forward"], j["passes"]["backward"]
                peak = j["peak_macs_per_cycle"]
                result["train"].append({"config": config, "model": name, "batch": batch,
                                        "steps": len(j["steps"]), "passes": j["passes"],
                                        "wall_seconds": j["wall_seconds"]})
                train_rows.append([
                    config, name, batch, len(j["steps"]),
                    f"{f['macs_per_cycle']:.1f} ({100 * f['macs_per_cycle'] / peak:.1f}%)",
                    f"{b['macs_per_cycle']:.1f} ({100 * b['macs_per_cycle'] / peak:.1f}%)",
                    f"{b['macs_per_cycle'] / f['macs_per_cycle']:.3f}",
                    f"{j['passes']['host_seconds']:.2f}", f"{j['wall_seconds']:.0f}"])
                print(genlib.md_table(TRAIN_HEAD, train_rows[-1:], TRAIN_ALIGN).split("\n")[-1],
                      flush=True)
    text = markdown(gemm_rows, train_rows)
    print("\n" + text)
    with open(os.path.join(a.out, "train.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "train.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
