# SPDX-License-Identifier: Apache-2.0
"""The regression's records (a test, a run of it), its errors, and what the other modules share:
how a run is reproduced, the excerpt of a failure, durations and counts as text."""

import os
import re
import shlex
from dataclasses import dataclass, field


SEED_LINE = re.compile(r"^\[   SEED   \] (\S+) run seed (\d+) ", re.M)

OK_LINE = re.compile(r"^\[       OK \] ", re.M)

TIERS = {"smoke": "^fast$", "full": "^(fast|long)$"}

# Variables a child must not inherit: each child runs one test, so GoogleTest's sharding
# would make most of them run nothing.
SHARD_VARS = ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX")


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


class AllocationEnded(Exception):
    """The Slurm allocation the runs go to is gone (cancelled, out of time, its node failed)."""


@dataclass
class Test:
    index: int  # position in the full (unsharded, unfiltered) ordered list
    name: str  # Suite.Test as GoogleTest names it (the --gtest_filter value)
    binary: str  # absolute path
    args: list  # ctest's arguments after the binary
    label: str
    cwd: str
    skip_res: list
    env: dict
    gtest: bool = True  # False: a plain ctest command, run as is, once, without --seed
    prog: str = ""  # the program's name when there is no binary (merged from a JUnit file)

    @property
    def program(self):
        return self.prog or os.path.basename(self.binary)

    @property
    def systemc(self):
        return self.program.endswith("_sc_test")


@dataclass
class Run:
    test: Test
    seed: int
    status: str = ""  # pass, fail, skip
    reason: str = ""
    duration: float = 0.0
    start: float = 0.0  # seconds after the regression started
    log: str = ""
    excerpt: list = field(default_factory=list)
    seeded: bool = False
    env: dict = None  # the TPU_* variables of its regression, when merged from several


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def passthrough_env():
    """TPU_* variables the tests read (TPU_SEED aside: --seed overrides it)."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("TPU_") and k != "TPU_SEED"}


def shell_path(path):
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path


def repro_commands(run, env):
    """(waves command or None, plain command, note)."""
    if run.env is not None:
        env = run.env
    prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in env.items())
    t = run.test
    if not t.binary:
        return None, "# no command recorded (merged from a JUnit file)", "no waves"
    if not t.gtest:
        cmd = " ".join(shlex.quote(c) for c in [shell_path(t.binary)] + t.args)
        return None, f"{prefix}{cmd}", "not a GoogleTest test: no waves"
    plain = (f"{prefix}{shlex.quote(shell_path(t.binary))} "
             f"--gtest_filter={shlex.quote(t.name)} --seed={run.seed}")
    if t.systemc:
        return None, plain, "SystemC model: no waves"
    return f"{prefix}make waves TEST={shlex.quote(t.name)} SEED={run.seed}", plain, ""


def failure_excerpt(text, limit=12):
    """The first failing assertion (GoogleTest's 'file:line: Failure' block), else the log tail."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r".*:\d+: Failure$", line) or re.search(r"\bSEGV|Assertion .* failed|"
                                                            r"%Error|terminate called", line):
            out = []
            for l in lines[i:]:
                if out and (l.startswith("[  FAILED  ]") or l.startswith("[       OK ]")):
                    break
                out.append(l)
                if len(out) >= limit:
                    break
            return out
    return [l for l in lines if not l.startswith("# ")][-limit:]


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def clock(seconds):
    s = int(seconds + 0.5)
    if s >= 3600:
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    return f"{s // 60:02d}:{s % 60:02d}"
