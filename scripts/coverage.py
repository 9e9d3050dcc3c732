#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make coverage: line and toggle coverage of rtl/ over a regression of the fast tier.

Runs the fast tier in a coverage build (cmake -DTPU_COVERAGE=ON; every Verilated RTL model is
built with --coverage-line --coverage-toggle) with TPU_COVERAGE_DIR set, so that each model
writes its counters to its own .dat file when its SimCtrl is destroyed. Then merges them with
`verilator_coverage --write`, writes an lcov file (`--write-info`) and its HTML (genhtml), and
prints a summary computed from the merged data: per RTL file the line and toggle coverage, the
total of rtl/, and every uncovered line with its source text. See docs/coverage.md.

Outputs (under --out, default <build>/coverage/):
  dat/            the raw per-model files of the last run
  coverage.dat    the merged counters (verilator_coverage input format)
  coverage.info   lcov tracefile; html/index.html is its genhtml report
  summary.txt     what is printed; summary.md the same as Markdown, with untoggled signals
  summary.json    the figures, for scripts
  regress/        the regression's own report (scripts/regress.py), when it ran
  fcov/           functional coverage JSON written by the tests (scripts/fcov_report.py)

Definitions (the same for every file):
  line    a source line named by a line-coverage point (statement blocks and if/else/case arms;
          Verilator's `S` line list of the point; the implicit `else` of an `if`, which names no
          line, is not one). The line is covered when every point that names it ran at least
          once, summed over all instances and all configurations.
  toggle  one bit of one signal of one module (over all its configurations); covered when it
          changed at least twice (so it rose and fell) in some instance of some configuration,
          the counts of one instance summed over all runs.
Code between /*verilator coverage_off*/ and /*verilator coverage_on*/ has no points; the
summary lists those waived regions with the reason written next to them.
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genlib  # noqa: E402 (this folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE_PAGES = ("v_line/", "v_branch/")
TOGGLE_PAGE = "v_toggle/"
NOTES = os.path.join(ROOT, "scripts", "coverage_notes.txt")  # known holes and why
MERGE_CHUNK = 200  # .dat files per verilator_coverage call (keeps the command line short)


class UsageError(Exception):
    """Bad input or a missing tool: printed as one line, exit status 2."""


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="coverage.py",
        description="Line and toggle coverage of rtl/ over a fast-tier regression "
        "(make coverage; docs/coverage.md).")
    p.add_argument("--build", default="build-cov",
                   help="coverage build directory, configured with -DTPU_COVERAGE=ON "
                   "(default: build-cov)")
    p.add_argument("--out", default=None, help="output directory (default: <build>/coverage)")
    p.add_argument("--seeds", type=int, default=1,
                   help="run seeds per random test (default: 1)")
    p.add_argument("--seed", type=int, default=None,
                   help="first run seed (default: TPU_SEED if set, else a fresh one)")
    p.add_argument("--jobs", type=int, default=2, help="tests run at once (default: 2)")
    p.add_argument("--filter", default="",
                   help="only the tests matching this GoogleTest-style filter (regress.py)")
    p.add_argument("--timeout", type=float, default=2400.0,
                   help="seconds per test run before regress.py kills it (default: 2400; "
                   "toggle coverage makes the models up to 10x slower)")
    p.add_argument("--regress-args", default="",
                   help="more options for scripts/regress.py, one string (e.g. '--launcher "
                   "slurm --partition verif')")
    p.add_argument("--no-run", action="store_true",
                   help="do not run tests: merge and report the .dat files already in <out>/dat")
    p.add_argument("--fail-under", type=float, default=None,
                   help="exit 1 when the line coverage of rtl/ is below this percentage")
    a = p.parse_args(argv)
    if a.seeds < 1:
        raise UsageError(f"--seeds must be at least 1, got {a.seeds}")
    if a.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {a.jobs}")
    if a.timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {a.timeout}")
    if a.fail_under is not None and not 0 <= a.fail_under <= 100:
        raise UsageError(f"--fail-under must be a percentage (0-100), got {a.fail_under}")
    return a


def rel(path):
    """A path as the user would type it from the repository root."""
    r = os.path.relpath(path, ROOT)
    return path if r.startswith("..") else r


