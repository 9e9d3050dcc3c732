#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make regress LAUNCHER=slurm` against a real single-node Slurm cluster (about a minute).

Starts a private cluster from Debian's packages in a temporary folder (scripts/slurm_local.py:
munged, slurmctld, slurmd, a generated slurm.conf), then:
  1. runs the fake GoogleTest matrix of regress_selftest.py through Slurm and locally with the
     same seed, and checks that both give the same runs, outcomes and summary, and that every
     Slurm-specific way to fail is reported by name: a step that cannot start (its folder is
     missing on the node), a step Slurm never places (a constraint no node has), a task killed
     by a signal (with its last output kept), a hang past the timeout (the step cancelled);
  2. runs real tests of the build (isa_test, cvt_rtl_test) through Slurm, whole and in two
     shards, and checks that `regress.py --merge` of the shards gives the same results;
  3. cancels the allocation of a running regression and checks the partial report;
  4. checks the errors for a partition that does not exist and for --jobs beyond the
     allocation;
  5. runs tpusim onnx and train with --jobs over Slurm tasks (--launcher slurm) and checks the
     outputs and losses bit-identical to one process's, and a bad partition's error;
and stops the cluster, checking that no daemon, job or test process is left.
Usage: slurm_test.py BUILD_DIR; exit status 0 when every check holds.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REGRESS = os.path.join(ROOT, "scripts", "regress.py")
CLUSTER = os.path.join(ROOT, "scripts", "slurm_local.py")
sys.path.insert(0, HERE)
import regress_selftest as fake  # noqa: E402  (the fake GoogleTest program and ctest folder)

failures = []


