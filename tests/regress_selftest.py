#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Self-test of scripts/regress.py against a fake ctest directory (a few seconds).

A hand-written CTestTestfile.cmake registers tests of a fake GoogleTest program whose behaviour
is chosen by the test name (pass, random, fail on odd seeds, skip, hang, crash, run nothing,
report the wrong seed, see the shard variables), plus one plain ctest command. The test runs
the script on it and checks the exit status, which runs happened with which seeds, the failure
reasons, the reproduce commands, the JUnit file, the report, sharding and the errors on bad
input. Usage: regress_selftest.py [path/to/regress.py]; exit status 0 when every check holds.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import xml.dom.minidom

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "scripts", "regress.py")

FAKE = r'''#!/usr/bin/env python3
import os, signal, sys, time
name = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--gtest_filter="))
seed = int(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--seed=")), "0"))
print(f"Note: Google Test filter = {name}")
if name == "Empty.NoTest":
    print("[==========] Running 0 tests from 0 test suites.")
    print("[  PASSED  ] 0 tests.")
    sys.exit(0)
print(f"[ RUN      ] {name}", flush=True)
def seeded(s=seed):
    print(f"[   SEED   ] {name} run seed {s} (reproduce: --gtest_filter={name} --seed={s})")
def ok():
    print(f"[       OK ] {name} (1 ms)")
    sys.exit(0)
def fail():
    print("fake_test.cpp:12: Failure\nExpected equality of these values:\n  got\n    Which is: 1")
    print(f"[  FAILED  ] {name} (1 ms)")
    sys.exit(1)
if name == "Pass.Deterministic": ok()
if name == "Slow.Random": seeded(); time.sleep(0.5); ok()
if name == "Pass.Random":
    if not os.environ.get("FAKE_NOSEED"): seeded()
    ok()
if name == "Fail.RandomOdd": seeded(); fail() if seed % 2 else ok()
if name == "Fail.Always": fail()
if name == "Skip.Me":
    print(f"[  SKIPPED ] {name} (0 ms)")
    sys.exit(0)
if name == "Hang.Forever": time.sleep(60)
if name == "Crash.Segv": os.kill(os.getpid(), signal.SIGSEGV)
if name == "Kill.Self":
    print("the last line before SIGKILL", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
if name == "WrongSeed.Random": seeded(seed + 1); ok()
if name == "Shard.Env":
    if "GTEST_TOTAL_SHARDS" in os.environ or "GTEST_SHARD_INDEX" in os.environ:
        print("shard variables leaked into the test"); fail()
    ok()
if name == "Env.Pass":
    if os.environ.get("TPU_SELFTEST") != "on": fail()
    seeded(); ok()
sys.exit(3)
'''

GTESTS = {  # test -> program
    "Pass.Deterministic": "fake_test", "Pass.Random": "fake_test", "Fail.RandomOdd": "fake_test",
    "Skip.Me": "fake_test", "Hang.Forever": "fake_test", "Crash.Segv": "fake_test",
    "WrongSeed.Random": "fake_test", "Shard.Env": "fake_test", "Empty.NoTest": "fake_test",
    "Env.Pass": "fake_test", "Slow.Random": "fake_test", "Fail.Always": "fake_sc_test",
}

failures = []


def check(cond, what):
    print(("  ok    " if cond else "  FAIL  ") + what)
    if not cond:
        failures.append(what)