def check_build(build):
    cache = os.path.join(build, "CMakeCache.txt")
    if not os.path.isfile(cache):
        raise UsageError(f"{rel(build)} is not a CMake build directory (no CMakeCache.txt); "
                         "configure it with: cmake -S . -B build-cov -DCMAKE_BUILD_TYPE=Release "
                         "-DTPU_COVERAGE=ON")
    with open(cache, encoding="utf-8", errors="replace") as f:
        on = any(re.match(r"TPU_COVERAGE:BOOL=(ON|1|TRUE|YES)$", line.strip(), re.I) for line in f)
    if not on:
        raise UsageError(f"{rel(build)} is not a coverage build (TPU_COVERAGE is not ON in its "
                         "CMakeCache.txt); use make coverage, or cmake -DTPU_COVERAGE=ON")


def need_tool(name):
    path = shutil.which(name)
    if not path:
        raise UsageError(f"'{name}' not found on PATH (make deps installs it)")
    return path


# ---------------------------------------------------------------------------------------------
# Running the regression


def run_regression(args, build, out, env):
    """Runs the fast tier with coverage enabled; returns (exit status, wall seconds, command)."""
    regress = os.path.join(ROOT, "scripts", "regress.py")
    t0 = time.monotonic()
    if os.path.isfile(regress):
        cmd = [sys.executable, regress, "--build", build, "--tier", "smoke", "--seeds",
               str(args.seeds), "--jobs", str(args.jobs), "--timeout", f"{args.timeout:g}",
               "--out", os.path.join(out, "regress")]
        if args.seed is not None:
            cmd += ["--seed", str(args.seed)]
        if args.filter:
            cmd += ["--filter", args.filter]
        try:
            cmd += shlex.split(args.regress_args)
        except ValueError as e:
            raise UsageError(f"--regress-args '{args.regress_args}': {e}") from None
        print("coverage: " + " ".join(shlex.quote(rel(c) if os.sep in c else c) for c in cmd),
              flush=True)
        rc = subprocess.call(cmd, cwd=ROOT, env=env)
        return rc, time.monotonic() - t0, cmd
    # Fallback (no regress.py): ctest's fast label once per seed.
    if args.filter:
        raise UsageError("--filter needs scripts/regress.py")
    first = args.seed
    if first is None:
        first = int(env["TPU_SEED"], 0) if env.get("TPU_SEED") else int.from_bytes(
            os.urandom(6), "little")
    rc = 0
    cmd = ["ctest", "-L", "fast", "-j", str(args.jobs), "--output-on-failure"]
    for k in range(args.seeds):
        seed = first + k
        print(f"coverage: TPU_SEED={seed} " + " ".join(cmd) + f" (in {rel(build)})", flush=True)
        rc |= subprocess.call(cmd, cwd=build, env=dict(env, TPU_SEED=str(seed)))
    return rc, time.monotonic() - t0, cmd


# ---------------------------------------------------------------------------------------------
# Merging


def merge(dats, merged):
    """verilator_coverage --write over many files, in chunks."""
    vc = need_tool("verilator_coverage")
    with tempfile.TemporaryDirectory(prefix="tpu-cov-") as tmp:
        parts = []
        for i in range(0, len(dats), MERGE_CHUNK):
            part = os.path.join(tmp, f"part{i // MERGE_CHUNK}.dat")
            subprocess.run([vc, "--write", part] + dats[i:i + MERGE_CHUNK], check=True)
            parts.append(part)
        subprocess.run([vc, "--write", merged] + parts, check=True)


def read_points(path):
    """The points of a .dat file as (dict of key -> value, count)."""
    points = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith("C '"):
                continue
            end = line.rfind("' ")
            if end < 0:
                continue
            body, count = line[3:end], int(line[end + 2:])
            fields = {}
            for item in body.split("\x01")[1:]:
                key, _, value = item.partition("\x02")
                fields[key] = value
            points.append((fields, count))
    return points


def parse_lines(spec):
    """Verilator's line list ('12-15,17') as a set of ints."""
    lines = set()
    for part in (spec or "").split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit():
            lines.update(range(int(lo), int(hi if hi.isdigit() else lo) + 1))
    return lines


# ---------------------------------------------------------------------------------------------
# Analysis


