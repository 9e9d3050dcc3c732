#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reads the named builds of rtl/builds.json for the shell scripts.

  scripts/builds.py synth     one synthesis configuration a line: name top min_cells Param=Value...
  scripts/builds.py models    one Verilated model a line: name top Param=Value...
  scripts/builds.py accel-defaults
                              tpu_accel's parameters and their defaults as Name=Value, one a line,
                              read from tpu_accel.sv (the one place they are written): CMake turns
                              them into builds::kAccelDefault<Name> and the engines' parameters
  scripts/builds.py check     every parameter a build sets is one its top module declares, every
                              row of accel_params is a parameter of tpu_accel with its default in
                              range, and every engine preset's parameter is one of tpu_accel's

A malformed file, a duplicate name or a missing field is a one-line error (exit 2).
"""
import json
import os
import re
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


def module_params(top):
    """The parameters (name -> default text) of module `top`, from the files of rtl/rtl.f."""
    root = os.path.dirname(PATH)
    with open(os.path.join(root, "rtl.f"), encoding="utf-8") as f:
        files = [l.strip() for l in f if l.strip() and not l.lstrip().startswith(("//", "+"))]
    for rel in files:
        with open(os.path.join(root, "..", rel), encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"^module\s+" + re.escape(top) + r"\b(.*?)\)\s*;", text, re.S | re.M)
        if m:
            header = m.group(1)
            for macro in re.findall(r"`(\w+)", header):  # parameter lists written as macros
                header += macro_text(macro)
            return dict(re.findall(PARAM, header))
    sys.exit(f"builds.py: no module {top} in the files of rtl/rtl.f")


PARAM = r"parameter\s+(?:int\s+unsigned|int|bit)\s+(\w+)\s*=\s*([^,\n)\\]+)"


def macro_text(name):
    """The body of macro `name` in rtl/include/*.svh ('' when there is none)."""
    inc = os.path.join(os.path.dirname(PATH), "include")
    for f in sorted(os.listdir(inc)):
        with open(os.path.join(inc, f), encoding="utf-8") as fh:
            text = fh.read()
        m = re.search(r"`define\s+" + re.escape(name) + r"\b((?:.*\\\n)*.*)", text)
        if m:
            return m.group(1)
    return ""


def accel_defaults():
    """tpu_accel's parameters (name -> default), each an integer literal, in declaration order."""
    res = {}
    for name, value in module_params("tpu_accel").items():
        if not re.fullmatch(r"\d+", value.strip()):
            sys.exit(f"builds.py: tpu_accel's parameter {name} defaults to '{value.strip()}', "
                     "not a number: the C++ side needs a number (write the literal)")
        res[name] = int(value.strip())
    return res


def check(d):
    bad = []
    for key in ("models", "synth"):
        for b in d[key]:
            if "netlist" in b or "tb" in b:  # a gate-level netlist or a test bench top
                continue
            declared = module_params(b["top"])
            for p in b["params"]:
                name = p.split("=", 1)[0]
                if name not in declared:
                    bad.append(f"{key} {b['name']}: {b['top']} has no parameter {name}")
    accel = module_params("tpu_accel")
    keys = set()
    keyed = {row.get("verilog") for row in d.get("accel_params", [])}
    for row in d.get("accel_params", []):
        what = f"accel_params {row.get('verilog', row)}"
        if set(row) != {"verilog", "key", "kind", "lo", "hi", "help"}:
            bad.append(f"{what}: the fields are verilog, key, kind, lo, hi, help")
        elif row["verilog"] not in accel:
            bad.append(f"{what}: tpu_accel has no such parameter")
        elif row["kind"] not in ("int", "channels", "preset", "bool"):
            bad.append(f"{what}: kind '{row['kind']}' is not int, channels, preset or bool")
        elif row["key"] in keys or not re.fullmatch(r"[a-z][a-z0-9_]*", row["key"]):
            bad.append(f"{what}: key '{row['key']}' repeats or is not lower_snake_case")
        elif row["kind"] != "preset" and not row["lo"] <= int(accel[row["verilog"]]) <= row["hi"]:
            bad.append(f"{what}: tpu_accel.sv's default {accel[row['verilog']].strip()} is "
                       f"outside {row['lo']}..{row['hi']}")
        keys.add(row.get("key"))
    for engine, params in d.get("engine_presets", {}).items():
        if engine not in d.get("tpusim_engines", []):
            bad.append(f"engine_presets: {engine} is not one of tpusim_engines")
        for p in params:
            name = p.split("=", 1)[0]
            if name not in keyed or name in ("Rows", "Cols", "Channels"):
                bad.append(f"engine_presets {engine}: {name} is not a row of accel_params "
                           "besides Rows, Cols and Channels (the engine's name gives those; "
                           "CMake and the C++ side apply only accel_params' parameters)")
    for line in bad:
        print(f"builds.py: {line}", file=sys.stderr)
    if not bad:
        print(f"builds.py: {sum(len(d[k]) for k in ('models', 'synth'))} builds, "
              f"{len(d.get('accel_params', []))} accelerator parameters and "
              f"{len(d.get('engine_presets', {}))} engine presets agree with the RTL")
    return 1 if bad else 0


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    d = load()
    if what == "synth":
        for b in d["synth"]:
            print(f"{b['name']} {b['top']} {b['min_cells']} {params(b)}".rstrip())
    elif what == "models":
        for b in d["models"]:
            print(f"{b['name']} {b['top']} {params(b)}".rstrip())
    elif what == "accel-defaults":
        for name, value in accel_defaults().items():
            print(f"{name}={value}")
    elif what == "check":
        return check(d)
    else:
        sys.exit("usage: scripts/builds.py synth|models|accel-defaults|check")
    return 0


if __name__ == "__main__":
    sys.exit(main())
