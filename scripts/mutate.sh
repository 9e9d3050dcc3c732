#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make mutants`: injects each fault of scripts/mutants.txt into a copy of the RTL, rebuilds the
# models there, and runs the fast-tier RTL suites on it: the MAC and converter suites for faults
# in rtl/numerics, the matrix-unit suite for faults in rtl/array, the HBM suites (controller and
# interleaver, with the device model's timing checks, and the presets' check) for faults in
# rtl/hbm, the accelerator's suite for faults in rtl/accel, the accelerator's and the interleaver's
# for faults in rtl/common, the network planner's and the ONNX conformance suites for faults in
# models/net and models/onnx, the host library's suite (its race check included) for faults in
# models/host, the training suite for faults in models/train, the instruction-set suite for faults
# in the golden model (models/src/isa*); a line's optional fifth field names other suites. Every
# mutant must be killed (a
# test fails); a survivor means the tests have a hole. About a minute (MAC) or two (array) each.
#   scripts/mutate.sh [N ...]     only the mutants on those lines of the list (1-based, data lines)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${MUTANT_DIR:-/tmp/tpu-mutants}
mkdir -p "$work"
mapfile -t specs < <(grep -v '^\s*#' "$root/scripts/mutants.txt" | grep -v '^\s*$')
want=("$@")
killed=0 survived=0 broken=0
printf '%-3s %-8s %s\n' "#" result "injected fault"
for i in "${!specs[@]}"; do
  n=$((i + 1))
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $n "* ]]; then continue; fi
  IFS=$'\n' read -r -d '' file from to what only < <(echo "${specs[$i]}" | sed 's/ @@ /\n/g'; printf '\0')
  src="$work/src"
  rm -rf "$src" && mkdir -p "$src"
  tar -C "$root" --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | tar -C "$src" -xmf -  # -m: fresh mtimes, so no stale model survives
  count=$(FROM="$from" perl -ne '$n += () = /\Q$ENV{FROM}\E/g; END { print $n + 0 }' "$src/$file")
  if [ "$count" != 1 ]; then
    printf '%-3s %-8s %s (original text found %s times in %s)\n' "$n" BROKEN "$what" "$count" "$file"
    broken=$((broken + 1))
    continue
  fi
  FROM="$from" TO="$to" perl -pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$src/$file"
  log="$work/mutant_$n.log"
  case $file in
    rtl/array/*) suites=(mxu_test) ;;
    rtl/hbm/*) suites=(hbm_test hbm_interleave_test hbm_timing_test) ;;
    rtl/accel/*) suites=(accel_test) ;;
    rtl/common/*) suites=(accel_test hbm_interleave_test) ;;
    models/net/*|models/onnx/*) suites=(net_test onnx_conformance_test) ;;
    models/host/*) suites=(host_test) ;;
    models/train/*) suites=(train_test) ;;
    models/src/isa*) suites=(isa_test) ;;
    *) suites=(mac_rtl_test cvt_rtl_test) ;;
  esac
  # A fifth field names the suites instead (a fault that only a suite beyond its directory's
  # shows: the matrix unit's timing inside the accelerator).
  [ -n "${only:-}" ] && read -r -a suites <<< "$only"
  if ! { cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release &&
         cmake --build "$work/build" -j 2 --target "${suites[@]}"; } > "$log" 2>&1; then
    printf '%-3s %-8s %s (does not build: %s)\n' "$n" KILLED "$what" "$log"
    killed=$((killed + 1))
    continue
  fi
  survived_all=1
  for t in "${suites[@]}"; do
    "$work/build/tests/$t" --gtest_brief=1 >> "$log" 2>&1 || survived_all=0
  done
  if [ "$survived_all" = 1 ]; then
    printf '%-3s %-8s %s\n' "$n" SURVIVED "$what"
    survived=$((survived + 1))
  else
    first=$(grep -m1 -E '^\[  FAILED  \]' "$log" | sed 's/\[  FAILED  \] //; s/ (.*//')
    printf '%-3s %-8s %s  <- %s\n' "$n" killed "$what" "$first"
    killed=$((killed + 1))
  fi
done
echo "mutants: $killed killed, $survived survived, $broken not applicable"
[ "$survived" -eq 0 ] && [ "$broken" -eq 0 ]