class FileCov:
    def __init__(self, path):
        self.path = path
        self.line_points = {}  # (line, column, kind, lines) -> count summed over instances
        self.toggles = defaultdict(int)  # (module, signal bit, instance) -> count
        self.lines = {}  # line -> covered (bool)
        self.toggle_bits = {}  # (module, signal bit) -> covered (bool)

    def finish(self):
        per_line = defaultdict(list)
        for (_line, _col, _kind, spec), count in self.line_points.items():
            # A point that names no line is an empty arm (the implicit `else` of an `if`): a
            # branch, not a line.
            for ln in parse_lines(spec):
                per_line[ln].append(count)
        self.lines = {ln: all(c > 0 for c in counts) for ln, counts in per_line.items()}
        bits = defaultdict(bool)
        for (module, sig, _inst), count in self.toggles.items():
            bits[(module, sig)] |= count >= 2
        self.toggle_bits = dict(bits)

    @property
    def line_total(self):
        return len(self.lines)

    @property
    def line_hit(self):
        return sum(self.lines.values())

    @property
    def toggle_total(self):
        return len(self.toggle_bits)

    @property
    def toggle_hit(self):
        return sum(self.toggle_bits.values())

    def untoggled_signals(self):
        """{(module, signal): [bits not covered]} for the report."""
        res = defaultdict(list)
        for (module, sig), ok in self.toggle_bits.items():
            if not ok:
                base = sig.split("[", 1)[0]
                res[(module, base)].append(sig[len(base):])
        return res


def analyse(points):
    files = {}
    for fields, count in points:
        path = fields.get("f", "")
        page = fields.get("page", "")
        if not path.startswith("rtl/"):
            continue
        fc = files.setdefault(path, FileCov(path))
        line = int(fields.get("l", "0") or 0)
        if page.startswith(LINE_PAGES):
            key = (line, fields.get("n", ""), fields.get("o", ""), fields.get("S", ""))
            fc.line_points[key] = fc.line_points.get(key, 0) + count
        elif page.startswith(TOGGLE_PAGE):
            # The page names the module with Verilator's parameter suffix (tpu_accel_buf__D100_E8):
            # a bit is one of the module's, whatever the configuration; the instance keeps it.
            module = page[len(TOGGLE_PAGE):].split("__", 1)[0]
            inst = (page, fields.get("h", ""))
            fc.toggles[(module, fields.get("o", ""), inst)] += count
    for fc in files.values():
        fc.finish()
    return files


def source_lines(path):
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            return f.read().split("\n")
    except OSError:
        return []


def waivers():
    """The coverage_off regions of rtl/: (file, first line, last line, reason). The reason is the
    `//` comment on the coverage_off line, else on the coverage_on line, else the comment lines
    just before the region."""

    def comment(line):
        m = re.search(r"//\s*(.*)$", line)
        return m.group(1).strip() if m else ""

    res = []
    for path in sorted(glob.glob(os.path.join(ROOT, "rtl", "**", "*.sv"), recursive=True)):
        text = source_lines(rel(path))
        start = None
        for i, line in enumerate(text, 1):
            if "verilator coverage_off" in line:
                start = i
            if "verilator coverage_on" in line and start is not None:
                reason = comment(text[start - 1]) or comment(line)
                if not reason:
                    before = []
                    j = start - 2
                    while j >= 0 and re.match(r"^\s*//", text[j]):
                        before.insert(0, comment(text[j]))
                        j -= 1
                    reason = " ".join(before)
                res.append((rel(path), start, i, reason))
                start = None
    return res


def load_notes(path):
    """scripts/coverage_notes.txt: {(file, stripped source line): note}."""
    notes = {}
    if not os.path.isfile(path):
        return notes
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [x.strip() for x in line.split(" | ")]
            if len(parts) != 3 or not all(parts):
                raise UsageError(f"{rel(path)}:{n}: expected 'file | source line | note', got "
                                 f"'{line.rstrip()}'")
            notes[(parts[0], parts[1])] = parts[2]
    return notes


def pct(hit, total):
    """A percentage rounded to 0.01, or None when there is nothing to cover."""
    return round(100.0 * hit / total, 2) if total else None


def fp(value, width=0, suffix="%"):
    """A percentage for the reports ('-' for None)."""
    return f"{value:.2f}{suffix}".rjust(width) if value is not None else "-".rjust(width)


def ranges(nums):
    """[3,4,5,9] -> [(3,5),(9,9)]."""
    out = []
    for n in sorted(nums):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return [tuple(r) for r in out]


# ---------------------------------------------------------------------------------------------
# Reports


