#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make mutants`: injects each fault of scripts/mutants.txt into a copy of the RTL, rebuilds the
# models there, and runs the fast-tier RTL suites on it: the MAC and converter suites for faults
# in rtl/numerics, the matrix-unit suite for faults in rtl/array, the vector unit's RTL suite for
# faults in rtl/vpu, the HBM suites (controller and
# interleaver, with the device model's timing checks, and the presets' check) for faults in
# rtl/hbm, the accelerator's suite for faults in rtl/accel, the accelerator's and the interleaver's
# for faults in rtl/common, the network planner's and the ONNX conformance suites for faults in
# models/net and models/onnx, the host library's suite (its race check included) for faults in
# models/host, the training suite for faults in models/train, the instruction-set suite for faults
# in the golden model (models/src/isa*), the numerics suite for faults in the golden GEMM's fast
# kernels (models/src/gemm*), the process pool's suite for faults in tb/src/job_pool*, the .npy
# reader's suite for faults in io/; a line's
# optional fifth field names other suites. Every mutant must be killed (a test fails); a survivor
# means the tests have a hole.
#   scripts/mutate.sh [N | N-M ...]   only the mutants on those lines of the list (1-based, data
#                                     lines; N-M a range)
# The copy is made once per run (fresh times, so no stale model survives); each mutant then
# restores the previous one's file and edits its own, and the build redoes what depends on it.
# Each suite stops at its first failing test (--gtest_fail_fast) and runs at most
# MUTANT_TIMEOUT seconds (default 1500, six times the slowest suite's time): a suite still running
# then counts as a kill ("timed out"), as a run that never ends fails CI. Each result is appended
# to $MUTANT_DIR/results.tsv (commit, line, result, seconds, fault), so a whole run may be split
# into ranges across sessions. MUTANT_FILTER (a --gtest_filter) runs only those tests of each
# suite: to show that one part of a suite kills a fault alone (MUTANT_FILTER='*Fma32*' on the
# MAC's faults: the fp32 configuration's tests find them without the bf16 ones).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${MUTANT_DIR:-/tmp/tpu-mutants}
limit=${MUTANT_TIMEOUT:-1500}
mkdir -p "$work"
mapfile -t specs < <(grep -v '^\s*#' "$root/scripts/mutants.txt" | grep -v '^\s*$')
want=()
for a in "$@"; do
  if [[ $a =~ ^([0-9]+)-([0-9]+)$ ]]; then
    for ((k = BASH_REMATCH[1]; k <= BASH_REMATCH[2]; ++k)); do want+=("$k"); done
  elif [[ $a =~ ^[0-9]+$ ]]; then
    want+=("$a")
  else
    echo "mutate.sh: '$a' is not a data line number or a range N-M" >&2
    exit 2
  fi
done
for k in "${want[@]}"; do
  if ((k < 1 || k > ${#specs[@]})); then
    echo "mutate.sh: line $k is outside scripts/mutants.txt's 1..${#specs[@]} data lines" >&2
    exit 2
  fi
done
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
src="$work/src"
rm -rf "$src" && mkdir -p "$src"
tar -C "$root" --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | tar -C "$src" -xmf -
# Configure the copy once, before any fault: a configure error (a missing package) is the
# machine's, not a mutant's, and would otherwise count every fault as killed ("does not build").
if ! cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log" 2>&1; then
  echo "mutate.sh: the unmutated copy does not configure (make deps?): $work/configure.log" >&2
  exit 2
fi
killed=0 survived=0 broken=0 last=
printf '%-3s %-8s %s\n' "#" result "injected fault"
for i in "${!specs[@]}"; do
  n=$((i + 1))
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $n "* ]]; then continue; fi
  IFS=$'\n' read -r -d '' file from to what only < <(echo "${specs[$i]}" | sed 's/ @@ /\n/g'; printf '\0')
  # Undo the previous mutant (a plain copy: a new time, so what depends on the file is rebuilt).
  [ -n "$last" ] && cp "$root/$last" "$src/$last"
  last=$file
  t0=$(date +%s)
  count=$(FROM="$from" perl -ne '$n += () = /\Q$ENV{FROM}\E/g; END { print $n + 0 }' "$src/$file")
  if [ "$count" != 1 ]; then
    printf '%-3s %-8s %s (original text found %s times in %s)\n' "$n" BROKEN "$what" "$count" "$file"
    printf '%s\t%s\tBROKEN\t0\t%s\n' "$commit" "$n" "$what" >> "$work/results.tsv"
    broken=$((broken + 1))
    continue
  fi
  FROM="$from" TO="$to" perl -pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$src/$file"
  log="$work/mutant_$n.log"
  case $file in
    rtl/array/*) suites=(mxu_test) ;;
    rtl/vpu/*) suites=(vpu_rtl_test) ;;
    rtl/hbm/*) suites=(hbm_test hbm_interleave_test hbm_timing_test) ;;
    rtl/accel/*) suites=(accel_test) ;;
    rtl/common/*) suites=(accel_test hbm_interleave_test) ;;
    models/net/*|models/onnx/*) suites=(net_test onnx_conformance_test) ;;
    models/host/*) suites=(host_test) ;;
    models/train/*) suites=(train_test) ;;
    models/src/isa*) suites=(isa_test) ;;
    models/src/gemm*) suites=(numerics_test) ;;
    tb/src/job_pool*) suites=(job_pool_test) ;;
    io/*) suites=(io_test) ;;
    *) suites=(mac_rtl_test cvt_rtl_test) ;;
  esac
  # A fifth field names the suites instead (a fault that only a suite beyond its directory's
  # shows: the matrix unit's timing inside the accelerator).
  [ -n "${only:-}" ] && read -r -a suites <<< "$only"
  result=
  if ! cmake --build "$work/build" -j 2 --target "${suites[@]}" > "$log" 2>&1; then
    result=KILLED note=" (does not build: $log)"
  else
    note=
    for t in "${suites[@]}"; do
      timeout "$limit" "$work/build/tests/$t" --gtest_brief=1 --gtest_fail_fast \
        ${MUTANT_FILTER:+--gtest_filter="$MUTANT_FILTER"} >> "$log" 2>&1
      rc=$?
      if [ $rc = 124 ]; then
        result=killed note="  <- $t timed out after $limit s"
        break
      elif [ $rc != 0 ]; then
        first=$(grep -m1 -E '^\[  FAILED  \]' "$log" | sed 's/\[  FAILED  \] //; s/ (.*//')
        result=killed note="  <- ${first:-$t exited with $rc}"
        break
      fi
    done
  fi
  secs=$(($(date +%s) - t0))
  if [ -z "$result" ]; then
    printf '%-3s %-8s %s (%s s)\n' "$n" SURVIVED "$what" "$secs"
    survived=$((survived + 1)) result=SURVIVED
  else
    printf '%-3s %-8s %s%s (%s s)\n' "$n" "$result" "$what" "$note" "$secs"
    killed=$((killed + 1))
  fi
  printf '%s\t%s\t%s\t%s\t%s%s\n' "$commit" "$n" "$result" "$secs" "$what" "$note" >> "$work/results.tsv"
done
echo "mutants: $killed killed, $survived survived, $broken not applicable"
[ "$survived" -eq 0 ] && [ "$broken" -eq 0 ]
