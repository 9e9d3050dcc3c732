#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The saved GTKWave views (waves/<view>_*.gtkw): their dumps, a check, opening one, screenshots.
#
#   scripts/wave_shots.sh [VIEW...]          PNG of each view under Xvfb: docs/img/waves_<view>.png
#   scripts/wave_shots.sh --dumps [VIEW...]  make each view's dump (waves/<save file>.fst) if missing
#   scripts/wave_shots.sh --check [VIEW...]  every signal a save file names is in its dump
#   scripts/wave_shots.sh --open VIEW        open the view in GTKWave (needs a display)
#   options: --fresh (remake the dumps), --out DIR (screenshots, default docs/img)
#
# VIEW is the first word of a save file's name: mac (mac_pipeline.gtkw), mxu, hbm, accel; none
# means all. A save file names its dump in a comment line "[*] dump: make waves TEST=... ..." and
# loads it as [dumpfile] "/repo/waves/<save file>.fst": the dump is made by that command and
# renamed, so a view's dump is not overwritten by other `make waves` runs. It is remade when
# missing, older than the save file, or with --fresh.
#
# A screenshot: GTKWave on a virtual screen the size the save file asks for, without the
# hierarchy pane; the picture is taken once two captures a second apart are the same (everything
# drawn, the filters answered). It fails on a GTKWave warning (a filter or file not found), a
# second window (a dialog), a signal missing from the dump, or no stable picture within 60 s.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
mode=shots
fresh=0
out=docs/img
views=()
die() {
  echo "wave_shots: $*" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --dumps) mode=dumps; shift ;;
    --check) mode=check; shift ;;
    --open) mode=open; shift ;;
    --fresh) fresh=1; shift ;;
    --out) out=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) views+=("$1"); shift ;;
  esac
done

all=()
for f in waves/*.gtkw; do
  [[ -e $f ]] || continue
  v=$(basename "$f" .gtkw)
  all+=("${v%%_*}")
done
((${#all[@]})) || die "no save files in waves/"
((${#views[@]})) || views=("${all[@]}")
[[ $mode != open || ${#views[@]} == 1 ]] || die "--open takes one view (one of: ${all[*]})"

save_file() {  # view -> gtkw=waves/<view>[_*].gtkw
  local m=(waves/"$1".gtkw waves/"$1"_*.gtkw) f
  for f in "${m[@]}"; do [[ -e $f ]] && { gtkw=$f; return; }; done
  die "no view '$1': the views are ${all[*]} (waves/<view>_*.gtkw)"
}

# Makes the view's dump if it is missing or stale.
make_dump() {
  local gtkw=$1 dump=${1%.gtkw}.fst cmd test src
  if ((fresh == 0)) && [[ -s $dump && $dump -nt $gtkw ]]; then return 0; fi
  cmd=$(sed -n 's/^\[\*\] dump: make waves //p' "$gtkw")
  [[ -n $cmd ]] || die "$gtkw has no '[*] dump: make waves ...' line: cannot make its dump"
  read -ra args <<<"$cmd"
  test=$(printf '%s\n' "${args[@]}" | sed -n 's/^TEST=//p')
  src="${test%%.*}_${test#*.}"
  src="waves/${src//\//_}.fst"  # as test_main.cpp names it
  # A dump of the same test made by hand stays where it is.
  [[ ! -e $src ]] || mv -f "$src" "$src.keep"
  echo "wave_shots: $dump: make waves ${args[*]}"
  make --no-print-directory waves "${args[@]}" | grep -E '^waves:|FAILED|Failure|error'
  local rc=${PIPESTATUS[0]}
  [[ -s $src && $rc == 0 ]] && mv -f "$src" "$dump"
  [[ ! -e $src.keep ]] || mv -f "$src.keep" "$src"
  ((rc == 0)) || die "make waves ${args[*]} failed (exit $rc)"
  [[ -s $dump ]] || die "make waves did not write $src"
  echo "wave_shots: $dump ($(numfmt --to=iec --suffix=B "$(stat -c %s "$dump")"))"
}

# Every signal the save file names (plain, aliased, bit-selected or in a concatenation) is
# declared in its dump.
check_names() {
  local gtkw=$1 dump=${1%.gtkw}.fst missing
  # shellcheck disable=SC2016  # VCD keywords
  missing=$(comm -23 \
    <(sed -n '/^[+#(a-z]/p' "$gtkw" | sed 's/^[+#]{[^}]*} *//' | tr ' ' '\n' |
      sed 's/^([0-9]*)//; /^$/d' | sort -u) \
    <(fst2vcd "$dump" 2>/dev/null | sed '/\$enddefinitions/q' |
      awk '$1 == "$scope" {p[++d] = $3} $1 == "$upscope" {d--}
           $1 == "$var" {n = p[1]; for (i = 2; i <= d; i++) n = n "." p[i];
                         print n "." $5 ($6 != "$end" ? $6 : "")}' | sort -u))
  [[ -z $missing ]] || die "$gtkw names signals that $dump does not have:
$(head -20 <<<"$missing" | sed 's/^/  /')"
}