def build_summary(files, meta):
    paths = sorted(files)
    lt = sum(files[p].line_total for p in paths)
    lh = sum(files[p].line_hit for p in paths)
    tt = sum(files[p].toggle_total for p in paths)
    th = sum(files[p].toggle_hit for p in paths)
    notes = load_notes(NOTES)
    used = set()
    uncovered = []
    for p in paths:
        src = source_lines(p)
        for ln in sorted(n for n, ok in files[p].lines.items() if not ok):
            text = src[ln - 1].rstrip() if 0 < ln <= len(src) else ""
            note = notes.get((p, text.strip()), "")
            if note:
                used.add((p, text.strip()))
            uncovered.append((p, ln, text, note))
    rows = [{
        "file": p,
        "lines": files[p].line_total,
        "lines_hit": files[p].line_hit,
        "line_pct": pct(files[p].line_hit, files[p].line_total),
        "toggle_bits": files[p].toggle_total,
        "toggle_hit": files[p].toggle_hit,
        "toggle_pct": pct(files[p].toggle_hit, files[p].toggle_total),
    } for p in paths]
    return {
        **meta,
        "total": {
            "lines": lt, "lines_hit": lh, "line_pct": pct(lh, lt),
            "toggle_bits": tt, "toggle_hit": th, "toggle_pct": pct(th, tt),
        },
        "files": rows,
        "uncovered": [{"file": p, "line": ln, "text": t, "note": nt}
                      for p, ln, t, nt in uncovered],
        "stale_notes": [{"file": f, "text": t} for (f, t) in sorted(set(notes) - used)],
        "waivers": [{"file": f, "first": a, "last": b, "reason": r} for f, a, b, r in waivers()],
    }


def text_report(s):
    out = []
    w = max([len(r["file"]) for r in s["files"]] + [len("rtl/ total")])
    out.append(f"{'file':<{w}}  {'lines':>11}  {'line %':>7}  {'toggle bits':>13}  {'toggle %':>8}")
    out.append("-" * (w + 48))
    for r in s["files"]:
        out.append(f"{r['file']:<{w}}  {r['lines_hit']:>5}/{r['lines']:<5}  {fp(r['line_pct'], 7)}"
                   f"  {r['toggle_hit']:>6}/{r['toggle_bits']:<6}  {fp(r['toggle_pct'], 8)}")
    out.append("-" * (w + 48))
    t = s["total"]
    out.append(f"{'rtl/ total':<{w}}  {t['lines_hit']:>5}/{t['lines']:<5}  {fp(t['line_pct'], 7)}"
               f"  {t['toggle_hit']:>6}/{t['toggle_bits']:<6}  {fp(t['toggle_pct'], 8)}")
    out.append("")
    toggle = (f"{fp(t['toggle_pct'])} ({t['toggle_hit']} of {t['toggle_bits']} bits)"
              if t["toggle_bits"] else "not measured (models built without toggle coverage)")
    out.append(f"Line coverage of rtl/: {fp(t['line_pct'])} ({t['lines_hit']} of {t['lines']} "
               f"lines); toggle coverage: {toggle}")
    out.append("")
    if s["uncovered"]:
        out.append(f"Uncovered lines ({len(s['uncovered'])}):")
        for u in s["uncovered"]:
            out.append(f"  {u['file']}:{u['line']}: {u['text'].strip()}")
            if u["note"]:
                out.append(f"      known: {u['note']}")
    else:
        out.append("Uncovered lines: none")
    if s["stale_notes"]:
        out.append("")
        out.append(f"Stale notes in {rel(NOTES)} (their line is covered or gone; remove them):")
        for n in s["stale_notes"]:
            out.append(f"  {n['file']}: {n['text']}")
    if s["waivers"]:
        out.append("")
        out.append(f"Waived (coverage_off) regions ({len(s['waivers'])}):")
        for wv in s["waivers"]:
            where = f"{wv['file']}:{wv['first']}" + (f"-{wv['last']}" if wv["last"] != wv["first"]
                                                      else "")
            out.append(f"  {where}: {wv['reason'] or '(no reason given)'}")
    return "\n".join(out)


def md_escape(text):
    return text.replace("|", "\\|")


