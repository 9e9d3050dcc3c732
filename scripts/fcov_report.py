#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Merge the testbench's functional coverage files and report bins and holes.

Usage: scripts/fcov_report.py DIR [--markdown FILE] [--strict] [--quiet]

DIR holds the fcov_<pid>.json files that test processes write when TPU_FCOV_DIR=DIR is set
(tb/include/tpu/tb/fcov.h). Hits of the same group and bin are added over all files; a bin
counted by no file is a hole. Prints a table per group (bin, hits), the holes, and the totals.
--markdown FILE writes the same report as Markdown. Exit status: 0 (holes are reported, not an
error) unless --strict is given and there are holes (then 1); 2 for bad input (no such
directory, no coverage files, a file that is not valid coverage JSON). See docs/fcov.md.
"""

import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genlib  # noqa: E402 (this folder)

FORMAT = "tpu-fcov-1"


class InputError(Exception):
    pass


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: not readable as JSON: {e}") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{path}: not a functional coverage file (format is not '{FORMAT}')")
    groups = data.get("groups")
    if not isinstance(groups, list):
        raise InputError(f"{path}: no 'groups' list")
    for g in groups:
        ok = (isinstance(g, dict) and isinstance(g.get("name"), str)
              and isinstance(g.get("bins"), list) and isinstance(g.get("hits"), list)
              and len(g["bins"]) == len(g["hits"])
              and all(isinstance(b, str) for b in g["bins"])
              and all(isinstance(h, int) and h >= 0 for h in g["hits"]))
        if not ok:
            raise InputError(f"{path}: malformed group {json.dumps(g)[:120]}")
    return data


def merge(files):
    """Returns (groups, programs): groups is {name: {"description", "bins": {bin: hits}}} in the
    order of first appearance; programs counts the files per program name."""
    groups = {}
    programs = {}
    for path in files:
        data = load(path)
        prog = data.get("program", "?")
        programs[prog] = programs.get(prog, 0) + 1
        for g in data["groups"]:
            entry = groups.setdefault(g["name"], {"description": g.get("description", ""),
                                                  "bins": {}})
            for b, h in zip(g["bins"], g["hits"]):
                entry["bins"][b] = entry["bins"].get(b, 0) + h
    return groups, programs


def render(groups, programs, nfiles, directory, markdown):
    out = []
    total = sum(len(g["bins"]) for g in groups.values())
    hit = sum(1 for g in groups.values() for h in g["bins"].values() if h > 0)
    holes = [(name, b) for name, g in groups.items() for b, h in g["bins"].items() if h == 0]
    pct = 100.0 * hit / total if total else 0.0
    progs = ", ".join(f"{p} ({n})" for p, n in sorted(programs.items()))
    if markdown:
        out.append("# Functional coverage\n")
        out.append(f"Merged from {nfiles} file(s) in `{directory}`: {progs}.\n")
        out.append(f"**{hit} of {total} bins hit ({pct:.1f}%), {len(holes)} hole(s).**\n")
        rows = []
        for name, g in groups.items():
            gh = [b for b, h in g["bins"].items() if h == 0]
            rows.append([f"`{name}`", f"{len(g['bins']) - len(gh)} / {len(g['bins'])}",
                         ", ".join(f"`{b}`" for b in gh) or "—"])
        out += genlib.md_table(["group", "bins hit", "holes"], rows,
                               ["left", "right", "left"]).split("\n")
        out.append("")
        out.append("## Holes\n")
        if holes:
            for name, b in holes:
                out.append(f"- `{name}` / `{b}`")
        else:
            out.append("None: every bin was hit.")
        out.append("")
        for name, g in groups.items():
            out.append(f"## `{name}`\n")
            if g["description"]:
                d = g["description"]
                out.append(f"{d[0].upper()}{d[1:]}.\n")
            out += genlib.md_table(
                ["bin", "hits"],
                [[f"`{b}`", f"{h:,}{'  **HOLE**' if h == 0 else ''}"]
                 for b, h in g["bins"].items()],
                ["left", "right"]).split("\n")
            out.append("")
        return "\n".join(out)

    width = max([len(b) for g in groups.values() for b in g["bins"]] + [10])
    out.append(f"Functional coverage: {nfiles} file(s) in {directory}")
    out.append(f"  from: {progs}")
    for name, g in groups.items():
        gh = sum(1 for h in g["bins"].values() if h == 0)
        out.append("")
        out.append(f"{name}: {len(g['bins']) - gh}/{len(g['bins'])} bins hit"
                   + (f", {gh} hole(s)" if gh else ""))
        if g["description"]:
            out.append(f"  ({g['description']})")
        for b, h in g["bins"].items():
            out.append(f"  {b:<{width}} {h:>16,}{'  <-- HOLE' if h == 0 else ''}")
    out.append("")
    if holes:
        out.append(f"Holes ({len(holes)}):")
        for name, b in holes:
            out.append(f"  {name} / {b}")
    else:
        out.append("Holes: none")
    out.append(f"Total: {hit} of {total} bins hit ({pct:.1f}%), {len(holes)} hole(s)")
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="directory of fcov_*.json files (TPU_FCOV_DIR of the runs)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the report as Markdown")
    ap.add_argument("--strict", action="store_true", help="exit 1 when there are holes")
    ap.add_argument("--quiet", action="store_true",
                    help="print only the holes and the totals, not every bin")
    args = ap.parse_args(argv)
    try:
        if not os.path.isdir(args.dir):
            raise InputError(f"{args.dir}: no such directory (set TPU_FCOV_DIR={args.dir} "
                             "for the test runs, e.g. `make coverage`)")
        files = sorted(glob.glob(os.path.join(args.dir, "fcov_*.json")))
        if not files:
            raise InputError(f"{args.dir}: no fcov_*.json files (did the tests run with "
                             f"TPU_FCOV_DIR={args.dir}?)")
        groups, programs = merge(files)
    except InputError as e:
        print(f"fcov_report: {e}", file=sys.stderr)
        return 2
    text = render(groups, programs, len(files), args.dir, markdown=False)
    if args.quiet:
        text = text[text.index("\nHoles"):].lstrip("\n")
    print(text)
    if args.markdown:
        try:
            with open(args.markdown, "w", encoding="utf-8") as f:
                f.write(render(groups, programs, len(files), args.dir, markdown=True) + "\n")
        except OSError as e:
            print(f"fcov_report: cannot write {args.markdown}: {e}", file=sys.stderr)
            return 2
        print(f"Markdown report: {args.markdown}")
    holes = sum(1 for g in groups.values() for h in g["bins"].values() if h == 0)
    return 1 if args.strict and holes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
