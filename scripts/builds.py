#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads the named builds of rtl/builds.json for the shell scripts.

  scripts/builds.py synth     one synthesis configuration a line: name top min_cells Param=Value...
  scripts/builds.py models    one Verilated model a line: name top Param=Value...

A malformed file, a duplicate name or a missing field is a one-line error (exit 2).
"""
import json
import os
import sys

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rtl", "builds.json")


def load():
    try:
        with open(PATH, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"builds.py: cannot read rtl/builds.json: {e}")
    for key in ("models", "synth"):
        seen = set()
        for b in d.get(key, []):
            for field in ("name", "top", "params"):
                if field not in b:
                    sys.exit(f"builds.py: rtl/builds.json: a '{key}' entry has no '{field}': {b}")
            if b["name"] in seen:
                sys.exit(f"builds.py: rtl/builds.json: two '{key}' entries named {b['name']}")
            seen.add(b["name"])
    return d


def params(b):
    return " ".join(b["params"])


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    d = load()
    if what == "synth":
        for b in d["synth"]:
            print(f"{b['name']} {b['top']} {b['min_cells']} {params(b)}".rstrip())
    elif what == "models":
        for b in d["models"]:
            print(f"{b['name']} {b['top']} {params(b)}".rstrip())
    else:
        sys.exit("usage: scripts/builds.py synth|models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