for view in "${views[@]}"; do
  save_file "$view"
  dump=${gtkw%.gtkw}.fst
  make_dump "$gtkw"
  check_names "$gtkw"
  case $mode in
    dumps | check) echo "wave_shots: $view: $gtkw and $dump agree" ;;
    open)
      command -v gtkwave >/dev/null || die "gtkwave is not installed (make deps)"
      [[ -n ${DISPLAY:-} ]] || die "no display (DISPLAY is not set): open $gtkw on a machine with
       one, e.g. gtkwave $gtkw, or make the screenshots with make wave-shots"
      echo "wave_shots: gtkwave $gtkw"
      exec gtkwave "$gtkw"
      ;;
    shots)
      for tool in gtkwave xvfb-run import xwininfo; do
        command -v "$tool" >/dev/null || die "$tool is not installed (make deps: gtkwave xvfb imagemagick x11-utils)"
      done
      mkdir -p "$out"
      png=$out/waves_$view.png
      read -r w h < <(sed -n 's/^\[size\] \([0-9]*\) \([0-9]*\)/\1 \2/p' "$gtkw")
      [[ -n ${w:-} && -n ${h:-} ]] || die "$gtkw has no [size] line"
      tmp=$(mktemp -d)
      # shellcheck disable=SC2016  # expanded by the inner shell
      xvfb-run -a -s "-screen 0 ${w}x${h}x24" bash -c '
        gtkwave --rcvar "hide_sst on" "$1" >"$2/gtkwave.log" 2>&1 & pid=$!
        prev="" t=0
        while ((t < 60)); do
          sleep 1; ((t++))
          kill -0 $pid 2>/dev/null || { echo "GTKWave exited" >"$2/error"; exit 1; }
          # Named top-level windows: GTKWave'"'"'s main one, its 10x10 leader, and nothing else.
          wins=$(xwininfo -root -children 2>/dev/null | grep -E "^ *0x[0-9a-f]+ \"")
          grep -q "\"GTKWave - " <<<"$wins" || continue
          other=$(grep -v -e "\"GTKWave - " -e "\"gtkwave\": " <<<"$wins" | sed "s/^ *0x[0-9a-f]* //")
          if [[ -n $other ]]; then
            echo "another window is open (a dialog?): $other" >"$2/error"; kill $pid; exit 1
          fi
          import -window root "$2/shot.png" 2>/dev/null || continue
          cur=$(md5sum <"$2/shot.png")
          if ((t >= 3)) && [[ $cur == "$prev" ]]; then
            kill $pid; exit 0
          fi
          prev=$cur
        done
        echo "no stable picture in 60 s" >"$2/error"; kill $pid; exit 1' _ "$gtkw" "$tmp"
      rc=$?
      warn=$(grep -iE 'could not|cannot|error|not found' "$tmp/gtkwave.log")
      if ((rc != 0)) || [[ -n $warn ]]; then
        echo "wave_shots: $view: $(cat "$tmp/error" 2>/dev/null)${warn:+ GTKWave said: $warn}" >&2
        rm -rf "$tmp"
        exit 1
      fi
      mv -f "$tmp/shot.png" "$png"
      rm -rf "$tmp"
      echo "wave_shots: $png (${w}x${h}, $(numfmt --to=iec --suffix=B "$(stat -c %s "$png")"))"
      ;;
  esac
done
