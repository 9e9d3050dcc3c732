# SPDX-License-Identifier: Apache-2.0
"""What the table generators share (scripts/gen_isa.py, scripts/gen_hbm.py, scripts/layers.py):
Markdown tables (python3-tabulate), the C++ style, the marked tables in the docs, and writing only
the outputs that differ (or, with --check, naming them and failing: the fast tier's *_generated
tests)."""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def md_table(headers, rows, align=None):
    """A Markdown table (python3-tabulate's "pipe" format); align: "left"/"right" per column."""
    from tabulate import tabulate
    return tabulate([[str(c) for c in r] for r in rows], headers, tablefmt="pipe",
                    colalign=align if rows else None, disable_numparse=True)


def clang_format(tool, text, path):
    """The project's C++ style (.clang-format), so that make lint's format check passes."""
    res = subprocess.run(["clang-format", f"--assume-filename={os.path.join(ROOT, path)}"],
                         input=text, capture_output=True, text=True, cwd=ROOT)
    if res.returncode != 0:
        sys.exit(f"{tool}: clang-format failed: {res.stderr.strip()}")
    return res.stdout


def replace_marked(tool, text, name, table, path):
    """`text` with the lines between `<!-- TOOL: NAME -->` and `<!-- /TOOL -->` set to `table`."""
    pat = re.compile(r"(<!-- %s: %s -->\n).*?(<!-- /%s -->)"
                     % (re.escape(tool), re.escape(name), re.escape(tool)), re.S)
    if not pat.search(text):
        sys.exit(f"{tool}: {path} has no '<!-- {tool}: {name} -->' ... '<!-- /{tool} -->'")
    return pat.sub(lambda m: m.group(1) + table + "\n" + m.group(2), text)


def read_stamps(d):
    """{name: [field, ...]} of d/stamp.tsv, the tab-separated file the measuring scripts write
    (synth.sh: commit, date, seconds; bench_table.py stamp: commit, date, CPU); {} if absent."""
    res = {}
    path = os.path.join(d, "stamp.tsv")
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            f = line.rstrip("\n").split("\t")
            if len(f) == 4:
                res[f[0]] = f[1:]
    return res


def stamp_problem(block, generated_by, what, redo):
    """None when `block` (a generated table and its note) carries the stamp "<generated_by> at
    commit C" of committed code (C without a trailing +); else the problem, naming `what`."""
    st = re.search(re.escape(generated_by) + r" at commit ([0-9a-f]+)(\+?)", block)
    if not st:
        return f"{what} has no stamp (commit, date): regenerate it"
    if st.group(2):
        return f"{what} was measured on uncommitted code ({st.group(1)}+): {redo}"
    return None


def marked_docs(tool, docs):
    """{path: text} of each doc in `docs` ({path: {name: table}}) with its tables replaced."""
    res = {}
    for path, tables in docs.items():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        for name, table in tables.items():
            text = replace_marked(tool, text, name, table, path)
        res[path] = text
    return res


def write_outputs(tool, source, outputs, argv):
    """Writes each {path: text} that differs; with --check in argv writes nothing and returns 1
    naming the stale ones. Returns the exit status."""
    check_only = "--check" in argv
    stale = []
    for path, text in outputs.items():
        full = os.path.join(ROOT, path)
        old = open(full, encoding="utf-8").read() if os.path.exists(full) else None
        if old == text:
            continue
        stale.append(path)
        if not check_only:
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
    if check_only:
        if stale:
            print(f"{tool}: out of date with {source} (run scripts/{tool}.py): " + ", ".join(stale))
            return 1
        print(f"{tool}: every generated table matches {source}")
        return 0
    print(f"{tool}: wrote " + (", ".join(stale) if stale else "nothing (all up to date)"))
    return 0


def generate(tool, source, check, outputs, argv):
    """The generators' main: read `source` (JSON), check(d) refuses an inconsistent one, then
    write_outputs of outputs(d). Returns the exit status."""
    with open(os.path.join(ROOT, source), encoding="utf-8") as f:
        d = json.load(f)
    check(d)
    return write_outputs(tool, source, outputs(d), argv)
