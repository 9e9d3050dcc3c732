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

NAME is one of TABLES: golden (make bench-golden: the golden GEMM's kernels). A missing CSV or
stamp, or a CSV without the columns the table needs, is a one-line error naming what to run.
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


def golden_rows(rows):
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


# name: (the bench that writes it, CSV columns it needs, headers, alignment, rows function)
TABLES = {
    "golden": ("make bench-golden", ["kernel", "mode", "m", "k", "n", "macs_per_s", "vs_exact"],
               ["kernel", "IEEE, M MACs/s", "vs exact", "FTZ, M MACs/s", "vs exact"],
               ["left", "right", "right", "right", "right"], golden_rows),
}


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
    path = os.path.join(d, name + ".csv")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"bench_table.py: no {path} ({e.strerror}): run {bench} first")
    missing = [c for c in need if not rows or c not in rows[0]]
    if missing:
        sys.exit(f"bench_table.py: {path} lacks the column(s) {', '.join(missing)}: "
                 f"run {bench} again")
    st = genlib.read_stamps(d).get(name)
    if st is None:
        sys.exit(f"bench_table.py: {d}/stamp.tsv has no run of {name}: run {bench}")
    body, what = make_rows(rows)
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
    if len(argv) == 2 and argv[0] == "stamp" and argv[1] in TABLES:
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
