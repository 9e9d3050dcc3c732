#!/usr/bin/python3
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
import tempfile
import time
from dataclasses import dataclass, field

SEED_LINE = re.compile(r"^\[   SEED   \] (\S+) run seed (\d+) ", re.M)
OK_LINE = re.compile(r"^\[       OK \] ", re.M)
TIERS = {"smoke": "^fast$", "full": "^(fast|long)$"}
# Variables a child must not inherit: each child runs one test, so GoogleTest's sharding
# would make most of them run nothing.
SHARD_VARS = ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX")


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


class AllocationEnded(Exception):
    """The Slurm allocation the runs go to is gone (cancelled, out of time, its node failed)."""


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
    prog: str = ""  # the program's name when there is no binary (merged from a JUnit file)

    @property
    def program(self):
        return self.prog or os.path.basename(self.binary)

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
    env: dict = None  # the TPU_* variables of its regression, when merged from several


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
    p.add_argument("--launcher", default="local", choices=("local", "slurm"),
                   help="local: runs are processes here; slurm: each run is a Slurm job step "
                   "(srun) inside one allocation of --jobs tasks (default: local)")
    p.add_argument("--partition", default="", help="Slurm partition of the allocation")
    p.add_argument("--slurm-args", default="",
                   help="more salloc options for the allocation, one string (e.g. "
                   "'--time=2:00:00 --account=verif')")
    p.add_argument("--merge", nargs="+", metavar="DIR", default=None,
                   help="run nothing: merge the results of runs or shards (results.json, "
                   "JUnit XML, coverage .dat and functional-coverage JSON) into one report")
    a = p.parse_args(argv)
    if a.launcher != "slurm" and (a.partition or a.slurm_args):
        raise UsageError("--partition and --slurm-args need --launcher slurm")
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
    if run.env is not None:
        env = run.env
    prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in env.items())
    t = run.test
    if not t.binary:
        return None, "# no command recorded (merged from a JUnit file)", "no waves"
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


# ---------------------------------------------------------------------------------------------
# Launchers: how one run's process is started, stopped and its end read.


class LocalLauncher:
    """Each run is a child process of this script, in its own process group."""

    name = "local"

    def start(self, cmd, cwd, env, run, logf):
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)

    def stop(self, proc, run):
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the child's own process group
        except ProcessLookupError:
            pass
        proc.wait()

    def finish(self, run):
        pass

    def outcome(self, rc, text):
        """(return code as Popen gives it: negative for a signal, None) or a failure reason."""
        return rc, None

    def check_alive(self, run):
        pass


STEP_LINE = re.compile(r"^# slurm: job (\d+) step (\d+) on (\S+)$", re.M)
SRUN_TASK = re.compile(r"^srun: error: \S+: task 0: (.*)$", re.M)


