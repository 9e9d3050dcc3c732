#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""docs/benchmarks.md's tables, generated from the CSV files `make bench*` writes, each stamped
with the commit, date and CPU it was measured on (issue 34: a figure in the docs comes from a
measurement and is never typed by hand).

  scripts/bench_table.py stamp NAME           record that build/bench/NAME.csv was just measured
                                              (the Makefile's bench targets call it): commit,
                                              date and CPU into build/bench/stamp.tsv
  scripts/bench_table.py NAME [--dir DIR]     print NAME's table (default DIR build/bench)
  scripts/bench_table.py NAME --write         write it into docs/benchmarks.md, between
                                              <!-- bench_table: NAME --> and <!-- /bench_table -->
  scripts/bench_table.py --check              every table of TABLES is in the doc, with its
                                              columns and a stamp from a committed tree (the fast
                                              test bench_tables_current)

NAME is one of TABLES: golden (make bench-golden: the golden GEMM's kernels), mxu and mxu_speed
(make bench-mxu: the matrix unit's utilization, then its simulation speed and build cost; both
from mxu.csv, stamped as mxu), hbm (make bench-hbm: the HBM stack's traffic classes), jobs
(make bench-jobs: tpusim onnx --jobs N), models (make bench-models: ResNets from ONNX). A missing
CSV or stamp, or a CSV without the columns the table needs, is a one-line error naming what to run.
"""
import csv
import datetime
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genlib  # noqa: E402

TOOL = "bench_table"
DOC = "docs/benchmarks.md"


def ratio(x):
    """A speed ratio: one decimal below 100×, none above."""
    return f"{x:.1f}×" if x < 100 else f"{x:,.0f}×"


def golden_rows(rows, meta):
    """The golden GEMM: one row a kernel, both modes side by side."""
    names = {"exact": "exact (`num::Mac`, integer)", "scalar": "scalar (`std::fma`)",
             "avx2": "AVX2 + FMA", "avx512": "AVX-512"}
    by = {(r["kernel"], r["mode"]): r for r in rows}
    out = []
    for k in dict.fromkeys(r["kernel"] for r in rows):
        cells = [names.get(k, k)]
        for mode in ("IEEE", "FTZ"):
            r = by.get((k, mode))
            if r is None:
                sys.exit(f"bench_table.py: golden.csv has kernel {k} without mode {mode}: "
                         "run make bench-golden again")
            cells += [f"{float(r['macs_per_s']) / 1e6:,.{1 if k == 'exact' else 0}f}",
                      ratio(float(r["vs_exact"]))]
        out.append(cells)
    shapes = sorted({f"{r['m']}×{r['k']}×{r['n']}" for r in rows}, key=len)
    return out, f"one thread, shapes {', '.join(shapes)}"


def mxu_rows(rows, meta):
    """The matrix unit's utilization: one row an (array, shape), in the bench's order."""
    out = []
    for r in rows:
        n = f"{r['rows']}×{r['cols']}"
        out.append([n, f"{r['m']}x{r['k']}x{r['n']}", r["cycles"], r["limit"], r["scalesim"],
                    f"{float(r['util_pct']):.2f}%", f"{float(r['util_scalesim_pct']):.2f}%",
                    f"{float(r['cycles_over_limit']):.4f}", r["wload"], r["hazard"], r["starve"],
                    r["drain"], r["check"]])
    if not out:
        sys.exit("bench_table.py: mxu.csv has no utilization rows (was it run with --no-util?): "
                 "run make bench-mxu again")
    return out, (f"seed {meta.get('seed', '?')}, {meta.get('jobs', '?')} jobs; cycles do not "
                 "depend on the machine")


def mxu_speed_rows(rows, meta):
    """The matrix unit's simulation speed and cold build, one row an array size, from the
    `# speed_NxN_...` lines tpu_mxu_bench writes after its utilization rows."""
    sizes = sorted({int(m.group(1)) for k in meta
                    for m in [re.fullmatch(r"speed_(\d+)x\1_cycles", k)] if m})
    if not sizes:
        sys.exit("bench_table.py: mxu.csv has no speed lines (was it run with --no-speed?): "
                 "run make bench-mxu again")
    out = []
    for n in sizes:
        def get(key, n=n):
            return meta.get(key.format(n=n))
        cycles, macs, secs = (float(get(f"speed_{{n}}x{{n}}_{k}")) for k in
                              ("cycles", "macs", "seconds"))
        t2 = get("speed_{n}x{n}_t2_seconds")
        build, mb = get("cold_build_{n}x{n}_seconds"), get("cpp_{n}x{n}_mb")
        out.append([f"{n}×{n}", f"{cycles:.0f}", f"{cycles / secs:,.0f}", f"{macs / secs / 1e6:.2f}",
                    f"{macs / float(t2) / 1e6:.2f}" if t2 else "-",
                    f"{float(build):.1f} s" if build else "-", f"{float(mb):.1f} MB" if mb else "-",
                    "bit-exact" if meta.get("checked") == "1" else "unchecked"])
    return out, "one 512×512×512 GEMM per array, one run at a time"


def jobs_rows(rows, meta):
    """tpusim onnx --jobs N: one row a process count, speed-ups against --jobs 1 in that run."""
    out = [[r["jobs"], f"{float(r['wall_s']):.1f}", f"{float(r['speedup']):.2f}×", r["jobs_run"],
            r["programs"], f"{int(r['cycles']):,}", f"{int(r['hbm_bytes']):,}",
            f"{int(r['checked_elements']):,}", r["same_as_1"]] for r in rows]
    return out, (f"{meta.get('model', '?')}, batch {meta.get('batch', '?')}, "
                 f"{meta.get('config', '?')}, backend {meta.get('backend', '?')}")


def models_rows(rows, meta):
    """Whole networks from ONNX: one row a (model, configuration)."""
    out = []
    for r in rows:
        cycles, rd, wr = int(r["cycles"]), int(r["hbm_read_bytes"]), int(r["hbm_write_bytes"])
        step = float(r["step_seconds"])
        out.append([r["model"], r["config"], f"{int(r['macs']):,}", f"{cycles:,}",
                    f"{100 * float(r['mac_utilization']):.1f}%", f"{rd:,}", f"{wr:,}",
                    f"{(rd + wr) / cycles:.1f}", r["layer_classes"],
                    f"{r['host_steps']} of {r['steps']}",
                    f"{100 * float(r['host_operator_seconds']) / step:.2f}%" if step else "-",
                    f"{float(r['wall_seconds']):.0f} s ({float(r['sim_seconds']):.0f} + "
                    f"{float(r['check_seconds']):.0f})"])
    return out, "batch 1, every accelerator job checked against the golden model"


# The HBM table's fixed columns per traffic class (not measured here): its display name, the
# goal for per-bank refresh (issue 14) or the ceiling all-bank refresh allows, and what DRAMSim3 /
# Ramulator 2.1 give for the same class (docs/hbm.md says how they were run).
HBM_CLASSES = {
    "seq": ("sequential reads", {"perbank": "≥ 93%", "allbank": "ceiling 91.0%"},
            "92.1% / 89.5%"),
    "rand": ("random reads", {"perbank": "≥ 50%"}, "24.1% / 43.0%"),
    "seq21": ("sequential 2:1", {"perbank": "≥ 85%"}, "82.3% / 69.0%"),
    "rand21": ("random 2:1", {"perbank": "≥ 40%"}, "23.8% / 31.4%"),
    "onebank": ("one bank", {}, "3.9% / 3.8%"),
}


def hbm_rows(rows, meta):
    """The HBM subsystem: one row a (traffic class, refresh mode), per-bank refresh first."""
    by = {(r["traffic"], r["refresh"]): r for r in rows}
    out = []
    for cls, (label, goals, refs) in HBM_CLASSES.items():
        for mode in ("perbank", "allbank"):
            r = by.get((cls, mode))
            if r is None:
                sys.exit(f"bench_table.py: hbm.csv has no row {cls} {mode}: run make bench-hbm "
                         "again")
            bw = f"{float(r['pct_peak']):.1f}%" + (" of 1 ch" if r["peak_channels"] == "1" else "")
            refs_n = f"{int(r['refpb']):,} REFpb" if mode == "perbank" else \
                f"{int(r['refab']):,} REFab"
            out.append([label, "per-bank" if mode == "perbank" else "all-bank",
                        f"**{bw}**" if mode in goals and goals[mode].startswith("≥") else bw,
                        goals.get(mode, ""), refs if mode == "perbank" else "",
                        f"{float(r['avg_read_latency']):.1f} / {r['max_read_latency']}",
                        f"{float(r['row_hit_pct']):.1f}%", f"{int(r['act']):,}", refs_n,
                        r["violations"], f"{int(r['cycles']) / float(r['seconds']):,.0f}"])
    scale = meta.get("requests_scale", "1")
    return out, (f"seed {meta.get('seed', '?')}" +
                 ("" if scale == "1" else f", requests scaled by {scale}"))


# name: (the bench that writes it, CSV columns it needs, headers, alignment, rows function)
TABLES = {
    "golden": ("make bench-golden", ["kernel", "mode", "m", "k", "n", "macs_per_s", "vs_exact"],
               ["kernel", "IEEE, M MACs/s", "vs exact", "FTZ, M MACs/s", "vs exact"],
               ["left", "right", "right", "right", "right"], golden_rows),
    "mxu": ("make bench-mxu", ["rows", "cols", "m", "k", "n", "cycles", "limit", "scalesim",
                               "util_pct", "util_scalesim_pct", "cycles_over_limit", "wload",
                               "hazard", "starve", "drain", "check"],
            ["array", "M×K×N", "cycles", "limit", "SCALE-Sim", "util", "util SCALE-Sim",
             "cycles/limit", "wload", "hazard", "starve", "drain", "results"],
            ["left", "left"] + ["right"] * 10 + ["left"], mxu_rows),
    "hbm": ("make bench-hbm", ["traffic", "refresh", "pct_peak", "peak_channels",
                               "avg_read_latency", "max_read_latency", "row_hit_pct", "act",
                               "refab", "refpb", "violations", "cycles", "seconds"],
            ["traffic", "refresh", "bandwidth", "goal", "DRAMSim3 / Ramulator 2.1",
             "avg / max read latency (cycles)", "row hits", "ACTs", "refreshes", "violations",
             "simulated cycles/s"],
            ["left", "left"] + ["right"] * 9, hbm_rows),
    "jobs": ("make bench-jobs", ["jobs", "wall_s", "speedup", "jobs_run", "programs", "cycles",
                                 "hbm_bytes", "checked_elements", "same_as_1"],
             ["`--jobs`", "wall s", "speed-up", "jobs", "programs", "cycles (summed)", "HBM bytes",
              "checked elements", "outputs = `--jobs 1`"],
             ["right"] * 8 + ["left"], jobs_rows),
    "models": ("make bench-models", ["model", "config", "macs", "cycles", "mac_utilization",
                                     "hbm_read_bytes", "hbm_write_bytes", "host_steps", "steps",
                                     "host_operator_seconds", "step_seconds", "sim_seconds",
                                     "check_seconds", "wall_seconds", "layer_classes"],
               ["model", "config", "MACs", "cycles", "MAC util", "HBM read", "HBM written",
                "B/cycle", "cycles by layer class (util)", "host steps",
                "host-operator share of host time", "simulation (back end + check)"],
               ["left", "left"] + ["right"] * 6 + ["left"] + ["right"] * 3, models_rows),
    "mxu_speed": ("make bench-mxu", [],
                  ["array", "cycles", "cycles/s", "million MACs/s", "2 threads: million MACs/s",
                   "cold build", "C++ generated", "results"],
                  ["left"] + ["right"] * 6 + ["left"], mxu_speed_rows),
}

# Tables read from another table's CSV (and stamp): name -> the CSV's name.
CSV_OF = {"mxu_speed": "mxu"}


def git(*args):
    return subprocess.run(["git", "-C", genlib.ROOT, *args], capture_output=True, text=True,
                          check=False).stdout.strip()


def cpu():
    """The CPU's model name and its widest vector extension, as the stamp records it."""
    try:
        text = open("/proc/cpuinfo", encoding="utf-8").read()
    except OSError:
        return "unknown CPU"
    model = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", text, re.M)
    flags = set(flags.group(1).split()) if flags else set()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    cores = len(re.findall(r"^processor\s*:", text, re.M))
    return f"{model.group(1).strip() if model else 'unknown CPU'}, {cores} cores, {isa}"


def stamp(d, name):
    """Records NAME's run: commit (+ when the tree has uncommitted changes), UTC date, CPU."""
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "+"
    s = genlib.read_stamps(d)
    s[name] = [commit, datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), cpu()]
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "stamp.tsv"), "w", encoding="utf-8") as f:
        for k, v in sorted(s.items()):
            f.write("\t".join([k, *v]) + "\n")
    print(f"bench_table.py: {name} measured at {s[name][0]}, {s[name][1]}, {s[name][2]}")


