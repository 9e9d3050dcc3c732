#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`make formal`: bounded model checking and proofs of the checks in formal/checks.txt with
Yosys 0.23, yosys-smtbmc and z3 (k-induction) or ABC (bmc3, pdr), then every injected fault of
formal/faults.txt, each of which must give a counterexample (docs/formal.md).

  scripts/formal.py [--jobs N] [--no-faults] [--only-faults] [--fault N] [--out DIR] [NAME ...]

NAME selects checks (and the faults in their files) by check name or group. Every check reads
the whole RTL file list (rtl/rtl.f, as lint and synthesis do) and formal/*.sv. A check passes
when BMC finds no counterexample up to its depth and, where checks.txt says `proof`, when the
induction step at that depth closes too, or ABC's pdr proves them (then the properties hold at
every depth). Writes
DIR/<check>/ (yosys.log, model.smt2 or model.aig, bmc.log, ind.log, *.vcd counterexamples),
DIR/faults/<n>/ and DIR/summary.md, DIR/summary.json. Exit 1 if a check fails or a fault is not
caught, 2 on a setup error (a missing tool, a bad list).
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genlib  # noqa: E402 (this folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = {"yosys": "yosys", "yosys-smtbmc": "yosys"}  # tool -> Debian package
# The engines checks.txt may name -> the solver program and its Debian package. z3 and cvc5 run
# under yosys-smtbmc (BMC, k-induction); abc is Yosys's ABC on an AIGER model (bmc3 to the depth,
# then pdr for a proof at every depth), its counterexamples replayed by Yosys's simulator.
SOLVERS = {"z3": ("z3", "z3"), "cvc5": ("cvc5", "cvc5"), "abc": ("yosys-abc", "yosys")}
TIMEOUT = 900  # seconds per solver run
PDR_SECS = 120  # ABC pdr gives up (UNDECIDED: bounded only) after this
print_lock = threading.Lock()


def say(msg):
    with print_lock:
        print(msg, flush=True)


def rtl_sources(root):
    """The RTL file list (rtl/rtl.f): sources in order and include directories."""
    srcs, incs = [], []
    with open(os.path.join(root, "rtl", "rtl.f"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("//"):
                continue
            if line.startswith("+incdir+"):
                incs.append(os.path.join(root, line[len("+incdir+"):]))
            else:
                srcs.append(os.path.join(root, line))
    formal = sorted(os.path.join(root, "formal", n) for n in os.listdir(os.path.join(root, "formal"))
                    if n.endswith(".sv"))
    return srcs + formal, incs


def read_checks(path):
    """formal/checks.txt: group | check | top | depth | proof/bmc | solver | dut files |
    parameters."""
    checks = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [x.strip() for x in line.split("|")]
            if (len(fields) != 8 or fields[4] not in ("proof", "proof-k", "bmc")
                    or not fields[3].isdigit() or fields[5] not in SOLVERS
                    or (fields[4] == "proof-k" and fields[5] != "abc")):
                raise ValueError(f"{path}:{n}: want 'group | check | top | depth | "
                                 f"proof|proof-k (abc only)|bmc | "
                                 f"{'|'.join(SOLVERS)} | files | K=V ...', got: {line.strip()}")
            params, cuts = [], []
            for p in fields[7].split():
                if p.startswith("cut:") and len(p) > 4:
                    cuts.append(p[4:])
                    continue
                if "=" not in p:
                    raise ValueError(f"{path}:{n}: parameter '{p}' is not K=V or cut:MODULE")
                params.append(tuple(p.split("=", 1)))
            checks.append(dict(group=fields[0], name=fields[1], top=fields[2],
                               depth=int(fields[3]), proof=fields[4] != "bmc",
                               kind_ind=fields[4] == "proof-k",
                               solver=fields[5], files=fields[6].split(), params=params,
                               cuts=cuts))
    names = [c["name"] for c in checks]
    dup = {x for x in names if names.count(x) > 1}
    if dup:
        raise ValueError(f"{path}: check names used twice: {sorted(dup)}")
    return checks


def read_faults(path):
    """formal/faults.txt: file @@ original @@ faulty @@ what (as scripts/mutants.txt)."""
    faults = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.rstrip("\n").split(" @@ ")
            if len(parts) != 4:
                raise ValueError(f"{path}:{n}: want 'file @@ original @@ faulty @@ what'")
            faults.append(dict(line=n, file=parts[0].strip(), orig=parts[1], faulty=parts[2],
                               what=parts[3].strip()))
    return faults


def run(cmd, log, cwd, timeout=TIMEOUT):
    """Runs cmd (niced), output to log; returns (returncode or None on timeout, seconds)."""
    t0 = time.monotonic()
    with open(log, "w", encoding="utf-8") as out:
        try:
            rc = subprocess.run(["nice", "-n", "10"] + cmd, stdout=out, stderr=subprocess.STDOUT,
                                cwd=cwd, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = None
    return rc, time.monotonic() - t0


def build_model(check, srcs, incs, work):
    """Yosys: the check's top with its parameters into work/model.smt2 (z3, cvc5), or into
    work/model.aig with its map and the netlist it was made from, model.il (ABC)."""
    os.makedirs(work, exist_ok=True)
    smt2 = os.path.join(work, "model.smt2")
    # -DSYNTHESIS: the RTL's simulation assertions (`ifndef SYNTHESIS, concurrent SVA that
    # Yosys 0.23 cannot read) stay out; -formal defines FORMAL for the `ifdef FORMAL` blocks.
    script = [f"read_verilog -formal -sv -DSYNTHESIS {' '.join('-I' + i for i in incs)} "
              f"{' '.join(srcs)}"]
    if check["params"]:
        script.append("chparam " + " ".join(f"-set {k} {v}" for k, v in check["params"])
                      + f" {check['top']}")
    # Cut points (checks.txt `cut:MODULE`): every instance of the module (any parameters) is
    # removed and its outputs become free inputs in every cycle ($anyseq), an environment that
    # may do anything that module could and more. Each must match an instance.
    if check["cuts"]:
        script.append(f"hierarchy -top {check['top']}")
        for m in check["cuts"]:
            script += [f"select -assert-min 1 t:{m} t:*\\\\{m} %u", f"cutpoint t:{m} t:*\\\\{m} %u"]
    # flatten + opt_clean drop the logic no property reads (e.g. performance counters), but a
    # flat model makes z3 4.8.12 hang on its definitions: z3 models stay hierarchical. Flat
    # (ABC) checks are flattened before prep optimizes, so that a register the harness taps
    # stays whatever else reads it: logic whose only reader was a cut instance (the token
    # counters, read by the cut register port), or a pipeline stage an injected fault leaves
    # unread (faults 20 and 32: without this, the tap found no register and the check stopped).
    flat_first = check["cuts"] or check["solver"] == "abc"
    script.append(f"prep {'-flatten ' if flat_first else ''}-top {check['top']}")
    if check["cuts"]:
        # The cut points' free values as inputs of the top (named after the nets they drive), so
        # that a counterexample's replay (sim on model.il) drives them as the solver chose.
        script += ["expose -input t:$anyseq %co:+[Y] w:* %i", "opt_clean"]
    if check["solver"] != "z3":
        # memories as registers: the AIGER map names them, and the replay (sim) must find them
        script += ["flatten", "opt_clean", "memory_map", "opt_clean"]
    # A harness's taps on the design's registers (wires named `u_dut.<register>` with the
    # hierconn attribute: flatten connects each to that register and drops the attribute). One
    # still marked found no register (a renamed one, another configuration) or the model is not
    # flat (z3): Yosys stops here rather than leave the tap undriven. A tap marked tap_optional
    # may stay unconnected (a register of a larger configuration; the harness must not read it).
    script.append("select -assert-none a:hierconn a:tap_optional %d")
    script += ["async2sync", "dffunmap"]
    if check["solver"] != "abc":
        script.append(f"write_smt2 -wires {smt2}")
    else:
        # The netlist the AIGER model is mapped from, for the replay of a counterexample.
        script.append(f"write_rtlil {os.path.join(work, 'model.il')}")
        # The AIGER model for ABC (assumptions folded into constraints), as the same netlist.
        aig = os.path.join(work, "model")
        script += ["chformal -assume -early", "chformal -cover -remove", "flatten",
                   "setattr -unset keep", "delete -output", "opt -full", "memory_map",
                   "opt -fast", "techmap", "opt -fast", "dffunmap", "abc -g AND -fast",
                   "opt_clean", "setundef -zero", f"write_aiger -I -B -zinit -no-startoffset -map {aig}.aim "
                   f"{aig}.aig"]
    ys = os.path.join(work, "model.ys")
    with open(ys, "w", encoding="utf-8") as f:
        f.write("\n".join(script) + "\n")
    rc, secs = run(["yosys", "-q", "-s", ys], os.path.join(work, "yosys.log"), work)
    return rc == 0, secs, smt2


def parse_smtbmc(log):
    """(status, step, failed properties) from a yosys-smtbmc log."""
    status, step, failed = "ERROR", None, []
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"(Checking assertions|Trying induction) in step (\d+)", line)
            if m:
                step = int(m.group(2))
            m = re.search(r"Assert failed in (\S+): (.*)$", line)
            if m:
                failed.append(f"{m.group(1)}: {m.group(2).strip()}")
            if "Status: PASSED" in line:
                status = "PASSED"
            elif "Status: FAILED" in line:
                status = "FAILED"
    return status, step, failed


def full_init(aig, aiw):
    """The witness's first line is the initial state of the registers of the model ABC solved,
    which scorr may have made smaller than model.aig; every register of model.aig starts at 0
    (write_aiger -zinit: free initial values are inputs), so the line becomes as many zeros as
    model.aig has registers."""
    with open(aig, "rb") as f:
        latches = int(f.readline().split()[3])
    with open(aiw, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and set(lines[0]) <= {"0"}:
        lines[0] = "0" * latches
        with open(aiw, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))


def sim_map(work):
    """model.aim for Yosys's sim: the AIGER map numbers a wire's bits from 0, sim 0.23 reads them
    as the wire's own indices; for a wire declared [3:1] (offset 1) they differ. Returns the
    path of the map with the offsets added (work/model_sim.aim)."""
    offsets = {}
    with open(os.path.join(work, "model.il"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*wire\b.*\boffset (\d+)\b.*\s\\(\S+)$", line)
            if m:
                offsets[m.group(2)] = int(m.group(1))
    out = os.path.join(work, "model_sim.aim")
    with open(os.path.join(work, "model.aim"), encoding="utf-8") as f, \
            open(out, "w", encoding="utf-8") as g:
        for line in f:
            parts = line.split(" ", 3)
            if len(parts) == 4 and parts[3].strip() in offsets:
                parts[2] = str(int(parts[2]) + offsets[parts[3].strip()])
            g.write(" ".join(parts))
    return out


def parse_sim(log):
    """The assertions Yosys's sim reports failed, as 'module: name', in order, once each."""
    failed = []
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"Assert (\S+) \(.*\) failed", line)
            if m:
                path, _, name = re.sub(r"^\$paramod\$[0-9a-f]+\\", "", m.group(1)).rpartition(".")
                name = f"{path}: {name}"  # as yosys-smtbmc names them
                if name not in failed:
                    failed.append(name)
    return failed


def smtbmc(smt2, depth, work, kind, solver):
    """kind 'bmc' or 'ind'; returns dict(status, step, failed, secs, vcd, log)."""
    log = os.path.join(work, f"{kind}.log")
    vcd = os.path.join(work, f"{kind}_cex.vcd")
    if os.path.exists(vcd):
        os.remove(vcd)
    cmd = ["yosys-smtbmc", "-s", solver, "--noprogress", "-t", str(depth), "--dump-vcd", vcd]
    if kind == "ind":
        cmd.append("-i")
    rc, secs = run(cmd + [smt2], log, work)
    status, step, failed = parse_smtbmc(log)
    if rc is None:
        status = "TIMEOUT"
    elif status == "PASSED" and rc != 0:
        status = "ERROR"
    return dict(status=status, step=step, failed=failed, secs=secs, log=log,
                vcd=vcd if os.path.exists(vcd) else None)


def abc_run(depth, work, kind):
    """ABC on work/model.aig: kind 'bmc' (bmc3 to depth) or 'ind' (pdr, unbounded). A
    counterexample (an AIGER witness) is replayed by Yosys's simulator on the netlist the AIGER
    model came from: it writes the VCD and names the failed assertions. (yosys-smtbmc --aig with
    cvc5 did the same in seconds for the smaller models, but took 3 minutes for hbm_pc's.)"""
    log = os.path.join(work, f"{kind}.log")
    aiw = os.path.join(work, f"{kind}_cex.aiw")
    vcd = os.path.join(work, f"{kind}_cex.vcd")
    for f in (aiw, vcd):
        if os.path.exists(f):
            os.remove(f)
    aig = os.path.join(work, "model.aig")
    engine = f"bmc3 -F {depth} -v" if kind == "bmc" else f"pdr -T {PDR_SECS}"
    # scorr (latches proven equivalent, by induction, merged) and dc2 (AIG rewriting) keep the
    # inputs and outputs: the hbm_pc check's BMC drops from 4.3 min to 20 s with them.
    rc, secs = run(["yosys-abc", "-c", f"read_aiger {aig}; fold; strash; scorr; dc2; {engine}; "
                    f"write_cex -a {aiw}"], log, work)
    status, step, failed = "ERROR", None, []
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = re.search(r"No output asserted in (\d+) frames", text)
    if m and kind == "bmc":
        status, step = ("PASSED" if int(m.group(1)) >= depth else "INCOMPLETE"), int(m.group(1))
    if kind == "ind" and "Property proved" in text:
        status = "PASSED"
    elif kind == "ind" and "UNDECIDED" in text:
        status = "UNDECIDED"
    m = re.search(r"was asserted in frame (\d+)", text)
    if m:
        status, step = "FAILED", int(m.group(1))
    if rc is None:
        status = "TIMEOUT"
    if status == "FAILED" and os.path.exists(aiw):
        rlog = os.path.join(work, f"{kind}_replay.log")
        full_init(aig, aiw)
        aim = sim_map(work)
        run(["yosys", "-p", f"read_rtlil {os.path.join(work, 'model.il')}; sim -clock clk_i "
             f"-r {aiw} -map {aim} -n {step + 1} -vcd {vcd}"], rlog, work)
        failed = parse_sim(rlog)
    return dict(status=status, step=step, failed=failed, secs=secs, log=log,
                vcd=vcd if os.path.exists(vcd) else None)


def sat_induction(depth, work):
    """`proof-k` (ABC checks): the induction step by Yosys's SAT solver on the netlist the AIGER
    model came from (model.il: flat, memories as registers, assumptions kept): k-induction for
    k = 1 .. depth, every assertion assumed in k steps and proven in the next, the assumptions in
    all. With BMC from reset to the depth (ABC's bmc3) it proves the properties at every depth.
    Where pdr must find its own invariants, this needs them in the harness; it then closes in
    seconds where pdr stalls on a model with wide data registers (the AXI4 port's)."""
    log = os.path.join(work, "ind.log")
    vcd = os.path.join(work, "ind_cex.vcd")
    if os.path.exists(vcd):
        os.remove(vcd)
    rc, secs = run(["yosys", "-p", f"read_rtlil {os.path.join(work, 'model.il')}; sat -tempinduct "
                    f"-tempinduct-inductonly -prove-asserts -set-assumes -maxsteps {depth} "
                    f"-dump_vcd {vcd}"], log, work)
    status, step = "ERROR", None
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = re.findall(r"Trying induction with length (\d+)", text)
    if m:
        step = int(m[-1])
    if rc is None:
        status = "TIMEOUT"
    elif rc == 0 and "Induction step proven: SUCCESS!" in text:
        status = "PASSED"
    elif rc == 0 and "proof failed" in text:
        status = "UNDECIDED"  # the trace (ind_cex.vcd) starts from a state BMC may not reach
    return dict(status=status, step=step, failed=[], secs=secs, log=log,
                vcd=vcd if status == "UNDECIDED" and os.path.exists(vcd) else None)


def engine_run(check, smt2, work, kind):
    if check["solver"] == "abc" and kind == "ind" and check.get("kind_ind"):
        return sat_induction(check["depth"], work)
    if check["solver"] == "abc":
        return abc_run(check["depth"], work, kind)
    return smtbmc(smt2, check["depth"], work, kind, check["solver"])


def run_check(check, srcs, incs, out):
    work = os.path.join(out, check["name"])
    if os.path.isdir(work):
        shutil.rmtree(work)
    ok, ysecs, smt2 = build_model(check, srcs, incs, work)
    res = dict(check=check["name"], group=check["group"], top=check["top"], solver=check["solver"],
               config=" ".join([f"{k}={v}" for k, v in check["params"]] +
                               [f"cut:{m}" for m in check["cuts"]]), depth=check["depth"],
               want_proof=check["proof"], yosys_secs=round(ysecs, 1))
    if not ok:
        res.update(result="FAIL", error=f"Yosys failed: {os.path.join(work, 'yosys.log')}")
        return res
    bmc = engine_run(check, smt2, work, "bmc")
    res["bmc"] = {k: v for k, v in bmc.items()}
    if bmc["status"] != "PASSED":
        what = ", ".join(bmc["failed"]) or bmc["status"]
        res.update(result="FAIL", error=f"BMC {bmc['status']} at step {bmc['step']}: {what}; "
                   f"counterexample {bmc['vcd'] or '(none)'}, log {bmc['log']}")
        return res
    res["result"] = "ok"
    if check["proof"]:
        ind = engine_run(check, smt2, work, "ind")
        res["ind"] = ind
        if ind["status"] != "PASSED":
            what = ", ".join(ind["failed"]) or ind["status"]
            if check.get("kind_ind"):
                error = (f"k-induction (Yosys sat, k <= {check['depth']}) did not close "
                         f"({what}); the trace {ind['vcd'] or '(none)'} starts from a state BMC "
                         f"may not reach: add an invariant or mark the check bmc")
            elif check["solver"] == "abc" and ind["status"] == "FAILED":
                error = (f"ABC pdr found a counterexample at step {ind['step']}, deeper than the "
                         f"BMC depth: {what}; counterexample {ind['vcd'] or '(none)'}")
            elif check["solver"] == "abc":
                error = (f"ABC pdr found no proof ({what}, {PDR_SECS} s limit): mark the check "
                         f"bmc, or give it invariants")
            else:
                error = (f"induction at depth {check['depth']} no longer closes ({what}); the "
                         f"trace {ind['vcd'] or '(none)'} starts from an unreachable state unless "
                         f"BMC fails deeper: add an invariant or mark the check bmc")
            res.update(result="FAIL", error=error)
    return res


def run_fault(n, fault, checks, srcs, incs, out):
    """Applies the fault to a copy of the sources; each check that reads the file must be run,
    and at least one must fail BMC."""
    work = os.path.join(out, "faults", str(n))
    if os.path.isdir(work):
        shutil.rmtree(work)
    src_root = os.path.join(work, "src")
    for d in ("rtl", "formal"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(src_root, d))
    res = dict(n=n, line=fault["line"], file=fault["file"], what=fault["what"])
    target = os.path.join(src_root, fault["file"])
    if not os.path.exists(target):
        res.update(result="BROKEN", error=f"no file {fault['file']}")
        return res
    with open(target, encoding="utf-8") as f:
        text = f.read()
    count = text.count(fault["orig"])
    if count != 1:
        res.update(result="BROKEN", error=f"original text found {count} times in {fault['file']}")
        return res
    with open(target, "w", encoding="utf-8") as f:
        f.write(text.replace(fault["orig"], fault["faulty"]))
    mine = [c for c in checks if fault["file"] in c["files"]]
    if not mine:
        res.update(result="BROKEN", error=f"no check reads {fault['file']} (formal/checks.txt)")
        return res
    fsrcs = [s.replace(ROOT, src_root, 1) for s in srcs]
    fincs = [i.replace(ROOT, src_root, 1) for i in incs]
    res["checks"] = []
    caught = None
    for c in mine:
        cwork = os.path.join(work, c["name"])
        ok, _, smt2 = build_model(c, fsrcs, fincs, cwork)
        if not ok:
            res["checks"].append(dict(check=c["name"], status="YOSYS ERROR"))
            continue
        bmc = engine_run(c, smt2, cwork, "bmc")
        res["checks"].append(dict(check=c["name"], status=bmc["status"], step=bmc["step"],
                                  failed=bmc["failed"], vcd=bmc["vcd"], secs=round(bmc["secs"], 1)))
        if bmc["status"] == "FAILED" and caught is None:
            caught = res["checks"][-1]
            break  # one counterexample is enough
    if caught and not caught["vcd"]:
        res.update(result="NO VCD", error=f"{caught['check']} failed at step {caught['step']} "
                   f"but wrote no counterexample VCD (see {os.path.join(work, caught['check'])})")
    elif caught and not caught["failed"]:
        res.update(result="NO REPLAY", error=f"{caught['check']} failed at step {caught['step']} "
                   f"but the counterexample's replay names no failed assertion (see "
                   f"{os.path.join(work, caught['check'], 'bmc_replay.log')})")
    elif caught:
        res.update(result="caught", check=caught["check"], step=caught["step"],
                   failed=caught["failed"], vcd=caught["vcd"], secs=caught["secs"])
    else:
        res.update(result="MISSED", error="no check failed: " + ", ".join(
            f"{c['check']} {c['status']}" for c in res["checks"]))
    return res


def fmt_secs(s):
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"


def short_prop(failed):
    """'regs_formal.u_b: a_valid_held' -> 'u_b.a_valid_held', every failed property."""
    if not failed:
        return "?"
    names = []
    for f in failed:
        path, name = f.split(": ", 1)
        names.append((path.split(".", 1)[1] + "." if "." in path else "") + name)
    return ", ".join(names)


def tables(results, fresults, checks):
    lines = []
    groups = []
    for c in checks:
        if c["group"] not in groups:
            groups.append(c["group"])
    by_name = {r["check"]: r for r in results}
    for g in groups:
        rs = [by_name[c["name"]] for c in checks if c["group"] == g and c["name"] in by_name]
        if not rs:
            continue
        files = sorted({f for c in checks if c["group"] == g for f in c["files"]})
        lines.append(f"### {g} ({', '.join(files)})")
        lines.append("")
        rows = []
        for r in rs:
            bmc = r.get("bmc")
            ind = r.get("ind")
            bstat = "no cex" if bmc and bmc["status"] == "PASSED" else (
                bmc["status"] if bmc else "not run")
            if ind:
                istat = "proven, all depths" if ind["status"] == "PASSED" else \
                    f"{ind['status']} ({short_prop(ind['failed'])})"
            else:
                istat = "bounded only"
            if r["result"] != "ok" and bmc and bmc["status"] != "PASSED":
                bstat = f"{bstat} at step {bmc['step']} ({short_prop(bmc['failed'])})"
            cfg = f"{r['top']} {r['config']}".strip()
            rows.append([r["check"], cfg, r["solver"], r["depth"], bstat,
                         fmt_secs(bmc["secs"]) if bmc else "-", istat,
                         fmt_secs(ind["secs"]) if ind else "-"])
        lines += genlib.md_table(
            ["check", "top / config", "solver", "depth", "BMC", "BMC time", "induction",
             "ind. time"], rows,
            ["left", "left", "left", "right", "left", "right", "left", "right"]).split("\n")
        lines.append("")
    if fresults:
        lines.append("### injected faults (formal/faults.txt)")
        lines.append("")
        rows = []
        for r in fresults:
            if r["result"] == "caught":
                rows.append([r["n"], r["what"], "caught", r["check"], short_prop(r["failed"]),
                             r["step"], os.path.relpath(r["vcd"], ROOT) if r["vcd"] else "-"])
            else:
                rows.append([r["n"], r["what"], f"**{r['result']}**", "-", r.get("error", ""),
                             "-", "-"])
        lines += genlib.md_table(
            ["#", "fault", "result", "check", "property", "step", "counterexample"], rows,
            ["right", "left", "left", "left", "left", "right", "left"]).split("\n")
        lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="checks or groups (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-faults", action="store_true", help="only the checks")
    ap.add_argument("--only-faults", action="store_true", help="only the injected faults")
    ap.add_argument("--fault", type=int, action="append", metavar="N",
                    help="only injected fault N (its line's number in the faults table; "
                         "repeatable); implies --only-faults")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "formal"))
    args = ap.parse_args()
    if args.fault:
        args.only_faults = True

    try:
        checks = read_checks(os.path.join(ROOT, "formal", "checks.txt"))
        faults = read_faults(os.path.join(ROOT, "formal", "faults.txt"))
    except (OSError, ValueError) as e:
        print(f"formal: {e}", file=sys.stderr)
        return 2
    need = dict(TOOLS, **{SOLVERS[c["solver"]][0]: SOLVERS[c["solver"]][1] for c in checks})
    missing = [t for t in need if shutil.which(t) is None]
    if missing:
        pk = sorted({need[t] for t in missing})
        print(f"formal: missing {', '.join(missing)} (Debian: {' '.join(pk)}; make deps installs "
              f"them)", file=sys.stderr)
        return 2
    if args.names:
        unknown = [n for n in args.names if n not in {c["name"] for c in checks} | {
            c["group"] for c in checks}]
        if unknown:
            print(f"formal: no check or group named {' '.join(unknown)} (formal/checks.txt)",
                  file=sys.stderr)
            return 2
        all_checks = checks
        checks = [c for c in checks if c["name"] in args.names or c["group"] in args.names]
    else:
        all_checks = checks
    files = {f for c in checks for f in c["files"]}
    faults = [(i + 1, f) for i, f in enumerate(faults) if not args.names or f["file"] in files]
    if args.fault:
        bad = sorted(set(args.fault) - {n for n, _ in faults})
        if bad:
            print(f"formal: no injected fault {', '.join(map(str, bad))} (formal/faults.txt has "
                  f"{len(read_faults(os.path.join(ROOT, 'formal', 'faults.txt')))}"
                  f"{', for these checks' if args.names else ''})", file=sys.stderr)
            return 2
        faults = [(n, f) for n, f in faults if n in args.fault]
    if args.no_faults:
        faults = []
    run_checks = [] if args.only_faults else checks
    srcs, incs = rtl_sources(ROOT)
    os.makedirs(args.out, exist_ok=True)

    t0 = time.monotonic()
    print(f"formal: {len(run_checks)} checks, {len(faults)} injected faults, {args.jobs} jobs "
          f"(yosys {subprocess.run(['yosys', '-V'], capture_output=True, text=True).stdout.split()[1]}"
          f", yosys-smtbmc, {', '.join(sorted({c['solver'] for c in checks}))}), results in {os.path.relpath(args.out, ROOT)}/", flush=True)
    results, fresults = [], []
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {}
        for c in run_checks:
            futs[pool.submit(run_check, c, srcs, incs, args.out)] = ("check", c["name"])
        for n, f in faults:
            futs[pool.submit(run_fault, n, f, all_checks, srcs, incs, args.out)] = ("fault", n)
        for fut in cf.as_completed(futs):
            kind, key = futs[fut]
            r = fut.result()
            if kind == "check":
                results.append(r)
                if r["result"] == "ok":
                    ind = r.get("ind")
                    say(f"  ok      {r['check']}: BMC {r['depth']} steps "
                        f"{fmt_secs(r['bmc']['secs'])}"
                        + (f", induction {fmt_secs(ind['secs'])}" if ind else ", bounded only"))
                else:
                    say(f"  FAIL    {r['check']}: {r['error']}")
            else:
                fresults.append(r)
                if r["result"] == "caught":
                    say(f"  caught  fault {r['n']} ({r['what']}): {r['check']} "
                        f"{short_prop(r['failed'])} at step {r['step']}, {r['vcd']}")
                else:
                    say(f"  {r['result']:<7} fault {r['n']} ({r['what']}): {r.get('error', '')}")
    elapsed = time.monotonic() - t0
    order = {c["name"]: i for i, c in enumerate(checks)}
    results.sort(key=lambda r: order[r["check"]])
    fresults.sort(key=lambda r: r["n"])

    lines = tables(results, fresults, checks)
    bad = [r for r in results if r["result"] != "ok"]
    fbad = [r for r in fresults if r["result"] != "caught"]
    verdict = (f"formal: {len(results) - len(bad)}/{len(results)} checks pass "
               f"({sum(1 for r in results if r.get('ind', {}).get('status') == 'PASSED')} proven "
               f"for all depths), {len(fresults) - len(fbad)}/{len(fresults)} faults caught, "
               f"{fmt_secs(elapsed)} wall")
    print()
    print("\n".join(lines))
    print(verdict)
    for r in bad:
        print(f"formal: FAIL {r['check']}: {r['error']}", file=sys.stderr)
    for r in fbad:
        print(f"formal: fault {r['n']} ({r['what']}) {r['result']}: {r.get('error', '')}",
              file=sys.stderr)
    with open(os.path.join(args.out, "summary.md"), "w", encoding="utf-8") as f:
        f.write("# make formal\n\n" + "\n".join(lines) + "\n" + verdict + "\n")
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(dict(checks=results, faults=fresults, wall_secs=round(elapsed, 1),
                       ok=not bad and not fbad), f, indent=1, default=str)
    return 1 if bad or fbad else 0


if __name__ == "__main__":
    sys.exit(main())
