#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make waves: re-runs one GoogleTest test with FST tracing and writes waves/<Suite>_<Test>.fst.
#
#   scripts/waves.sh [--build DIR] [--jobs N] [--seed N] [--from C] [--to C] [--scope S]
#                    [--depth D] Suite.Test
#
# Finds the test binary that holds the test without building the others: the suite's name (and a
# parameterised test's instantiation prefix) is looked up in tests/*.cpp and the local headers
# they include; the candidates are built in DIR (a TPU_TRACE=ON build, configured here if
# needed), fast tier first, and asked for the test by --gtest_list_tests. A long-tier binary
# (EXCLUDE_FROM_ALL) is built only when no fast one holds the test. Checks the dump: a scope with
# no signals or a window with no cycles is an error, not an empty file. Exits with the test's
# status (a failing test still leaves its dump: that is what waves are for).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build='build-trace'
jobs=2
seed='' from='' to='' scope='' depth='' test=''

die() {
  echo "waves: $*" >&2
  exit 2
}
need_uint() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 takes a non-negative integer, got '$2'"; }

while (($#)); do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --to) to=$2; shift 2 ;;
    --scope) scope=$2; shift 2 ;;
    --depth) depth=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [[ -z $test ]] || die "one test at a time (got '$test' and '$1')"; test=$1; shift ;;
  esac
done

howto="list the names with: <build>/tests/<binary> --gtest_list_tests, or ctest -N in build/ (the
       names ctest shows are Suite.Test; parameterised ones look like Small/MxuTest/0.HeavyBackPressure)"
[[ -n $test ]] || die "usage: make waves TEST=Suite.Test [SEED=n] [FROM=cycle TO=cycle] [SCOPE=u_x.u_y] [DEPTH=d]
       $howto"
[[ $test == *.* && $test != *[\*\?:\ ]* && $test != -* ]] ||
  die "TEST takes one test's full name, Suite.Test, without wildcards (got '$test')
       $howto"
