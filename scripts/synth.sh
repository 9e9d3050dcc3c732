#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Synthesizes the configurations of rtl/builds.json ('synth') with Yosys (generic gates) and
# prints cells, flip-flops and the longest combinational path (logic levels) of each.
#   scripts/synth.sh [--out DIR] [NAME ...]     (default: every configuration, into build/synth)
# Fails on a Yosys error, an inferred latch, or a top below its configured minimum cell count
# (a design that synthesized to nearly nothing). Writes DIR/NAME.v (module NAME), DIR/NAME.log,
# and a line per configuration in DIR/stamp.tsv (name, commit, date, Yosys seconds) from which
# scripts/synth_table.py writes docs/mac.md's table; the commit ends in "+" when the RTL had
# uncommitted changes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/synth"
if [ "${1:-}" = "--out" ]; then out=$2; shift 2; fi
mkdir -p "$out"

# RTL sources, in file-list order, and the include directories (+incdir+ lines) as -I options.
mapfile -t srcs < <(grep -v '^\s*//' "$root/rtl/rtl.f" | grep -v '^\s*$' | grep -v '^+incdir+' |
                    sed "s|^|$root/|")
mapfile -t incs < <(sed -n "s|^+incdir+\(.*\)|-I$root/\1|p" "$root/rtl/rtl.f")

mapfile -t configs < <(/usr/bin/python3 "$root/scripts/builds.py" synth)
commit=$(git -C "$root" rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain -- rtl/rtl.f rtl/include "${srcs[@]}" 2>/dev/null)" ]
then
  commit="$commit+"
fi
today=$(date -u +%Y-%m-%d)
stamp="$out/stamp.tsv"
touch "$stamp"
[ ${#configs[@]} -gt 0 ] || exit 2
selected=("$@")
# Configurations run JOBS at a time (default: the cores), the largest (by min_cells) first so the
# long ones overlap; the table keeps the file's order.
jobs=${JOBS:-$(nproc)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
found=0
run=()
for line in "${configs[@]}"; do
  read -r name top min_cells params <<< "$line"
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  found=$((found + 1))
  run+=("$line")
done
if [ "$found" -eq 0 ]; then
  echo "synth.sh: no configuration named: ${selected[*]} (see rtl/builds.json, synth)" >&2
  exit 2
fi

# One configuration: Yosys, then its table line in $out/$name.line and its seconds (or "fail")
# in $out/$name.result.
synth_one() {
  local name=$1 top=$2 min_cells=$3 params=$4
  local ys="$out/$name.ys"
  {
    echo "read_verilog -sv ${incs[*]} ${srcs[*]}"
    # One chparam for all: each chparam re-elaborates, and an intermediate mix of old and new
    # values can fail a parameter check (e.g. a queue depth below the old watermark).
    if [ -n "$params" ]; then
      local sets="" p
      for p in $params; do sets="$sets -set ${p%%=*} ${p#*=}"; done
      echo "chparam$sets $top"
    fi
    # -noshare: Yosys 0.23's SAT-based resource sharing tries every pair of the array's
    # variable shifters (the MACs' normalisers) and took 15 minutes on mxu_4x4 (33 s without),
    # for no cell saved (mac_p0, mac_p3, pe identical; mxu_4x4 64,361 cells instead of 64,385).
    echo "synth -flatten -noshare -top $top"
    echo "rename -top $name"
    echo "tee -o $out/$name.stat stat"
    echo "tee -o $out/$name.ltp ltp -noff"
    echo "write_verilog -noattr $out/$name.v"
  } > "$ys"
  rm -f "$out/$name.stat" "$out/$name.ltp"
  local t0 t1 status=ok cells ffs latches levels resized
  t0=$(date +%s.%N)
  if ! yosys -q -l "$out/$name.log" "$ys" > /dev/null 2>&1; then
    status="FAIL: Yosys error (see $out/$name.log)"
  fi
  t1=$(date +%s.%N)
  cells=$(awk '/Number of cells/ {print $NF; exit}' "$out/$name.stat" 2>/dev/null || true)
  ffs=$(awk '/\$_(S?DFF|DFFE|ALDFF)/ {s += $2} END {print s + 0}' "$out/$name.stat" 2>/dev/null || true)
  latches=$(awk '/\$_(DLATCH|SR_)/ {s += $2} END {print s + 0}' "$out/$name.stat" 2>/dev/null || true)
  levels=$(sed -n 's/.*length=\([0-9]*\).*/\1/p' "$out/$name.ltp" 2>/dev/null || true)
  if [ "$status" = ok ]; then
    if grep -q '^Latch inferred' "$out/$name.log" || [ "${latches:-0}" -gt 0 ]; then
      status="FAIL: latch inferred"
    elif resized=$(grep -m1 '^Warning: Resizing cell port' "$out/$name.log"); then
      # A port connected with the wrong width: Verilator sizes the expression right, Yosys 0.23
      # does not (e.g. a cast in a conditional in a concatenation), so the gates differ from the
      # simulated RTL.
      status="FAIL: ${resized#Warning: }"
    elif [ "${cells:-0}" -lt "$min_cells" ]; then
      status="FAIL: only ${cells:-0} cells (< $min_cells): the design synthesized to almost nothing"
    fi
  fi
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  printf '%-14s %-18s %8s %6s %7s %7.1fs  %s\n' "$name" "$top" "${cells:-?}" "${ffs:-?}" \
    "${levels:-?}" "$secs" "$status" > "$out/$name.line"
  if [ "$status" = ok ]; then echo "$secs" > "$out/$name.result"; else echo fail > "$out/$name.result"; fi
}

printf '%-14s %-18s %8s %6s %7s %8s  %s\n' config top cells ffs levels time status
mapfile -t order < <(for line in "${run[@]}"; do
  read -r name top min_cells params <<< "$line"
  echo "$min_cells $name"
done | sort -k1,1nr | awk '{print $2}')
declare -A by_name
for line in "${run[@]}"; do
  read -r name top min_cells params <<< "$line"
  by_name[$name]=$line
  rm -f "$out/$name.line" "$out/$name.result"
done
running=0
for name in "${order[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  read -r n top min_cells params <<< "${by_name[$name]}"
  synth_one "$n" "$top" "$min_cells" "$params" &
  running=$((running + 1))
done
wait
fail=0
for line in "${run[@]}"; do
  read -r name top min_cells params <<< "$line"
  if [ -f "$out/$name.line" ]; then cat "$out/$name.line"; else echo "$name: FAIL: no result"; fi
  result=$(cat "$out/$name.result" 2>/dev/null || echo fail)
  if [ "$result" = fail ]; then
    fail=1
  else
    grep -v "^$name	" "$stamp" > "$stamp.new" || true
    printf '%s\t%s\t%s\t%s\n' "$name" "$commit" "$today" "$result" >> "$stamp.new"
    mv "$stamp.new" "$stamp"
  fi
done
exit $fail
