#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The Python module (python/tpusim) against the command line: the same arrays bit for bit, on
both back ends, with the command line's errors. Run by ctest (fast tier) with
PYTHONPATH=<build>/python; the RTL cases use the default engine tpusim-16x16_1ch (make test
builds it)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import tpusim

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MLP = os.path.join(ROOT, "examples", "digits_mlp.onnx")
X = np.load(os.path.join(ROOT, "examples", "digits_test_x.npy"))[:64]
SEED = int(os.environ.get("TPU_SEED", "20261126"))
print(f"python_test: seed {SEED} (reproduce: TPU_SEED={SEED})", file=sys.stderr)


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def cli(*args):
    p = subprocess.run([tpusim.TPUSIM, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return p.returncode, p.stdout, p.stderr


class RunOnnx(unittest.TestCase):
    def test_model_backend_equals_command_line(self):
        outs, stats = tpusim.run_onnx(MLP, {"x": X}, backend="model")
        self.assertEqual(stats["backend"], "model")
        # The golden model back end is the reference: nothing is checked against it twice.
        self.assertEqual(stats["total"]["checked_elements"], 0)
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "x.npy"), X)
            rc, out, err = cli("onnx", MLP, "--input", os.path.join(d, "x.npy"), "--backend",
                               "model", "--out", os.path.join(d, "o.npz"), "--quiet")
            self.assertEqual(rc, 0, out + err)
            with np.load(os.path.join(d, "o.npz")) as z:
                np.testing.assert_array_equal(bits(z["logits"]), bits(outs["logits"]))

    def test_rtl_equals_model_bit_for_bit(self):
        model, _ = tpusim.run_onnx(MLP, {"x": X}, backend="model")
        rtl, stats = tpusim.run_onnx(MLP, {"x": X}, backend="rtl")
        np.testing.assert_array_equal(bits(rtl["logits"]), bits(model["logits"]))
        self.assertTrue(stats["pass"])
        self.assertGreater(stats["total"]["perf"]["cycles"], 0)
        self.assertEqual(stats["total"]["perf"]["macs"], 64 * (64 * 128 + 128 * 64 + 64 * 10))

    def test_jobs_give_the_same_outputs(self):
        """jobs=N (`--jobs`): every job split over N engine processes, the same bits for every
        N on both back ends; the parts' programs counted."""
        one, s1 = tpusim.run_onnx(MLP, {"x": X}, backend="model")
        for n in (2, 3):
            outs, stats = tpusim.run_onnx(MLP, {"x": X}, backend="model", jobs=n)
            np.testing.assert_array_equal(bits(outs["logits"]), bits(one["logits"]))
            self.assertEqual(stats["total"]["jobs"], s1["total"]["jobs"])
            self.assertGreater(stats["total"]["programs"], s1["total"]["programs"])
        rtl, stats = tpusim.run_onnx(MLP, {"x": X}, backend="rtl", jobs=2)
        np.testing.assert_array_equal(bits(rtl["logits"]), bits(one["logits"]))
        self.assertTrue(stats["pass"])
        self.assertGreater(stats["total"]["checked_elements"], 0)
        self.assertEqual(stats["total"]["programs"], 2 * stats["total"]["jobs"])
        for bad in (0, 257, 1.5, True, "2"):
            for backend in ("model", "rtl"):
                with self.assertRaisesRegex(ValueError, "jobs"):
                    tpusim.run_onnx(MLP, {"x": X}, backend=backend, jobs=bad)

    def test_whole_network(self):
        """whole_network=True (`--whole-network`): the digits CNN's jobs linked into programs
        (one with a vector unit: a configuration file for the golden model; several on the
        default RTL machine, whose host steps end them), the job-by-job bits either way."""
        cnn = os.path.join(ROOT, "examples", "digits_cnn.onnx")
        x = np.load(os.path.join(ROOT, "examples", "digits_test_x.npy"))[:24]
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "vmem.json")
            with open(cfg, "w") as f:
                json.dump({"rows": 16, "cols": 16, "channels": 1, "vmem_depth": 1024}, f)
            ref, s0 = tpusim.run_onnx(cnn, {"x": x}, config=cfg, backend="model")
            got, s1 = tpusim.run_onnx(cnn, {"x": x}, config=cfg, backend="model",
                                      whole_network=True)
            np.testing.assert_array_equal(bits(got["logits"]), bits(ref["logits"]))
            self.assertEqual(len(s1["programs"]), 1)
            self.assertEqual(s1["programs"][0]["jobs"], s0["total"]["jobs"])
            self.assertNotIn("programs", s0)
        rtl, s2 = tpusim.run_onnx(cnn, {"x": x}, backend="rtl", whole_network=True)
        one, _ = tpusim.run_onnx(cnn, {"x": x}, backend="model")
        np.testing.assert_array_equal(bits(rtl["logits"]), bits(one["logits"]))
        self.assertTrue(s2["pass"])
        self.assertGreater(len(s2["programs"]), 1)  # the host's steps end programs
        self.assertEqual(sum(p["jobs"] for p in s2["programs"]), s2["total"]["jobs"])
        self.assertEqual(sum(p["perf"]["cycles"] for p in s2["programs"]),
                         s2["total"]["perf"]["cycles"])
        for backend in ("model", "rtl"):
            with self.assertRaisesRegex(ValueError, "whole_network"):
                tpusim.run_onnx(cnn, {"x": x}, backend=backend, whole_network=True, jobs=2)
            with self.assertRaisesRegex(ValueError, "whole_network"):
                tpusim.run_onnx(cnn, {"x": x}, backend=backend, whole_network="yes")

    def test_input_dtypes(self):
        ref, _ = tpusim.run_onnx(MLP, {"x": X}, backend="model")
        # float64 is converted to float32 first: the same answer.
        f64, _ = tpusim.run_onnx(MLP, {"x": X.astype(np.float64)}, backend="model")
        np.testing.assert_array_equal(bits(f64["logits"]), bits(ref["logits"]))
        # bf16 bits as uint16: the digits' pixels (k/16) are exact in bf16.
        b16 = (bits(X) >> 16).astype(np.uint16)
        self.assertTrue(np.array_equal(bits(X) & 0xFFFF, np.zeros_like(bits(X))))
        u16, _ = tpusim.run_onnx(MLP, {"x": b16}, backend="model")
        np.testing.assert_array_equal(bits(u16["logits"]), bits(ref["logits"]))
        # float16 (the pixels are exact in it), big-endian, Fortran order, a non-contiguous view:
        # read as .npy files are, on both back ends.
        for backend in ("model", "rtl"):
            for arr in (X.astype(np.float16), X.astype(">f4"), np.asfortranarray(X),
                        np.stack([X, X], axis=-1)[..., 0]):
                got, _ = tpusim.run_onnx(MLP, {"x": arr}, backend=backend)
                np.testing.assert_array_equal(bits(got["logits"]), bits(ref["logits"]),
                                              f"{backend} {arr.dtype} {arr.flags.c_contiguous}")
        # Integer matrices for a GEMM: as NumPy's astype(float32).
        rng = np.random.default_rng(SEED)
        a = rng.integers(-9, 9, (5, 7))
        b = rng.standard_normal((7, 3)).astype(np.float32)
        c_int, _ = tpusim.gemm(a.astype(np.int16), b, backend="model")
        c_f32, _ = tpusim.gemm(a.astype(np.float32), b, backend="model")
        np.testing.assert_array_equal(bits(c_int), bits(c_f32))

    def test_bad_inputs_raise_value_error(self):
        for backend in ("model", "rtl"):
            with self.assertRaisesRegex(ValueError, "shape"):
                tpusim.run_onnx(MLP, {"x": X[:, :, :4]}, backend=backend)
            with self.assertRaisesRegex(ValueError, "missing"):
                tpusim.run_onnx(MLP, {}, backend=backend)
            with self.assertRaisesRegex(ValueError, "no input 'y'"):
                tpusim.run_onnx(MLP, {"x": X, "y": X}, backend=backend)
            with self.assertRaisesRegex(ValueError, "complex numbers"):
                tpusim.run_onnx(MLP, {"x": X.astype(np.complex64)}, backend=backend)
        with self.assertRaisesRegex(ValueError, "backend"):
            tpusim.run_onnx(MLP, {"x": X}, backend="fpga")
        with self.assertRaisesRegex(ValueError, "not an ONNX model"):
            tpusim.run_onnx(os.path.join(ROOT, "README.md"), {"x": X}, backend="model")


