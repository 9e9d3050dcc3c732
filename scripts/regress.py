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
import os
import shlex
import socket
import sys
import time

from regression.common import TIERS, UsageError, passthrough_env, shell_path
from regression.launch import LocalLauncher, Runner, run_all, run_under_salloc, slurm_allocation
from regression.matrix import choose_first_seed, load_history, select_tests, shard_from_env
from regression.merge import merge_main
from regression.report import (git_commit, link_latest, make_out_dir, print_summary, write_junit,
                               write_report, write_results)


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
            return run_under_salloc(args, argv, os.path.abspath(__file__))
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
