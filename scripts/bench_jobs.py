#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`make bench-jobs`: big runs over several engine processes (`tpusim onnx --jobs N`,
docs/onnx.md "Several processes").

Runs one model on one configuration with --jobs 1 and each further count, every job checked
against the golden model in the process that runs its part, and prints per count: the wall time,
the speed-up over --jobs 1 measured in the same run, the programs the jobs ran as, the summed
cycles and HBM bytes, and whether the outputs are bit-identical to --jobs 1's (the bench fails if
not), and where each run's host time went. Writes build/bench/jobs.md, jobs.csv and each run's
--json (jobs_N.json).

  scripts/bench_jobs.py                       the digits CNN over its 450 test images, 16x16_1ch
  scripts/bench_jobs.py --model resnet50 --batch 8 --config 128x128_8ch --jobs 1,2
                                              issue 33's goal (hours on a 2-core machine)

A count above the cores the machine has measures contention, not scaling: the default counts
stop at the core count.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genlib  # noqa: E402 (this folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_and_input(name, batch, build):
    """(model.onnx, input .npy) for the digits CNN or a torchvision ResNet at `batch`."""
    if name == "digits_cnn":
        x = os.path.join(ROOT, "examples", "digits_test_x.npy")
        if batch:
            out = os.path.join(build, "bench", f"digits_x_{batch}.npy")
            # A batch above the 450 test images repeats them, to give many processes work.
            images = np.load(x)
            np.save(out, np.resize(images, (batch,) + images.shape[1:]))
            x = out
        return os.path.join(ROOT, "examples", "digits_cnn.onnx"), x
    folder = os.path.join(build, "examples", f"b{batch or 1}")
    path = os.path.join(folder, f"{name}.onnx")
    if not os.path.exists(path):
        # torchvision makes the ResNets: installed here as `make models` installs it.
        subprocess.run([os.path.join(ROOT, "scripts", "deps.sh"), "models"], check=True)
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_models.py"), name,
                        "--batch", str(batch or 1), "--out", folder], check=True)
    return path, os.path.join(folder, f"{name}_input.npy")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="digits_cnn", choices=["digits_cnn", "resnet18", "resnet50"])
    ap.add_argument("--batch", type=int, default=0, help="rows of the input (default: the "
                    "digits' 450 test images, repeated above 450; ResNets: 1)")
    ap.add_argument("--config", default="16x16_1ch")
    ap.add_argument("--backend", default="rtl", choices=["rtl", "model"])
    ap.add_argument("--jobs", default="", help="counts, e.g. 1,2,4 (default: 1 up to the cores, "
                    "doubling)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    cores = os.cpu_count() or 1
    counts = [int(c) for c in a.jobs.split(",")] if a.jobs else []
    if not counts:
        n = 1
        while n <= cores:
            counts.append(n)
            n *= 2
        if counts[-1] != cores:
            counts.append(cores)
    if counts[0] != 1:
        counts.insert(0, 1)  # the speed-ups are against --jobs 1, measured in this run
    os.makedirs(os.path.join(a.build, "bench"), exist_ok=True)
    model, x = model_and_input(a.model, a.batch, a.build)
    tpusim = os.path.join(a.build, "sim", "tpusim")
    # Build the engine once before timing anything.
    subprocess.run([tpusim, "onnx", model, "--input", x, "--config", a.config, "--backend",
                    a.backend, "--quiet", "--no-check", "--max-cycles", "1"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows, data, first, host = [], [], None, []
    with tempfile.TemporaryDirectory(prefix="bench_jobs_") as d:
        # Every count runs a copy of that engine, so that a source tree edited during a long run
        # (hours for ResNet-50 on 128x128_8ch) cannot make the launcher rebuild it in between.
        engine = os.path.join(a.build, "sim", f"tpusim-{a.config}")
        if a.backend == "rtl" and os.access(engine, os.X_OK):
            tpusim = shutil.copy2(engine, os.path.join(d, os.path.basename(engine)))
        for n in counts:
            out, js = os.path.join(d, f"out{n}.npz"), os.path.join(d, f"j{n}.json")
            t0 = time.time()
            p = subprocess.run([tpusim, "onnx", model, "--input", x, "--config", a.config,
                                "--backend", a.backend, "--jobs", str(n), "--out", out, "--json",
                                js, "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
            wall = time.time() - t0
            if p.returncode != 0:
                sys.stdout.write(p.stdout)
                raise SystemExit(f"bench-jobs: --jobs {n} failed (exit {p.returncode})")
            with np.load(out) as z:
                outs = {k: z[k].tobytes() for k in z.files}
            with open(js) as f:
                run = json.load(f)
            tot = run["total"]
            with open(os.path.join(a.build, "bench", f"jobs_{n}.json"), "w") as f:
                json.dump(run, f, indent=1)
            other = (tot["step_seconds"] - tot["sim_seconds"] - tot["check_seconds"] -
                     tot["host_operator_seconds"])
            host.append(f"--jobs {n}: host time {tot['step_seconds']:.1f} s: back end (the parts "
                        f"together) {tot['sim_seconds']:.1f} s, golden check wait "
                        f"{tot['check_seconds']:.1f} s, host operators "
                        f"{tot['host_operator_seconds']:.1f} s, data moves and compiling "
                        f"{other:.1f} s")
            if first is None:
                first = (outs, wall)
            same = outs == first[0]
            hbm = tot["perf"]["hbm_read_bytes"] + tot["perf"]["hbm_write_bytes"]
            data.append({"jobs": n, "wall_s": f"{wall:.2f}", "speedup": f"{first[1] / wall:.3f}",
                         "jobs_run": tot["jobs"], "programs": tot["programs"],
                         "cycles": tot["perf"]["cycles"], "hbm_bytes": hbm,
                         "checked_elements": tot["checked_elements"],
                         "same_as_1": "yes" if same else "NO"})
            rows.append([n, f"{wall:.1f}", f"{first[1] / wall:.2f}x", tot["jobs"],
                         tot["programs"], f"{tot['perf']['cycles']:,}", f"{hbm:,}",
                         f"{tot['checked_elements']:,}", "yes" if same else "NO"])
            print(f"--jobs {n}: {wall:.1f} s, {first[1] / wall:.2f}x", flush=True)
            if not same:
                raise SystemExit(f"bench-jobs: --jobs {n}'s outputs differ from --jobs 1's")
    head = ["jobs", "wall s", "speed-up", "jobs run", "programs", "cycles (summed)",
            "HBM bytes", "checked elements", "outputs = --jobs 1"]
    rows_in = np.load(x, mmap_mode="r").shape[0]
    title = (f"{a.model}, batch {rows_in},"
             f" {a.config}, backend {a.backend}, {cores} cores")
    table = genlib.md_table(head, rows, ["right"] * 8 + ["left"])
    where = "\n".join(host)
    print(f"\n{title}\n\n{table}\n\n{where}")
    with open(os.path.join(a.build, "bench", "jobs.md"), "w") as f:
        f.write(f"{title}\n\n{table}\n\n{where}\n")
    # The CSV scripts/bench_table.py jobs reads: the run's facts in '# key=value' lines (as the
    # C++ benches' CsvFile writes them), then one row a --jobs count.
    with open(os.path.join(a.build, "bench", "jobs.csv"), "w", newline="") as f:
        for k, v in (("tool", "bench_jobs.py"), ("model", a.model), ("batch", rows_in),
                     ("config", a.config), ("backend", a.backend), ("cores", cores)):
            f.write(f"# {k}={v}\n")
        w = csv.DictWriter(f, fieldnames=list(data[0]))
        w.writeheader()
        w.writerows(data)


if __name__ == "__main__":
    main()