def check(cond, what):
    print(("  ok    " if cond else "  FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def regress(build, *args, env=None, timeout=300):
    e = {k: v for k, v in os.environ.items()
         if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "TPU_SEED", "SLURM_JOB_ID")}
    e.update(env or {})
    p = subprocess.run([sys.executable, REGRESS, "--build", build, "--no-progress", *args],
                       capture_output=True, text=True, env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def outcomes(out):
    res = json.load(open(os.path.join(out, "results.json")))
    return res, {(r["test"], r["seed"]): r for r in res["runs"]}


def squeue(env):
    return subprocess.run(["squeue", "-h", "-o", "%i %T"], capture_output=True, text=True,
                          env=env).stdout.strip()


def fake_matrix(root, env):
    print("1. the fake matrix through Slurm and locally, seed 10")
    gtests = dict(fake.GTESTS)
    gtests.update({"Kill.Self": "fake_test", "Start.NoFolder": "fake_test",
                   "Start.NeverPlaced": "fake_test"})
    for t in ("Shard.Env", "Empty.NoTest", "WrongSeed.Random", "Env.Pass", "Slow.Random"):
        del gtests[t]  # covered by regress_selftest; not launcher-specific
    build = fake.setup(root, gtests, {
        "Start.NoFolder": f'WORKING_DIRECTORY "{root}/not-on-this-node"',
        "Start.NeverPlaced": 'ENVIRONMENT "SLURM_CONSTRAINT=no_node_has_this"'})
    args = ("--seeds", "3", "--seed", "10", "--timeout", "6", "--jobs", "2")
    t0 = time.monotonic()
    rc_s, so_s, se_s = regress(build, *args, "--launcher", "slurm", "--out",
                               os.path.join(root, "slurm"), env=env)
    print(f"  (Slurm run: {time.monotonic() - t0:.0f} s)")
    rc_l, so_l, se_l = regress(build, *args, "--out", os.path.join(root, "local"), env=env)
    check(rc_s == 1 and rc_l == 1, f"both fail with exit status 1 (Slurm {rc_s}, local {rc_l}; "
          f"stderr: {se_s.strip()[-300:]})")
    res_s, runs_s = outcomes(os.path.join(root, "slurm"))
    res_l, runs_l = outcomes(os.path.join(root, "local"))
    check(sorted(runs_s) == sorted(runs_l), "the same test x seed runs "
          f"(Slurm {sorted(runs_s)}, local {sorted(runs_l)})")
    same = [k for k in runs_l if not k[0].startswith("Start.")]
    check(all(runs_s.get(k, {}).get("status") == runs_l[k]["status"] for k in same),
          "the same outcome for every run that starts")
    check(all(runs_s.get(k, {}).get("reason") == runs_l[k]["reason"] for k in same
              if k[0] != "Hang.Forever"), "the same failure reasons")
    why = lambda k: runs_s.get(k, {}).get("reason", "")
    check(runs_s[("Kill.Self", 10)]["reason"] == "killed by signal SIGKILL",
          f"a task killed by a signal names it ({why(('Kill.Self', 10))})")
    kill_log = open(runs_s[("Kill.Self", 10)]["log"]).read()
    check("the last line before SIGKILL" in kill_log and "task 0: Killed" in kill_log,
          "its log keeps its last output and srun's message")
    check(why(("Crash.Segv", 10)) == "killed by signal SIGSEGV", "a segfault names its signal")
    check(why(("Hang.Forever", 10)).startswith("timed out after 6 s"),
          f"a hang is killed at the timeout ({why(('Hang.Forever', 10))})")
    check(why(("Start.NoFolder", 10)).startswith("did not start on Slurm") and
          "not-on-this-node" in why(("Start.NoFolder", 10)),
          f"a step whose folder is missing did not start, said why ({why(('Start.NoFolder', 10))})")
    check(why(("Start.NeverPlaced", 10)).startswith("did not start within the 6 s timeout") and
          "retrying" in why(("Start.NeverPlaced", 10)),
          f"a step Slurm never places is named ({why(('Start.NeverPlaced', 10))})")
    for name in ("Start.NoFolder", "Start.NeverPlaced", "Kill.Self", "Hang.Forever"):
        check(f"FAIL {name} seed 10" in so_s, f"{name} is printed as it fails")
    check(runs_l[("Start.NoFolder", 10)]["reason"].startswith("did not start:"),
          "locally too, a missing folder is a run that did not start")
    logs = [open(r["log"]).read() for r in res_s["runs"] if not r["test"].startswith("Start.")]
    check(all(re.search(r"^# slurm: job \d+ step \d+ on \S+$", l, re.M) for l in logs),
          "every log names its job step and node")
    def printed(so, out):
        """The printed lines, with what may differ left out: the launcher's own lines, the
        output folder, times, and the runs whose reasons are Slurm's (checked above)."""
        keep = []
        skip = False
        for l in so.splitlines():
            if l.startswith("FAIL "):
                skip = any(n in l for n in ("Start.", "Hang."))
            elif not l.startswith("  "):
                skip = False
            if skip or l.startswith(("salloc:", "regress: /usr/bin/salloc", "regress: Slurm job",
                                     "regress: output")) or re.match(r"^(Start|Hang)\.", l):
                continue
            l = l.replace(os.path.join(root, out), "OUT")
            keep.append(" ".join(re.sub(r"\d+\.\d|\d\d:\d\d", "T", l).split()))
        return sorted(keep)

    p_s, p_l = printed(so_s, "slurm"), printed(so_l, "local")
    check(p_s == p_l, "the printed lines match the local run's (failures, reproduce commands, "
          f"tables): {sorted(set(p_s) ^ set(p_l))}")
    verdict = lambda so: re.sub(r" in \d\d:\d\d", "", [l for l in so.splitlines()
                                                       if l.startswith("regress: FAILED")][-1])
    check(verdict(so_s) == verdict(so_l), f"the verdict line matches ({verdict(so_s)})")
    report = open(os.path.join(root, "slurm", "report.md")).read()
    check(re.search(r"\|\s*launcher\s*\|\s*Slurm job \d+: 2 tasks on", report) is not None,
          "the report names the allocation")
    check(os.path.isfile(os.path.join(root, "slurm", "junit.xml")), "a JUnit file is written")
    time.sleep(1)
    check(squeue(env) == "", f"no job is left in the queue ({squeue(env)})")
    left = subprocess.run(["pgrep", "-f", os.path.join(build, "fake_")], capture_output=True,
                          text=True).stdout.split()
    check(not left, f"no test process is left running ({left})")
    return build


def real_tests(root, build, env):
    print("2. real tests through Slurm, whole and in two shards, merged")
    filt = "isa_test/*:cvt_rtl_test/*"
    args = ("--filter", filt, "--seeds", "2", "--seed", "7", "--launcher", "slurm")
    rc, so, se = regress(build, *args, "--out", os.path.join(root, "real"), env=env)
    check(rc == 0, f"they pass through Slurm (exit {rc}; {se.strip()[-300:]})")
    print("\n".join("    " + l for l in so.splitlines()[-8:]))
    for i in range(2):
        rc, so, se = regress(build, *args, "--out", os.path.join(root, f"shard{i}"),
                             env=dict(env, GTEST_TOTAL_SHARDS="2", GTEST_SHARD_INDEX=str(i)))
        check(rc == 0, f"shard {i} of 2 passes (exit {rc})")
    merged = os.path.join(root, "merged")
    p = subprocess.run([sys.executable, REGRESS, "--merge", os.path.join(root, "shard0"),
                        os.path.join(root, "shard1"), "--out", merged], capture_output=True,
                       text=True)
    check(p.returncode == 0, f"the merge passes (exit {p.returncode}; {p.stderr.strip()[-200:]})")
    _, whole = outcomes(os.path.join(root, "real"))
    _, both = outcomes(merged)
    check({k: v["status"] for k, v in whole.items()} == {k: v["status"] for k, v in both.items()},
          f"the merged shards hold the same runs as the whole run ({len(both)} and {len(whole)})")
    p = subprocess.run([sys.executable, REGRESS, "--merge", os.path.join(root, "shard0"),
                        "--out", os.path.join(root, "merged1")], capture_output=True, text=True)
    check(p.returncode == 1 and "INCOMPLETE: shard 1 of 2 missing" in p.stdout,
          "a missing shard is named and fails the merge")


def cancelled(root, build, env):
    print("3. the allocation cancelled under a running regression")
    out = os.path.join(root, "cancelled")
    e = {k: v for k, v in env.items() if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX")}
    p = subprocess.Popen([sys.executable, REGRESS, "--build", build, "--no-progress", "--launcher",
                          "slurm", "--filter", "Hang.*:Pass.Deterministic", "--seed", "3",
                          "--timeout", "100", "--out", out], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=e)
    job = ""
    for _ in range(100):
        time.sleep(0.2)
        steps = subprocess.run(["squeue", "-h", "-s", "-o", "%i %j"], capture_output=True,
                               text=True, env=env).stdout
        m = re.search(r"^(\d+)\.\d+ fake_test/Hang\.Forever", steps, re.M)
        if m:
            job = m.group(1)
            break
    check(bool(job), "the hanging test runs as a job step named after it")
    # The step is listed before its task is launched; cancelling in between revokes the launch
    # (the run then did not start, which regress.py reports as such). Cancel once the test's
    # own process runs.
    for _ in range(100):
        if hang_running():
            break
        time.sleep(0.2)
    check(hang_running(), "the hanging test's own process runs")
    for _ in range(50):  # let the passing test's step end first where it can
        steps = subprocess.run(["squeue", "-h", "-s", "-o", "%j"], capture_output=True,
                               text=True, env=env).stdout
        if "Pass.Deterministic" not in steps:
            break
        time.sleep(0.2)
    subprocess.run(["scancel", job], env=env, capture_output=True)
    try:
        so, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        so, _ = p.communicate()
    check(p.returncode == 130, f"the regression stops as interrupted (exit {p.returncode})")
    # Pass.Deterministic runs beside it and may still be ending (its step not yet complete) when
    # the allocation goes: then it is the run named as cancelled, and Hang.Forever is the one
    # killed at the interruption. Either way one cancelled run is named, and the hanging test
    # is accounted for.
    check(re.search(r"^FAIL (Hang\.Forever|Pass\.Deterministic) seed 3 .*: cancelled by Slurm "
                    r"\(STEP", so, re.M) and
          re.search(r"^(FAIL Hang\.Forever seed 3 .*: cancelled by Slurm|regress: interrupted: "
                    r"killed Hang\.Forever seed 3)", so, re.M) and
          re.search(r"^regress: the Slurm allocation ended \(job \d+: ([A-Z]+|gone)\)", so,
                    re.M), f"the cancelled run and the end of the allocation are named:\n{so}")
    report = open(os.path.join(out, "report.md")).read() if os.path.isfile(
        os.path.join(out, "report.md")) else ""
    check("**INTERRUPTED**" in report, "a partial report is written")


def hang_running():
    """Whether the fake Hang.Forever test runs: a process whose program (argv[0], or argv[1]
    after the script's interpreter) is fake_test, with Hang.Forever among its arguments (not
    srun, nor the step's shell, whose command line only names it)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"/fake_test") for a in args[:2]) and any(
                b"Hang.Forever" in a for a in args):
            return True
    return False


def bad_input(build, env):
    print("4. bad input")
    rc, so, se = regress(build, "--launcher", "slurm", "--partition", "no_such_partition",
                         "--filter", "Pass.*", env=env)
    check(rc == 2 and "Slurm did not start the regression" in se,
          f"a partition that does not exist: exit 2, one line ({rc}: {se.strip()[-200:]})")
    inside = subprocess.run(["salloc", "-n", "1", sys.executable, REGRESS, "--build", build,
                             "--launcher", "slurm", "--jobs", "2", "--filter", "Pass.*"],
                            capture_output=True, text=True, env=env)
    check(inside.returncode == 2 and "more than the 1 tasks" in inside.stderr,
          f"--jobs beyond the allocation is refused ({inside.stderr.strip()[-200:]})")
    rc, so, se = regress(build, "--partition", "x", env=env)
    check(rc == 2 and "need --launcher slurm" in se, "Slurm options without the launcher")


def engine_jobs(root, build, env):
    print("5. tpusim --jobs over Slurm tasks (--launcher slurm): the same bits as one process")
    os.makedirs(root, exist_ok=True)
    tpusim = os.path.join(build, "sim", "tpusim")
    ex = os.path.join(os.path.dirname(HERE), "examples")
    x = os.path.join(root, "x96.npy")  # the first 96 test images (a .npy v1 float32 header)
    with open(os.path.join(ex, "digits_test_x.npy"), "rb") as f:
        b = f.read()
    hl = int.from_bytes(b[8:10], "little")
    header = b[10:10 + hl].decode("latin1")
    dims = [int(v) for v in re.search(r"'shape': \(([^)]*)\)", header).group(1).split(",") if v]
    row = 4
    for d in dims[1:]:
        row *= d
    new = header.replace(f"'shape': ({dims[0]},", "'shape': (96,").rstrip("\n")
    with open(x, "wb") as f:
        f.write(b[:8] + hl.to_bytes(2, "little") + new.ljust(hl - 1).encode("latin1") + b"\n" +
                b[10 + hl:10 + hl + 96 * row])

    def onnx(jobs, *extra):
        out, js = (os.path.join(root, f"{n}{jobs}{extra and '_s' or ''}") for n in ("o", "j"))
        p = subprocess.run([tpusim, "onnx", os.path.join(ex, "digits_cnn.onnx"), "--input", x,
                            "--backend", "rtl", "--jobs", str(jobs), "--out", out + ".npz",
                            "--json", js + ".json", "--quiet", *extra], env=env,
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            return p, None, None
        with zipfile.ZipFile(out + ".npz") as z, open(js + ".json") as f:
            return p, {n: z.read(n) for n in z.namelist()}, json.load(f)["total"]

    t0 = time.monotonic()
    p1, o1, t1 = onnx(1)
    p3, o3, t3 = onnx(3, "--launcher", "slurm")
    print(f"  (both runs: {time.monotonic() - t0:.0f} s)")
    check(p1.returncode == 0 and p3.returncode == 0,
          f"the digits CNN runs with --jobs 1 and --jobs 3 --launcher slurm (exit {p1.returncode}, "
          f"{p3.returncode}; {p3.stderr.strip()[-300:]})")
    if o3 is not None:
        check(o1 == o3, "the outputs are bit-identical")
        check(t3["jobs"] == t1["jobs"] and t3["programs"] > t1["programs"] and
              t3["checked_elements"] == t1["checked_elements"] > 0,
              f"the jobs ran as more programs, every element checked ({t1['programs']} -> "
              f"{t3['programs']} programs, {t3['checked_elements']} elements)")

    def train(jobs, *extra):
        js = os.path.join(root, f"t{jobs}.json")
        p = subprocess.run([tpusim, "train", os.path.join(ex, "digits_mlp.onnx"), "--train",
                            os.path.join(ex, "digits_train.npz"), "--steps", "3", "--batch", "16",
                            "--from-scratch", "--backend", "rtl", "--jobs", str(jobs), "--json",
                            js, "--quiet", *extra], env=env, capture_output=True, text=True,
                           timeout=600)
        if p.returncode != 0:
            return p, None
        with open(js) as f:
            return p, [s["loss_bits"] for s in json.load(f)["steps"]]

    (q1, l1), (q2, l2) = train(1), train(2, "--launcher", "slurm")
    check(l1 is not None and l1 == l2,
          f"training with --jobs 2 --launcher slurm gives the same loss bits ({q2.stderr[-200:]})")
    # The Python module's launcher="slurm" (both back ends through the command line).
    py = ("import sys, numpy as np, tpusim\n"
          "x = np.load(sys.argv[1])\n"
          "m = sys.argv[2] + '/examples/digits_mlp.onnx'\n"
          "one, _ = tpusim.run_onnx(m, {'x': x}, backend='model')\n"
          "for b in ('model', 'rtl'):\n"
          "    o, st = tpusim.run_onnx(m, {'x': x}, backend=b, jobs=2, launcher='slurm')\n"
          "    assert o['logits'].tobytes() == one['logits'].tobytes(), b\n"
          "    assert st['total']['programs'] > st['total']['jobs'], st['total']\n"
          "print('same')\n")
    q = subprocess.run(["/usr/bin/python3", "-c", py, x, os.path.dirname(HERE)],
                       env=dict(env, PYTHONPATH=os.path.join(build, "python")),
                       capture_output=True, text=True, timeout=600)
    check(q.returncode == 0 and q.stdout.strip() == "same",
          f"Python's run_onnx(jobs=2, launcher='slurm'): the same bits on both back ends "
          f"({q.stderr.strip()[-300:]})")
    bad = subprocess.run([tpusim, "onnx", os.path.join(ex, "digits_mlp.onnx"), "--input", x,
                          "--backend", "model", "--jobs", "2", "--launcher", "slurm", "--quiet"],
                         env=dict(env, SLURM_PARTITION="nope"), capture_output=True, text=True,
                         timeout=120)
    lines = bad.stderr.strip().splitlines()
    check(bad.returncode == 2 and len(lines) == 1 and "invalid partition" in lines[0],
          f"a partition that does not exist: one line, exit 2 ({bad.returncode}: {bad.stderr})")
    check(squeue(env) == "", f"no job is left in the queue ({squeue(env)})")
    left = subprocess.run(["pgrep", "-f", "--", "--worker-of"], capture_output=True, text=True).stdout
    check(left.strip() == "", f"no worker process is left ({left.strip()})")


def main():
    if len(sys.argv) != 2:
        print("usage: slurm_test.py BUILD_DIR", file=sys.stderr)
        return 2
    real_build = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="slurm-test-") as root:
        os.chmod(root, 0o755)  # munged wants every folder above its socket o+x
        cluster = os.path.join(root, "cluster")
        t0 = time.monotonic()
        up = subprocess.run([sys.executable, CLUSTER, "up", cluster], capture_output=True,
                            text=True)
        if up.returncode != 0:
            print(f"slurm test: cannot start the cluster: {up.stderr.strip()}")
            return 1
        print(f"cluster up in {time.monotonic() - t0:.1f} s: {up.stdout.strip()}")
        env = dict(os.environ, SLURM_CONF=os.path.join(cluster, "slurm.conf"))
        pids = {}
        for name, path in (("slurmctld", "slurmctld.pid"), ("slurmd", "slurmd.pid"),
                           ("munged", "munge/munged.pid")):
            with open(os.path.join(cluster, path)) as f:
                pids[name] = int(f.read().split()[0])
        try:
            build = fake_matrix(os.path.join(root, "fake"), env)
            real_tests(os.path.join(root, "real"), real_build, env)
            cancelled(os.path.join(root, "fake"), build, env)
            bad_input(build, env)
            engine_jobs(os.path.join(root, "jobs"), real_build, env)
        finally:
            t0 = time.monotonic()
            down = subprocess.run([sys.executable, CLUSTER, "down", cluster], capture_output=True,
                                  text=True)
            print(f"cluster down in {time.monotonic() - t0:.1f} s")
            alive = []
            for name, pid in pids.items():
                try:
                    os.kill(pid, 0)
                    alive.append(name)
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            check(down.returncode == 0 and not alive and "had to kill" not in down.stderr,
                  f"the cluster stops cleanly, nothing left running ({alive} "
                  f"{down.stderr.strip()})")
    verdict = "FAILED: " + "; ".join(failures) if failures else "all checks hold"
    print(f"slurm test: {verdict}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
