#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make lint`: verilator --lint-only -Wall with every RTL module as top (and every synthesis
# configuration's parameters), zero warnings; waivers only in rtl/lint_waivers.vlt. Then checks
# for constructs outside the subset Yosys 0.23 handles correctly (conventions rule 9), and the
# C++ formatting (clang-format, conventions rule 12).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(grep -v '^\s*//' rtl/rtl.f | grep -v '^\s*$' | grep -v '^+incdir+')
fail=0

lint() {  # lint TOP [params...]
  local out
  if out=$(verilator --lint-only -Wall rtl/lint_waivers.vlt -f rtl/rtl.f --top-module "$@" 2>&1); then
    printf '  ok    %s\n' "$*"
  else
    printf '  FAIL  %s\n%s\n' "$*" "$out"
    fail=1
  fi
}

echo "verilator --lint-only -Wall, every module as top:"
for f in "${files[@]}"; do
  for m in $(sed -n 's/^\s*module\s\+\([A-Za-z0-9_]\+\).*/\1/p' "$f"); do lint "$m"; done
done
echo "synthesis configurations (rtl/builds.json):"
while read -r name top _min params; do
  args=()
  for p in $params; do args+=("-G$p"); done
  lint "$top" "${args[@]}"
done < <(/usr/bin/python3 scripts/builds.py synth)

echo "Yosys 0.23 subset (conventions rule 9):"
check() {  # check PATTERN REASON
  local hits
  hits=$(grep -nE "$1" "${files[@]}" | grep -vE '^\S+:[0-9]+:\s*//' || true)
  if [ -n "$hits" ]; then
    printf '  FAIL  %s\n%s\n' "$2" "$hits"
    fail=1
  else
    printf '  ok    %s\n' "$2"
  fi
}
check 'import\s+\w+::\*' "no 'import pkg::*' (Yosys rejects it; use pkg::name)"
check "localparam[^;]*=\s*'1\s*;" "no typed localparam = '1 (Yosys 0.23 makes it 1 bit wide)"
check "int'\(" "no int'(...) casts (Yosys 0.23 syntax error)"
check '\{\s*(<<|>>)' "no streaming operators (Yosys 0.23 syntax error)"
check '^\s*return\b' "no return in functions (assign to the function name)"
check '\]\s*\[[^]]*:[^]]*\]\s*\w+\s*[;,=]' "no 2-D packed arrays (logic [a:b][c:d])"

echo "Registers (conventions, Registers):"
if out=$(/usr/bin/python3 scripts/lint_ff.py "${files[@]}"); then
  printf '  ok    no case or arithmetic inside an always_ff\n'
else
  printf '  FAIL  next state inside an always_ff\n%s\n' "$out"
  fail=1
fi

echo "RTL lines (conventions):"
long=$(for f in "${files[@]}"; do
         /usr/bin/python3 -c 'import sys
for i, l in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    if len(l.rstrip("\n")) > 100: print(f"{sys.argv[1]}:{i}: {len(l.rstrip())} columns")' "$f"
       done)
if [ -n "$long" ]; then
  printf '  FAIL  lines over 100 columns\n%s\n' "$long"
  fail=1
else
  printf '  ok    no line over 100 columns\n'
fi

echo "Lint waivers (conventions):"
inline=$(grep -rnE 'verilator\s+lint_(off|on)' rtl tb/rtl formal --include='*.sv' --include='*.svh' \
         || true)
if [ -n "$inline" ]; then
  printf '  FAIL  inline lint waivers: move each to rtl/lint_waivers.vlt with its reason\n%s\n' \
         "$inline"
  fail=1
else
  printf '  ok    no inline lint waivers (rtl/lint_waivers.vlt is the only place)\n'
fi

echo "clang-format (.clang-format) on the C++ sources:"
mapfile -t cxx < <(find models io tb tests sim python -name '*.cpp' -o -name '*.h' | sort)
if out=$(clang-format --dry-run --Werror "${cxx[@]}" 2>&1); then
  printf '  ok    %s files formatted\n' "${#cxx[@]}"
else
  printf '  FAIL  run: clang-format -i %s\n%s\n' "${cxx[*]}" "$(echo "$out" | grep -m5 warning)"
  fail=1
fi
exit $fail
