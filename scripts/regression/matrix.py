# SPDX-License-Identifier: Apache-2.0
"""The test x seed matrix: the tests of a tier from ctest, the filter, the shard, the first run
seed, and the durations of earlier runs (which order the queue)."""

import glob
import json
import os
import random
import re
import subprocess
import sys

from regression.common import TIERS, Test, UsageError


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