def markdown_report(s, files):
    t = s["total"]
    out = ["# Coverage of rtl/", ""]
    out.append(f"Line coverage **{fp(t['line_pct'])}** ({t['lines_hit']} of {t['lines']} lines), "
               f"toggle coverage **{fp(t['toggle_pct'])}** ({t['toggle_hit']} of "
               f"{t['toggle_bits']} bits).")
    out.append("")
    out.append(f"- Regression: `{s['regression']}`, {s['regress_wall']:.0f} s, "
               f"{'passed' if s['regress_rc'] == 0 else 'FAILED (exit %d)' % s['regress_rc']}"
               if s.get("regression") else "- Regression: not run (--no-run)")
    out.append(f"- Data: {s['dat_files']} .dat files from {s['models']} simulated models: "
               + ", ".join(f"`{m}`" for m in s["model_names"]))
    out.append(f"- Merged: `{s['merged']}`, lcov `{s['info']}`, HTML `{s['html']}`")
    out.append("- Definitions: docs/coverage.md (a line is covered when every coverage point on it "
               "ran; a toggle bit when it rose and fell)")
    out.append("")
    rows = [[f"`{r['file']}`", f"{r['lines_hit']}/{r['lines']}", fp(r["line_pct"], 0, ""),
             f"{r['toggle_hit']}/{r['toggle_bits']}", fp(r["toggle_pct"], 0, "")]
            for r in s["files"]]
    rows.append(["**rtl/ total**", f"{t['lines_hit']}/{t['lines']}",
                 f"**{fp(t['line_pct'], 0, '')}**", f"{t['toggle_hit']}/{t['toggle_bits']}",
                 f"**{fp(t['toggle_pct'], 0, '')}**"])
    out += genlib.md_table(["file", "lines", "line %", "toggle bits", "toggle %"], rows,
                           ["left"] + ["right"] * 4).split("\n")
    out.append("")
    out.append(f"## Uncovered lines ({len(s['uncovered'])})")
    out.append("")
    if s["uncovered"]:
        out += genlib.md_table(
            ["where", "source", "known reason"],
            [[f"`{u['file']}:{u['line']}`", f"`{md_escape(u['text'].strip())}`",
              md_escape(u["note"])] for u in s["uncovered"]],
            ["left"] * 3).split("\n")
    else:
        out.append("None.")
    out.append("")
    out.append(f"## Waived regions ({len(s['waivers'])})")
    out.append("")
    out.append("Code between `/*verilator coverage_off*/` and `/*verilator coverage_on*/` "
               "(unreachable in every built configuration; the reason is the comment beside it).")
    out.append("")
    for wv in s["waivers"]:
        out.append(f"- `{wv['file']}:{wv['first']}-{wv['last']}`: "
                   f"{md_escape(wv['reason']) or '(no reason given)'}")
    out.append("")
    out.append("## Signals with untoggled bits")
    out.append("")
    out.append("A bit counts as toggled when it rose and fell in at least one instance.")
    out.append("")
    for p in sorted(files):
        sigs = files[p].untoggled_signals()
        if not sigs:
            continue
        out.append(f"<details><summary><code>{p}</code>: {len(sigs)} signals</summary>")
        out.append("")
        for (module, sig), bits in sorted(sigs.items()):
            bits = [b for b in bits if b]
            out.append(f"- `{module}.{sig}`" + (f" ({len(bits)} bits)" if bits else ""))
        out.append("")
        out.append("</details>")
        out.append("")
    return "\n".join(out)


def model_names(dats):
    """The simulations (SimCtrl names) whose files hold rtl/ points (not the gate-level ones)."""
    names = set()
    for d in dats:
        # cov_<model>_<pid>_<n>.dat; regress.py --merge makes the pid s<set>p<pid>
        m = re.match(r"cov_(.*)_(?:s\d+p)?\d+_\d+\.dat$", os.path.basename(d))
        if m and m.group(1) not in names:
            with open(d, encoding="utf-8", errors="replace") as f:
                if "\x01f\x02rtl/" in f.read(4096):
                    names.add(m.group(1))
    return sorted(names)