def table(d, name):
    bench, need, headers, align, make_rows = TABLES[name]
    src = CSV_OF.get(name, name)
    path = os.path.join(d, src + ".csv")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().splitlines()
    except OSError as e:
        sys.exit(f"bench_table.py: no {path} ({e.strerror}): run {bench} first")
    # `# key=value` lines (bench_util.h's CsvFile) are the run's facts; the rest is the CSV.
    meta = dict(ln[2:].split("=", 1) for ln in lines if ln.startswith("# ") and "=" in ln)
    rows = list(csv.DictReader(ln for ln in lines if not ln.startswith("#")))
    missing = [c for c in need if not rows or c not in rows[0]]
    if missing:
        sys.exit(f"bench_table.py: {path} lacks the column(s) {', '.join(missing)}: "
                 f"run {bench} again")
    st = genlib.read_stamps(d).get(src)
    if st is None:
        sys.exit(f"bench_table.py: {d}/stamp.tsv has no run of {src}: run {bench}")
    body, what = make_rows(rows, meta)
    note = (f"(Generated by `scripts/bench_table.py {name}` from `{bench}` at commit {st[0]}, "
            f"{st[1]}, on {st[2]}; {what}.)")
    return genlib.md_table(headers, body, align) + "\n\n" + note


def check():
    text = open(os.path.join(genlib.ROOT, DOC), encoding="utf-8").read()
    for name, (bench, _, headers, _, _) in TABLES.items():
        m = re.search(rf"<!-- {TOOL}: {name} -->\n(.*?)<!-- /{TOOL} -->", text, re.S)
        if not m:
            return f"{DOC} has no '<!-- {TOOL}: {name} -->' ... '<!-- /{TOOL} -->'"
        first = m.group(1).lstrip().split("\n", 1)[0]
        cols = [c.strip() for c in first.strip().strip("|").split("|")]
        if cols != headers:
            return (f"{DOC}'s {name} table has the columns {cols}, not {headers}: run {bench} "
                    f"and scripts/bench_table.py {name} --write")
        err = genlib.stamp_problem(m.group(1),
                                   f"Generated by `scripts/bench_table.py {name}` from `{bench}`",
                                   f"{DOC}'s {name} table", "measure a commit and regenerate it")
        if err:
            return err
    return None


