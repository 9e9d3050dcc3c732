#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The C++ libraries' layers, read from the CMake files: docs/architecture.md's "Layers" table is
this script's output, and scripts/check_docs.py fails when the two differ.

  scripts/layers.py            print the table
  scripts/layers.py --write    rewrite it in docs/architecture.md (between the layers.py markers)

Each library (add_library, pybind11_add_module) with the project's libraries it links directly
(target_link_libraries), one row per library, highest layer first: a library's layer is one
above the highest of those it links, so every link points down the table.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genlib  # noqa: E402 (this folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join("docs", "architecture.md")
BEGIN, END = "<!-- layers.py begin -->", "<!-- layers.py end -->"
CALL = re.compile(r"\b(add_library|pybind11_add_module|target_link_libraries)\s*\(([^)]*)\)", re.S)
KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "STATIC", "SHARED", "MODULE", "NO_EXTRAS"}


def cmake_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "*CMakeLists.txt"], capture_output=True,
                         text=True, check=False).stdout.split()
    return sorted(out) if out else ["CMakeLists.txt"]


def libraries(root):
    """{name: (folder, [libraries it links])} for the project's libraries."""
    libs, links = {}, {}
    for rel in cmake_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = re.sub(r"#[^\n]*", "", f.read())
        folder = os.path.dirname(rel)
        for kind, args in CALL.findall(text):
            words = args.split()
            if not words:
                continue
            name, rest = words[0], [w for w in words[1:] if w not in KEYWORDS]
            if kind == "target_link_libraries":
                links.setdefault(name, []).extend(rest)
            elif "INTERFACE" not in words and (name.startswith("tpu_") or kind != "add_library"):
                sub = rest[0].split("/")[0] if rest and "/" in rest[0] else ""
                where = "/".join(p for p in (folder, sub if sub not in ("src", "") else "") if p)
                libs[name] = where + "/"
    return {n: (libs[n], [d for d in dict.fromkeys(links.get(n, [])) if d in libs])
            for n in libs}


def table(root=ROOT):
    libs = libraries(root)
    layer = {}

    def depth(n, seen=()):
        if n not in layer:
            if n in seen:
                raise SystemExit(f"layers.py: a cycle of links through {n}")
            layer[n] = 1 + max((depth(d, seen + (n,)) for d in libs[n][1]), default=-1)
        return layer[n]

    rows = sorted(libs, key=lambda n: (-depth(n), libs[n][0], n))
    rows = [[layer[n], f"`{n}`", f"`{libs[n][0]}`", ", ".join(f"`{d}`" for d in libs[n][1]) or "—"]
            for n in rows]
    return genlib.md_table(["layer", "library", "folder", "links directly"], rows,
                           ["right", "left", "left", "left"]) + "\n"


def current(root=ROOT):
    """The table in docs/architecture.md, or None without the markers."""
    with open(os.path.join(root, DOC), encoding="utf-8") as f:
        text = f.read()
    m = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.S)
    return (m.group(1) if m else None), text


def main():
    t = table()
    if "--write" in sys.argv[1:]:
        old, text = current()
        if old is None:
            raise SystemExit(f"layers.py: {DOC} has no {BEGIN} ... {END} markers")
        with open(os.path.join(ROOT, DOC), "w", encoding="utf-8") as f:
            f.write(text.replace(BEGIN + "\n" + old + END, BEGIN + "\n" + t + END))
    else:
        sys.stdout.write(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