class Digits(unittest.TestCase):
    """The shipped digits models over the whole test split on the RTL (default configuration):
    accuracy within half a percentage point of PyTorch's float32 (every job bit-exact)."""

    def test_accuracy_on_the_rtl(self):
        x = np.load(os.path.join(ROOT, "examples", "digits_test_x.npy"))
        labels = np.load(os.path.join(ROOT, "examples", "digits_test_labels.npy"))
        for name in ("mlp", "cnn"):
            ref = np.load(os.path.join(ROOT, "examples", f"digits_{name}_torch_logits.npy"))
            outs, stats = tpusim.run_onnx(os.path.join(ROOT, "examples", f"digits_{name}.onnx"),
                                          {"x": x}, backend="rtl")
            self.assertTrue(stats["pass"])
            self.assertGreater(stats["total"]["checked_elements"], 0)
            acc = float((outs["logits"].argmax(1) == labels).mean())
            acc_ref = float((ref.argmax(1) == labels).mean())
            agree = int((outs["logits"].argmax(1) == ref.argmax(1)).sum())
            print(f"digits {name}: RTL {100 * acc:.2f}%, PyTorch float32 {100 * acc_ref:.2f}%, "
                  f"{agree} of {len(labels)} predictions agree", file=sys.stderr)
            self.assertLessEqual(abs(acc - acc_ref), 0.005)
            self.assertGreater(acc, 0.95)


