# SPDX-License-Identifier: Apache-2.0
# The accelerator's roofline: attained MACs per cycle against MACs per byte moved on the DMA port,
# log-log, a colour per workload and a point type per configuration, with each configuration's
# roof min(compute peak, measured stream bandwidth x intensity); an inset zooms (linear y) on the
# compute-bound workloads. plotdir/roof_<config>.dat: a line per workload run, "index intensity
# MACs/cycle"; plotdir/accel_vars.gp: the names, peaks[], bws[], the ranges.
load gpdir."/common.gp"
load plotdir."/accel_vars.gp"

array pts[3] = [7, 6, 4]
array dts[3] = [1, 2, 3]
roof(x, c) = (bws[c] * x < peaks[c]) ? bws[c] * x : peaks[c]
color(i) = palette[(i - 1) % |palette| + 1]
rgb(i) = int("0x".color(i)[2:] + 0)  # for "lc rgb variable"
ymax = 0
do for [c=1:|configs|] { ymax = (peaks[c] > ymax) ? peaks[c] : ymax }
set samples 1000

# The main plot, drawn twice: the first time only to learn the plot area's size in pixels, so that
# the memory roof's label can follow its slope.
set title "Accelerator (tpu\\_accel) roofline: every workload from HBM to HBM, checked bit-exact" font ",15"
set xlabel "arithmetic intensity  [MACs per byte moved on the DMA port]"
set ylabel "attained  [MACs per cycle]"
set logscale xy
set xrange [xmin:xmax]
set yrange [ymax / 64.0:ymax * 2.2]
set grid xtics ytics mxtics mytics lc rgb "#e0e0e0" lw 1 dt 1
set format x "%g"
set format y "%g"
set key outside right center vertical reverse Left samplen 2 spacing 1.25 width -2
set label 1 sprintf("compute roof: %g MACs/cycle", peaks[1]) at graph 0.98, first peaks[1] * 1.18 right font ",11"
lx = (xmin * 3 < peaks[1] / bws[1] / 4) ? xmin * 3 : xmin * 1.2
set label 2 sprintf("memory roof: %.2f B/cycle × intensity", bws[1]) at first lx, first bws[1] * lx * 1.5 left font ",11"
do for [pass=1:2] {
  if (pass == 2) {
    px = (GPVAL_TERM_XMAX - GPVAL_TERM_XMIN) / log10(GPVAL_X_MAX / GPVAL_X_MIN)
    py = (GPVAL_TERM_YMAX - GPVAL_TERM_YMIN) / log10(GPVAL_Y_MAX / GPVAL_Y_MIN)
    set label 2 rotate by atan(py / px) * 180 / pi
    set output outfile
    set multiplot
  }
  plot for [c=1:|configs|] roof(x, c) with lines lw 2 dt dts[c] lc rgb "#404040" title "roof, ".config_titles[c], \
       for [i=1:|workloads|] NaN with points pt 5 ps 1.6 lc rgb color(i) title workloads[i], \
       for [c=1:|configs|] NaN with points pt pts[c] ps 1.6 lc rgb "#404040" title config_titles[c], \
       for [c=1:|configs|] plotdir."/roof_".configs[c].".dat" using 2:3:(rgb(int($1))) \
         with points pt pts[c] ps (c == 1 ? 1.8 : 2.4) lw 2 lc rgb variable notitle
}

# The inset: the compute-bound workloads, linear in MACs per cycle, in the empty lower right.
if (inset) {
  unset title
  unset key
  unset label
  unset logscale y
  set ylabel "MACs/cycle" font ",10" offset 1.5,0
  set xrange [inset_xmin:inset_xmax]
  set yrange [inset_ymin:inset_ymax]
  set xtics (5, 7, 10, 15, 20, 30, 40, 50, 70, 100) font ",9" nomirror
  set xlabel "MACs/B" font ",10" offset 0,1
  set ytics font ",9" autofreq nomirror
  set mxtics default
  set origin 0.40, 0.12
  set size 0.29, 0.42
  set object 1 rectangle from graph 0,0 to graph 1,1 behind fc rgb "#ffffff" fs solid 1.0 noborder
  set label 3 "zoom: compute-bound" at graph 0.03, graph 0.92 left font ",10"
  plot for [c=1:|configs|] roof(x, c) with lines lw 2 dt dts[c] lc rgb "#404040" notitle, \
       for [c=1:|configs|] plotdir."/roof_".configs[c].".dat" using 2:3:(rgb(int($1))) \
         with points pt pts[c] ps (c == 1 ? 1.5 : 2.0) lw 2 lc rgb variable notitle
}
unset multiplot
