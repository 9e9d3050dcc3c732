#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make report: runs the benchmarks in a quick mode (or reads the CSVs of an earlier run), renders
PNG plots with gnuplot (scripts/report/*.gp) and writes a Markdown report with the numbers.

  scripts/report.py --build build [--out docs/report] [--seed N] [--jobs 2]
  scripts/report.py --build build --data DIR     plot DIR/{mxu,hbm,accel*}.csv (e.g. make bench's)

Quick mode runs, writing CSVs and logs under BUILD/report/data:
  tpu_mxu_bench --quick --no-build               utilization, 7 GEMM shapes x 4x4..32x32
  tpu_hbm_replay --bench --requests-scale 0.1    bandwidth, 5 traffic classes x 2 refresh modes
  tpu_accel_bench --quick --configs 16x16_1ch    the roofline on one HBM channel (9 workloads)
  tpu_accel_bench --quick --configs 16x16_8ch --only ...   the full stack on 5 workloads
Standard library only (conventions: no numpy)."""

import argparse
import csv
import datetime
import glob
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genlib  # noqa: E402 (this folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GP_DIR = os.path.join(ROOT, "scripts", "report")
DEFAULT_SEED = 20261122  # the benches' default seed (tpu_mxu_bench, tpu_accel_bench)
# The 8-channel workloads of the quick mode: the full stack simulates about 4x slower than one
# channel, so quick mode runs the five GEMMs that take under 0.4 M cycles each.
STACK_QUICK_ONLY = r"^GEMM (16|64|256|4096|8)x"

ARRAYS = ["4x4", "8x8", "16x16", "32x32"]
HBM_CLASSES = [
    ("seq", "sequential reads"),
    ("rand", "random reads"),
    ("seq21", "sequential 2:1 R:W"),
    ("rand21", "random 2:1 R:W"),
    ("onebank", "one bank (of 1 ch)"),
]
STALLS = [
    ("busy", "busy (MACs issued)"),
    ("weight_stall", "weight stall"),
    ("input_stall", "input stall"),
    ("acc_hazard", "accumulator hazard"),
    ("store_stall", "store stall"),
    ("idle", "idle (fill, drain, fetch)"),
]
CONFIG_TITLES = {"16x16_1ch": "16x16, 1 HBM2 channel", "16x16_8ch": "16x16, 8 HBM2 channels"}


class ReportError(Exception):
    pass


def log(msg):
    print(f"[report] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------
# Reading the benches' CSVs
# ---------------------------------------------------------------------------------------------


class Table:
    """One CSV written by a bench's --csv: '# key=value' metadata lines, a header, rows."""

    def __init__(self, path, required):
        self.path = path
        self.meta = {}
        lines = []
        try:
            with open(path, newline="") as f:
                for line in f:
                    if line.startswith("#"):
                        key, sep, value = line[1:].strip().partition("=")
                        if sep:
                            self.meta[key.strip()] = value.strip()
                    elif line.strip():
                        lines.append(line)
        except OSError as e:
            raise ReportError(f"cannot read {path}: {e.strerror}")
        if not lines:
            raise ReportError(f"{path}: no header and no rows (did the bench stop early?)")
        reader = csv.DictReader(lines)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise ReportError(
                f"{path}: missing column(s) {', '.join(missing)}; header is "
                f"'{lines[0].strip()}' (a CSV from another program or version?)")
        self.rows = list(reader)
        for n, row in enumerate(self.rows, start=2):
            if None in row or any(v is None for v in row.values()):
                raise ReportError(f"{path}: row {n} has {len(lines[n - 1].split(','))} fields, "
                                  f"the header {len(reader.fieldnames)}")
        if not self.rows:
            raise ReportError(f"{path}: a header but no rows (did the bench stop early?)")

    def num(self, row, key):
        try:
            return float(row[key])
        except ValueError:
            raise ReportError(f"{self.path}: column {key}: '{row[key]}' is not a number")


MXU_COLS = ["rows", "cols", "m", "k", "n", "macs", "cycles", "limit", "scalesim", "util_pct",
            "util_scalesim_pct", "cycles_over_limit", "wload", "hazard", "starve", "drain",
            "seconds", "check"]
HBM_COLS = ["traffic", "refresh", "requests", "cycles", "pct_peak", "peak_channels",
            "avg_read_latency", "max_read_latency", "row_hit_pct", "act", "refab", "refpb",
            "violations", "seconds"]
ACCEL_COLS = ["config", "workload", "peak_macs_per_cycle", "port_bytes_per_cycle",
              "stream_bytes_per_cycle", "macs", "read_bytes", "write_bytes", "cycles",
              "macs_per_cycle", "bound", "of_bound_pct", "util_pct", "macs_per_byte", "busy",
              "weight_stall", "input_stall", "acc_hazard", "store_stall", "idle", "seconds",
              "check"]


def load_data(data_dir):
    """The tables found in data_dir: mxu.csv, hbm.csv, accel*.csv (several merge)."""
    found = {}
    p = os.path.join(data_dir, "mxu.csv")
    if os.path.exists(p):
        found["mxu"] = [Table(p, MXU_COLS)]
    p = os.path.join(data_dir, "hbm.csv")
    if os.path.exists(p):
        found["hbm"] = [Table(p, HBM_COLS)]
    accel = sorted(glob.glob(os.path.join(data_dir, "accel*.csv")))
    if accel:
        found["accel"] = [Table(p, ACCEL_COLS) for p in accel]
    if not found:
        raise ReportError(f"no bench CSVs in {data_dir} (expected mxu.csv, hbm.csv, accel*.csv, "
                          "written by the benches' --csv option)")
    return found


# ---------------------------------------------------------------------------------------------
# Running the benches (quick mode)
# ---------------------------------------------------------------------------------------------


class Job:
    def __init__(self, name, argv, slots, what):
        self.name, self.argv, self.slots, self.what = name, argv, slots, what
        self.proc = None
        self.start = self.end = None
        self.rc = None
        self.cpu = None


def fmt_time(s):
    s = int(round(s))
    return f"{s // 60}:{s % 60:02d}"


def last_line(data_dir, name, width=60):
    """The last line a job printed, shortened, for the progress notes."""
    try:
        with open(os.path.join(data_dir, f"{name}.log"), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            lines = [x.strip() for x in f.read().decode(errors="replace").splitlines()]
    except OSError:
        return "?"
    lines = [x for x in lines if x]
    if not lines:
        return "(nothing yet)"
    return lines[-1] if len(lines[-1]) <= width else lines[-1][:width - 3] + "..."


def run_jobs(jobs, slots, data_dir):
    """Runs the jobs in order, each when enough of the `slots` cores are free; output to
    DATA/<name>.log. Returns when all finished; raises naming the first failure."""
    pending = list(jobs)
    running = []
    t0 = time.monotonic()
    last_note = t0
    while pending or running:
        free = slots - sum(j.slots for j in running)
        while pending and (min(pending[0].slots, slots) <= free):
            j = pending.pop(0)
            logf = open(os.path.join(data_dir, f"{j.name}.log"), "w")
            j.start = time.monotonic()
            log(f"[{fmt_time(j.start - t0)}] start {j.name}: {shlex.join(j.argv)}")
            j.proc = subprocess.Popen(j.argv, stdout=logf, stderr=subprocess.STDOUT, cwd=ROOT)
            logf.close()
            running.append(j)
            free -= min(j.slots, slots)
        time.sleep(0.5)
        for j in list(running):
            # wait4 rather than poll: it also gives the job's CPU time, which, unlike the wall
            # time, does not depend on what else the machine is running.
            pid, status, usage = os.wait4(j.proc.pid, os.WNOHANG)
            if pid == 0:
                continue
            rc = os.waitstatus_to_exitcode(status)
            j.proc.returncode = rc
            j.end, j.rc = time.monotonic(), rc
            j.cpu = usage.ru_utime + usage.ru_stime
            running.remove(j)
            log(f"[{fmt_time(j.end - t0)}] done  {j.name} in {fmt_time(j.end - j.start)} "
                f"(CPU {fmt_time(j.cpu)}){'' if rc == 0 else f' - FAILED (exit {rc})'}")
            if rc != 0:
                for other in running:
                    other.proc.terminate()
                for other in running:
                    other.proc.wait()
                tail = open(os.path.join(data_dir, f"{j.name}.log")).read().splitlines()[-25:]
                raise ReportError(f"{j.name} failed (exit {rc}): {shlex.join(j.argv)}\n"
                                  f"last lines of {data_dir}/{j.name}.log:\n  " + "\n  ".join(tail))
        now = time.monotonic()
        if running and now - last_note >= 60:
            last_note = now
            log(f"[{fmt_time(now - t0)}] running: " + "; ".join(
                f"{j.name} ({fmt_time(now - j.start)}, last: {last_line(data_dir, j.name)})"
                for j in running))
    return time.monotonic() - t0


def quick_jobs(build, data_dir, seed, slots):
    sim = os.path.join(build, "sim")
    for prog in ("tpu_mxu_bench", "tpu_hbm_replay", "tpu_accel_bench"):
        if not os.access(os.path.join(sim, prog), os.X_OK):
            raise ReportError(f"{sim}/{prog} not found: build it first (make report does: "
                              f"cmake --build {build} --target {prog})")

    def csv_of(name):
        return os.path.join(data_dir, f"{name}.csv")

    s = str(seed)
    mxu_jobs = max(1, slots)
    models = []
    resnet = os.path.join(build, "examples", "resnet18.onnx")
    if os.path.exists(resnet) or os.path.exists("/usr/lib/python3/dist-packages/torchvision"):
        models.append(Job("models", ["/usr/bin/python3", os.path.join(ROOT, "scripts",
                                                                      "bench_models.py"),
                                     "--models", "resnet18", "--configs", "16x16_1ch",
                                     "--tpusim", os.path.join(sim, "tpusim"),
                                     "--examples", os.path.join(build, "examples"),
                                     "--out", data_dir], 1,
                          "ResNet-18 from ONNX on 16x16_1ch, every job checked"))
    else:
        log("ResNet-18 left out: no build/examples/resnet18.onnx and no PyTorch "
            "(scripts/deps.sh models, or make bench-models)")
    # Training (docs/training.md): the digits MLP from scratch on the RTL, against PyTorch.
    ref = os.path.join(ROOT, "examples", "digits_mlp_sgd_torch.json")
    with open(ref) as f:
        rc = json.load(f)["recipe"]
    ex = os.path.join(ROOT, "examples")
    models.append(Job("train", [os.path.join(sim, "tpusim"), "train",
                                os.path.join(ex, "digits_mlp.onnx"), "--from-scratch",
                                "--train", os.path.join(ex, "digits_train.npz"),
                                "--test", os.path.join(ex, "digits_test.npz"),
                                "--epochs", str(rc["epochs"]), "--batch", str(rc["batch"]),
                                "--lr", str(rc["lr"]), "--momentum", str(rc["momentum"]),
                                "--seed", str(rc["seed"]), "--config", "16x16_1ch",
                                "--json", os.path.join(data_dir, "train_digits.json")], 1,
                      "the digits MLP trained from scratch on 16x16_1ch, every job checked"))
    return models + [
        # The matrix unit first: it runs `slots` simulations at once.
        Job("mxu", [f"{sim}/tpu_mxu_bench", "--quick", "--no-build", "--jobs", str(mxu_jobs),
                    "--seed", s, "--csv", csv_of("mxu")], mxu_jobs,
            "utilization table, 1024^3 only on 16x16 and 32x32"),
        Job("accel_1ch", [f"{sim}/tpu_accel_bench", "--quick", "--configs", "16x16_1ch",
                          "--seed", s, "--csv", csv_of("accel_1ch")], 1,
            "roofline, one channel, 9 workloads (no 1024^3)"),
        Job("hbm", [f"{sim}/tpu_hbm_replay", "--bench", "--requests-scale", "0.1", "--seed", s,
                    "--csv", csv_of("hbm")], 1, "5 classes x 2 refresh modes, 1/10 of the requests"),
        Job("accel_8ch", [f"{sim}/tpu_accel_bench", "--quick", "--configs", "16x16_8ch",
                          "--only", STACK_QUICK_ONLY, "--seed", s, "--csv", csv_of("accel_8ch")],
            1, "roofline, eight channels, 5 GEMMs"),
    ]


# ---------------------------------------------------------------------------------------------
# Plot data and gnuplot
# ---------------------------------------------------------------------------------------------


def q(s):
    """A gnuplot string literal."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def gp_array(name, values):
    return f"array {name}[{len(values)}] = [" + ", ".join(q(v) for v in values) + "]\n"


def num_or_nan(x):
    return "NaN" if x is None else f"{x:.4f}"


def shape_of(t, r):
    return f"{r['m']}x{r['k']}x{r['n']}"


def mxu_plot_data(t, plot_dir):
    """mxu_util.dat: one line per GEMM shape, the utilization on each array (NaN: not run);
    mxu_scale.dat: one block per shape, utilization and SCALE-Sim's against the array size."""
    shapes, util, scal = [], {}, {}
    for r in t.rows:
        s = shape_of(t, r)
        if s not in shapes:
            shapes.append(s)
        a = f"{r['rows']}x{r['cols']}"
        util[(s, a)] = t.num(r, "util_pct")
        scal[(s, a)] = t.num(r, "util_scalesim_pct")
    with open(os.path.join(plot_dir, "mxu_util.dat"), "w") as f:
        f.write("# shape " + " ".join(ARRAYS) + "\n")
        for s in shapes:
            f.write(q(s) + " " + " ".join(num_or_nan(util.get((s, a))) for a in ARRAYS) + "\n")
    with open(os.path.join(plot_dir, "mxu_scale.dat"), "w") as f:
        for s in shapes:
            f.write(f"# {s}: array_size util_pct scalesim_pct\n")
            for a in ARRAYS:
                n = int(a.split("x")[0])
                f.write(f"{n} {num_or_nan(util.get((s, a)))} {num_or_nan(scal.get((s, a)))}\n")
            f.write("\n\n")
    with open(os.path.join(plot_dir, "mxu_vars.gp"), "w") as f:
        f.write(gp_array("shapes", shapes))
        f.write(gp_array("arrays", ARRAYS))
    with open(os.path.join(plot_dir, "mxu_notrun.gp"), "w") as f:
        # The runs that were not made (quick mode), at their bars' places as in mxu_util.gp.
        n = len(ARRAYS)
        for k, s in enumerate(shapes):
            for i, a in enumerate(ARRAYS):
                if (s, a) not in util:
                    x = k + (i + 1 - (n + 1) / 2) * 0.8 / n
                    f.write(f'set label "not run" at {x:.4f},1 rotate by 90 left font ",9" '
                            'tc rgb "#606060"\n')
    return shapes, util, scal


def hbm_plot_data(t, plot_dir):
    by = {(r["traffic"], r["refresh"]): r for r in t.rows}
    classes = [(c, label) for c, label in HBM_CLASSES if (c, "allbank") in by or
               (c, "perbank") in by]
    if not classes:
        raise ReportError(f"{t.path}: none of the traffic classes "
                          f"{', '.join(c for c, _ in HBM_CLASSES)} (a --trace run?)")

    def val(c, mode, key):
        r = by.get((c, mode))
        return None if r is None else t.num(r, key)

    with open(os.path.join(plot_dir, "hbm.dat"), "w") as f:
        f.write("# class bw_allbank bw_perbank avglat_allbank maxlat_allbank avglat_perbank "
                "maxlat_perbank\n")
        for c, label in classes:
            f.write(q(label) + " " + " ".join(num_or_nan(val(c, m, k)) for m, k in [
                ("allbank", "pct_peak"), ("perbank", "pct_peak"),
                ("allbank", "avg_read_latency"), ("allbank", "max_read_latency"),
                ("perbank", "avg_read_latency"), ("perbank", "max_read_latency")]) + "\n")
    with open(os.path.join(plot_dir, "hbm_vars.gp"), "w") as f:
        f.write(f"nclasses = {len(classes)}\n")
    return classes, by


def accel_rows(tables):
    rows = []
    for t in tables:
        for r in t.rows:
            rows.append((t, r))
    return rows


def accel_plot_data(tables, plot_dir):
    rows = accel_rows(tables)
    configs, workloads = [], []
    for t, r in rows:
        if r["config"] not in configs:
            configs.append(r["config"])
        if r["workload"] not in workloads:
            workloads.append(r["workload"])
    configs.sort()
    by = {(r["config"], r["workload"]): (t, r) for t, r in rows}
    roofs = {}
    for c in configs:
        # roof_<config>.dat: one line per workload run on it, with the workload's index (its
        # colour, the same in every configuration).
        with open(os.path.join(plot_dir, f"roof_{c}.dat"), "w") as f:
            f.write("# workload_index macs_per_byte macs_per_cycle\n")
            for i, w in enumerate(workloads):
                tr = by.get((c, w))
                if tr:
                    t, r = tr
                    f.write(f"{i + 1} {t.num(r, 'macs_per_byte'):.4f} "
                            f"{t.num(r, 'macs_per_cycle'):.4f}\n")
                    roofs[c] = (t.num(r, "peak_macs_per_cycle"),
                                t.num(r, "stream_bytes_per_cycle"),
                                t.num(r, "port_bytes_per_cycle"))

        with open(os.path.join(plot_dir, f"stalls_{c}.dat"), "w") as f:
            f.write("# workload " + " ".join(k for k, _ in STALLS) + " (percent of cycles)\n")
            for w in workloads:
                tr = by.get((c, w))
                if not tr:
                    # Kept (empty) so that a workload has the same place in every panel.
                    f.write(q(w + " (not run)") + " NaN" * len(STALLS) + "\n")
                    continue
                t, r = tr
                cyc = t.num(r, "cycles")
                f.write(q(w) + " " + " ".join(f"{100.0 * t.num(r, k) / cyc:.3f}"
                                              for k, _ in STALLS) + "\n")
    with open(os.path.join(plot_dir, "accel_vars.gp"), "w") as f:
        f.write(gp_array("workloads", workloads))
        f.write(gp_array("configs", configs))
        f.write(gp_array("config_titles", [CONFIG_TITLES.get(c, c) for c in configs]))
        f.write(gp_array("stall_titles", [label for _, label in STALLS]))
        f.write(f"array peaks[{len(configs)}] = [" + ", ".join(
            f"{roofs[c][0]}" for c in configs) + "]\n")
        f.write(f"array bws[{len(configs)}] = [" + ", ".join(
            f"{roofs[c][1]}" for c in configs) + "]\n")
        # The x range: a decade around the workloads' intensities.
        xs = [t.num(r, "macs_per_byte") for t, r in rows]
        f.write(f"xmin = {min(xs) / 2:.4f}\nxmax = {max(xs) * 2:.4f}\n")
        # The inset zooms on the compute-bound workloads (intensity beyond the ridge point).
        ridge = max(roofs[c][0] / roofs[c][1] for c in configs)
        flat = [(t.num(r, "macs_per_byte"), t.num(r, "macs_per_cycle")) for t, r in rows
                if t.num(r, "macs_per_byte") > ridge]
        if flat:
            top = max(roofs[c][0] for c in configs)
            low = min(y for _, y in flat)
            f.write(f"inset = 1\ninset_xmin = {min(x for x, _ in flat) / 1.15:.4f}\n"
                    f"inset_xmax = {max(x for x, _ in flat) * 1.15:.4f}\n"
                    f"inset_ymin = {low - 0.08 * (top - low) - 1:.4f}\n"
                    f"inset_ymax = {top + 0.12 * (top - low) + 1:.4f}\n")
        else:
            f.write("inset = 0\n")
    return configs, workloads, by, roofs


def gnuplot(script, plot_dir, out_png):
    cmd = ["gnuplot", "-e", f"gpdir={q(GP_DIR)}; plotdir={q(plot_dir)}; outfile={q(out_png)}",
           os.path.join(GP_DIR, script)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    # gnuplot prints warnings on stderr and still exits 0: a report with a warning is a bug.
    if p.returncode != 0 or p.stderr.strip():
        raise ReportError(f"gnuplot {script} failed:\n{p.stderr.strip()}\n(command: "
                          f"{' '.join(cmd)})")
    if not os.path.exists(out_png) or os.path.getsize(out_png) == 0:
        raise ReportError(f"gnuplot {script} wrote no {out_png}")


# ---------------------------------------------------------------------------------------------
# The Markdown report
# ---------------------------------------------------------------------------------------------


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except OSError:
        return ""


def machine():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1048576:.0f} GiB"
    except OSError:
        pass
    osname = platform.platform()
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"') + ", Linux " + platform.release()
    except OSError:
        pass
    return {
        "cpu": cpu or platform.processor(),
        "cores": str(os.cpu_count()),
        "memory": mem,
        "os": osname,
        "verilator": sh(["verilator", "--version"]),
        "compiler": sh(["c++", "--version"]).splitlines()[0] if sh(["c++", "--version"]) else "",
        "gnuplot": sh(["gnuplot", "--version"]),
        "python": platform.python_version(),
    }


def md_table(header, align, rows):
    """genlib.md_table with align as "l"/"r" letters, every '|' in a cell escaped, and a final
    newline."""
    def cell(x):
        return str(x).replace("|", "\\|")  # a '|' in a cell (a regex) would split it

    return genlib.md_table([cell(x) for x in header], [[cell(x) for x in r] for r in rows],
                           ["right" if a == "r" else "left" for a in align]) + "\n"


def pct(x, digits=1):
    return f"{x:.{digits}f}%"


def section_runs(tables_by_kind, timings):
    rows = []
    for kind in ("mxu", "hbm", "accel"):
        for t in tables_by_kind.get(kind, []):
            name = os.path.splitext(os.path.basename(t.path))[0]
            wall, cpu = timings.get(name, (None, None))
            rows.append([f"`{os.path.basename(t.path)}`", f"`{t.meta.get('command', '?')}`",
                         t.meta.get("date", "?"), fmt_time(wall) if wall is not None else "-",
                         fmt_time(cpu) if cpu is not None else "-"])
    return md_table(["data", "command", "started (UTC)", "wall time (m:s)", "CPU time (m:s)"],
                    "lllrr", rows)


def section_mxu(t, shapes, util, scal):
    bad = [r for r in t.rows if r["check"] not in ("bit-exact", "-")]
    checked = t.meta.get("checked", "1") == "1"
    out = "## The matrix unit: utilization against GEMM shape and array size\n\n"
    out += ("`tpu_mxu_bench`: one GEMM at a time on the Verilated `tpu_mxu` (operands already on "
            "chip, P = 1, 4096-row accumulators, IEEE mode). Utilization = useful MACs / (R·C·"
            "cycles). SCALE-Sim's figure is its analytical model of a conventional "
            "weight-stationary array, F·(2R + C + M − 2) − 1 cycles for F = ⌈K/R⌉·⌈N/C⌉ folds.\n\n")
    out += "![matrix-unit utilization by GEMM shape](mxu_util.png)\n\n"
    out += ("*Utilization by GEMM shape, one bar per array size (R×C), with the value on each "
            "bar.*\n\n")
    out += "![utilization against array size](mxu_scale.png)\n\n"
    out += ("*The same runs against the array size (solid), next to SCALE-Sim's model of the same "
            "shapes (dashed). SCALE-Sim's model charges every fold its own fill and drain "
            "(2R + C − 2 cycles); the pipelined limit overlaps them.*\n\n")
    ratios = [t.num(r, "cycles_over_limit") for r in t.rows]
    out += (f"Cycles against the fully pipelined limit R + F·M + (F−1)·max(0, R−M) + P·R + C − 2: "
            f"from {min(ratios):.4f} to {max(ratios):.4f} times the limit over the {len(ratios)} "
            "runs.\n\n")
    missing = [(s, a) for s in shapes for a in ARRAYS if (s, a) not in util]
    if missing:
        why = (" (`--quick` skips 1024³ on 4×4 and 8×8, the two longest runs)"
               if t.meta.get("quick") == "1" else "")
        out += (f"Not run{why}: " + ", ".join(f"{s} on {a}" for s, a in missing) + ".\n\n")
    out += "Utilization (measured / SCALE-Sim's model):\n\n"
    rows = []
    for s in shapes:
        rows.append([s] + [f"{pct(util[(s, a)], 2)} / {pct(scal[(s, a)], 2)}"
                           if (s, a) in util else "not run" for a in ARRAYS])
    out += md_table(["M×K×N"] + ARRAYS, "lrrrr", rows) + "\n"
    out += ("<details><summary>Every run: cycles, the pipelined limit, lost cycles by cause"
            "</summary>\n\n")
    rows = []
    for r in t.rows:
        rows.append([f"{r['rows']}×{r['cols']}", shape_of(t, r), r["cycles"], r["limit"],
                     r["scalesim"], f"{float(r['cycles_over_limit']):.4f}", r["wload"],
                     r["hazard"], r["starve"], r["drain"], r["check"]])
    out += md_table(["array", "M×K×N", "cycles", "limit", "SCALE-Sim", "cycles/limit", "wload",
                     "hazard", "starve", "drain", "results"], "llrrrrrrrrl", rows)
    out += "\n</details>\n\n"
    if not checked:
        out += "Results were **not checked** against the golden GEMM (`--no-check`).\n\n"
    elif bad:
        out += (f"**{len(bad)} of {len(t.rows)} runs did not match the golden GEMM** "
                "(see the table).\n\n")
    else:
        out += f"All {len(t.rows)} runs bit-exact against the golden GEMM.\n\n"
    return out


def section_hbm(t, classes, by):
    scale = t.meta.get("requests_scale", "1")
    out = "## HBM bandwidth per traffic class\n\n"
    out += ("`tpu_hbm_replay --bench`: the HBM2 full stack (8 channels, 16 pseudo-channels, "
            "2.0 Gb/s, 256 B per cycle peak) replays each traffic class of 64-byte requests, with "
            "all-bank (REFab) and per-bank (REFpb) refresh; the device models check every command. "
            "One bank is reported against one channel's peak (32 B per cycle). "
            f"Requests: {scale} × the classes' full sizes.\n\n")
    out += "![HBM bandwidth and read latency per traffic class](hbm.png)\n\n"
    out += ("*Top: achieved bandwidth as a share of peak. Bottom: read latency from AR accepted to "
            "the last R beat; the bar is the average, the whisker reaches the maximum.*\n\n")
    rows = []
    viol = 0
    for c, label in classes:
        for mode in ("perbank", "allbank"):
            r = by.get((c, mode))
            if r is None:
                continue
            viol += int(r["violations"])
            refresh = f"{r['refpb']} REFpb" if mode == "perbank" else f"{r['refab']} REFab"
            rows.append([label, mode.replace("bank", "-bank"), r["requests"], r["cycles"],
                         pct(t.num(r, "pct_peak")), f"{t.num(r, 'avg_read_latency'):.1f} / "
                         f"{r['max_read_latency']}", pct(t.num(r, "row_hit_pct")), r["act"],
                         refresh, r["violations"],
                         f"{t.num(r, 'cycles') / t.num(r, 'seconds'):,.0f}"])
    out += md_table(["traffic", "refresh", "requests", "cycles", "bandwidth",
                     "read latency avg / max (cycles)", "row hits", "ACTs", "refreshes",
                     "violations", "sim cycles/s"], "llrrrrrrrrr", rows) + "\n"
    out += ("No timing violations.\n\n" if viol == 0 else
            f"**{viol} JEDEC timing violations** (see the bench's log).\n\n")
    return out


def section_accel(configs, workloads, by, roofs):
    out = "## The accelerator end to end: the roofline\n\n"
    out += ("`tpu_accel_bench`: each workload runs from HBM to HBM on the Verilated `tpu_accel` "
            "(inputs read by the DMA, outputs written back, the program fetched from HBM) and is "
            "checked bit-exact against the golden model. Intensity = MACs per byte moved on the DMA "
            "port (program fetch included); the roof is min(compute peak, measured sequential read "
            "bandwidth × intensity).\n\n")
    out += "![roofline](roofline.png)\n\n"
    out += ("*Attained MACs per cycle against arithmetic intensity (log-log), one colour per "
            "workload; filled: one channel, open: eight channels. The lines are the roofs (solid: "
            "one channel, dashed: eight); the inset zooms, with a linear scale, on the workloads "
            "right of the ridge point.*\n\n")
    for c in configs:
        peak, bw, port = roofs[c]
        out += (f"**{CONFIG_TITLES.get(c, c)}**: compute peak {peak:.0f} MACs/cycle; a program of "
                f"LOADs alone streams {bw:.2f} B/cycle ({100 * bw / port:.1f}% of the "
                f"{port:.0f} B/cycle DMA port).\n\n")
        rows = []
        for w in workloads:
            tr = by.get((c, w))
            if not tr:
                continue
            t, r = tr
            rows.append([w, f"{int(r['macs']):,}", f"{int(r['read_bytes']) + int(r['write_bytes']):,}",
                         f"{t.num(r, 'macs_per_byte'):.2f}", f"{int(r['cycles']):,}",
                         f"{t.num(r, 'macs_per_cycle'):.1f}", f"{t.num(r, 'bound'):.1f}",
                         pct(t.num(r, "of_bound_pct")), pct(t.num(r, "util_pct")), r["check"]])
        out += md_table(["workload", "MACs", "bytes", "MACs/B", "cycles", "MACs/cycle", "bound",
                         "of bound", "util", "check"], "lrrrrrrrrl", rows) + "\n"
        big = [t.num(r, "of_bound_pct") for (cc, w), (t, r) in by.items()
               if cc == c and t.num(r, "macs") >= 1e7]
        if big:
            out += (f"Workloads of at least 10^7 MACs: {min(big):.1f}% to {max(big):.1f}% of "
                    "their roofline bound.\n\n")
        skipped = [w for w in workloads if (c, w) not in by]
        metas = [t.meta for (cc, _), (t, _) in by.items() if cc == c]
        if skipped:
            only = metas[0].get("only", "") if metas else ""
            why = f" (`--only '{only}'`: the quick mode's choice)" if only else ""
            out += f"Not run on this configuration{why}: {', '.join(skipped)}.\n\n"
        if metas and metas[0].get("quick") == "1":
            out += "`--quick`: without the 1024³ GEMM (about 4 minutes of simulation).\n\n"
    out += "### Where the cycles go\n\n"
    out += "![stall breakdown per workload](stalls.png)\n\n"
    out += ("*Every cycle of a run counted in exactly one class by the accelerator's performance "
            "counters (the TPU paper's table 3): busy = MAC utilization; weight stall = waiting "
            "for a weight tile; input stall = waiting for activations; idle = filling, draining, "
            "program fetch.*\n\n")
    bad = [(c, w) for (c, w), (t, r) in by.items() if r["check"] != "PASS"]
    out += (f"All {len(by)} runs bit-exact against the golden model.\n\n" if not bad else
            f"**{len(bad)} runs FAILED** their check: " + ", ".join(f"{w} on {c}" for c, w in bad)
            + ".\n\n")
    return out


def section_train(path, plot_dir):
    """The training run (tpusim train --json) against PyTorch's (examples/, the same recipe)."""
    with open(path) as f:
        rtl = json.load(f)
    with open(os.path.join(ROOT, "examples", "digits_mlp_sgd_torch.json")) as f:
        ref = json.load(f)
    with open(os.path.join(plot_dir, "train.dat"), "w") as f:
        f.write("# epoch rtl_loss torch_loss rtl_test_pct torch_test_pct\n")
        for e, r in zip(rtl["epochs"], ref["epochs"]):
            f.write(f"{e['epoch']} {e['loss']} {r['loss']} {100 * e['test_accuracy']} "
                    f"{100 * r['test_accuracy']}\n")
    rows = genlib.md_table(
        ["epoch", "loss (RTL)", "loss (PyTorch)", "test (RTL)", "test (PyTorch)"],
        [[e["epoch"], f"{e['loss']:.4f}", f"{r['loss']:.4f}", f"{100 * e['test_accuracy']:.2f}%",
          f"{100 * r['test_accuracy']:.2f}%"] for e, r in zip(rtl["epochs"], ref["epochs"])],
        ["right"] * 5).split("\n")
    p = rtl["passes"]
    peak = rtl["peak_macs_per_cycle"]
    prows = []
    # Since 2026-11-30 the update is a pass of jobs (on the vector unit where the machine has
    # one) and the host's seconds are the passes' own entry; older files kept them in "update".
    names = ("forward", "backward", "evaluation") + (("update",) if "jobs" in p["update"] else ())
    for name in names:
        q = p[name]
        prows.append([name, q["jobs"], f"{q['macs']:,}", f"{q['cycles']:,}",
                      f"{q['macs_per_cycle']:.1f}", f"{100 * q['macs_per_cycle'] / peak:.1f}%"])
    host_s = p["host_seconds"] if "host_seconds" in p else p["update"]["host_seconds"]
    prows.append(["host", "", "", "", "", f"{host_s:.2f} s between the jobs"])
    passes = genlib.md_table(["pass", "jobs", "MACs", "cycles", "MACs/cycle", "utilization"],
                             prows, ["left"] + ["right"] * 5).split("\n")
    rc = rtl["recipe"]
    return ("## Training on the accelerator\n\n`tpusim train` ([training.md](../training.md)): "
            f"the digits MLP {'-'.join(map(str, rtl['sizes']))} trained from scratch on "
            f"{rtl['config']} (SGD, batch {rc['batch']}, lr {rc['lr']:g}, momentum "
            f"{rc['momentum']:g}, seed {rc['seed']}, {rc['steps']} steps), every accelerator job "
            "of every step checked bit for bit against the golden model, next to PyTorch's "
            "float32 training with the same recipe, initial weights and data order "
            "(`scripts/train_reference.py`).\n\n![training](train.png)\n\n" + "\n".join(rows)
            + "\n\n" + "\n".join(passes) + "\n")


def section_speed(found):
    rows = []
    if "mxu" in found:
        t = found["mxu"][0]
        m = t.meta
        # speed_<R>x<C>_{cycles,macs,seconds} per array; speed_<R>x<C>_t2_seconds for the
        # two-thread build of the same run.
        arrays = sorted({k[len("speed_"):-len("_cycles")] for k in m
                         if k.startswith("speed_") and k.endswith("_cycles")},
                        key=lambda a: int(a.split("x")[0]))
        for a in arrays:
            cyc, sec, macs = (float(m[f"speed_{a}_cycles"]), float(m[f"speed_{a}_seconds"]),
                              float(m[f"speed_{a}_macs"]))
            rows.append([f"matrix unit {a}, 512x512x512 GEMM", f"{cyc / sec:,.0f}",
                         f"{macs / sec / 1e6:.2f}", "1"])
            if f"speed_{a}_t2_seconds" in m:
                sec2 = float(m[f"speed_{a}_t2_seconds"])
                rows.append([f"matrix unit {a}, 512x512x512 GEMM", f"{cyc / sec2:,.0f}",
                             f"{macs / sec2 / 1e6:.2f}", "2"])
        if not arrays and "speed_seconds" in m:  # CSVs of tpu_mxu_bench before 2026-11-25
            cyc, sec, macs = float(m["speed_cycles"]), float(m["speed_seconds"]), float(
                m["speed_macs"])
            rows.append([f"matrix unit {m.get('speed_array', '16x16')}, "
                         f"{m.get('speed_shape', '')} GEMM", f"{cyc / sec:,.0f}",
                         f"{macs / sec / 1e6:.2f}", "1"])
    if "hbm" in found:
        t = found["hbm"][0]
        cyc = sum(t.num(r, "cycles") for r in t.rows)
        sec = sum(t.num(r, "seconds") for r in t.rows)
        rows.append(["HBM2 full stack, all classes", f"{cyc / sec:,.0f}", "-", "1"])
    if "accel" in found:
        agg = {}
        for t, r in accel_rows(found["accel"]):
            a = agg.setdefault(r["config"], [0.0, 0.0, 0.0])
            a[0] += t.num(r, "cycles")
            a[1] += t.num(r, "macs")
            a[2] += t.num(r, "seconds")
        for c, (cyc, macs, sec) in sorted(agg.items()):
            rows.append([f"accelerator {CONFIG_TITLES.get(c, c)}, all workloads",
                         f"{cyc / sec:,.0f}", f"{macs / sec / 1e6:.2f}", "1"])
    if not rows:
        return ""
    builds = []
    if "mxu" in found:
        for key, value in sorted(found["mxu"][0].meta.items()):
            if key.startswith("cold_build_") and key.endswith("_seconds"):
                a = key[len('cold_build_'):-len('_seconds')]
                mb = found["mxu"][0].meta.get(f"cpp_{a}_mb")
                builds.append(f"{a}: {value} s" + (f" ({mb} MB of C++)" if mb else ""))
    out = "## Simulation speed\n\n"
    out += ("Simulated cycles per second of host (wall-clock) time, one thread per simulation, "
            "measured by the runs above; runs that shared the machine with other jobs (see the "
            "load average at the top) understate what an idle machine does.\n\n")
    out += md_table(["model", "cycles/s", "M MACs/s", "threads"], "lrrr", rows) + "\n"
    if builds:
        out += ("Cold Verilator build of the matrix unit (ccache off, `tpu_mxu_bench` without "
                f"`--no-build`): {', '.join(builds)}.\n\n")
    return out


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the CMake build directory with the benches")
    ap.add_argument("--data", help="plot the CSVs in this directory instead of running the benches")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "report"),
                    help="where the report goes (README.md and the PNGs)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the benches' seed")
    ap.add_argument("--jobs", type=int, default=2, help="cores the benches may use at once")
    args = ap.parse_args()
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if shutil.which("gnuplot") is None:
        raise ReportError("gnuplot not found: apt-get install gnuplot-nox (or make deps)")

    t_start = time.monotonic()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_before = os.getloadavg()
    timings = {}
    if args.data:
        data_dir = args.data
        if not os.path.isdir(data_dir):
            raise ReportError(f"REPORT_DATA / --data: '{data_dir}' is not a directory")
        mode = f"plotted from the CSVs in `{data_dir}` (`make report REPORT_DATA={data_dir}`)"
    else:
        data_dir = os.path.join(args.build, "report", "data")
        os.makedirs(data_dir, exist_ok=True)
        for old in glob.glob(os.path.join(data_dir, "*.csv")):
            os.remove(old)
        jobs = quick_jobs(args.build, data_dir, args.seed, args.jobs)
        log(f"quick mode, seed {args.seed}, {args.jobs} cores; CSVs and logs in {data_dir}")
        total = run_jobs(jobs, args.jobs, data_dir)
        timings = {j.name: (j.end - j.start, j.cpu) for j in jobs}
        timings["total"] = (total, sum(j.cpu for j in jobs))
        mode = f"quick mode (`make report`, seed {args.seed}, {args.jobs} cores)"
    load_after = os.getloadavg()

    found = load_data(data_dir)
    plot_dir = os.path.join(args.build, "report", "plot")
    os.makedirs(plot_dir, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    for old in glob.glob(os.path.join(args.out, "*.png")):
        os.remove(old)

    sections = []
    pngs = []
    if "mxu" in found:
        t = found["mxu"][0]
        shapes, util, scal = mxu_plot_data(t, plot_dir)
        gnuplot("mxu_util.gp", plot_dir, os.path.join(args.out, "mxu_util.png"))
        gnuplot("mxu_scale.gp", plot_dir, os.path.join(args.out, "mxu_scale.png"))
        pngs += ["mxu_util.png", "mxu_scale.png"]
        sections.append(section_mxu(t, shapes, util, scal))
    if "hbm" in found:
        t = found["hbm"][0]
        classes, by = hbm_plot_data(t, plot_dir)
        gnuplot("hbm.gp", plot_dir, os.path.join(args.out, "hbm.png"))
        pngs.append("hbm.png")
        sections.append(section_hbm(t, classes, by))
    if "accel" in found:
        configs, workloads, by, roofs = accel_plot_data(found["accel"], plot_dir)
        gnuplot("roofline.gp", plot_dir, os.path.join(args.out, "roofline.png"))
        gnuplot("stalls.gp", plot_dir, os.path.join(args.out, "stalls.png"))
        pngs += ["roofline.png", "stalls.png"]
        sections.append(section_accel(configs, workloads, by, roofs))
    sections.append(section_speed(found))
    models_md = os.path.join(data_dir, "models.md")
    if os.path.exists(models_md):
        with open(models_md) as f:
            sections.append(
                "## Whole networks from ONNX\n\n`scripts/bench_models.py` (`make bench-models`: "
                "ResNet-18 and ResNet-50 on 128x128_8ch and 16x16_1ch; the quick mode runs "
                "ResNet-18 on 16x16_1ch): torchvision's models with random initial weights, batch "
                "1, every accelerator job checked bit for bit against the golden model; cycles "
                "by layer class with each class's MAC utilization in brackets ([onnx.md]"
                "(../onnx.md)).\n\n" + f.read() + "\n")

    train_json = os.path.join(data_dir, "train_digits.json")
    if os.path.exists(train_json):
        sections.append(section_train(train_json, plot_dir))
        gnuplot("train.gp", plot_dir, os.path.join(args.out, "train.png"))
        pngs.append("train.png")

    # The data next to the report, so that it can be re-plotted (REPORT_DATA=docs/report/data).
    out_data = os.path.join(args.out, "data")
    if os.path.abspath(out_data) != os.path.abspath(data_dir):
        os.makedirs(out_data, exist_ok=True)
        for old in glob.glob(os.path.join(out_data, "*.csv")):
            os.remove(old)
        for tables in found.values():
            for t in tables:
                shutil.copy(t.path, out_data)
        for extra in ("models.md", "models.csv", "train_digits.json"):
            if os.path.exists(os.path.join(data_dir, extra)):
                shutil.copy(os.path.join(data_dir, extra), out_data)

    m = machine()
    commit = sh(["git", "rev-parse", "--short", "HEAD"])
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"])
    head = "# Performance report\n\n"
    head += (f"Generated by `make report` on {started}: {mode}; git {commit or '?'}"
             f"{' with local changes' if dirty else ''}. Regenerate with `make report` "
             "(quick mode: see below for what it runs) or, from the CSVs of a full `make bench`, "
             "`make report REPORT_DATA=<dir>`; these plots' own data is in [data/](data/).\n\n")
    missing = [k for k in ("mxu", "hbm", "accel") if k not in found]
    if missing:
        head += (f"No data for: {', '.join(missing)} (no such CSV in `{data_dir}`): those "
                 "sections are left out.\n\n")
    head += "Contents: " + ", ".join(f"[{p}]({p})" for p in pngs) + ".\n\n"
    head += "**Runs**\n\n" + section_runs(found, timings) + "\n"
    if timings:
        wall, cpu = timings["total"]
        head += (f"The benches took {fmt_time(wall)} (m:s) wall time on {args.jobs} cores, "
                 f"{fmt_time(cpu)} of CPU time (load average {load_before[0]:.1f} when they "
                 f"started, {load_after[0]:.1f} when they ended: other jobs on the machine stretch "
                 "the wall time, not the CPU time).\n\n")
    head += "**Machine** (the one that rendered the report" + (
        ")" if args.data else " and ran the benches)") + "\n\n"
    head += md_table(["", ""], "ll", [
        ["CPU", f"{m['cpu']}, {m['cores']} cores"], ["memory", m["memory"]], ["OS", m["os"]],
        ["simulator", m["verilator"]], ["compiler", m["compiler"]], ["plots", m["gnuplot"]],
        ["Python", m["python"]]]) + "\n"
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(head + "\n".join(sections))
    log(f"wrote {args.out}/README.md and {', '.join(pngs)} in "
        f"{fmt_time(time.monotonic() - t_start)} (m:s)")


if __name__ == "__main__":
    try:
        main()
    except ReportError as e:
        print(f"report: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("report: interrupted", file=sys.stderr)
        sys.exit(130)
