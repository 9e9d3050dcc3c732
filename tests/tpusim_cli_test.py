#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`tpusim onnx`, `tpusim train` and `tpusim run` on bad input: each a one-line error on stderr naming what was
wrong, exit status 2, found before any simulation (the RTL back end's launcher checks before it
builds or starts an engine). And the element types users save: float32, float64, bf16 as uint16.
Run by ctest (fast tier): tpusim_cli_test.py <build>/sim/tpusim."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

TPUSIM = sys.argv.pop(1) if len(sys.argv) > 1 else "build/sim/tpusim"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MLP = os.path.join(ROOT, "examples", "digits_mlp.onnx")
NODE = "/usr/share/libonnx-testdata/data/node"


def run(*args):
    p = subprocess.run([TPUSIM, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


class BadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.x = os.path.join(self.d, "x.npy")
        np.save(self.x, np.zeros((4, 1, 8, 8), np.float32))

    def tearDown(self):
        self.tmp.cleanup()

    def expect(self, args, part, backends=("model", "rtl")):
        for b in backends:
            rc, out, err = run(*args, "--backend", b)
            self.assertEqual(rc, 2, f"{args} {b}: exit {rc}\n{out}{err}")
            lines = err.strip().splitlines()
            self.assertEqual(len(lines), 1, f"one line, got: {err}")
            self.assertIn(part, lines[0])
            self.assertTrue(lines[0].startswith("tpusim: error: "), lines[0])
            self.assertNotIn("cycles", out)  # nothing ran

    def test_bad_jobs(self):
        self.expect(["onnx", MLP, "--input", self.x, "--jobs", "0"], "--jobs 0: give from 1 to 256 processes")
        self.expect(["train", MLP, "--train", os.path.join(ROOT, "examples", "digits_train.npz"),
                     "--steps", "1", "--jobs", "300"], "--jobs 300: give from 1 to 256 processes")
        self.expect(["onnx", MLP, "--input", self.x, "--jobs", "2", "--trace",
                     os.path.join(self.d, "w.fst")],
                    "--trace with --jobs 2: waves come from one process; trace with --jobs 1")

    def test_malformed_model(self):
        self.expect(["onnx", os.path.join(ROOT, "README.md"), "--input", self.x],
                    "not an ONNX model")

    def test_wrong_shape(self):
        np.save(self.x, np.zeros((4, 64), np.float32))
        self.expect(["onnx", MLP, "--input", self.x],
                    "input 'x': shape (4, 64), but the model declares (-1, 1, 8, 8)")

    def test_unsupported_dtype(self):
        np.save(self.x, np.zeros((4, 1, 8, 8), np.float16))
        self.expect(["onnx", MLP, "--input", self.x], "dtype '<f2' (float16) is not supported")

    def test_integer_input_for_a_float_model(self):
        np.save(self.x, np.zeros((4, 1, 8, 8), np.int64))
        self.expect(["onnx", MLP, "--input", self.x],
                    "input 'x': integers; the model declares float32")

    def test_bad_npy_shape(self):
        with open(self.x, "r+b") as f:
            data = f.read().replace(b"(4, 1, 8, 8)", b"(-4, 1, 8, 8)")
            f.seek(0)
            f.write(data)
        self.expect(["onnx", MLP, "--input", self.x], "bad shape")

    def test_missing_input(self):
        model = os.path.join(NODE, "test_add", "model.onnx")
        self.expect(["onnx", model, "--input", "x=" + self.x], "input 'y' (3, 4, 5) is missing")

    def test_unknown_input(self):
        self.expect(["onnx", MLP, "--input", "y=" + self.x], "the model has no input 'y'")

    def test_unsupported_operator(self):
        model = os.path.join(NODE, "test_sigmoid", "model.onnx")
        np.save(self.x, np.zeros((3, 4, 5), np.float32))
        self.expect(["onnx", model, "--input", self.x],
                    "node 'Sigmoid_0' (Sigmoid): operator not supported")

    def test_unwritable_output(self):
        self.expect(["onnx", MLP, "--input", self.x, "--out", "/nonexistent/dir/o.npz"],
                    "the folder /nonexistent/dir does not exist")
        self.expect(["onnx", MLP, "--input", self.x, "--out", MLP], "is not a folder")
        self.expect(["onnx", MLP, "--input", self.x, "--json", "/nonexistent/s.json"],
                    "does not exist")

    def test_train_bad_input(self):
        data = os.path.join(self.d, "t.npz")
        np.savez(data, x=np.zeros((40, 1, 8, 8), np.float32), y=np.arange(40) % 10)
        base = ["train", MLP, "--train", data, "--steps", "1"]
        self.expect(["train", os.path.join(NODE, "test_sigmoid", "model.onnx"), "--train", data,
                     "--steps", "1"], "(Sigmoid): training takes Conv, BatchNormalization")
        self.expect(["train", MLP, "--train", data], "give --epochs or --steps")
        self.expect(base + ["--batch", "41"], "--batch 41: the training data has 40 rows")
        self.expect(base + ["--momentum", "1"], "--momentum 1: must be in [0, 1)")
        self.expect(base + ["--lr", "0"], "--lr 0: must be above 0")
        self.expect(base + ["--out", "/nonexistent/t.onnx"], "the folder /nonexistent does not")
        np.savez(data, x=np.zeros((40, 1, 8, 8), np.float32), y=np.arange(40))
        self.expect(base, "label 10 of row 10 is outside 0..9")
        np.savez(data, x=np.zeros((40, 60), np.float32), y=np.arange(40) % 10)
        self.expect(base, "gives rows of 60 features; the model takes 64")
        np.savez(data, x=np.zeros((40, 64), np.float32))
        self.expect(base, "needs arrays 'x'")
        self.assertFalse(os.path.exists(os.path.join(self.d, "t.onnx")))

    def test_run_bad_dtype(self):
        np.save(self.x, np.zeros((4, 4), np.int8))
        self.expect(["run", "--a", self.x, "--b", self.x, "--out", os.path.join(self.d, "o.npy")],
                    "dtype '|i1' (int8) is not supported", backends=("model",))


class Dtypes(unittest.TestCase):
    def test_run_float64_and_bf16_bits(self):
        rng = np.random.default_rng(7)
        a = rng.standard_normal((9, 13))
        b = rng.standard_normal((13, 5))
        with tempfile.TemporaryDirectory() as d:
            def go(a_arr, b_arr, name):
                pa, pb, po = (os.path.join(d, f"{name}_{s}.npy") for s in "abo")
                np.save(pa, a_arr)
                np.save(pb, b_arr)
                rc, out, err = run("run", "--a", pa, "--b", pb, "--out", po, "--backend", "model",
                                   "--quiet")
                self.assertEqual(rc, 0, out + err)
                return np.load(po).view(np.uint32)
            f64 = go(a, b, "f64")
            f32 = go(a.astype(np.float32), b.astype(np.float32), "f32")
            np.testing.assert_array_equal(f64, f32)  # float64 -> float32 first
            # bf16 bits (uint16): the float32 values rounded to bf16 (nearest even) by hand.
            def bf16(x):
                u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
                return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
            u16 = go(bf16(a), bf16(b), "u16")
            np.testing.assert_array_equal(u16, f32)


if __name__ == "__main__":
    unittest.main(verbosity=2)
