# SPDX-License-Identifier: Apache-2.0
"""The reports of a regression: the JUnit XML (ElementTree), the Markdown report (tabulate), the
results.json that --merge reads back, and the summary on the terminal."""

import json
import os
import re
import subprocess

from regression.common import clock, plural, repro_commands, shell_path


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