[[ -z $seed ]] || need_uint SEED "$seed"
[[ -z $from ]] || need_uint FROM "$from"
[[ -z $to ]] || need_uint TO "$to"
[[ -z $depth ]] || { need_uint DEPTH "$depth"; ((depth >= 1)) || die "DEPTH must be at least 1"; }
[[ -z $from || -z $to ]] || ((from <= to)) || die "FROM=$from is after TO=$to: the window is empty"
[[ -z $scope || $scope =~ ^[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?(\.[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?)*$ ]] ||
  die "SCOPE is a dotted instance path below the top module, e.g. u_mxu.u_array.gen_row[0] (got '$scope')"

cd "$root" || exit 2
suite=${test%%.*}
IFS=/ read -ra parts <<<"$suite"

# ------------------------------------------------------------------------------------------------
# Candidate binaries: tpu_test(NAME [LONG] ...) in tests/CMakeLists.txt whose sources declare the
# suite (and instantiate its prefix in their own file).
# ------------------------------------------------------------------------------------------------
sources() {  # tests/NAME.cpp and the local files it includes, recursively
  local todo=("tests/$1.cpp") seen=() f inc
  while ((${#todo[@]})); do
    f=${todo[0]}; todo=("${todo[@]:1}")
    [[ -f $f && " ${seen[*]} " != *" $f "* ]] || continue
    seen+=("$f")
    while read -r inc; do todo+=("tests/$inc"); done < <(sed -n 's/^#include "\([^"/]*\)".*/\1/p' "$f")
  done
  echo "${seen[@]}"
}
declares_suite() {  # file... : does any declare a test of suite $suite_name?
  grep -qE "^\s*(TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\(\s*${suite_name}\s*," "$@"
}

fast=() long=() systemc=()
while read -r name tier; do
  read -ra files <<<"$(sources "$name")"
  ((${#files[@]})) || continue
  match=0
  for suite_name in "${parts[@]}"; do
    [[ $suite_name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
    declares_suite "${files[@]}" || continue
    # A parameterised name starts with its instantiation prefix, instantiated in the binary's own
    # file (a long-tier file may include a fast one's suite, but not its instantiation).
    if ((${#parts[@]} > 1)) && [[ $suite_name != "${parts[0]}" ]]; then
      tr '\n' ' ' <"tests/$name.cpp" |
        grep -qE "INSTANTIATE_(TEST_SUITE_P|TYPED_TEST_SUITE_P)\(\s*${parts[0]}\s*," || continue
    fi
    match=1
  done
  ((match)) || continue
  if grep -qE '^#include "(systemc|tpu/tb/[a-z_]*_sc\.h)' "${files[@]}"; then
    systemc+=("$name")
  elif [[ $tier == LONG ]]; then
    long+=("$name")
  else
    fast+=("$name")
  fi
done < <(sed -n 's/^tpu_test(\([a-z0-9_]*\)\( LONG\)\{0,1\}.*/\1\2/p' tests/CMakeLists.txt)

if ((${#fast[@]} + ${#long[@]} == 0)); then
  if ((${#systemc[@]})); then
    die "$test is in ${systemc[*]}, a SystemC harness (verilator --sc): no waves for the SystemC
       harness (its models are built without tracing); trace the same design through its C++
       harness instead, e.g. make waves TEST=Small/AccelTest/accel_4x4_q4.LegalEdgePrograms"
  fi
  die "no test suite '$suite' is declared in tests/*.cpp
       $howto"
fi

# ------------------------------------------------------------------------------------------------
# Build (traced) and find the test.
# ------------------------------------------------------------------------------------------------
if ! grep -qs '^TPU_TRACE:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "waves: configuring $build with TPU_TRACE=ON"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTPU_TRACE=ON >/dev/null || die "cmake failed"
fi
build_target() {
  local t0=$SECONDS log
  log=$(cmake --build "$build" -j "$jobs" --target "$1" -- --no-print-directory 2>&1)
  local rc=$?
  grep -E '\[verilator\]|error|Error' <<<"$log"
  ((rc == 0)) || die "building $1 in $build failed (output above)"
  ((SECONDS - t0 < 5)) || echo "waves: built $1 in $((SECONDS - t0)) s"
}
listed=()
bin=''
for name in "${fast[@]}" "${long[@]}"; do
  [[ " ${long[*]} " == *" $name "* ]] && echo "waves: $test is not in a fast-tier binary; building the long-tier $name"
  build_target "$name"
  n=$("$build/tests/$name" --gtest_list_tests --gtest_filter="$test" | grep -c '^  ')
  listed+=("$name")
  if ((n == 1)); then
    bin=$build/tests/$name
    break
  fi
done
if [[ -z $bin ]]; then
  all=$(for name in "${listed[@]}"; do
    "$build/tests/$name" --gtest_list_tests | awk '/^[^ ]/{s=$1} /^  /{print s $1}'
  done)
  # Close names: the same test name in other suites or configurations, else the suite's tests.
  close=$(grep -iF -- "${test#*.}" <<<"$all")
  [[ -n $close ]] || close=$(grep -F -- "$suite." <<<"$all")
  n=$(grep -c . <<<"$close")
  close=$(head -8 <<<"$close" | sed 's/^/         /')
  ((n <= 8)) || close+=$'\n'"         ... ($n in all)"
  die "no test '$test' in ${listed[*]}${close:+; close names:
$close}
       $howto"
fi

# ------------------------------------------------------------------------------------------------
# Run and check the dump.
# ------------------------------------------------------------------------------------------------
file="${suite//\//_}_${test#*.}"
dump="waves/${file//\//_}.fst"
rm -f "$dump" "$dump.hier"
args=(--gtest_filter="$test" --trace)
[[ -z $seed ]] || args+=(--seed="$seed")
[[ -z $from ]] || args+=(--trace-from="$from")
[[ -z $to ]] || args+=(--trace-to="$to")
[[ -z $scope ]] || args+=(--trace-scope="$scope")
[[ -z $depth ]] || args+=(--trace-depth="$depth")
echo "waves: $bin ${args[*]}"
t0=$SECONDS
"$bin" "${args[@]}"
status=$?

if [[ ! -s $dump ]]; then
  if ((status != 0)); then
    die "the test failed (exit $status) before it wrote $dump (its output is above)"
  fi
  die "$test ran but wrote no dump: $(basename "$bin") simulates no Verilated model for it
       (only the RTL test binaries trace: mac_rtl_test, cvt_rtl_test, gate_level_test, mxu_test,
       hbm_test, hbm_interleave_test, accel_test and their long tiers)"
fi
if ! command -v fst2vcd >/dev/null; then
  echo "waves: $dump: $(stat -c %s "$dump") bytes (fst2vcd, from the gtkwave package, is not installed: the dump is not checked)"
  exit "$status"
fi
# shellcheck disable=SC2016  # $enddefinitions, $var: VCD keywords
header=$(sed '/\$enddefinitions/q' < <(fst2vcd "$dump" 2>/dev/null))
signals=$(grep -c '[$]var' <<<"$header")
((signals > 0)) || { rm -f "$dump"; die "the dump held no signals${scope:+ under scope $scope} (removed)"; }
if ! grep -qm1 '^#[1-9]' < <(fst2vcd "$dump" 2>/dev/null | sed -n '/\$enddefinitions/,$p'); then
  rm -f "$dump"
  die "the dump had no cycles (removed): the run ended before the window ${from:-0}..${to:-end} (rerun with
       a smaller FROM), or the test evaluates its model without a clock (MacTest,
       MacDirectedTest and the converter tests use EvalMac/EvalCvt, which do not trace)"
fi
size=$(stat -c %s "$dump")
echo "waves: $dump: $(numfmt --to=iec --suffix=B "$size") ($size bytes), $signals signals${scope:+ under $scope}${depth:+ to depth $depth}${from:+, from cycle $from}${to:+ to cycle $to}; $((SECONDS - t0)) s"
echo "waves: open it with: gtkwave $dump"
if ((status != 0)); then
  echo "waves: the test FAILED (exit $status); the dump covers the failing run" >&2
fi
exit "$status"
