#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the documentation is self-contained (registered as a fast-tier test).

  scripts/check_docs.py [ROOT]

Fails, naming file and line, when a Markdown file of the repository
  - links to a file that does not exist in the repository (relative links only; http(s) and
    mailto links are not followed),
  - links to an anchor (#heading) that no heading of the target file produces,
  - or when any tracked text file points outside the repository (at the spec folder handed to the
    project beside it, which a user's clone does not have; OUTSIDE_DIR below),
  - or when docs/architecture.md's table of the C++ layers differs from what scripts/layers.py
    reads from the CMake files,
  - or when a figure the docs state in several places has two values. Such a figure is tagged
    right after its number, `800,480<!-- fig:make_run_cycles --> cycles` (the comment is
    invisible in the rendered page); every tag of one name across README.md and docs/ must follow
    the same number, a tag must follow a number, and a name must be tagged at least twice. (Better still, state a figure once and link to it; generated tables carry their own
    stamp: scripts/synth_table.py.)

  scripts/check_docs.py --self-test    the figure rule on samples (fast test check_docs_self_test)
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
OUTSIDE_DIR = "sha" + "red"  # spelled in two parts so that this file does not match itself
OUTSIDE = re.compile(r"\.\./" + OUTSIDE_DIR + "|" + OUTSIDE_DIR + "/spec/")


def anchors(path):
    """GitHub-style anchors of a Markdown file's headings."""
    out = set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            if in_code or not line.startswith("#"):
                continue
            title = line.lstrip("#").strip().lower()
            slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
            n = 0
            candidate = slug
            while candidate in out:
                n += 1
                candidate = f"{slug}-{n}"
            out.add(candidate)
    return out


def tracked_files(root):
    res = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if res.returncode != 0:  # not a checkout: walk the tree
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files
    return res.stdout.split()


TAG = re.compile(r"<!-- fig:([a-z0-9_]+) -->")
# The figure a tag follows: a number (digits, separators, a decimal point, a percent sign),
# possibly bold, directly before the tag.
FIGURE = re.compile(r"([0-9][0-9,.]*%?)\**$")


def figure_values(texts):
    """({name: {value: [place, ...]}}, [error, ...]) of the tagged figures over {path: text}."""
    seen, errors = {}, []
    for path, text in texts.items():
        for i, line in enumerate(text.split("\n"), 1):
            for m in TAG.finditer(line):
                value = FIGURE.search(line[:m.start()])
                if not value:
                    errors.append(f"{path}:{i}: the tag fig:{m.group(1)} follows no number "
                                  "(write it right after the figure: 12.1<!-- fig:name --> s)")
                    continue
                seen.setdefault(m.group(1), {}).setdefault(value.group(1), []).append(
                    f"{path}:{i}")
    return seen, errors


def figure_errors(texts):
    seen, errors = figure_values(texts)
    for name, vals in sorted(seen.items()):
        places = [p for ps in vals.values() for p in ps]
        if len(vals) > 1:
            errors.append(f"figure {name} has {len(vals)} values: " +
                          "; ".join(f"{v} at {', '.join(ps)}" for v, ps in sorted(vals.items())))
        elif len(places) == 1:
            errors.append(f"{places[0]}: figure {name} is tagged once (a tag marks a figure "
                          "stated in several places; is the name misspelt?)")
    return errors


def self_test():
    same = {"a.md": "x 800,480<!-- fig:cycles --> y", "b.md": "**800,480**<!-- fig:cycles -->"}
    two = {"a.md": "800,480<!-- fig:cycles -->", "b.md": "\n800,090<!-- fig:cycles -->"}
    unit = {"a.md": "12.1<!-- fig:t --> s", "b.md": "(17.5<!-- fig:t --> s)"}
    bad = {"a.md": "12.1 s<!-- fig:t -->", "b.md": "one<!-- fig:u -->, 3<!-- fig:v -->"}
    checks = [
        figure_errors(same) == [],
        len(figure_errors(two)) == 1 and "800,090 at b.md:2" in figure_errors(two)[0]
        and "800,480 at a.md:1" in figure_errors(two)[0],
        len(figure_errors(unit)) == 1 and "12.1 at a.md:1; 17.5 at b.md:1" in figure_errors(unit)[0],
        sorted(e.split(": ", 1)[1][:19] for e in figure_errors(bad)) ==
        sorted(["the tag fig:t follo", "the tag fig:u follo", "figure v is tagged "]),
    ]
    print(f"check_docs self-test: {sum(checks)}/{len(checks)} cases right")
    return 0 if all(checks) else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    errors = []
    files = tracked_files(root)
    me = os.path.relpath(os.path.abspath(__file__), root)
    docs = {}  # README.md and docs/*.md, for the figure rule
    for rel in files:
        path = os.path.join(root, rel)
        if rel == me or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.readlines()
        except (UnicodeDecodeError, OSError):
            continue  # binary files
        for i, line in enumerate(lines, 1):
            if OUTSIDE.search(line):
                errors.append(f"{rel}:{i}: points outside the repository: {line.strip()[:80]}")
        if not rel.endswith(".md"):
            continue
        if rel == "README.md" or rel.startswith("docs/"):
            docs[rel] = "".join(lines)
        in_code = False
        for i, line in enumerate(lines, 1):
            if line.startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            for target in LINK.findall(line):
                if re.match(r"^(https?:|mailto:)", target):
                    continue
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                    if file_part else path
                if not dest.startswith(root + os.sep) and dest != root:
                    errors.append(f"{rel}:{i}: link leaves the repository: {target}")
                    continue
                if not os.path.exists(dest):
                    errors.append(f"{rel}:{i}: broken link: {target}")
                    continue
                if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    errors.append(f"{rel}:{i}: no heading for anchor: {target}")
    errors += figure_errors(docs)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import layers  # noqa: E402 (this folder)
    want = layers.table(root)
    have, _ = layers.current(root)
    if have != want:
        errors.append(f"{layers.DOC}: the table of layers differs from the CMake files' links: "
                      "run scripts/layers.py --write")
    for e in errors:
        print(e)
    print(f"check_docs: {len(errors)} problem(s) in {len(files)} files")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
