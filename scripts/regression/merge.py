# SPDX-License-Identifier: Apache-2.0
"""--merge: result sets (results.json, JUnit XML, coverage data) of runs or shards into one
report."""

import datetime
import glob
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass

from regression.common import (Run, Test, UsageError, clock, failure_excerpt, plural, read_text,
                               shell_path)
from regression.report import print_summary, write_junit, write_report, write_results


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
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # scripts/
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
