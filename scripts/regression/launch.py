# SPDX-License-Identifier: Apache-2.0
"""Running the matrix: the launchers (a local process, a Slurm job step), the runner that keeps
--jobs runs going longest first with their seeds, and the Slurm allocation."""

import heapq
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from regression.common import (AllocationEnded, OK_LINE, Run, SEED_LINE, SHARD_VARS, UsageError,
                               clock, failure_excerpt, read_text, repro_commands, sanitize,
                               shell_path)


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


def run_under_salloc(args, argv, script):
    """Not inside an allocation: asks Slurm for one of --jobs tasks (one CPU each) and runs
    `script` (regress.py) again inside it (salloc runs it here; its steps run on the allocated
    nodes). Returns the exit status of that run."""
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
           + ["--", sys.executable, script] + argv)
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
