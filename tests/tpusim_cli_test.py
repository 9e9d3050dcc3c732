#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`tpusim onnx`, `tpusim train` and `tpusim run` on bad input: each a one-line error on stderr naming what was
wrong, exit status 2, found before any simulation (the RTL back end's launcher checks before it
builds or starts an engine). And every numeric array NumPy saves: float16/32/64, bf16 bits as
uint16, integers, either byte order, C or Fortran order, format versions 1.0 to 3.0.
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
        np.save(self.x, np.zeros((4, 1, 8, 8), np.complex64))
        self.expect(["onnx", MLP, "--input", self.x], "dtype '<c8' (complex numbers) is not supported")
        np.save(self.x, np.array([["a", "b"]]))
        self.expect(["onnx", MLP, "--input", self.x], "dtype '<U1' (strings) is not supported")
        np.save(self.x, np.zeros(2, dtype=[("a", np.float32), ("b", np.int8)]))
        self.expect(["onnx", MLP, "--input", self.x], "a structured (record) array")

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
        model = os.path.join(NODE, "test_floor", "model.onnx")
        np.save(self.x, np.zeros((3, 4, 5), np.float32))
        self.expect(["onnx", model, "--input", self.x],
                    "node 'Floor_0' (Floor): operator not supported")

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
        np.save(self.x, np.zeros((4, 4), np.complex128))
        self.expect(["run", "--a", self.x, "--b", self.x, "--out", os.path.join(self.d, "o.npy")],
                    "dtype '<c16' (complex numbers) is not supported", backends=("model",))


class JsonOnStdout(unittest.TestCase):
    def test_json_dash_is_the_only_output(self):
        # --json -: standard output is the JSON alone (PASS and the tables are left out or go to
        # standard error), for gemm as for onnx.
        import json
        for args in (["gemm", "--m", "20", "--k", "12", "--n", "9"],
                     ["onnx", MLP, "--input", os.path.join(ROOT, "examples", "digits_test_x.npy")]):
            for backend in ("model", "rtl"):
                rc, out, err = run(*args, "--backend", backend, "--config", "16x16_1ch",
                                   "--json", "-")
                self.assertEqual(rc, 0, err)
                j = json.loads(out)
                self.assertTrue(j["pass"], out)


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

    def test_run_every_layout_and_type_numpy_writes(self):
        rng = np.random.default_rng(11)
        a = rng.standard_normal((9, 13)).astype(np.float32)
        b = rng.standard_normal((13, 5)).astype(np.float32)
        bias = rng.standard_normal(5).astype(np.float32)
        with tempfile.TemporaryDirectory() as d:
            def go(a_arr, b_arr, c_arr=None, version=None):
                pa, pb, pc, po = (os.path.join(d, f"{s}.npy") for s in "abco")
                for path, arr in ((pa, a_arr), (pb, b_arr), (pc, c_arr)):
                    if arr is not None:
                        with open(path, "wb") as f:
                            np.lib.format.write_array(f, arr, version=version)
                args = ["run", "--a", pa, "--b", pb, "--out", po, "--backend", "model", "--quiet"]
                rc, out, err = run(*args, *(["--c", pc] if c_arr is not None else []))
                self.assertEqual(rc, 0, out + err)
                return np.load(po).view(np.uint32)
            ref = go(a, b)
            # Fortran order, big-endian, both, and the format's versions 2.0 and 3.0.
            np.testing.assert_array_equal(go(np.asfortranarray(a), b.T.copy().T), ref)
            np.testing.assert_array_equal(go(a.astype(">f4"), np.asfortranarray(b.astype(">f4"))),
                                          ref)
            for v in ((2, 0), (3, 0)):
                np.testing.assert_array_equal(go(a, b, version=v), ref)
            # float16: widened exactly, the same as its float32 values.
            h = a.astype(np.float16)
            np.testing.assert_array_equal(go(h, b), go(h.astype(np.float32), b))
            np.testing.assert_array_equal(go(h.astype(">f2"), b), go(h.astype(np.float32), b))
            # Integers of every width and bool: the matrix as float32 (NumPy's astype).
            ai = rng.integers(-100, 100, (9, 13))
            iref = go(ai.astype(np.float32), b)
            for t in (np.int8, np.int16, ">i4", np.int64, ">i8"):
                np.testing.assert_array_equal(go(ai.astype(t), b), iref, str(t))
            au = rng.integers(0, 200, (9, 13))
            uref = go(au.astype(np.float32), b)
            for t in (np.uint8, np.uint32, np.uint64, ">u8"):
                np.testing.assert_array_equal(go(au.astype(t), b), uref, str(t))
            np.testing.assert_array_equal(go(ai > 0, b), go((ai > 0).astype(np.float32), b))
            # The case: a bias broadcast to C's shape, which NumPy saves in Fortran order.
            c = np.broadcast_to(bias, (9, 5)).astype(np.float32)
            self.assertTrue(c.flags.f_contiguous and not c.flags.c_contiguous)
            np.testing.assert_array_equal(go(a, b, c), go(a, b, np.ascontiguousarray(c)))

    def test_onnx_inputs_in_any_layout(self):
        x = np.load(os.path.join(ROOT, "examples", "digits_test_x.npy"))[:16]
        with tempfile.TemporaryDirectory() as d:
            def go(arr, npz=False):
                px = os.path.join(d, "x.npz" if npz else "x.npy")
                (np.savez(px, x=arr) if npz else np.save(px, arr))
                po = os.path.join(d, "o.npz")
                rc, out, err = run("onnx", MLP, "--input", px, "--out", po, "--backend", "model",
                                   "--quiet")
                self.assertEqual(rc, 0, out + err)
                with np.load(po) as z:
                    return {k: z[k].view(np.uint32) for k in z.files}
            ref = go(x)
            for arr, npz in ((np.asfortranarray(x), False), (x.astype(">f4"), False),
                             (np.asfortranarray(x.astype(">f8")), True), (x.astype(np.float16), True)):
                got = go(arr, npz)
                self.assertEqual(got.keys(), ref.keys())
                for k in ref:
                    np.testing.assert_array_equal(got[k], ref[k], f"{arr.dtype} {k}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
