#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make regress: run the test x seed matrix in parallel and report it.

The matrix comes from ctest (`ctest --show-only=json-v1`): every GoogleTest test is one entry
and runs as its own process (SystemC allows one simulation per process). A test that prints a
"[   SEED   ]" line is random and runs with the run seeds SEED, SEED+1, ... SEED+SEEDS-1; a test
that prints none is deterministic and runs once. Results go to
<build>/regress/<tier>-<timestamp>/ (junit.xml, report.md, results.json, logs/), with a
`latest` symlink beside it. Every failure is printed with the command that reproduces it.

Sharding follows GoogleTest's protocol: with GTEST_TOTAL_SHARDS=n and GTEST_SHARD_INDEX=i in the
environment, only the tests k (in a fixed order) with k % n == i run here, each with all its
seeds. See docs/regress.md.
"""

import argparse
import datetime
import glob
import heapq
import html
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

SEED_LINE = re.compile(r"^\[   SEED   \] (\S+) run seed (\d+) ", re.M)
OK_LINE = re.compile(r"^\[       OK \] ", re.M)
TIERS = {"smoke": "^fast$", "full": "^(fast|long)$"}
# Variables a child must not inherit: each child runs one test, so GoogleTest's sharding
# would make most of them run nothing.
SHARD_VARS = ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX")


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


@dataclass
class Test:
    index: int  # position in the full (unsharded, unfiltered) ordered list
    name: str  # Suite.Test as GoogleTest names it (the --gtest_filter value)
    binary: str  # absolute path
    args: list  # ctest's arguments after the binary
    label: str
    cwd: str
    skip_res: list
    env: dict
    gtest: bool = True  # False: a plain ctest command, run as is, once, without --seed

    @property
    def program(self):
        return os.path.basename(self.binary)

    @property
    def systemc(self):
        return self.program.endswith("_sc_test")


@dataclass
class Run:
    test: Test
    seed: int
    status: str = ""  # pass, fail, skip
    reason: str = ""
    duration: float = 0.0
    start: float = 0.0  # seconds after the regression started
    log: str = ""
    excerpt: list = field(default_factory=list)
    seeded: bool = False


# ---------------------------------------------------------------------------------------------
# Matrix


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="regress.py",
        description="Run the test x seed matrix in parallel; write JUnit XML and a Markdown "
        "report.",
        epilog="Sharding: set GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX (see docs/regress.md).")
    p.add_argument("--build", default="build", help="CMake build directory (default: build)")
    p.add_argument("--tier", default="smoke", choices=sorted(TIERS),
                   help="smoke = ctest label fast; full = fast + long (default: smoke)")
    p.add_argument("--seeds", type=int, default=None,
                   help="run seeds per random test (default: 4 for smoke, 2 for full)")
    p.add_argument("--jobs", type=int, default=2, help="tests run at once (default: 2)")
    p.add_argument("--seed", type=int, default=None,
                   help="first run seed (default: TPU_SEED if set, else a fresh one)")
    p.add_argument("--filter", default="",
                   help="GoogleTest-style filter 'POS:POS-NEG:NEG' with * and ?, matched against "
                   "Suite.Test and program/Suite.Test (e.g. '*MacTest.*', 'hbm_test/*-*Refresh*')")
    p.add_argument("--out", default=None,
                   help="output directory (default: <build>/regress/<tier>-<timestamp>)")
    p.add_argument("--timeout", type=float, default=1200.0,
                   help="seconds per test run before it is killed and failed (default: 1200)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines")
    p.add_argument("--progress-interval", type=float, default=30.0,
                   help="seconds between progress lines when stdout is not a terminal "
                   "(default: 30)")
    p.add_argument("--list", action="store_true",
                   help="print the tests this run (or shard) would run, then exit")
    a = p.parse_args(argv)
    if a.seeds is None:
        a.seeds = 4 if a.tier == "smoke" else 2
    if a.seeds < 1:
        raise UsageError(f"--seeds must be at least 1, got {a.seeds}")
    if a.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {a.jobs}")
    if a.timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {a.timeout}")
    if a.seed is not None and a.seed < 0:
        raise UsageError(f"--seed must not be negative, got {a.seed}")
    return a


def shard_from_env():
    """(index, total) from GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS, or None."""
    total_s = os.environ.get("GTEST_TOTAL_SHARDS", "")
    index_s = os.environ.get("GTEST_SHARD_INDEX", "")
    if not total_s and not index_s:
        return None
    if not total_s or not index_s:
        missing = "GTEST_TOTAL_SHARDS" if not total_s else "GTEST_SHARD_INDEX"
        raise UsageError(f"sharding needs both GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX; {missing} "
                         "is not set")
    try:
        total, index = int(total_s), int(index_s)
    except ValueError:
        raise UsageError(f"GTEST_TOTAL_SHARDS='{total_s}' and GTEST_SHARD_INDEX='{index_s}' "
                         "must be integers") from None
    if total < 1:
        raise UsageError(f"GTEST_TOTAL_SHARDS must be at least 1, got {total}")
    if not 0 <= index < total:
        raise UsageError(f"GTEST_SHARD_INDEX must be in 0..{total - 1} "
                         f"(GTEST_TOTAL_SHARDS={total}), got {index}")
    return index, total


def list_tests(build, tier, partial):
    """Every test of the tier, from ctest, in a fixed order (program, then name).

    A program that is not built is an error unless `partial` (a filter is given): then it is left
    out with a warning.
    """
    if not os.path.isfile(os.path.join(build, "CTestTestfile.cmake")):
        raise UsageError(f"{build} is not a configured build directory (no CTestTestfile.cmake); "
                         "run `make build` first or pass --build DIR")
    cmd = ["ctest", "--show-only=json-v1", "-L", TIERS[tier]]
    try:
        out = subprocess.run(cmd, cwd=build, capture_output=True, text=True, check=True).stdout
    except FileNotFoundError:
        raise UsageError("ctest not found on PATH (install cmake)") from None
    except subprocess.CalledProcessError as e:
        raise UsageError(f"`{' '.join(cmd)}` in {build} failed: {e.stderr.strip()}") from None
    data = json.loads(out)
    tests_files = None

    def program_of(t):
        """ctest omits the command of a program that is not built; gtest_discover_tests' tests
        file (tests/<program>[1]_tests.cmake) still names the program."""
        nonlocal tests_files
        if tests_files is None:
            tests_files = {}
            for f in glob.glob(os.path.join(build, "**", "*_tests.cmake"), recursive=True):
                m = re.match(r"(.+)\[\d+\]_tests\.cmake$", os.path.basename(f))
                if m:
                    with open(f, encoding="utf-8", errors="replace") as fh:
                        tests_files[m.group(1)] = fh.read()
        for prog, text in tests_files.items():
            if f"[=[{t['name']}]=]" in text:
                return prog
        return f"(the program of test '{t['name']}')"

    tests, not_built = [], []
    for t in data.get("tests", []):
        command = t.get("command") or []
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if t["name"].endswith("_NOT_BUILT"):  # gtest_discover_tests' placeholder
            not_built.append(t["name"][:-len("_NOT_BUILT")])
            continue
        if not command or not os.path.isfile(command[0]):
            not_built.append(os.path.basename(command[0]) if command else program_of(t))
            continue
        gfilter = [a for a in command[1:] if a.startswith("--gtest_filter=")]
        labels = props.get("LABELS", [])
        env = dict(e.split("=", 1) for e in props.get("ENVIRONMENT", []))
        tests.append(
            Test(0, gfilter[0].split("=", 1)[1] if len(gfilter) == 1 else t["name"], command[0],
                 command[1:], labels[0] if labels else "", props.get("WORKING_DIRECTORY", build),
                 [re.compile(r) for r in props.get("SKIP_REGULAR_EXPRESSION", [])], env,
                 gtest=len(gfilter) == 1))
    missing = " ".join(sorted(set(not_built)))
    if not_built and partial:
        print(f"regress: warning: not built, so not considered for the filter: {missing}",
              file=sys.stderr)
    elif not_built:
        raise UsageError(f"test programs not built in {build}: {missing}; build them "
                         f"(`cmake --build {build} --target {missing}`) or run `make regress`, "
                         "which builds what it runs")
    tests.sort(key=lambda t: (t.program, t.name))
    for i, t in enumerate(tests):
        t.index = i
    return tests


def glob_re(pattern):
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                              for c in pattern) + r"\Z")


def make_filter(spec):
    """GoogleTest filter semantics: 'POS1:POS2-NEG1:NEG2'."""
    pos, _, neg = spec.partition("-")
    pos_res = [glob_re(p) for p in pos.split(":") if p] or [glob_re("*")]
    neg_res = [glob_re(p) for p in neg.split(":") if p]

    def match(t):
        keys = (t.name, f"{t.program}/{t.name}")
        hit = lambda res: any(r.match(k) for r in res for k in keys)
        return hit(pos_res) and not hit(neg_res)

    return match


def load_history(root):
    """Per-test duration and seededness from earlier runs under <build>/regress (newest wins)."""
    hist = {}
    if not os.path.isdir(root):
        return hist
    files = []
    for d in os.listdir(root):
        f = os.path.join(root, d, "results.json")
        if d != "latest" and os.path.isfile(f):
            files.append((os.path.getmtime(f), f))
    for _, f in sorted(files)[-20:]:
        try:
            with open(f, encoding="utf-8") as fh:
                runs = json.load(fh).get("runs", [])
        except (OSError, ValueError):
            continue
        for r in runs:
            if r.get("status") in ("pass", "fail") and "timed out" not in r.get("reason", ""):
                hist[(r["program"], r["test"])] = (r["duration"], r.get("seeded", False))
    return hist


# ---------------------------------------------------------------------------------------------
# Running


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def passthrough_env():
    """TPU_* variables the tests read (TPU_SEED aside: --seed overrides it)."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("TPU_") and k != "TPU_SEED"}


