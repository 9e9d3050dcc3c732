# SPDX-License-Identifier: Apache-2.0
"""tpusim from Python: ONNX models and GEMMs on the TPU-style accelerator, checked bit for bit.

    import numpy as np, tpusim
    outputs, stats = tpusim.run_onnx("examples/digits_cnn.onnx", {"x": images})
    c, stats = tpusim.gemm(a, b, config="16x16_1ch", backend="rtl")
    curves = tpusim.train("examples/digits_mlp.onnx", (x, y), epochs=10, lr=0.05,
                          from_scratch=True, out="trained.onnx")

Arrays: any numeric NumPy array, in any layout and byte order, read as the command line reads
.npy files (docs/onnx.md): float32, float16, float64 (converted to float32, then rounded to bf16
at the accelerator per the numerics contract) or bf16 bit patterns as uint16; integers where the
model takes integers, and as float32 for gemm(). Results are float32
NumPy arrays, equal bit for bit to what `tpusim onnx` / `tpusim run` write; `stats` holds every
counter (the command line's --json).

Back ends: "rtl" runs the configuration's Verilated engine, the same program as the command
line (one Verilated model per program; it is built on first use), exchanging arrays through a
temporary .npz; "model" runs the golden model inside this process. With check=True (the default)
every accelerator job of the "rtl" back end is also run on the golden model and compared bit for
bit; a mismatch raises RuntimeError ("model" is the golden model: it is not checked against
itself, and its stats count no checked elements). Bad input (a wrong shape or dtype, a missing input, an unsupported operator) raises
ValueError with the command line's one-line message.

run_onnx() and train() take jobs=N: every accelerator job split over N engine processes
(`--jobs`, docs/onnx.md "Several processes"; launcher="slurm" for Slurm tasks), the results
bit-identical for every N.

train() is `tpusim train` (docs/training.md) on both back ends: it returns the command's --json
(every step's loss and its bits, every epoch's accuracies, every pass's counters).
"""
import json
import os
import subprocess
import tempfile
import zipfile

import numpy as np

from . import _tpusim

__all__ = ["run_onnx", "gemm", "train", "TPUSIM"]

# The launcher of the build this module belongs to (it picks and builds the engines).
TPUSIM = os.path.join(_tpusim.binary_dir, "sim", "tpusim")


def _check_backend(backend):
    if backend not in ("rtl", "model"):
        raise ValueError(f"backend '{backend}': use 'rtl' or 'model'")