def setup(root, gtests=None, props=None):
    """A fake build directory: the programs of `gtests` (test -> program; default GTESTS), each
    test registered as gtest_discover_tests would, with `props` (test -> more ctest properties,
    e.g. 'ENVIRONMENT "X=1"') added."""
    gtests = gtests or GTESTS
    props = props or {}
    build = os.path.join(root, "build")
    os.makedirs(build)
    for prog in sorted(set(gtests.values())):
        path = os.path.join(build, prog)
        with open(path, "w") as fh:
            fh.write(FAKE)
        os.chmod(path, 0o755)
    # Like gtest_discover_tests: one <program>[1]_tests.cmake per program, included by ctest.
    lines = []
    for prog in sorted(set(gtests.values())):
        tests_file = os.path.join(build, f"{prog}[1]_tests.cmake")
        with open(tests_file, "w") as fh:
            for name in (n for n, p in gtests.items() if p == prog):
                fh.write(f'add_test([=[{name}]=] "{build}/{prog}" "--gtest_filter={name}" '
                         '"--gtest_also_run_disabled_tests")\n'
                         f'set_tests_properties([=[{name}]=] PROPERTIES LABELS "fast" '
                         f'SKIP_REGULAR_EXPRESSION "\\\\[  SKIPPED \\\\]" '
                         f'WORKING_DIRECTORY "{build}" {props.get(name, "")})\n')
        lines.append(f'include("{tests_file}")')
    lines.append('add_test([=[plain_true]=] "/bin/true")')
    lines.append('set_tests_properties([=[plain_true]=] PROPERTIES LABELS "fast")')
    lines.append('add_test([=[long_only]=] "/bin/true")')
    lines.append('set_tests_properties([=[long_only]=] PROPERTIES LABELS "long")')
    with open(os.path.join(build, "CTestTestfile.cmake"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return build


def regress(build, *args, env=None):
    e = {k: v for k, v in os.environ.items()
         if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "TPU_SEED")}
    e.update(env or {})
    p = subprocess.run([sys.executable, SCRIPT, "--build", build, "--no-progress", *args],
                       capture_output=True, text=True, env=e, timeout=120)
    return p.returncode, p.stdout, p.stderr


def merge(*args):
    p = subprocess.run([sys.executable, SCRIPT, "--merge", *args], capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


def check_full_run(build, root):
    """The smoke matrix with failures, hangs, crashes and skips: results, JUnit, report, logs."""
    out = os.path.join(root, "out")
    print("full run: --seeds 3 --seed 10 --timeout 2")
    rc, so, se = regress(build, "--seeds", "3", "--seed", "10", "--timeout", "2", "--out", out,
                         env={"TPU_SELFTEST": "on"})
    check(rc == 1, f"exit status 1 when tests fail (got {rc}; stderr: {se.strip()[:200]})")
    res = json.load(open(os.path.join(out, "results.json")))
    runs = {}
    for r in res["runs"]:
        runs.setdefault(r["test"], []).append(r)
    seeds = lambda t: sorted(r["seed"] for r in runs.get(t, []))
    status = lambda t: [r["status"] for r in sorted(runs.get(t, []), key=lambda r: r["seed"])]
    reason = lambda t: " ".join(r["reason"] for r in runs.get(t, []))
    check(seeds("Pass.Deterministic") == [10], "a deterministic test runs once")
    check(seeds("Pass.Random") == [10, 11, 12] and status("Pass.Random") == ["pass"] * 3,
          "a random test runs with seeds SEED..SEED+SEEDS-1")
    check(status("Fail.RandomOdd") == ["pass", "fail", "pass"], "the failing seed is found")
    check(status("Skip.Me") == ["skip"], "a skipped test is a skip")
    check(status("Hang.Forever") == ["fail"] and "timed out" in reason("Hang.Forever"),
          "a hang is killed at the timeout and fails")
    check("SIGSEGV" in reason("Crash.Segv"), "a crash names its signal")
    check("no test ran" in reason("Empty.NoTest"), "exit 0 without a test is a failure")
    check(status("WrongSeed.Random")[:1] == ["fail"] and "run seed 11" in
          reason("WrongSeed.Random"), "a test that ignores --seed fails")
    check(status("Env.Pass") == ["pass"] * 3, "TPU_* variables reach the tests")
    check(status("plain_true") == ["pass"], "a plain ctest command runs")
    check("long_only" not in runs, "smoke leaves out the long label")
    check("make waves TEST=Fail.RandomOdd SEED=11" in so, "the waves command is printed")
    check("fake_test --gtest_filter=Fail.RandomOdd --seed=11" in so,
          "the plain reproduce command is printed")
    check("TPU_SELFTEST=on make waves" in so, "reproduce commands carry the TPU_* variables")
    check("make waves TEST=Fail.Always" not in so and "SystemC model: no waves" in so,
          "SystemC programs get no waves command")
    dom = xml.dom.minidom.parse(os.path.join(out, "junit.xml"))
    top = dom.documentElement
    check(top.getAttribute("tests") == str(len(res["runs"])) and
          top.getAttribute("failures") == str(sum(r["status"] == "fail" for r in res["runs"])),
          "JUnit totals match the runs")
    names = [c.getAttribute("name") for c in dom.getElementsByTagName("testcase")]
    check("RandomOdd [seed 11]" in names, "JUnit names random runs with their seed")
    report = open(os.path.join(out, "report.md")).read()
    check("### Fail.RandomOdd, seed 11 (fake_test)" in report and
          "fake_test.cpp:12: Failure" in report, "the report lists the failure and assertion")
    logs = [r["log"] for r in runs.get("Fail.RandomOdd", []) if r["seed"] == 11]
    log = open(logs[0]).read() if logs else ""
    check(log.startswith("# command: ") and "--seed=11" in log,
          "the log starts with the command")


def check_filter_and_history(build, root):
    """Filters, and the queue order learnt from earlier runs."""
    print("passing subset, history, filter")
    rc, so, se = regress(build, "--filter", "Pass.*:plain_*-*Deterministic", "--seed", "4",
                         "--out", os.path.join(root, "out2"))
    check(rc == 0, f"exit status 0 when all pass (got {rc})")
    res = json.load(open(os.path.join(root, "out2", "results.json")))
    check(sorted({r["test"] for r in res["runs"]}) == ["Pass.Random", "plain_true"],
          "the filter takes positive and negative patterns")
    rc, so, se = regress(build, "--filter", "fake_sc_test/*", "--list")
    check(so.split() == ["fake_sc_test/Fail.Always"], "the filter matches program/Suite.Test")

    print("history: seeds queued from earlier runs")
    hist_args = ("--filter", "Pass.*", "--seeds", "3", "--jobs", "1")
    rc, so, se = regress(build, *hist_args, "--seed", "20")
    rc, so, se = regress(build, *hist_args, "--seed", "30")
    res = json.load(open(os.path.join(build, "regress", "latest", "results.json")))
    check(sorted((r["test"], r["seed"]) for r in res["runs"]) ==
          [("Pass.Deterministic", 30), ("Pass.Random", 30), ("Pass.Random", 31),
           ("Pass.Random", 32)], "a second run with history runs the same matrix")
    rc, so, se = regress(build, *hist_args, "--seed", "40", env={"FAKE_NOSEED": "1"})
    res = json.load(open(os.path.join(build, "regress", "latest", "results.json")))
    check(sorted((r["test"], r["seed"]) for r in res["runs"]) ==
          [("Pass.Deterministic", 40), ("Pass.Random", 40)],
          "seeds queued from history are dropped when the test turns deterministic")

    rc, so, se = regress(build, "--filter", "Slow.*", "--seeds", "2", "--seed", "20")
    rc, so, se = regress(build, "--filter", "Slow.*", "--seeds", "2", "--seed", "30")
    res = json.load(open(os.path.join(build, "regress", "latest", "results.json")))
    starts = [r["start"] for r in res["runs"]]
    check(len(starts) == 2 and abs(starts[0] - starts[1]) < 0.4,
          f"the seeds of a test known to be random start together (starts {starts})")


def check_sharding(build, root):
    """GoogleTest sharding: every test in exactly one shard; the variables stay out of the tests."""
    print("sharding")
    listed = []
    for i in range(3):
        rc, so, se = regress(build, "--list", env={"GTEST_TOTAL_SHARDS": "3",
                                                   "GTEST_SHARD_INDEX": str(i)})
        listed += so.split()
    rc, so, se = regress(build, "--list")
    check(sorted(listed) == sorted(so.split()) and len(listed) == len(set(listed)),
          "three shards cover every test exactly once")
    rc, so, se = regress(build, "--filter", "Shard.Env", "--seed", "1",
                         "--out", os.path.join(root, "out3"),
                         env={"GTEST_TOTAL_SHARDS": "1", "GTEST_SHARD_INDEX": "0"})
    check(rc == 0, "the shard variables are not passed to the tests")
    check("shard 0 of 1" in open(os.path.join(root, "out3", "report.md")).read(),
          "the report names the shard")


def check_merging(build, root):
    """--merge of shards and of JUnit files other tools write."""
    out = os.path.join(root, "out")
    print("merging shards, JUnit files and coverage (--merge)")
    shard_dirs = []
    for i in range(3):
        d = os.path.join(root, f"shard{i}")
        regress(build, "--seeds", "3", "--seed", "10", "--timeout", "2", "--out", d,
                env={"TPU_SELFTEST": "on", "GTEST_TOTAL_SHARDS": "3",
                     "GTEST_SHARD_INDEX": str(i)})
        shard_dirs.append(d)
    merged = os.path.join(root, "merged")
    rc, so, se = merge(*shard_dirs, "--out", merged)
    check(rc == 1, f"the merged shards fail as the whole run did (exit {rc}; {se.strip()[:200]})")
    whole = json.load(open(os.path.join(out, "results.json")))["runs"]
    got = json.load(open(os.path.join(merged, "results.json")))["runs"]
    key = lambda r: (r["program"], r["test"], r["seed"], r["status"])
    check(sorted(map(key, got)) == sorted(map(key, whole)),
          "three merged shards give the runs and outcomes of the unsharded run")
    check("FAIL Fail.RandomOdd seed 11" in so and
          "make waves TEST=Fail.RandomOdd SEED=11" in so,
          "the merged summary prints failures with their reproduce commands")
    report = open(os.path.join(merged, "report.md")).read()
    check("## Result sets merged" in report and "fake_test.cpp:12: Failure" in report and
          len(re.findall(r"\|\s*0 of 3\s*\|", report)) == 1, "the merged report lists the sets and failures")
    dom = xml.dom.minidom.parse(os.path.join(merged, "junit.xml"))
    check(dom.documentElement.getAttribute("tests") == str(len(whole)),
          "the merged JUnit file has every run")
    rc, so, se = merge(shard_dirs[0], shard_dirs[2], "--out", os.path.join(root, "m2"))
    check(rc == 1 and "INCOMPLETE: shard 1 of 3 missing" in so,
          "a missing shard is named and fails the merge")
    rc, so, se = merge(shard_dirs[0], shard_dirs[0])
    check(rc == 2 and "given twice" in se, "a shard given twice is refused")
    rc, so, se = merge(os.path.join(root, "nothing-here"))
    check(rc == 2 and "does not exist" in se, "a missing folder is named")
    os.makedirs(os.path.join(root, "empty"))
    rc, so, se = merge(os.path.join(root, "empty"))
    check(rc == 2 and "holds no results" in se, "a folder without results is named")

    # JUnit written by other tools: GoogleTest's --gtest_output=xml and ctest's --output-junit.
    ju = os.path.join(root, "junit")
    os.makedirs(ju)
    with open(os.path.join(ju, "gtest.xml"), "w") as fh:
        fh.write('<?xml version="1.0"?>\n<testsuites tests="2"><testsuite name="Other" '
                 'tests="2"><testcase name="Good" classname="Other" time="0.5"/>'
                 '<testcase name="Bad" classname="Other" time="0.25"><failure '
                 'message="x.cpp:3: Failure">x.cpp:3: Failure\nboom</failure></testcase>'
                 '</testsuite></testsuites>\n')
    subprocess.run(["ctest", "-R", "^plain_true$", "--output-junit",
                    os.path.join(ju, "ctest.xml")], cwd=build, capture_output=True)
    rc, so, se = merge(shard_dirs[0], ju, "--out", os.path.join(root, "m3"))
    got = json.load(open(os.path.join(root, "m3", "results.json")))["runs"]
    st = {r["test"]: r["status"] for r in got if r["program"] != "fake_test"}
    check(st.get("Other.Good") == "pass" and st.get("Other.Bad") == "fail" and
          st.get("plain_true") == "pass",
          f"GoogleTest's and ctest's JUnit files merge in ({st})")
    check("x.cpp:3: Failure" in open(os.path.join(root, "m3", "report.md")).read(),
          "a JUnit failure keeps its message")


def check_coverage_merge(build, root):
    """--merge of code and functional coverage: two sets add up."""
    # Coverage: two sets' .dat files and functional-coverage JSON add up.
    point = ("C '\x01t\x02line\x01page\x02v_line/tpu_fifo\x01f\x02rtl/common/tpu_fifo.sv"
             "\x01l\x02{l}\x01n\x020\x01S\x02{l}\x01o\x02if\x01h\x02TOP.f' {c}\n")
    fcov = ('{{"format": "tpu-fcov-1", "program": "fake", "groups": [{{"name": "g", '
            '"bins": ["a", "b"], "hits": [{a}, {b}]}}]}}')
    for i, (c1, c2, a, b) in enumerate(((3, 0, 1, 0), (0, 2, 2, 0))):
        d = os.path.join(root, f"cov{i}")
        os.makedirs(os.path.join(d, "dat"))
        os.makedirs(os.path.join(d, "fcov"))
        for name in ("dat/cov_fifo_100_0.dat", "coverage.dat"):  # as make coverage leaves
            with open(os.path.join(d, name), "w") as fh:  # the runs' files and their merge
                fh.write("# SystemC::Coverage-3\n" + point.format(l=30, c=c1) +
                         point.format(l=31, c=c2))
        with open(os.path.join(d, "fcov", "fcov_100.json"), "w") as fh:
            fh.write(fcov.format(a=a, b=b))
    rc, so, se = merge(os.path.join(root, "cov0"), os.path.join(root, "cov1"),
                       "--out", os.path.join(root, "m4"))
    summ = os.path.join(root, "m4", "coverage", "summary.json")
    fifo = {}
    if os.path.isfile(summ):
        fifo = next((f for f in json.load(open(summ)).get("files", [])
                     if f.get("file") == "rtl/common/tpu_fifo.sv"), {})
    check(fifo.get("lines_hit") == 2 and fifo.get("lines") == 2,
          f"line coverage adds up over the sets: both lines hit ({fifo}; {se.strip()[:200]})")
    merged = os.path.join(root, "m4", "coverage", "coverage.dat")
    da = re.findall(r"\x01l\x02(\d+)\x01.*' (\d+)$", open(merged).read(), re.M) \
        if os.path.isfile(merged) else []
    check(sorted(da) == [("30", "3"), ("31", "2")],
          f"each run's counts once: a make coverage folder's own coverage.dat is not merged "
          f"again (lines 30, 31: {da})")
    check(re.search(r"\ba\s+3\b", so) is not None and "b" in so,
          "functional coverage adds up over the sets (bin a: 1 + 2 hits)")


def check_bad_input(build, root):
    """Bad input: one line naming what was wrong, exit status 2."""
    print("bad input")
    for env, args, words in [
        ({"GTEST_TOTAL_SHARDS": "3", "GTEST_SHARD_INDEX": "3"}, [], "must be in 0..2"),
        ({"GTEST_TOTAL_SHARDS": "3"}, [], "GTEST_SHARD_INDEX is not set"),
        ({"GTEST_TOTAL_SHARDS": "two", "GTEST_SHARD_INDEX": "0"}, [], "must be integers"),
        ({}, ["--filter", "Nothing.*"], "no smoke test matches"),
        ({}, ["--seeds", "0"], "--seeds must be at least 1"),
    ]:
        rc, so, se = regress(build, *args, env=env)
        check(rc == 2 and words in se, f"exit 2 and '{words}' (got {rc}: {se.strip()[:120]})")
    rc, so, se = regress(os.path.join(root, "nowhere"))
    check(rc == 2 and "not a configured build directory" in se, "a missing build directory")
    os.remove(os.path.join(build, "fake_sc_test"))
    rc, so, se = regress(build)
    check(rc == 2 and "not built" in se and "fake_sc_test" in se,
          "a program that is not built is named")


def main():
    with tempfile.TemporaryDirectory(prefix="regress-selftest-") as root:
        build = setup(root)
        for phase in (check_full_run, check_filter_and_history, check_sharding, check_merging,
                      check_coverage_merge, check_bad_input):
            phase(build, root)

    verdict = "FAILED: " + "; ".join(failures) if failures else "all checks hold"
    print(f"regress selftest: {verdict}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
