#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds one Verilated model configuration into a static library and prints its build time.
#   scripts/verilate.sh NAME TOP OUTDIR [--trace] [--netlist FILE] [--opt -O1|-O2|-O3]
#                       [-GParam=Value ...]
# The model class is V<NAME> (header OUTDIR/V<NAME>.h, library OUTDIR/V<NAME>__ALL.a). RTL
# sources come from rtl/rtl.f unless --netlist gives a synthesized netlist.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=$1 top=$2 out=$3
shift 3
trace=() sources=("$root/rtl/lint_waivers.vlt" -f "$root/rtl/rtl.f") lintflags=() params=() opt=-O3
while [ $# -gt 0 ]; do
  case $1 in
    --trace) trace=(--trace-fst --trace-structs) ;;
    --netlist) sources=("$2"); lintflags=(-Wno-fatal -Wno-lint -Wno-style); shift ;;
    --opt) opt=$2; shift ;;
    -G*) params+=("$1") ;;
    *) echo "verilate.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

objcache=()
command -v ccache >/dev/null 2>&1 && objcache=(-MAKEFLAGS "OBJCACHE=ccache")

# Tool facts (Verilator 5.006): -CFLAGS -O3 is overridden, OPT_FAST is not; const-bit-op-tree
# can compute wrong results, so bit-exact and gate-level models are built without it.
# --opt sets the C++ optimisation: the arrays use -O1 (measured on 16×16: builds in 44 s instead
# of 71 s at -O3, simulates 6% slower).
t0=$(date +%s.%N)
cd "$root"
# Called from CMake's make, the inherited jobserver flags would force Verilator's own make to
# -j1 ("jobserver unavailable"): give it a clean slate so that its -j 2 holds.
unset MAKEFLAGS MFLAGS MAKELEVEL
verilator --cc --build -j 2 -O3 -fno-const-bit-op-tree --assert --x-assign unique \
  -MAKEFLAGS "OPT_FAST=$opt" "${objcache[@]}" \
  --prefix "V$name" --top-module "$top" -Mdir "$out" \
  "${trace[@]}" "${lintflags[@]}" "${params[@]}" "${sources[@]}" > "$out.log" 2>&1 || {
  cat "$out.log" >&2
  echo "verilate.sh: building model $name failed (log: $out.log)" >&2
  exit 1
}
t1=$(date +%s.%N)
printf '[verilator] built %-14s (top %s %s%s, %s) in %.1f s\n' "$name" "$top" "${params[*]:-}" \
  "${trace:+ traced}" "$opt" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