def main(argv):
    args = parse_args(argv)
    build = os.path.abspath(args.build)
    out = os.path.abspath(args.out or os.path.join(build, "coverage"))
    if not (args.no_run and args.out):  # reporting given data needs no build
        check_build(build)
    need_tool("verilator_coverage")
    dat_dir = os.path.join(out, "dat")
    fcov_dir = os.path.join(out, "fcov")
    meta = {"regression": None, "regress_rc": 0, "regress_wall": 0.0}

    if not args.no_run:
        for d in (dat_dir, fcov_dir, os.path.join(out, "regress")):
            shutil.rmtree(d, ignore_errors=True)
        os.makedirs(dat_dir)
        os.makedirs(fcov_dir)
        env = dict(os.environ, TPU_COVERAGE_DIR=dat_dir, TPU_FCOV_DIR=fcov_dir)
        print(f"coverage: TPU_COVERAGE_DIR={rel(dat_dir)} TPU_FCOV_DIR={rel(fcov_dir)}", flush=True)
        rc, wall, cmd = run_regression(args, build, out, env)
        meta.update(regression=" ".join(rel(c) if os.sep in c else c for c in cmd),
                    regress_rc=rc, regress_wall=wall)
        with open(os.path.join(out, "run.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f)
        print(f"coverage: regression {'passed' if rc == 0 else 'FAILED'} in {wall:.0f} s",
              flush=True)
    elif os.path.isfile(os.path.join(out, "run.json")):
        # Re-reporting: the run that wrote the data (its failure still counts).
        with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
            meta.update(json.load(f))

    dats = sorted(glob.glob(os.path.join(dat_dir, "*.dat")))
    if not dats:
        raise UsageError(f"no coverage data in {rel(dat_dir)}: did the tests run in a build "
                         "configured with -DTPU_COVERAGE=ON?")
    oldest = min(os.path.getmtime(d) for d in dats)
    changed = [rel(f) for f in glob.glob(os.path.join(ROOT, "rtl", "**", "*.sv"), recursive=True)
               if os.path.getmtime(f) > oldest]
    if changed:
        print(f"coverage: WARNING: {', '.join(sorted(changed))} changed after the data in "
              f"{rel(dat_dir)} was written: line numbers and source text below may not match "
              "(run make coverage again)", flush=True)
    merged = os.path.join(out, "coverage.dat")
    info = os.path.join(out, "coverage.info")
    html_dir = os.path.join(out, "html")
    t0 = time.monotonic()
    merge(dats, merged)
    vc = need_tool("verilator_coverage")
    subprocess.run([vc, "--write-info", info, merged], check=True)
    merge_s = time.monotonic() - t0
    points = read_points(merged)
    files = analyse(points)
    if not files:
        raise UsageError(f"{rel(merged)} has no rtl/ coverage points (were the models built with "
                         "--coverage? see scripts/verilate.sh)")

    html_note = ""
    if shutil.which("genhtml"):
        shutil.rmtree(html_dir, ignore_errors=True)
        r = subprocess.run(["genhtml", "--quiet", "--output-directory", html_dir, "--title",
                            "tpu rtl/ (Verilator line+toggle)", "--legend", info],
                           cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            html_note = f"genhtml failed ({r.stderr.strip().splitlines()[-1:]}); no HTML"
    else:
        html_note = "genhtml not found (apt-get install lcov); no HTML"

    names = model_names(dats)
    meta.update(dat_files=len(dats), models=len(names), model_names=names,
                merged=rel(merged), info=rel(info), html=rel(os.path.join(html_dir, "index.html")),
                merge_seconds=round(merge_s, 1))
    s = build_summary(files, meta)
    text = text_report(s)
    with open(os.path.join(out, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(markdown_report(s, files) + "\n")
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(s, f, indent=1)
        f.write("\n")

    print()
    print(text)
    print()
    print(f"coverage: {len(dats)} .dat files from {len(names)} simulated models "
          f"({', '.join(names)}), merged in {merge_s:.1f} s")
    print(f"coverage: {rel(merged)}, {rel(info)}, "
          + (html_note or f"{rel(os.path.join(html_dir, 'index.html'))}"))
    print(f"coverage: summary in {rel(os.path.join(out, 'summary.txt'))} and "
          f"{rel(os.path.join(out, 'summary.md'))}")

    fcov = os.path.join(ROOT, "scripts", "fcov_report.py")
    if os.path.isfile(fcov):
        print()
        print(f"coverage: functional coverage (scripts/fcov_report.py {rel(fcov_dir)})", flush=True)
        frc = subprocess.call([sys.executable, fcov, fcov_dir], cwd=ROOT)
        if frc != 0:
            print(f"coverage: scripts/fcov_report.py exited with {frc}")
    else:
        print("coverage: no functional coverage report (scripts/fcov_report.py does not exist yet)")

    status = 0
    if meta["regress_rc"] != 0:
        print(f"coverage: the regression FAILED (exit {meta['regress_rc']}): the figures above "
              "count the failing runs too")
        status = 1
    if args.fail_under is not None and (s["total"]["line_pct"] or 0.0) < args.fail_under:
        print(f"coverage: line coverage {s['total']['line_pct']:.2f}% is below "
              f"--fail-under {args.fail_under:g}%")
        status = 1
    return status


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"coverage: {e}", file=sys.stderr)
        sys.exit(2)
    except subprocess.CalledProcessError as e:
        print(f"coverage: command failed (exit {e.returncode}): "
              + " ".join(shlex.quote(str(c)) for c in e.cmd), file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("\ncoverage: interrupted", file=sys.stderr)
        sys.exit(130)
