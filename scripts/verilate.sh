#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds one Verilated model configuration into a static library and prints its build time.
#   scripts/verilate.sh NAME TOP OUTDIR [--trace] [--coverage | --coverage-line]
#                       [--coverage-max-width BITS] [--netlist FILE] [--tb FILE]
#                       [--opt -O1|-O2|-O3] [--sc] [--hier MODULE] [--threads N]
#                       [-GParam=Value ...]
# The model class is V<NAME> (header OUTDIR/V<NAME>.h, library OUTDIR/V<NAME>__ALL.a). RTL
# sources come from rtl/rtl.f unless --netlist gives a synthesized netlist; --tb adds a test-only
# module (tb/rtl/) on top of them.
# --sc builds a SystemC module (`verilator --sc`, VM_SC=1, C++17) instead of a C++ class, linked
# with the runtime built with VM_SC=1. Port types: bool for 1 bit, sc_uint<N> up to 64 bits
# (--pins-sc-uint), sc_bv<N> above. Not --pins-sc-biguint: Verilator 5.006 writes sc_biguint
# outputs by their raw digits without setting the sign, so with SystemC 2.3.4 every such output
# reads as 0 (VL_ASSIGN_SBW; inputs are fine).
# --hier MODULE builds hierarchically (`verilator --hierarchical`): every instance of MODULE (the
# array's tile, tpu_pe_tile) is one separately Verilated model, built once however many
# instances there are, so the build grows with the number of distinct tiles, not of PEs. The
# -G parameters then go into a generated wrapper top (scripts/wrap_top.py; Verilator 5.006 would
# pass a -G on to every block's own run, where it names a parameter the block does not have).
# Signals inside the blocks are not traced.
# --threads N makes a multithreaded model (`verilator --threads N`; the program then runs N
# threads per model: on this 2-core machine the single-threaded models are faster).
# --coverage instruments the model for line and toggle coverage, --coverage-line for line coverage
# only (make coverage, docs/coverage.md); the program must then be built with VM_COVERAGE=1 and
# verilated_cov.cpp, and write the counters (SimCtrl does, into $TPU_COVERAGE_DIR). Toggle
# coverage skips signals wider than --coverage-max-width bits (default 256, Verilator's own; a
# memory counts all its bits).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=$1 top=$2 out=$3
shift 3
trace=() sources=("$root/rtl/lint_waivers.vlt" "$root/rtl/sim.vlt" -f "$root/rtl/rtl.f") lintflags=() params=() opt=-O3
cov=() covwidth=256 covlabel= hier= threads=()
mode=(--cc)
while [ $# -gt 0 ]; do
  case $1 in
    --trace) trace=(--trace-fst --trace-structs) ;;
    --coverage) cov=(--coverage-line --coverage-toggle) covlabel=" line+toggle coverage" ;;
    --coverage-line) cov=(--coverage-line) covlabel=" line coverage" ;;
    --coverage-max-width)
      [[ ${2:-} =~ ^[0-9]+$ ]] || {
        echo "verilate.sh: --coverage-max-width needs a bit count, got '${2:-}'" >&2
        exit 2
      }
      covwidth=$2; shift ;;
    --netlist) sources=("$2"); lintflags=(-Wno-fatal -Wno-lint -Wno-style); shift ;;
    --tb) sources+=("$2"); shift ;;
    --opt) opt=$2; shift ;;
    --sc) mode=(--sc --pins-sc-uint -CFLAGS -std=c++17) ;;
    --hier) hier=${2:-}; shift ;;
    --threads)
      [[ ${2:-} =~ ^[0-9]+$ ]] || {
        echo "verilate.sh: --threads needs a thread count, got '${2:-}'" >&2
        exit 2
      }
      threads=(--threads "$2"); shift ;;
    -G*) params+=("$1") ;;
    *) echo "verilate.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

objcache=()
command -v ccache >/dev/null 2>&1 && objcache=(-MAKEFLAGS "OBJCACHE=ccache")

# Tool facts (Verilator 5.006): -CFLAGS -O3 is overridden, OPT_FAST is not; const-bit-op-tree
# can compute wrong results, so bit-exact and gate-level models are built without it. The reloop
# pass turns runs of copies of wide values (a 2048-bit row of 128 bf16 sampled for an assertion,
# every block's inputs in a hierarchical build) into loops over a counter __Vilp that it then
# does not declare in every function it lands in (a C++ compile error): every model is built
# without it (-fno-reloop).
# --opt sets the C++ optimisation (default -O3). The arrays were built at -O1 while every PE had
# its own copy of the MAC's code (44 s instead of 71 s for 16x16); with one shared copy
# (rtl/sim.vlt) -O3 costs little to build and runs 128x128 about 40% faster (docs/benchmarks.md).
# Coverage builds use -fno-split: Verilator 5.006's split pass moves a branch's counter out of
# the branch into a copy of its condition evaluated after the branch ran, so that
# `if (len > lim) len = lim;` never counts (seen in tpu_accel_burst, tpu_accel_cmd, tpu_mxu_ctrl).
# Unsplit, some always_comb blocks of tpu_accel form block-level (not bit-level) loops, which
# Verilator iterates to a fixed point and reports as UNOPTFLAT: a speed warning, not an error
# (the accelerator's tests check every output bit in these builds too).
hierflags=() vtop=$top gparams=()
if [ -n "$hier" ]; then
  mkdir -p "$out"
  vtop=tpu_hier_$name
  gparams=()
  for p in "${params[@]}"; do gparams+=("${p#-G}"); done
  "$root/scripts/wrap_top.py" "$top" "$vtop" "$out.top.sv" "${gparams[@]}"
  printf '`verilator_config\nhier_block -module "%s"\n' "$hier" > "$out.hier.vlt"
  sources=("$out.hier.vlt" "${sources[@]}" "$out.top.sv")
  params=()
  hierflags=(--hierarchical)
fi
if [ ${#cov[@]} -gt 1 ]; then cov+=(--coverage-max-width "$covwidth"); fi
if [ ${#cov[@]} -gt 0 ]; then cov+=(-fno-split -Wno-UNOPTFLAT); fi
t0=$(date +%s.%N)
cd "$root"
# Called from CMake's make, the inherited jobserver flags would force Verilator's own make to
# -j1 ("jobserver unavailable"): give it a clean slate so that its -j 2 holds.
unset MAKEFLAGS MFLAGS MAKELEVEL
verilator "${mode[@]}" --build -j 2 -O3 -fno-const-bit-op-tree -fno-reloop --assert \
  --x-assign unique \
  -MAKEFLAGS "OPT_FAST=$opt" "${objcache[@]}" \
  --prefix "V$name" --top-module "$vtop" -Mdir "$out" "${hierflags[@]}" "${threads[@]}" \
  "${trace[@]}" "${cov[@]}" "${lintflags[@]}" "${params[@]}" "${sources[@]}" > "$out.log" 2>&1 || {
  cat "$out.log" >&2
  echo "verilate.sh: building model $name failed (log: $out.log)" >&2
  exit 1
}
t1=$(date +%s.%N)
printf '[verilator] built %-14s (top %s %s%s%s%s%s%s, %s) in %.1f s\n' "$name" "$top" \
  "${gparams[*]:-${params[*]:-}}" "${hier:+ hierarchical: $hier}" "${threads[*]:+ ${threads[*]}}" \
  "${trace:+ traced}" "$covlabel" \
  "${mode[1]:+ SystemC}" "$opt" \
  "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