TRAIN = os.path.join(ROOT, "examples", "digits_train.npz")
TEST = os.path.join(ROOT, "examples", "digits_test.npz")


class Train(unittest.TestCase):
    """tpusim.train (docs/training.md): both back ends and the command line give the same loss
    bits at every step; the digits MLP trained from scratch on the RTL reaches the issue's goal."""

    def test_backends_and_command_line_agree(self):
        with np.load(TRAIN) as z:
            x, y = z["x"][:200], z["y"][:200]
        kw = dict(steps=12, batch=16, lr=0.1, momentum=0.9, seed=5, from_scratch=True)
        with tempfile.TemporaryDirectory() as d:
            m = tpusim.train(MLP, (x, y), backend="model", out=os.path.join(d, "m.onnx"), **kw)
            r = tpusim.train(MLP, (x, y), backend="rtl", out=os.path.join(d, "r.onnx"), **kw)
            self.assertTrue(m["pass"] and r["pass"])
            self.assertEqual([s["loss_bits"] for s in m["steps"]],
                             [s["loss_bits"] for s in r["steps"]])
            self.assertGreater(r["passes"]["backward"]["cycles"], 0)
            # Split over two engine processes (jobs=2): the same loss bits.
            r2 = tpusim.train(MLP, (x, y), backend="rtl", jobs=2, **kw)
            self.assertEqual([s["loss_bits"] for s in r2["steps"]],
                             [s["loss_bits"] for s in r["steps"]])
            self.assertGreater(r2["passes"]["backward"]["programs"],
                               r2["passes"]["backward"]["jobs"])
            self.assertGreater(r["passes"]["backward"]["checked_elements"], 0)
            self.assertEqual(read(os.path.join(d, "m.onnx")), read(os.path.join(d, "r.onnx")),
                             "the trained models differ")
            np.savez(os.path.join(d, "t.npz"), x=x, y=y)
            js = os.path.join(d, "c.json")
            rc, out, err = cli("train", MLP, "--train", os.path.join(d, "t.npz"), "--steps", "12",
                               "--batch", "16", "--lr", "0.1", "--momentum", "0.9", "--seed", "5",
                               "--from-scratch", "--backend", "model", "--json", js, "--quiet")
            self.assertEqual(rc, 0, out + err)
            with open(js) as f:
                self.assertEqual([s["loss_bits"] for s in json.load(f)["steps"]],
                                 [s["loss_bits"] for s in m["steps"]])

    def test_cnn_backends_agree(self):
        """The digits CNN (train::Network): a few steps, the same loss bits and trained model on
        both back ends, and on the golden model with a vector unit."""
        cnn = os.path.join(ROOT, "examples", "digits_cnn.onnx")
        with np.load(TRAIN) as z:
            x, y = z["x"][:64], z["y"][:64]
        kw = dict(steps=3, batch=8, lr=0.05, momentum=0.9, seed=2, from_scratch=True)
        with tempfile.TemporaryDirectory() as d:
            m = tpusim.train(cnn, (x, y), backend="model", out=os.path.join(d, "m.onnx"), **kw)
            r = tpusim.train(cnn, (x, y), backend="rtl", out=os.path.join(d, "r.onnx"), **kw)
            self.assertEqual(m["model_kind"], "network")
            self.assertEqual([s["loss_bits"] for s in m["steps"]],
                             [s["loss_bits"] for s in r["steps"]])
            self.assertEqual(read(os.path.join(d, "m.onnx")), read(os.path.join(d, "r.onnx")),
                             "the trained models differ")
            # With a vector unit (vmem_depth in the configuration) the loss gradient, relu's masks
            # and the update run there as jobs (docs/training.md): the same bits.
            cfg = os.path.join(d, "vmem.json")
            with open(cfg, "w") as f:
                json.dump({"rows": 16, "cols": 16, "channels": 1, "vmem_depth": 1024}, f)
            v = tpusim.train(cnn, (x, y), backend="model", config=cfg,
                             out=os.path.join(d, "v.onnx"), **kw)
            self.assertEqual([s["loss_bits"] for s in v["steps"]],
                             [s["loss_bits"] for s in m["steps"]])
            self.assertEqual(read(os.path.join(d, "v.onnx")), read(os.path.join(d, "m.onnx")),
                             "the trained models differ with the vector unit")
            self.assertEqual(v["passes"]["update"]["jobs"], 2 * kw["steps"])  # momentum: 2 a step
            self.assertEqual(m["passes"]["update"]["jobs"], 0)
            self.assertGreater(v["passes"]["backward"]["jobs"], m["passes"]["backward"]["jobs"])
            # The trained model runs as any model (BatchNormalization on its running averages).
            outs, _ = tpusim.run_onnx(os.path.join(d, "r.onnx"), {"x": x[:16]}, backend="model")
            self.assertEqual(outs["logits"].shape, (16, 10))

    def test_bad_input_raises_value_error(self):
        with np.load(TRAIN) as z:
            x, y = z["x"][:40], z["y"][:40]
        with self.assertRaisesRegex(ValueError, "Sigmoid"):
            tpusim.train("/usr/share/libonnx-testdata/data/node/test_sigmoid/model.onnx", (x, y),
                         steps=1, backend="model")
        with self.assertRaisesRegex(ValueError, "label 10"):
            tpusim.train(MLP, (x, np.full(40, 10)), steps=1, backend="model")
        with self.assertRaisesRegex(ValueError, "features"):
            tpusim.train(MLP, (x.reshape(40, -1)[:, :60], y), steps=1, backend="model")
        with self.assertRaisesRegex(ValueError, "--epochs or --steps"):
            tpusim.train(MLP, (x, y), backend="model")

    def test_digits_mlp_from_scratch_on_the_rtl(self):
        """The goal: >= 95% test accuracy, the golden model's loss curve bit for bit, within one
        point of PyTorch's float32 training with the same recipe, weights and data order
        (examples/digits_mlp_sgd_torch.json, from scripts/train_reference.py)."""
        with open(os.path.join(ROOT, "examples", "digits_mlp_sgd_torch.json")) as f:
            ref = json.load(f)
        rc = ref["recipe"]
        kw = dict(test_data=TEST, epochs=rc["epochs"], batch=rc["batch"], lr=rc["lr"],
                  momentum=rc["momentum"], seed=rc["seed"], from_scratch=True)
        rtl = tpusim.train(MLP, TRAIN, backend="rtl", **kw)
        gold = tpusim.train(MLP, TRAIN, backend="model", **kw)
        self.assertEqual([s["loss_bits"] for s in rtl["steps"]],
                         [s["loss_bits"] for s in gold["steps"]])
        acc, acc_ref = rtl["epochs"][-1]["test_accuracy"], ref["epochs"][-1]["test_accuracy"]
        fwd, bwd = rtl["passes"]["forward"], rtl["passes"]["backward"]
        print(f"digits MLP trained on the RTL: test {100 * acc:.2f}%, PyTorch float32 "
              f"{100 * acc_ref:.2f}%; forward {fwd['macs_per_cycle']:.1f} MACs/cycle, backward "
              f"{bwd['macs_per_cycle']:.1f}", file=sys.stderr)
        self.assertGreaterEqual(acc, 0.95)
        self.assertLessEqual(abs(acc - acc_ref), 0.01)