def main(argv):
    d = os.path.join(genlib.ROOT, "build", "bench")
    if "--dir" in argv:
        i = argv.index("--dir")
        d = argv[i + 1]
        del argv[i:i + 2]
    if argv == ["--check"]:
        err = check()
        print(f"bench_table.py: {err}" if err else
              f"bench_table.py: {DOC} has the tables {', '.join(TABLES)}, stamped")
        return 1 if err else 0
    if len(argv) == 2 and argv[0] == "stamp" and argv[1] in TABLES and argv[1] not in CSV_OF:
        stamp(d, argv[1])
        return 0
    if argv and argv[0] in TABLES and argv[1:] in ([], ["--write"]):
        t = table(d, argv[0])
        if argv[1:] == ["--write"]:
            path = os.path.join(genlib.ROOT, DOC)
            text = genlib.replace_marked(TOOL, open(path, encoding="utf-8").read(), argv[0], t,
                                         DOC)
            open(path, "w", encoding="utf-8").write(text)
            print(f"bench_table.py: wrote the {argv[0]} table into {DOC}")
        else:
            print(t)
        return 0
    print(f"bench_table.py: expected stamp NAME, NAME [--write] or --check, NAME one of "
          f"{', '.join(TABLES)} (got '{' '.join(argv)}'; see --help)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