def shell_path(path):
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path


def repro_commands(run, env):
    """(waves command or None, plain command, note)."""
    prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in env.items())
    t = run.test
    if not t.gtest:
        cmd = " ".join(shlex.quote(c) for c in [shell_path(t.binary)] + t.args)
        return None, f"{prefix}{cmd}", "not a GoogleTest test: no waves"
    plain = (f"{prefix}{shlex.quote(shell_path(t.binary))} "
             f"--gtest_filter={shlex.quote(t.name)} --seed={run.seed}")
    if t.systemc:
        return None, plain, "SystemC model: no waves"
    return f"{prefix}make waves TEST={shlex.quote(t.name)} SEED={run.seed}", plain, ""


def failure_excerpt(text, limit=12):
    """The first failing assertion (GoogleTest's 'file:line: Failure' block), else the log tail."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r".*:\d+: Failure$", line) or re.search(r"\bSEGV|Assertion .* failed|"
                                                            r"%Error|terminate called", line):
            out = []
            for l in lines[i:]:
                if out and (l.startswith("[  FAILED  ]") or l.startswith("[       OK ]")):
                    break
                out.append(l)
                if len(out) >= limit:
                    break
            return out
    return [l for l in lines if not l.startswith("# ")][-limit:]


class Runner:

    def __init__(self, tests, args, out, first_seed, env, hist):
        self.args = args
        self.out = out
        self.first_seed = first_seed
        self.env = env
        self.hist = hist
        self.child_env = {k: v for k, v in os.environ.items() if k not in SHARD_VARS}
        self.tests = tests
        self.tests_by_index = {t.index: t for t in tests}
        self.queue = []  # (priority, order, test, seed)
        self.order = 0
        self.running = {}  # pid -> (Popen, Run, start, logfile)
        self.done = []
        self.first_pending = set(t.index for t in tests)  # first run not finished yet
        self.tty = sys.stdout.isatty() and not args.no_progress
        self.last_line = 0.0
        self.start = time.monotonic()
        self.by_program = {}
        self.first_outcome = {}  # test index -> (seeded, status) of its first run
        # Tests that earlier runs saw print a seed get all their seeds queued at once, so the
        # seeds of a long test run side by side; the others wait for their first run.
        self.prequeued = set()
        for t in tests:
            self.push(t, first_seed, first=True)
            h = hist.get((t.program, t.name))
            if h and h[1] and t.gtest and args.seeds > 1:
                self.prequeued.add(t.index)
                for k in range(1, args.seeds):
                    self.push(t, first_seed + k, first=True)

    # Estimated seconds for one run of t: history, else the mean of its program's finished runs.
    def estimate(self, t):
        h = self.hist.get((t.program, t.name))
        if h:
            return h[0]
        same = self.by_program.get(t.program)
        if same:
            return sum(same) / len(same)
        if self.done:
            return sum(r.duration for r in self.done) / len(self.done)
        return 1.0

    def seeded_odds(self, t):
        h = self.hist.get((t.program, t.name))
        if h:
            return 1.0 if h[1] else 0.0
        firsts = [r for r in self.done if r.seed == self.first_seed and r.status != "skip"]
        return sum(r.seeded for r in firsts) / len(firsts) if firsts else 0.5

    def push(self, t, seed, first):
        # Longest first (estimates from earlier runs) keeps the tail short; on equal estimates
        # first runs go before extra seeds, in the matrix order.
        self.order += 1
        heapq.heappush(self.queue, (-self.estimate(t), self.order if first else 10**9 + self.order,
                                    t.index, seed))

    def launch(self):
        while self.queue and len(self.running) < self.args.jobs:
            _, _, idx, seed = heapq.heappop(self.queue)
            t = self.tests_by_index[idx]
            outcome = self.first_outcome.get(idx)
            if seed != self.first_seed and outcome and (not outcome[0] or outcome[1] == "skip"):
                continue  # queued from history, but this time the test is deterministic
            run = Run(t, seed)
            logdir = os.path.join(self.out, "logs", t.program)
            os.makedirs(logdir, exist_ok=True)
            run.log = os.path.join(logdir, f"{sanitize(t.name)}.seed{seed}.log")
            cmd = [t.binary] + t.args + ([f"--seed={seed}"] if t.gtest else [])
            logf = open(run.log, "w", encoding="utf-8")
            logf.write(f"# command: {' '.join(shlex.quote(c) for c in cmd)}\n# cwd: {t.cwd}\n")
            logf.flush()
            env = dict(self.child_env, **t.env)
            proc = subprocess.Popen(cmd, cwd=t.cwd, env=env, stdout=logf, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            now = time.monotonic()
            run.start = now - self.start
            self.running[proc.pid] = (proc, run, now, logf)

    def kill(self, proc):
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the child's own process group (start_new_session)
        except ProcessLookupError:
            pass
        proc.wait()

    def reap(self):
        now = time.monotonic()
        for pid in list(self.running):
            proc, run, start, logf = self.running[pid]
            timed_out = False
            rc = proc.poll()
            if rc is None:
                if now - start <= self.args.timeout:
                    continue
                self.kill(proc)
                rc, timed_out = proc.returncode, True
            del self.running[pid]
            run.duration = time.monotonic() - start
            logf.close()
            self.classify(run, rc, timed_out)
            self.finish(run)

    def classify(self, run, rc, timed_out):
        with open(run.log, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        seeds = SEED_LINE.findall(text)
        run.seeded = bool(seeds)
        if timed_out:
            run.status, run.reason = "fail", (f"timed out after {self.args.timeout:g} s (killed; "
                                              "raise --timeout if the test is just slow)")
        elif rc < 0:
            run.status, run.reason = "fail", f"killed by signal {signal.Signals(-rc).name}"
        elif rc != 0:
            run.status, run.reason = "fail", f"exit status {rc}"
        elif any(r.search(text) for r in run.test.skip_res):
            run.status, run.reason = "skip", "skipped"
        elif run.test.gtest and not OK_LINE.search(text):
            run.status, run.reason = "fail", ("exit status 0 but no test ran (filter matched "
                                              "nothing?)")
        elif any(int(s) != run.seed for _, s in seeds):
            got = sorted(set(int(s) for _, s in seeds))
            run.status, run.reason = "fail", (f"ran with run seed {got[0]}, not the {run.seed} "
                                              "passed by --seed")
        else:
            run.status = "pass"
        if run.status == "fail":
            run.excerpt = failure_excerpt(text)

    def finish(self, run):
        t = run.test
        self.done.append(run)
        self.by_program.setdefault(t.program, []).append(run.duration)
        if run.seed == self.first_seed:
            self.first_pending.discard(t.index)
            self.first_outcome[t.index] = (run.seeded, run.status)
            if run.seeded and run.status != "skip" and t.index not in self.prequeued:
                for k in range(1, self.args.seeds):
                    self.push(t, self.first_seed + k, first=False)
        if run.status == "fail":
            waves, plain, note = repro_commands(run, self.env)
            self.message(f"FAIL {t.name} seed {run.seed} ({t.program}, {run.duration:.1f} s): "
                         f"{run.reason}\n  log:   {shell_path(run.log)}\n" +
                         (f"  waves: {waves}\n" if waves else f"  waves: none ({note})\n") +
                         f"  rerun: {plain}")

    # -- progress ---------------------------------------------------------------------------------

    def message(self, text):
        if self.tty:
            sys.stdout.write("\r\x1b[K")
        print(text, flush=True)
        if self.tty:
            self.progress(force=True)

    def progress(self, force=False):
        if self.args.no_progress:
            return
        now = time.monotonic()
        interval = 0.5 if self.tty else self.args.progress_interval
        if not force and now - self.last_line < interval:
            return
        self.last_line = now
        n_pass = sum(r.status == "pass" for r in self.done)
        n_fail = sum(r.status == "fail" for r in self.done)
        n_skip = sum(r.status == "skip" for r in self.done)
        extra = 0.0
        work = sum(self.estimate(self.tests_by_index[q[2]]) for q in self.queue)
        for _, run, start, _ in self.running.values():
            work += max(self.estimate(run.test) - (now - start), 0.0)
        for idx in self.first_pending - self.prequeued:
            t = self.tests_by_index[idx]
            odds = self.seeded_odds(t) * (self.args.seeds - 1)
            extra += odds
            work += odds * self.estimate(t)
        total = len(self.done) + len(self.running) + len(self.queue) + round(extra)
        approx = "~" if self.first_pending and self.args.seeds > 1 else ""
        width = len(str(total)) + len(approx)
        line = (f"[{len(self.done):>{width}}/{approx}{total}] {n_pass} pass {n_fail} fail" +
                (f" {n_skip} skip" if n_skip else "") +
                f" | {clock(now - self.start)} elapsed")
        if self.done or self.hist:
            line += f" ~{clock(work / self.args.jobs)} left"
        if self.running:
            names = ", ".join(f"{r.test.program} {r.test.name}"
                              for _, r, _, _ in self.running.values())
            line += f" | running: {names}"
        if self.tty:
            cols = shutil.get_terminal_size((120, 24)).columns
            sys.stdout.write("\r\x1b[K" + line[:cols - 1])
            sys.stdout.flush()
        else:
            print(line, flush=True)

    def run(self):
        while self.queue or self.running:
            self.launch()
            time.sleep(0.05)
            self.reap()
            self.progress()
        if self.tty:
            sys.stdout.write("\r\x1b[K")
            sys.stdout.flush()

    def abort(self):
        """Kills the running tests; returns (their names with seeds, runs never started)."""
        killed = []
        for proc, run, _, logf in list(self.running.values()):
            self.kill(proc)
            logf.close()
            killed.append(f"{run.test.name} seed {run.seed}")
        self.running.clear()
        queued = len(self.queue)
        self.queue.clear()
        if self.tty:
            sys.stdout.write("\r\x1b[K")
        return killed, queued


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def clock(seconds):
    s = int(seconds + 0.5)
    if s >= 3600:
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    return f"{s // 60:02d}:{s % 60:02d}"


# ---------------------------------------------------------------------------------------------
# Reports


def summarize(runs, key):
    rows = {}
    for r in runs:
        row = rows.setdefault(key(r), {"runs": 0, "pass": 0, "fail": 0, "skip": 0, "time": 0.0,
                                       "seeds": set()})
        row["runs"] += 1
        row[r.status] += 1
        row["time"] += r.duration
        row["seeds"].add(r.seed)
    return rows


def table(headers, rows, align):
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    fmt = lambda cells: "  ".join(f"{c:{a}{w}}" for c, a, w in zip(cells, align, widths)).rstrip()
    return [fmt(headers), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


def md_table(headers, rows, align):
    sep = ["---:" if a == ">" else "---" for a in align]
    esc = lambda c: str(c).replace("|", "\\|")
    return ["| " + " | ".join(headers) + " |", "| " + " | ".join(sep) + " |"] + [
        "| " + " | ".join(esc(c) for c in r) + " |" for r in rows
    ]


def program_rows(runs, tests):
    n_tests = {}
    for t in tests:
        n_tests[t.program] = n_tests.get(t.program, 0) + 1
    rows = summarize(runs, lambda r: r.test.program)
    out = []
    for prog in sorted(rows):
        s = rows[prog]
        out.append([prog, n_tests.get(prog, 0), s["runs"], s["pass"], s["fail"], s["skip"],
                    f"{s['time']:.1f}"])
    return out


def write_junit(path, meta, runs):
    suites = {}
    for r in runs:
        suites.setdefault(r.test.program, []).append(r)
    total_fail = sum(r.status == "fail" for r in runs)
    total_skip = sum(r.status == "skip" for r in runs)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name={quoteattr(meta["title"])} tests="{len(runs)}" '
             f'failures="{total_fail}" errors="0" skipped="{total_skip}" '
             f'time="{meta["wall"]:.3f}">']
    for prog in sorted(suites):
        rs = sorted(suites[prog], key=lambda r: (r.test.name, r.seed))
        lines.append(f'  <testsuite name={quoteattr(prog + meta["suffix"])} tests="{len(rs)}" '
                     f'failures="{sum(r.status == "fail" for r in rs)}" errors="0" '
                     f'skipped="{sum(r.status == "skip" for r in rs)}" '
                     f'time="{sum(r.duration for r in rs):.3f}" '
                     f'timestamp={quoteattr(meta["start"])} hostname={quoteattr(meta["host"])}>')
        lines.append("    <properties>")
        for k in ("tier", "first_seed", "seeds", "shard", "commit"):
            lines.append(f'      <property name="{k}" value={quoteattr(str(meta[k]))}/>')
        lines.append("    </properties>")
        for r in rs:
            suite, _, test = r.test.name.partition(".")
            name = f"{test} [seed {r.seed}]" if r.seeded else test
            lines.append(f'    <testcase classname={quoteattr(prog + "." + suite)} '
                         f'name={quoteattr(name)} time="{r.duration:.3f}">')
            if r.status == "fail":
                waves, plain, note = repro_commands(r, meta["env"])
                waves = waves or f"none ({note})"
                body = "\n".join(r.excerpt +
                                 ["", f"log: {r.log}", f"waves: {waves}", f"rerun: {plain}"])
                lines.append(f"      <failure message={quoteattr(r.reason)}>"
                             f"{html.escape(body, False)}</failure>")
            elif r.status == "skip":
                lines.append("      <skipped/>")
            lines.append(f"      <system-out>{html.escape('log: ' + r.log, False)}</system-out>")
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def write_report(path, meta, runs, tests):
    fails = sorted((r for r in runs if r.status == "fail"), key=lambda r: (r.test.program,
                                                                            r.test.name, r.seed))
    out_dir = os.path.dirname(path)
    L = [f"# {meta['title']}", ""]
    verdict = "**FAIL**" if fails else "**PASS**"
    if meta["interrupted"]:
        verdict = ("**INTERRUPTED** (partial: the runs killed or never started are not "
                   "listed)")
    L += [f"{verdict}: {plural(len(runs), 'run')} of {plural(len(tests), 'test')}, "
          f"{sum(r.status == 'pass' for r in runs)} passed, {len(fails)} failed, "
          f"{sum(r.status == 'skip' for r in runs)} skipped, in {clock(meta['wall'])} "
          f"({meta['wall']:.0f} s) wall time.", ""]
    L += md_table(["setting", "value"], [
        ["command", f"`{meta['command']}`"],
        ["tier", meta["tier"]],
        ["run seeds", f"{meta['first_seed']}..{meta['first_seed'] + meta['seeds'] - 1} for random "
                      f"tests, {meta['first_seed']} for deterministic ones"],
        ["jobs / timeout", f"{meta['jobs']} / {meta['timeout']:g} s per run"],
        ["shard", meta["shard"]],
        ["environment", ", ".join(f"`{k}={v}`" for k, v in meta["env"].items()) or "-"],
        ["commit", meta["commit"]],
        ["host / start", f"{meta['host']} / {meta['start']}"],
        ["build", meta["build"]],
    ], ["<", "<"])
    L += ["", "## Failures", ""]
    if not fails:
        L += ["None.", ""]
    for r in fails:
        waves, plain, note = repro_commands(r, meta["env"])
        L += [f"### {r.test.name}, seed {r.seed} ({r.test.program})", "",
              f"{r.reason}; {r.duration:.1f} s; log [{os.path.relpath(r.log, out_dir)}]"
              f"({os.path.relpath(r.log, out_dir)})", "", "```"] + r.excerpt + ["```", ""]
        L += ["```sh", waves if waves else f"# {note}", plain, "```", ""]
    L += ["## Per program", ""]
    L += md_table(["program", "tests", "runs", "pass", "fail", "skip", "time (s)"],
                  program_rows(runs, tests), ["<", ">", ">", ">", ">", ">", ">"])
    L += ["", "## Per test", ""]
    rows = summarize(runs, lambda r: (r.test.program, r.test.name))
    L += md_table(["test", "program", "seeds", "pass", "fail", "skip", "time (s)"], [[
        name, prog, len(s["seeds"]), s["pass"], s["fail"], s["skip"], f"{s['time']:.1f}"
    ] for (prog, name), s in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1]))],
                  ["<", "<", ">", ">", ">", ">", ">"])
    L += ["", "## Slowest runs", ""]
    slowest = sorted(runs, key=lambda r: -r.duration)[:10]
    L += md_table(["test", "seed", "time (s)"],
                  [[r.test.name, r.seed, f"{r.duration:.1f}"] for r in slowest], ["<", ">", ">"])
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(L) + "\n")


def write_results(path, meta, runs):
    data = {k: v for k, v in meta.items()}
    data["runs"] = [{
        "program": r.test.program,
        "test": r.test.name,
        "label": r.test.label,
        "seed": r.seed,
        "status": r.status,
        "reason": r.reason,
        "start": round(r.start, 3),
        "duration": round(r.duration, 3),
        "seeded": r.seeded,
        "log": r.log,
    } for r in sorted(runs, key=lambda r: (r.test.program, r.test.name, r.seed))]
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")


def git_commit():
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" (with local changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def make_out_dir(args, tier, shard, stamp):
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        return os.path.abspath(args.out), False
    root = os.path.join(args.build, "regress")
    name = f"{tier}-{stamp}" + (f"-shard{shard[0]}of{shard[1]}" if shard else "")
    path, n = os.path.join(root, name), 1
    while os.path.exists(path):
        n += 1
        path = os.path.join(root, f"{name}-{n}")
    os.makedirs(path)
    return os.path.abspath(path), True


def link_latest(out):
    root = os.path.dirname(out)
    tmp = os.path.join(root, f".latest.{os.getpid()}")
    os.symlink(os.path.basename(out), tmp)
    os.replace(tmp, os.path.join(root, "latest"))


# ---------------------------------------------------------------------------------------------


def select_tests(args, build, shard):
    """The tests to run (filter, then shard) and the count before sharding."""
    all_tests = list_tests(build, args.tier, partial=bool(args.filter))
    match = make_filter(args.filter)
    tests = [t for t in all_tests if match(t)]
    if not tests:
        raise UsageError(f"no {args.tier} test matches --filter '{args.filter}' "
                         f"({len(all_tests)} tests in the tier; `ctest -N` in {args.build} "
                         "lists them)")
    n_filtered = len(tests)
    if shard:
        tests = [t for k, t in enumerate(tests) if k % shard[1] == shard[0]]
    return tests, n_filtered


def choose_first_seed(args):
    """--seed, else TPU_SEED, else a fresh random 48-bit seed."""
    if args.seed is not None:
        return args.seed
    if os.environ.get("TPU_SEED", ""):
        try:
            return int(os.environ["TPU_SEED"], 0)
        except ValueError:
            raise UsageError(f"TPU_SEED='{os.environ['TPU_SEED']}' is not an integer") from None
    return random.SystemRandom().getrandbits(48)


def run_all(runner):
    """Runs every test; Ctrl-C or SIGTERM (how batch systems stop a job) stops the run and
    returns (killed runs, runs never started) instead of None, so a partial report is written."""

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        runner.run()
    except KeyboardInterrupt:
        interrupted = runner.abort()
        print("\nregress: interrupted; killed the running tests, writing a partial report",
              flush=True)
        return interrupted
    return None


def print_summary(runs, tests, env, interrupted, wall, first_seed, out):
    """The per-program table, the failing tests with their reproduce commands, the verdict.
    Returns the exit status."""
    fails = [r for r in runs if r.status == "fail"]
    print()
    print("\n".join(table(["program", "tests", "runs", "pass", "fail", "skip", "time (s)"],
                          program_rows(runs, tests), ["<", ">", ">", ">", ">", ">", ">"])))
    if fails:
        rows = summarize(fails, lambda r: r.test.name)
        all_rows = summarize(runs, lambda r: r.test.name)
        print()
        print("\n".join(table(["failing test", "seeds", "pass", "fail", "time (s)"], [[
            name, len(all_rows[name]["seeds"]), all_rows[name]["pass"], all_rows[name]["fail"],
            f"{all_rows[name]['time']:.1f}"
        ] for name in sorted(rows)], ["<", ">", ">", ">", ">"])))
        print()
        for r in sorted(fails, key=lambda r: (r.test.program, r.test.name, r.seed)):
            waves, plain, note = repro_commands(r, env)
            print(f"FAIL {r.test.name} seed {r.seed}: {r.reason}")
            print(f"  {waves}" if waves else f"  # {note}")
            print(f"  {plain}")
    n_pass = sum(r.status == "pass" for r in runs)
    n_skip = sum(r.status == "skip" for r in runs)
    print()
    if interrupted:
        print(f"regress: interrupted: killed {', '.join(interrupted[0]) or 'nothing'}; "
              f"{plural(interrupted[1], 'queued run')} and the extra seeds of unfinished tests "
              "not run")
    verdict = "INTERRUPTED" if interrupted else "FAILED" if fails else "passed"
    print(f"regress: {verdict}: {plural(len(runs), 'run')} of {plural(len(tests), 'test')} "
          f"({n_pass} pass, {len(fails)} fail"
          + (f", {n_skip} skip" if n_skip else "") + f") in {clock(wall)}, run seed {first_seed}")
    print(f"regress: {shell_path(os.path.join(out, 'report.md'))}, "
          f"{shell_path(os.path.join(out, 'junit.xml'))}")
    if interrupted:
        return 130
    return 1 if fails else 0


def main(argv):
    args = parse_args(argv)
    shard = shard_from_env()
    build = os.path.abspath(args.build)
    tests, n_filtered = select_tests(args, build, shard)
    shard_text = (f"{shard[0]} of {shard[1]} (GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS)"
                  if shard else "-")
    if args.list:
        for t in tests:
            print(f"{t.program}/{t.name}")
        of = f" (shard {shard_text}, of {n_filtered})" if shard else ""
        print(f"{len(tests)} tests{of}", file=sys.stderr)
        return 0

    first_seed = choose_first_seed(args)
    env = passthrough_env()
    start_wall = datetime.datetime.now().astimezone()
    stamp = start_wall.strftime("%Y%m%d-%H%M%S")
    out, default_out = make_out_dir(args, args.tier, shard, stamp)
    hist = load_history(os.path.join(build, "regress"))

    seed_range = (f"{first_seed}..{first_seed + args.seeds - 1}" if args.seeds > 1 else
                  str(first_seed))
    print(f"regress: {args.tier} tier, {len(tests)} tests"
          + (f" (shard {shard_text}, of {n_filtered})" if shard else "")
          + (f" matching '{args.filter}'" if args.filter else "")
          + f", {args.jobs} jobs, timeout {args.timeout:g} s per run", flush=True)
    print(f"regress: run seed {first_seed} (random tests run seeds {seed_range}; "
          f"reproduce this run with SEED={first_seed})", flush=True)
    if env:
        print("regress: passing " + " ".join(f"{k}={v}" for k, v in env.items()), flush=True)
    print(f"regress: output {shell_path(out)}", flush=True)

    runner = Runner(tests, args, out, first_seed, env, hist)
    t0 = time.monotonic()
    interrupted = run_all(runner)
    wall = time.monotonic() - t0

    runs = runner.done
    title = f"Regression {args.tier} {stamp}"
    if shard:
        title += f", shard {shard[0]} of {shard[1]}"
    if interrupted:
        title += " (interrupted)"
    meta = {
        "title": title,
        "suffix": f" (shard {shard[0]}/{shard[1]})" if shard else "",
        "tier": args.tier,
        "first_seed": first_seed,
        "seeds": args.seeds,
        "jobs": args.jobs,
        "timeout": args.timeout,
        "shard": shard_text,
        "env": env,
        "commit": git_commit(),
        "host": socket.gethostname(),
        "start": start_wall.isoformat(timespec="seconds"),
        "build": build,
        "wall": wall,
        "interrupted": bool(interrupted),
        "command": "scripts/regress.py " + " ".join(shlex.quote(a) for a in argv),
    }
    write_junit(os.path.join(out, "junit.xml"), meta, runs)
    write_report(os.path.join(out, "report.md"), meta, runs, tests)
    write_results(os.path.join(out, "results.json"), meta, runs)
    if default_out:
        link_latest(out)
    return print_summary(runs, tests, env, interrupted, wall, first_seed, out)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"regress: error: {e}", file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:  # e.g. --list | head
        sys.stderr.close()
        sys.exit(0)