class Gemm(unittest.TestCase):
    def test_backends_and_command_line_agree(self):
        rng = np.random.default_rng(SEED)
        a = rng.standard_normal((37, 45))  # float64: NumPy's default
        b = rng.standard_normal((45, 21)).astype(np.float32)
        c = rng.standard_normal((37, 21)).astype(np.float32)
        m, st = tpusim.gemm(a, b, c, backend="model")
        r, rst = tpusim.gemm(a, b, c, backend="rtl")
        np.testing.assert_array_equal(bits(m), bits(r))
        self.assertEqual(st["macs"], 37 * 45 * 21)
        self.assertEqual(rst["macs"], 37 * 45 * 21)
        self.assertGreater(rst["cycles"], 0)
        with tempfile.TemporaryDirectory() as d:
            for n, v in (("a", a), ("b", b), ("c", c)):
                np.save(os.path.join(d, n + ".npy"), v)
            rc, out, err = cli("run", "--a", os.path.join(d, "a.npy"), "--b",
                               os.path.join(d, "b.npy"), "--c", os.path.join(d, "c.npy"), "--out",
                               os.path.join(d, "o.npy"), "--backend", "model", "--quiet")
            self.assertEqual(rc, 0, out + err)
            np.testing.assert_array_equal(bits(np.load(os.path.join(d, "o.npy"))), bits(m))
        # Independent check of the rounding: A and B rounded to bf16 (round to nearest even),
        # products summed in float64: close to the fp32 result, never a tolerance on the hardware.
        def bf16(x):
            u = bits(np.asarray(x, dtype=np.float32)).astype(np.uint64)
            u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
            return u.astype(np.uint32).view(np.float32).astype(np.float64)
        ref = c.astype(np.float64) + bf16(a) @ bf16(b)
        self.assertLess(np.abs(ref - m).max(), 1e-4 * np.abs(ref).max() + 1e-5)

    def test_bad_shapes(self):
        with self.assertRaisesRegex(ValueError, "matching K"):
            tpusim.gemm(np.ones((3, 4)), np.ones((5, 2)), backend="model")
        with self.assertRaisesRegex(ValueError, "4 rows|rows"):
            tpusim.gemm(np.ones((3, 4)), np.ones((5, 2)), backend="rtl")


if __name__ == "__main__":
    unittest.main(verbosity=2)