class SlurmLauncher:
    """Each run is a job step (`srun --exact`, one task, one CPU) of the allocation this script
    runs in. The step's shell first writes a `# slurm: job J step S on NODE` line into the run's
    log, then becomes the test, which writes its output straight into the log (on the shared
    build directory) rather than through srun, so a task killed by a signal loses no output.
    srun's own messages go to <log>.srun and are appended to the log when the step ends."""

    name = "slurm"
    # srun --chdir falls back to /tmp when the folder is missing on the node: cd here instead.
    WRAP = ('exec >>"$REGRESS_LOG" 2>&1 || exit 127; '
            'cd "$REGRESS_CWD" || exit 127; '
            'echo "# slurm: job $SLURM_JOB_ID step $SLURM_STEP_ID on $(hostname -s)"; '
            'exec "$@"')

    def __init__(self, srun, scancel, squeue, job_id):
        self.srun, self.scancel, self.squeue, self.job_id = srun, scancel, squeue, job_id

    def start(self, cmd, cwd, env, run, logf):
        logf.close()  # the step appends to it
        srun_log = open(run.log + ".srun", "w", encoding="utf-8")
        step = [self.srun, "--exact", "--ntasks=1", "--nodes=1", "--cpus-per-task=1",
                f"--job-name={run.test.program}/{run.test.name}", f"--chdir={cwd}",
                "/bin/sh", "-c", self.WRAP, "sh"] + cmd
        try:
            return subprocess.Popen(step, env=dict(env, REGRESS_LOG=run.log, REGRESS_CWD=cwd),
                                    stdout=srun_log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            srun_log.close()

    def stop(self, proc, run):
        # SIGTERM makes srun cancel the step (its tasks get SIGTERM, then SIGKILL after the
        # cluster's KillWait); a SIGKILL to srun would leave the step running.
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
        except ProcessLookupError:
            proc.wait()
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            m = STEP_LINE.search(read_text(run.log))
            if m:
                subprocess.run([self.scancel, "--signal=KILL", f"{m.group(1)}.{m.group(2)}"],
                               capture_output=True)

    def finish(self, run):
        srun_log = run.log + ".srun"
        text = read_text(srun_log).strip()
        if text:
            with open(run.log, "a", encoding="utf-8") as f:
                f.write("# srun's messages:\n" + text + "\n")
        try:
            os.remove(srun_log)
        except OSError:
            pass

    def check_alive(self, run):
        """After a run that Slurm ended or did not start: raises AllocationEnded when the
        allocation itself is over, so that the other runs are not tried one by one."""
        if "Slurm" not in run.reason:
            return
        state = subprocess.run([self.squeue, "-h", "-j", self.job_id, "-o", "%T"],
                               capture_output=True, text=True).stdout.strip()
        if state not in ("RUNNING", "CONFIGURING"):
            raise AllocationEnded(f"the Slurm allocation ended (job {self.job_id}: "
                                  f"{state or 'gone'})")

    def outcome(self, rc, text):
        srun_lines = text.split("# srun's messages:\n", 1)[1] if "# srun's messages:" in text \
            else ""
        if not STEP_LINE.search(text):
            # The first message of srun or of the step's shell (a log or folder missing on the
            # node, a step that Slurm cannot place).
            said = [l for l in text.splitlines() if l and not l.startswith("# ")]
            first = next((l for l in said if re.search(r"error|can't|cannot|retrying", l)),
                         said[-1] if said else "")
            what = ("did not start on Slurm" + (f" (srun exit status {rc})" if rc is not None
                                                else ""))
            return None, what + (f": {first}" if first else "")
        if "DUE TO TIME LIMIT" in text:
            return None, "killed by Slurm: the time limit of the allocation was reached"
        if re.search(r"\*\*\* STEP \S+ ON \S+ CANCELLED", text) and rc != 0:
            line = re.search(r"\*\*\* (STEP .*?) \*\*\*", text).group(1)
            return None, f"cancelled by Slurm ({line})"
        m = SRUN_TASK.search(srun_lines)
        if m and not m.group(1).startswith("Exited with exit code") and rc > 128:
            return -(rc - 128), None  # srun exits 128 + the signal that killed the task
        if "Node failure" in srun_lines:
            return None, "the node failed (srun: " + srun_lines.strip().splitlines()[-1] + ")"
        return rc, None


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


class Runner:

    def __init__(self, tests, args, out, first_seed, env, hist, launcher):
        self.args = args
        self.launcher = launcher
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
            now = time.monotonic()
            try:
                proc = self.launcher.start(cmd, t.cwd, env, run, logf)
            except OSError as e:  # a missing working folder, a launcher not on PATH
                logf.close()
                run.start = now - self.start
                run.status, run.reason = "fail", f"did not start: {e}"
                run.excerpt = [str(e)]
                self.finish(run)
                continue
            now = time.monotonic()
            run.start = now - self.start
            self.running[proc.pid] = (proc, run, now, logf)

    def reap(self):
        now = time.monotonic()
        for pid in list(self.running):
            proc, run, start, logf = self.running[pid]
            timed_out = False
            rc = proc.poll()
            if rc is None:
                if now - start <= self.args.timeout:
                    continue
                self.launcher.stop(proc, run)
                rc, timed_out = proc.returncode, True
            del self.running[pid]
            run.duration = time.monotonic() - start
            logf.close()
            self.launcher.finish(run)
            self.classify(run, rc, timed_out)
            self.finish(run)

    def classify(self, run, rc, timed_out):
        with open(run.log, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        seeds = SEED_LINE.findall(text)
        run.seeded = bool(seeds)
        rc, launch_failure = self.launcher.outcome(rc, text)
        if timed_out and launch_failure and launch_failure.startswith("did not start"):
            run.status, run.reason = "fail", (f"did not start within the {self.args.timeout:g} s "
                                              f"timeout{launch_failure[len('did not start'):]}")
        elif timed_out:
            run.status, run.reason = "fail", (f"timed out after {self.args.timeout:g} s (killed; "
                                              "raise --timeout if the test is just slow)")
        elif launch_failure:
            run.status, run.reason = "fail", launch_failure
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
            self.launcher.check_alive(run)

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
            self.launcher.stop(proc, run)
            logf.close()
            self.launcher.finish(run)
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
    """Markdown table lines (python3-tabulate); align: ">" right, anything else left."""
    from tabulate import tabulate
    esc = lambda c: str(c).replace("|", "\\|")
    return tabulate([[esc(c) for c in r] for r in rows], headers, tablefmt="pipe",
                    colalign=[("right" if a == ">" else "left") for a in align] if rows else None,
                    disable_numparse=True).split("\n")


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


def xml_text(s):
    """`s` without the control characters XML 1.0 cannot hold (a log's colour codes)."""
    return re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "?", s)


def write_junit(path, meta, runs):
    """The runs as JUnit XML (xml.etree.ElementTree, which load_junit reads back): a testsuite per
    program, a testcase per test and seed, the failure's excerpt and how to rerun it."""
    import xml.etree.ElementTree as ET
    suites = {}
    for r in runs:
        suites.setdefault(r.test.program, []).append(r)
    count = lambda rs, st: str(sum(r.status == st for r in rs))
    top = ET.Element("testsuites", name=meta["title"], tests=str(len(runs)),
                     failures=count(runs, "fail"), errors="0", skipped=count(runs, "skip"),
                     time=f"{meta['wall']:.3f}")
    for prog in sorted(suites):
        rs = sorted(suites[prog], key=lambda r: (r.test.name, r.seed))
        ts = ET.SubElement(top, "testsuite", name=prog + meta["suffix"], tests=str(len(rs)),
                           failures=count(rs, "fail"), errors="0", skipped=count(rs, "skip"),
                           time=f"{sum(r.duration for r in rs):.3f}", timestamp=meta["start"],
                           hostname=meta["host"])
        props = ET.SubElement(ts, "properties")
        for k in ("tier", "first_seed", "seeds", "shard", "commit"):
            ET.SubElement(props, "property", name=k, value=str(meta[k]))
        for r in rs:
            suite, _, test = r.test.name.partition(".")
            tc = ET.SubElement(ts, "testcase", classname=prog + "." + suite,
                               name=f"{test} [seed {r.seed}]" if r.seeded else test,
                               time=f"{r.duration:.3f}")
            if r.status == "fail":
                waves, plain, note = repro_commands(r, meta["env"])
                waves = waves or f"none ({note})"
                ET.SubElement(tc, "failure", message=xml_text(r.reason)).text = xml_text("\n".join(
                    r.excerpt + ["", f"log: {r.log}", f"waves: {waves}", f"rerun: {plain}"]))
            elif r.status == "skip":
                ET.SubElement(tc, "skipped")
            ET.SubElement(tc, "system-out").text = "log: " + r.log
    tree = ET.ElementTree(top)
    ET.indent(tree, "  ")
    tree.write(path, encoding="UTF-8", xml_declaration=True)


def write_report(path, meta, runs, tests):
    fails = sorted((r for r in runs if r.status == "fail"), key=lambda r: (r.test.program,
                                                                            r.test.name, r.seed))
    out_dir = os.path.dirname(path)
    L = [f"# {meta['title']}", ""]
    verdict = "**FAIL**" if fails else "**PASS**"
    if meta["interrupted"]:
        verdict = ("**INTERRUPTED** (partial: the runs killed or never started are not "
                   "listed)")
    if meta.get("missing"):
        verdict = f"**INCOMPLETE** ({'; '.join(meta['missing'])})"
    L += [f"{verdict}: {plural(len(runs), 'run')} of {plural(len(tests), 'test')}, "
          f"{sum(r.status == 'pass' for r in runs)} passed, {len(fails)} failed, "
          f"{sum(r.status == 'skip' for r in runs)} skipped, in {clock(meta['wall'])} "
          f"({meta['wall']:.0f} s) wall time.", ""]
    L += md_table(["setting", "value"], meta.get("settings") or [
        ["command", f"`{meta['command']}`"],
        ["tier", meta["tier"]],
        ["run seeds", f"{meta['first_seed']}..{meta['first_seed'] + meta['seeds'] - 1} for random "
                      f"tests, {meta['first_seed']} for deterministic ones"],
        ["jobs / timeout", f"{meta['jobs']} / {meta['timeout']:g} s per run"],
        ["shard", meta["shard"]],
        ["environment", ", ".join(f"`{k}={v}`" for k, v in meta["env"].items()) or "-"],
        ["commit", meta["commit"]],
        ["host / start", f"{meta['host']} / {meta['start']}"],
        ["launcher", meta.get("launcher", "local")],
        ["build", meta["build"]],
    ], ["<", "<"])
    if meta.get("sets"):
        L += ["", "## Result sets merged", ""]
        L += md_table(["set", "from", "tier", "shard", "run seed", "runs", "fail", "commit",
                       "host / start", "launcher"], meta["sets"], ["<"] * 10)
    L += ["", "## Failures", ""]
    if not fails:
        L += ["None.", ""]
    for r in fails:
        waves, plain, note = repro_commands(r, meta["env"])
        log = (f"log [{os.path.relpath(r.log, out_dir)}]({os.path.relpath(r.log, out_dir)})"
               if r.log else "no log (merged from a JUnit file)")
        L += [f"### {r.test.name}, seed {r.seed} ({r.test.program})", "",
              f"{r.reason}; {r.duration:.1f} s; {log}", "", "```"] + r.excerpt + ["```", ""]
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
        "binary": r.test.binary,
        "args": r.test.args,
        "gtest": r.test.gtest,
        "excerpt": r.excerpt,
        "env": r.env if r.env is not None else meta["env"],
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
    signal.signal(signal.SIGHUP, on_term)  # salloc's way of ending the command it runs
    try:
        runner.run()
    except (KeyboardInterrupt, AllocationEnded) as e:
        interrupted = runner.abort()
        why = str(e) if isinstance(e, AllocationEnded) else "interrupted"
        print(f"\nregress: {why}; killed the running tests, writing a partial report",
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


# ---------------------------------------------------------------------------------------------
# Merging


@dataclass
class ResultSet:
    source: str  # what was given on the command line
    meta: dict
    runs: list
    dats: list  # code-coverage .dat files
    fcovs: list  # functional-coverage JSON files


def run_from_record(rec, meta, build):
    program = rec["program"]
    binary = rec.get("binary") or os.path.join(build, "tests", program)
    t = Test(0, rec["test"], binary, rec.get("args", []), rec.get("label", ""), build, [], {},
             gtest=rec.get("gtest", True))
    r = Run(t, rec["seed"], rec["status"], rec.get("reason", ""), rec.get("duration", 0.0),
            rec.get("start", 0.0), rec.get("log", ""), rec.get("excerpt") or [],
            rec.get("seeded", False), rec.get("env", meta.get("env", {})))
    if r.status == "fail" and not r.excerpt and os.path.isfile(r.log):
        r.excerpt = failure_excerpt(read_text(r.log))
    return r


def load_results_json(path, source):
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        runs = data["runs"]
        meta = {k: v for k, v in data.items() if k != "runs"}
        build = meta.get("build", "build")
        return meta, [run_from_record(rec, meta, build) for rec in runs]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"{source}: {path} is not a results.json of scripts/regress.py "
                         f"({type(e).__name__}: {e})") from None


JUNIT_SEED = re.compile(r"^(.*) \[seed (\d+)\]$")


def load_junit(path, source):
    """Runs from a JUnit XML file: this script's, GoogleTest's (--gtest_output=xml) or ctest's
    (--output-junit). No commands or logs are known for them."""
    import xml.etree.ElementTree as ET
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise UsageError(f"{source}: {path} is not readable JUnit XML: {e}") from None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if root.tag not in ("testsuite", "testsuites"):
        raise UsageError(f"{source}: {path} is XML but not JUnit (root element <{root.tag}>)")
    runs = []
    for suite in suites:
        prog = re.sub(r" \(shard \d+/\d+\)$", "", suite.get("name", ""))
        if prog in ("", "(empty)"):  # ctest's suite has no name
            prog = os.path.splitext(os.path.basename(path))[0]
        for case in suite.iter("testcase"):
            name, cls = case.get("name", ""), case.get("classname", "")
            m = JUNIT_SEED.match(name)
            base, seed = (m.group(1), int(m.group(2))) if m else (name, 0)
            if cls.startswith(prog + "."):
                test = f"{cls[len(prog) + 1:]}.{base}"
            elif cls in ("", name):
                test = base
            else:
                test = f"{cls}.{base}"
            failure = case.find("failure")
            if failure is None:
                failure = case.find("error")
            skipped = case.find("skipped") is not None or case.get("status") in ("disabled",
                                                                                 "notrun")
            status = "fail" if failure is not None else "skip" if skipped else "pass"
            reason = (failure.get("message") or "failed") if failure is not None else \
                "skipped" if skipped else ""
            excerpt = (failure.text or "").strip().splitlines()[:12] if failure is not None else []
            t = Test(0, test, "", [], "", "", [], {}, gtest=bool(m), prog=prog)
            try:
                duration = float(case.get("time", "0") or 0)
            except ValueError:
                duration = 0.0
            runs.append(Run(t, seed, status, reason, duration, 0.0, "", excerpt, bool(m), {}))
    stamp = datetime.datetime.fromtimestamp(os.path.getmtime(path)).astimezone()
    meta = {"tier": "-", "first_seed": "-", "seeds": "-", "commit": "-", "host": "-",
            "start": stamp.isoformat(timespec="seconds"), "env": {}, "shard": "-",
            "launcher": "-", "wall": sum(r.duration for r in runs), "interrupted": False,
            "build": "", "junit": True}
    return meta, runs


def find_inputs(source):
    """A ResultSet from a directory or file given to --merge."""
    if not os.path.exists(source):
        raise UsageError(f"--merge: {source} does not exist")
    meta, runs, dats, fcovs = None, [], [], []
    if os.path.isfile(source):
        files = [source]
    else:
        files = []
        for cand in (os.path.join(source, "results.json"),
                     os.path.join(source, "regress", "results.json")):
            if os.path.isfile(cand):
                files = [cand]
                break
        if not files:
            files = sorted(glob.glob(os.path.join(source, "*.xml")))
        # A `make coverage` folder holds its merged coverage.dat beside the runs' files in dat/:
        # take the runs' files only (both would count every point twice); a folder without dat/
        # gives its own .dat files.
        dats += (sorted(glob.glob(os.path.join(source, "dat", "*.dat"))) or
                 sorted(glob.glob(os.path.join(source, "*.dat"))))
        for d in (os.path.join(source, "fcov"), source):
            found = [f for f in sorted(glob.glob(os.path.join(d, "*.json")))
                     if os.path.basename(f).startswith("fcov_")]
            if found:
                fcovs += found
                break
    for f in files:
        if f.endswith(".json") and os.path.basename(f).startswith("fcov_"):
            fcovs.append(f)
        elif f.endswith(".dat"):
            dats.append(f)
        elif f.endswith(".json"):
            if meta is not None:
                raise UsageError(f"--merge: {source} holds more than one result file")
            meta, runs = load_results_json(f, source)
        elif f.endswith(".xml"):
            m, r = load_junit(f, source)
            if meta is None or meta.get("junit"):
                meta = m if meta is None else dict(meta, wall=meta["wall"] + m["wall"])
                runs += r
        else:
            raise UsageError(f"--merge: {f} is neither results.json, JUnit XML, a coverage "
                             ".dat file nor functional-coverage JSON")
    if meta is None and not dats and not fcovs:
        raise UsageError(f"--merge: {source} holds no results (results.json, regress/"
                         "results.json, *.xml), no coverage .dat and no fcov_*.json")
    if meta is None:
        meta = {"tier": "-", "first_seed": "-", "seeds": "-", "commit": "-", "host": "-",
                "start": "-", "env": {}, "shard": "-", "launcher": "-", "wall": 0.0,
                "interrupted": False, "build": ""}
    return ResultSet(source, meta, runs, dats, fcovs)


def shard_of(meta):
    if meta.get("shard_total"):
        return meta["shard_index"], meta["shard_total"]
    m = re.match(r"(\d+) of (\d+)", str(meta.get("shard", "")))
    return (int(m.group(1)), int(m.group(2))) if m else None


def merge_coverage(sets, out):
    """Links every set's .dat and fcov files into out/coverage/{dat,fcov} (renamed so that no
    two collide) and reports them with scripts/coverage.py --no-run. Returns its exit status, or
    None when there is no coverage data."""
    dats = [(k, d) for k, s in enumerate(sets) for d in s.dats]
    fcovs = [(k, f) for k, s in enumerate(sets) for f in s.fcovs]
    if not dats and not fcovs:
        return None
    cov = os.path.join(out, "coverage")
    for sub, files in (("dat", dats), ("fcov", fcovs)):
        d = os.path.join(cov, sub)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for k, f in files:
            name = os.path.basename(f)
            # cov_<model>_<pid>_<n>.dat and fcov_<pid>.json: the set number goes into the pid
            # field, which keeps the names the coverage scripts parse.
            if sub == "fcov":
                name = name.replace("fcov_", f"fcov_s{k}p", 1)
            elif re.search(r"_(\d+)_(\d+)\.dat$", name):
                name = re.sub(r"_(\d+)_(\d+)\.dat$", rf"_s{k}p\1_\2.dat", name)
            else:  # another name (a merged coverage.dat): the set in front, so none collide
                name = f"s{k}_{name}"
            dst = os.path.join(d, name)
            try:
                os.link(f, dst)
            except OSError:
                shutil.copyfile(f, dst)
    here = os.path.dirname(os.path.abspath(__file__))
    if dats:
        cmd = [sys.executable, os.path.join(here, "coverage.py"), "--no-run", "--out", cov]
    else:
        cmd = [sys.executable, os.path.join(here, "fcov_report.py"), os.path.join(cov, "fcov"),
               "--markdown", os.path.join(cov, "fcov.md")]
    print(f"regress: coverage of the merged sets: {' '.join(shell_path(c) for c in cmd[1:])}",
          flush=True)
    return subprocess.call(cmd)


def merge_main(args):
    start_wall = datetime.datetime.now().astimezone()
    sets = [find_inputs(src) for src in args.merge]
    missing, notes = [], []
    shards = {}
    for s in sets:
        sh = shard_of(s.meta)
        if sh:
            if sh[0] in shards.get(sh[1], {}):
                raise UsageError(f"--merge: shard {sh[0]} of {sh[1]} is given twice: "
                                 f"{shards[sh[1]][sh[0]].source} and {s.source}")
            shards.setdefault(sh[1], {})[sh[0]] = s
    seen = {}
    for s in sets:
        for r in s.runs:
            key = (r.test.program, r.test.name, r.seed)
            if key in seen and seen[key] is not s:
                raise UsageError(f"--merge: {key[1]} seed {key[2]} ({key[0]}) is in both "
                                 f"{seen[key].source} and {s.source}: give each shard once")
            seen[key] = s
    if len(shards) > 1:
        raise UsageError("--merge: the sets come from different shardings (" +
                         ", ".join(f"{n} shards" for n in sorted(shards)) + ")")
    for total, got in shards.items():
        for i in range(total):
            if i not in got:
                missing.append(f"shard {i} of {total} missing")
    commits = sorted(set(str(s.meta.get("commit")) for s in sets if s.meta.get("commit") != "-"))
    if len(commits) > 1:
        notes.append(f"the sets were run on different commits: {', '.join(commits)}")
    seeds = sorted(set(str(s.meta.get("first_seed")) for s in sets if s.runs and
                       s.meta.get("first_seed") != "-"))
    if len(seeds) > 1:
        notes.append(f"the sets used different run seeds: {', '.join(seeds)}")
    interrupted = [s.source for s in sets if s.meta.get("interrupted")]
    if interrupted:
        missing.append(f"interrupted: {', '.join(interrupted)}")

    runs = [r for s in sets for r in s.runs]
    tests_by_key = {}
    for r in runs:
        tests_by_key.setdefault((r.test.program, r.test.name), r.test)
    tests = list(tests_by_key.values())

    stamp = start_wall.strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(args.out or os.path.join(args.build, "regress", f"merged-{stamp}"))
    os.makedirs(out, exist_ok=True)
    wall = max((s.meta.get("wall", 0.0) for s in sets), default=0.0)
    first_seed = seeds[0] if len(seeds) == 1 else "various" if seeds else "-"
    set_rows = []
    for k, s in enumerate(sets):
        sh = shard_of(s.meta)
        set_rows.append([k, shell_path(os.path.abspath(s.source)), s.meta.get("tier", "-"),
                         f"{sh[0]} of {sh[1]}" if sh else "-", s.meta.get("first_seed", "-"),
                         len(s.runs), sum(r.status == "fail" for r in s.runs),
                         s.meta.get("commit", "-"),
                         f"{s.meta.get('host', '-')} / {s.meta.get('start', '-')}",
                         s.meta.get("launcher", "-")])
    env = sets[0].meta.get("env", {}) if all(s.meta.get("env", {}) == sets[0].meta.get("env", {})
                                              for s in sets) else {}
    meta = {
        "title": f"Regression merged from {plural(len(sets), 'result set')} {stamp}",
        "suffix": "",
        "tier": ", ".join(sorted(set(str(s.meta.get("tier", "-")) for s in sets))),
        "first_seed": first_seed,
        "seeds": ", ".join(sorted(set(str(s.meta.get("seeds", "-")) for s in sets))),
        "jobs": "-",
        "timeout": 0,
        "shard": "merged",
        "env": env,
        "commit": ", ".join(commits) or "-",
        "host": socket.gethostname(),
        "start": start_wall.isoformat(timespec="seconds"),
        "build": os.path.abspath(args.build),
        "launcher": "merged",
        "wall": wall,
        "interrupted": False,
        "missing": missing,
        "notes": notes,
        "sets": set_rows,
        "merged_from": [os.path.abspath(s.source) for s in sets],
        "command": "scripts/regress.py --merge " + " ".join(shlex.quote(a) for a in args.merge),
    }
    meta["settings"] = [
        ["command", f"`{meta['command']}`"],
        ["tiers", meta["tier"]],
        ["run seeds", f"first run seed {first_seed}; seeds per random test {meta['seeds']}"],
        ["commit", meta["commit"]],
        ["wall time", f"{clock(wall)}: the longest set's (sets run side by side)"],
        ["notes", "; ".join(notes + missing) or "-"],
    ]
    print(f"regress: merging {plural(len(sets), 'result set')}: {plural(len(runs), 'run')} of "
          f"{plural(len(tests), 'test')}", flush=True)
    for n in notes:
        print(f"regress: note: {n}", flush=True)
    write_junit(os.path.join(out, "junit.xml"), meta, runs)
    write_report(os.path.join(out, "report.md"), meta, runs, tests)
    write_results(os.path.join(out, "results.json"), meta, runs)
    rc = print_summary(runs, tests, env, None, wall, first_seed, out)
    cov_rc = merge_coverage(sets, out)
    for m in missing:
        print(f"regress: INCOMPLETE: {m}", flush=True)
    if missing and rc == 0:
        rc = 1
    if cov_rc not in (None, 0) and rc == 0:
        rc = cov_rc
    return rc


def slurm_tool(name):
    path = shutil.which(name)
    if not path:
        raise UsageError(f"--launcher slurm needs Slurm's {name} on PATH (Debian package "
                         "slurm-client; make deps installs it)")
    return path


def slurm_allocation(args):
    """Inside an allocation: (the launcher, a line describing the allocation). Checks that
    --jobs fits in it."""
    job = os.environ["SLURM_JOB_ID"]
    tasks = os.environ.get("SLURM_NTASKS") or os.environ.get("SLURM_NPROCS") or ""
    if tasks.isdigit() and args.jobs > int(tasks):
        raise UsageError(f"--jobs {args.jobs} is more than the {tasks} tasks of Slurm job {job} "
                         "(SLURM_NTASKS): steps beyond them would only wait")
    launcher = SlurmLauncher(slurm_tool("srun"), slurm_tool("scancel"), slurm_tool("squeue"), job)
    where = (f"Slurm job {job}: {tasks or '?'} tasks on {os.environ.get('SLURM_JOB_NODELIST', '?')}"
             f", partition {os.environ.get('SLURM_JOB_PARTITION', '?')}")
    return launcher, where


def run_under_salloc(args, argv):
    """Not inside an allocation: asks Slurm for one of --jobs tasks (one CPU each) and runs this
    script again inside it (salloc runs it here; its steps run on the allocated nodes). Returns
    the exit status of that run."""
    try:
        extra = shlex.split(args.slurm_args)
    except ValueError as e:
        raise UsageError(f"--slurm-args '{args.slurm_args}' is not a valid option string: {e}") \
            from None
    fd, started = tempfile.mkstemp(prefix="regress-started-")
    os.close(fd)
    os.remove(started)
    cmd = ([slurm_tool("salloc"), f"--ntasks={args.jobs}", "--cpus-per-task=1",
            f"--job-name=tpu-regress-{args.tier}"]
           + ([f"--partition={args.partition}"] if args.partition else []) + extra
           + ["--", sys.executable, os.path.abspath(__file__)] + argv)
    print("regress: " + " ".join(shlex.quote(c) for c in cmd[:cmd.index("--")]), flush=True)
    proc = subprocess.Popen(cmd, env=dict(os.environ, REGRESS_SLURM_STARTED=started))

    def forward(signum, frame):
        proc.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    while True:
        try:
            rc = proc.wait()
            break
        except KeyboardInterrupt:  # the run inside has the terminal's Ctrl-C too
            continue
    if not os.path.exists(started):
        raise UsageError(f"Slurm did not start the regression (salloc exit status {rc}; its "
                         "message is above)")
    os.remove(started)
    return rc


def main(argv):
    args = parse_args(argv)
    if args.merge:
        return merge_main(args)
    shard = shard_from_env()
    build = os.path.abspath(args.build)
    tests, n_filtered = select_tests(args, build, shard)
    launcher, where = LocalLauncher(), "-"
    if args.launcher == "slurm" and not args.list:
        if not os.environ.get("SLURM_JOB_ID"):
            return run_under_salloc(args, argv)
        launcher, where = slurm_allocation(args)
        if os.environ.get("REGRESS_SLURM_STARTED"):
            open(os.environ["REGRESS_SLURM_STARTED"], "w").close()
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
    if launcher.name == "slurm":
        print(f"regress: {where}; every run is a job step (srun --exact, 1 CPU)", flush=True)
    print(f"regress: run seed {first_seed} (random tests run seeds {seed_range}; "
          f"reproduce this run with SEED={first_seed})", flush=True)
    if env:
        print("regress: passing " + " ".join(f"{k}={v}" for k, v in env.items()), flush=True)
    print(f"regress: output {shell_path(out)}", flush=True)

    runner = Runner(tests, args, out, first_seed, env, hist, launcher)
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
        "launcher": where if launcher.name == "slurm" else "local",
        "shard_index": shard[0] if shard else None,
        "shard_total": shard[1] if shard else None,
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
