#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every injected fault of scripts/mutants.txt and formal/faults.txt still applies.

Each data line is  file @@ original @@ faulty @@ what [@@ suites]. The original text must occur
exactly once in its file (scripts/mutate.sh and scripts/formal.py replace that one occurrence and
report the fault BROKEN otherwise), and the faulty text must differ from it. A fault whose
original text an edit (or clang-format) changed silently stops testing anything until someone
runs it; this check, in the fast tier, names it at once.

  scripts/mutants_check.py [ROOT]     check both lists (ROOT: the repository, default ..)
  scripts/mutants_check.py --self-test
"""
import os
import sys

LISTS = ("scripts/mutants.txt", "formal/faults.txt")


def check(root, rel, text_of):
    """Problems of one list, one line each; `text_of(path)` reads a file (None: missing)."""
    problems = []
    path = os.path.join(root, rel)
    if not os.path.exists(path):
        return problems
    n = 0
    with open(path, encoding="utf-8") as f:
        for ln in f:
            line = ln.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            n += 1
            fields = line.split(" @@ ")
            where = f"{rel} data line {n}"
            if len(fields) not in (4, 5):
                problems.append(f"{where}: {len(fields)} fields, not 4 or 5 (file @@ original "
                                f"@@ faulty @@ what [@@ suites])")
                continue
            file, orig, faulty = fields[0], fields[1], fields[2]
            if orig == faulty:
                problems.append(f"{where}: the faulty text is the original")
            text = text_of(os.path.join(root, file))
            if text is None:
                problems.append(f"{where}: {file} does not exist")
                continue
            count = text.count(orig)
            if count != 1:
                problems.append(f"{where}: original text found {count} times in {file}: "
                                f"{orig.strip()[:70]!r}")
    return problems


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "scripts"))
        with open(os.path.join(d, "a.cpp"), "w") as f:
            f.write("int x = 1;\nint y = 2;\nint y = 2;\n")
        lines = [
            "# a comment",
            "a.cpp @@ int x = 1; @@ int x = 0; @@ applies",
            "a.cpp @@ int z = 3; @@ int z = 0; @@ gone",
            "a.cpp @@ int y = 2; @@ int y = 0; @@ twice",
            "b.cpp @@ a @@ b @@ no file",
            "a.cpp @@ int x = 1; @@ what only",
            "a.cpp @@ int x = 1; @@ int x = 1; @@ the same",
        ]
        with open(os.path.join(d, "scripts", "mutants.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        got = check(d, "scripts/mutants.txt", read)
        want = ["data line 2: original text found 0", "data line 3: original text found 2",
                "data line 4: b.cpp does not exist", "data line 5: 3 fields",
                "data line 6: the faulty text is the original"]
        ok = len(got) == len(want) and all(w in g for w, g in zip(want, got))
        if not ok:
            print("mutants_check self-test FAILED:\n  " + "\n  ".join(got))
            return 1
    print("mutants_check self-test: ok")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = []
    for rel in LISTS:
        problems += check(root, rel, read)
    for p in problems:
        print(f"mutants_check: {p}")
    print(f"mutants_check: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