def _run(args):
    p = subprocess.run([TPUSIM] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode == 2:
        msg = p.stderr.strip().splitlines()
        raise ValueError(msg[-1].removeprefix("tpusim: error: ") if msg else "bad usage")
    if p.returncode != 0:
        out = (p.stdout + p.stderr).strip()
        raise RuntimeError(f"tpusim {args[0]} failed (exit {p.returncode}):\n{out}")
    return p


def _check_jobs(jobs, launcher="local"):
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= 256:
        raise ValueError(f"jobs {jobs!r}: give a whole number of processes from 1 to 256")
    if launcher not in ("local", "slurm"):
        raise ValueError(f"launcher '{launcher}': use 'local' or 'slurm'")
    return (["--jobs", str(jobs)] + (["--launcher", launcher] if launcher != "local" else [])
            if jobs > 1 else [])


def run_onnx(model, inputs, config="16x16_1ch", backend="rtl", check=True, jobs=1,
             launcher="local", whole_network=False):
    """Runs an ONNX model; returns (outputs: dict name -> float32 array, stats: dict).

    jobs: engine processes, every accelerator job split over them (`--jobs`); the outputs are
    bit-identical for every count. launcher="slurm": the other processes are Slurm tasks
    (`--launcher slurm`; the model back end then runs through the command line too).
    whole_network: the jobs linked into as few programs as the plan allows
    (`--whole-network`; stats["programs"] lists them); not with jobs > 1."""
    _check_backend(backend)
    jobs_args = _check_jobs(jobs, launcher)
    if not isinstance(whole_network, bool):
        raise ValueError(f"whole_network {whole_network!r}: give True or False")
    if whole_network and jobs > 1:
        raise ValueError(f"whole_network with jobs {jobs}: a whole-network program runs in one "
                         "process")
    model = os.fspath(model)
    arrays = {k: np.asarray(v) for k, v in inputs.items()}
    if backend == "model" and "--launcher" not in jobs_args:
        outs, stats = _tpusim.run_onnx_model(model, arrays, config, check, jobs, whole_network)
        return outs, json.loads(stats)
    with tempfile.TemporaryDirectory(prefix="tpusim_") as d:
        src, dst, js = (os.path.join(d, n) for n in ("in.npz", "out.npz", "stats.json"))
        with zipfile.ZipFile(src, "w") as z:  # numpy.savez, without its reserved names
            for k, v in arrays.items():
                with z.open(k + ".npy", "w") as f:
                    np.lib.format.write_array(f, np.ascontiguousarray(v))
        args = ["onnx", model, "--input", src, "--out", dst, "--json", js, "--config", config,
                "--backend", backend, "--quiet"] + jobs_args
        if not check:
            args.append("--no-check")
        if whole_network:
            args.append("--whole-network")
        _run(args)
        with np.load(dst) as z:
            outs = {k: z[k] for k in z.files}
        with open(js) as f:
            return outs, json.load(f)


def gemm(a, b, c=None, config="16x16_1ch", backend="rtl", check=True):
    """C = A·B (+ C): A, B rounded to bf16, C kept fp32 and preloaded; returns (C float32, stats)."""
    _check_backend(backend)
    a, b = np.asarray(a), np.asarray(b)
    if backend == "model":
        out, stats = _tpusim.gemm_model(a, b, None if c is None else np.asarray(c), config)
        return out, json.loads(stats)
    with tempfile.TemporaryDirectory(prefix="tpusim_") as d:
        pa, pb, pc, po, js = (os.path.join(d, n) for n in ("a.npy", "b.npy", "c.npy", "out.npy",
                                                            "stats.json"))
        np.save(pa, a)
        np.save(pb, b)
        args = ["run", "--a", pa, "--b", pb, "--out", po, "--json", js, "--config", config,
                "--backend", "rtl", "--quiet"]
        if c is not None:
            np.save(pc, np.asarray(c))
            args += ["--c", pc]
        if not check:
            args.append("--no-check")
        _run(args)
        with open(js) as f:
            return np.load(po), json.load(f)


def _data_file(data, d, name):
    """A training or test set: a .npz path as it is, or (x, y) arrays written to one."""
    if isinstance(data, (str, os.PathLike)):
        return os.fspath(data)
    x, y = data
    path = os.path.join(d, name)
    np.savez(path, x=np.asarray(x, dtype=np.float32), y=np.asarray(y).astype(np.int64))
    return path


def train(model, train_data, test_data=None, epochs=None, steps=None, batch=32, lr=0.1,
          momentum=0.9, seed=1, from_scratch=False, out=None, config="16x16_1ch", backend="rtl",
          check=True, jobs=1, launcher="local"):
    """Trains an ONNX MLP by mixed-precision SGD on the accelerator (`tpusim train`).

    train_data, test_data: (x, y) arrays (x: rows x features, y: integer labels) or .npz files
    with arrays x and y. Give epochs or steps. out: where the trained .onnx goes. Returns the
    curves and counters (dict). jobs: engine processes (`--jobs`), every job split over them;
    launcher="slurm": the other processes are Slurm tasks (`--launcher slurm`)."""
    _check_backend(backend)
    jobs_args = _check_jobs(jobs, launcher)
    with tempfile.TemporaryDirectory(prefix="tpusim_") as d:
        js = os.path.join(d, "train.json")
        args = ["train", os.fspath(model), "--train", _data_file(train_data, d, "train.npz"),
                "--batch", str(batch), "--lr", repr(float(lr)), "--momentum",
                repr(float(momentum)), "--seed", str(seed), "--json", js, "--config", config,
                "--backend", backend, "--quiet"] + jobs_args
        if test_data is not None:
            args += ["--test", _data_file(test_data, d, "test.npz")]
        if epochs is not None:
            args += ["--epochs", str(epochs)]
        if steps is not None:
            args += ["--steps", str(steps)]
        if from_scratch:
            args.append("--from-scratch")
        if out is not None:
            args += ["--out", os.fspath(out)]
        if not check:
            args.append("--no-check")
        _run(args)
        with open(js) as f:
            return json.load(f)
